"""DAPO's overlong reward shaping, counted in tokens (Yu et al. 2025, eq. 13)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .policy import log_metric_safely, warn_once


class SoftOverlong:
    """0 up to ``max_length - buffer`` tokens, then a linear penalty down to -1 at ``max_length``.

    ``max_length`` is the trainer's ``max_completion_length``; a completion cut there scores
    -1. The length is ``len(completion_ids[i])``, the tokens TRL generated. Without
    ``completion_ids`` every reward is ``None`` (counted as an error, warned once).

    Args:
        max_length: the most tokens a completion may have (L_max).
        buffer: the length of the penalty ramp (L_cache); default a fifth of ``max_length``
            (DAPO used 4,096 of 20,480).
        name: the reward's ``__name__``.

    Example:
        >>> overlong = SoftOverlong(max_length=100, buffer=20)
        >>> overlong(completions=["a", "b", "c"], completion_ids=[[1] * 80, [1] * 90, [1] * 100])
        [0.0, -0.5, -1.0]
    """

    kind = "shaping"
    reward_range = (-1.0, 0.0)

    def __init__(self, max_length: int, buffer: int | None = None, *, name: str = "soft_overlong") -> None:
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1:
            raise ValueError(f"max_length={max_length!r} must be a positive whole number of tokens "
                             "(the trainer's max_completion_length).")
        if buffer is None:
            buffer = max(1, max_length // 5)
        if isinstance(buffer, bool) or not isinstance(buffer, int) or not 1 <= buffer <= max_length:
            raise ValueError(f"buffer={buffer!r} must be a whole number of tokens between 1 and max_length={max_length}.")
        self.__name__ = name
        self.max_length = max_length
        self.buffer = buffer

    def __repr__(self) -> str:
        return f"SoftOverlong(max_length={self.max_length}, buffer={self.buffer}, name={self.__name__!r})"

    def penalty(self, length: int) -> float:
        """The shaping reward for a completion of ``length`` tokens.

        Example:
            >>> SoftOverlong(max_length=10, buffer=4).penalty(8)
            -0.5
        """
        start = self.max_length - self.buffer
        if length <= start:
            return 0.0
        return max(-1.0, (start - length) / self.buffer)

    def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] | None = None,
        completion_ids: Sequence[Sequence[int]] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        """Score a batch the way TRL's ``GRPOTrainer`` calls reward functions (by keyword)."""
        count = len(completions) if completions is not None else len(completion_ids or ())
        try:
            if completion_ids is None or len(completion_ids) != count:
                raise ValueError(f"it needs completion_ids, one list of token ids per completion (got "
                                 f"{'none' if completion_ids is None else len(completion_ids)} for {count} completions)")
            rewards: list[float | None] = [self.penalty(len(ids)) for ids in completion_ids]
        except Exception as exc:  # a reward never raises into the trainer
            warn_once(self.__name__, "bad_input", f"reward {self.__name__}: {exc}; its rewards are None. "
                                                  f"Further ones are counted in rewards/{self.__name__}/error.")
            rewards = [None] * count
        if count:
            log_metric_safely(kwargs, f"rewards/{self.__name__}/error", sum(r is None for r in rewards) / count)
        return rewards
