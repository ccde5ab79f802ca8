"""A client's handle on its fork-server worker (the judge's, a Python session's): start it, start and end
jobs, notice when it breaks, and say why a job ended."""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from typing import Any

from .channel import ChannelClosed, ChannelTimeout, MessageTooLarge, recv_message, send_message
from .cleanup import resume_stopped
from .confine import LAYER_NAME as CONFINEMENT
from .isolation import SANDBOX_ENV, Isolation, confined, worker_argv
from .limits import DEFAULT_TMP_MB, Limits
from .spawner import popen_lasting
from .wire import WireError

_START_SECONDS = 60.0  # a cold start in namespaces on a loaded machine
_REPLY_SECONDS = 15.0  # a job start or a cleanup; both take milliseconds normally
_PROMPT_SECONDS = 0.5  # past this (and a cleanup's grace) a silent worker is looked at: is it stopped?


class SandboxBroken(BaseException):
    """The worker failed (died, hung, answered nonsense, or cannot start). A ``BaseException``, so
    that test code's ``except Exception`` cannot mistake it for the program's failure.

    Example:
        >>> issubclass(SandboxBroken, Exception)
        False
    """


class KilledFromOutside(BaseException):
    """The job was killed by a ``SIGKILL`` the sandbox did not send (the OOM killer, an operator):
    not the program's fault, so the judge reports an ``error`` instead of scoring it (and a Python
    session says so instead of blaming the cell).

    Example:
        >>> issubclass(KilledFromOutside, Exception)
        False
    """


def job_ending(report: dict[str, Any], limits: Limits, during: str) -> tuple[str, str]:
    """Why a job ended while its caller waited for it, from the worker's report (:meth:`Sandbox.end_job`):
    a short kind (``output``, ``timeout``, ``crashed``, ``exited``) and a readable reason that ends
    with ``during``. Raises :class:`KilledFromOutside` when nothing of the program's or ours ended it.

    Example:
        >>> limits = Limits.for_tests(timeout=1, tests=1)
        >>> job_ending({"killed": None, "signal": 9, "ended_alone": True}, limits, "in f(1)")
        ('crashed', 'was killed by SIGKILL in f(1)')
        >>> job_ending({"killed": "deadline"}, limits, "while loading")
        ('timeout', "ran past the job's deadline while loading")
    """
    if report.get("killed_from_outside"):
        raise KilledFromOutside(f"the job was killed by a SIGKILL the sandbox did not send (the OOM killer "
                                f"or an operator) {during}")
    if report["killed"] == "output":
        return "output", f"printed more than {limits.output_bytes} bytes {during}"
    if report["killed"] == "disk":
        return "output", f"kept more than {limits.tmp_bytes >> 20} MiB in files {during}"
    if report["killed"] == "deadline":
        return "timeout", f"ran past the job's deadline {during}"
    number = report["signal"]
    if number == signal.SIGXCPU:
        return "timeout", f"used up its CPU time {during}"
    if number == signal.SIGXFSZ:
        return "output", f"wrote a file larger than {limits.file_bytes} bytes {during}"
    if not report["ended_alone"]:
        return "exited", f"closed its channel {during}"
    if number is not None:
        name = signal.Signals(number).name if number in signal.Signals._value2member_map_ else str(number)
        return "crashed", f"was killed by {name} {during}"
    return "exited", f"exited (code {report['exit_code']}) {during}"


class Sandbox:
    """One fork-server worker, started with ``isolation``; its jobs run as ``uid`` when given, keep
    at most ``tmp_mb`` MiB in files (a private in-memory ``/tmp`` of that size with namespaces or
    root; without, the job folder is measured while the job runs), and read, besides the system,
    Python and referee, the folders of ``read_only`` (the judge gives its compilers' folders).

    Example:
        >>> from referee.verifiers.sandbox.isolation import available_isolation
        >>> from referee.verifiers.sandbox.limits import Limits
        >>> sandbox = Sandbox(available_isolation("basic"), uid=None)
        >>> channel = sandbox.start_job({"mode": "calls", "code": "def f(x): return 2 * x", "names": ["f"],
        ...     "limits": Limits.for_tests(timeout=1, tests=1).to_dict(), "deadline_s": 5})
        >>> recv_message(channel, deadline=time.monotonic() + 5)
        ('loaded', {'f': ('callable',)})
        >>> send_message(channel, ("call", "f", (21,), {})); recv_message(channel)
        ('return', 42)
        >>> sandbox.end_job()["survivors"], sandbox.close()
        (0, None)
    """

    def __init__(self, isolation: Isolation, *, uid: int | None, tmp_mb: int = DEFAULT_TMP_MB,
                 read_only: Sequence[str] = ()) -> None:
        self.isolation = isolation
        self.uid = uid
        self.tmp_mb = tmp_mb  # the size of its private /tmp, fixed for the worker's life
        self.read_only = tuple(read_only)
        self.layers: dict[str, bool] = {}
        self.process: subprocess.Popen[bytes] | None = None
        self.control: socket.socket | None = None

    @property
    def alive(self) -> bool:
        """Started, and not known to be broken."""
        return self.control is not None

    def _worker_args(self, fd: int) -> list[str]:
        args = ["--fd", str(fd), "--tmp-bytes", str(self.tmp_mb << 20)]
        if self.uid is not None:
            args += ["--uid", str(self.uid)]
        if self.isolation.minimal_root:  # what a job leaves in the private /tmp and /dev/shm goes with the job
            args += ["--pid-namespace", "--sweep-shared"]
        elif self.isolation.own_uid:
            args += ["--unshare-net", "--sweep-shared", "--reach-python", "--private-tmp"]
        if confined(self.isolation):
            args.append("--confine")
        for folder in self.read_only:
            args += ["--read-only", folder]
        return args

    def start(self) -> dict[str, bool]:
        """Start the worker and wait until it is ready; returns the layers it set up itself."""
        self.close()
        ours, theirs = socket.socketpair()
        try:
            self.process = popen_lasting(
                worker_argv(self.isolation, self._worker_args(theirs.fileno()), tmp_bytes=self.tmp_mb << 20,
                            read_only=self.read_only),
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=SANDBOX_ENV)
        except (OSError, RuntimeError) as exc:
            ours.close()
            raise SandboxBroken(f"the sandbox worker cannot start: {exc}") from None
        finally:
            theirs.close()
        try:
            kind, layers = recv_message(ours, deadline=time.monotonic() + _START_SECONDS)
        except (ChannelClosed, ChannelTimeout, WireError, ValueError) as exc:
            ours.close()
            reason = self._stderr_tail() or str(exc)
            self._kill()
            raise SandboxBroken(f"the sandbox worker did not start: {reason}") from None
        uid_level = self.isolation.own_uid and not self.isolation.minimal_root
        wanted = {"own uid": self.isolation.own_uid, "no network": uid_level, "python reachable": uid_level,
                  CONFINEMENT: confined(self.isolation)}
        missing = [name for name, want in wanted.items() if want and not layers.get(name)]
        if kind != "ready" or missing:
            ours.close()
            self._kill()
            raise SandboxBroken(f"the sandbox worker could not set up {', '.join(missing) or 'itself'}")
        self.control, self.layers = ours, layers
        return layers

    def _stderr_tail(self) -> str:
        if self.process is None or self.process.stderr is None:
            return ""
        os.set_blocking(self.process.stderr.fileno(), False)
        try:
            data = self.process.stderr.read() or b""
        except OSError:
            data = b""
        lines = data.decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else ""

    def _broken(self, why: str) -> SandboxBroken:
        self.close()
        return SandboxBroken(why)

    def start_job(self, request: dict[str, Any]) -> socket.socket:
        """Fork a job for ``request``; returns the channel to talk to it (the caller closes it)."""
        if self.control is None:
            self.start()
        assert self.control is not None
        try:
            send_message(self.control, ("start", request))
            self.control.settimeout(_REPLY_SECONDS)
            marker, fds, _, _ = socket.recv_fds(self.control, 1, 1)
        except (OSError, ChannelClosed) as exc:
            raise self._broken(f"the sandbox worker stopped answering: {exc}") from None
        if marker == b"J" and len(fds) == 1:
            return socket.socket(fileno=fds[0])
        for fd in fds:
            os.close(fd)
        reason = "no job channel"
        if marker == b"E":
            try:
                reason = recv_message(self.control, deadline=time.monotonic() + _REPLY_SECONDS)[1]
            except (ChannelClosed, ChannelTimeout, WireError, MessageTooLarge, IndexError, TypeError):
                pass
        raise self._broken(f"the sandbox worker could not start a job: {reason}")

    def end_job(self, grace: float = 0.0) -> dict[str, Any]:
        """Kill what is left of the current job, clean up, and return the worker's report.

        ``grace``: seconds the job may take to finish exiting by itself first (give some when its
        channel closed unexpectedly, so the report says how it ended).
        """
        if self.control is None:
            raise SandboxBroken("the sandbox worker is not running")
        try:
            send_message(self.control, ("end", grace))
            if not select.select([self.control], [], [], grace + _PROMPT_SECONDS)[0] and self.process is not None:
                resume_stopped(self.process.pid)  # a job may have stopped its worker: it would never answer
            kind, report = recv_message(self.control, deadline=time.monotonic() + _REPLY_SECONDS)
        except (OSError, ChannelClosed, ChannelTimeout, WireError, ValueError) as exc:
            raise self._broken(f"the sandbox worker failed while cleaning up a job: {exc}") from None
        if kind != "report":
            raise self._broken(f"the sandbox worker answered {kind!r} instead of a report")
        if report["survivors"]:
            self.close()  # the worker stops itself after a dirty job; start a fresh one next time
        # (files the job's uid left in /tmp or /dev/shm were swept by the worker: the worker stays clean)
        return report

    def _kill(self) -> None:
        if self.process is not None:
            resume_stopped(self.process.pid)
            try:  # with its control socket closed, a healthy worker cleans up and exits at once
                self.process.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            if self.process.stderr is not None:
                self.process.stderr.close()
            self.process = None

    def close(self) -> None:
        """Stop the worker (its jobs die with it)."""
        if self.control is not None:
            self.control.close()
            self.control = None
        self._kill()


# A worker that cannot fork (EAGAIN) is most often waiting for the processes of a job just killed
# to be gone from its uid's count: a restart is tried again after these pauses.
_RESTART_PAUSES = (0.2, 0.5, 1.0)


def restart(sandbox: Sandbox, broken: SandboxBroken) -> str | None:
    """Replace a broken sandbox worker; the one-line error to report when a new one cannot start
    (``None`` once it runs). A start refused for want of processes is tried again a few times.

    Example:
        >>> class Refusing:
        ...     def close(self): pass
        ...     def start(self): raise SandboxBroken("bwrap: No such file or directory")
        >>> restart(Refusing(), SandboxBroken("the worker died"))
        'the sandbox worker failed (the worker died) and cannot restart: bwrap: No such file or directory'
    """
    sandbox.close()
    for pause in (0.0, *_RESTART_PAUSES):
        time.sleep(pause)
        try:
            sandbox.start()
            return None
        except SandboxBroken as exc:
            failure = exc
            if "temporarily unavailable" not in str(exc):
                break
    return f"the sandbox worker failed ({broken}) and cannot restart: {failure}"
