"""referee.rewards: TRL-compatible reward functions built from referee's verifiers.

Get a built-in reward by name (:func:`get_reward`, :data:`REWARD_NAMES`), combine several
with weights for TRL (:func:`compose_rewards`), and test them against golden answers
(:mod:`referee.rewards.golden`, ``referee check``) and reward-hacking probes
(:mod:`referee.rewards.audit`, ``referee audit``). Write your own as a plain function returning
Verdicts (:func:`verdict_reward`), reading completions with :func:`completion_text`; every reward
meets the :class:`RewardFunction` contract TRL calls.
"""

from .completions import completion_text
from .compose import RewardSum, compose_rewards, parse_reward_sum
from .protocol import RewardFunction
from .registry import REWARD_NAMES, get_reward, resolve_reward
from .soft_overlong import SoftOverlong
from .verdict_function import VerdictFunctionReward, verdict_reward
from .verdict_rewards import FormatReward, VerifierReward

__all__ = [
    "REWARD_NAMES",
    "FormatReward",
    "RewardFunction",
    "RewardSum",
    "SoftOverlong",
    "VerdictFunctionReward",
    "VerifierReward",
    "completion_text",
    "compose_rewards",
    "get_reward",
    "parse_reward_sum",
    "resolve_reward",
    "verdict_reward",
]
