"""Judging programs in the languages of :mod:`.languages` (C++, C, Java, JavaScript, Rust, Go), and
any program with a checker: compile once, run once per test, judge on the trusted side.

Programs are built and run by :mod:`.builds` (a compile job, cached by source hash; a fresh job
per test, judged on its CPU time). ``stdio`` output is compared here, by tokens or by the
problem's checker, which runs as a sandboxed job of its own; ``humaneval`` tests go to
:mod:`.humaneval_x`, JavaScript's ``call`` tests to :mod:`.call_tests`. A verdict per test:
``OK``, ``WA``, ``TLE``, ``MLE``, ``RE``, ``OLE`` or ``CE``.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from ..sandbox.sandbox import KilledFromOutside, Sandbox, SandboxBroken, restart
from .builds import COMPILE_SECONDS, ToolchainUnusable, build, outcome, run_built
from .call_tests import CALL_RUNNERS, judge_calls
from .formats import CallTests, HumanEvalTests, StdioTests, TestsError, count_tests, parse_tests
from .humaneval_x import ASSEMBLERS, judge_function_tests
from .languages import LANGUAGES, Language, Toolchain, find_toolchain, language_of_tag, missing_toolchain
from .outputs import first_difference, stdout_matches
from .problem_limits import ProblemLimits, problem_limits
from .subtasks import read_subtasks, subtask_score

# A checker job: the dataset's program, trusted to be quick; its failures are not the program's fault.
CHECKER_LIMITS = ProblemLimits(10.0, 1024)
# testlib's exit codes: 0 ok, 1 wrong answer, 2 presentation error, 3 the checker failed, 4 dirt, 8 unexpected eof.
_CHECKER_WRONG = {1: "wrong answer", 2: "presentation error", 4: "extra output", 8: "unexpected end of output"}


class CheckerFailed(Exception):
    """The problem's checker did not give a verdict (it failed to build, crashed, ran out of time,
    or exited with testlib's ``_fail``): a dataset problem, ``error``.

    Example:
        >>> str(CheckerFailed("the checker exited with code 3"))
        'the checker exited with code 3'
    """


@dataclass(frozen=True)
class Checker:
    """A testlib-style checker: ``checker input output answer``, exit 0 accepts, 1 (or 2, 4, 8) rejects.

    Example:
        >>> read_checker({"checker": "int main() { return 0; }"}).language
        'cpp'
        >>> read_checker({}) is None
        True
    """

    code: str
    language: str = "cpp"
    files: tuple[tuple[str, str], ...] = ()


def read_checker(tests: dict[str, Any]) -> Checker | None:
    """The checker a tests dict names (``checker``, ``checker_language``, ``checker_files``), or ``None``.

    Example:
        >>> read_checker({"checker": "x", "checker_language": "brainfuck"})
        Traceback (most recent call last):
        ...
        referee.verifiers.code.formats.TestsError: tests['checker_language'] = 'brainfuck' is not a language I run; use one of c, cpp, go, java, javascript, python, rust.
    """
    code = tests.get("checker")
    if code is None:
        return None
    if not isinstance(code, str) or not code.strip():
        raise TestsError("tests['checker'] must be the checker's source code, a non-empty string.")
    language = tests.get("checker_language", "cpp")
    if language not in LANGUAGES:
        raise TestsError(f"tests['checker_language'] = {language!r} is not a language I run; "
                         f"use one of {', '.join(LANGUAGES)}.")
    files = tests.get("checker_files", {})
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise TestsError("tests['checker_files'] must map file names to their text (testlib.h, say).")
    return Checker(code, language, tuple(sorted(files.items())))


def check_output(sandbox: Sandbox, checker: Checker, stdin: str, got: str, expected: str) -> tuple[bool, str]:
    """Ask ``checker`` about one output: (accepted, its message). Raises :class:`CheckerFailed`.

    Example:
        >>> from referee.verifiers.sandbox.isolation import isolation_of
        >>> sandbox = Sandbox(isolation_of("basic"), uid=None)
        >>> same_sum = ("import sys\\n_, out, ans = (open(p).read().split() for p in sys.argv[1:])\\n"
        ...             "sys.exit(0 if sum(map(int, out)) == sum(map(int, ans)) else 1)")
        >>> checker = Checker(same_sum, "python")
        >>> check_output(sandbox, checker, "", "1 4", "2 3")[0], check_output(sandbox, checker, "", "1 1", "2 3")[0]
        (True, False)
        >>> sandbox.close()
    """
    language, toolchain = LANGUAGES[checker.language], find_toolchain(checker.language)
    if toolchain is None:
        raise CheckerFailed(f"the checker is {language.title}, and {missing_toolchain(checker.language)}")
    program = build(sandbox, language, toolchain, checker.code, dict(checker.files))
    if not program.ok:
        raise CheckerFailed(f"the checker does not compile: {program.message}")
    files = {name: text.encode("utf-8", "surrogateescape")
             for name, text in (("input.txt", stdin), ("output.txt", got), ("answer.txt", expected))}
    run = run_built(sandbox, language, toolchain, checker.code, program, "", CHECKER_LIMITS,
                    arguments=("input.txt", "output.txt", "answer.txt"), files=files, output_bytes=1 << 16)
    if run.verdict == "OK":
        return True, "the checker accepted it"
    code = _exit_code(run.reason)
    if run.verdict == "RE" and code in _CHECKER_WRONG:
        return False, f"the checker says {_CHECKER_WRONG[code]}{run.reason.split(str(code), 1)[1]}"
    raise CheckerFailed(f"the checker {run.reason}")


def _exit_code(reason: str) -> int | None:
    prefix = "exited with code "
    if not reason.startswith(prefix):
        return None
    digits = reason[len(prefix):].split(":", 1)[0]
    return int(digits) if digits.isdigit() else None


def _judge_tests(sandbox: Sandbox, task: dict[str, Any], spec: StdioTests, language: Language,
                 toolchain: Toolchain, limits: ProblemLimits, checker: Checker | None) -> tuple[list[dict[str, Any]], int]:
    tests = task["tests"]
    abs_tol = float(tests.get("abs_tol", task.get("abs_tol", 0.0)))
    rel_tol = float(tests.get("rel_tol", task.get("rel_tol", 0.0)))
    program = build(sandbox, language, toolchain, task["code"])
    task["build"] = "cached" if program.cached else "compiled" if language.compile is not None else "none"
    if not program.ok:
        return [outcome("CE", f"compile error: {program.message}")] * len(spec.inputs), 1
    outcomes = []
    for stdin, expected in zip(spec.inputs, spec.outputs):
        run = run_built(sandbox, language, toolchain, task["code"], program, stdin, limits,
                        output_bytes=int(task.get("output_bytes", 4 << 20)))
        if run.verdict != "OK":
            outcomes.append(outcome(run.verdict, run.reason, run.cpu_seconds))
        elif checker is not None:
            accepted, message = check_output(sandbox, checker, stdin, run.stdout, expected)
            outcomes.append(outcome("OK" if accepted else "WA", "passed" if accepted else message, run.cpu_seconds))
        elif stdout_matches(run.stdout, expected, abs_tol=abs_tol, rel_tol=rel_tol):
            outcomes.append(outcome("OK", "passed", run.cpu_seconds))
        else:
            outcomes.append(outcome("WA", f"wrong output, {first_difference(run.stdout, expected)}", run.cpu_seconds))
    return outcomes, 1 + len(spec.inputs)


def formats_of(language: str) -> tuple[str, ...]:
    """The test formats programs in ``language`` are judged with here.

    Example:
        >>> formats_of("cpp"), formats_of("c"), formats_of("javascript")
        (('stdio', 'humaneval'), ('stdio',), ('stdio', 'humaneval', 'call'))
    """
    return ("stdio", *(("humaneval",) if language in ASSEMBLERS else ()), *(("call",) if language in CALL_RUNNERS else ()))


def root_jobs_refused(level: str) -> str:
    """Why a compiled program is not run where its jobs would be root: no process limit binds root,
    so a native fork bomb would fill the machine's process table within its time limit.

    Example:
        >>> root_jobs_refused("namespaces")
        "compiled programs are not run at isolation 'namespaces' as root: jobs there keep root's uid, which no process limit binds (a fork bomb would fill the machine's process table); use isolation 'full' or 'uid', which give jobs an uid of their own"
    """
    return (f"compiled programs are not run at isolation {level!r} as root: jobs there keep root's uid, which no "
            "process limit binds (a fork bomb would fill the machine's process table); use isolation 'full' or "
            "'uid', which give jobs an uid of their own")


def judge_native(sandbox: Sandbox, task: dict[str, Any]) -> dict[str, Any]:
    """Judge ``task`` (``code``, ``language``, ``tests`` in the ``stdio`` format, and the options) with ``sandbox``.

    Returns ``{"outcomes": [...], "jobs": n, "details": {...}}`` (and ``"score"``, the share of
    points won, when the tests have IOI-style ``subtasks``) or ``{"error": reason}`` when
    the result would not be the program's doing (a missing toolchain, unusable tests or checker,
    a failed sandbox).

    Example:
        >>> from referee.verifiers.sandbox.isolation import isolation_of
        >>> sandbox = Sandbox(isolation_of("basic"), uid=None)
        >>> tests = {"format": "call", "fn_name": "f", "inputs": [[1]], "outputs": [1]}
        >>> judge_native(sandbox, {"code": "int main() {}", "language": "cpp", "tests": tests, "timeout": 3.0})["error"]
        "tests format 'call' is not available for C++ programs; give stdio or humaneval tests."

    The programs themselves are judged in ``tests/verifiers/test_code_languages.py``.
    """
    name = task["language"]
    language = LANGUAGES[name]
    try:
        spec = parse_tests(task["tests"])
        kind = task["tests"].get("format")
        if kind not in formats_of(name):
            raise TestsError(f"tests format {kind!r} is not available for {language.title} programs; "
                             f"give {' or '.join(formats_of(name))} tests.")
        limits = problem_limits(task["tests"], timeout=float(task["timeout"]), memory_mb=int(task.get("memory_mb", 1024)))
        checker = read_checker(task["tests"])
        subtasks = read_subtasks(task["tests"], count_tests(spec))
    except TestsError as exc:
        return {"error": str(exc)}
    toolchain = find_toolchain(name)
    if toolchain is None:
        return {"error": missing_toolchain(name)}
    if not sandbox.isolation.own_uid and os.geteuid() == 0:
        return {"error": root_jobs_refused(sandbox.isolation.level)}
    details = {"language": name, "toolchain": toolchain.version, "time_limit": limits.time_seconds,
               "memory_limit_mb": limits.memory_mb}
    for attempt in range(2):
        try:
            if isinstance(spec, HumanEvalTests):
                outcomes, jobs = judge_function_tests(sandbox, task, spec, language, toolchain, limits), 2
            elif isinstance(spec, CallTests):
                outcomes, jobs = judge_calls(sandbox, task, spec, language, toolchain, limits)
            else:
                outcomes, jobs = _judge_tests(sandbox, task, spec, language, toolchain, limits, checker)
            result = {"outcomes": outcomes, "jobs": jobs,
                      "details": {**details, "build": task["build"], **task.get("assembled", {})}}
            if subtasks is not None:
                result["score"], result["details"]["subtasks"] = subtask_score(subtasks, [o["passed"] for o in outcomes])
            return result
        except SandboxBroken as exc:
            cannot_restart = restart(sandbox, exc)
            if cannot_restart:
                return {"error": cannot_restart}
            if attempt == 1 and sandbox.isolation.own_uid:  # jobs cannot touch the worker: it failed by itself
                return {"error": f"the sandbox worker failed twice on this program: {exc}"}
            if attempt == 1:  # without an own uid the program can kill its worker: that is its fault
                return {"outcomes": [outcome("RE", "the sandbox worker died twice while running this program "
                                                    "(without an own uid, the program can kill it)")] * count_tests(spec),
                        "jobs": 0, "details": details}
        except (ToolchainUnusable, CheckerFailed, KilledFromOutside, TestsError) as exc:
            return {"error": str(exc)}
        except Exception as exc:  # a bug here: not the program's fault
            return {"error": f"the judge failed: {type(exc).__name__}: {exc}"}
    raise AssertionError("unreachable")




def run_native(sandbox: Sandbox, task: dict[str, Any]) -> dict[str, Any]:
    """Compile and run ``task["code"]`` in ``task["language"]`` once on ``task["stdin"]``, judging
    nothing: ``{"run": {...}}`` as :meth:`~.session.ProgramSession.run_program` reports a run
    (``ended`` is ``compile_error`` when it does not compile), or ``{"error": reason}``.

    Example:
        >>> from referee.verifiers.sandbox.isolation import isolation_of
        >>> sandbox = Sandbox(isolation_of("basic"), uid=None)
        >>> task = {"code": "console.log(Number(require('fs').readFileSync(0, 'utf8')) * 2)", "language": "javascript",
        ...         "stdin": "21", "timeout": 5.0}
        >>> result = run_native(sandbox, task)  # as root, basic jobs keep root's uid: refused
        >>> result["error"].startswith("compiled programs are not run") if os.geteuid() == 0 else result["run"]["stdout"]
        True
        >>> sandbox.close()

    Runs at every level are in ``tests/verifiers/test_code_run.py``.
    """
    name = task["language"]
    language, toolchain = LANGUAGES[name], find_toolchain(name)
    if toolchain is None:
        return {"error": missing_toolchain(name)}
    if not sandbox.isolation.own_uid and os.geteuid() == 0:
        return {"error": root_jobs_refused(sandbox.isolation.level)}
    limits = ProblemLimits(min(float(task["timeout"]), 60.0), int(task.get("memory_mb", 1024)))
    for attempt in range(2):
        try:
            program = build(sandbox, language, toolchain, task["code"])
            if not program.ok:
                return {"run": {"ended": "compile_error", "exit_code": None, "stdout": "", "stderr": program.message,
                                "seconds": 0.0, "reason": f"compile error: {program.message}"}}
            started = time.monotonic()
            run = run_built(sandbox, language, toolchain, task["code"], program, str(task["stdin"]), limits,
                            output_bytes=int(task.get("output_bytes", 4 << 20)))
            seconds = time.monotonic() - started
            ended = {"OK": "finished", "TLE": "timeout", "MLE": "memory", "OLE": "output"}.get(run.verdict, "crashed")
            if run.verdict == "RE" and run.exit_code is not None:
                ended = "finished"
            return {"run": {"ended": ended, "exit_code": run.exit_code if ended == "finished" else None,
                            "stdout": run.stdout, "stderr": run.stderr, "seconds": seconds, "reason": run.reason}}
        except SandboxBroken as exc:
            cannot_restart = restart(sandbox, exc)
            if cannot_restart or attempt == 1:
                return {"error": cannot_restart or f"the sandbox worker failed twice while running this program: {exc}"}
        except (ToolchainUnusable, KilledFromOutside) as exc:
            return {"error": str(exc)}
        except Exception as exc:  # a bug here: not the program's fault
            return {"error": f"the judge failed: {type(exc).__name__}: {exc}"}
    raise AssertionError("unreachable")


def tests_language(tests: dict[str, Any]) -> str | None:
    """The language a tests dict names (``language``; any fence tag of it), ``"python"`` for the
    formats that call Python functions, or ``None`` to let the completion's fence decide.

    Example:
        >>> tests_language({"format": "stdio", "language": "C++"}), tests_language({"format": "stdio"})
        ('cpp', None)
        >>> tests_language({"format": "asserts"})
        'python'
        >>> tests_language({"format": "stdio", "language": "cobol"})
        Traceback (most recent call last):
        ...
        referee.verifiers.code.formats.TestsError: tests['language'] = 'cobol' is not a language I run; use one of c, cpp, go, java, javascript, python, rust.
    """
    named = tests.get("language")
    if named is None:
        return None if tests.get("format") == "stdio" else "python"
    language = language_of_tag(named) if isinstance(named, str) else None
    if language is None:
        raise TestsError(f"tests['language'] = {named!r} is not a language I run; use one of {', '.join(LANGUAGES)}.")
    return language


def judged_natively(tests: dict[str, Any], language: str) -> bool:
    """Whether a program goes through :func:`judge_native`: every language but Python, and Python
    stdio tests that name a checker, subtasks or a per-problem limit (judged on CPU time then).

    Example:
        >>> judged_natively({"format": "stdio"}, "cpp"), judged_natively({"format": "stdio"}, "python")
        (True, False)
        >>> judged_natively({"format": "stdio", "time_limit": 2}, "python")
        True
    """
    return language != "python" or any(tests.get(key) not in (None, 0, "") for key in _NATIVE_KEYS)


def native_budget(tests: dict[str, Any], timeout: float, memory_mb: int) -> float:
    """Seconds a judge may take on a program judged natively: its compile and every run reaching
    its guard, with the checker's too, twice (a worker restart), plus a margin. A ``humaneval``
    test is one run.

    Example:
        >>> native_budget({"format": "stdio", "inputs": ["1"], "outputs": ["1"], "time_limit": 1}, 3.0, 256)
        140.0
        >>> native_budget({"format": "humaneval", "test": "..."}, 3.0, 256)
        152.0
    """
    limits = problem_limits(tests, timeout=timeout, memory_mb=memory_mb)
    checker = tests.get("checker") is not None
    count = 1 if tests.get("format") == "humaneval" else len(tests.get("inputs") or ())
    runs = count * (limits.wall_seconds + 1 + (CHECKER_LIMITS.wall_seconds + 1 if checker else 0))
    return 2 * (COMPILE_SECONDS * (2 if checker else 1) + runs) + 10.0


_NATIVE_KEYS = ("checker", "time_limit", "memory_limit", "memory_limit_bytes", "subtasks")


__all__ = ["Checker", "CheckerFailed", "check_output", "formats_of", "judge_native", "judged_natively", "native_budget",
           "read_checker", "root_jobs_refused", "run_native", "tests_language"]
