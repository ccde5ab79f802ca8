"""The pass-rate band a prompt must fall in to be kept (both ends inclusive)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class KeepBounds:
    """Keep a row when ``low <= pass_rate <= high``: both bounds are inclusive.

    With G samples a pass rate is a multiple of 1/G, so ``KeepBounds(0.125, 0.875)`` at G=8
    keeps every row solved at least once and failed at least once. A row without a pass rate
    (every sample unscored, or a bad row) is never kept.

    Example:
        >>> bounds = KeepBounds.parse("0.125:0.875")
        >>> bounds.contains(0.125), bounds.contains(0.875), bounds.contains(1.0), bounds.contains(None)
        (True, True, False, False)
        >>> str(KeepBounds.parse(":0.5"))
        '0:0.5'
    """

    low: float = 0.0
    high: float = 1.0

    def __post_init__(self) -> None:
        for value in (self.low, self.high):
            if not isinstance(value, (int, float)) or math.isnan(value) or not 0.0 <= value <= 1.0:
                raise ValueError(f"Keep bound {value!r} is not a number in [0, 1]; write bounds like 0.125:0.875.")
        if self.low > self.high:
            raise ValueError(f"Keep bounds {self.low}:{self.high} are reversed; write the lower bound first.")
        object.__setattr__(self, "low", float(self.low))
        object.__setattr__(self, "high", float(self.high))

    @classmethod
    def parse(cls, text: str) -> KeepBounds:
        """Read ``"LO:HI"``; an empty side means 0 (low) or 1 (high).

        Example:
            >>> KeepBounds.parse("0.2:")
            KeepBounds(low=0.2, high=1.0)
        """
        low, sep, high = text.partition(":")
        if not sep:
            raise ValueError(f"Keep bounds {text!r} need the form LO:HI, e.g. 0.125:0.875.")
        try:
            return cls(float(low) if low.strip() else 0.0, float(high) if high.strip() else 1.0)
        except ValueError as exc:
            if "Keep bound" in str(exc):
                raise
            raise ValueError(f"Keep bounds {text!r} are not numbers; write them like 0.125:0.875.") from None

    def contains(self, pass_rate: float | None) -> bool:
        """Whether a row with this pass rate is kept (``None`` never is)."""
        return pass_rate is not None and self.low <= pass_rate <= self.high

    def __str__(self) -> str:
        return f"{self.low:g}:{self.high:g}"
