"""referee.rewards.trainers.slime called exactly as slime's rollout calls a ``--custom-rm-path`` reward.

slime: ``rm_function = load_function(args.custom_rm_path)`` ("module.attr", rpartition on the last
dot), then ``await rm_function(args, sample)`` per sample, or with ``--group-rm`` ``await
rm_function(args, samples)`` per group; the reward is stored on ``sample.reward`` and read back as
``sample.reward`` or ``sample.reward[args.reward_key]``; ``--custom-config-path`` YAML keys become
attributes of ``args``.

Followed from slime's source (THUDM/slime): ``slime/rollout/rm_hub/__init__.py`` at commit
0b420f1ef4161f02d2a00d47c1318eec955a4e2e (``async_rm``, ``batched_async_rm``) and
``slime/rollout/sglang_rollout.py`` at 0044b40d6584cc8f6de5673ae52f7c1628ebd7f6 (``generate_and_rm``:
a custom generate function that returns a list of samples, without ``--group-rm``, has
``batched_async_rm(args, samples_need_reward)`` call the per-sample ``--custom-rm-path`` with the list,
and the rewards are zipped back with ``strict=False``).
"""

import asyncio
import importlib
import threading
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from referee.rewards.trainers.adapters import ErrorRateExceeded
from referee.rewards.trainers.routing import UnknownDataSource


@dataclass
class Sample:
    """The fields of slime.utils.types.Sample a reward reads."""

    prompt: str = ""
    response: str = ""
    label: Any = None
    reward: Any = None
    metadata: dict = field(default_factory=dict)


def load_function(path):
    """slime.utils.misc.load_function."""
    module_path, _, attr = path.rpartition(".")
    return getattr(importlib.import_module(module_path), attr)


def make_args(**extra):
    return SimpleNamespace(**{"custom_rm_path": "referee.rewards.trainers.slime.reward", "group_rm": False, "reward_key": None, **extra})


async def async_rm(args, sample):
    """slime.rollout.rm_hub.async_rm with a custom_rm_path."""
    rm_function = load_function(args.custom_rm_path)
    return await rm_function(args, sample)


async def batched_async_rm(args, samples):
    """slime.rollout.rm_hub.batched_async_rm with a custom_rm_path (--group-rm)."""
    rm_function = load_function(args.custom_rm_path)
    return await rm_function(args, samples)


def reward_value(args, sample):
    """slime.utils.types.Sample.get_reward_value."""
    return sample.reward if not args.reward_key else sample.reward[args.reward_key]


SAMPLES = [
    Sample(response="9 * 2 = 18\n#### 18", label="18", metadata={"data_source": "openai/gsm8k"}),
    Sample(response="#### 17", label="18", metadata={"verifier": "gsm8k"}),
    Sample(response="$\\boxed{\\frac{1}{2}}$", label="0.5", metadata={"data_source": "math_dapo"}),
    Sample(response="def f(x):\n    return x + 1", label={"verifier": "code", "tests": {"fn_name": "f", "inputs": [[1]], "outputs": [2]}}),
    Sample(response="#### 18", label="n/a", metadata={"verifier": "gsm8k"}),  # an error: the fallback
]
EXPECTED = [1.0, 0.0, 1.0, 1.0, 0.0]


def test_per_sample_reward_as_slime_awaits_it():
    args = make_args()

    async def generate_and_rm():
        for sample in SAMPLES:
            sample.reward = await async_rm(args, sample)

    asyncio.run(generate_and_rm())
    assert [reward_value(args, s) for s in SAMPLES] == EXPECTED
    assert all(type(s.reward) is float for s in SAMPLES)


def test_group_reward_as_slime_awaits_it():
    args = make_args()
    args.custom_rm_path, args.group_rm = "referee.rewards.trainers.slime.reward_group", True
    group = [Sample(response=s.response, label=s.label, metadata=dict(s.metadata)) for s in SAMPLES]
    rewards = asyncio.run(batched_async_rm(args, group))
    for sample, reward in zip(group, rewards, strict=False):
        sample.reward = reward
    assert [reward_value(args, s) for s in group] == EXPECTED


async def generate_and_rm_fanned_out(args, samples):
    """sglang_rollout.generate_and_rm after a custom generate function returned ``samples`` (no --group-rm)."""
    samples_need_reward = [sample for sample in samples if sample.reward is None]
    rewards = await batched_async_rm(args, samples_need_reward)
    for sample, reward in zip(samples_need_reward, rewards, strict=False):
        sample.reward = reward
    return samples


@pytest.fixture
def warnings_seen(monkeypatch, caplog):
    """referee's warnings, each kind shown afresh, whatever logging set-up an earlier test ran."""
    import logging

    from referee.rewards import policy

    monkeypatch.setattr(policy, "_warned", set())
    monkeypatch.setattr(policy.logger, "disabled", False)
    monkeypatch.setattr(policy.logger, "handlers", [caplog.handler])
    caplog.set_level(logging.WARNING, logger=policy.logger.name)  # setLevel: clears the logger's cached answer
    return caplog


def test_the_fan_out_path_hands_the_per_sample_reward_a_list(warnings_seen):
    """Issue 34: referee returned one 0.0 for the whole list, with a misleading "no gold answer" warning."""
    args = make_args()  # --custom-rm-path referee.rewards.trainers.slime.reward, the per-sample function
    fanned = [Sample(response=s.response, label=s.label, metadata=dict(s.metadata)) for s in SAMPLES]
    asyncio.run(generate_and_rm_fanned_out(args, fanned))
    assert [reward_value(args, s) for s in fanned] == EXPECTED
    assert "no gold answer" not in warnings_seen.text and "gold 'n/a'" in warnings_seen.text
    keyed = make_args(reward_key="score")
    fanned = [Sample(response=s.response, label=s.label, metadata=dict(s.metadata)) for s in SAMPLES]
    asyncio.run(generate_and_rm_fanned_out(keyed, fanned))
    assert [reward_value(keyed, s) for s in fanned] == EXPECTED and fanned[4].reward["referee_error"] == 1.0


def test_messages_use_slimes_words(monkeypatch, warnings_seen):
    """Issue 34: warnings said verl's ``ground_truth`` and ``extra_info``; slime's fields are ``label`` and ``metadata``."""
    from referee.rewards import policy

    args = make_args(reward_key="score")
    assert asyncio.run(async_rm(args, Sample(response="#### 18", label=None, metadata={"verifier": "gsm8k"})))["referee_error"] == 1.0
    monkeypatch.setattr(policy, "_warned", set())  # warned once per kind: the next one is of the same kind
    assert asyncio.run(async_rm(args, Sample(response="def f(): pass", label=None, metadata={"verifier": "code"})))["referee_error"] == 1.0
    assert "(label is None)" in warnings_seen.text and "in label or metadata['tests']" in warnings_seen.text
    assert "ground_truth" not in warnings_seen.text and "extra_info" not in warnings_seen.text
    with pytest.raises(UnknownDataSource) as caught:
        asyncio.run(async_rm(args, Sample(response="#### 18", label="18", metadata={"data_source": "mine"})))
    assert "metadata['verifier']" in str(caught.value) and "extra_info" not in str(caught.value)


def test_a_reward_key_gets_a_dict_of_numbers():
    args = make_args(reward_key="score")
    reward = asyncio.run(async_rm(args, SAMPLES[4]))
    assert reward == {"score": 0.0, "acc": 0.0, "referee_error": 1.0, "referee_timeout": 0.0, "referee_no_answer": 0.0}
    sample = Sample(reward=reward)
    assert reward_value(args, sample) == 0.0


def test_options_from_the_custom_config_yaml():
    args = make_args(referee={"default_verifier": "gsm8k", "fallback": -1.0})
    assert asyncio.run(async_rm(args, Sample(response="#### 18", label="18"))) == 1.0
    assert asyncio.run(async_rm(args, Sample(response="#### 18", label="?"))) == -1.0


def test_an_unknown_source_stops_at_the_first_sample():
    with pytest.raises(UnknownDataSource, match="metadata\\['verifier'\\]"):
        asyncio.run(async_rm(make_args(), Sample(response="#### 18", label="18", metadata={"data_source": "mine"})))


def test_rollout_keeps_generating_while_referee_judges(monkeypatch):
    """slime awaits rewards on its rollout loop: a code judgement must not stall other coroutines.
    The judgement waits, in its thread, for a coroutine on the loop to answer: on the loop itself it
    never would (no tick counting)."""
    from referee.rewards.trainers.adapters import Scorer

    args = make_args()
    slow = Sample(response="import time\ndef f(x):\n    time.sleep(1.0)\n    return x + 1",
                  label={"verifier": "code", "tests": {"fn_name": "f", "inputs": [[1]], "outputs": [2]}})
    started, answered = threading.Event(), threading.Event()
    score = Scorer.score

    def score_once_the_loop_answers(self, samples):
        started.set()
        assert answered.wait(timeout=30), "the rollout loop was blocked while referee judged"
        return score(self, samples)

    monkeypatch.setattr(Scorer, "score", score_once_the_loop_answers)

    async def main():
        async def generation():
            while not started.is_set():
                await asyncio.sleep(0.001)
            answered.set()

        task = asyncio.create_task(generation())
        reward = await async_rm(args, slow)
        await task
        return reward

    assert asyncio.run(main()) == 1.0


def test_an_outage_stops_the_rollout():
    args = make_args(referee={"max_error_share": 0.0, "error_window": 16})
    broken = Sample(response="#### 18", label="?", metadata={"verifier": "gsm8k"})
    with pytest.raises(ErrorRateExceeded):
        asyncio.run(async_rm(args, broken))
