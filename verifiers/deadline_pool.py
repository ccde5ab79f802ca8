"""Run tasks in worker processes with hard deadlines, from any thread and any process.

A :class:`DeadlinePool` keeps N warm workers (forked from a template that preloads the heavy
modules, see :mod:`referee.verifiers.warm_workers`). :meth:`DeadlinePool.run` sends each task
to a free worker and waits for the results with ``multiprocessing.connection.wait``
(:meth:`DeadlinePool.batch` does so while the caller is still adding tasks); a task
that overruns its deadline has its worker killed (``SIGKILL``) and replaced. Nothing relies on
signals in the calling process, so the deadlines hold in the main thread, in other threads,
in asyncio code and in several threads at once.

The pool is reused across calls (see :func:`shared_pool`), shut down at interpreter exit, and
safe to use after ``os.fork()``: a forked child forgets the parent's workers and starts its own.
"""

from __future__ import annotations

import atexit
import importlib
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Literal

from .warm_workers import Worker, WorkerStartError, Zygote

OutcomeStatus = Literal["ok", "raised", "timeout", "crashed", "cancelled"]


@dataclass(frozen=True)
class Outcome:
    """What became of one task.

    Attributes:
        status: ``ok`` (``value`` holds the result), ``raised`` (the task raised; ``message``
            says what), ``timeout`` (the task overran its deadline and its worker was killed),
            ``crashed`` (the worker died or could not be started), ``cancelled`` (the batch
            deadline passed before the task finished).
        value: the task's return value when ``status == "ok"``.
        message: a readable line for the other statuses.
        seconds: how long the task ran on its worker.

    Example:
        >>> Outcome("timeout", message="the task ran past its 5 s deadline").status
        'timeout'
    """

    status: OutcomeStatus
    value: Any = None
    message: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class NamedFunction:
    """A module-level function given by its import path, imported only where it is called.

    Lets the caller send work to the workers without importing the work's heavy modules itself.

    Example:
        >>> NamedFunction("math:gcd")(12, 18)
        6
    """

    path: str  # "package.module:function"

    def __call__(self, *args: Any) -> Any:
        module, _, name = self.path.partition(":")
        return getattr(importlib.import_module(module), name)(*args)


# Tasks sent to a worker at once: the next one waits in its socket, so that a worker never idles
# while this process is slow to wake up (a busy machine); it starts when the previous one ends.
_QUEUED_PER_WORKER = 2
_LONGEST_WAIT = 86400.0  # seconds one wait() may block; the deadline is checked after each


@dataclass
class _Flight:
    """A worker lent to one ``run`` call: the tasks sent to it, the first one started at ``started``."""

    worker: Worker
    queue: deque[int]
    started: float


def default_workers() -> int:
    """Default worker count for every pool (maths, code judges, their sandboxes): the cores this
    process may run on, shared with the other training processes on the node.

    Under ``torchrun`` / ``accelerate launch`` each of the node's ``LOCAL_WORLD_SIZE`` processes
    starts its own pools, so each takes its share of the cores (at least one worker), not all.

    Example:
        >>> default_workers() == max(1, len(os.sched_getaffinity(0)) // int(os.environ.get("LOCAL_WORLD_SIZE", 1)))
        True
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    try:
        processes = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    except ValueError:  # set to something that is not a number: ignore it
        processes = 1
    return max(1, cores // max(1, processes))


class DeadlinePool:
    """A pool of warm worker processes whose tasks have hard deadlines.

    Args:
        workers: how many worker processes at most (default: :func:`default_workers`, the
            node's cores divided by ``LOCAL_WORLD_SIZE``).
        preload: modules the workers import once, before any task (their import time is not
            paid per task, nor again when a worker is replaced); ``"module:function"`` also
            calls ``function()`` once in the template, to warm caches every worker inherits.
        warm_up: ``"module:function"`` returning an iterator of warm-up steps, which the template
            advances while no worker is asked of it (see :class:`~referee.verifiers.warm_workers.Zygote`):
            unlike a preload function, it never delays the first workers.
        memory_limit_mb: address-space limit of each worker (``None``: no limit). A task that
            hits it usually raises ``MemoryError``, reported as ``raised``.

    Example:
        >>> import time
        >>> with DeadlinePool(2) as pool:
        ...     outcomes = pool.run(time.sleep, [(0,), (60,)], timeout=0.5)
        >>> [o.status for o in outcomes]
        ['ok', 'timeout']
    """

    def __init__(self, workers: int | None = None, *, preload: Sequence[str] = (), warm_up: str | None = None,
                 memory_limit_mb: int | None = 2048) -> None:
        size = default_workers() if workers is None else workers
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ValueError(f"workers={workers!r} is not a positive integer; pass e.g. workers=2.")
        self.size = size
        self.preload = tuple(preload)
        self.warm_up = warm_up
        self.memory_limit_mb = memory_limit_mb
        self._reset()
        _ALL_POOLS.add(self)

    def _reset(self) -> None:
        self._condition = threading.Condition()
        self._zygote_lock = threading.Lock()  # held while a template starts: one start at a time
        self._zygote: Zygote | None = None  # read and set under self._condition
        self._idle: list[Worker] = []
        self._workers: set[Worker] = set()
        self._starting = 0
        self._closed = False

    def start(self) -> None:
        """Start the worker template in a background thread, unless it is started; returns at once.

        A caller that will need the workers soon calls this before its own work (reading a batch),
        so that the template's imports run meanwhile; :meth:`run` waits for the start to finish.
        A template that fails to start here is started again by :meth:`run`.

        Example:
            >>> with DeadlinePool(1) as pool:
            ...     pool.start()
            ...     pool.run(abs, [(-1,)], timeout=30)[0].value
            1
        """
        with self._condition:
            if self._closed or self._zygote is not None or self._zygote_lock.locked():
                return
        threading.Thread(target=self._start_zygote, name="referee-pool-start", daemon=True).start()

    def _start_zygote(self) -> None:
        try:
            self._zygote_or_start()
        except (WorkerStartError, OSError):
            pass  # run() tries again and reports what went wrong

    def _zygote_or_start(self) -> Zygote:
        """The live template, started first when there is none (the caller may wait for its imports).

        :meth:`close` does not wait for a start under way: the template is closed once it is up.
        """
        with self._zygote_lock:
            with self._condition:
                if self._closed:
                    raise WorkerStartError("the pool is closed")
                if self._zygote is not None and self._zygote.alive():
                    return self._zygote
            zygote = Zygote(self.preload, warm_up=self.warm_up, memory_limit_mb=self.memory_limit_mb)
            with self._condition:
                if not self._closed:
                    self._zygote = zygote
                    return zygote
            zygote.close()
            raise WorkerStartError("the pool is closed")

    def run(self, function: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], *, timeout: float,
            total_timeout: float | None = None) -> list[Outcome]:
        """Run ``function(*args)`` for each ``args`` in ``tasks`` on the workers; outcomes in order.

        ``function`` must be importable by name (a module-level function) and its arguments and
        result picklable. Each task may run ``timeout`` seconds; the whole call may take
        ``total_timeout`` seconds (``None``: bounded only by the per-task deadlines), after which
        unfinished tasks are ``cancelled``. Waiting for a free worker does not count against a
        task's own deadline. (:meth:`batch` runs tasks while the caller is still finding them.)

        Example:
            >>> with DeadlinePool(1) as pool:
            ...     [(o.status, o.value) for o in pool.run(divmod, [(7, 2), (1, 0)], timeout=5)]
            [('ok', (3, 1)), ('raised', None)]
        """
        with self.batch(function, timeout=timeout, total_timeout=total_timeout) as batch:
            for args in tasks:
                batch.add(args, send=False)
            return batch.outcomes()

    def batch(self, function: Callable[..., Any], *, timeout: float, total_timeout: float | None = None) -> TaskBatch:
        """A batch whose tasks start on the workers as they are added, while the caller goes on.

        :meth:`run`'s rules (``timeout`` per task, ``total_timeout`` for the whole batch from now);
        see :class:`TaskBatch`.

        Example:
            >>> with DeadlinePool(1) as pool, pool.batch(divmod, timeout=5) as batch:
            ...     first = batch.add((7, 2))  # sent at once when a worker is free
            ...     second = batch.add((9, 4))
            ...     [o.value for o in batch.outcomes()]
            [(3, 1), (2, 1)]
        """
        return TaskBatch(self, function, timeout, total_timeout)

    def _dispatch(self, function: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], pending: deque[int],
                  flights: dict[Connection, _Flight], outcomes: list[Outcome | None],
                  batch_deadline: float | None, *, block: bool = True) -> None:
        """Give each free worker a task, then queue one more behind each busy worker's.

        ``block=False``: take only workers there are now (idle, or forked from a template that is up).
        """
        while pending:
            try:
                worker = self._checkout(block=block and not flights, until=batch_deadline, start=block)
            except WorkerStartError as exc:
                outcomes[pending.popleft()] = Outcome("crashed", message=str(exc))
                continue
            if worker is None:
                break
            flight = _Flight(worker, deque(), time.monotonic())
            if self._send(function, tasks, pending, flight):
                flights[worker.connection] = flight
        for conn, flight in list(flights.items()):
            if not pending:
                return
            if len(flight.queue) < _QUEUED_PER_WORKER and not self._send(function, tasks, pending, flight):
                del flights[conn]
                outcomes[flight.queue.popleft()] = Outcome("crashed", message="the worker died during the task")
                pending.extendleft(reversed(flight.queue))

    def _send(self, function: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], pending: deque[int],
              flight: _Flight) -> bool:
        """Send the next pending task to the flight's worker; on failure it is pending again."""
        index = pending.popleft()
        try:
            flight.worker.connection.send((function, tasks[index]))
        except OSError:
            pending.appendleft(index)
            self._discard(flight.worker)
            return False
        flight.queue.append(index)
        return True

    def _collect(self, flights: dict[Connection, _Flight], pending: deque[int], outcomes: list[Outcome | None],
                 timeout: float, batch_deadline: float | None, *, block: bool = True) -> None:
        """Take the results that come in (waiting for the first one unless ``block=False``), then end overruns."""
        until = min(flight.started for flight in flights.values()) + timeout
        if batch_deadline is not None:
            until = min(until, batch_deadline)
        # poll() takes whole milliseconds in a C int (about 24.8 days): a longer deadline is waited in slices.
        longest = min(_LONGEST_WAIT, max(0.0, until - time.monotonic())) if block else 0.0
        for conn in wait(list(flights), timeout=longest):
            flight = flights[conn]  # type: ignore[index]
            index = flight.queue.popleft()
            try:
                status, value = conn.recv()  # type: ignore[union-attr]
            except (EOFError, OSError):
                self._end_flight(flights, conn, pending)  # type: ignore[arg-type]
                outcomes[index] = Outcome("crashed", message="the worker died during the task",
                                          seconds=time.monotonic() - flight.started)
                continue
            now = time.monotonic()
            outcomes[index] = Outcome("ok", value, seconds=now - flight.started) if status == "ok" else \
                Outcome("raised", message=value, seconds=now - flight.started)
            flight.started = now  # the queued task, if any, starts now
            if not flight.queue:
                del flights[conn]  # type: ignore[arg-type]
                self._checkin(flight.worker)
        now = time.monotonic()
        for conn, flight in list(flights.items()):
            overran = now - flight.started >= timeout
            if overran or batch_deadline is not None and now >= batch_deadline:
                index = flight.queue.popleft()
                self._end_flight(flights, conn, pending)
                outcomes[index] = Outcome("timeout", message=f"the task ran past its {timeout} s deadline",
                                          seconds=now - flight.started) if overran else \
                    Outcome("cancelled", message="the batch deadline passed", seconds=now - flight.started)

    def _end_flight(self, flights: dict[Connection, _Flight], conn: Connection, pending: deque[int]) -> None:
        """Kill the flight's worker; the tasks queued behind its current one never started: pending again."""
        flight = flights.pop(conn)
        self._discard(flight.worker)
        pending.extendleft(reversed(flight.queue))

    def _checkout(self, *, block: bool, until: float | None, start: bool = True) -> Worker | None:
        """An idle worker, else a new one while the pool has room; ``start=False``: only if the template is up
        (never waiting for its start, never starting it)."""
        with self._condition:
            while True:
                if self._closed:
                    raise WorkerStartError("the pool is closed")
                if self._idle:
                    return self._idle.pop()
                if len(self._workers) + self._starting < self.size:
                    if not start and (self._zygote is None or self._zygote_lock.locked()):
                        return None
                    self._starting += 1
                    break
                remaining = None if until is None else until - time.monotonic()
                if not block or (remaining is not None and remaining <= 0):
                    return None
                self._condition.wait(remaining)
        try:
            worker = self._fork_worker()
        finally:
            with self._condition:
                self._starting -= 1
                self._condition.notify()
        with self._condition:
            self._workers.add(worker)
        return worker

    def _fork_worker(self) -> Worker:
        zygote = self._zygote_or_start()
        try:
            return zygote.fork_worker()
        except WorkerStartError:
            with self._condition:
                if self._zygote is zygote:
                    self._zygote = None  # start a fresh template next time
            raise

    def _checkin(self, worker: Worker) -> None:
        with self._condition:
            if self._closed:
                worker.stop()
                self._workers.discard(worker)
                return
            self._idle.append(worker)
            self._condition.notify()

    def _discard(self, worker: Worker) -> None:
        worker.kill()
        with self._condition:
            self._workers.discard(worker)
            self._condition.notify()

    def processes(self) -> list[int]:
        """Process ids of the live workers and of their template (for monitoring).

        Example:
            >>> with DeadlinePool(1) as pool:
            ...     _ = pool.run(abs, [(-1,)], timeout=5)
            ...     len(pool.processes())
            2
        """
        with self._condition:
            pids = [worker.pid for worker in self._workers]
            if self._zygote is not None:
                pids.append(self._zygote.pid)
        return pids

    def close(self) -> None:
        """Stop idle workers, kill busy ones and the template; later calls to :meth:`run` report ``crashed``.

        Example:
            >>> pool = DeadlinePool(1)
            >>> pool.close()
            >>> pool.run(abs, [(-1,)], timeout=5)[0].status
            'crashed'
        """
        with self._condition:
            self._closed = True
            idle, self._idle = self._idle, []
            busy = self._workers - set(idle)
            self._workers = set()
            zygote, self._zygote = self._zygote, None
            self._condition.notify_all()
        for worker in idle:
            worker.stop()
        for worker in busy:
            worker.kill()
        if zygote is not None:
            zygote.close()

    def _forget_after_fork(self) -> None:
        """In a forked child: drop the parent's workers without touching them, start afresh lazily."""
        for worker in self._workers:
            worker.close()
        if self._zygote is not None:
            self._zygote.abandon()
        closed = self._closed
        self._reset()
        self._closed = closed

    def __enter__(self) -> DeadlinePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TaskBatch:
    """Tasks of one function run on a :class:`DeadlinePool` while the caller is still adding them.

    :meth:`add` sends a task as soon as a worker is free (a worker is forked only once the
    template is up: adding never waits for its imports, and :meth:`DeadlinePool.start` is
    what starts them early); :meth:`poll`, called between the
    caller's own steps, takes the results that came in and sends what waits; :meth:`outcomes`
    waits for the rest. The rules are :meth:`DeadlinePool.run`'s: each task may run ``timeout``
    seconds, the batch ``total_timeout`` seconds from its creation. Leaving the ``with`` block
    before :meth:`outcomes` kills the workers still busy with its tasks.

    Example:
        >>> with DeadlinePool(1) as pool, pool.batch(abs, timeout=5) as batch:
        ...     for number in (-1, -2):
        ...         _ = batch.add((number,))
        ...         batch.poll()  # the caller's own work goes on between calls
        ...     [o.value for o in batch.outcomes()]
        [1, 2]
    """

    def __init__(self, pool: DeadlinePool, function: Callable[..., Any], timeout: float,
                 total_timeout: float | None) -> None:
        if not timeout > 0 or (total_timeout is not None and not total_timeout > 0):
            raise ValueError(f"timeout={timeout!r} and total_timeout={total_timeout!r} must be positive seconds.")
        self._pool, self._function, self._timeout, self._total_timeout = pool, function, timeout, total_timeout
        self._deadline = None if total_timeout is None else time.monotonic() + total_timeout
        self._tasks: list[tuple[Any, ...]] = []
        self._outcomes: list[Outcome | None] = []
        self._pending: deque[int] = deque()
        self._flights: dict[Connection, _Flight] = {}

    def add(self, args: tuple[Any, ...], *, send: bool = True) -> int:
        """Add the task ``function(*args)``; returns its index in :meth:`outcomes` (``send=False``: send it later)."""
        self._tasks.append(args)
        self._outcomes.append(None)
        self._pending.append(len(self._tasks) - 1)
        if send:
            self.poll()
        return len(self._tasks) - 1

    def poll(self) -> None:
        """Without waiting: take the results that came in, end overruns, send tasks to free workers."""
        if self._deadline is not None and time.monotonic() >= self._deadline:
            return  # outcomes() reports what is left as cancelled
        if self._flights:
            self._pool._collect(self._flights, self._pending, self._outcomes, self._timeout, self._deadline,
                                block=False)
        self._pool._dispatch(self._function, self._tasks, self._pending, self._flights, self._outcomes,
                             self._deadline, block=False)

    def outcomes(self) -> list[Outcome]:
        """Wait for every task; their outcomes in the order they were added."""
        pool, deadline = self._pool, self._deadline
        while self._pending or self._flights:
            pool._dispatch(self._function, self._tasks, self._pending, self._flights, self._outcomes, deadline)
            if not self._flights:
                break  # the batch deadline passed while waiting for a worker
            pool._collect(self._flights, self._pending, self._outcomes, self._timeout, deadline)
            if deadline is not None and time.monotonic() >= deadline:
                break
        self._abandon()
        return [outcome or Outcome("cancelled", message=f"the batch deadline of {self._total_timeout} s passed")
                for outcome in self._outcomes]

    def _abandon(self) -> None:
        """The deadline passed or the caller left: the tasks still on workers are unfinished."""
        for flight in self._flights.values():
            self._pool._discard(flight.worker)
        self._flights.clear()

    def __enter__(self) -> TaskBatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self._abandon()


_ALL_POOLS: weakref.WeakSet[DeadlinePool] = weakref.WeakSet()
_SHARED: dict[tuple[Any, ...], DeadlinePool] = {}
_SHARED_LOCK = threading.Lock()


def shared_pool(workers: int | None = None, *, preload: Sequence[str] = (), warm_up: str | None = None,
                memory_limit_mb: int | None = 2048) -> DeadlinePool:
    """The process-wide pool with these settings, created on first use and reused after.

    Example:
        >>> shared_pool(1) is shared_pool(1)
        True
    """
    key = (default_workers() if workers is None else workers, tuple(preload), warm_up, memory_limit_mb)
    with _SHARED_LOCK:
        pool = _SHARED.get(key)
        if pool is None or pool._closed:
            pool = _SHARED[key] = DeadlinePool(key[0], preload=key[1], warm_up=warm_up, memory_limit_mb=memory_limit_mb)
        return pool


def _close_all() -> None:
    for pool in list(_ALL_POOLS):
        pool.close()


def _forget_all_after_fork() -> None:
    global _SHARED_LOCK
    _SHARED_LOCK = threading.Lock()
    for pool in list(_ALL_POOLS):
        pool._forget_after_fork()


atexit.register(_close_all)
os.register_at_fork(after_in_child=_forget_all_after_fork)
