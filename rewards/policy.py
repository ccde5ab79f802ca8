"""The error policy: who is at fault decides the reward, and every error is counted and shown.

A Verdict that is the completion's fault scores (0 or partial credit); an ``error`` Verdict
(unusable gold, missing column, verifier failure) becomes ``None``, which TRL leaves out of
the weighted sum. Errors are logged once per (reward, kind) and counted on every batch
through the ``log_metric`` callback TRL passes to reward functions.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from referee.verifiers import Verdict

logger = logging.getLogger("referee.rewards")

# Shares logged per batch as rewards/<name>/<status>: the statuses a reader must watch.
LOGGED_STATUSES: tuple[str, ...] = ("no_answer", "timeout", "error")
# How well a code verdict's program was contained, by isolation level (logged as a mean).
ISOLATION_STRENGTH: dict[str, float] = {"full": 3.0, "namespaces": 2.0, "uid": 1.0, "basic": 0.0}

_warned: set[tuple[str, str]] = set()
_warned_lock = threading.Lock()


def error_verdict(kind: str, reason: str) -> Verdict:
    """An ``error`` Verdict raised by the reward layer itself, tagged with its ``kind``.

    Example:
        >>> error_verdict("missing_column", "no column 'answer'").details
        {'kind': 'missing_column'}
    """
    return Verdict("error", reason=reason, details={"kind": kind})


def reward_of(verdict: Verdict, *, all_or_nothing: bool = False) -> float | None:
    """The reward a Verdict earns: its score (1.0/0.0 with ``all_or_nothing``), ``None`` for ``error``.

    Example:
        >>> reward_of(Verdict("wrong", 0.5)), reward_of(Verdict("wrong", 0.5), all_or_nothing=True)
        (0.5, 0.0)
        >>> reward_of(Verdict("error", reason="gold 'x' is not a number")) is None
        True
    """
    if not verdict.is_completion_fault:
        return None
    if all_or_nothing:
        return 1.0 if verdict.correct else 0.0
    return verdict.score


def warn_once(reward_name: str, kind: str, message: str) -> bool:
    """Log ``message`` as a warning the first time ``(reward_name, kind)`` is seen in this process.

    Returns whether it was logged.

    Example:
        >>> warn_once("doc_example", "demo", "shown once")
        True
        >>> warn_once("doc_example", "demo", "not shown again")
        False
    """
    with _warned_lock:
        if (reward_name, kind) in _warned:
            return False
        _warned.add((reward_name, kind))
    logger.warning("%s", message)
    return True


def warn_errors(reward_name: str, verdicts: Sequence[Verdict]) -> None:
    """Warn once per kind of ``error`` Verdict (the verifier's own errors are kind ``verifier``).

    Example:
        >>> warn_errors("doc_example", [Verdict("correct", 1.0)])  # nothing to say
    """
    for verdict in verdicts:
        if verdict.status == "error":
            kind = str(verdict.details.get("kind", "verifier"))
            warn_once(reward_name, kind,
                      f"reward {reward_name}: {verdict.reason.rstrip('.')}. The reward is None (left out by TRL), not 0; "
                      f"further '{kind}' errors are counted in rewards/{reward_name}/error without a warning.")


def report(reward_name: str, verdicts: Sequence[Verdict], trainer_kwargs: Mapping[str, Any]) -> None:
    """Warn about errors, log status shares through ``log_metric`` and what was read through ``log_extra``.

    ``trainer_kwargs`` are the keyword arguments TRL passed to the reward function; without
    its callbacks (a direct call) only the warnings happen. A failing callback is warned about.
    Code verdicts carry the sandbox's isolation level: its mean :data:`ISOLATION_STRENGTH` is
    logged as ``rewards/<name>/isolation_strength`` (3 is ``full``) and each level through ``log_extra``.

    Example:
        >>> logged = {}
        >>> report("gsm8k_accuracy", [Verdict("correct", 1.0, extracted="18"), Verdict("no_answer")],
        ...        {"log_metric": logged.__setitem__})
        >>> logged
        {'rewards/gsm8k_accuracy/no_answer': 0.5, 'rewards/gsm8k_accuracy/timeout': 0.0, 'rewards/gsm8k_accuracy/error': 0.0}
        >>> report("code_tests", [Verdict("correct", 1.0, details={"isolation": "full"})], {"log_metric": logged.__setitem__})
        >>> logged["rewards/code_tests/isolation_strength"]
        3.0
    """
    warn_errors(reward_name, verdicts)
    if not verdicts:
        return
    counts = Counter(verdict.status for verdict in verdicts)
    for status in LOGGED_STATUSES:
        log_metric_safely(trainer_kwargs, f"rewards/{reward_name}/{status}", counts[status] / len(verdicts))
    levels = [verdict.details.get("isolation") for verdict in verdicts]
    strengths = [ISOLATION_STRENGTH[level] for level in levels if level in ISOLATION_STRENGTH]
    if strengths:  # code verdicts: how well their programs were contained (3 = full)
        log_metric_safely(trainer_kwargs, f"rewards/{reward_name}/isolation_strength", sum(strengths) / len(strengths))
    log_extra = trainer_kwargs.get("log_extra")
    if callable(log_extra):
        try:
            log_extra(f"{reward_name}/extracted", [verdict.extracted for verdict in verdicts])
            log_extra(f"{reward_name}/status", [verdict.status for verdict in verdicts])
            if strengths:
                log_extra(f"{reward_name}/isolation", [str(level) for level in levels])
        except Exception as exc:  # logging must never stop training
            warn_once(reward_name, "logging", f"reward {reward_name}: log_extra failed ({exc!r}); scores are unaffected.")


def log_metric_safely(trainer_kwargs: Mapping[str, Any], name: str, value: float) -> None:
    """Call TRL's ``log_metric`` callback if the call has one; a failing callback is only warned about.

    Example:
        >>> logged = {}
        >>> log_metric_safely({"log_metric": logged.__setitem__}, "rewards/x/error", 0.25); logged
        {'rewards/x/error': 0.25}
        >>> log_metric_safely({}, "rewards/x/error", 0.25)  # a direct call: nothing to log to
    """
    log_metric = trainer_kwargs.get("log_metric")
    if not callable(log_metric):
        return
    try:
        log_metric(name, value)
    except Exception as exc:  # logging must never stop training
        warn_once(name, "logging", f"log_metric({name!r}) failed ({exc!r}); scores are unaffected.")
