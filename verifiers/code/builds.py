"""Building and running one program in the languages of :mod:`.languages`: the compile job, the
run jobs, and how a run's end is classified (``OK``, ``TLE``, ``MLE``, ``RE``, ``OLE``).

The compile step is a job of its own in the sandbox (its own time, memory and output limits, no
network), whose artefacts the worker reads back; they are kept here, keyed by the hash of the
toolchain, the command and the source, so a program seen again in this judge worker is not
compiled again, and no program can write what a later one runs. Each run is a fresh job that
gets the artefacts as read-only files, runs them on its stdin, and is judged on its CPU time (a
wall-clock guard stops one that sleeps). What the output means is for the judges
(:mod:`.native`, :mod:`.humaneval_x`, :mod:`.call_tests`) to say.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import signal
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ..sandbox.channel import ChannelClosed, ChannelTimeout, MessageTooLarge, recv_message
from ..sandbox.limits import Limits
from ..sandbox.sandbox import KilledFromOutside, Sandbox
from ..sandbox.wire import WireError
from .languages import Language, Toolchain
from .problem_limits import ProblemLimits

# A compile job: generous, since a compiler is not the program, but bounded (a template bomb is the program's fault).
COMPILE_SECONDS = 60.0
COMPILE_MEMORY_MB = 2048
COMPILE_OUTPUT_BYTES = 64 << 10
ARTEFACT_BYTES = 64 << 20
_EXIT_GRACE = 0.5
_CACHE_ENTRIES = 64
_COMPILER_LINES = 8
# A line of a compiler's or linker's output that carries an error (g++, javac, rustc, node, ld; Go's file:line:col:).
# node ends every crash with its version, below the error's stack: never the cause.
_BANNER = re.compile(r"^Node\.js v\d", re.MULTILINE)
_ERROR_LINE = re.compile(r"(?i)\berror\b|error:|undefined reference|cannot find -l|^\S+\.go:\d+:\d+: ")
# What each verdict is as an outcome kind (the Python formats' words), for Verdict.details["tests"].
KINDS = {"OK": "passed", "WA": "wrong", "TLE": "timeout", "MLE": "memory", "RE": "crashed", "OLE": "output",
         "CE": "compile"}
class ToolchainUnusable(Exception):
    """A toolchain found on the host cannot run inside the sandbox: ``error``, not the program's fault.

    Example:
        >>> str(ToolchainUnusable("cannot run /usr/bin/g++"))
        'cannot run /usr/bin/g++'
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


def first_error_lines(text: str) -> str:
    """What a compiler or linker said, from its first error line on (the line that carries the cause:
    a link error after pages of notes, Go's ``imported and not used`` after ``# command-line-arguments``),
    at most :data:`_COMPILER_LINES` lines and 800 characters; from the start when no line reads as an error.

    Example:
        >>> print(first_error_lines("main.cpp: In function 'int f()':\\nnote: candidate\\n/usr/bin/ld: main.o: in function `f':\\n"
        ...                         "main.cpp:(.text+0x1): undefined reference to `MD5_Init'\\ncollect2: error: ld returned 1"))
        main.cpp:(.text+0x1): undefined reference to `MD5_Init'
        collect2: error: ld returned 1
        >>> first_error_lines("# command-line-arguments\\n./main.go:4:2: 'fmt' imported and not used")
        "./main.go:4:2: 'fmt' imported and not used"
    """
    lines = [line.rstrip() for line in text.strip().splitlines()]
    start = next((at for at, line in enumerate(lines) if _ERROR_LINE.search(line)), 0)
    return "\n".join(lines[start:start + _COMPILER_LINES])[:800]


def build(sandbox: Sandbox, language: Language, toolchain: Toolchain, code: str,
          extra_files: dict[str, str] | None = None) -> Build:
    """Compile ``code`` in a job of its own, or take it from this judge's cache.

    ``extra_files`` (a checker's ``testlib.h``, say) are put beside the source for the compiler.

    Example:
        >>> from referee.verifiers.sandbox.isolation import isolation_of
        >>> from referee.verifiers.code.languages import LANGUAGES, find_toolchain
        >>> sandbox = Sandbox(isolation_of("basic"), uid=None)
        >>> cpp = LANGUAGES["cpp"]
        >>> first = build(sandbox, cpp, find_toolchain("cpp"), "int main() { return 0; }")
        >>> first.ok, build(sandbox, cpp, find_toolchain("cpp"), "int main() { return 0; }").cached
        (True, True)
        >>> print(build(sandbox, cpp, find_toolchain("cpp"), "int main() { return x; }").message)
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
    said = first_error_lines(report["stdout"].decode("utf-8", "replace"))
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
        >>> from referee.verifiers.sandbox.isolation import isolation_of
        >>> from referee.verifiers.code.languages import LANGUAGES, find_toolchain
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
    last = next((line for line in reversed(stderr.strip().splitlines()) if line.strip() and not _BANNER.match(line)), "")
    if _BANNER.search(stderr):  # node: the error's own line, above its stack (indented "at ..." lines)
        last = next((line for line in reversed(stderr.strip().splitlines())
                     if line.strip() and not line[:1].isspace() and not _BANNER.match(line)), last)
    said = f": {last.strip()[:200]}" if last else ""
    if number is not None:
        name = signal.Signals(number).name if number in signal.Signals._value2member_map_ else str(number)
        return Run("RE", f"was killed by {name}{said}", stdout, cpu)
    if not report["ended_alone"]:
        return Run("RE", "closed the judge's channel and did not end", stdout, cpu)
    if report["exit_code"] != 0:
        return Run("RE", f"exited with code {report['exit_code']}{said}", stdout, cpu)
    return Run("OK", "ran cleanly", stdout, cpu)



def outcome(verdict: str, reason: str, cpu: float | None = None) -> dict[str, Any]:
    """One test's entry in ``Verdict.details["tests"]``.

    Example:
        >>> outcome("WA", "wrong output", 0.01)["kind"]
        'wrong'
    """
    return {"passed": verdict == "OK", "kind": KINDS[verdict], "reason": reason, "verdict": verdict,
            "cpu_seconds": None if cpu is None else round(cpu, 3)}


__all__ = ["ARTEFACT_BYTES", "COMPILE_SECONDS", "KINDS", "Build", "Run", "ToolchainUnusable", "build", "outcome", "run_built"]
