"""``referee audit``: run reward-hacking probes built from a dataset against a reward."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from itertools import islice
from typing import Any

from referee.recipes.commands.check import REWARD_HELP
from referee.recipes.commands._io import load_reward
from referee.recipes.commands.score import parse_options
from referee.rewards.audit import AuditReport, audit_reward
from referee.rewards.jsonl import jsonl_rows, open_jsonl


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="probe a reward for ways to earn without solving the task",
        description=(
            "Build reward-hacking probes from each row of DATA.jsonl (dataset rows: the prompt and the "
            "gold columns the reward reads) and report, per probe, the share of rows where it earns more "
            "than a plain wrong answer and where it pays as much as a plain right one. Maths and GSM8K rows "
            "get answer probes; code rows (a tests column in a format of the code verifier), or any row "
            "when the reward runs the code verifier, get code probes (exit 0 before the tests, an "
            "always-equal object, a hard-coded output, a forged success marker, ...), judged against the "
            "row's gold solution (--solution-column) or, without one, the reward's maximum. Exits 1 when a "
            "probe fails (pays like right on more than --fail-share of the rows), 2 on unusable input."
        ),
    )
    parser.add_argument("reward", metavar="REWARD", help=REWARD_HELP)
    parser.add_argument("data", metavar="DATA.jsonl", help="dataset rows, one JSON object per line")
    parser.add_argument("-O", "--option", action="append", default=[], metavar="KEY=VALUE",
                        help="reward option (in a sum, scope it: -O gsm8k_accuracy.mode=strict)")
    parser.add_argument("--answer-column", default=None, metavar="C",
                        help="column to read the right answer from (default: the reward's gold column, else answer)")
    parser.add_argument("--solution-column", default=None, metavar="C",
                        help="code rows: column holding the gold solution, the right reference (default: "
                             "canonical_solution, else solution; without one, the reward's maximum)")
    parser.add_argument("--answer-template", default=None, metavar="T",
                        help="the answer format the reward reads, {answer} marking the place (e.g. 'FINAL: {answer}'): "
                             "every probe is also written in it (default: the reward's own answer_template, else the "
                             "formats the audit finds it reads)")
    parser.add_argument("--prompt-column", default="prompt", metavar="C", help="column holding the prompt (default: prompt)")
    parser.add_argument("--limit", type=int, default=500, metavar="N", help="audit the first N rows (default 500)")
    parser.add_argument("--fail-share", type=float, default=0.05, metavar="F",
                        help="a probe fails when it pays like right on more than this share of rows (default 0.05)")
    parser.add_argument("--tool-turns", action="store_true",
                        help="also probe conversations with a Python tool turn (training with a tool: "
                             "referee.rewards.tools.PythonTool): the right answer only in the tool's output or code, "
                             "a tool output that claims 'correct', a cell that prints the gold it found")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.set_defaults(run=run)


def _percent(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.0f}%"


def report_table(report: AuditReport) -> str:
    """The printed audit: row counts, then one line per probe, then advice for flagged probes.

    Example:
        >>> from referee.rewards import parse_reward_sum
        >>> from referee.rewards.audit import audit_reward
        >>> table = report_table(audit_reward(parse_reward_sum("gsm8k_accuracy + think_format"),
        ...                                   [{"prompt": "9 * 2?", "answer": "18"}]))
        >>> print(table.splitlines()[0])
        audit of gsm8k_accuracy + think_format: 1 rows, 1 with an answer to probe, 1 where the reward tells right from wrong
        >>> [line for line in table.splitlines() if line.startswith("tags_around_wrong ")]
        ['tags_around_wrong     100%   100%             FAIL     think and answer tags, a #### line and \\\\boxed{} around a wrong answer']
    """
    probed = "with tests to probe" if report.family == "code" else "with an answer to probe"
    lines = [f"audit of {report.reward}: {report.rows} rows, {report.usable} {probed}, "
             f"{report.separating} where the reward tells right from wrong", ""]
    if report.reference:
        lines[-1:-1] = [f"code probes; right answers: {report.reference}"]
    if report.family != "code" and report.formats:
        lines[-1:-1] = ["answer formats the reward reads (every probe is written in each): " + ", ".join(report.formats)]
    elif report.family != "code":
        lines[-1:-1] = [f"answer formats the reward reads: none found (tried {', '.join(report.tried)}); "
                        "no probe below could be judged against a right answer"]
    width = max(len(result.probe.name) for result in report.results)
    lines.append(f"{'probe':<{width}} {'earns':<6} {'pays like right':<16} {'verdict':<8} what it is")
    for result in report.results:
        lines.append(f"{result.probe.name:<{width}} {_percent(result.earns):<6} {_percent(result.pays_like_right):<16} "
                     f"{result.verdict.upper() if result.verdict in ('warn', 'fail') else result.verdict:<8} "
                     f"{result.probe.description}")
    flagged = [result for result in report.results if result.verdict in ("warn", "fail")]
    if flagged:
        lines.append("")
    for result in flagged:
        example = (result.example or "").replace("\n", "\\n")
        example = example if len(example) <= 80 else example[:79] + "…"
        meaning = result.probe.advice if result.verdict == "fail" else (
            f"earns {result.mean_gain:+.2g} on average over a plain wrong answer and pays like right on "
            f"{_percent(result.pays_like_right)} of rows: fine for a small shaping weight, a leak otherwise"
            if result.pays_like_right is not None else
            f"earns {result.mean_gain:+.2g} on average over a plain wrong answer; whether it pays like right could not "
            "be judged (the reward pays no right answer above a wrong one on these rows)")
        lines.append(f"{result.probe.name}: {meaning}. Example: {example}")
    unjudged = [result.probe.name for result in report.results if result.verdict == "n/a"]
    if len(unjudged) == len(report.results):
        lines.append(f"none of the {len(unjudged)} probes could be judged on these rows (all n/a): this audit is "
                     "not an all-clear.")
    elif unjudged:
        lines.append(f"{len(unjudged)} of {len(report.results)} probes could not be judged on these rows (n/a: "
                     f"{', '.join(unjudged)}); they are not an all-clear.")
    if report.usable and not report.scored:
        lines.append("note: the reward gave None for every plain answer; does the data have its gold column?")
    elif report.scored and not report.separating:
        lines.append("note: the reward never scores the right answer above a wrong one, so nothing can pay like right.")
    return "\n".join(lines)


def _read_rows(path: str, limit: int) -> list[dict[str, Any]]:
    rows = []
    with open_jsonl(path) as stream:
        for number, row in jsonl_rows(islice(stream, limit)):
            if isinstance(row, str):
                raise ValueError(f"{path} line {number}: {row}.")
            rows.append(row)
    return rows


def _no_answer_message(reward: Any, rows: list[dict[str, Any]], args: argparse.Namespace, family: str) -> str:
    """Why no row could be probed, and the option that points the reward at the data's gold column."""
    from referee.rewards.audit import gold_column_names
    from referee.rewards.code_probes import PROBE_LANGUAGES

    present = sorted({key for row in rows for key in row if key != args.prompt_column})
    if family == "code" and any(key in row for row in rows for key in gold_column_names(reward)):
        return (f"no row of {args.data} has code tests the probes are written for: tests in a language of "
                f"{', '.join(PROBE_LANGUAGES)} (C++: stdio or HumanEval-X humaneval rows) with a function name to "
                "call (entry_point, fn_name, or a function the asserts call).")
    if args.answer_column:
        return (f"no row of {args.data} has an answer in column {args.answer_column!r} to build probes from "
                f"(the rows have: {', '.join(present) or 'nothing'}).")
    wanted = " or ".join(repr(name) for name in gold_column_names(reward))
    fix = f"-O gold_column={present[0]}" if len(present) == 1 else "-O gold_column=COLUMN"
    return (f"no row of {args.data} has the reward's gold column {wanted} (the rows have: "
            f"{', '.join(present) or 'nothing'}); point the reward at the gold with {fix} "
            "(in a sum, -O REWARD.gold_column=...), and the audit reads it too.")


def run(args: argparse.Namespace) -> int:
    """Audit ``args.reward`` on ``args.data``: 0 when no probe fails, 1 when one does or when
    the reward cannot be judged on the data (it scores no plain answer, or never tells right
    from wrong), 2 for unusable arguments or input (one line on standard error).

    Example:
        >>> from referee.recipes.cli import build_parser
        >>> run(build_parser().parse_args(["audit", "gsm8k_accuracy", "data.jsonl", "--fail-share", "7"]))
        2
    """
    try:
        if not 0 <= args.fail_share <= 1:
            raise ValueError(f"--fail-share {args.fail_share} must be a share between 0 and 1, e.g. --fail-share 0.05.")
        if args.limit < 1:
            raise ValueError(f"--limit {args.limit} must be at least 1.")
        reward = load_reward(args.reward, parse_options(args.option))
        if os.path.isdir(args.data):
            raise ValueError(f"{args.data} is a folder; give a JSONL file of dataset rows.")
        rows = _read_rows(args.data, args.limit)
        if args.answer_template is not None and "{answer}" not in args.answer_template:
            raise ValueError(f"--answer-template {args.answer_template!r} has no {{answer}} to mark where the answer "
                             "goes, e.g. --answer-template 'FINAL: {answer}'.")
    except (ValueError, OSError) as exc:
        print(f"referee audit: {exc}", file=sys.stderr)
        return 2
    logging.getLogger("referee.rewards").setLevel(logging.ERROR)  # probes provoke errors on purpose
    report = audit_reward(reward, rows, answer_column=args.answer_column, prompt_column=args.prompt_column,
                          fail_share=args.fail_share, solution_column=args.solution_column,
                          answer_template=args.answer_template, tool_turns=args.tool_turns)
    if not report.usable:
        print(f"referee audit: {_no_answer_message(reward, rows, args, report.family)}", file=sys.stderr)
        return 2
    print(json.dumps(report.to_dict(), ensure_ascii=False) if args.json else report_table(report))
    if report.problem:
        print(f"referee audit: {report.problem}", file=sys.stderr)
        return 1
    return 1 if report.failed else 0
