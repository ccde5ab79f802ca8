"""The shape of one reward-hacking probe of ``referee audit`` (:mod:`referee.rewards.audit`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Probe:
    """One reward-hacking probe: a completion built from a row that must not earn reward.

    ``advice`` says what it means when the probe pays like a right answer; ``build`` takes what
    the row gives (:class:`referee.rewards.audit.ProbeAnswers` for maths rows,
    :class:`referee.rewards.code_probes.CodeRow` for code rows) and returns ``None`` on a row the
    probe does not apply to.

    Example:
        >>> Probe("empty", "an empty completion", "score it like a wrong answer", lambda row: "").build(None)
        ''
    """

    name: str
    description: str
    advice: str
    build: Callable[[Any], str | None]
