"""Verdicts case by case: dump what the verifiers say on labelled sets, or compare two dumps.

A refactoring of a verifier must not change a single verdict. ``dump`` runs the maths verifier
(``referee.verifiers.math.verify_batch``, defaults) on every row of every set it is given, and the
GSM8K verifier (``referee.verifiers.gsm8k.verify``, ``mode="auto"``) on the GSM8K-shaped ones, and
writes each verdict's ``status``, ``score``, ``extracted`` and ``reason`` to one JSON file beside the
row's completion and gold. ``compare`` reads two such files and prints, per set, how many cases
agree and every case that differs (exit 1 when one does, 2 when the sets themselves differ).

Sets are given by path:

* ``--labelled PATH``: a JSONL of ``completion``, ``gold`` (a real-completion set such as
  ``real_completions_dev.jsonl`` or a file of ``benchmarks/probes/``); GSM8K-shaped when its name
  contains ``gsm8k``;
* ``--math500 PATH``: MATH-500 rows, turned into golden cases by ``benchmarks.math.build_cases``;
* ``--gsm8k PATH``: GSM8K rows, turned into golden cases by ``benchmarks.gsm8k.build_cases``.

The cases a builder makes are written into the dump, and ``--cases-from DUMP`` replays them, so
an ``after`` run judges the very completions the ``before`` run judged even if the builders moved::

    python -m benchmarks.compare_verdicts dump --out /tmp/before.json \\
        --labelled ../shared/data/real_completions_dev.jsonl --labelled benchmarks/probes/math.jsonl \\
        --math500 ../shared/data/math500_test.jsonl --gsm8k ../shared/data/gsm8k_test.jsonl
    python -m benchmarks.compare_verdicts dump --out /tmp/after.json --cases-from /tmp/before.json
    python -m benchmarks.compare_verdicts compare /tmp/before.json /tmp/after.json
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

logging.disable(logging.WARNING)

FIELDS = ("status", "score", "extracted", "reason")


def _jsonl(path: str) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def _labelled_cases(path: str) -> list[dict]:
    return [{"completion": row["completion"], "gold": str(row["gold"])} for row in _jsonl(path)]


def _built_cases(kind: str, path: str) -> list[dict]:
    if kind == "math500":
        from benchmarks.math import build_cases
    else:
        from benchmarks.gsm8k import build_cases
    return [{"completion": case["completion"], "gold": case["gold"]} for case in build_cases(_jsonl(path))]


def _record(verdict: Any) -> dict:
    return {field: getattr(verdict, field) for field in FIELDS}


def judge(cases: list[dict], gsm8k_shaped: bool) -> dict[str, list[dict]]:
    """The verdicts of every verifier that reads this set, one record per case."""
    from referee.verifiers import gsm8k
    from referee.verifiers import math as referee_math

    completions, golds = [c["completion"] for c in cases], [c["gold"] for c in cases]
    out = {"math": [_record(v) for v in referee_math.verify_batch(completions, golds)]}
    if gsm8k_shaped:
        out["gsm8k"] = [_record(gsm8k.verify(c, g)) for c, g in zip(completions, golds)]
    return out


def dump(args: argparse.Namespace) -> None:
    sets: dict[str, dict] = {}
    if args.cases_from:
        for name, entry in json.loads(Path(args.cases_from).read_text()).items():
            sets[name] = {"cases": entry["cases"], "gsm8k_shaped": entry["gsm8k_shaped"]}
    for path in args.labelled:
        sets[Path(path).name] = {"cases": _labelled_cases(path), "gsm8k_shaped": "gsm8k" in Path(path).name}
    for kind in ("math500", "gsm8k"):
        for path in getattr(args, kind):
            sets[f"{kind}:{Path(path).name}"] = {"cases": _built_cases(kind, path), "gsm8k_shaped": kind == "gsm8k"}
    for name, entry in sets.items():
        entry["verdicts"] = judge(entry["cases"], entry["gsm8k_shaped"])
        print(f"{name}: {len(entry['cases'])} cases judged by {', '.join(entry['verdicts'])}", flush=True)
    Path(args.out).write_text(json.dumps(sets))


def compare(args: argparse.Namespace) -> int:
    before, after = (json.loads(Path(p).read_text()) for p in (args.before, args.after))
    if set(before) != set(after):
        print(f"the dumps hold different sets: {sorted(set(before) ^ set(after))}")
        return 2
    differing = 0
    for name, entry in before.items():
        other = after[name]
        if entry["cases"] != other["cases"]:
            print(f"{name}: the cases themselves differ; dump the second run with --cases-from")
            return 2
        for verifier, records in entry["verdicts"].items():
            changed = [i for i, (a, b) in enumerate(zip(records, other["verdicts"][verifier])) if a != b]
            print(f"{name} [{verifier}]: {len(records) - len(changed)} of {len(records)} identical, {len(changed)} differ")
            for i in changed[: args.show]:
                print(f"  case {i}: {records[i]}\n       -> {other['verdicts'][verifier][i]}")
            differing += len(changed)
    return 1 if differing else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("dump", help="judge every case and write the verdicts to --out")
    run.add_argument("--out", required=True, help="JSON file to write")
    run.add_argument("--labelled", action="append", default=[], help="JSONL of completion, gold (repeatable)")
    run.add_argument("--math500", action="append", default=[], help="MATH-500 JSONL (repeatable)")
    run.add_argument("--gsm8k", action="append", default=[], help="GSM8K JSONL (repeatable)")
    run.add_argument("--cases-from", help="an earlier dump whose cases are judged again")
    check = commands.add_parser("compare", help="compare two dumps case by case")
    check.add_argument("before")
    check.add_argument("after")
    check.add_argument("--show", type=int, default=20, help="differing cases printed per set")
    args = parser.parse_args()
    if args.command == "dump":
        dump(args)
    else:
        sys.exit(compare(args))


if __name__ == "__main__":
    main()
