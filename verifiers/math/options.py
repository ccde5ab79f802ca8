"""The maths verifier's options type: how two answers are compared."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Percent = Literal["either", "divide", "ignore"]
PERCENT_MODES: tuple[str, ...] = ("either", "divide", "ignore")

@dataclass(frozen=True)
class CompareOptions:
    """How two answers are compared (the keyword options of ``referee.verifiers.math.verify``).

    Attributes:
        float_rounding: when either answer is written with a decimal point, both are rounded to
            this many decimal places before comparing (math-verify's rule: ``1/3 == 0.333333``).
        abs_tol: absolute tolerance for numeric answers; 0 compares exactly (after rounding).
        rel_tol: relative tolerance for numeric answers; 0 compares exactly (after rounding).
        percent: ``"either"`` (``50\\%`` equals both 50 and 0.5), ``"divide"`` (``50\\%`` is 0.5
            only) or ``"ignore"`` (the sign is dropped: ``50\\%`` is 50 only).
        strict: math-verify's strict mode: variable names matter and a set never equals a
            tuple. ``False`` matches variables by position (``f(x) = x+1`` equals ``y+1``).

    Example:
        >>> CompareOptions(percent="divide").percent
        'divide'
    """

    float_rounding: int = 6
    abs_tol: float = 0.0
    rel_tol: float = 0.0
    percent: Percent = "either"
    strict: bool = True

    def problem(self) -> str | None:
        """A one-line description of the first bad option, or ``None`` when all are fine.

        Example:
            >>> CompareOptions(percent="half").problem()
            "percent='half' is not one of either, divide, ignore"
        """
        if self.percent not in PERCENT_MODES:
            return f"percent={self.percent!r} is not one of {', '.join(PERCENT_MODES)}"
        if not isinstance(self.float_rounding, int) or isinstance(self.float_rounding, bool) or self.float_rounding < 0:
            return f"float_rounding={self.float_rounding!r} must be a non-negative integer"
        for name in ("abs_tol", "rel_tol"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                return f"{name}={value!r} must be a non-negative number"
        if not isinstance(self.strict, bool):
            return f"strict={self.strict!r} must be True or False"
        return None
