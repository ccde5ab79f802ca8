"""The circuit breaker: a run whose recent samples are too often referee errors stops.

An ``error`` Verdict is not the completion's fault (bad gold, a failed sandbox or verifier). A
few are counted and left out (TRL) or scored a fallback (the other trainers); a run of them is an
outage, and training on would mean training on the other rewards alone, or on fallbacks.
:class:`ErrorBreaker` counts error flags over a sliding window and, past a share of it, raises
:class:`ErrorRateExceeded` on every call: a :class:`~referee.rewards.trainers.routing.RefereeStop`, so it
gets past the trainers' ``except Exception``.
"""

from __future__ import annotations

import collections
import math
import threading
from collections.abc import Sequence
from typing import Any

from .trainers.routing import RefereeStop


class ErrorRateExceeded(RefereeStop):
    """Too many recent samples were ``error`` Verdicts: the run stops rather than train on fallbacks.

    Example:
        >>> issubclass(ErrorRateExceeded, Exception)  # trainers' `except Exception` does not swallow it
        False
    """


class ErrorBreaker:
    """Counts ``error`` samples over a sliding window and trips for good past a share of it.

    It trips when the errors among the last ``window`` samples exceed ``max_share * window``
    (26 of 512 by default), so a few stray errors pass, a run of them at the start trips it
    early, and once tripped every :meth:`check` raises until :meth:`reset`. Thread-safe.

    Example:
        >>> breaker = ErrorBreaker(max_share=0.25, window=4)
        >>> breaker.record([False, False, True])  # 1 error in the window: allowed
        >>> breaker.record([True], last_reason="the sandbox failed")
        Traceback (most recent call last):
        ...
        referee.rewards.breaker.ErrorRateExceeded: 2 of the last 4 samples were referee errors (more than 25%), the last: the sandbox failed. ...
    """

    def __init__(self, max_share: float = 0.05, window: int = 512, *,
                 instead: str = "training on fallback rewards") -> None:
        self.max_share = float(max_share)
        self.window = int(window)
        self.instead = instead  # what the run would do without the breaker, for the message
        self._recent: collections.deque[bool] = collections.deque(maxlen=self.window)
        self._errors = 0
        self._tripped: str | None = None
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:  # picklable (TRL's async trainer pickles rewards): the lock is not
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def tripped(self) -> bool:
        """Whether the breaker has tripped (every call then raises).

        Example:
            >>> ErrorBreaker().tripped
            False
        """
        return self._tripped is not None

    def stats(self) -> dict[str, Any]:
        """Errors in the window, samples in it, the limit, and whether it tripped (for /health and logs).

        Example:
            >>> ErrorBreaker().stats()
            {'errors': 0, 'samples': 0, 'window': 512, 'max_errors': 25, 'tripped': False}
        """
        with self._lock:
            return {"errors": self._errors, "samples": len(self._recent), "window": self.window,
                    "max_errors": self._limit(), "tripped": self.tripped}

    def _limit(self) -> int:
        return math.floor(self.max_share * self.window + 1e-9)

    def check(self) -> None:
        """Raise :class:`ErrorRateExceeded` if the breaker has tripped.

        Example:
            >>> ErrorBreaker().check()  # not tripped: nothing happens
        """
        if self._tripped is not None:
            raise ErrorRateExceeded(self._tripped)

    def record(self, errors: Sequence[bool], last_reason: str = "") -> None:
        """Count one flag per sample (``True`` for an ``error``); raise if that trips the breaker.

        Example:
            >>> breaker = ErrorBreaker(max_share=0.5, window=4)
            >>> breaker.record([True, False, True, False]); breaker.stats()["errors"]
            2
        """
        with self._lock:
            for is_error in errors:
                if len(self._recent) == self.window and self._recent[0]:
                    self._errors -= 1
                self._recent.append(bool(is_error))
                self._errors += bool(is_error)
                if self._tripped is None and self._errors > self._limit():
                    why = f", the last: {last_reason.rstrip('.')}" if last_reason else ""
                    self._tripped = (
                        f"{self._errors} of the last {len(self._recent)} samples were referee errors "
                        f"(more than {self.max_share:.0%}){why}. These are not the completions' fault (bad gold, "
                        f"a failed sandbox or verifier), so the run stops instead of {self.instead}; "
                        "fix the cause, or raise max_error_share / error_window.")
        self.check()

    def reset(self) -> None:
        """Forget every sample and un-trip.

        Example:
            >>> breaker = ErrorBreaker(max_share=0.0, window=2)
            >>> try:
            ...     breaker.record([True])
            ... except ErrorRateExceeded:
            ...     breaker.reset()
            >>> breaker.tripped
            False
        """
        with self._lock:
            self._recent.clear()
            self._errors = 0
            self._tripped = None
