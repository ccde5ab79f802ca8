"""The one result type every referee verifier returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["correct", "wrong", "no_answer", "timeout", "error"]

STATUSES: tuple[str, ...] = ("correct", "wrong", "no_answer", "timeout", "error")

# Statuses that are the completion's own fault: they score (0 or partial credit).
# "error" is never the completion's fault (bad gold, infrastructure, verifier bug):
# a reward function turns it into None so TRL leaves the reward out.
COMPLETION_FAULT_STATUSES: frozenset[str] = frozenset({"correct", "wrong", "no_answer", "timeout"})


@dataclass(frozen=True, init=False)
class Verdict:
    """Why a completion got its score.

    Attributes:
        status: one of ``correct``, ``wrong``, ``no_answer``, ``timeout``, ``error``.
        score: in [0, 1]; 1.0 for ``correct``, partial credit is allowed for ``wrong``
            (for example the share of unit tests passed), 0.0 otherwise.
        extracted: what was read from the completion (``None`` when nothing was).
        reason: one readable line.
        details: anything else worth keeping (JSON-serialisable values).

    Example:
        >>> v = Verdict("correct", 1.0, extracted="18", reason="18 equals the gold 18")
        >>> v.correct, v.score
        (True, 1.0)
        >>> Verdict("error", 0.0, reason="gold 'abc' is not a number").is_completion_fault
        False
    """

    status: Status
    score: float = 0.0
    extracted: str | None = None
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def __init__(
        self,
        status: Status,
        score: float = 0.0,
        extracted: str | None = None,
        reason: str = "",
        details: dict[str, Any] | None = None,
    ) -> None:
        # Verifiers build one Verdict per completion, so this is written for speed: the
        # fields are stored in one step (the dataclass is frozen, so attribute assignment is
        # refused; its __dict__ is filled directly).
        self.__dict__.update(status=status, score=_checked_score(status, score), extracted=extracted,
                             reason=reason, details={} if details is None else details)

    def __post_init__(self) -> None:
        # Only a dataclass subclass's generated __init__ calls this: its fields get the same checks.
        object.__setattr__(self, "score", _checked_score(self.status, self.score))

    @property
    def correct(self) -> bool:
        """``True`` exactly when ``status == "correct"``."""
        return self.status == "correct"

    @property
    def is_completion_fault(self) -> bool:
        """``True`` when the score reflects the completion (everything but ``error``)."""
        return self.status in COMPLETION_FAULT_STATUSES

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field.

        Example:
            >>> Verdict("wrong", 0.0, extracted="7", reason="7 is not 8").to_dict()["status"]
            'wrong'
        """
        return {
            "status": self.status,
            "score": self.score,
            "extracted": self.extracted,
            "reason": self.reason,
            "details": dict(self.details),
        }


_STATUS_SET = frozenset(STATUSES)


def _checked_score(status: Any, score: Any) -> float:
    """``score`` as a float, once ``status`` and ``score`` are known to fit together."""
    if status not in _STATUS_SET:
        raise ValueError(f"Verdict status {status!r} is not one of {', '.join(STATUSES)}.")
    checked = score if type(score) is float else float(score)
    if status == "correct":
        if checked != 1.0:
            raise ValueError(f"A correct Verdict must score 1.0, got {score!r}.")
    elif status == "wrong":
        if not 0.0 <= checked <= 1.0:  # NaN fails every comparison
            raise ValueError(f"Verdict score {score!r} must be a number in [0, 1].")
    elif checked != 0.0:
        raise ValueError(f"A {status} Verdict must score 0.0, got {score!r}.")
    return checked
