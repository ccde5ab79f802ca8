"""The GSM8K verifier on labelled completions: referee beside math-verify and TRL, in one run.

The data is one or more JSONL files of ``completion``, ``gold``, ``label`` (the probe sets of
``benchmarks/probes/``, a real-completion set). Only the GSM8K rows are judged: with
``--questions GSM8K.jsonl`` the rows whose ``question`` is one of that file's questions, else
the rows whose gold is a single number the GSM8K verifier reads. Every checker judges every row:

* ``referee gsm8k``: ``referee.verifiers.gsm8k.verify`` with its defaults (``mode="auto"``);
* ``math-verify``: ``verify(parse("\\boxed{gold}"), parse(completion))``;
* ``TRL accuracy_reward``: ``trl.rewards.accuracy_reward`` with the gold as the dataset has it.

It prints, per set, rows, right rows, accuracy, precision and recall of "correct", the false
accepts and the misses, then referee's disagreements with the labels.

    python -m benchmarks.gsm8k_labelled --data benchmarks/probes/adversarial.jsonl \\
        --questions ../shared/data/gsm8k_test.jsonl [--data ...] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from benchmarks.math import math_verify_checker, trl_checker
from benchmarks.math_real import score
from referee.verifiers import gsm8k
from referee.verifiers.verdict import UnusableGold

logging.disable(logging.WARNING)  # math-verify logs every parse failure


def gsm8k_rows(path: str, questions: set[str] | None) -> list[dict]:
    """The rows of ``path`` that are GSM8K problems (see the module's docstring)."""
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    if questions is not None:
        return [row for row in rows if str(row.get("question", "")).strip() in questions]
    kept = []
    for row in rows:
        try:
            gsm8k.gold_value(str(row["gold"]))
        except UnusableGold:
            continue
        kept.append(row)
    return kept


def judge(rows: list[dict]) -> list[dict]:
    """Each checker's score on ``rows``, and referee's disagreements with the labels."""
    completions, golds = [row["completion"] for row in rows], [str(row["gold"]) for row in rows]
    verdicts = [gsm8k.verify(completion, gold) for completion, gold in zip(completions, golds)]
    results = [score("referee gsm8k", [v.correct for v in verdicts], rows, 0.0),
               score("math-verify (gold in \\boxed{})", math_verify_checker(boxed_gold=True)(completions, golds), rows, 0.0),
               score("TRL accuracy_reward", trl_checker(completions, golds), rows, 0.0)]
    results[0]["disagreements"] = [{"id": row.get("id"), "label": bool(row["label"]), "status": v.status, "reason": v.reason}
                                   for row, v in zip(rows, verdicts) if v.correct != bool(row["label"])]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", action="append", required=True, help="JSONL of labelled completions (repeatable)")
    parser.add_argument("--questions", help="GSM8K JSONL whose questions pick the rows (default: rows with a number gold)")
    parser.add_argument("--json", default="benchmarks/results/gsm8k_labelled.json", help="where to write the results")
    args = parser.parse_args()
    questions = None
    if args.questions:
        lines = Path(args.questions).read_text(encoding="utf-8").splitlines()
        questions = {json.loads(line)["question"].strip() for line in lines if line.strip()}
    report = {}
    print("| set (rows, right) | checker | accuracy | precision | recall | false accepts | misses |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for path in args.data:
        rows = gsm8k_rows(path, questions)
        if not rows:
            print(f"| `{Path(path).stem}` | no GSM8K rows | | | | | |")
            continue
        results = judge(rows)
        report[Path(path).name] = results
        right = sum(bool(row["label"]) for row in rows)
        for result in results:
            print(f"| `{Path(path).stem}` ({len(rows)}, {right}) | {result['checker']} | {result['accuracy']:.3f} | "
                  f"{result['precision']:.3f} | {result['recall']:.3f} | {result['false_positives']} | "
                  f"{result['false_negatives']} |")
    for name, results in report.items():
        for item in results[0]["disagreements"]:
            print(f"{name}: {item['id']} label={item['label']} {item['status']}: {item['reason'][:110]}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
