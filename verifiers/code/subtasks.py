"""IOI-style subtasks: a problem's tests grouped, each group worth points that it scores only when
every one of its tests passes.

``{"subtasks": [{"score": 30, "tests": [0, 1]}, {"score": 70, "tests": [1, 2, 3]}]}`` in a tests
dict (indices into ``inputs``; a test may be in several groups, as IOI's often share them). The
score is the points won over the points there are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .formats import TestsError


@dataclass(frozen=True)
class Subtask:
    """One group of tests and its points.

    Example:
        >>> Subtask(30.0, (0, 1)).won([True, True, False])
        True
    """

    score: float
    tests: tuple[int, ...]

    def won(self, passed: list[bool]) -> bool:
        """Whether every test of the group passed."""
        return all(passed[i] for i in self.tests)


def read_subtasks(tests: dict[str, Any], count: int) -> tuple[Subtask, ...] | None:
    """The subtasks of a tests dict with ``count`` tests, or ``None`` when it has none.

    Example:
        >>> read_subtasks({"subtasks": [{"score": 40, "tests": [0]}, {"score": 60, "tests": [0, 1]}]}, 2)
        (Subtask(score=40.0, tests=(0,)), Subtask(score=60.0, tests=(0, 1)))
        >>> read_subtasks({"subtasks": [{"score": 40, "tests": [5]}]}, 2)
        Traceback (most recent call last):
        ...
        referee.verifiers.code.formats.TestsError: tests['subtasks'][0] must give a positive 'score' and a non-empty list of test indices below 2 as 'tests'.
    """
    given = tests.get("subtasks")
    if given is None:
        return None
    if not isinstance(given, list) or not given:
        raise TestsError("tests['subtasks'] must be a non-empty list of {'score': points, 'tests': [indices]}.")
    subtasks = []
    for number, item in enumerate(given):
        score = item.get("score") if isinstance(item, dict) else None
        indices = item.get("tests") if isinstance(item, dict) else None
        if (isinstance(score, bool) or not isinstance(score, (int, float)) or not score > 0
                or not isinstance(indices, list) or not indices
                or not all(type(i) is int and 0 <= i < count for i in indices)):
            raise TestsError(f"tests['subtasks'][{number}] must give a positive 'score' and a non-empty list of "
                             f"test indices below {count} as 'tests'.")
        subtasks.append(Subtask(float(score), tuple(indices)))
    return tuple(subtasks)


def subtask_score(subtasks: tuple[Subtask, ...], passed: list[bool]) -> tuple[float, list[dict[str, Any]]]:
    """(the share of points won, one ``{"score", "won"}`` per subtask for ``Verdict.details``).

    Example:
        >>> subtask_score((Subtask(30.0, (0,)), Subtask(70.0, (0, 1))), [True, False])
        (0.3, [{'score': 30.0, 'won': True}, {'score': 70.0, 'won': False}])
    """
    won = [subtask.won(passed) for subtask in subtasks]
    total = sum(subtask.score for subtask in subtasks)
    return sum(s.score for s, w in zip(subtasks, won) if w) / total, [{"score": s.score, "won": w} for s, w in zip(subtasks, won)]
