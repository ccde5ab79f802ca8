"""Whether the success reward reads where the model writes its answer, for any reward.

A reward built on a referee verifier logs ``rewards/<name>/no_answer`` when it reads no answer; a
reward of your own logs nothing. For those, the pre-filter takes one sample of each row the reward
paid nothing, puts the row's right answer where the model wrote its own (the answer the maths
verifier reads, replaced in place), and scores that with the success reward. A reward that pays
none of these does not read what the model writes: the model is not wrong, it writes another
format. :data:`UNREAD_METRIC` records, per corrected sample, 1.0 when it was still not paid.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.rewards.audit import describe_read_formats, gold_column_names, probe_answers, probe_family
from referee.rewards.completions import completion_text

from .scoring import RowScores, Scorer

UNREAD_METRIC = "prefilter/right_answer_unread"
_PROBED_ROWS = 8  # rows the audit's format probes read to name the format the reward pays


def with_right_answer(completion: Any, gold: Any) -> Any | None:
    """``completion`` with the answer it gives replaced by ``gold``'s right answer (text, or the
    last message of a conversation); ``None`` when the completion gives no answer or the gold none.

    Example:
        >>> with_right_answer("48 + 24 = 71, so\\n#### 71", "#### 72")
        '48 + 24 = 71, so\\n#### 72'
        >>> with_right_answer([{"role": "assistant", "content": "So $x = \\\\boxed{\\\\frac{5}{2}}$."}], "3")
        [{'role': 'assistant', 'content': 'So $x = \\\\boxed{3}$.'}]
        >>> with_right_answer("I do not know.", "72") is None
        True
    """
    text, answers = completion_text(completion), probe_answers(gold)
    if text is None or answers is None:
        return None
    given = _given_answer(text, answers.right)
    where = text.rfind(given) if given else -1
    if where < 0:
        return None
    corrected = text[:where] + answers.right + text[where + len(given):]
    if isinstance(completion, str):
        return corrected
    return [*completion[:-1], {**completion[-1], "content": corrected}]


def _given_answer(text: str, right: str) -> str | None:
    """The answer ``text`` gives as written: as GSM8K's flexible mode reads it (a box, an answer phrase, the
    last number), else as the maths verifier reads a non-numeric one (never its reading of the whole text)."""
    from referee.verifiers import gsm8k, math

    numeric = gsm8k.verify(text, "0", mode="flexible").extracted
    if numeric:
        return numeric
    verdict = math.verify(text, right)
    return verdict.extracted if verdict.details.get("source") != "bare" else None


def _corrected(completion: Any, gold: Any) -> Any | None:
    """:func:`with_right_answer`, ``None`` where the row's gold or completion cannot be read at all: the
    check only explains a run, so a row it cannot read is left out, never a reason to stop."""
    try:
        return with_right_answer(completion, gold)
    except Exception:  # noqa: BLE001 - any gold shape (code tests, tables) may reach here
        return None


def unread_shares(scorer: Scorer, prompts: Sequence[Any], completions: Sequence[Sequence[Any]],
                  completion_ids: Sequence[Sequence[Sequence[int]]], columns: Sequence[dict[str, Any]],
                  scores: Sequence[RowScores]) -> list[float]:
    """For each row the success reward paid no sample, one sample with the right answer put where
    the model wrote its own, scored with that reward: 1.0 when it is still not paid, 0.0 when it is.

    Example:
        >>> def reads_final_tags(prompts, completions, answer, **kwargs):
        ...     return [float(f"<final>{a}</final>" in c) for c, a in zip(completions, answer)]
        >>> scorer = Scorer([reads_final_tags])
        >>> groups, columns = [["#### 17", "#### 16"]], [{"answer": "18"}]
        >>> scores, _ = scorer.score(["9 * 2?"], groups, [[[1], [1]]], columns)
        >>> unread_shares(scorer, ["9 * 2?"], groups, [[[1], [1]]], columns, scores)
        [1.0]
    """
    success = scorer.functions[scorer.names.index(scorer.success_reward)]
    gold_columns = gold_column_names(success)
    picked: list[tuple[int, Any]] = []
    for index, (group, row_columns, score) in enumerate(zip(completions, columns, scores)):
        values = score.rewards.get(scorer.success_reward, [])
        if not values or any(value is None or value >= scorer.threshold for value in values):
            continue
        gold = next((row_columns[column] for column in gold_columns if column in row_columns), None)
        corrected = next((fixed for completion in group if (fixed := _corrected(completion, gold)) is not None), None)
        if corrected is not None:
            picked.append((index, corrected))
    if not picked:
        return []
    checker = Scorer([success], threshold=scorer.threshold)
    rescored, _ = checker.score([prompts[i] for i, _ in picked], [[fixed] for _, fixed in picked],
                                [[completion_ids[i][0]] for i, _ in picked], [columns[i] for i, _ in picked])
    values = [row.rewards[checker.names[0]][0] for row in rescored]
    return [float(value < scorer.threshold) for value in values if value is not None]


def unread_detail(scorer: Scorer, prompts: Sequence[Any], completions: Sequence[Sequence[Any]],
                  columns: Sequence[dict[str, Any]], prompt_column: str = "prompt") -> str:
    """What a run whose success reward reads none of the model's answers shows: one completion the
    model wrote, and the formats ``referee audit``'s probes find the reward pays on the first rows.

    Example:
        >>> def reads_final_tags(prompts, completions, answer, **kwargs):
        ...     return [float(f"<final>{a}</final>" in c) for c, a in zip(completions, answer)]
        >>> print(unread_detail(Scorer([reads_final_tags]), ["9 * 2? Answer in <final></final> tags."],
        ...                     [["#### 17"]], [{"answer": "18"}]))
        The model wrote, e.g., '#### 17'; reads_final_tags pays right answers written as <final> tags (from the prompts) (referee audit's probes).
    """
    example = next((text for group in completions for completion in group
                    if (text := completion_text(completion))), None)
    parts = [f"The model wrote, e.g., {example[:200]!r}"] if example else []
    success = scorer.functions[scorer.names.index(scorer.success_reward)]
    rows = [{**row_columns, prompt_column: prompt} for prompt, row_columns in zip(prompts, columns)][:_PROBED_ROWS]
    try:
        if rows and probe_family(success, rows) != "code":
            parts.append(describe_read_formats(success, rows, scorer.success_reward))
    except Exception:  # noqa: BLE001 - the detail only explains a run; a reward the probes upset adds none
        pass
    return "; ".join(part for part in parts if part) + ("." if parts and not parts[-1].endswith(".") else "")
