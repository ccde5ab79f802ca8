"""``referee eval``: pass@k and maj@k of a model on held-out prompts, with the pre-filter's sampling and scoring."""

from __future__ import annotations

import argparse
from typing import Any

from referee.recipes.commands.prefilter import _check_paths, report_run, run_config
from referee.recipes.common.config_flags import add_flags

_DESCRIPTION = (
    "Sample N completions per prompt of DATA with MODEL (-k N), score them with strict correctness rewards "
    "(--reward; no format or length shaping), and report pass@k (the unbiased estimator 1 - C(n-c, k) / C(n, k)), "
    "maj@k (the majority answer, with answers grouped by the verifier's own equivalence, so 0.5 and \\frac{1}{2} "
    "are one vote), a bootstrap interval for pass@1, the mean completion length and the truncated share. "
    "Writes all.jsonl (the pre-filter's per-prompt rows with samples, plus pass_at_k and maj_at_k), report.json "
    "and eval.png to --out; finished chunks are saved, so the same command resumes a stopped run. Shards "
    "(--shard-index/--num-shards) are combined with --merge. Exits 3 when a reward read no answer in 90% or more "
    "of the completions, or when no row is solved and the reward pays almost none of the samples given the right "
    "answer in place of the model's own (the model never writes what it reads)."
)


def add_parser(subparsers: Any) -> None:
    """Add ``eval`` to the ``referee`` subcommands.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_parser(parser.add_subparsers())
        >>> args = parser.parse_args(["eval", "--model", "m", "--data", "d.jsonl", "-k", "8", "--out", "o"])
        >>> args.num_generations, args.ks
        (8, None)
    """
    from referee.recipes.heldout import EvalConfig

    parser = subparsers.add_parser("eval", help="pass@k and maj@k of a model on held-out prompts",
                                   description=_DESCRIPTION)
    groups = add_flags(parser, EvalConfig)
    groups["long runs and output"].add_argument(
        "--merge", nargs="+", metavar="SHARD_DIR",
        help="merge the --out folders of finished shard runs into --out (no generation)")
    parser.set_defaults(run=run_command)


def summary_lines(report: dict[str, Any], out: str) -> list[str]:
    """The printed summary of a finished evaluation: one row per k, then lengths and files.

    Example:
        >>> report = {"rows": 10, "rows_scored": 9, "rows_with_errors": 1, "ks": [1, 4],
        ...           "metrics": {"pass@1": 0.4, "pass@4": 0.7, "maj@1": 0.4, "maj@4": 0.5, "pass@1_ci_low": 0.2,
        ...                       "pass@1_ci_high": 0.6, "mean_length": 41.5, "truncated_share": 0.05},
        ...           "maj_at_k": {"grouped_by": "math_accuracy", "problem": None}}
        >>> print("\\n".join(summary_lines(report, "out")))
        prompts           10 (9 scored, 1 with errors)
        k       pass@k   maj@k
        1        0.400   0.400   (pass@1 95% interval 0.200-0.600)
        4        0.700   0.500
        length            41.5 tokens on average, 5.0% truncated
        results           out/all.jsonl, out/report.json, out/eval.png
    """
    metrics = report["metrics"]

    def cell(name: str) -> str:
        value = metrics.get(name)
        return f"{'n/a':>7}" if value is None else f"{value:7.3f}"

    lines = [f"{'prompts':<17} {report['rows']} ({report['rows_scored']} scored, {report['rows_with_errors']} with "
             "errors)", f"{'k':<5} {'pass@k':>8} {'maj@k':>7}"]
    for k in report["ks"]:
        line = f"{k:<5} {cell(f'pass@{k}'):>8} {cell(f'maj@{k}')}"
        if k == 1 and "pass@1_ci_low" in metrics:
            line += f"   (pass@1 95% interval {metrics['pass@1_ci_low']:.3f}-{metrics['pass@1_ci_high']:.3f})"
        lines.append(line)
    if report["maj_at_k"]["problem"]:
        lines.append(f"{'maj@k':<17} n/a: {report['maj_at_k']['problem']}")
    length, truncated = metrics.get("mean_length"), metrics.get("truncated_share")
    if length is not None:
        lines.append(f"{'length':<17} {length:.1f} tokens on average, {truncated:.1%} truncated")
    lines.append(f"{'results':<17} {out}/all.jsonl, {out}/report.json, {out}/eval.png")
    return lines


def run_command(args: argparse.Namespace) -> int:
    """Run (or merge) the evaluation ``args`` describe; 0 on success, 2 for a user error, 3 when the reward
    read no answer in almost every completion, 130 after Ctrl-C.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_parser(parser.add_subparsers())
        >>> run_command(parser.parse_args(["eval", "--out", "runs/x", "--merge", "no/such/shard"]))
        2
    """
    from referee.recipes.heldout import EvalConfig, merge_evals, run_eval

    def work() -> dict[str, Any]:
        if args.merge:
            _check_paths(args)
            return merge_evals(args.merge, args.out, ks=args.ks)
        config = run_config(EvalConfig, args)
        _check_paths(args)
        return run_eval(config)

    return report_run("eval", args.out, work, summary_lines)
