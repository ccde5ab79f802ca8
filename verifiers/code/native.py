"""Judging programs in the languages of :mod:`.languages` (C++, C, Java, JavaScript, Rust, Go), and
any program with a checker: compile once, run once per test, judge on the trusted side.

The compile step is a job of its own in the sandbox (its own time, memory and output limits, no
network), whose artefacts the worker reads back; the judge keeps them, keyed by the hash of the
toolchain, the command and the source, so a program seen again in this judge worker is not
compiled again, and no program can write what a later one runs. Each test is a fresh job that
gets the artefacts as read-only files, runs them on the test's stdin, and is judged on its CPU
time (a wall-clock guard stops one that sleeps). The output is compared here, by tokens or by the
problem's checker, which runs as a sandboxed job of its own. A verdict per test: ``OK``, ``WA``,
``TLE``, ``MLE``, ``RE``, ``OLE`` or ``CE``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import signal
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from .channel import ChannelClosed, ChannelTimeout, MessageTooLarge, recv_message
from .call_tests import CALL_RUNNERS, judge_calls
from .formats import CallTests, HumanEvalTests, StdioTests, TestsError, count_tests, parse_tests
from .humaneval_x import ASSEMBLERS, judge_function_tests
from .languages import LANGUAGES, Language, Toolchain, find_toolchain, language_of_tag, missing_toolchain
from .limits import Limits
from .outputs import first_difference, stdout_matches
from .problem_limits import ProblemLimits, problem_limits
from .sandbox import Sandbox, SandboxBroken, restart
from .session import KilledFromOutside
from .subtasks import read_subtasks, subtask_score
from .wire import WireError

# A compile job: generous, since a compiler is not the program, but bounded (a template bomb is the program's fault).
COMPILE_SECONDS = 60.0
COMPILE_MEMORY_MB = 2048
COMPILE_OUTPUT_BYTES = 64 << 10
ARTEFACT_BYTES = 64 << 20
# A checker job: the dataset's program, trusted to be quick; its failures are not the program's fault.
CHECKER_LIMITS = ProblemLimits(10.0, 1024)
_EXIT_GRACE = 0.5
_CACHE_ENTRIES = 64
_COMPILER_LINES = 8
# What each verdict is as an outcome kind (the Python formats' words), for Verdict.details["tests"].
KINDS = {"OK": "passed", "WA": "wrong", "TLE": "timeout", "MLE": "memory", "RE": "crashed", "OLE": "output",
         "CE": "compile"}
# testlib's exit codes: 0 ok, 1 wrong answer, 2 presentation error, 3 the checker failed, 4 dirt, 8 unexpected eof.
_CHECKER_WRONG = {1: "wrong answer", 2: "presentation error", 4: "extra output", 8: "unexpected end of output"}


class ToolchainUnusable(Exception):
    """A toolchain found on the host cannot run inside the sandbox: ``error``, not the program's fault.

    Example:
        >>> str(ToolchainUnusable("cannot run /usr/bin/g++"))
        'cannot run /usr/bin/g++'
    """


class CheckerFailed(Exception):
    """The problem's checker did not give a verdict (it failed to build, crashed, ran out of time,
    or exited with testlib's ``_fail``): a dataset problem, ``error``.

    Example:
        >>> str(CheckerFailed("the checker exited with code 3"))
        'the checker exited with code 3'
    """


@dataclass(frozen=True)
class Build:
    """A compiled program: its artefacts (file name -> bytes), or ``None`` and the compiler's first
    lines; ``cached`` when this judge had built it before.

    Example:
        >>> Build(None, "main.cpp:1:1: error: 'x' does not name a type").ok
        False
    """

    files: dict[str, bytes] | None
    message: str = ""
    cached: bool = False

    @property
    def ok(self) -> bool:
        """It compiled."""
        return self.files is not None


@dataclass(frozen=True)
class Run:
    """One job's end, as the judge classifies it: a verdict (``OK`` here means only that it ran
    cleanly; the output is judged next), a reason, the stdout, and the CPU seconds.

    Example:
        >>> Run("TLE", "used 2.10 s of CPU time, over the limit of 2 s", "", 2.1).verdict
        'TLE'
    """

    verdict: str
    reason: str
    stdout: str
    cpu_seconds: float | None
    stderr: str = ""
    exit_code: int | None = None


_BUILDS: OrderedDict[str, Build] = OrderedDict()


def _exec_request(argv: list[str], files: dict[str, bytes], limits: Limits, wall: float, *, stdin: bytes = b"",
                  collect: tuple[str, ...] = (), merge_stderr: bool = False) -> dict[str, Any]:
    return {"mode": "exec", "argv": argv, "files": files, "stdin": stdin, "limits": limits.to_dict(),
            "deadline_s": wall + 1.0, "collect": list(collect), "collect_bytes": ARTEFACT_BYTES,
            "merge_stderr": merge_stderr, "code": "", "names": []}


def _job(sandbox: Sandbox, request: dict[str, Any], wall: float) -> tuple[dict[str, Any], bool]:
    """Run one exec job to its end (or ``wall`` seconds): the worker's report, and whether the wall
    clock ran out. Raises :class:`ToolchainUnusable` when the job could not start its program."""
    channel = sandbox.start_job(request)
    deadline, first, timed_out = time.monotonic() + wall, None, False
    try:
        first = recv_message(channel, deadline=deadline, max_bytes=1 << 12)  # ours, before the program runs
        while first == ("started",):  # until the program ends: what it writes on the channel is never read
            recv_message(channel, deadline=deadline, max_bytes=1 << 16)
    except ChannelTimeout:
        timed_out = True
    except (ChannelClosed, MessageTooLarge, WireError):
        pass
    finally:
        channel.close()
    report = sandbox.end_job(0.0 if timed_out else _EXIT_GRACE)
    if type(first) is tuple and len(first) == 2 and first[0] == "exec_error":
        raise ToolchainUnusable(str(first[1]))
    if report.get("killed_from_outside"):
        raise KilledFromOutside("the job was killed by a SIGKILL the sandbox did not send (the OOM killer or an operator)")
    return report, timed_out


def _first_lines(text: str) -> str:
    lines = [line.rstrip() for line in text.strip().splitlines()][:_COMPILER_LINES]
    return "\n".join(lines)[:800]


def build(sandbox: Sandbox, language: Language, toolchain: Toolchain, code: str,
          extra_files: dict[str, str] | None = None) -> Build:
    """Compile ``code`` in a job of its own, or take it from this judge's cache.

    ``extra_files`` (a checker's ``testlib.h``, say) are put beside the source for the compiler.

    Example:
        >>> from referee.verifiers.code.isolation import isolation_of
        >>> from referee.verifiers.code.languages import LANGUAGES, find_toolchain
        >>> sandbox = Sandbox(isolation_of("basic"), uid=None)
        >>> cpp = LANGUAGES["cpp"]
        >>> first = build(sandbox, cpp, find_toolchain("cpp"), "int main() { return 0; }")
        >>> first.ok, build(sandbox, cpp, find_toolchain("cpp"), "int main() { return 0; }").cached
        (True, True)
        >>> print(build(sandbox, cpp, find_toolchain("cpp"), "int main() { return x; }").message)
        main.cpp: In function ...int main()...:
        main.cpp:1:21: error: ...x... was not declared in this scope
        ...
        >>> sandbox.close()
    """
    names = language.files(language, code)
    source = {names["source"]: code.encode("utf-8", "surrogateescape")}
    if language.compile is None:
        return Build(source)
    extra = {name: text.encode("utf-8", "surrogateescape") for name, text in (extra_files or {}).items()}
    argv = language.fill(language.compile, toolchain.tools, names, COMPILE_MEMORY_MB)
    key = hashlib.sha256(repr((toolchain.version, argv, sorted(extra.items()), code)).encode("utf-8", "surrogateescape"))
    known = _BUILDS.get(key.hexdigest())
    if known is not None:
        _BUILDS.move_to_end(key.hexdigest())
        return dataclasses.replace(known, cached=True)
    limits = Limits(cpu_seconds=int(COMPILE_SECONDS), memory_bytes=(COMPILE_MEMORY_MB + language.extra_memory_mb) << 20,
                    processes=64, open_files=256, file_bytes=ARTEFACT_BYTES, output_bytes=COMPILE_OUTPUT_BYTES,
                    tmp_bytes=sandbox.tmp_mb << 20)
    request = _exec_request(argv, {**extra, **source}, limits, COMPILE_SECONDS, collect=language.artifacts,
                            merge_stderr=True)
    report, timed_out = _job(sandbox, request, COMPILE_SECONDS)
    said = _first_lines(report["stdout"].decode("utf-8", "replace"))
    if timed_out or report["killed"] == "deadline" or report["signal"] == signal.SIGXCPU:
        result = Build(None, f"the compiler ran past its {COMPILE_SECONDS:g} s")
    elif report["killed"] in ("output", "disk") or report["signal"] == signal.SIGXFSZ:
        result = Build(None, f"the compiler's output went past its limits\n{said}".strip())
    elif report["exit_code"] != 0:
        result = Build(None, said or f"the compiler failed (exit code {report['exit_code']}, signal {report['signal']})")
    elif isinstance(report["files"], str):
        result = Build(None, report["files"])
    elif not report["files"]:
        result = Build(None, f"the compiler made none of {', '.join(language.artifacts)}\n{said}".strip())
    else:
        result = Build(dict(report["files"]))
    _BUILDS[key.hexdigest()] = result
    while len(_BUILDS) > _CACHE_ENTRIES:
        _BUILDS.popitem(last=False)
    return result


def run_built(sandbox: Sandbox, language: Language, toolchain: Toolchain, code: str, program: Build, stdin: str,
              limits: ProblemLimits, *, arguments: tuple[str, ...] = (), files: dict[str, bytes] | None = None,
              output_bytes: int = 4 << 20) -> Run:
    """Run a built program once on ``stdin`` (with ``arguments`` and extra ``files`` beside it) and classify its end.

    Example:
        >>> from referee.verifiers.code.isolation import isolation_of
        >>> sandbox = Sandbox(isolation_of("basic"), uid=None)
        >>> c, tools = LANGUAGES["c"], find_toolchain("c")
        >>> code = '#include <stdio.h>\\nint main() { int a, b; scanf("%d %d", &a, &b); printf("%d\\\\n", a + b); }'
        >>> run = run_built(sandbox, c, tools, code, build(sandbox, c, tools, code), "2 3\\n", ProblemLimits(1.0, 64))
        >>> run.verdict, run.stdout
        ('OK', '5\\n')
        >>> spin = "int main() { for (;;) {} }"
        >>> run_built(sandbox, c, tools, spin, build(sandbox, c, tools, spin), "", ProblemLimits(0.5, 64)).verdict
        'TLE'
        >>> sandbox.close()
    """
    assert program.files is not None
    names = language.files(language, code)
    argv = language.fill(language.run, toolchain.tools, names, limits.memory_mb) + list(arguments)
    job_limits = Limits(cpu_seconds=limits.cpu_rlimit, memory_bytes=(limits.memory_mb + language.extra_memory_mb) << 20,
                        processes=language.processes, output_bytes=output_bytes, tmp_bytes=sandbox.tmp_mb << 20)
    request = _exec_request(argv, {**program.files, **(files or {})}, job_limits, limits.wall_seconds,
                            stdin=stdin.encode("utf-8", "surrogateescape"))
    report, timed_out = _job(sandbox, request, limits.wall_seconds)
    run = _classify(report, timed_out, language, limits, sandbox.tmp_mb, output_bytes)
    return dataclasses.replace(run, stderr=report["stderr"], exit_code=report["exit_code"])


def _classify(report: dict[str, Any], timed_out: bool, language: Language, limits: ProblemLimits, tmp_mb: int,
              output_bytes: int) -> Run:
    stdout, stderr, cpu = report["stdout"].decode("utf-8", "replace"), report["stderr"], report["cpu_seconds"]
    number = report["signal"]
    if timed_out or report["killed"] == "deadline":
        return Run("TLE", f"ran past the wall-clock guard of {limits.wall_seconds:g} s "
                          f"(the limit is {limits.time_seconds:g} s of CPU time)", stdout, cpu)
    if number == signal.SIGXCPU or (cpu is not None and cpu > limits.time_seconds):
        used = f"{cpu:.2f} s" if cpu is not None else "all its"
        return Run("TLE", f"used {used} of CPU time, over the limit of {limits.time_seconds:g} s", stdout, cpu)
    if report["killed"] in ("output", "disk") or number == signal.SIGXFSZ:
        return Run("OLE", f"printed or wrote more than its limit ({output_bytes} bytes of output, "
                          f"{tmp_mb} MiB of files)", stdout, cpu)
    if any(marker in stderr for marker in language.memory_markers):
        return Run("MLE", f"ran out of memory (the limit is {limits.memory_mb} MB)", stdout, cpu)
    last = next((line for line in reversed(stderr.strip().splitlines()) if line.strip()), "")
    said = f": {last.strip()[:200]}" if last else ""
    if number is not None:
        name = signal.Signals(number).name if number in signal.Signals._value2member_map_ else str(number)
        return Run("RE", f"was killed by {name}{said}", stdout, cpu)
    if not report["ended_alone"]:
        return Run("RE", "closed the judge's channel and did not end", stdout, cpu)
    if report["exit_code"] != 0:
        return Run("RE", f"exited with code {report['exit_code']}{said}", stdout, cpu)
    return Run("OK", "ran cleanly", stdout, cpu)


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
        >>> from referee.verifiers.code.isolation import isolation_of
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


def _outcome(verdict: str, reason: str, cpu: float | None = None) -> dict[str, Any]:
    return {"passed": verdict == "OK", "kind": KINDS[verdict], "reason": reason, "verdict": verdict,
            "cpu_seconds": None if cpu is None else round(cpu, 3)}


def _judge_tests(sandbox: Sandbox, task: dict[str, Any], spec: StdioTests, language: Language,
                 toolchain: Toolchain, limits: ProblemLimits, checker: Checker | None) -> tuple[list[dict[str, Any]], int]:
    tests = task["tests"]
    abs_tol = float(tests.get("abs_tol", task.get("abs_tol", 0.0)))
    rel_tol = float(tests.get("rel_tol", task.get("rel_tol", 0.0)))
    program = build(sandbox, language, toolchain, task["code"])
    task["build"] = "cached" if program.cached else "compiled" if language.compile is not None else "none"
    if not program.ok:
        return [_outcome("CE", f"compile error: {program.message}")] * len(spec.inputs), 1
    outcomes = []
    for stdin, expected in zip(spec.inputs, spec.outputs):
        run = run_built(sandbox, language, toolchain, task["code"], program, stdin, limits,
                        output_bytes=int(task.get("output_bytes", 4 << 20)))
        if run.verdict != "OK":
            outcomes.append(_outcome(run.verdict, run.reason, run.cpu_seconds))
        elif checker is not None:
            accepted, message = check_output(sandbox, checker, stdin, run.stdout, expected)
            outcomes.append(_outcome("OK" if accepted else "WA", "passed" if accepted else message, run.cpu_seconds))
        elif stdout_matches(run.stdout, expected, abs_tol=abs_tol, rel_tol=rel_tol):
            outcomes.append(_outcome("OK", "passed", run.cpu_seconds))
        else:
            outcomes.append(_outcome("WA", f"wrong output, {first_difference(run.stdout, expected)}", run.cpu_seconds))
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
        >>> from referee.verifiers.code.isolation import isolation_of
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
            result = {"outcomes": outcomes, "jobs": jobs, "details": {**details, "build": task["build"]}}
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
                return {"outcomes": [_outcome("RE", "the sandbox worker died twice while running this program "
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
        >>> from referee.verifiers.code.isolation import isolation_of
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
    its guard, with the checker's too, twice (a worker restart), plus a margin.

    Example:
        >>> native_budget({"format": "stdio", "inputs": ["1"], "outputs": ["1"], "time_limit": 1}, 3.0, 256)
        140.0
    """
    limits = problem_limits(tests, timeout=timeout, memory_mb=memory_mb)
    checker = tests.get("checker") is not None
    runs = len(tests.get("inputs") or ()) * (limits.wall_seconds + 1 + (CHECKER_LIMITS.wall_seconds + 1 if checker else 0))
    return 2 * (COMPILE_SECONDS * (2 if checker else 1) + runs) + 10.0


_NATIVE_KEYS = ("checker", "time_limit", "memory_limit", "memory_limit_bytes", "subtasks")


__all__ = ["Build", "Checker", "Run", "build", "check_output", "formats_of", "judge_native", "judged_natively",
           "native_budget", "read_checker", "run_built", "run_native", "tests_language"]
