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

Languages (``--languages``): per language, distinct programs (Codeforces 1A, three tests each)
judged with the compile cache cold (every program new to the judge) and warm (the same programs
again), beside the same programs compiled and run with the plain toolchain in a subprocess (no
sandbox; warm: the binary kept). Needs no data set.

HumanEval-X (``--humaneval-x``): every canonical solution of downloaded HumanEval-X files
(``humaneval_<lang>.jsonl.gz``, all six languages, Python included; the language read from the task
ids), judged as a whole function (the prompt, for Rust the declaration, and the canonical body, as
HumanEval-X's own evaluation puts them together), per row a wrong program (the same solution failing
on entry) and ``--mutants`` mutants of the solution (one operator or constant changed); each program but
those failing on entry is also run in HumanEval-X's own harness, each toolchain called directly
(:mod:`benchmarks.humaneval_x_harness`). Prints per language agreement with that harness and programs
per second, and every program on which the two disagree, with both words. The libraries the rows need
(``python -m referee.verifiers.code.install_libraries``; testify for Go's harness) are used where given.

    python -m benchmarks.code --humaneval ../shared/data/humaneval.jsonl.gz --mbpp ../shared/data/mbpp.jsonl
    python -m benchmarks.code --languages cpp c java javascript rust --programs 6
    python -m benchmarks.code --humaneval-x data/humaneval_x/humaneval_*.jsonl.gz --workers 2
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
import shutil
import signal
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from referee.verifiers import code
from referee.verifiers.sandbox.isolation import resolve_isolation
from referee.verifiers.code.languages import LANGUAGES, find_toolchain
from referee.verifiers.code.outputs import stdout_matches

from .humaneval_x_harness import harness_passes, mutants


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


# --- languages: the sandbox's compile cache against the plain toolchain -------------------

THEATRE = {"format": "stdio", "inputs": ["6 6 4\n", "1000000000 1000000000 1\n", "1 1 1\n"],
           "outputs": ["4\n", "1000000000000000000\n", "1\n"], "time_limit": 2.0, "memory_limit": 256}
# Codeforces 1A in each language; "{variant}" makes each program a new source (a cold compile cache).
SOLUTIONS = {
    "cpp": "#include <bits/stdc++.h>\n// {variant}\nint main() { long long n, m, a; std::cin >> n >> m >> a; "
           "std::cout << ((n + a - 1) / a) * ((m + a - 1) / a) << std::endl; }\n",
    "c": "#include <stdio.h>\n/* {variant} */\nint main(void) { long long n, m, a; scanf(\"%lld %lld %lld\", &n, &m, &a); "
         "printf(\"%lld\\n\", ((n + a - 1) / a) * ((m + a - 1) / a)); return 0; }\n",
    "java": "import java.util.*;\n// {variant}\npublic class Main { public static void main(String[] x) { "
            "Scanner in = new Scanner(System.in); long n = in.nextLong(), m = in.nextLong(), a = in.nextLong(); "
            "System.out.println(((n + a - 1) / a) * ((m + a - 1) / a)); } }\n",
    "javascript": "// {variant}\nconst [n, m, a] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(BigInt);\n"
                  "console.log(String(((n + a - 1n) / a) * ((m + a - 1n) / a)));\n",
    "rust": "// {variant}\nuse std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap(); "
            "let v: Vec<u64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect(); "
            "println!(\"{}\", ((v[0] + v[2] - 1) / v[2]) * ((v[1] + v[2] - 1) / v[2])); }\n",
    "go": "package main\n// {variant}\nimport \"fmt\"\nfunc main() { var n, m, a int64; fmt.Scan(&n, &m, &a); "
          "fmt.Println(((n + a - 1) / a) * ((m + a - 1) / a)) }\n",
}


def subprocess_judge(language: str, programs: list[str], compile_each: bool, folders: dict[int, str]) -> list[bool]:
    """The same programs with the plain toolchain: compile (unless kept in ``folders``), then one
    ``subprocess.run`` per test, compared as referee compares; no sandbox, no limits but a timeout."""
    spec, toolchain = LANGUAGES[language], find_toolchain(language)
    assert toolchain is not None
    results = []
    for index, program in enumerate(programs):
        names = spec.files(spec, program)
        if compile_each or index not in folders:
            folder = folders[index] = tempfile.mkdtemp(prefix="referee-bench-")
            Path(folder, names["source"]).write_text(program)
            if spec.compile is not None:
                subprocess.run(spec.fill(spec.compile, toolchain.tools, names, 2048), cwd=folder, capture_output=True,
                               timeout=120, check=True)
        argv = spec.fill(spec.run, toolchain.tools, names, THEATRE["memory_limit"])
        results.append(all(
            stdout_matches(subprocess.run(argv, cwd=folders[index], input=stdin, capture_output=True, text=True,
                                          timeout=10).stdout, expected)
            for stdin, expected in zip(THEATRE["inputs"], THEATRE["outputs"])))
    return results


def language_speed(language: str, count: int, workers: int) -> dict:
    """Programs per second for one language: referee cold and warm, the plain toolchain cold and warm."""
    stamp = time.time_ns()
    programs = [SOLUTIONS[language].replace("{variant}", f"variant {stamp} {i}") for i in range(count)]
    completions = [f"```{language}\n{program}```" for program in programs]
    row: dict[str, Any] = {"language": language, "programs": count, "workers": workers,
                           "toolchain": find_toolchain(language).version}  # type: ignore[union-attr]
    for name in ("cold", "warm"):
        started = time.perf_counter()
        verdicts = code.verify_batch(completions, [THEATRE] * count, workers=workers, timeout=3.0)
        row[f"referee_{name}_per_s"] = count / (time.perf_counter() - started)
        row[f"referee_{name}_correct"] = sum(v.correct for v in verdicts)
        row[f"referee_{name}_cached"] = sum(v.details.get("build") == "cached" for v in verdicts)
    folders: dict[int, str] = {}
    for name, compile_each in (("cold", True), ("warm", False)):
        started = time.perf_counter()
        judged = subprocess_judge(language, programs, compile_each, folders)
        row[f"subprocess_{name}_per_s"] = count / (time.perf_counter() - started)
        row[f"subprocess_{name}_correct"] = sum(judged)
    for folder in folders.values():
        shutil.rmtree(folder, ignore_errors=True)
    return row


def languages_report(languages: list[str], count: int, workers: int, path: str) -> None:
    found = [name for name in languages if find_toolchain(name) is not None]
    code.verify_batch([f"```c\n{SOLUTIONS['c'].replace('{variant}', 'warm-up')}```"], [THEATRE], workers=workers)
    rows = [language_speed(name, count, workers) for name in found]
    print(f"isolation: {resolve_isolation().summary()}; {os.cpu_count()} CPUs; {count} programs x 3 tests per language, "
          f"{workers} worker(s); missing here: {', '.join(sorted(set(languages) - set(found))) or 'none'}\n")
    print("| language | referee cold cache | referee warm cache | plain toolchain, compile each | plain, binary kept |")
    print("|---|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row['language']} | {row['referee_cold_per_s']:.2f}/s | {row['referee_warm_per_s']:.2f}/s "
              f"({row['referee_warm_cached']}/{count} cached) | {row['subprocess_cold_per_s']:.2f}/s | "
              f"{row['subprocess_warm_per_s']:.2f}/s |")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps({"isolation": resolve_isolation().level, "cpus": os.cpu_count(), "rows": rows},
                                     indent=2))


# HumanEval-X's task id prefixes, as its files name the languages.
HUMANEVAL_X_LANGUAGES = {"CPP": "cpp", "Java": "java", "JavaScript": "javascript", "Go": "go", "Rust": "rust",
                         "Python": "python"}
# A wrong program per row: the canonical solution that fails on entry, before it computes anything (every
# row's test calls the function, so no such program may pass). A statement each language accepts before
# the rest of the body (Java needs the `if`: an unconditional throw makes the rest unreachable, a compile error).
FAIL_ON_ENTRY = {"cpp": "    abort();\n", "java": "        if (true) throw new RuntimeException(\"wrong\");\n",
                 "javascript": "  throw new Error('wrong');\n", "go": "    panic(\"wrong\")\n",
                 "rust": "    panic!(\"wrong\");\n", "python": "    raise ValueError('wrong')\n"}


def humaneval_x_program(row: dict, language: str, body: str) -> str:
    """The whole function as a model writes it: the prompt (Rust: the declaration, as HumanEval-X's own
    evaluation assembles Rust) and ``body``."""
    return (row["declaration"] if language == "rust" else row["prompt"]) + body


def humaneval_x_tests(row: dict, language: str) -> dict:
    """The row as a ``humaneval`` test (Python: its test calls its own check; the entry point is read from it)."""
    tests = {"format": "humaneval", "language": language, "prompt": row["prompt"], "test": row["test"]}
    if language != "python":
        tests.update(declaration=row["declaration"], test_setup=row.get("test_setup", ""))
    return tests


def humaneval_x_cases(row: dict, language: str, mutant_count: int) -> list[tuple[str, str]]:
    """The bodies judged for ``row``: (kind, body) for the canonical solution, the one failing on entry,
    and up to ``mutant_count`` mutants of the canonical solution (:func:`~benchmarks.humaneval_x_harness.mutants`)."""
    canonical = row["canonical_solution"]
    return [("canonical", canonical), ("fails on entry", FAIL_ON_ENTRY[language] + canonical),
            *(("mutant", body) for body in mutants(canonical, mutant_count))]


def humaneval_x_language(problems: list[dict], language: str, workers: int, timeout: float, mutant_count: int) -> dict:
    """One language's row of the report: every case judged by referee (timed) and, but for the programs
    failing on entry (wrong by construction), run in the dataset's own harness; where they differ, both words."""
    cases = [(row, kind, body) for row in problems for kind, body in humaneval_x_cases(row, language, mutant_count)]
    started = time.perf_counter()
    verdicts = code.verify_batch([f"```{language}\n{humaneval_x_program(row, language, body)}\n```" for row, _, body in cases],
                                 [humaneval_x_tests(row, language) for row, _, _ in cases], workers=workers, timeout=timeout)
    seconds = time.perf_counter() - started
    with ThreadPoolExecutor(max_workers=workers) as pool:
        references = list(pool.map(lambda case: (False, "wrong by construction") if case[1] == "fails on entry"
                                   else harness_passes(case[0], language, case[2], timeout), cases))
    counts: dict[str, dict[str, int]] = {}
    disagreements = []
    for (row, kind, body), verdict, (passes, said) in zip(cases, verdicts, references):
        count = counts.setdefault(kind, {"programs": 0, "judge_passed": 0, "harness_passed": 0, "agreed": 0})
        count["programs"] += 1
        count["judge_passed"] += verdict.correct
        count["harness_passed"] += passes
        count["agreed"] += verdict.correct == passes
        if verdict.correct != passes:
            disagreements.append({"task": row["task_id"], "kind": kind, "status": verdict.status,
                                  "reason": verdict.reason.splitlines()[0][:200], "dataset_harness": said,
                                  **({"body": body} if kind == "mutant" else {})})
    return {"language": language, "problems": len(problems), "toolchain": find_toolchain(language).version,
            "cases": counts, "errors": sum(v.status == "error" for v in verdicts),
            "programs_per_s": len(cases) / seconds, "disagreements": disagreements}


def humaneval_x_report(paths: list[str], workers: int, timeout: float, path: str, mutant_count: int = 1) -> None:
    """Judge every canonical solution of each HumanEval-X file, a wrong program per row (the solution failing
    on entry) and mutants of the solution; per language, agreement with HumanEval-X's own harness run
    directly (:mod:`benchmarks.humaneval_x_harness`) and programs per second, and every disagreement."""
    rows = []
    for file in paths:
        problems = load_jsonl(file)
        language = HUMANEVAL_X_LANGUAGES[problems[0]["task_id"].split("/")[0]]
        if find_toolchain(language) is None:
            rows.append({"language": language, "problems": len(problems), "missing": "no toolchain here"})
            continue
        rows.append(humaneval_x_language(problems, language, workers, timeout, mutant_count))
    print(f"isolation: {resolve_isolation().summary()}; {os.cpu_count()} CPUs; {workers} worker(s)\n")
    print("| language | canonical: referee / dataset's harness | failing on entry: failed | mutants: referee / harness "
          "passed, agreeing | agreement | programs/s (cold cache) |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        if "missing" in row:
            print(f"| {row['language']} | - | - | - | - | {row['missing']} |")
            continue
        right, entry = row["cases"]["canonical"], row["cases"]["fails on entry"]
        mutant = row["cases"].get("mutant", {"programs": 0, "judge_passed": 0, "harness_passed": 0, "agreed": 0})
        total = sum(count["programs"] for count in row["cases"].values())
        agreed = sum(count["agreed"] for count in row["cases"].values())
        print(f"| {row['language']} | {right['judge_passed']} / {right['harness_passed']} of {right['programs']} "
              f"| {entry['programs'] - entry['judge_passed']}/{entry['programs']} | {mutant['judge_passed']} / "
              f"{mutant['harness_passed']} of {mutant['programs']}, {mutant['agreed']} | {agreed}/{total} "
              f"| {row['programs_per_s']:.2f} |")
    for row in rows:
        for item in row.get("disagreements", ()):
            print(f"  {item['task']} ({item['kind']}): referee {item['status']}: {item['reason'][:160]}\n"
                  f"    in the dataset's harness: {item['dataset_harness']}")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps({"isolation": resolve_isolation().level, "rows": rows}, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--humaneval", help="HumanEval.jsonl(.gz): prompt, canonical_solution, test, entry_point")
    parser.add_argument("--mbpp", help="MBPP JSONL: code, test_list, test_setup_code")
    parser.add_argument("--languages", nargs="+", choices=sorted(SOLUTIONS),
                        help="instead: per-language throughput, compile cache cold and warm, against the plain toolchain")
    parser.add_argument("--humaneval-x", nargs="+", metavar="FILE",
                        help="instead: HumanEval-X files (humaneval_<lang>.jsonl.gz): agreement per language")
    parser.add_argument("--mutants", type=int, default=1, help="mutants of each canonical solution (--humaneval-x)")
    parser.add_argument("--programs", type=int, default=6, help="distinct programs per language (--languages)")
    parser.add_argument("--workers", type=int, default=1, help="judge workers (--languages; 1 keeps every warm "
                                                               "program on the judge that compiled it)")
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds per test (human-eval's default: 3)")
    parser.add_argument("--mbpp-timeout", type=float, default=10.0,
                        help="seconds per MBPP assert (task 123's reference takes ~3 s on a busy machine)")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes per checker and worker count (best kept)")
    parser.add_argument("--json", default="benchmarks/results/code.json", help="where to write the results")
    args = parser.parse_args()
    if args.humaneval_x:
        humaneval_x_report(args.humaneval_x, args.workers, max(args.timeout, 10.0),
                           args.json if args.json != "benchmarks/results/code.json" else "benchmarks/results/code_humaneval_x.json",
                           args.mutants)
        return
    if args.languages:
        languages_report(args.languages, args.programs, args.workers,
                         args.json if args.json != "benchmarks/results/code.json" else "benchmarks/results/code_languages.json")
        return
    if not (args.humaneval and args.mbpp):
        parser.error("give --humaneval and --mbpp (or --languages)")

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
