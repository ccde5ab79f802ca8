"""Per-prompt evaluation results and their summary: pass@k, maj@k, lengths, a bootstrap interval.

A result row is a pre-filter row (``pass_rate``, ``num_correct``, ``num_samples``, ...; see
``referee.recipes.prefilter``) saved with its samples, plus ``pass_at_k``, ``maj_at_k`` and
``answer_groups``, so ``referee eval``, ``referee prefilter`` and a curriculum read one format.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from referee.verifiers.answer_groups import ANSWER_VERIFIERS, AnswerPartition, partition_answers

from .metrics import bootstrap_interval, majority_at_k, pass_at_k

# Seconds the answer grouping of one prompt may take (its verifier calls are bounded too).
GROUPING_TIMEOUT = 60.0


def grouping_problem(reward: Any) -> str | None:
    """Why maj@k cannot be computed with ``reward`` (one line), or ``None`` when it can: the reward
    must be a verifier reward over values (``gsm8k_accuracy``, ``math_accuracy`` or one built on
    their verifiers), whose verifier decides which answers are one vote.

    Example:
        >>> from referee.rewards import get_reward
        >>> grouping_problem(get_reward("math_accuracy")) is None
        True
        >>> grouping_problem(get_reward("code_pass_rate"))
        "reward code_pass_rate judges with the 'code' verifier, whose answers are not values to vote on"
    """
    verifier = getattr(reward, "verifier", None)
    name = getattr(reward, "__name__", type(reward).__name__)
    if not isinstance(verifier, str) or not isinstance(getattr(reward, "gold_columns", None), tuple):
        return f"reward {name} has no verifier to group answers by (a referee VerifierReward has one)"
    if verifier not in ANSWER_VERIFIERS:
        return f"reward {name} judges with the {verifier!r} verifier, whose answers are not values to vote on"
    return None


def group_samples(reward: Any, row: dict[str, Any], texts: Sequence[str]) -> AnswerPartition | None:
    """The samples of ``row`` grouped by equivalent answers, by ``reward``'s verifier and options,
    with the row's gold (its first gold column that has a value); ``None`` when the row has no gold.

    Example:
        >>> from referee.rewards import get_reward
        >>> partition = group_samples(get_reward("math_accuracy"), {"answer": "1/2"},
        ...                           [r"\\boxed{0.5}", r"\\boxed{\\frac{1}{2}}", r"\\boxed{2}"])
        >>> partition.labels, partition.correct_group
        ((0, 0, 1), 0)
    """
    gold = next((row[c] for c in reward.gold_columns if row.get(c) is not None), None)
    if gold is None:
        return None
    return partition_answers(list(texts), verifier=reward.verifier, gold=gold, timeout=GROUPING_TIMEOUT,
                             **reward.options)


def prompt_fields(record: dict[str, Any], ks: Sequence[int], reward: Any = None) -> dict[str, Any]:
    """``pass_at_k``, ``maj_at_k`` and ``answer_groups`` of one result row with its ``samples``.

    pass@k uses the row's scored samples (``num_samples``, ``num_correct``); a k above them is left
    out. maj@k needs ``reward`` (see :func:`grouping_problem`); samples the reward did not score
    are left out of the draws, and samples with no answer are drawn but cast no vote.

    Example:
        >>> from referee.rewards import get_reward
        >>> record = {"answer": "18", "num_samples": 3, "num_correct": 2, "samples": [
        ...     {"text": "#### 18", "passed": True}, {"text": "18.0 in all", "passed": True},
        ...     {"text": "#### 17", "passed": False}]}
        >>> fields = prompt_fields(record, [1, 2, 3], get_reward("gsm8k_accuracy"))
        >>> fields["pass_at_k"], fields["maj_at_k"]["3"], fields["answer_groups"]
        ({'1': 0.6667, '2': 1.0, '3': 1.0}, 1.0, [2, 1])
    """
    n, c = int(record.get("num_samples") or 0), int(record.get("num_correct") or 0)
    fields: dict[str, Any] = {
        "pass_at_k": {str(k): round(pass_at_k(n, c, k), 4) for k in ks if k <= n},
        "maj_at_k": {},
        "answer_groups": None,
    }
    samples = record.get("samples") or []
    if reward is None or not samples or n == 0:
        return fields
    partition = group_samples(reward, record, [str(sample.get("text", "")) for sample in samples])
    if partition is None:
        return fields
    scored = [j for j, sample in enumerate(samples) if sample.get("passed") is not None]
    seed = int(record.get("row_index") or 0)
    fields["maj_at_k"] = {str(k): round(majority_at_k(partition, scored, k, seed=seed), 4)
                          for k in ks if k <= len(scored)}
    fields["answer_groups"] = [len(group) for group in partition.groups]
    return fields


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize(records: Iterable[dict[str, Any]], ks: Sequence[int], *, seed: int = 0) -> dict[str, Any]:
    """The held-out metrics of result rows (each with :func:`prompt_fields`): the mean of each
    prompt's pass@k and maj@k over the prompts that have them, the bootstrap interval of pass@1
    over prompts, the mean completion length in tokens and the truncated share of the samples.

    Example:
        >>> rows = [{"num_samples": 2, "num_correct": 1, "pass_at_k": {"1": 0.5, "2": 1.0}, "maj_at_k": {"1": 0.5},
        ...          "samples": [{"tokens": 4, "truncated": False}, {"tokens": 8, "truncated": True}]},
        ...         {"num_samples": 2, "num_correct": 0, "pass_at_k": {"1": 0.0, "2": 0.0}, "maj_at_k": {"1": 0.0},
        ...          "samples": [{"tokens": 6, "truncated": False}, {"tokens": 6, "truncated": False}]},
        ...         {"num_samples": 0, "num_correct": 0, "pass_at_k": {}, "maj_at_k": {}, "samples": []}]
        >>> summary = summarize(rows, [1, 2])
        >>> summary["pass@1"], summary["pass@2"], summary["maj@1"], summary["prompts_scored"], summary["mean_length"]
        (0.25, 0.5, 0.25, 2, 6.0)
        >>> summary["truncated_share"]
        0.25
    """
    rows = list(records)
    summary: dict[str, Any] = {"prompts": len(rows), "prompts_scored": sum(1 for r in rows if r.get("num_samples"))}
    for metric, field in (("pass", "pass_at_k"), ("maj", "maj_at_k")):
        for k in ks:
            values = [r[field][str(k)] for r in rows if str(k) in (r.get(field) or {})]
            if values:
                summary[f"{metric}@{k}"] = _mean(values)
    interval = bootstrap_interval([r["pass_at_k"]["1"] for r in rows if "1" in (r.get("pass_at_k") or {})], seed=seed)
    if interval is not None:
        summary["pass@1_ci_low"], summary["pass@1_ci_high"] = interval
    samples = [s for r in rows for s in r.get("samples") or []]
    lengths = [s["tokens"] for s in samples if isinstance(s.get("tokens"), int)]
    summary["mean_length"] = _mean(lengths)
    summary["truncated_share"] = _mean([float(bool(s.get("truncated"))) for s in samples])
    return summary

