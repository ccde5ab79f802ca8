"""A reward of one's own, written as a plain function that returns a Verdict per completion.

Decorate a function ``f(completions, <columns it reads>, **kwargs) -> list[Verdict]`` with
:func:`verdict_reward` and it becomes a TRL reward function like the built-in ones: the
Verdicts' scores are the rewards, an ``error`` Verdict (or anything the function raises) is a
``None`` reward that is counted and logged, never an exception in the trainer, and each
Verdict's ``reason`` is what ``referee check`` prints beside a mismatch. The columns it reads
are read from its signature (so ``referee train`` keeps them), and ``answer_template`` tells
``referee audit`` how a right answer is written.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Sequence
from typing import Any

from referee.verifiers import Verdict

from .policy import error_verdict
from .verdict_rewards import score_verdicts

VerdictFunction = Callable[..., Sequence[Verdict]]


class VerdictFunctionReward:
    """A reward from a function returning Verdicts (build it with :func:`verdict_reward`).

    Example:
        >>> from referee.verifiers import Verdict
        >>> def exact(completions, target, **kwargs):
        ...     return [Verdict("correct", 1.0) if c == t else Verdict("wrong", reason=f"{c!r} is not {t!r}")
        ...             for c, t in zip(completions, target)]
        >>> reward = VerdictFunctionReward(exact)
        >>> reward(completions=["4", "5"], target=["4", "4"]), reward.verdicts(["5"], target=["4"])[0].reason
        ([1.0, 0.0], "'5' is not '4'")
    """

    def __init__(self, function: VerdictFunction, *, name: str | None = None, kind: str = "correctness",
                 reward_range: tuple[float, float] = (0.0, 1.0), answer_template: str | None = None) -> None:
        if answer_template is not None and "{answer}" not in answer_template:
            raise ValueError(f"answer_template={answer_template!r} must hold {{answer}} where the answer goes, "
                             """e.g. '{"answer": "{answer}"}'.""")
        functools.update_wrapper(self, function)  # __name__, __doc__, and __wrapped__ for the signature
        if name is not None:
            self.__name__ = name
        self.function = function
        self.kind = kind
        self.reward_range = reward_range
        self.answer_template = answer_template

    def __call__(self, prompts: Sequence[Any] | None = None, completions: Sequence[Any] | None = None,
                 completion_ids: Sequence[Sequence[int]] | None = None, **kwargs: Any) -> list[float | None]:
        """Score a batch the way TRL's ``GRPOTrainer`` calls reward functions (by keyword)."""
        return score_verdicts(self.__name__, self.verdicts, completions, kwargs)

    def verdicts(self, completions: Sequence[Any], **columns: Any) -> list[Verdict]:
        """The function's Verdicts, one per completion; a wrong count or a non-Verdict is an ``error``."""
        verdicts = list(self.function(completions=completions, **columns))
        if len(verdicts) != len(completions):
            reason = f"{self.__name__} returned {len(verdicts)} verdicts for {len(completions)} completions"
            return [error_verdict("exception", reason)] * len(completions)
        return [v if isinstance(v, Verdict) else
                error_verdict("exception", f"{self.__name__} returned {type(v).__name__}, not a Verdict")
                for v in verdicts]

    def __reduce__(self) -> Any:
        # Pickled by name (TRL's async trainer sends rewards to a child process): the module attribute
        # the decorator replaced is this object.
        return _module_attribute, (self.__module__, self.__qualname__)


def _module_attribute(module: str, qualname: str) -> Any:
    target: Any = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def verdict_reward(function: VerdictFunction | None = None, /, *, name: str | None = None,
                   kind: str = "correctness", reward_range: tuple[float, float] = (0.0, 1.0),
                   answer_template: str | None = None) -> Any:
    """Turn a function returning one Verdict per completion into a TRL reward function.

    Used bare (``@verdict_reward``) or with options: ``name`` (the metric name; default the
    function's), ``kind`` (``"correctness"`` or ``"shaping"``) and ``reward_range`` (for
    :func:`~referee.rewards.compose_rewards`' balance check), ``answer_template`` (how a right
    answer is written, ``{answer}`` marking the place, for ``referee audit``).

    Example:
        >>> import json
        >>> from referee.rewards import completion_text
        >>> from referee.verifiers import Verdict
        >>> @verdict_reward(answer_template='{"answer": "{answer}"}')
        ... def json_answer(completions, target, **kwargs):
        ...     verdicts = []
        ...     for completion, gold in zip(completions, target):
        ...         try:
        ...             answer = str(json.loads(completion_text(completion) or "")["answer"])
        ...         except (ValueError, KeyError, TypeError):
        ...             verdicts.append(Verdict("no_answer", reason="no JSON object with an 'answer' key"))
        ...             continue
        ...         verdicts.append(Verdict("correct", 1.0, answer) if answer == str(gold) else
        ...                         Verdict("wrong", 0.0, answer, reason=f"{answer} is not {gold}"))
        ...     return verdicts
        >>> json_answer(completions=['{"answer": "72"}', '{"answer": 71}', "72"], target=["72", "72", "72"])
        [1.0, 0.0, 0.0]
        >>> json_answer.verdicts(["72"], target=["72"])[0].reason
        "no JSON object with an 'answer' key"
    """
    def build(target: VerdictFunction) -> VerdictFunctionReward:
        return VerdictFunctionReward(target, name=name, kind=kind, reward_range=reward_range,
                                     answer_template=answer_template)

    return build if function is None else build(function)
