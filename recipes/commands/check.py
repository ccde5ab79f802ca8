"""``referee check``: score a golden file with a reward and list every case it gets wrong."""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
from typing import Any

from referee.recipes.commands._io import load_reward
from referee.recipes.commands.score import parse_options
from referee.rewards.golden import GoldenResult, check_columns, check_golden, excerpt, load_golden

REWARD_HELP = ("a built-in reward (gsm8k_accuracy, think_format, ...), a module:attr path, "
                "or a weighted sum such as 'gsm8k_accuracy + 0.2*gsm8k_format'")


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check",
        help="check a reward against golden cases",
        description=(
            "Score every line of GOLDEN.jsonl (a JSON object with 'completion', 'expected' and the "
            "dataset columns the reward reads, e.g. 'answer') with REWARD in one batch, as the trainer "
            "would. Prints every mismatch with the reward's reason. Exits 0 when all cases match, "
            "1 on any mismatch, 2 when the reward or the file cannot be used."
        ),
    )
    parser.add_argument("reward", metavar="REWARD", help=REWARD_HELP)
    parser.add_argument("golden", metavar="GOLDEN.jsonl", help="golden cases, one JSON object per line")
    parser.add_argument("-O", "--option", action="append", default=[], metavar="KEY=VALUE",
                        help="reward option, VALUE read as JSON when it parses (e.g. -O gold_column=final)")
    parser.add_argument("--tolerance", type=float, default=1e-6, help="largest accepted |got - expected| (default 1e-6)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.set_defaults(run=run)


def mismatch_table(mismatches: list[GoldenResult], width: int = 50) -> str:
    """The printed table of mismatches: line, expected, got, completion excerpt, reason.

    Example:
        >>> from referee.rewards.golden import GoldenCase
        >>> print(mismatch_table([GoldenResult(GoldenCase("#### 17", 1.0, line=3), 0.0, "17 is not 18")]))
        line  expected  got   completion  reason
        3     1         0     #### 17     17 is not 18
    """
    def number(value: float | None) -> str:
        return "None" if value is None else f"{value:g}"

    rows = [("line", "expected", "got", "completion", "reason")]
    rows += [(str(r.case.line), number(r.case.expected), number(r.got), excerpt(r.case.completion, width), r.reason)
             for r in mismatches]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths)) + "  " + row[4] for row in rows)


def run(args: argparse.Namespace) -> int:
    """Check ``args.reward`` on ``args.golden``: 0 when every case matches, 1 on a mismatch,
    2 when the reward, an option or the file cannot be used (one line on standard error).

    Example:
        >>> from referee.recipes.cli import build_parser
        >>> run(build_parser().parse_args(["check", "gsm8k_accuracy", "golden.jsonl", "--tolerance", "nan"]))
        2
    """
    try:
        if not 0 <= args.tolerance < math.inf:
            raise ValueError(f"--tolerance {args.tolerance} must be a finite number >= 0, e.g. --tolerance 1e-6.")
        reward = load_reward(args.reward, parse_options(args.option))
        if os.path.isdir(args.golden):
            raise ValueError(f"{args.golden} is a folder; give a JSONL file of golden cases.")
        cases = load_golden(args.golden)
        check_columns(reward, cases, args.golden)
    except (ValueError, OSError) as exc:
        print(f"referee check: {exc}", file=sys.stderr)
        return 2
    logging.getLogger("referee.rewards").setLevel(logging.ERROR)  # the table gives every reason
    results = check_golden(reward, cases)
    mismatches = [result for result in results if not result.ok(args.tolerance)]
    name = getattr(reward, "__name__", args.reward)
    if args.json:
        print(json.dumps({"reward": name, "cases": len(results), "mismatches": [m.to_dict() for m in mismatches],
                          "ok": not mismatches}, ensure_ascii=False))
    else:
        if mismatches:
            print(mismatch_table(mismatches))
        print(f"{name}: {len(results) - len(mismatches)} of {len(results)} golden cases match"
              + (f", {len(mismatches)} do not" if mismatches else ""))
    return 1 if mismatches else 0
