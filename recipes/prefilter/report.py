"""The run's summary: counts, the pass-rate histogram, and the predicted wasted groups.

A GRPO group whose G samples all score the same gives no gradient. With per-sample success
p, a share ``p**G + (1-p)**G`` of groups is degenerate; the report predicts the mean of that
share over the prompts at the training group size, before and after filtering, using each
prompt's measured pass rate as its p.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from referee.recipes.plan import degenerate_group_share

from .bounds import KeepBounds
from .store import atomic_output

_NUMBER_RE = re.compile(r"\d[\d,]*")
_ERROR_EXAMPLES = 20  # rows with errors listed in the report (all of them are in all.jsonl)


def degenerate_share(pass_rates: Sequence[float], group_size: int) -> float | None:
    """The expected share of groups of ``group_size`` samples that all pass or all fail.

    Example:
        >>> round(degenerate_share([0.9], 8), 3)
        0.43
        >>> degenerate_share([0.0, 1.0, 0.5], 2)
        0.8333333333333334
        >>> degenerate_share([], 8) is None
        True
    """
    if group_size < 1:
        raise ValueError(f"Group size {group_size} must be at least 1.")
    if not pass_rates:
        return None
    return sum(degenerate_group_share(p, group_size) for p in pass_rates) / len(pass_rates)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def build_report(records: Iterable[dict[str, Any]], *, keep: KeepBounds, group_size: int,
                 run: dict[str, Any], timing: dict[str, float] | None = None,
                 reward_metrics: dict[str, list[float]] | None = None) -> dict[str, Any]:
    """Summarise the rows of ``all.jsonl`` (``records``) for ``report.json``.

    ``run`` is the run description (model, data, rewards, sampling) copied into the report;
    ``timing`` the summed ``generate_s`` / ``score_s`` seconds; ``reward_metrics`` what the
    rewards logged through ``log_metric`` (averaged here, as TRL does).

    Example:
        >>> rows = [{"row_index": 0, "pass_rate": 0.5, "num_correct": 1, "num_samples": 2, "num_unscored": 0,
        ...          "reward_means": {"r": 0.5}, "errors": []},
        ...         {"row_index": 1, "pass_rate": None, "num_correct": 0, "num_samples": 0, "num_unscored": 2,
        ...          "reward_means": {"r": None}, "errors": ["gold is not a number"]}]
        >>> report = build_report(rows, keep=KeepBounds(0.5, 0.5), group_size=2, run={})
        >>> report["rows"], report["kept"], report["rows_unscored"], report["degenerate_groups"]["after"]
        (2, 1, 1, 0.5)
        >>> report["errors"]["unscored_reasons"]  # why rows got no pass rate, most common first
        [{'reason': 'gold is not a number', 'rows': 1}]
    """
    total = kept = unscored_rows = 0
    rates: list[float] = []
    kept_rates: list[float] = []
    samples = Counter()
    reward_sums: dict[str, list[float]] = {}
    error_rows: list[dict[str, Any]] = []
    error_count = 0
    reasons: Counter[str] = Counter()  # each unscored row's first error, its numbers left out
    examples: dict[str, str] = {}
    for record in records:
        total += 1
        rate = record.get("pass_rate")
        samples["scored"] += record.get("num_samples", 0)
        samples["unscored"] += record.get("num_unscored", 0)
        samples["passed"] += record.get("num_correct", 0)
        for name, value in (record.get("reward_means") or {}).items():
            if value is not None:
                reward_sums.setdefault(name, []).append(value)
        if record.get("errors"):
            error_count += 1
            if len(error_rows) < _ERROR_EXAMPLES:
                error_rows.append({"row_index": record.get("row_index"), "errors": record["errors"]})
        if rate is None:
            unscored_rows += 1
            if record.get("errors"):
                first = str(record["errors"][0])
                key = _NUMBER_RE.sub("N", first)
                reasons[key] += 1
                examples.setdefault(key, first)
            continue
        rates.append(rate)
        if keep.contains(rate):
            kept += 1
            kept_rates.append(rate)
    histogram = Counter(rates)
    return {
        **run,
        "rows": total,
        "rows_scored": len(rates),
        "rows_unscored": unscored_rows,
        "rows_with_errors": error_count,
        "kept": kept,
        "dropped": total - kept,
        "keep": {"low": keep.low, "high": keep.high, "inclusive": True},
        "samples": {"scored": samples["scored"], "unscored": samples["unscored"], "passed": samples["passed"]},
        "mean_pass_rate": {"before": _mean(rates), "after": _mean(kept_rates)},
        "pass_rate_histogram": [
            {"pass_rate": rate, "rows": histogram[rate], "kept": keep.contains(rate)} for rate in sorted(histogram)
        ],
        "degenerate_groups": {
            "group_size": group_size,
            "before": degenerate_share(rates, group_size),
            "after": degenerate_share(kept_rates, group_size),
        },
        "reward_means": {name: _mean(values) for name, values in reward_sums.items()},
        "reward_metrics": {name: _mean(values) for name, values in sorted((reward_metrics or {}).items())},
        "timing": dict(timing or {}),
        "errors": {"rows": error_count, "first": error_rows,
                   "unscored_reasons": [{"reason": examples[key], "rows": count}
                                        for key, count in reasons.most_common(_ERROR_EXAMPLES)]},
    }


def plot_histogram(report: dict[str, Any], path: str | Path) -> None:
    """Draw the report's pass-rate histogram (kept bars green, the keep band shaded) as a PNG.

    Example:
        >>> import os, tempfile
        >>> report = build_report([{"pass_rate": 0.25}, {"pass_rate": 1.0}], keep=KeepBounds(0.1, 0.9),
        ...                       group_size=4, run={})
        >>> path = os.path.join(tempfile.mkdtemp(), "hist.png")
        >>> plot_histogram(report, path)
        >>> open(path, "rb").read(4) == b"\\x89PNG"
        True
    """
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    bars = report["pass_rate_histogram"]
    rates = [bar["pass_rate"] for bar in bars]
    gaps = [b - a for a, b in zip(rates, rates[1:])]
    width = 0.8 * min(gaps + [0.1])
    figure = Figure(figsize=(7, 4), dpi=110)
    axes = figure.add_subplot()
    keep = report["keep"]
    axes.axvspan(keep["low"] - width / 2, keep["high"] + width / 2, color="tab:green", alpha=0.08)
    axes.bar(rates, [bar["rows"] for bar in bars], width=width,
             color=["tab:green" if bar["kept"] else "tab:gray" for bar in bars])
    axes.set_xlim(-0.06, 1.06)
    axes.set_ylim(0, 1.3 * max([bar["rows"] for bar in bars] + [1]))
    axes.set_xlabel("pass rate (share of a prompt's samples that pass)")
    axes.set_ylabel("prompts")
    unscored = f", {report['rows_unscored']} without a pass rate" if report["rows_unscored"] else ""
    axes.set_title(f"{report['rows']} prompts{unscored}: {report['kept']} kept "
                   f"(pass rate in [{keep['low']:g}, {keep['high']:g}])", fontsize=11)
    degenerate = report["degenerate_groups"]
    if degenerate["before"] is not None:
        after = "n/a" if degenerate["after"] is None else f"{degenerate['after']:.0%}"
        axes.text(0.02, 0.96, f"predicted degenerate groups at G={degenerate['group_size']}: "
                              f"{degenerate['before']:.0%} before, {after} after filtering",
                  transform=axes.transAxes, ha="left", va="top", fontsize=9)
    axes.legend(handles=[Patch(color="tab:green", label="kept"), Patch(color="tab:gray", label="dropped")],
                loc="upper right", fontsize=9)
    figure.tight_layout()
    with atomic_output(path, "wb") as handle:
        figure.savefig(handle, format="png")
