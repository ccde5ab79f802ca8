"""``referee score``: judge a JSONL file of completions with one verifier."""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Iterator
from typing import Any, TextIO

from tqdm import tqdm

from referee.recipes.commands._io import AtomicOutput, same_file
from referee.rewards.completions import completion_text
from referee.rewards.jsonl import jsonl_rows
from referee.verifiers import STATUSES, VERIFIER_NAMES, Verdict, get_verifier
from referee.verifiers.registry import default_gold_field

_LINE_PREFIX_RE = re.compile(r"^line \d+: ")
_ERROR_REASONS = 1000  # distinct error reasons counted (for the message of a run that is all errors)
_CHUNK = 256  # lines judged per verify_batch call: lets parallel verifiers use their workers


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "score",
        help="judge a JSONL file of completions with one verifier",
        description=(
            "Judge every line of IN.jsonl (a JSON object with a completion and a gold field) with "
            "VERIFIER. Writes one verdict per input line, in order, to OUT.jsonl (or standard "
            "output), and prints a summary: counts by status and accuracy. A bad line is "
            "reported by its number and scored as 'error'; the run goes on."
        ),
    )
    parser.add_argument("verifier", choices=VERIFIER_NAMES, help="which verifier judges the completions")
    parser.add_argument("input", metavar="IN.jsonl", help="JSONL file, one object per line")
    parser.add_argument("-o", "--output", metavar="OUT.jsonl",
                        help="where to write the verdicts (default: standard output, summary on standard error)")
    parser.add_argument("--completion-field", default="completion", metavar="F",
                        help="field holding the completion, text or chat messages (default: completion)")
    parser.add_argument("--gold-field", default=None, metavar="F",
                        help="field holding the gold (default: the verifier's, e.g. 'answer' for gsm8k)")
    parser.add_argument("-O", "--option", action="append", default=[], metavar="KEY=VALUE",
                        help="verifier option, VALUE read as JSON when it parses (e.g. -O mode=strict -O abs_tol=0.01)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--ray", metavar="ADDRESS", default=None,
                        help="judge on a Ray cluster (needs the 'ray' extra): chunks of lines spread over the "
                             "nodes, each judged by its node's verifier host; ADDRESS is the cluster's "
                             "(auto: the running one, local: start one here)")
    parser.set_defaults(run=run)


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """``["mode=strict", "abs_tol=0.5"]`` -> ``{"mode": "strict", "abs_tol": 0.5}``.

    Example:
        >>> parse_options(["mode=strict", "abs_tol=0.5"])
        {'mode': 'strict', 'abs_tol': 0.5}
    """
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"Verifier option {pair!r} is not KEY=VALUE; write it like -O mode=strict.")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


_Pending = tuple[int, Any, Any, "Verdict | None"]


def _read_rows(stream: TextIO, completion_field: str, gold_field: str) -> Iterator[_Pending]:
    """(line number, completion, gold, None) per row, or (line number, None, None, error Verdict)."""
    for number, row in jsonl_rows(stream):
        if isinstance(row, str):
            yield number, None, None, Verdict("error", reason=f"line {number}: {row}")
            continue
        missing = [f for f in (completion_field, gold_field) if f not in row]
        if missing:
            yield number, None, None, Verdict("error", reason=f"line {number}: no field {', '.join(map(repr, missing))}")
            continue
        text = completion_text(row[completion_field])
        if text is None:
            yield number, None, None, Verdict(
                "error", reason=f"line {number}: field {completion_field!r} is not text or chat messages")
            continue
        yield number, text, row[gold_field], None


def _judge(verifier: Any, pending: list[_Pending], options: dict[str, Any]) -> list[Verdict]:
    return _merge(pending, verifier.verify_batch(*_todo(pending), **options))


def _todo(pending: list[_Pending]) -> tuple[list[Any], list[Any]]:
    """The completions and golds of the rows read without an error."""
    todo = [row for row in pending if row[3] is None]
    return [row[1] for row in todo], [row[2] for row in todo]


def _merge(pending: list[_Pending], judged: list[Verdict]) -> list[Verdict]:
    verdicts = [verdict for _, _, _, verdict in pending]
    for i, verdict in zip([i for i, row in enumerate(pending) if row[3] is None], judged):
        verdicts[i] = verdict
    return verdicts  # type: ignore[return-value]


def _judged_chunks(args: argparse.Namespace, verifier: Any, rows: Iterator[_Pending],
                   options: dict[str, Any]) -> Iterator[tuple[list[_Pending], list[Verdict]]]:
    """Chunks of rows and their Verdicts, in order: here, or spread over a Ray cluster's hosts."""
    chunks = iter(lambda: [row for _, row in zip(range(_CHUNK), rows)], [])
    if not getattr(args, "ray", None):
        for chunk in chunks:
            yield chunk, _judge(verifier, chunk, options)
        return
    from referee.verifiers.ray_host import spread_batches

    kept: list[list[_Pending]] = []

    def batches() -> Iterator[tuple[list[Any], list[Any]]]:
        for chunk in chunks:
            kept.append(chunk)
            yield _todo(chunk)

    for judged in spread_batches(args.verifier, batches(), options):
        chunk = kept.pop(0)
        yield chunk, _merge(chunk, judged)


def summary_lines(counts: Counter[str], total: int, score_sum: float) -> list[str]:
    """The printed summary: counts by status, then accuracy and mean score over the lines
    that were judged (``error`` lines, the input's or the verifier's fault, are left out and
    counted apart).

    Example:
        >>> print("\\n".join(summary_lines(Counter(correct=3, wrong=1, error=1), 5, 3.0)))
        lines      5
        correct    3
        wrong      1
        no_answer  0
        timeout    0
        error      1
        judged     4 (error lines are left out of accuracy and mean score)
        accuracy   0.7500
        mean score 0.7500
    """
    lines = [f"{'lines':<10} {total}"] + [f"{status:<10} {counts.get(status, 0)}" for status in STATUSES]
    judged = total - counts.get("error", 0)
    lines.append(f"{'judged':<10} {judged} (error lines are left out of accuracy and mean score)")
    accuracy = counts.get("correct", 0) / judged if judged else 0.0
    mean = score_sum / judged if judged else 0.0
    return lines + [f"{'accuracy':<10} {accuracy:.4f}", f"{'mean score':<10} {mean:.4f}"]


def _option_problem(verifier_name: str, options: dict[str, Any]) -> str | None:
    from referee.rewards.verdict_rewards import verifier_option_problem

    return verifier_option_problem(verifier_name, options)


def run(args: argparse.Namespace) -> int:
    """Score ``args.input``; 0 when done, 1 when every line is an ``error``, 2 for unusable
    arguments (one line on standard error).

    Example:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "in.jsonl")
        >>> _ = open(path, "w").write('{"completion": "#### 3", "answer": 3}\\n')
        >>> from referee.recipes.cli import build_parser
        >>> run(build_parser().parse_args(["score", "gsm8k", path, "-o", path]))
        2
    """
    output = None
    try:
        options = parse_options(args.option)
        verifier = get_verifier(args.verifier)
        try:
            inspect.signature(verifier.verify).bind("", "", **options)
        except TypeError as exc:
            raise ValueError(f"bad option for the {args.verifier} verifier ({exc})") from None
        problem = _option_problem(args.verifier, options)
        if problem:
            raise ValueError(f"bad option for the {args.verifier} verifier: {problem}")
        if args.output and os.path.exists(args.input) and same_file(args.input, args.output):
            raise ValueError(f"-o {args.output} is the input file; write the verdicts to another file.")
        if os.path.isdir(args.input):
            raise ValueError(f"{args.input} is a folder; give a JSONL file.")
        if getattr(args, "ray", None):
            from referee.verifiers.ray_host import connect

            connect(args.ray)
        source = open(args.input, encoding="utf-8", errors="replace")
        if args.output:
            try:
                output = AtomicOutput(args.output)
            except OSError:
                source.close()
                raise
    except (ValueError, OSError, ImportError) as exc:  # ConnectionError is an OSError
        print(f"referee score: {exc}", file=sys.stderr)
        return 2
    gold_field = args.gold_field or default_gold_field(args.verifier)
    sink = output.handle if output else sys.stdout
    report = sys.stdout if output else sys.stderr
    counts: Counter[str] = Counter()
    errors: Counter[str] = Counter()  # error reasons, without their line numbers
    score_sum, judged = 0.0, 0
    try:
        with source, tqdm(desc=f"scoring ({args.verifier})", unit=" lines", disable=args.no_progress,
                          file=sys.stderr) as progress:
            rows = _read_rows(source, args.completion_field, gold_field)
            for chunk, verdicts in _judged_chunks(args, verifier, rows, options):
                for (line, _, _, _), verdict in zip(chunk, verdicts):
                    judged += 1
                    counts[verdict.status] += 1
                    if verdict.status == "error":
                        reason = _LINE_PREFIX_RE.sub("", verdict.reason)
                        if reason in errors or len(errors) < _ERROR_REASONS:
                            errors[reason] += 1
                    else:
                        score_sum += verdict.score
                    sink.write(json.dumps({"line": line, **verdict.to_dict()}, ensure_ascii=False) + "\n")
                progress.update(len(chunk))
        if output:
            output.commit()
    except BaseException:
        if output:
            output.discard()  # a failed run leaves the output file as it was
        raise
    print("\n".join(summary_lines(counts, judged, score_sum)), file=report)
    if judged and counts["error"] == judged:
        reason, seen = errors.most_common(1)[0] if errors else ("", 0)
        print(f"referee score: every line of {args.input} is an error ({seen} of {judged}: {reason}); check "
              f"--completion-field/--gold-field and the file.", file=sys.stderr)
        return 1
    return 0
