"""GSM8K answer checking: referee against lm-eval's regexes and math-verify, in one run.

From each real GSM8K solution the benchmark builds completions the ways models write a
final answer (the solution's own reasoning, then `#### N`, `The answer is $N.`, a boxed
answer, bold, a Minerva-style line, a note with other numbers after the answer, a
self-correction, ...), each once with the gold number (label: correct) and once with a
wrong number (label: wrong). Every checker judges every case; the table gives accuracy,
precision and recall of "correct", and cases per second in this one process.

    python -m benchmarks.gsm8k --data ../shared/data/gsm8k_test.jsonl [--limit N] [--json OUT]

With ``--baseline-src DIR`` (a checkout of an earlier release, ``git worktree add ../before
6b9d912^``) it also times referee from this tree and from ``DIR`` on the same cases, each in a fresh
process (:mod:`benchmarks.baseline`), interleaved with math-verify (parse per call) in this one,
``--rounds`` times; medians, each as a multiple of math-verify's speed in the same run. This tree's
process also times its stages apart: the look for a closing line read alone, reading the answer and
the hedge stage (``review``) of the completions not read so; each one's share of the time.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

from referee.verifiers import gsm8k
from referee.verifiers.text.numbers import format_number

from benchmarks import baseline


def _commas(value: Fraction) -> str:
    text = format_number(value)
    whole, dot, frac = text.lstrip("-").partition(".")
    return ("-" if value < 0 else "") + f"{int(whole):,}" + dot + frac


# Each shape: (reasoning, final value as Fraction, a different value) -> completion text.
SHAPES: dict[str, Callable[[str, Fraction, Fraction], str]] = {
    "#### N": lambda r, v, o: f"{r}\n#### {format_number(v)}",
    "#### 1,000": lambda r, v, o: f"{r}\n#### {_commas(v)}",
    "#### $N": lambda r, v, o: f"{r}\n#### ${format_number(v)}",
    "#### N.": lambda r, v, o: f"{r}\n#### {format_number(v)}.",
    "#### N.00": lambda r, v, o: f"{r}\n#### {format_number(v)}.00" if v.denominator == 1 else f"{r}\n#### {format_number(v)}0",
    "The answer is N.": lambda r, v, o: f"{r}\nThe answer is {format_number(v)}.",
    "The answer is $1,234.": lambda r, v, o: f"{r}\nThe answer is ${_commas(v)}.",
    "$\\boxed{N}$.": lambda r, v, o: f"{r}\nSo the final answer is $\\boxed{{{format_number(v)}}}$.",
    "\\boxed{N} alone": lambda r, v, o: f"{r}\n\\boxed{{{format_number(v)}}}",
    "**N**": lambda r, v, o: f"{r}\n\n**{format_number(v)}**",
    "Answer: **N**": lambda r, v, o: f"{r}\n\n**Answer:** {format_number(v)}",
    "N dollars": lambda r, v, o: f"{r}\nIn total that is {format_number(v)} dollars.",
    "Minerva": lambda r, v, o: f"{r}\nFinal Answer: The final answer is ${format_number(v)}$. I hope it is correct.",
    "answer then note": lambda r, v, o: (
        f"{r}\nThe answer is {format_number(v)}.\n\nNote: I double-checked with {format_number(o)} and 3 other values."
    ),
    "self-correction": lambda r, v, o: (
        f"{r}\nThe answer is {format_number(o)}. Wait, let me recheck that step. "
        f"Recomputing carefully, the answer is {format_number(v)}."
    ),
    "answer first, then work": lambda r, v, o: f"The answer is {format_number(v)}.\n\nHere is why:\n{r}",
    "#### N, then chat": lambda r, v, o: (
        f"{r}\n#### {format_number(v)}\n\nI hope this helps! Ask me if you have 2 more questions."
    ),
    "answer with units and price": lambda r, v, o: (
        f"{r}\nThe answer is {format_number(v)} eggs, sold at $3 each on 2 days."
    ),
    "boxed then correction": lambda r, v, o: (
        f"{r}\nSo $\\boxed{{{format_number(o)}}}$? No, I misread: the final answer is {format_number(v)}."
    ),
    # How reasoning models (DeepSeek-R1 and its distills, QwQ, Qwen3) and Qwen2.5-Instruct close.
    "**Final Answer** over a display box": lambda r, v, o: (
        f"{r}\n\n**Final Answer**\n\\[\n\\boxed{{{format_number(v)}}}\n\\]"
    ),
    "box in a closing sentence": lambda r, v, o: (
        f"{r}\n\nTherefore, the answer to the question is \\(\\boxed{{{format_number(v)}}}\\) in all."
    ),
    "lead-in over a display box": lambda r, v, o: f"{r}\n\nThus, the final answer is:\n\\[\n\\boxed{{{format_number(v)}}}\n\\]",
}

_CALCULATOR = re.compile(r"<<[^>]*>>")


def build_cases(rows: list[dict], seed: int = 0) -> list[dict]:
    """Positive and negative completions of every shape for every GSM8K row."""
    rng = random.Random(seed)
    golds = [gsm8k.gold_value(row["answer"]) for row in rows]
    cases = []
    for row, gold in zip(rows, golds):
        reasoning = _CALCULATOR.sub("", row["answer"].rsplit("####", 1)[0]).strip()
        wrong = gold + rng.choice([1, -1, 2, 10]) if rng.random() < 0.5 else rng.choice(golds)
        if wrong == gold:
            wrong = gold + 1
        for shape, write in SHAPES.items():
            cases.append({"shape": shape, "gold": row["answer"], "completion": write(reasoning, gold, wrong), "label": True})
            cases.append({"shape": shape, "gold": row["answer"], "completion": write(reasoning, wrong, gold), "label": False})
    return cases


# --- anchors ---------------------------------------------------------------------------

# lm-eval-harness gsm8k.yaml: the two filters and exact_match's regexes_to_ignore.
_LM_EVAL_STRICT = re.compile(r"#### (\-?[0-9\.\,]+)")
_LM_EVAL_FLEXIBLE = re.compile(r"(-?[$0-9.,]{2,})|(-?[0-9]+)")
_LM_EVAL_IGNORE = [re.compile(p) for p in (",", r"\$", r"(?s).*#### ", r"\.$")]


def _lm_eval_normalise(text: str) -> str:
    for pattern in _LM_EVAL_IGNORE:
        text = pattern.sub("", text)
    return text.strip()


def lm_eval_strict(completion: str, gold: str) -> bool:
    match = _LM_EVAL_STRICT.search(completion)
    return bool(match) and _lm_eval_normalise(match.group(1)) == _lm_eval_normalise(gold)


def lm_eval_flexible(completion: str, gold: str) -> bool:
    matches = _LM_EVAL_FLEXIBLE.findall(completion)
    if not matches:
        return False
    last = next(group for group in matches[-1] if group)
    return _lm_eval_normalise(last) == _lm_eval_normalise(gold)


def make_math_verify(cache_gold: bool) -> Callable[[str, str], bool]:
    """math-verify on the gold's final number; ``cache_gold`` parses each gold once, untimed."""
    from math_verify import parse, verify

    gold_cache: dict[str, object] = {}

    def check(completion: str, gold: str) -> bool:
        if not cache_gold:  # how TRL's accuracy_reward and open-r1 call it: both parsed per call
            return bool(verify(parse(gold.rsplit("####", 1)[1].strip()), parse(completion)))
        if gold not in gold_cache:
            gold_cache[gold] = parse(gold.rsplit("####", 1)[1].strip())
        return bool(verify(gold_cache[gold], parse(completion)))

    check.fill_cache = lambda cases: [check("0", case["gold"]) for case in cases] if cache_gold else None
    return check


def referee_checker(mode: str) -> Callable[[str, str], bool]:
    return lambda completion, gold: gsm8k.verify(completion, gold, mode=mode).correct


def evaluate(name: str, check: Callable[[str, str], bool], cases: list[dict]) -> dict:
    if hasattr(check, "fill_cache"):  # math-verify's gold cache is filled before timing
        check.fill_cache(cases)
    start = time.perf_counter()
    judged = [check(case["completion"], case["gold"]) for case in cases]
    seconds = time.perf_counter() - start
    tp = sum(j and c["label"] for j, c in zip(judged, cases))
    fp = sum(j and not c["label"] for j, c in zip(judged, cases))
    positives = sum(c["label"] for c in cases)
    missed = sorted({c["shape"] for j, c in zip(judged, cases) if c["label"] and not j})
    return {
        "checker": name,
        "accuracy": sum(j == c["label"] for j, c in zip(judged, cases)) / len(cases),
        "precision": tp / (tp + fp) if tp + fp else 0.0,
        "recall": tp / positives if positives else 0.0,
        "cases_per_s": len(cases) / seconds,
        "false_positives": fp,
        "shapes_missed": missed,
    }


_TIMED_MODES = ("auto", "strict")


def measure(cases_path: str, stages: bool) -> dict[str, float]:
    """Seconds this process's referee takes for one pass over the cases in each timed mode (``auto`` first,
    from a cold start); with ``stages``, a warm ``auto`` pass and its stages apart (:func:`_stage_seconds`)."""
    cases = json.loads(Path(cases_path).read_text())
    completions, golds = [c["completion"] for c in cases], [c["gold"] for c in cases]
    seconds = {}
    for mode in _TIMED_MODES:
        started = time.perf_counter()
        [gsm8k.verify(completion, gold, mode=mode).correct for completion, gold in zip(completions, golds)]
        seconds[mode] = time.perf_counter() - started
    return {**seconds, **(_stage_seconds(completions, golds) if stages else {})}


def _stage_seconds(completions: list[str], golds: list[str]) -> dict[str, float]:
    """A warm ``auto`` pass, and its stages as ``verify`` runs them: the look for a closing line read
    alone (:mod:`referee.verifiers.gsm8k.closing`), reading the answer (that line, else the text),
    and the hedge stage (``review``) of the texts not read from their closing line alone."""
    from referee.verifiers.gsm8k import closing, extract, hedges
    from referee.verifiers.text.hedging import after_reasoning

    read, read_line = extract._extractor("auto"), extract._line_reader("auto")
    started = time.perf_counter()
    [gsm8k.verify(completion, gold).correct for completion, gold in zip(completions, golds)]
    warm = time.perf_counter() - started
    texts = [text for text in map(after_reasoning, completions) if text is not None]
    started = time.perf_counter()
    lines = [closing.closing_answer(text, "auto") for text in texts]
    closing_seconds = time.perf_counter() - started
    started = time.perf_counter()
    found = [read(text) if line is None else read_line(line) for text, line in zip(texts, lines)]
    reading = time.perf_counter() - started
    reviewed = [(text, answer) for text, line, answer in zip(texts, lines, found) if line is None]
    started = time.perf_counter()
    [hedges.review(text, answer, read) for text, answer in reviewed]
    return {"auto_warm": warm, "closing": closing_seconds, "reading": reading, "review": time.perf_counter() - started,
            "read_alone": 1 - len(reviewed) / max(1, len(texts))}


def beside_baseline(cases: list[dict], src: str, rounds: int) -> dict:
    """This tree and the release in ``src``, each in fresh processes, interleaved with math-verify here."""
    before = baseline.check_source(src)
    math_verify = make_math_verify(cache_gold=False)
    runs: dict[str, list[dict[str, float]]] = {"this tree": [], "baseline": []}
    anchor = []
    with tempfile.NamedTemporaryFile("w", suffix=".json") as file:
        json.dump([{"completion": c["completion"], "gold": c["gold"]} for c in cases], file)
        file.flush()
        for _ in range(rounds):
            for name, source, extra in (("this tree", baseline.ROOT, ["--stages"]), ("baseline", before, [])):
                output = baseline.run_module("benchmarks.gsm8k", ["--measure", file.name, *extra], source)
                runs[name].append(json.loads(output))
            started = time.perf_counter()
            [math_verify(case["completion"], case["gold"]) for case in cases]
            anchor.append(time.perf_counter() - started)
    anchor_speed = len(cases) / statistics.median(anchor)
    rows = [{"checker": "math-verify (parse per call)", "cases_per_s": anchor_speed, "speed_vs_math_verify": 1.0,
             "runs_s": anchor}]
    for mode in _TIMED_MODES:
        for name in runs:
            speed = len(cases) / statistics.median(run[mode] for run in runs[name])
            rows.append({"checker": f"referee {mode}, {name}", "cases_per_s": speed,
                         "speed_vs_math_verify": speed / anchor_speed, "runs_s": [run[mode] for run in runs[name]]})
    stages = {key: statistics.median(run[key] for run in runs["this tree"])
              for key in ("auto_warm", "closing", "reading", "review", "read_alone")}
    return {"baseline": baseline.describe(before), "rounds": rounds, "rows": rows, "read_alone": stages["read_alone"],
            **{f"{stage}_share": stages[stage] / stages["auto_warm"] for stage in ("closing", "reading", "review")}}


def print_beside_baseline(result: dict) -> None:
    """The table of :func:`beside_baseline`."""
    print(f"\nbeside the baseline {result['baseline']} (fresh processes, interleaved, median of {result['rounds']})\n")
    print("| checker | cases/s | x math-verify |")
    print("|---|---:|---:|")
    for row in result["rows"]:
        print(f"| {row['checker']} | {row['cases_per_s']:,.0f} | {row['speed_vs_math_verify']:.1f}x |")
    print(f"\nthis tree, auto, warm: {result['read_alone']:.0%} of the completions are read from their closing line "
          f"alone; the look for that line takes {result['closing_share']:.0%} of the time, reading the answer "
          f"{result['reading_share']:.0%}, the hedge stage (review, the other completions) {result['review_share']:.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", help="GSM8K-format JSONL (question, answer ending in '#### N'); required")
    parser.add_argument("--limit", type=int, default=0, help="use the first N rows (0: all)")
    parser.add_argument("--json", default="benchmarks/results/gsm8k.json", help="where to write the results")
    parser.add_argument("--baseline-src", metavar="DIR",
                        help="a checkout of an earlier release: time it beside this tree (see above)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds beside the baseline (median)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--stages", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.stages)))
        return
    if not args.data:
        parser.error("--data is required")

    rows = [json.loads(line) for line in Path(args.data).read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = rows[: args.limit] if args.limit else rows
    cases = build_cases(rows)
    checkers = {
        "referee auto": referee_checker("auto"),
        "referee flexible": referee_checker("flexible"),
        "referee strict": referee_checker("strict"),
        "lm-eval strict-match": lm_eval_strict,
        "lm-eval flexible-extract": lm_eval_flexible,
        "math-verify (gold parsed once)": make_math_verify(cache_gold=True),
        "math-verify (parse per call)": make_math_verify(cache_gold=False),
    }
    results = [evaluate(name, check, cases) for name, check in checkers.items()]
    anchor = next(r for r in results if r["checker"] == "math-verify (parse per call)")["cases_per_s"]
    print(f"{len(rows)} GSM8K rows, {len(SHAPES)} answer shapes, {len(cases)} cases (half correct)\n")
    print("| checker | accuracy | precision | recall | cases/s | x math-verify |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in results:
        r["speed_vs_math_verify"] = r["cases_per_s"] / anchor
        print(f"| {r['checker']} | {r['accuracy']:.3f} | {r['precision']:.3f} | {r['recall']:.3f} "
              f"| {r['cases_per_s']:,.0f} | {r['speed_vs_math_verify']:.1f}x |")
    for r in results:
        if r["shapes_missed"]:
            print(f"{r['checker']} misses some correct answers of shape: {', '.join(r['shapes_missed'])}")
    beside = beside_baseline(cases, args.baseline_src, args.rounds) if args.baseline_src else None
    if beside is not None:
        print_beside_baseline(beside)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"rows": len(rows), "cases": len(cases), "results": results,
                                           "beside_baseline": beside}, indent=2))


if __name__ == "__main__":
    main()
