"""Per-problem time and memory limits, read from a tests dict the way competitive-programming
datasets store them.

* CodeContests: ``time_limit`` as ``{"seconds": 2, "nanos": 500000000}``, ``memory_limit_bytes``.
* Codeforces (open-r1's ``codeforces`` rows): ``time_limit`` in seconds, ``memory_limit`` in MB.
* TACO and others: ``time_limit`` as ``"2 seconds"`` or ``"1.5"``; ``memory_limit`` as ``"256 megabytes"``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from .formats import TestsError

_NUMBER = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(?P<unit>[a-z]*)\s*$", re.IGNORECASE)
_SECONDS = {"": 1.0, "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0, "ms": 1e-3,
            "millisecond": 1e-3, "milliseconds": 1e-3}
_MEGABYTES = {"": 1.0, "m": 1.0, "mb": 1.0, "mib": 1.0, "megabyte": 1.0, "megabytes": 1.0, "k": 1 / 1024,
              "kb": 1 / 1024, "kib": 1 / 1024, "kilobytes": 1 / 1024, "g": 1024.0, "gb": 1024.0, "gib": 1024.0,
              "gigabytes": 1024.0}
MAX_TIME_LIMIT = 60.0  # seconds: past it a dataset's field is more likely wrong than meant
MAX_MEMORY_MB = 16384


@dataclass(frozen=True)
class ProblemLimits:
    """What one problem allows a run: CPU seconds (judged on the job's CPU time) and MiB of memory.

    ``wall_seconds`` is the wall-clock guard: a run that sleeps or waits never uses CPU time, so
    it is stopped at three times the limit plus a second (a loaded machine slows a right program
    down, it does not make it use more CPU).

    Example:
        >>> ProblemLimits(2.0, 256).wall_seconds, ProblemLimits(2.0, 256).cpu_rlimit
        (7.0, 3)
    """

    time_seconds: float
    memory_mb: int

    @property
    def wall_seconds(self) -> float:
        """The wall-clock guard of one run."""
        return 3 * self.time_seconds + 1.0

    @property
    def cpu_rlimit(self) -> int:
        """``RLIMIT_CPU`` of one run (whole seconds, a backstop over the measured CPU time)."""
        return math.ceil(self.time_seconds) + 1


def _amount(value: Any, units: dict[str, float], key: str) -> float:
    if isinstance(value, bool):
        raise TestsError(f"tests[{key!r}] must be a number, got {value!r}.")
    if isinstance(value, (int, float)):
        amount = float(value) * units[""]
    elif isinstance(value, dict) and set(value) <= {"seconds", "nanos"} and value:
        amount = float(value.get("seconds") or 0) + float(value.get("nanos") or 0) * 1e-9
    elif isinstance(value, str) and (match := _NUMBER.match(value)) and match["unit"].lower() in units:
        amount = float(match.group(1)) * units[match["unit"].lower()]
    else:
        raise TestsError(f"tests[{key!r}] = {value!r} is not a limit I can read; give a number "
                         f"({'seconds' if units is _SECONDS else 'MB'}).")
    if not math.isfinite(amount) or amount <= 0:
        raise TestsError(f"tests[{key!r}] = {value!r} must be above 0.")
    return amount


def problem_limits(tests: dict[str, Any], *, timeout: float, memory_mb: int) -> ProblemLimits:
    """The limits of the problem ``tests`` belongs to; ``timeout`` and ``memory_mb`` (the verifier's
    options) where the dataset gives none. A value of 0 (CodeContests' "none given") is none given.

    Example:
        >>> problem_limits({"time_limit": {"seconds": 2, "nanos": 500000000}, "memory_limit_bytes": 268435456},
        ...                timeout=3.0, memory_mb=1024)
        ProblemLimits(time_seconds=2.5, memory_mb=256)
        >>> problem_limits({"time_limit": "1 second", "memory_limit": "64 megabytes"}, timeout=3.0, memory_mb=1024)
        ProblemLimits(time_seconds=1.0, memory_mb=64)
        >>> problem_limits({"time_limit": 0}, timeout=3.0, memory_mb=512)
        ProblemLimits(time_seconds=3.0, memory_mb=512)
    """
    seconds, megabytes = float(timeout), float(memory_mb)
    given = tests.get("time_limit")
    if given not in (None, 0, "", {}) and given != {"seconds": 0, "nanos": 0}:
        seconds = min(_amount(given, _SECONDS, "time_limit"), MAX_TIME_LIMIT)
    if tests.get("memory_limit_bytes") not in (None, 0):
        megabytes = _amount(tests["memory_limit_bytes"], {"": 1 / (1 << 20)}, "memory_limit_bytes")
    elif tests.get("memory_limit") not in (None, 0, ""):
        megabytes = _amount(tests["memory_limit"], _MEGABYTES, "memory_limit")
    return ProblemLimits(seconds, max(16, min(MAX_MEMORY_MB, math.ceil(megabytes))))
