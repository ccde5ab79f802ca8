"""Maths answer checking: referee against math-verify and TRL's accuracy_reward, in one run.

Golden cases come from MATH-500: every gold against equivalent rewrites of itself (as written,
``\\dfrac``, decimal <-> fraction, ``a/b``, thousands separators, ``x = N``, ``\\left( \\right)``,
no spaces, ``\\sqrt2``, no degree sign, no ``\\text{}``, reversed lists: label correct) and
against near misses (one digit changed) and other problems' answers (label wrong). Each
answer sits at the end of the row's own solution as chain of thought, in one of three formats:
a boxed answer, a Minerva line (``Final Answer: The final answer is $X$. I hope it is
correct.``) or ``<think>...</think><answer>X</answer>``. Golds are given bare, as the dataset's
``answer`` column holds them.

Then throughput on a GRPO-shaped batch (64 prompts x 8 completions) at 1 and 2 workers
against math-verify called directly, cold and warm (see ``benchmarks.throughput``), the adversarial inputs against their deadline, and the
worker pool against pebble's ProcessPool (when pebble is installed) on the same sympy jobs.

    python -m benchmarks.math --data ../shared/data/math500_test.jsonl [--json OUT]

With ``--baseline-src DIR`` (a checkout of an earlier release, ``git worktree add ../before 6b9d912^``)
the GRPO batch is also timed with referee from this tree and from ``DIR`` (:mod:`benchmarks.baseline`),
each in fresh processes, interleaved with math-verify, ``--repeats`` rounds: cold (the clock starts
before the import) and started (the pool started by one sympy check, then 2 s idle), each as a
multiple of math-verify's speed from the same start; and the hedge stage's own share of this
tree's time on the batch (``review`` timed apart from reading the answer).
"""

from __future__ import annotations

import sys
import argparse
import json
import logging
import random
import re
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from referee.verifiers import deadline_pool
from referee.verifiers import math as referee_math
from referee.verifiers.deadline_pool import DeadlinePool, NamedFunction
from referee.verifiers.math import CompareOptions
from referee.verifiers.math.exact import assignment_value, canonical, exact_number
from referee.verifiers.math.gold import gold_answer
from referee.verifiers.text.numbers import format_number

from benchmarks import baseline
from benchmarks.throughput import math_verify_checker, print_throughput, throughput


FORMATS = ("boxed", "minerva", "answer tag", "boxed")
ADVERSARIAL = {
    "power tower in a fraction": r"\boxed{\dfrac{5^{(5^{(5^{(5^5)})}-4)}-5}{16}}",
    "9^{9^{9^{9}}}": r"The answer is $\boxed{9^{9^{9^{9}}}}$.",
    "100,000-character answer": "\\boxed{" + "1+" * 50_000 + "}",
    "5,000 nested braces": "\\boxed{" + "{" * 5000 + "1" + "}" * 5000 + "}",
}


# ---------------------------------------------------------------------------------------------
# Golden cases


def rewrites(gold: str) -> list[tuple[str, str]]:
    """(name, text) of rewrites of ``gold`` that mean the same answer."""
    out = [("as written", gold)]
    if r"\frac" in gold:
        out.append((r"\dfrac", gold.replace(r"\frac", r"\dfrac")))
    number = exact_number(gold)
    if number is not None and not number.percent:
        value = number.value
        if value.denominator != 1:
            decimal = format_number(value)
            out.append(("decimal" if "/" not in decimal else "a/b", decimal))
        if "." in gold:
            out.append(("fraction", f"\\frac{{{value.numerator}}}{{{value.denominator}}}" if value >= 0
                        else f"-\\frac{{{-value.numerator}}}{{{value.denominator}}}"))
        if value.denominator == 1 and abs(value) >= 1000 and "," not in gold:
            out.append(("thousands", f"{value.numerator:,}"))
        if value.denominator == 1:
            out.append(("x = N", f"x = {gold}"))
    if "(" in gold and gold.count("(") == gold.count(")") and not re.search(r"[\[\]]|\\left", gold):
        out.append((r"\left( \right)", gold.replace("(", r"\left( ").replace(")", r" \right)")))
    if " " in gold:
        out.append(("no spaces", gold.replace(" ", "")))
    if re.search(r"\\sqrt\{\d\}", gold):
        out.append((r"\sqrt2", re.sub(r"\\sqrt\{(\d)\}", r"\\sqrt\1", gold)))
    if "^\\circ" in gold:
        out.append(("no degree sign", gold.replace("^\\circ", "")))
    if re.fullmatch(r"\\text\{[^{}]*\}", gold):
        out.append((r"no \text", gold[6:-1]))
    if number is None and re.fullmatch(r"[^(){}\[\]\\]+(?:,[^(){}\[\]\\]+)+", gold):
        out.append(("reversed list", ", ".join(part.strip() for part in reversed(gold.split(",")))))
    return out


def near_miss(gold: str) -> str | None:
    """``gold`` with its last digit changed, or ``None`` when it has no digit."""
    digits = list(re.finditer(r"\d", gold))
    if not digits:
        return None
    last = digits[-1]
    return gold[:last.start()] + str((int(last.group()) + 1) % 10) + gold[last.end():]


def _same(a: str, b: str) -> bool:
    """Whether two answers are plainly the same (as text, as numbers, or ``x = 5`` against ``5``)."""
    a, b = assignment_value(a) or a, assignment_value(b) or b
    na, nb = exact_number(a), exact_number(b)
    return canonical(a) == canonical(b) or (na is not None and nb is not None and na.value == nb.value)


def _without_last_box(solution: str) -> tuple[str, str]:
    """The solution with its last ``\\boxed{X}`` replaced by ``X``, split around where it stood."""
    start = solution.rfind("\\boxed{")
    depth, index = 0, start + len("\\boxed")
    for index in range(start + len("\\boxed"), len(solution)):
        depth += {"{": 1, "}": -1}.get(solution[index], 0)
        if depth == 0:
            break
    return solution[:start], solution[index + 1:]


def completion(solution: str, answer: str, shape: str) -> str:
    """The row's solution as chain of thought, ending in ``answer`` written in ``shape``."""
    before, after = _without_last_box(solution)
    if shape == "boxed":
        return f"{before}\\boxed{{{answer}}}{after}"
    reasoning = before.rstrip(" $\\[") + " (see below)."
    if shape == "minerva":
        return f"{reasoning}\n\nFinal Answer: The final answer is ${answer}$. I hope it is correct."
    return f"<think>\n{reasoning}\n</think>\n<answer>{answer}</answer>"


def build_cases(rows: list[dict]) -> list[dict]:
    """Golden cases: each gold against its rewrites (correct) and other answers (wrong)."""
    golds = [gold_answer(row["answer"]) for row in rows]
    cases = []
    for i, (row, gold) in enumerate(zip(rows, golds)):
        answers = [(name, text, True) for name, text in rewrites(gold)]
        miss = near_miss(gold)
        if miss is not None and not _same(miss, gold):
            answers.append(("near miss", miss, False))
        for step in (1, 17):
            other = golds[(i + step) % len(golds)]
            if not _same(other, gold):
                answers.append(("other problem's answer", other, False))
        for j, (kind, text, label) in enumerate(answers):
            shape = FORMATS[(i + j) % len(FORMATS)]
            cases.append({"row": i, "gold": row["answer"], "answer": text, "kind": kind, "shape": shape,
                          "label": label, "completion": completion(row["solution"], text, shape)})
    return cases


# ---------------------------------------------------------------------------------------------
# Checkers: each takes (completions, golds) and returns a list of True / False / None


def referee_checker(completions: list[str], golds: list[str]) -> list[bool | None]:
    verdicts = referee_math.verify_batch(completions, golds)
    return [None if v.status == "error" else v.correct for v in verdicts]


def trl_checker(completions: list[str], golds: list[str]) -> list[bool | None]:
    from trl.rewards import accuracy_reward

    rewards = accuracy_reward([[{"role": "assistant", "content": c}] for c in completions], golds)
    return [None if r is None else r == 1.0 for r in rewards]


CHECKERS: dict[str, Callable[[list[str], list[str]], list[bool | None]]] = {
    "referee math (bare gold)": referee_checker,
    "math-verify (bare gold)": math_verify_checker(boxed_gold=False),
    "math-verify (gold wrapped in \\boxed{})": math_verify_checker(boxed_gold=True),
    "TRL accuracy_reward (bare gold)": trl_checker,
}


def score(name: str, predictions: list[bool | None], cases: list[dict], seconds: float) -> dict:
    tp = sum(1 for p, c in zip(predictions, cases) if p and c["label"])
    fp = sum(1 for p, c in zip(predictions, cases) if p and not c["label"])
    fn = sum(1 for p, c in zip(predictions, cases) if not p and c["label"])
    by_shape = {shape: sum(1 for p, c in zip(predictions, cases) if c["shape"] == shape and bool(p) == c["label"])
                / sum(1 for c in cases if c["shape"] == shape) for shape in dict.fromkeys(FORMATS)}
    return {"checker": name, "accuracy": (len(cases) - fp - fn) / len(cases), "precision": tp / max(1, tp + fp),
            "recall": tp / max(1, tp + fn), "no_reward": sum(p is None for p in predictions),
            "false_positives": fp, "false_negatives": fn, "ms_per_case": 1000 * seconds / len(cases),
            "accuracy_by_format": by_shape}


# ---------------------------------------------------------------------------------------------
# Throughput


def grpo_batch(rows: list[dict], cases: list[dict], prompts: int, group: int, seed: int = 0) -> list[dict]:
    """``prompts`` x ``group`` completions: each prompt's cases, cycled, correct and wrong mixed."""
    by_row: dict[int, list[dict]] = {}
    for case in cases:
        by_row.setdefault(case["row"], []).append(case)
    chosen = random.Random(seed).sample(sorted(by_row), prompts)
    return [by_row[row][j % len(by_row[row])] for row in chosen for j in range(group)]


def beside_baseline(batch_path: str, size: int, src: str, rounds: int, workers: tuple[int, ...] = (1, 2)) -> dict:
    """The batch with referee from this tree and from ``src``, cold and started, interleaved with math-verify."""
    before = baseline.check_source(src)
    trees = {"this tree": baseline.ROOT, "baseline": before}
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(rounds):
        for start in ("cold", "started"):
            anchor = ["--checker", "math-verify", "--start", "cold" if start == "cold" else "warm", "--batch", batch_path]
            times.setdefault(("math-verify", start), []).append(
                float(baseline.run_module("benchmarks.throughput", anchor, baseline.ROOT)))
            for name, tree in trees.items():
                for count in workers:
                    args = (["--checker", "referee", "--start", "cold", "--workers", str(count), "--batch", batch_path]
                            if start == "cold" else ["--measure-started", batch_path, "--workers", str(count)])
                    module = "benchmarks.throughput" if start == "cold" else "benchmarks.baseline"
                    times.setdefault((f"referee, {name}, {count} worker{'s' * (count > 1)}", start), []).append(
                        float(baseline.run_module(module, args, tree)))
    rows = []
    for (checker, start), runs in times.items():
        seconds = statistics.median(runs)
        anchor = statistics.median(times["math-verify", start])
        rows.append({"checker": checker, "start": start, "seconds": seconds, "completions_per_s": size / seconds,
                     "speedup": anchor / seconds, "runs": runs})
    return {"baseline": baseline.describe(before), "rounds": rounds, "rows": rows, "review_share": review_share(batch_path)}


def review_share(batch_path: str) -> dict[str, float]:
    """This tree's seconds for the batch (warm, in this process, 1 worker), and those of its two reading
    stages apart: the answer read (``extract_answer``) and the hedge stage (``review``)."""
    from referee.verifiers.math import extract, hedges
    from referee.verifiers.text.hedging import after_reasoning

    batch = json.loads(Path(batch_path).read_text())
    completions, golds = [c["completion"] for c in batch], [c["gold"] for c in batch]
    referee_math.verify_batch(completions, golds, workers=1)
    started = time.perf_counter()
    referee_math.verify_batch(completions, golds, workers=1)
    whole = time.perf_counter() - started
    texts = [after_reasoning(completion) or "" for completion in completions]
    started = time.perf_counter()
    answers = [extract.extract_answer(text) for text in texts]
    reading = time.perf_counter() - started
    started = time.perf_counter()
    [hedges.review(text, answer) for text, answer in zip(texts, answers)]
    return {"batch_s": whole, "reading_s": reading, "review_s": time.perf_counter() - started}


def print_beside_baseline(result: dict) -> None:
    """The table of :func:`beside_baseline`."""
    print(f"\nGRPO batch beside the baseline {result['baseline']} (fresh processes, interleaved, "
          f"median of {result['rounds']})")
    print(f"{'checker':36} {'start':>7} {'seconds':>8} {'completions/s':>13} {'x math-verify':>13}")
    for r in result["rows"]:
        print(f"{r['checker']:36} {r['start']:>7} {r['seconds']:8.3f} {r['completions_per_s']:13.0f} {r['speedup']:12.1f}x")
    share = result["review_share"]
    print(f"this tree, warm, 1 worker: the hedge stage (review) takes {share['review_s'] / share['batch_s']:.0%} of the "
          f"batch's {share['batch_s']:.3f} s, reading the answer {share['reading_s'] / share['batch_s']:.0%}")


def _in_fresh_process(*args: str) -> Any:
    command = [sys.executable, "-m", "benchmarks.math", *args]
    return json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


# ---------------------------------------------------------------------------------------------
# Adversarial inputs


# The anchors as a trainer's async reward path calls them: from a worker thread, where
# signal.alarm cannot work (TRL switches math-verify's timeouts off there; so must anyone else).
_ANCHOR_SCRIPT = """
import logging, sys, threading
logging.disable(logging.WARNING)
completion, gold, which = sys.argv[1], sys.argv[2], sys.argv[3]
def score():
    if which == "trl":
        from trl.rewards import accuracy_reward
        accuracy_reward([[{"role": "assistant", "content": completion}]], [gold])
    else:
        from math_verify import parse, verify
        verify(parse("\\\\boxed{" + gold + "}", parsing_timeout=None), parse(completion, parsing_timeout=None),
               timeout_seconds=None)
thread = threading.Thread(target=score)
thread.start()
thread.join()
"""


def _anchor_seconds(completion: str, gold: str, which: str, cap: float) -> float | None:
    started = time.perf_counter()
    try:
        subprocess.run([sys.executable, "-c", _ANCHOR_SCRIPT, completion, gold, which], timeout=cap,
                       capture_output=True, check=False)
    except subprocess.TimeoutExpired:
        return None
    return time.perf_counter() - started


def adversarial(deadline: float, cap: float) -> list[dict]:
    gold = r"\frac{\sqrt{5}}{2}"
    referee_math.verify(r"\boxed{\sqrt{5}/2}", gold)  # starts the pool: start-up is not what is timed
    results = []
    for name, text in ADVERSARIAL.items():
        started = time.perf_counter()
        verdict = referee_math.verify(text, gold, timeout=deadline)
        results.append({"input": name, "status": verdict.status, "seconds": time.perf_counter() - started,
                        "math_verify_s": _anchor_seconds(text, gold, "math-verify", cap),
                        # TRL skips a bare gold it cannot parse: give it one in $...$, so it checks the answer
                        "trl_s": _anchor_seconds(text, f"${gold}$", "trl", cap)})
    return results


# ---------------------------------------------------------------------------------------------
# The worker pool against pebble


def pool_comparison(batch_path: str, deadline: float) -> list[dict] | None:
    """Our pool against pebble's on the batch's sympy jobs, both cold (run it in a fresh process)."""
    try:
        import pebble
    except ImportError:
        return None
    import referee.verifiers.math.sympy_worker  # noqa: F401  (pebble forks this process: same modules preloaded)

    batch = json.loads(Path(batch_path).read_text())
    options = CompareOptions()
    jobs = [(gold_answer(c["gold"]), c["answer"], options) for c in batch]
    function = NamedFunction("referee.verifiers.math.sympy_worker:equivalent")
    hang = (r"\frac{\sqrt{5}}{2}", r"9^{9^{9^{9}}}", options)
    results = []

    def ours() -> tuple[float, float]:
        with DeadlinePool(2, preload=("referee.verifiers.math.sympy_worker",)) as pool:  # no warm-up: as pebble
            pool.run(abs, [(1,), (2,)], timeout=30)
            started = time.perf_counter()
            pool.run(function, jobs, timeout=deadline)
            middle = time.perf_counter()
            pool.run(function, [hang, *jobs[:20]], timeout=deadline)
            return middle - started, time.perf_counter() - middle

    def theirs() -> tuple[float, float]:
        with pebble.ProcessPool(max_workers=2) as pool:
            pool.map(abs, [1, 2]).result()
            started = time.perf_counter()
            futures = [pool.schedule(function, args=job, timeout=deadline) for job in jobs]
            [future.result() for future in futures]
            middle = time.perf_counter()
            futures = [pool.schedule(function, args=job, timeout=deadline) for job in [hang, *jobs[:20]]]
            for future in futures:
                try:
                    future.result()
                except TimeoutError:
                    pass
            return middle - started, time.perf_counter() - middle

    for name, run in (("referee DeadlinePool (warm fork template)", ours), (f"pebble {pebble.__version__} ProcessPool", theirs)):
        batch_s, with_hang_s = run()
        results.append({"pool": name, "sympy_jobs": len(jobs), "seconds": batch_s,
                        "hang_plus_20_jobs_s": with_hang_s})
    return results


# ---------------------------------------------------------------------------------------------


def main() -> None:
    logging.disable(logging.WARNING)  # math-verify logs every timeout and parse failure; not at import
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", help="MATH-500 JSONL (problem, solution, answer, ...)")
    parser.add_argument("--measure", choices=("pools",), help=argparse.SUPPRESS)
    parser.add_argument("--batch", help=argparse.SUPPRESS)
    parser.add_argument("--json", default="benchmarks/results/math.json", help="where to write the results")
    parser.add_argument("--repeats", type=int, default=3, help="timed repetitions of the GRPO batch (median)")
    parser.add_argument("--deadline", type=float, default=2.0, help="per-answer deadline for the adversarial inputs")
    parser.add_argument("--anchor-cap", type=float, default=20.0, help="seconds before an anchor is stopped")
    parser.add_argument("--baseline-src", metavar="DIR",
                        help="a checkout of an earlier release: time the GRPO batch with it beside this tree (see above)")
    args = parser.parse_args()
    if args.measure == "pools":
        print(json.dumps(pool_comparison(args.batch, args.deadline)))
        return
    if not args.data:
        parser.error("--data is required")

    rows = [json.loads(line) for line in Path(args.data).read_text().splitlines() if line.strip()]
    cases = build_cases(rows)
    completions, golds = [c["completion"] for c in cases], [c["gold"] for c in cases]
    print(f"{len(rows)} rows, {len(cases)} golden cases ({sum(c['label'] for c in cases)} correct, "
          f"{sum(not c['label'] for c in cases)} wrong)\n")

    accuracy = []
    for name, check in CHECKERS.items():
        started = time.perf_counter()
        predictions = check(completions, golds)
        accuracy.append(score(name, predictions, cases, time.perf_counter() - started))
        if name.startswith("referee"):
            disagreements = [dict(c, predicted=p) for p, c in zip(predictions, cases) if bool(p) != c["label"]]
    print(f"{'checker':42} {'accuracy':>8} {'precision':>9} {'recall':>7} {'no reward':>9} {'ms/case':>8}")
    for r in accuracy:
        print(f"{r['checker']:42} {r['accuracy']:8.4f} {r['precision']:9.4f} {r['recall']:7.4f} "
              f"{r['no_reward']:9d} {r['ms_per_case']:8.2f}")
    print("\naccuracy by answer format: " + "; ".join(
        f"{r['checker']}: " + ", ".join(f"{k} {v:.3f}" for k, v in r["accuracy_by_format"].items()) for r in accuracy))

    batch = grpo_batch(rows, cases, prompts=64, group=8)
    batch_path = Path(args.json).with_suffix(".grpo_batch.json")
    batch_path.parent.mkdir(parents=True, exist_ok=True)
    batch_path.write_text(json.dumps(batch))
    speed = throughput(str(batch_path), len(batch), args.repeats)
    print(f"\nGRPO-shaped batch: 64 prompts x 8 completions, {deadline_pool.default_workers()} cores")
    print_throughput(speed)
    beside = beside_baseline(str(batch_path), len(batch), args.baseline_src, args.repeats) if args.baseline_src else None
    if beside is not None:
        print_beside_baseline(beside)

    attacks = adversarial(args.deadline, args.anchor_cap)
    print(f"\nadversarial answers, called from a worker thread (referee deadline {args.deadline} s; "
          f"anchors stopped after {args.anchor_cap} s)")
    print(f"{'input':28} {'referee':>8} {'seconds':>8} {'math-verify':>12} {'TRL':>8}")
    for r in attacks:
        shown = [f"{s:.2f}" if s is not None else f">{args.anchor_cap:.0f}" for s in (r["math_verify_s"], r["trl_s"])]
        print(f"{r['input']:28} {r['status']:>8} {r['seconds']:8.2f} {shown[0]:>12} {shown[1]:>8}")

    runs = [_in_fresh_process("--measure", "pools", "--batch", str(batch_path), "--deadline", str(args.deadline))
            for _ in range(args.repeats)]
    pools = None if runs[0] is None else [
        {**runs[0][i], **{key: statistics.median(run[i][key] for run in runs) for key in ("seconds", "hang_plus_20_jobs_s")}}
        for i in range(len(runs[0]))]
    if pools:
        print(f"\nworker pools on the same sympy jobs (2 workers, cold, median of {args.repeats})")
        print(f"{'pool':42} {'jobs':>5} {'seconds':>8} {'1 hang + 20 jobs':>16}")
        for r in pools:
            print(f"{r['pool']:42} {r['sympy_jobs']:5d} {r['seconds']:8.3f} {r['hang_plus_20_jobs_s']:16.3f}")

    Path(args.json).write_text(json.dumps({"rows": len(rows), "cases": len(cases), "accuracy": accuracy,
                                           "throughput": speed, "beside_baseline": beside, "adversarial": attacks,
                                           "pools": pools,
                                           "referee_disagreements": disagreements}, indent=2))
    print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
