"""One program under test, seen from the trusted judge: its job, the calls into it, and why a call failed.

A :class:`ProgramSession` starts a job when a test needs one, asks it for the names the tests
use, forwards calls (arguments out, a plain value back), and after a test that killed the job
(timeout, crash, limit) starts a fresh one for the next test. Everything the program sends is
read with a deadline and a size cap, in the strict wire encoding.
"""

from __future__ import annotations

import builtins
import socket
import time
from dataclasses import dataclass
from typing import Any

from ..sandbox.channel import ChannelClosed, ChannelTimeout, MessageTooLarge, recv_message, send_message
from ..sandbox.limits import DEFAULT_TMP_MB, Limits
from ..sandbox.sandbox import KilledFromOutside, Sandbox, job_ending
from ..sandbox.wire import WireError
from .outputs import short_repr

# Seconds a job whose channel closed gets to finish exiting, so its exit status can be read.
_EXIT_GRACE = 0.5


@dataclass(frozen=True)
class Outcome:
    """How one test went: ``passed``, a short ``kind`` and a readable ``reason``.

    Kinds: ``passed``, ``wrong`` (wrong answer or failed assert), ``exception`` (the program
    raised), ``timeout``, ``memory``, ``output`` (printed or returned too much), ``crashed``,
    ``exited``, ``unsendable`` (returned something that is not plain data), ``load`` (the
    program failed before any test could run).

    Example:
        >>> Outcome(False, "timeout", "no answer within 1.0 s").to_dict()["kind"]
        'timeout'
    """

    passed: bool
    kind: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the wire and for ``Verdict.details``."""
        return {"passed": self.passed, "kind": self.kind, "reason": self.reason}


class CandidateFailure(BaseException):
    """A call into the program gave no value. A ``BaseException``, so that test code's
    ``except Exception`` cannot swallow a timeout or a crash and pass the test anyway.

    Example:
        >>> CandidateFailure("timeout", "gave no answer within 1 s").outcome
        Outcome(passed=False, kind='timeout', reason='gave no answer within 1 s')
    """

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.outcome = Outcome(False, kind, reason)


class ProgramError(Exception):
    """The program raised an exception that has no built-in counterpart on the trusted side.

    Example:
        >>> str(mirror_exception("InvalidMove", "e4 is taken"))
        'InvalidMove: e4 is taken'
    """


def mirror_exception(type_name: str, message: str) -> Exception:
    """The trusted-side exception for one the program raised: the built-in class of that name
    when there is one (so tests that expect ``ValueError`` work), else :class:`ProgramError`.
    Either carries ``program_exception`` = the program's type name.

    Example:
        >>> exc = mirror_exception("ValueError", "bad")
        >>> type(exc).__name__, exc.program_exception
        ('ValueError', 'ValueError')
        >>> type(mirror_exception("MyError", "x")).__name__
        'ProgramError'
    """
    cls = getattr(builtins, type_name, None)
    exc: Exception
    try:
        if not (isinstance(cls, type) and issubclass(cls, Exception)):
            raise TypeError
        exc = cls(message)
    except Exception:  # no such built-in, or one whose constructor wants more arguments
        exc = ProgramError(f"{type_name}: {message}")
    exc.program_exception = type_name  # type: ignore[attr-defined]
    return exc


def _death(report: dict[str, Any], limits: Limits, during: str) -> CandidateFailure:
    """Why the job ended while we waited for it, as the call's failure (from the worker's report:
    :func:`~referee.verifiers.sandbox.sandbox.job_ending`); raises :class:`KilledFromOutside` when
    nothing of the program's or ours ended it."""
    return CandidateFailure(*job_ending(report, limits, during))


def _well_formed(description: Any) -> tuple[Any, ...]:
    """What the job says a name is, as sent by :func:`~referee.verifiers.sandbox.job.serve_calls`;
    anything malformed counts as missing."""
    if type(description) is not tuple or not description:
        return ("missing",)
    if description in (("callable",), ("missing",)):
        return description
    if len(description) == 2 and (description[0] == "value" or (description[0] in ("module", "other")
                                                                and type(description[1]) is str)):
        return description
    return ("missing",)


def _done_report(reply: Any) -> tuple[tuple[str, str] | None, int] | None:
    """``(exception or None, exit code)`` of the job's ``("done", exception, exit code)`` report;
    ``None`` for anything malformed, which the program may have sent itself: it then counts as
    no report, never as the judge's failure.

    Example:
        >>> _done_report(("done", ("ValueError", "bad"), 1)), _done_report(("done", (), 0))
        ((('ValueError', 'bad'), 1), None)
    """
    if type(reply) is not tuple or len(reply) != 3 or reply[0] != "done" or type(reply[2]) is not int:
        return None
    raised = reply[1]
    if raised is None or (type(raised) is tuple and len(raised) == 2 and all(type(part) is str for part in raised)):
        return raised, reply[2]
    return None


def _raised(type_name: str, message: str, during: str) -> CandidateFailure:
    kind = "memory" if type_name == "MemoryError" else "exception"
    return CandidateFailure(kind, f"raised {type_name}{': ' + message if message else ''} {during}")


class ProgramSession:
    """The trusted side's view of one program: load it once, call into it, restart it after a crash.

    Example:
        >>> from referee.verifiers.sandbox.isolation import available_isolation
        >>> sandbox = Sandbox(available_isolation("basic"), uid=None)
        >>> session = ProgramSession(sandbox, "def f(x):\\n    return x * 2", timeout=2.0, tests=1)
        >>> session.describe(["f"])
        {'f': ('callable',)}
        >>> session.call("f", (21,), {}, deadline=time.monotonic() + 2)
        42
        >>> session.close(); sandbox.close()
    """

    def __init__(self, sandbox: Sandbox, code: str, *, timeout: float, tests: int,
                 memory_mb: int = 1024, output_bytes: int = 4 << 20, standard_imports: bool = False,
                 tmp_mb: int = DEFAULT_TMP_MB) -> None:
        self.sandbox = sandbox
        self.code = code
        self.standard_imports = standard_imports  # call-based tests: the program finds List, heapq, ...
        self.timeout = timeout
        self.limits = Limits.for_tests(timeout=timeout, tests=tests, memory_mb=memory_mb, output_bytes=output_bytes,
                                       tmp_mb=tmp_mb)
        self.names: list[str] = []
        self.channel: socket.socket | None = None
        self.described: dict[str, tuple[Any, ...]] = {}
        self.load_failure: CandidateFailure | None = None
        self.failures: list[CandidateFailure] = []  # every failed call, even one that test code swallowed
        self.killed_from_outside: KilledFromOutside | None = None
        self.jobs = 0

    def _request(self, mode: str, stdin: bytes = b"") -> dict[str, Any]:
        return {"mode": mode, "code": self.code, "names": self.names, "stdin": stdin,
                "standard_imports": self.standard_imports,
                "limits": self.limits.to_dict(), "deadline_s": self.limits.cpu_seconds + 1.0}

    def _end_job(self, grace: float = 0.0) -> dict[str, Any]:
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        return self.sandbox.end_job(grace)

    def _receive(self, deadline: float, during: str) -> Any:
        """The job's next message, or a :class:`CandidateFailure` (after ending the job)."""
        assert self.channel is not None
        try:
            return recv_message(self.channel, deadline=deadline, max_bytes=self.limits.output_bytes)
        except ChannelTimeout:
            self._end_job()
            raise CandidateFailure("timeout", f"gave no answer within {self.timeout:g} s {during}") from None
        except MessageTooLarge:
            self._end_job()
            raise CandidateFailure("output", f"sent more than {self.limits.output_bytes} bytes {during}") from None
        except WireError as exc:
            self._end_job()
            raise CandidateFailure("unsendable", f"sent a malformed reply {during} ({exc})") from None
        except ChannelClosed:
            raise _death(self._end_job(_EXIT_GRACE), self.limits, during) from None

    def describe(self, names: list[str]) -> dict[str, tuple[Any, ...]]:
        """Load the program (once) and say what each of ``names`` is in it:
        ``("callable",)``, ``("value", v)``, ``("module", name)``, ``("other", type)`` or ``("missing",)``.

        Raises :class:`CandidateFailure` when the program cannot load (then every test fails).
        """
        self.names = list(names)
        self._ensure_loaded()
        return self.described

    def _ensure_loaded(self) -> None:
        if self.load_failure is not None:
            raise self.load_failure
        if self.channel is not None:
            return
        self.channel = self.sandbox.start_job(self._request("calls"))
        self.jobs += 1
        try:
            reply = self._receive(time.monotonic() + self.timeout, "while loading")
            if type(reply) is tuple and len(reply) == 3 and reply[0] == "load_error":
                self._end_job()
                raise CandidateFailure("load", f"raised {reply[1]} while loading: {reply[2]}"[:400])
            if type(reply) is not tuple or len(reply) != 2 or reply[0] != "loaded" or type(reply[1]) is not dict:
                self._end_job()
                raise CandidateFailure("unsendable", "answered nonsense while loading")
        except CandidateFailure as failure:  # every later test fails the same way: no reload
            self.load_failure = failure
            raise
        self.described = {name: _well_formed(reply[1].get(name)) for name in self.names}

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], deadline: float) -> Any:
        """Call the program's ``name`` with plain-data arguments; its plain-data result, or it raises:
        a mirrored exception for one the program raised, :class:`CandidateFailure` for the rest."""
        try:
            return self._call(name, args, kwargs, deadline)
        except CandidateFailure as failure:
            self.failures.append(failure)
            raise
        except KilledFromOutside as kill:  # kept even if test code with a bare except swallows it
            self.killed_from_outside = kill
            raise

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], deadline: float) -> Any:
        self._ensure_loaded()
        assert self.channel is not None
        during = f"in {name}({short_repr(args, 60)[1:-1].rstrip(',')})"
        try:
            send_message(self.channel, ("call", name, args, kwargs))
        except WireError:
            raise  # the test passed an argument that is not plain data: the judge calls that a test error
        except OSError:
            raise _death(self._end_job(_EXIT_GRACE), self.limits, during) from None
        reply = self._receive(deadline, during)
        if type(reply) is tuple and reply and reply[0] == "return" and len(reply) == 2:
            return reply[1]
        if type(reply) is tuple and len(reply) == 3 and reply[0] == "raise":
            raise mirror_exception(str(reply[1]), str(reply[2]))
        if type(reply) is tuple and len(reply) == 2 and reply[0] == "unsendable":
            raise CandidateFailure("unsendable", f"returned a value of type {reply[1]}, which is not plain data, {during}")
        self._end_job()
        raise CandidateFailure("unsendable", f"answered nonsense {during}")

    def run_stdio(self, stdin: str, deadline: float) -> str:
        """Run the program once on ``stdin``; its stdout, or :class:`CandidateFailure`.

        Exit codes never count: ``sys.exit(1)`` or ``os._exit(0)`` after printing is a normal end.
        """
        self.channel = self.sandbox.start_job(self._request("stdio", stdin.encode("utf-8", "surrogateescape")))
        self.jobs += 1
        during = "on this input"
        reply: Any = None
        try:
            reply = recv_message(self.channel, deadline=deadline, max_bytes=1 << 16)
        except ChannelTimeout:
            self._end_job()
            raise CandidateFailure("timeout", f"gave no answer within {self.timeout:g} s {during}") from None
        except (ChannelClosed, MessageTooLarge, WireError):
            pass  # it ended without reporting (os._exit) or sent junk: its output still decides
        report = self._end_job(_EXIT_GRACE if reply is None else 0.0)
        if report["killed"] or (reply is None and report["ended_alone"] and report["signal"] is not None):
            raise _death(report, self.limits, during)
        done = _done_report(reply)
        if done is not None and done[0] is not None:
            raise _raised(*done[0], during)
        return report["stdout"].decode("utf-8", "replace")

    def run_program(self, stdin: str, deadline: float) -> dict[str, Any]:
        """Run the program once on ``stdin`` and report how it ended, judging nothing.

        Returns ``ended`` (``finished``, ``timeout``, ``memory``, ``output``, ``crashed``), the
        ``exit_code`` Python would give (``None`` when it did not finish), ``stdout``, the tail
        of ``stderr``, ``seconds`` and a readable ``reason``. Raises :class:`KilledFromOutside`
        for a kill the sandbox did not send.
        """
        self.channel = self.sandbox.start_job(self._request("stdio", stdin.encode("utf-8", "surrogateescape")))
        self.jobs += 1
        started = time.monotonic()
        reply: Any = None
        timed_out = False
        try:
            reply = recv_message(self.channel, deadline=deadline, max_bytes=1 << 16)
        except ChannelTimeout:
            timed_out = True
        except (ChannelClosed, MessageTooLarge, WireError):
            pass  # it ended without reporting (os._exit) or sent junk: its exit status still tells
        report = self._end_job(0.0 if reply is not None or timed_out else _EXIT_GRACE)
        result = {"stdout": report["stdout"].decode("utf-8", "replace"), "stderr": report["stderr"],
                  "seconds": time.monotonic() - started}
        if timed_out:
            return {**result, "ended": "timeout", "exit_code": None,
                    "reason": f"gave no answer within {self.timeout:g} s"}
        if report["killed"] or report["killed_from_outside"] or (reply is None and report["signal"] is not None):
            failure = _death(report, self.limits, "while running").outcome
            return {**result, "ended": failure.kind, "exit_code": None, "reason": failure.reason}
        done = _done_report(reply)
        exit_code = done[1] if done is not None else report["exit_code"]
        if done is not None and done[0] is not None and done[0][0] == "MemoryError":
            return {**result, "ended": "memory", "exit_code": exit_code, "reason": "raised MemoryError"}
        return {**result, "ended": "finished", "exit_code": exit_code, "reason": f"exited with code {exit_code}"}

    def close(self) -> None:
        """End the current job, if any."""
        if self.channel is not None:
            self._end_job()
