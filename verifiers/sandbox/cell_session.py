"""A stateful Python session in the code sandbox, for a model that calls a Python tool mid-solution.

:class:`PythonSession` runs cells one after another in one Python process inside referee's
sandbox (the judge's isolation levels, fork server, rlimits and cleanup), keeping variables
between cells like a notebook. Each :meth:`PythonSession.run` returns a :class:`CellResult`
whose ``text`` is what a model sees: the cell's output (capped, with a visible marker), the
``repr`` of a trailing expression, the traceback's last lines, or why the cell was stopped. It
never raises for anything the cell does. A process that died (timeout, memory, ``os._exit``, a
kill) is started afresh on the next cell, whose text says the variables are gone.

The session trusts nothing the job sends: replies are read with a deadline and a size cap, in
the strict wire encoding, and capped again here. Nothing the cell prints decides a reward.
"""

from __future__ import annotations

import math
import select
import socket
import time
from dataclasses import dataclass, replace
from typing import Any

from .cells import ERROR_CHARS
from .channel import ChannelClosed, ChannelTimeout, MessageTooLarge, recv_message, send_message
from .isolation import Isolation, resolve_isolation
from .limits import DEFAULT_TMP_MB, Limits
from .sandbox import KilledFromOutside, Sandbox, SandboxBroken, job_ending, restart
from .uids import UidLease, lease_uid
from .wire import WireError

RESTARTED = "[the session was restarted: variables from earlier cells are gone]"
NO_OUTPUT = "(no output)"
_EXIT_GRACE = 0.5  # seconds a job whose channel closed gets to finish exiting, so the report says how
_JOB_SECONDS = 86400.0  # the worker's backstop for a whole job; each cell has its own deadline here
_CELLS_OF_CPU = 100  # a job's hard CPU limit: this many cells at their limit (then it restarts)


@dataclass(frozen=True)
class CellLimits:
    """Limits of each cell of a :class:`PythonSession`.

    Attributes:
        timeout: wall-clock seconds a cell may run (then the process is stopped).
        cpu_seconds: CPU seconds a cell may use (``SIGXCPU`` past them).
        memory_mb: the process's address space (past it, allocations raise ``MemoryError``).
        output_chars: the characters of a cell's output shown; the rest is counted in a marker.
        processes: processes and threads the session may add.
        tmp_mb: what the session may keep in files at once (its folder, ``/tmp``, ``/dev/shm``).

    Example:
        >>> CellLimits(cpu_seconds=2.0).job_limits().cpu_seconds
        201
    """

    timeout: float = 5.0
    cpu_seconds: float = 5.0
    memory_mb: int = 1024
    output_chars: int = 4000
    processes: int = 16
    tmp_mb: int = DEFAULT_TMP_MB

    def __post_init__(self) -> None:
        for name in ("timeout", "cpu_seconds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 86400:
                raise ValueError(f"CellLimits({name}={value!r}): give the seconds one cell may take, e.g. 5")
        for name in ("memory_mb", "output_chars", "processes", "tmp_mb"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"CellLimits({name}={value!r}) must be a positive integer")

    def job_limits(self) -> Limits:
        """The rlimits of the session's job: its whole life's CPU (:data:`_CELLS_OF_CPU` cells at
        their limit; each cell gets ``cpu_seconds`` of it), memory, processes, files, and a cap
        on what it writes to its file descriptors directly (``os.write(1, ...)``, subprocesses:
        counted, not shown)."""
        return Limits(cpu_seconds=math.ceil(self.cpu_seconds * _CELLS_OF_CPU) + 1, memory_bytes=self.memory_mb << 20,
                      processes=self.processes, output_bytes=max(4 << 20, 16 * self.output_chars),
                      tmp_bytes=self.tmp_mb << 20)


@dataclass(frozen=True)
class CellResult:
    """What one cell gave: ``text`` (what a model sees) and how it went.

    ``error``: the cell raised (``text`` ends with the traceback's last lines); ``timeout``: it
    ran past its wall-clock limit and was stopped; ``killed``: the process ended during the cell
    (CPU limit, a signal, ``os._exit``, too much output); ``truncated``: the output was cut at
    ``output_chars``; ``restarted``: the cell ran in a fresh process because the last one died;
    ``refused``: the call budget was spent, nothing ran; ``sandbox_failed``: the sandbox failed
    or something outside killed the process, not the cell's doing. ``seconds``: wall-clock time.

    Example:
        >>> CellResult("42").ok, CellResult("boom", error=True).ok
        (True, False)
    """

    text: str
    error: bool = False
    timeout: bool = False
    killed: bool = False
    truncated: bool = False
    restarted: bool = False
    refused: bool = False
    sandbox_failed: bool = False
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """The cell ran to its end without raising (its output may be truncated)."""
        return not (self.error or self.timeout or self.killed or self.refused or self.sandbox_failed)


def truncated_text(text: str, more: int, cap: int) -> tuple[str, bool]:
    """``text`` cut at ``cap`` characters, with a marker counting what was left out (``more``
    characters already dropped before it); and whether anything was.

    Example:
        >>> truncated_text("abcdef", 0, 4)
        ('abcd\\n... [output truncated: 2 more characters]', True)
        >>> truncated_text("abc", 12345, 100)
        ('abc\\n... [output truncated: 12,345 more characters]', True)
    """
    more += max(0, len(text) - cap)
    if not more:
        return text, False
    return f"{text[:cap].rstrip(chr(10))}\n... [output truncated: {more:,} more characters]", True


class PythonSession:
    """One sandboxed Python process whose cells share their variables, like a notebook.

    Args:
        limits: each cell's limits (:class:`CellLimits`).
        isolation: ``"auto"`` or a level (``full``, ``namespaces``, ``uid``, ``basic``), as for
            :func:`referee.verifiers.code.verify_batch`; it fails closed the same way
            (``ValueError`` for a level where the code could reach you, unless named with
            ``allow_weak_isolation=True``).
        allow_weak_isolation: accept such a level when it is named.
        max_calls: cells one session may run before :meth:`reset` (``None``: no budget); past
            it, :meth:`run` answers with a refusal and runs nothing.

    The session holds one sandbox worker (started on the first cell) until :meth:`close`.

    Example:
        >>> with PythonSession(isolation="basic", allow_weak_isolation=True, max_calls=3) as session:
        ...     print(session.run("x = 6 * 7").text)
        ...     print(session.run("x").text)
        ...     print(session.run("x / 0").text)
        ...     print(session.run("x").text)
        (no output)
        42
        Traceback (most recent call last):
          File "<cell 3>", line 1, in <module>
            x / 0
        ...
        ZeroDivisionError: division by zero
        [the call budget of 3 calls is spent: no more code runs in this session]
    """

    def __init__(self, limits: CellLimits | None = None, *, isolation: str = "auto",
                 allow_weak_isolation: bool = False, max_calls: int | None = None) -> None:
        if max_calls is not None and (isinstance(max_calls, bool) or not isinstance(max_calls, int) or max_calls < 0):
            raise ValueError(f"max_calls={max_calls!r} must be a non-negative integer or None")
        self.limits = limits if limits is not None else CellLimits()
        self.isolation: Isolation = resolve_isolation(isolation, allow_weak=allow_weak_isolation)
        self.max_calls = max_calls
        self.calls = 0
        self._sandbox: Sandbox | None = None
        self._lease: UidLease | None = None
        self._channel: socket.socket | None = None
        self._lost = False  # the last process died: the next cell says so

    def __enter__(self) -> PythonSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def level(self) -> str:
        """The isolation level the cells run at."""
        return self.isolation.level

    def run(self, code: str) -> CellResult:
        """Run one cell; never raises for anything the cell does (see :class:`CellResult`).

        Example:
            >>> with PythonSession(CellLimits(timeout=0.5), isolation="basic", allow_weak_isolation=True) as session:
            ...     session.run("while True: pass").timeout, session.run("1 + 1").text
            (True, '[the session was restarted: variables from earlier cells are gone]\\n2')
        """
        if not isinstance(code, str):
            return CellResult(f"the code must be a str, got {type(code).__name__}", error=True)
        if self.max_calls is not None and self.calls >= self.max_calls:
            return CellResult(f"[the call budget of {self.max_calls} calls is spent: no more code runs in this session]",
                              refused=True)
        self.calls += 1
        restarted, self._lost = self._lost or self._died_between_cells(), False
        started = time.monotonic()
        try:
            channel = self._job()
        except SandboxBroken as exc:
            self._channel, self._lost = None, restarted  # the next cell that runs says so still
            return CellResult(f"[the sandbox cannot start ({exc}); nothing ran]", restarted=restarted,
                              sandbox_failed=True, seconds=time.monotonic() - started)
        try:
            result = self._run(channel, code)
        except SandboxBroken as exc:
            self._channel = None
            self._lost = True
            if self.isolation.own_uid:  # the cell cannot touch the worker: it failed by itself
                result = CellResult(f"[the sandbox failed ({exc}); the session restarts on the next cell]",
                                    sandbox_failed=True)
            else:  # without an own uid a cell can kill its worker
                result = CellResult("[the Python process and its sandbox ended during this cell; the session "
                                    "restarts on the next cell]", killed=True)
        except KilledFromOutside as exc:
            self._lost = True
            result = CellResult(f"[the Python process was killed from outside, not by this cell ({exc}); "
                                "the session restarts on the next cell]", sandbox_failed=True)
        if result.killed or result.timeout:
            self._lost = True
        return replace(result, text=f"{RESTARTED}\n{result.text}" if restarted else result.text, restarted=restarted,
                       seconds=time.monotonic() - started)

    def _request(self) -> dict[str, Any]:
        return {"mode": "cells", "code": "", "limits": self.limits.job_limits().to_dict(), "deadline_s": _JOB_SECONDS,
                "cell_cpu_seconds": float(self.limits.cpu_seconds), "output_chars": self.limits.output_chars}

    def _job(self) -> socket.socket:
        """The channel to the session's process, starting the worker and the process when needed."""
        if self._channel is not None:
            return self._channel
        if self._sandbox is None:
            if self.isolation.own_uid:
                try:
                    self._lease = lease_uid()
                except RuntimeError as exc:
                    raise SandboxBroken(str(exc)) from None
            self._sandbox = Sandbox(self.isolation, uid=self._lease.uid if self._lease else None,
                                    tmp_mb=self.limits.tmp_mb)
        try:
            self._channel = self._sandbox.start_job(self._request())
        except SandboxBroken as exc:  # a worker broken by an earlier job: a fresh one, once
            problem = restart(self._sandbox, exc)
            if problem is not None:
                raise SandboxBroken(problem) from None
            self._channel = self._sandbox.start_job(self._request())
        return self._channel

    def _died_between_cells(self) -> bool:
        """Whether the process ended after its last cell (a thread it left, a kill): then it is
        cleaned up, and this cell starts a fresh one."""
        if self._channel is None or self._sandbox is None or self._sandbox.control is None:
            return False
        readable, _, _ = select.select([self._channel, self._sandbox.control], [], [], 0)
        if not readable:
            return False
        if self._sandbox.control in readable:  # the worker spoke or ended between jobs' messages: it is gone
            self._channel.close()
            self._channel = None
            self._sandbox.close()
            return True
        try:
            if self._channel.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT):
                return False  # bytes it sent by itself: read as this cell's reply, and refused there
        except BlockingIOError:
            return False
        except OSError:
            pass
        try:
            self._end_job(_EXIT_GRACE)
        except SandboxBroken:  # the worker went with it: the next start replaces it
            self._channel = None
        return True

    def _end_job(self, grace: float = 0.0) -> dict[str, Any] | None:
        if self._channel is None:
            return None
        self._channel.close()
        self._channel = None
        assert self._sandbox is not None
        return self._sandbox.end_job(grace)

    def _run(self, channel: socket.socket, code: str) -> CellResult:
        limits = self.limits
        deadline = time.monotonic() + limits.timeout
        try:
            channel.settimeout(limits.timeout)
            send_message(channel, ("cell", code))
            reply = recv_message(channel, deadline=deadline, max_bytes=4 * (limits.output_chars + ERROR_CHARS) + 1024)
        except (ChannelTimeout, socket.timeout):
            self._end_job()
            return CellResult(f"[the cell did not finish within {limits.timeout:g} s: it was stopped, "
                              "and the session's variables with it]", timeout=True)
        except (MessageTooLarge, WireError):
            self._end_job()
            return CellResult("[the session sent a malformed reply: it was stopped]", killed=True)
        except (ChannelClosed, OSError):
            report = self._end_job(_EXIT_GRACE)
            assert report is not None
            kind, reason = job_ending(report, limits.job_limits(), "during this cell")
            return CellResult(f"[the Python process {reason}; the session restarts on the next cell]",
                              timeout=kind == "timeout", killed=True)
        if (type(reply) is not tuple or len(reply) != 4 or reply[0] != "cell" or type(reply[1]) is not str
                or type(reply[2]) is not int or type(reply[3]) is not str):
            self._end_job()
            return CellResult("[the session sent a malformed reply: it was stopped]", killed=True)
        _, output, more, error = reply
        output, truncated = truncated_text(output, max(0, more), limits.output_chars)
        text = "\n".join(part.rstrip("\n") for part in (output, error[-ERROR_CHARS:]) if part) or NO_OUTPUT
        return CellResult(text, error=bool(error), truncated=truncated)

    def reset(self) -> None:
        """A fresh namespace (a new process: nothing a cell changed survives, modules included) and
        a fresh call budget; the next result does not say it restarted.

        Example:
            >>> with PythonSession(isolation="basic", allow_weak_isolation=True) as session:
            ...     _ = session.run("secret = 1"); session.reset()
            ...     session.run("secret").text.splitlines()[-1]
            "NameError: name 'secret' is not defined"
        """
        try:
            self._end_job()
        except SandboxBroken:
            self._channel = None
        self.calls = 0
        self._lost = False

    def close(self) -> None:
        """End the session's process and its sandbox worker, and give its uid back."""
        try:
            self._end_job()
        except SandboxBroken:
            self._channel = None
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None
        if self._lease is not None:
            self._lease.release()
            self._lease = None
