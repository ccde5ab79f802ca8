"""``RewardFunction``: what TRL calls a reward, as one typed contract the rewards, the pre-filter and the recipes share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class RewardFunction(Protocol):
    """A TRL reward function: called by keyword with ``prompts``, ``completions``, ``completion_ids``
    and every dataset column (plus ``log_metric``, ``log_extra`` and ``trainer_state``), it returns
    one float, or ``None`` when the fault is not the completion's, per completion. TRL logs it
    under ``__name__``.

    Example:
        >>> from referee.rewards import get_reward
        >>> isinstance(get_reward("gsm8k_accuracy"), RewardFunction)
        True
        >>> def contains_seven(prompts=None, completions=None, completion_ids=None, **kwargs):
        ...     return [float("7" in c) for c in completions]
        >>> isinstance(contains_seven, RewardFunction), contains_seven(completions=["17", "8"])
        (True, [1.0, 0.0])
    """

    __name__: str

    def __call__(self, prompts: Sequence[Any] | None = None, completions: Sequence[Any] | None = None,
                 completion_ids: Sequence[Sequence[int]] | None = None, **kwargs: Any) -> Sequence[float | None]:
        ...
