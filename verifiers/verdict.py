"""The one result type every referee verifier returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn

Status = Literal["correct", "wrong", "no_answer", "timeout", "error"]

STATUSES: tuple[str, ...] = ("correct", "wrong", "no_answer", "timeout", "error")

# Statuses that are the completion's own fault: they score (0 or partial credit).
# "error" is never the completion's fault (bad gold, infrastructure, verifier bug):
# a reward function turns it into None so TRL leaves the reward out.
COMPLETION_FAULT_STATUSES: frozenset[str] = frozenset({"correct", "wrong", "no_answer", "timeout"})


class Details(dict):
    """A Verdict's ``details``: a ``dict`` (JSON, ``==``, ``dict(...)`` work as usual) that refuses changes.

    One Verdict may stand for many items of a batch (``[verdict] * n``), so its details are never
    changed in place: build a new Verdict instead (``dataclasses.replace(verdict, details={...})``).
    Hashable when its values are (lists and nested dicts are hashed by their contents).

    Example:
        >>> details = Details({"kind": "timeout"})
        >>> details == {"kind": "timeout"}, hash(details) == hash(Details(kind="timeout"))
        (True, True)
        >>> details["kind"] = "error"
        Traceback (most recent call last):
        ...
        TypeError: Verdict details are read-only; build a new Verdict, e.g. dataclasses.replace(verdict, details={...})
        >>> {**details, "seconds": 2}  # a changed copy is a plain dict
        {'kind': 'timeout', 'seconds': 2}
    """

    __slots__ = ()

    def _read_only(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("Verdict details are read-only; build a new Verdict, e.g. "
                        "dataclasses.replace(verdict, details={...})")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _read_only

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(_frozen(self))

    def __reduce__(self) -> tuple[Any, ...]:
        # pickle would otherwise refill the new object through the refused __setitem__
        return (type(self), (dict(self),))


def _frozen(value: Any) -> Any:
    """A hashable view of a details value: mappings and lists by their contents."""
    if isinstance(value, Mapping):
        return frozenset((key, _frozen(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(item) for item in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(_frozen(item) for item in value)
    return value


def _details(details: Mapping[str, Any] | None) -> Details:
    """``details`` as the Verdict keeps it: a read-only copy (the caller's dict stays the caller's)."""
    return Details() if details is None else Details(details)


@dataclass(frozen=True, init=False)
class Verdict:
    """Why a completion got its score.

    Attributes:
        status: one of ``correct``, ``wrong``, ``no_answer``, ``timeout``, ``error``.
        score: in [0, 1]; 1.0 for ``correct``, partial credit is allowed for ``wrong``
            (for example the share of unit tests passed), 0.0 otherwise.
        extracted: what was read from the completion (``None`` when nothing was).
        reason: one readable line.
        details: anything else worth keeping (JSON-serialisable values), read-only
            (:class:`Details`, a ``dict`` that refuses changes), so one Verdict may stand for
            several items of a batch.

    Verdicts compare and hash by value, so they can be counted or kept in a set.

    Example:
        >>> v = Verdict("correct", 1.0, extracted="18", reason="18 equals the gold 18")
        >>> v.correct, v.score
        (True, 1.0)
        >>> Verdict("error", 0.0, reason="gold 'abc' is not a number").is_completion_fault
        False
        >>> len({Verdict("wrong", details={"source": "boxed"}), Verdict("wrong", details={"source": "boxed"})})
        1
    """

    status: Status
    score: float = 0.0
    extracted: str | None = None
    reason: str = ""
    details: Details = field(default_factory=Details)

    def __init__(
        self,
        status: Status,
        score: float = 0.0,
        extracted: str | None = None,
        reason: str = "",
        details: Mapping[str, Any] | None = None,
    ) -> None:
        # Verifiers build one Verdict per completion, so this is written for speed: the
        # dataclass is frozen (attribute assignment is refused), so its __dict__ is filled
        # directly, one item at a time (quicker than dict.update with keywords).
        fields = self.__dict__
        fields["status"] = status
        fields["score"] = _checked_score(status, score)
        fields["extracted"] = extracted
        fields["reason"] = reason
        fields["details"] = _details(details)

    def __post_init__(self) -> None:
        # Only a dataclass subclass's generated __init__ calls this: its fields get the same checks.
        object.__setattr__(self, "score", _checked_score(self.status, self.score))
        object.__setattr__(self, "details", _details(self.details))

    def __hash__(self) -> int:
        # Written out (the dataclass would hash the fields as they are): equal verdicts hash equal.
        return hash((self.status, self.score, self.extracted, self.reason, self.details))

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


class UnusableGold(ValueError):
    """The gold answer cannot be read (its message says why and what to pass instead).

    Example:
        >>> isinstance(UnusableGold("gold '' is empty"), ValueError)
        True
    """
