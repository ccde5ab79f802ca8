"""Warm worker processes: a template process pays the imports once, then forks workers on request.

The template (a "zygote") is a fresh interpreter started with ``python -m`` (never a fork of
the caller, so a trainer's threads, CUDA state and ``__main__`` script are not copied). It
imports the modules it is told to preload, then forks one worker per request in a few
milliseconds. A warm-up given as steps runs in the template once it is ready, between requests
and only while no worker is busy: workers forked after a step inherit what it warmed, and no
request waits for more than one step. A worker runs one task at a time: it receives
``(function, args)`` over its own socket, calls the function and sends back ``("ok", value)``
or ``("raised", message)``.

Workers die with the template, and the template exits when its caller closes the control
socket (or dies), so nothing is left behind.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import os
import pickle
import resource
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import Any

_PID = struct.Struct("!i")
_READY = b"R"
_FORK = b"F"
_PR_SET_PDEATHSIG = 1
_MESSAGE_CAP = 2000  # characters of an exception message sent back
_WARM_UP_PAUSE = 0.05  # seconds the template waits while a worker is busy before it looks again


class WorkerStartError(RuntimeError):
    """The template process could not be started or could not fork a worker."""


class Worker:
    """One forked worker: its pid and the connection tasks go through.

    Example:
        >>> with Zygote(preload=()) as zygote:
        ...     worker = zygote.fork_worker()
        ...     worker.connection.send((len, ("abc",)))
        ...     answer = worker.connection.recv()
        ...     worker.kill()
        >>> answer
        ('ok', 3)
    """

    def __init__(self, pid: int, connection: Connection) -> None:
        self.pid = pid
        self.connection = connection

    def kill(self) -> None:
        """Kill the worker at once (it may be in the middle of a task) and close its connection."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.close()

    def stop(self) -> None:
        """Ask an idle worker to exit and close its connection."""
        try:
            self.connection.send(None)
        except OSError:
            pass
        self.close()

    def close(self) -> None:
        """Close this process's end of the connection (the worker exits when it reads EOF)."""
        self.connection.close()


class Zygote:
    """A warm template process that forks workers (see the module docstring).

    Args:
        preload: modules the template imports once, so that every worker starts with them; an
            entry ``"module:function"`` also calls ``function()`` once, to warm caches that every
            worker then inherits.
        warm_up: ``"module:function"`` whose call returns an iterator of steps (a generator);
            the template advances it one step at a time while no worker is asked of it and none
            of its workers is busy, after it reports ready, so its cost is off every task's path.
        memory_limit_mb: address-space limit of each worker, or ``None`` for no limit.
        start_timeout: seconds to wait for the template to import its modules.

    Example:
        >>> with Zygote(preload=("fractions",)) as zygote:
        ...     first, second = zygote.fork_worker(), zygote.fork_worker()
        ...     alive = zygote.alive()
        ...     first.kill(), second.stop()
        (None, None)
        >>> alive, first.pid != second.pid
        (True, True)
    """

    def __init__(self, preload: tuple[str, ...], *, warm_up: str | None = None, memory_limit_mb: int | None = None,
                 start_timeout: float = 120.0) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        command = [sys.executable, "-m", __name__, str(theirs.fileno()), str(memory_limit_mb or 0), warm_up or "", *preload]
        try:
            self._process = subprocess.Popen(command, pass_fds=[theirs.fileno()], env=env,
                                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                             start_new_session=True)
        finally:
            theirs.close()
        self._control = ours
        self._lock = threading.Lock()
        if select.select([ours], [], [], start_timeout)[0] == [] or ours.recv(1) != _READY:
            self.close()
            raise WorkerStartError(f"the worker template (preloading {', '.join(preload) or 'nothing'}) did not start; "
                                   "run the command above by hand to see why")

    @property
    def pid(self) -> int:
        """The template's process id."""
        return self._process.pid

    def alive(self) -> bool:
        """Whether the template process is still running."""
        return self._process.poll() is None

    def fork_worker(self, timeout: float = 30.0) -> Worker:
        """Fork a new worker and return it."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with self._lock:
                socket.send_fds(self._control, [_FORK], [theirs.fileno()])
                if not select.select([self._control], [], [], timeout)[0]:
                    raise WorkerStartError("the worker template did not fork a worker in time")
                reply = self._control.recv(_PID.size, socket.MSG_WAITALL)
        except OSError as exc:
            ours.close()
            raise WorkerStartError(f"the worker template is gone ({exc})") from None
        finally:
            theirs.close()
        if len(reply) != _PID.size:
            ours.close()
            raise WorkerStartError("the worker template exited")
        return Worker(_PID.unpack(reply)[0], Connection(ours.detach()))

    def close(self, wait: float = 2.0) -> None:
        """Close the control socket (the template and its workers then exit) and reap the template."""
        self._control.close()
        try:
            self._process.wait(wait)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def abandon(self) -> None:
        """Forget the template without touching it (in a forked child, which does not own it)."""
        self._control.close()
        self._process.returncode = 0  # not our child: nothing to reap

    def __enter__(self) -> Zygote:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _die_with_parent() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the worker still exits on EOF
        pass


def _limit_memory(memory_limit_mb: int) -> None:
    if memory_limit_mb > 0:
        limit = memory_limit_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _serve_tasks(connection: Connection) -> None:
    """A worker's loop: one task at a time until EOF or ``None``."""
    while True:
        try:
            message = connection.recv_bytes()
        except (EOFError, OSError):
            return
        try:
            task = pickle.loads(message)
            if task is None:
                return
            function, args = task
            reply: tuple[str, Any] = ("ok", function(*args))
        except BaseException as exc:  # a task's failure is reported, never kills the worker
            reply = ("raised", f"{type(exc).__name__}: {exc}"[:_MESSAGE_CAP])
        try:
            connection.send(reply)
        except OSError:
            return
        except Exception as exc:  # the value did not pickle
            connection.send(("raised", f"{type(exc).__name__}: {exc}"[:_MESSAGE_CAP]))


def _call(entry: str) -> Any:
    """Import ``"module"``, or import ``"module:function"`` and return ``function()``."""
    module, _, function = entry.partition(":")
    imported = importlib.import_module(module)
    return getattr(imported, function)() if function else None


def _running(pids: set[int]) -> bool:
    """Whether one of ``pids`` is on a CPU or waiting for one (forgetting those that exited)."""
    for pid in list(pids):
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                state = stat.read().rpartition(b")")[2].split()[0]
        except (OSError, IndexError):  # exited (or no /proc: never deferred)
            pids.discard(pid)
            continue
        if state in (b"R", b"D"):
            return True
    return False


def _warm_while_idle(control: socket.socket, steps: Iterator[Any] | None, workers: set[int]) -> Iterator[Any] | None:
    """Advance the warm-up one step at a time until a request waits on ``control``; ``None`` once it is over.

    A step runs only while no worker is busy: on a loaded machine the warm-up would otherwise
    take its CPU from the workers' tasks.
    """
    while steps is not None and not select.select([control], [], [], _WARM_UP_PAUSE if _running(workers) else 0)[0]:
        if _running(workers):
            continue
        try:
            next(steps)
        except Exception:  # StopIteration, or a failed step: caches stay as warm as they are
            return None
    return steps


def _zygote_main(control_fd: int, memory_limit_mb: int, warm_up: str, preload: list[str]) -> None:
    # Imports make few cycles but many objects: the collector would walk them again and again
    # (about an eighth of sympy's import time). Once loaded they are frozen out of its reach.
    gc.disable()
    try:
        for entry in preload:
            _call(entry)
    finally:
        gc.freeze()
        gc.enable()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps finished workers
    control = socket.socket(fileno=control_fd)
    try:
        control.sendall(_READY)
    except OSError:  # the caller is gone (it exited while the imports ran)
        return
    try:
        steps = iter(_call(warm_up)) if warm_up else None
    except Exception:  # no warm-up: workers start colder, nothing worse
        steps = None
    workers: set[int] = set()
    while True:
        steps = _warm_while_idle(control, steps, workers)
        try:
            message, fds, _, _ = socket.recv_fds(control, 1, 1)
        except OSError:
            return
        if not message or not fds:
            return
        # What the template holds (modules, parser tables, warm caches) moves out of the collector's
        # reach: a worker's collections then never walk it, and never touch its pages (copy-on-write).
        gc.freeze()
        pid = os.fork()
        if pid == 0:
            control.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _die_with_parent()
            _limit_memory(memory_limit_mb)
            _serve_tasks(Connection(fds[0]))
            os._exit(0)
        os.close(fds[0])
        workers.add(pid)
        control.sendall(_PID.pack(pid))


if __name__ == "__main__":
    _zygote_main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:])
