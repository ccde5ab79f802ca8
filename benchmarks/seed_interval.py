"""A 95% Student-t interval for the mean of a few per-seed results (no SciPy needed)."""

from __future__ import annotations

import math
from collections.abc import Sequence

# The 0.975 quantile of Student's t with 1..30 degrees of freedom; beyond, the normal's 1.96.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def mean_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, low, high): the mean of ``values`` and its two-sided 95% t interval (seeds as independent
    draws); with one value the interval is unknown and spans the whole line.

    Example:
        >>> [round(v, 3) for v in mean_interval([0.5, 0.6, 0.7, 0.6, 0.6])]
        [0.6, 0.512, 0.688]
        >>> mean_interval([0.4])
        (0.4, -inf, inf)
    """
    if not values:
        raise ValueError("mean_interval needs at least one value.")
    count = len(values)
    mean = sum(values) / count
    if count == 1:
        return mean, -math.inf, math.inf
    spread = math.sqrt(sum((value - mean) ** 2 for value in values) / (count - 1))
    quantile = _T975[count - 2] if count - 1 <= len(_T975) else 1.96
    half = quantile * spread / math.sqrt(count)
    return mean, mean - half, mean + half
