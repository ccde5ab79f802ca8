"""Maths answer checking on labelled model completions: referee beside math-verify and TRL, in one run.

The data is a JSONL of completions with a correctness label each (``completion``, ``gold``,
``label``; ``id`` and ``generator`` when present): real ones such as the OlympiadBench part of
ProcessBench, or the imitation probe sets in ``benchmarks/probes/``. Every checker judges every completion
against the same gold:

* ``referee math``: ``referee.verifiers.math.verify_batch`` with its defaults;
* ``math-verify``: ``verify(parse("\\boxed{gold}"), parse(completion))``, the gold boxed as its
  README advises;
* ``TRL accuracy_reward``: ``trl.rewards.accuracy_reward`` with the gold as the dataset has it.

It prints accuracy, precision and recall against the labels, then referee's disagreements
with the labels grouped by kind (false or missed, which rule read the answer, how it was
compared), then, per rule of the hedge and override stage, the right answers it un-paid and the
hedges it rightly refused (:func:`rule_effects`), then throughput on the same completions in fresh processes: math-verify in one
process against referee with 1 and 2 workers, each from a cold start (the process's imports
and referee's worker pool start on the clock) and warm (see ``benchmarks.throughput``).

    python -m benchmarks.math_real --data ../shared/data/real_completions_dev.jsonl [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections import Counter
from pathlib import Path

from benchmarks.math import trl_checker
from benchmarks.throughput import math_verify_checker, print_throughput, throughput
from referee.verifiers import deadline_pool
from referee.verifiers import math as referee_math



def load(path: str) -> list[dict]:
    """The labelled rows, golds without their ``$`` delimiters (math-verify reads them boxed)."""
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    for index, row in enumerate(rows):
        row.setdefault("id", str(index))
        gold = str(row["gold"]).strip()
        row["bare_gold"] = gold.replace("$", "") if "\\$" not in gold else gold
    return rows


def score(name: str, predictions: list[bool | None], rows: list[dict], seconds: float) -> dict:
    """Accuracy, precision and recall of ``predictions`` against the rows' labels (no reward counts as 0)."""
    labels = [bool(row["label"]) for row in rows]
    tp = sum(1 for p, label in zip(predictions, labels) if p and label)
    fp = sum(1 for p, label in zip(predictions, labels) if p and not label)
    fn = sum(1 for p, label in zip(predictions, labels) if not p and label)
    return {"checker": name, "accuracy": (len(rows) - fp - fn) / len(rows), "precision": tp / max(1, tp + fp),
            "recall": tp / max(1, tp + fn), "no_reward": sum(p is None for p in predictions),
            "false_positives": fp, "false_negatives": fn, "seconds": seconds}


def disagreements(rows: list[dict], verdicts: list[referee_math.Verdict]) -> list[dict]:
    """Every row where referee's verdict and the label differ, with what referee read and why."""
    found = []
    for row, verdict in zip(rows, verdicts):
        if verdict.correct != bool(row["label"]):
            found.append({"id": row["id"], "label": bool(row["label"]), "status": verdict.status,
                          "kind": f"{'false correct' if verdict.correct else 'missed'}: "
                                  f"{verdict.details.get('source', verdict.status)} / {verdict.details.get('method', '-')}",
                          "extracted": verdict.extracted, "gold": row["gold"], "reason": verdict.reason,
                          "generator": row.get("generator")})
    return found


def rule_effects(rows: list[dict], verdicts: list[referee_math.Verdict]) -> list[dict]:
    """Per rule of the hedge and override stage: how often it made a verdict ``wrong``, and of those,
    how many answers the label calls right it un-paid, how many hedges it rightly refused (the
    label says wrong and the answer read, judged alone, would have been paid) and how many it
    refused that were wrong anyway. Each row's answer read is judged alone in one more batch."""
    fired = [(row, verdict) for row, verdict in zip(rows, verdicts) if verdict.details.get("method") == "policy"]
    alone = referee_math.verify_batch([verdict.extracted or "" for _, verdict in fired], [row["gold"] for row, _ in fired])
    table: dict[str, dict] = {}
    for (row, verdict), judged in zip(fired, alone):
        entry = table.setdefault(verdict.details["rule"], {"rule": verdict.details["rule"], "fired": 0, "right_unpaid": 0,
                                                           "hedges_refused": 0, "wrong_anyway": 0, "unpaid_ids": []})
        entry["fired"] += 1
        if row["label"]:
            entry["right_unpaid"] += 1
            entry["unpaid_ids"].append(row["id"])
        elif judged.correct:
            entry["hedges_refused"] += 1
        else:
            entry["wrong_anyway"] += 1
    return sorted(table.values(), key=lambda entry: -entry["fired"])


def print_rule_effects(table: list[dict]) -> None:
    """The per-rule table (:func:`rule_effects`), then the ids of the right answers each rule un-paid."""
    print("\nhedge and override rules on these rows (verdicts each made wrong):")
    print(f"  {'rule':18} {'fired':>5} {'right un-paid':>13} {'hedges refused':>14} {'wrong anyway':>12}")
    for entry in table:
        print(f"  {entry['rule']:18} {entry['fired']:5d} {entry['right_unpaid']:13d} {entry['hedges_refused']:14d} "
              f"{entry['wrong_anyway']:12d}")
    if not table:
        print("  (no rule fired)")
    for entry in table:
        for row_id in entry["unpaid_ids"]:
            print(f"  un-paid by {entry['rule']}: {row_id}")


def main() -> None:
    logging.disable(logging.WARNING)  # math-verify logs every parse failure; not at import (tests import it)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="JSONL of labelled completions (completion, gold, label)")
    parser.add_argument("--json", default="benchmarks/results/math_real.json", help="where to write the results")
    parser.add_argument("--repeats", type=int, default=3, help="timed repetitions per checker (median); 0 skips throughput")
    args = parser.parse_args()

    rows = load(args.data)
    completions = [row["completion"] for row in rows]
    print(f"{len(rows)} labelled completions ({args.data}), {sum(bool(r['label']) for r in rows)} labelled correct\n")

    results = []
    started = time.perf_counter()
    verdicts = referee_math.verify_batch(completions, [row["gold"] for row in rows])
    results.append(score("referee math", [None if v.status == "error" else v.correct for v in verdicts], rows,
                         time.perf_counter() - started))
    for name, check, golds in (("math-verify (gold in \\boxed{})", math_verify_checker(boxed_gold=True),
                                [row["bare_gold"] for row in rows]),
                               ("TRL accuracy_reward", trl_checker, [row["gold"] for row in rows])):
        started = time.perf_counter()
        results.append(score(name, check(completions, golds), rows, time.perf_counter() - started))
    print(f"{'checker':34} {'accuracy':>8} {'precision':>9} {'recall':>7} {'no reward':>9} {'false +':>7} {'missed':>6}")
    for r in results:
        print(f"{r['checker']:34} {r['accuracy']:8.4f} {r['precision']:9.4f} {r['recall']:7.4f} {r['no_reward']:9d} "
              f"{r['false_positives']:7d} {r['false_negatives']:6d}")

    found = disagreements(rows, verdicts)
    print(f"\nreferee against the labels: {len(found)} disagreements, by kind (rule that read the answer / comparison)")
    for kind, count in Counter(d["kind"] for d in found).most_common():
        print(f"  {count:4d}  {kind}")
    print("\nsources of referee's answers: " + ", ".join(
        f"{source} {count}" for source, count in Counter(v.details.get("source", v.status) for v in verdicts).most_common()))

    rules = rule_effects(rows, verdicts)
    print_rule_effects(rules)
    if args.repeats == 0:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"rows": len(rows), "accuracy": results, "rules": rules,
                                               "referee_disagreements": found}, indent=2))
        print(f"\nwrote {args.json} (no throughput: --repeats 0)")
        return
    batch_path = Path(args.json).with_suffix(".batch.json")
    batch_path.parent.mkdir(parents=True, exist_ok=True)
    batch_path.write_text(json.dumps([{"completion": row["completion"], "gold": row["bare_gold"]} for row in rows]))
    speed = throughput(str(batch_path), len(rows), args.repeats)
    print(f"\nthroughput on these {len(rows)} completions, fresh processes, median of {args.repeats} "
          f"({deadline_pool.default_workers()} cores; x math-verify: against math-verify from the same start)")
    print_throughput(speed)

    Path(args.json).write_text(json.dumps({"rows": len(rows), "accuracy": results, "rules": rules, "throughput": speed,
                                           "referee_disagreements": found}, indent=2))
    print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
