"""The doctor check: judge a small program in the sandbox to prove it works at a level.

``referee doctor`` prints it; each Ray verifier host runs it at start (see
:mod:`referee.verifiers.ray_host`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..sandbox.isolation import resolve_isolation
from .grading import verify

CHECK_PROGRAM = "import os\ndef whoami():\n    return os.getuid()"
CHECK_TESTS = {"format": "asserts", "asserts": ["assert isinstance(whoami(), int)"]}


@dataclass(frozen=True)
class SandboxCheck:
    """What the check found: the level, whether a program was judged, why not, how long it took.

    Example:
        >>> SandboxCheck("basic", True, "", 0.2).ok
        True
    """

    level: str
    ok: bool
    reason: str
    seconds: float


def sandbox_check(isolation: str = "auto", *, workers: int = 1, timeout: float = 10.0,
                  allow_weak_isolation: bool = False) -> SandboxCheck:
    """Resolve ``isolation`` and judge :data:`CHECK_PROGRAM` at that level (starting the judge pool).

    Raises ``ValueError`` when the asked-for level is not available here, or is one where a job
    could reach you and ``allow_weak_isolation`` does not accept it (see
    :func:`~referee.verifiers.sandbox.isolation.resolve_isolation`).

    Example:
        >>> check = sandbox_check("basic", allow_weak_isolation=True)
        >>> check.level, check.ok
        ('basic', True)
    """
    level = resolve_isolation(isolation, allow_weak=allow_weak_isolation).level
    started = time.monotonic()
    verdict = verify(CHECK_PROGRAM, CHECK_TESTS, isolation=level, workers=workers, timeout=timeout,
                     allow_weak_isolation=allow_weak_isolation)
    return SandboxCheck(level, verdict.correct, "" if verdict.correct else verdict.reason, time.monotonic() - started)
