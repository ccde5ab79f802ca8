"""Code verifier: correctness on HumanEval and MBPP, and throughput against a human-eval-style
baseline, side by side in one run.

Correctness: every HumanEval canonical solution (prompt + canonical_solution, in a fenced block
the way a chat model writes it) must pass, and every ``return None`` variant must fail; MBPP
reference solutions are judged with their asserts (any that cannot pass is listed with why).

Throughput: the same HumanEval programs (canonical and ``return None``, half passing) judged
by referee's sandbox and by a baseline that does what OpenAI's human-eval ``check_correctness``
does: per program, a ``multiprocessing.Manager`` for the result, a forked process that
``exec``s prompt + completion + test + ``check(entry_point)`` in-process under a timer, and a
thread pool of N workers around it. Both at 1 and 2 workers, pools warm, same machine, same run.

    python -m benchmarks.code --humaneval ../shared/data/humaneval.jsonl.gz --mbpp ../shared/data/mbpp.jsonl
"""

from __future__ import annotations

from pathlib import Path
import argparse
import contextlib
import gzip
import io
import json
import multiprocessing
import os
import signal
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from referee.verifiers import code
from referee.verifiers.code.isolation import resolve_isolation


def load_jsonl(path: str) -> list[dict]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def humaneval_cases(rows: list[dict]) -> list[dict]:
    """Per task: the canonical solution (label True) and a ``return None`` body (label False)."""
    cases = []
    for row in rows:
        tests = {"format": "humaneval", "test": row["test"], "entry_point": row["entry_point"], "prompt": row["prompt"]}
        for label, body in ((True, row["canonical_solution"]), (False, "    return None\n")):
            program = row["prompt"] + body
            cases.append({"task": row["task_id"], "label": label, "program": program, "tests": tests,
                          "completion": f"Here is the function:\n\n```python\n{program}\n```\n", "row": row})
    return cases


# --- the baseline: OpenAI human-eval's check_correctness, reimplemented -------------------

class _Timeout(Exception):
    pass


def _unsafe_execute(program: str, timeout: float, result: Any) -> None:
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)

        def on_alarm(signum: int, frame: Any) -> None:
            raise _Timeout

        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                exec(program, {})
            result.append("passed")
        except _Timeout:
            result.append("timed out")
        except BaseException as exc:  # noqa: BLE001 - human-eval records any failure
            result.append(f"failed: {exc}")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)


def baseline_check(case: dict, timeout: float) -> bool:
    row = case["row"]
    program = f"{case['program']}\n{row['test']}\ncheck({row['entry_point']})\n"
    with multiprocessing.Manager() as manager:
        result = manager.list()
        process = multiprocessing.Process(target=_unsafe_execute, args=(program, timeout, result))
        process.start()
        process.join(timeout=timeout + 1)
        if process.is_alive():
            process.kill()
        return bool(result) and result[0] == "passed"


def baseline_run(cases: list[dict], workers: int, timeout: float) -> list[bool]:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda case: baseline_check(case, timeout), cases))


def referee_run(cases: list[dict], workers: int, timeout: float) -> list[bool]:
    verdicts = code.verify_batch([c["completion"] for c in cases], [c["tests"] for c in cases],
                                 workers=workers, timeout=timeout)
    return [v.correct for v in verdicts]


def timed(run: Any, cases: list[dict], workers: int, timeout: float) -> tuple[list[bool], float]:
    started = time.perf_counter()
    judged = run(cases, workers, timeout)
    return judged, len(cases) / (time.perf_counter() - started)


def humaneval_report(cases: list[dict], timeout: float) -> dict:
    verdicts = code.verify_batch([c["completion"] for c in cases], [c["tests"] for c in cases], workers=2, timeout=timeout)
    wrong = [{"task": c["task"], "label": c["label"], "status": v.status, "reason": v.reason}
             for c, v in zip(cases, verdicts) if v.correct != c["label"]]
    return {"canonical_passed": sum(v.correct for c, v in zip(cases, verdicts) if c["label"]),
            "return_none_failed": sum(not v.correct for c, v in zip(cases, verdicts) if not c["label"]),
            "tasks": len(cases) // 2, "mismatches": wrong,
            "statuses": sorted({v.status for v in verdicts})}


def mbpp_report(rows: list[dict], timeout: float) -> dict:
    tests = [{"format": "asserts", "asserts": r["test_list"], "setup": r["test_setup_code"]} for r in rows]
    verdicts = code.verify_batch([r["code"] for r in rows], tests, workers=2, timeout=timeout)
    failing = [{"task": r["task_id"], "status": v.status, "reason": v.reason} for r, v in zip(rows, verdicts) if not v.correct]
    return {"rows": len(rows), "passed": sum(v.correct for v in verdicts), "failing": failing}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--humaneval", required=True, help="HumanEval.jsonl(.gz): prompt, canonical_solution, test, entry_point")
    parser.add_argument("--mbpp", required=True, help="MBPP JSONL: code, test_list, test_setup_code")
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds per test (human-eval's default: 3)")
    parser.add_argument("--mbpp-timeout", type=float, default=10.0,
                        help="seconds per MBPP assert (task 123's reference takes ~3 s on a busy machine)")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes per checker and worker count (best kept)")
    parser.add_argument("--json", default="benchmarks/results/code.json", help="where to write the results")
    args = parser.parse_args()

    isolation = resolve_isolation()
    cases = humaneval_cases(load_jsonl(args.humaneval))
    humaneval = humaneval_report(cases, args.timeout)
    mbpp = mbpp_report(load_jsonl(args.mbpp), args.mbpp_timeout)

    labels = [c["label"] for c in cases]
    speed = [{"workers": workers, "referee_per_s": 0.0, "baseline_per_s": 0.0, "referee_agrees_with_labels": True,
              "baseline_agrees_with_labels": True} for workers in (1, 2)]
    for row in speed:
        referee_run(cases[:8], row["workers"], args.timeout)  # warm the pool: workers start once, then stay
    for _ in range(args.repeats):  # interleaved, so that a busy moment on the machine hits every checker alike
        for row in speed:
            for name, run in (("referee", referee_run), ("baseline", baseline_run)):
                judged, rate = timed(run, cases, row["workers"], args.timeout)
                row[f"{name}_per_s"] = max(row[f"{name}_per_s"], rate)
                row[f"{name}_agrees_with_labels"] &= judged == labels
    for row in speed:
        row["ratio"] = row["referee_per_s"] / row["baseline_per_s"]

    print(f"isolation: {isolation.summary()}; {os.cpu_count()} CPUs; timeout {args.timeout:g} s per test\n")
    print(f"HumanEval: {humaneval['canonical_passed']}/{humaneval['tasks']} canonical solutions pass, "
          f"{humaneval['return_none_failed']}/{humaneval['tasks']} `return None` variants fail")
    print(f"MBPP: {mbpp['passed']}/{mbpp['rows']} reference solutions pass; the others:")
    for item in mbpp["failing"]:
        print(f"  task {item['task']}: {item['status']}: {item['reason'][:160]}")
    print("\n| workers | referee programs/s | human-eval-style baseline programs/s | referee / baseline |")
    print("|---:|---:|---:|---:|")
    for row in speed:
        print(f"| {row['workers']} | {row['referee_per_s']:,.0f} | {row['baseline_per_s']:,.0f} | {row['ratio']:.1f}x |")
    if not all(row["referee_agrees_with_labels"] and row["baseline_agrees_with_labels"] for row in speed):
        print("warning: a timed run disagreed with the labels (see the JSON)")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"isolation": isolation.level, "cpus": os.cpu_count(), "timeout": args.timeout,
                                           "humaneval": humaneval, "mbpp": mbpp, "speed": speed}, indent=2))


if __name__ == "__main__":
    main()
