"""Golden-answer checks: prove on a file of (completion, expected score) cases that a reward scores right.

A golden file is JSONL, one case per line: ``completion`` (text or chat messages),
``expected`` (the reward it must get; ``null`` when it must be ``None``), the dataset
columns the reward reads (e.g. ``answer``), and optionally ``prompt`` and ``completion_ids``.
Every other field is passed to the reward as a column too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .columns import reward_columns
from .completions import completion_text
from .jsonl import jsonl_rows, open_jsonl

_RESERVED = ("completion", "expected", "prompt", "completion_ids")


@dataclass(frozen=True)
class GoldenCase:
    """One golden line: what the reward is given and the score it must return."""

    completion: Any
    expected: float | None
    columns: dict[str, Any] = field(default_factory=dict)
    prompt: Any = None
    completion_ids: list[int] | None = None
    source: str = "<memory>"
    line: int = 0

    @property
    def label(self) -> str:
        """Where the case comes from and how its completion starts (a pytest id).

        Example:
            >>> GoldenCase("9 * 2 = 18\\n#### 18", 1.0, source="gsm8k.jsonl", line=3).label
            'gsm8k.jsonl:3 9 * 2 = 18\\\\n#### 18'
        """
        return f"{Path(self.source).name}:{self.line} {excerpt(self.completion, 40)}"


@dataclass(frozen=True)
class GoldenResult:
    """A case, the reward it got, and the reward's reason for it."""

    case: GoldenCase
    got: float | None
    reason: str = ""
    raised: bool = False

    def ok(self, tolerance: float = 1e-6) -> bool:
        """Whether ``got`` matches the expected score (both ``None``, or within ``tolerance``).

        Example:
            >>> GoldenResult(GoldenCase("#### 18", 1.0), 1.0).ok(), GoldenResult(GoldenCase("x", None), 0.0).ok()
            (True, False)
        """
        expected = self.case.expected
        if self.raised:
            return False
        if expected is None or self.got is None:
            return expected is None and self.got is None
        return math.isfinite(self.got) and abs(self.got - expected) <= tolerance

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (what ``referee check --json`` prints per mismatch).

        Example:
            >>> GoldenResult(GoldenCase("#### 17", 1.0, line=2), 0.0, "17 differs").to_dict()["got"]
            0.0
        """
        return {"source": self.case.source, "line": self.case.line, "completion": excerpt(self.case.completion, 200),
                "expected": self.case.expected, "got": self.got, "reason": self.reason}


def excerpt(completion: Any, width: int) -> str:
    """A one-line excerpt of a completion (newlines shown as ``\\n``), cut to ``width`` characters.

    Example:
        >>> excerpt("9 * 2 = 18\\n#### 18", 12)
        '9 * 2 = 18\\\\…'
    """
    text = completion_text(completion)
    text = repr(completion) if text is None else text
    text = text.replace("\n", "\\n")
    return text if len(text) <= width else text[: width - 1] + "…"


def _case(row: Any, source: str, line: int) -> GoldenCase:
    where = f"{source} line {line}"
    if not isinstance(row, dict):
        raise ValueError(f"{where} is a JSON {type(row).__name__}; each line must be an object with 'completion' and 'expected'.")
    missing = [key for key in ("completion", "expected") if key not in row]
    if missing:
        raise ValueError(f"{where} has no {' or '.join(map(repr, missing))}; add it (expected null means the reward must be None).")
    expected = row["expected"]
    if expected is not None and (isinstance(expected, bool) or not isinstance(expected, (int, float))):
        raise ValueError(f"{where}: expected {expected!r} is not a number or null.")
    ids = row.get("completion_ids")
    if ids is not None and not (isinstance(ids, list) and all(isinstance(i, int) for i in ids)):
        raise ValueError(f"{where}: completion_ids must be a list of token ids.")
    columns = {key: value for key, value in row.items() if key not in _RESERVED}
    return GoldenCase(row["completion"], None if expected is None else float(expected), columns, row.get("prompt"),
                      ids, source, line)


def load_golden(path: str | Path) -> list[GoldenCase]:
    """Read a golden JSONL file (blank lines skipped); a bad line raises ValueError naming it.

    Example:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "golden.jsonl")
        >>> _ = open(path, "w").write('{"completion": "#### 18", "answer": "18", "expected": 1}\\n')
        >>> load_golden(path)[0].columns
        {'answer': '18'}
    """
    cases = []
    with open_jsonl(path) as stream:
        for line, row in jsonl_rows(stream):
            if isinstance(row, str):
                raise ValueError(f"{path} line {line}: {row}.")
            cases.append(_case(row, str(path), line))
    if not cases:
        raise ValueError(f"{path} holds no golden cases; write one JSON object per line.")
    return cases


def reasons(reward: Callable[..., Any], completions: Sequence[Any], **columns: Any) -> list[str]:
    """Why ``reward`` scored each completion so: its Verdicts' reasons (each term's, for a sum).

    A reward without Verdicts gives empty reasons.

    Example:
        >>> from referee.rewards import get_reward, parse_reward_sum
        >>> reasons(get_reward("gsm8k_accuracy"), ["#### 17"], answer=["18"])
        ['17 (####) differs from the gold 18']
        >>> reasons(parse_reward_sum("gsm8k_accuracy + 0.5*gsm8k_format"), ["#### 18"], answer=["18"])
        ["gsm8k_accuracy: 18 (####) equals the gold 18; gsm8k_format: one '#### N' answer line"]
    """
    terms = getattr(reward, "terms", None)
    if terms is not None:
        per_term = [[f"{getattr(r, '__name__', '?')}: {why}" if why else "" for why in reasons(r, completions, **columns)]
                    for r, _ in terms]
        return ["; ".join(why for why in row if why) for row in zip(*per_term)]
    verdicts = getattr(reward, "verdicts", None)
    if not callable(verdicts):
        return [""] * len(completions)
    try:
        return [verdict.reason for verdict in verdicts(completions, **columns)]
    except Exception as exc:
        return [f"reasons unavailable ({type(exc).__name__}: {exc})"] * len(completions)


def _column_batch(cases: Sequence[GoldenCase]) -> dict[str, list[Any]]:
    keys = sorted({key for case in cases for key in case.columns})
    return {key: [case.columns.get(key) for case in cases] for key in keys}


def check_columns(reward: Callable[..., Any], cases: Sequence[GoldenCase], source: str) -> None:
    """Refuse, in one line (``ValueError``), cases that lack a column the reward reads, which it
    would otherwise meet as a ``TypeError`` on every case (``def acc(completions, final, **kwargs)``).

    Example:
        >>> def acc(completions, final, **kwargs):
        ...     return [1.0] * len(completions)
        >>> check_columns(acc, [GoldenCase("#### 18", 1.0, {"answer": "18"}, line=1)], "g.jsonl")
        Traceback (most recent call last):
        ...
        ValueError: g.jsonl line 1 has no column 'final', which the reward acc reads (the case has: answer); add it to every golden case.
    """
    wanted = reward_columns(reward)
    for case in cases:
        missing = wanted.missing(case.columns)
        if missing:
            have = ", ".join(case.columns) or "no column but completion and expected"
            raise ValueError(f"{source} line {case.line} has no column {' and '.join(repr(m) for m in missing)}, which "
                             f"the reward {getattr(reward, '__name__', reward)} reads (the case has: {have}); add it to "
                             "every golden case.")


def check_golden(reward: Callable[..., Any], cases: Sequence[GoldenCase]) -> list[GoldenResult]:
    """Score every case in one batch (as the trainer would) and pair each score with its reason.

    A column missing from some cases is passed as ``None`` for them; ``completion_ids`` is
    passed when every case has it. A reward that raises fails every case, the exception
    as the reason.

    Example:
        >>> from referee.rewards import get_reward
        >>> cases = [GoldenCase("#### 18", 1.0, {"answer": "18"}), GoldenCase("#### 17", 1.0, {"answer": "18"})]
        >>> [(r.got, r.ok()) for r in check_golden(get_reward("gsm8k_accuracy"), cases)]
        [(1.0, True), (0.0, False)]
    """
    completions = [case.completion for case in cases]
    columns = _column_batch(cases)
    ids = [case.completion_ids for case in cases]
    try:
        scores = list(reward(prompts=[case.prompt for case in cases], completions=completions,
                             completion_ids=None if any(i is None for i in ids) else ids, **columns))
        if len(scores) != len(cases):
            raise ValueError(f"the reward returned {len(scores)} scores for {len(cases)} completions")
    except Exception as exc:
        return [GoldenResult(case, None, f"the reward raised {type(exc).__name__}: {exc}", raised=True) for case in cases]
    why = reasons(reward, completions, **columns)
    return [GoldenResult(case, None if score is None else float(score), reason)
            for case, score, reason in zip(cases, scores, why)]
