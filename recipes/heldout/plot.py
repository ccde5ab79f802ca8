"""The evaluation plot: pass@k and maj@k against k, and the per-prompt pass-rate histogram."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..prefilter.store import atomic_output


def plot_eval(report: dict[str, Any], path: str | Path) -> None:
    """Draw ``report``'s pass@k and maj@k curves (k on a log scale, pass@1's interval as a bar)
    beside its pass-rate histogram, as a PNG.

    Example:
        >>> import os, tempfile
        >>> report = {"ks": [1, 2, 4], "rows": 2, "metrics": {"pass@1": 0.3, "pass@2": 0.5, "pass@4": 0.6,
        ...           "maj@4": 0.4, "pass@1_ci_low": 0.1, "pass@1_ci_high": 0.5},
        ...           "pass_rate_histogram": [{"pass_rate": 0.25, "rows": 1}, {"pass_rate": 0.5, "rows": 1}]}
        >>> path = os.path.join(tempfile.mkdtemp(), "eval.png")
        >>> plot_eval(report, path)
        >>> open(path, "rb").read(4) == b"\\x89PNG"
        True
    """
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    metrics, ks = report["metrics"], report["ks"]
    figure = Figure(figsize=(10, 4), dpi=110)
    curves, histogram = figure.subplots(1, 2)
    for name, colour in (("pass", "tab:blue"), ("maj", "tab:orange")):
        points = [(k, metrics[f"{name}@{k}"]) for k in ks if f"{name}@{k}" in metrics]
        if points:
            curves.plot(*zip(*points), marker="o", color=colour, label=f"{name}@k")
    if "pass@1_ci_low" in metrics:
        low, high = metrics["pass@1_ci_low"], metrics["pass@1_ci_high"]
        curves.errorbar([1], [metrics["pass@1"]], yerr=[[metrics["pass@1"] - low], [high - metrics["pass@1"]]],
                        color="tab:blue", capsize=4)
    curves.set_xscale("log", base=2)
    curves.set_xticks(ks, [str(k) for k in ks])
    curves.set_ylim(0, 1.02)
    curves.set_xlabel("k (samples per prompt)")
    curves.set_ylabel("share of prompts")
    curves.set_title("pass@k (unbiased) and maj@k (answers grouped by value)", fontsize=10)
    curves.legend(loc="lower right", fontsize=9)
    bars = report["pass_rate_histogram"]
    rates = [bar["pass_rate"] for bar in bars]
    width = 0.8 * min([b - a for a, b in zip(rates, rates[1:])] + [0.1])
    histogram.bar(rates, [bar["rows"] for bar in bars], width=width, color="tab:gray")
    histogram.set_xlim(-0.06, 1.06)
    histogram.set_xlabel("pass rate (share of a prompt's samples that pass)")
    histogram.set_ylabel("prompts")
    histogram.set_title(f"{report['rows']} prompts", fontsize=10)
    figure.tight_layout()
    with atomic_output(path, "wb") as handle:
        figure.savefig(handle, format="png")
