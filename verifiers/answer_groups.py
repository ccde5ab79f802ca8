"""Group completions whose final answers are equivalent, by a verifier's own equivalence (majority voting).

Voting on answer strings splits one answer into several votes (``0.5``, ``\\frac{1}{2}`` and
``1/2`` are three strings); :func:`partition_answers` asks the verifier instead, so the votes
are the answers' values. It uses only the verifiers' public faces (``verify_batch``), so it is
bounded in time like every verifier call.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .registry import get_verifier
from .verdict import Verdict

# Verifiers whose answers are values that two completions can share; code answers are programs.
ANSWER_VERIFIERS = ("gsm8k", "math")
# Statuses whose completion states an answer that counts as a vote (no_answer, timeout and error do not).
VOTING = frozenset({"correct", "wrong"})
# The gold an answer is read against when there is none (answers are then read as for a number).
_PLACEHOLDER_GOLD = "0"


@dataclass(frozen=True)
class AnswerPartition:
    """Completions grouped by equivalent answers.

    Attributes:
        labels: each completion's group (an index into ``groups``), ``None`` for one that casts
            no vote (no answer, a timeout, a verifier error).
        groups: the completions of each group, largest first (ties in order of first appearance).
        answers: each group's answer as read from its first completion.
        correct_group: the group equivalent to the gold (``None`` without a gold or when no
            completion is right).
        complete: ``False`` when the time ran out and the completions left were each given a
            group of their own.

    Example:
        >>> partition = partition_answers([r"\\boxed{0.5}", r"\\boxed{\\frac12}", r"\\boxed{3}", "no idea"], gold="1/2")
        >>> partition.labels, partition.answers, partition.correct_group
        ((0, 0, 1, None), ('0.5', '3'), 0)
        >>> partition.majority_score()
        1.0
    """

    labels: tuple[int | None, ...]
    groups: tuple[tuple[int, ...], ...]
    answers: tuple[str, ...]
    correct_group: int | None
    complete: bool = True

    def plurality(self, among: Sequence[int] | None = None) -> list[int]:
        """The groups with the most votes among the completions ``among`` (default: all); all of them on a tie.

        Example:
            >>> AnswerPartition((0, 1, 1, 0, None), ((0, 3), (1, 2)), ("4", "5"), 0).plurality([0, 1, 2])
            [1]
        """
        counts: dict[int, int] = {}
        for index in range(len(self.labels)) if among is None else among:
            label = self.labels[index]
            if label is not None:
                counts[label] = counts.get(label, 0) + 1
        if not counts:
            return []
        most = max(counts.values())
        return sorted(group for group, count in counts.items() if count == most)

    def majority_score(self, among: Sequence[int] | None = None) -> float:
        """Whether the plurality answer of ``among`` (default: all) is right: 1.0, 0.0, or on a tie
        ``1/t`` when the right group is one of the ``t`` tied groups (the expected score of a
        uniformly random tie-break). No vote at all scores 0.0.

        Example:
            >>> partition = AnswerPartition((0, 1, None), ((0,), (1,)), ("4", "5"), correct_group=0)
            >>> partition.majority_score(), partition.majority_score([0]), partition.majority_score([2])
            (0.5, 1.0, 0.0)
        """
        if self.correct_group is None:
            return 0.0
        tied = self.plurality(among)
        return 1.0 / len(tied) if self.correct_group in tied else 0.0


def _batch(verifier: Any, completions: list[str], golds: list[Any], options: dict[str, Any],
           deadline: float | None) -> list[Verdict] | None:
    """``verify_batch`` within what is left of the deadline, or ``None`` when none is left."""
    if deadline is None:
        return verifier.verify_batch(completions, golds, **options)
    left = deadline - time.monotonic()
    if left <= 0:
        return None
    return verifier.verify_batch(completions, golds, batch_timeout=left, **options)


def partition_answers(completions: Sequence[Any], *, verifier: str = "math", gold: Any = None,
                      timeout: float | None = None, **options: Any) -> AnswerPartition:
    """Partition ``completions`` by equivalence of their final answers, as ``verifier`` judges it.

    Each completion's answer is read by ``verifier`` (against ``gold`` when given, so it is
    read as the gold's kind, and the completions equal to the gold form one group); then each
    remaining answer is compared with the first answer of every group so far by judging the
    completion against that answer as its gold. Equal answer strings share a group without a
    call. A completion with no answer, a timeout or an error casts no vote (label ``None``).

    Args:
        completions: texts (or chat messages) to group.
        verifier: ``gsm8k`` or ``math`` (code answers are programs, not values).
        gold: the reference answer, if known; it decides ``correct_group``.
        timeout: seconds the whole partition may take (default ``None``: bounded by the
            verifier's per-item deadlines). When it runs out, the completions not yet placed
            get a group each and ``complete`` is ``False``.
        **options: the verifier's own options (e.g. ``percent="divide"``), used for every call.

    Example:
        >>> partition = partition_answers(["#### 18", "so 18.0 in all", "#### 17", "#### 17"], verifier="gsm8k")
        >>> partition.labels, partition.answers, partition.plurality()
        ((0, 0, 1, 1), ('18', '17'), [0, 1])
    """
    if verifier not in ANSWER_VERIFIERS:
        raise ValueError(f"Answers of the {verifier!r} verifier cannot be grouped by value; use one of "
                         f"{', '.join(ANSWER_VERIFIERS)}.")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"timeout={timeout!r} must be a positive number of seconds (or None).")
    module = get_verifier(verifier)
    deadline = None if timeout is None else time.monotonic() + timeout
    texts = list(completions)
    read = _batch(module, texts, [_PLACEHOLDER_GOLD if gold is None else gold] * len(texts), options, deadline)
    if read is None:
        return AnswerPartition(tuple(None for _ in texts), (), (), None, complete=False)
    labels: list[int | None] = [None] * len(texts)
    groups: list[list[int]] = []
    answers: list[str] = []
    correct_group = None
    voters = [i for i, v in enumerate(read) if v.status in VOTING and v.extracted is not None]
    if gold is not None:
        right = [i for i in voters if read[i].status == "correct"]
        if right:
            correct_group = 0
            groups.append(right)
            answers.append(str(read[right[0]].extracted))
    unplaced = [i for i in voters if not (gold is not None and read[i].status == "correct")]
    complete = True
    while unplaced:
        first, rest = unplaced[0], unplaced[1:]
        answer = str(read[first].extracted)
        same = [i for i in rest if str(read[i].extracted).strip() == answer.strip()]
        others = [i for i in rest if i not in same]
        judged = _batch(module, [texts[i] for i in others], [answer] * len(others), options, deadline) if others else []
        if judged is None:
            complete = False
            judged = [Verdict("error", reason="out of time")] * len(others)
        joined = [i for i, verdict in zip(others, judged) if verdict.status == "correct"]
        groups.append(sorted([first, *same, *joined]))
        answers.append(answer)
        placed = set(groups[-1])
        unplaced = [i for i in rest if i not in placed]
        if not complete:
            for i in unplaced:
                groups.append([i])
                answers.append(str(read[i].extracted))
            break
    order = sorted(range(len(groups)), key=lambda g: (-len(groups[g]), groups[g][0]))
    for new, old in enumerate(order):
        for i in groups[old]:
            labels[i] = new
    if correct_group is not None:
        correct_group = order.index(correct_group)
    return AnswerPartition(tuple(labels), tuple(tuple(groups[g]) for g in order), tuple(answers[g] for g in order),
                           correct_group, complete)
