"""Verification across machines on Ray: one verifier host actor per node, shared by every caller there.

This runner stands above every answer domain: a reward's ``backend="ray"`` (dispatched by
:func:`referee.verifiers.registry.verify_batch_on`) calls :func:`run_batch`, which sends the batch to the **verifier host of the caller's own node**: a
threaded Ray actor named ``referee-host-<node_id>`` that owns referee's maths pool and code
sandbox fork servers on that node. So completions never leave their node, the gold cache of
the maths workers stays warm per node, and all the trainer's processes on a node share one set
of pools instead of starting one each. The host finds each verifier by name through the
registry and gives it the options the host owns (its pool size as ``workers``, its sandbox
level as ``isolation``) when the verifier's ``verify_batch`` takes them.

* **Placement.** A host takes ``num_cpus`` equal to its pool size (default: half the node's
  CPUs, at least one; :func:`configure_hosts` or ``REFEREE_RAY_POOL_SIZE``), runs up to twice
  that many batches at once (``max_concurrency``), is pinned to its node with
  ``NodeAffinitySchedulingStrategy``, and is restarted when it dies (``max_restarts=-1``).
  ``get_if_exists=True`` makes the first caller on a node create it and every later one find it,
  from any Ray job of the cluster: hosts live in the ``referee`` namespace and are detached
  (a trainer, ``referee score --ray`` and ``referee doctor --ray`` share them, and none dies
  with the job that happened to start it); they stay until :func:`stop_hosts` or the cluster's end.
  A caller on a node without CPUs (a GPU-only node, a driver on a 0-CPU head) uses the host of
  a live CPU node.
* **Isolation.** At start a host runs the ``referee doctor`` check (judges a small program in
  its sandbox) and reports its isolation level (:func:`describe_hosts`). With ``min_isolation``
  set (:func:`configure_hosts` or ``REFEREE_RAY_MIN_ISOLATION``), a host below that level
  refuses code: those items are ``error`` (not the completion's fault, reward ``None``).
* **Deadlines stay inside the host**: the per-item deadlines are referee's own (its workers are
  killed from outside); Ray cannot interrupt a running actor call, so none is relied on.
* **Faults.** A batch is sent in a few chunks. A chunk whose host dies or whose node is lost is
  sent once more, to another node's host (the same node's, restarted, on a one-node cluster):
  verification has no side effects. Items still unfinished after that are ``error``, as are the
  items unfinished when the caller's ``batch_timeout`` passes. Verdicts come back one per
  item, in order; nothing is dropped and a failure never reads as a pass.

Ray is the optional ``ray`` extra (``pip install 'referee[ray]'``) and is imported only when
``backend="ray"`` is used. Ray is started with ``ray.init()`` when the caller has not done so
(``RAY_ADDRESS`` picks the cluster).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import math
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from .registry import BACKENDS, VERIFIER_NAMES, backend_problem, get_verifier, warm_up_case  # noqa: F401 (BACKENDS, backend_problem: their old home)
from .verdict import Verdict

HOST_PREFIX = "referee-host-"
NAMESPACE = "referee"  # the hosts' Ray namespace, shared by every job of the cluster
_MIN_CHUNK = 32  # items per chunk at least: a chunk is one actor call
_GRACE_SECONDS = 5.0  # past batch_timeout, how long the caller waits for a host's own deadline to answer
_MONITOR = "monitor"  # the hosts' concurrency group for info()


@dataclass(frozen=True)
class HostSettings:
    """How the hosts this process creates are sized and what they accept.

    Attributes:
        pool_size: workers in each host's maths pool and code judge pool, and the host's
            ``num_cpus`` (``None``: half the node's CPUs, at least 1).
        min_isolation: the weakest code sandbox level a host may run programs at (``full``,
            ``namespaces``, ``uid``, ``basic``; ``None``: any).
        isolation: the sandbox level a host runs programs at (``auto``: the best its node gives).
        start_timeout: seconds a caller waits for a new host to be placed and started (its
            pools warmed, the doctor check run) before trying another node's.

    A host is created by the first caller on its node, with that caller's settings; the others
    find it as it is. Set the same settings everywhere (the environment variables
    ``REFEREE_RAY_POOL_SIZE`` and ``REFEREE_RAY_MIN_ISOLATION`` reach Ray workers through a
    ``runtime_env``).

    Example:
        >>> HostSettings(pool_size=4).pool_for(16), HostSettings().pool_for(16), HostSettings().pool_for(1)
        (4, 8, 1)
    """

    pool_size: int | None = None
    min_isolation: str | None = None
    isolation: str = "auto"
    start_timeout: float = 120.0

    def pool_for(self, node_cpus: float) -> int:
        """The pool size of a host on a node with ``node_cpus`` CPUs."""
        return self.pool_size if self.pool_size is not None else max(1, int(node_cpus) // 2)


def _settings_from_env() -> HostSettings:
    size = os.environ.get("REFEREE_RAY_POOL_SIZE")
    return HostSettings(pool_size=int(size) if size and size.isdigit() and int(size) > 0 else None,
                        min_isolation=os.environ.get("REFEREE_RAY_MIN_ISOLATION") or None)


_settings = _settings_from_env()


def configure_hosts(**changes: Any) -> HostSettings:
    """Change the :class:`HostSettings` of the hosts this process creates from now on; returns them.

    Example:
        >>> before = configure_hosts()
        >>> configure_hosts(pool_size=2).pool_size
        2
        >>> configure_hosts(min_isolation="sandbox")
        Traceback (most recent call last):
        ...
        ValueError: min_isolation='sandbox' is not a level; use one of full, namespaces, uid, basic (or None).
        >>> configure_hosts(**before.__dict__) == before
        True
    """
    global _settings
    from .sandbox.isolation import LEVELS

    settings = replace(_settings, **changes)
    if settings.min_isolation is not None and settings.min_isolation not in LEVELS:
        raise ValueError(f"min_isolation={settings.min_isolation!r} is not a level; use one of "
                         f"{', '.join(LEVELS)} (or None).")
    if settings.isolation not in ("auto", *LEVELS):
        raise ValueError(f"isolation={settings.isolation!r} is not a level; use auto or one of {', '.join(LEVELS)}.")
    if settings.pool_size is not None and (isinstance(settings.pool_size, bool) or not isinstance(settings.pool_size, int)
                                           or settings.pool_size < 1):
        raise ValueError(f"pool_size={settings.pool_size!r} must be a positive integer (or None).")
    _settings = settings
    return settings


def chunk_bounds(count: int, parts: int, min_chunk: int = _MIN_CHUNK) -> list[tuple[int, int]]:
    """Split ``range(count)`` into at most ``parts`` contiguous chunks of at least ``min_chunk`` items.

    Example:
        >>> chunk_bounds(100, 4), chunk_bounds(10, 4), chunk_bounds(0, 4)
        ([(0, 25), (25, 50), (50, 75), (75, 100)], [(0, 10)], [])
    """
    if count <= 0:
        return []
    parts = max(1, min(parts, math.ceil(count / min_chunk)))
    size = math.ceil(count / parts)
    return [(start, min(count, start + size)) for start in range(0, count, size)]


# ---------------------------------------------------------------------------------------------
# The host actor (a plain class here; ray.remote() wraps it only when Ray is used).


class VerifierHost:
    """The verifier host of one node: owns the node's maths pool and code sandbox workers.

    Runs as a threaded Ray actor (see :func:`host_for_node`); each method call runs in one of
    its threads, and the pools take tasks from several threads at once.
    """

    def __init__(self, pool_size: int, min_isolation: str | None = None, isolation: str = "auto") -> None:
        import ray

        from .code.doctor import SandboxCheck, sandbox_check
        from .sandbox.isolation import below

        self.pool_size = pool_size
        self.min_isolation = min_isolation
        self.node_id = ray.get_runtime_context().get_node_id()
        self.started = time.time()
        self.batches = 0
        self.items = 0
        self.callers: set[tuple[str, int]] = set()
        self._lock = threading.Lock()
        try:  # the doctor check; also starts the judge pool
            check = sandbox_check(isolation, workers=pool_size)
        except ValueError as exc:  # the asked-for level is not available on this node
            check = SandboxCheck(isolation, False, str(exc), 0.0)
        self.isolation = check.level
        self.sandbox_ok = check.ok
        self.sandbox_reason = check.reason
        self.refusal: str | None = None
        if not check.ok:
            self.refusal = f"the verifier host on node {self.node_id[:12]} cannot run code: {check.reason}"
        elif below(check.level, min_isolation):
            self.refusal = (f"the verifier host on node {self.node_id[:12]} has sandbox isolation {check.level}, "
                            f"below min_isolation={min_isolation}; it refuses code")
        for name in VERIFIER_NAMES:  # start the worker pools of the verifiers that have them
            case = warm_up_case(name)
            if case is not None:
                module = get_verifier(name)
                module.verify_batch([case[0]], [case[1]], **self._owned_options(module))

    def _owned_options(self, module: Any) -> dict[str, Any]:
        """The options this host owns (pool size, sandbox level) that ``module``'s ``verify_batch`` takes."""
        takes = inspect.signature(module.verify_batch).parameters
        owned = {"workers": self.pool_size, "isolation": self.isolation}
        return {name: value for name, value in owned.items() if name in takes}

    def info(self) -> dict[str, Any]:
        """Where this host runs and what it has (``referee doctor --ray`` prints it)."""
        import socket

        with self._lock:
            return {"node_id": self.node_id, "hostname": socket.gethostname(), "pid": os.getpid(),
                    "pool_size": self.pool_size, "isolation": self.isolation, "sandbox_ok": self.sandbox_ok,
                    "sandbox_reason": self.sandbox_reason, "min_isolation": self.min_isolation,
                    "refuses_code": self.refusal is not None, "started": self.started, "batches": self.batches,
                    "items": self.items, "callers": sorted(self.callers)}

    def verify_batch(self, verifier: str, completions: Sequence[Any], golds: Sequence[Any],
                     options: dict[str, Any], caller: tuple[str, int]) -> list[Verdict]:
        """The local ``verify_batch`` of ``verifier`` on this node's pools (``workers`` is the host's)."""
        with self._lock:
            self.batches += 1
            self.items += len(completions)
            self.callers.add(tuple(caller))
        module = get_verifier(verifier)
        owned = self._owned_options(module)
        if "isolation" in owned and self.refusal:  # a verifier that takes a sandbox level runs code
            return [Verdict("error", reason=self.refusal) for _ in completions]
        options = {name: value for name, value in options.items() if name != "backend" and name not in owned}
        return module.verify_batch(completions, golds, **options, **owned)


# ---------------------------------------------------------------------------------------------
# The caller's side.

_handles: dict[str, Any] = {}  # node id -> actor handle, checked to have started
_pool_sizes: dict[str, int] = {}  # node id -> its host's pool size
_handles_lock = threading.Lock()
_init_lock = threading.Lock()
_remote_class: Any = None


def _host_class() -> Any:
    global _remote_class
    if _remote_class is None:
        import ray

        # info() has threads of its own, so it answers while every batch thread is busy.
        _remote_class = ray.remote(concurrency_groups={_MONITOR: 2})(VerifierHost)
    return _remote_class


def cpu_nodes() -> dict[str, float]:
    """Live nodes of the Ray cluster that have CPUs: node id -> CPU count (connects to Ray).

    Example:
        >>> callable(cpu_nodes)  # needs a Ray cluster; see tests/verifiers/test_ray_host.py
        True
    """
    ray = connect()
    return {node["NodeID"]: node["Resources"].get("CPU", 0.0) for node in ray.nodes()
            if node.get("Alive") and node.get("Resources", {}).get("CPU", 0.0) > 0}


def host_name(node_id: str) -> str:
    """The actor name of ``node_id``'s verifier host.

    Example:
        >>> host_name("ab12")
        'referee-host-ab12'
    """
    return f"{HOST_PREFIX}{node_id}"


def host_for_node(node_id: str, node_cpus: float | None = None, wait: float | None = None) -> Any:
    """The verifier host of ``node_id``: found by name, else created there; waits until it has started.

    Raises ``TimeoutError`` when it does not start within ``wait`` seconds (default: the
    settings' ``start_timeout``), for instance when its node has fewer free CPUs than its pool size.

    Example:
        >>> callable(host_for_node)  # needs a Ray cluster; see tests/verifiers/test_ray_host.py
        True
    """
    with _handles_lock:
        handle = _handles.get(node_id)
    if handle is not None:
        return handle
    ray = connect()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    settings = _settings
    if node_cpus is None:
        node_cpus = cpu_nodes().get(node_id, 1.0)
    size = settings.pool_for(node_cpus)
    handle = _host_class().options(
        name=host_name(node_id), namespace=NAMESPACE, lifetime="detached", get_if_exists=True, num_cpus=size,
        max_concurrency=2 * size, max_restarts=-1, scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
    ).remote(size, settings.min_isolation, settings.isolation)
    wait = settings.start_timeout if wait is None else min(wait, settings.start_timeout)
    try:
        info = host_info(handle, wait)
    except ray.exceptions.GetTimeoutError:
        raise TimeoutError(f"the verifier host on node {node_id[:12]} did not start within {wait:.0f} s "
                           f"(it needs {size} free CPUs there; see configure_hosts(pool_size=...))") from None
    with _handles_lock:
        _handles[node_id] = handle
        _pool_sizes[node_id] = info["pool_size"]
    return handle


def _info_call(handle: Any) -> Any:
    return handle.info.options(concurrency_group=_MONITOR).remote()


def host_info(handle: Any, timeout: float = 60.0) -> dict[str, Any]:
    """A host's :meth:`VerifierHost.info`, answered by its own threads even while every batch
    thread is busy; raises ``ray.exceptions.GetTimeoutError`` after ``timeout`` seconds.

    Example:
        >>> callable(host_info)  # needs a Ray cluster; see tests/verifiers/test_ray_host.py
        True
    """
    import ray

    return ray.get(_info_call(handle), timeout=timeout)


def _forget(node_id: str) -> None:
    with _handles_lock:
        _handles.pop(node_id, None)


def _all_hosts(ray: Any) -> list[Any]:
    handles = []
    for entry in ray.util.list_named_actors(all_namespaces=True):
        if entry["name"].startswith(HOST_PREFIX):
            try:
                handles.append(ray.get_actor(entry["name"], namespace=entry["namespace"]))
            except ValueError:  # died since it was listed
                continue
    return handles


def stop_hosts() -> int:
    """Kill every verifier host of the cluster (they are detached: they outlive the jobs that use
    them); the next ``backend="ray"`` call starts new ones. Returns how many were killed.

    Example:
        >>> callable(stop_hosts)  # needs a Ray cluster; see tests/verifiers/test_ray_host.py
        True
    """
    ray = connect()
    handles = _all_hosts(ray)
    for handle in handles:
        ray.kill(handle)
    with _handles_lock:
        _handles.clear()
    return len(handles)


def ensure_hosts() -> dict[str, Any]:
    """Start (or find) a host on every live CPU node; node id -> handle.

    Example:
        >>> callable(ensure_hosts)  # needs a Ray cluster; see tests/verifiers/test_ray_host.py
        True
    """
    return {node_id: host_for_node(node_id, cpus) for node_id, cpus in sorted(cpu_nodes().items())}


def describe_hosts(start: bool = True) -> list[dict[str, Any]]:
    """One dict per verifier host of the cluster (its node, isolation, pool size, ...), by node.

    With ``start`` a host is first started on every live CPU node (``referee doctor --ray``).

    Example:
        >>> callable(describe_hosts)  # needs a Ray cluster; see tests/verifiers/test_ray_host.py
        True
    """
    ray = connect()
    if start:
        ensure_hosts()
    handles = _all_hosts(ray)
    refs = [_info_call(handle) for handle in handles]
    ready, _ = ray.wait(refs, num_returns=len(refs), timeout=_settings.start_timeout) if refs else ([], [])
    infos = []
    for ref in ready:  # a host that is dead or restarting is left out
        try:
            infos.append(ray.get(ref))
        except ray.exceptions.RayError:
            continue
    return sorted(infos, key=lambda info: info["node_id"])


def _caller_node(ray: Any, nodes: dict[str, float]) -> str:
    """The caller's node when it has CPUs, else a CPU node chosen by the caller's node id (stable)."""
    here = ray.get_runtime_context().get_node_id()
    if here in nodes or not nodes:
        return here
    ordered = sorted(nodes)
    return ordered[int(here, 16) % len(ordered) if all(c in "0123456789abcdef" for c in here) else 0]


def _fallback_node(failed: str, nodes: dict[str, float]) -> str:
    """Another live CPU node than ``failed`` (the next one in id order), or ``failed`` itself when alone."""
    others = sorted(n for n in nodes if n != failed)
    if not others:
        return failed
    return next((n for n in others if n > failed), others[0])


@dataclass
class _Chunk:
    start: int
    end: int
    node: str
    tries: int = 1


def run_batch(verifier: str, completions: Sequence[Any], golds: Sequence[Any], options: dict[str, Any],
              *, batch_timeout: float | None = None) -> list[Verdict]:
    """``verifier``'s ``verify_batch`` on the verifier host of the caller's node; one Verdict per item, in order.

    The dispatch of ``backend="ray"`` (see :func:`referee.verifiers.registry.verify_batch_on`). ``options`` are the
    verifier's own (sent to the host as they are); ``batch_timeout`` bounds the whole call:
    the host gets it too (maths and code stop their own work then), and items unfinished
    shortly after it are ``error``. Never raises for a failed host or node: see the module's
    notes on faults.

    Example:
        >>> run_batch("math", ["\\\\boxed{1}"], ["1"], {}, batch_timeout=-1)[0].reason
        'batch_timeout=-1 must be a positive number of seconds'
    """
    count = len(completions)
    if batch_timeout is not None and (isinstance(batch_timeout, bool) or not isinstance(batch_timeout, (int, float))
                                      or not batch_timeout > 0):
        return [Verdict("error", reason=f"batch_timeout={batch_timeout!r} must be a positive number of seconds")] * count
    if verifier not in VERIFIER_NAMES:
        return [Verdict("error", reason=f"no verifier {verifier!r} on the verifier hosts")] * count
    if not count:
        return []
    started = time.monotonic()
    deadline = None if batch_timeout is None else started + batch_timeout
    try:
        ray = connect()
        nodes = cpu_nodes()
    except Exception as exc:  # Ray missing or the cluster unreachable: not the completions' fault
        return [Verdict("error", reason=f"backend='ray' could not reach Ray: {type(exc).__name__}: {exc}")] * count
    if not nodes:
        return [Verdict("error", reason="the Ray cluster has no live node with CPUs for a verifier host")] * count
    caller = (ray.get_runtime_context().get_node_id(), os.getpid())
    home = _caller_node(ray, nodes)
    verdicts: list[Verdict | None] = [None] * count
    failures: dict[int, str] = {}  # chunk start -> why its last try failed
    in_flight: dict[Any, _Chunk] = {}

    def remaining() -> float | None:
        return None if deadline is None else max(1e-3, deadline - time.monotonic())

    def submit(chunk: _Chunk) -> None:
        """Send the chunk to its node's host; on a host that cannot be had, count a failed try."""
        while True:
            try:
                handle = host_for_node(chunk.node, nodes.get(chunk.node), remaining())
            except Exception as exc:  # not placed in time, or the node is gone
                if not fail(chunk, f"{type(exc).__name__}: {exc}"):
                    return
                continue
            chunk_options = dict(options)
            left = remaining()
            if left is not None:
                chunk_options["batch_timeout"] = left
            ref = handle.verify_batch.remote(verifier, list(completions[chunk.start:chunk.end]),
                                             list(golds[chunk.start:chunk.end]), chunk_options, caller)
            in_flight[ref] = chunk
            return

    def fail(chunk: _Chunk, why: str) -> bool:
        """Record a failed try; True when the chunk goes to another node's host for its second one."""
        _forget(chunk.node)
        if chunk.tries >= 2:
            failures[chunk.start] = f"the verifier hosts failed on both tries of this item's chunk: {why}"
            return False
        chunk.tries += 1
        try:
            live = cpu_nodes()
        except Exception:
            live = nodes
        nodes.update(live)
        chunk.node = _fallback_node(chunk.node, live or nodes)
        return True

    try:
        host_for_node(home, nodes.get(home), remaining())
        first_node, first_tries = home, 1
    except Exception as exc:  # its host cannot be had: the first try failed already
        first_node, first_tries = _fallback_node(home, nodes), 2
        if first_node == home:
            return [Verdict("error", reason=f"no verifier host could serve this batch: {type(exc).__name__}: {exc}",
                            details={"backend": "ray"}) for _ in completions]
    for start, end in chunk_bounds(count, 2 * _pool_sizes.get(first_node, 1)):
        submit(_Chunk(start, end, first_node, first_tries))
    while in_flight:
        left = None if deadline is None else deadline + _GRACE_SECONDS - time.monotonic()
        if left is not None and left <= 0:
            break
        ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=left)
        if not ready:
            break
        ref = ready[0]
        chunk = in_flight.pop(ref)
        try:
            result = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # the host's verify_batch raised: a verifier bug
            failures[chunk.start] = f"the verifier host raised {str(exc).splitlines()[-1][:200]}"
            continue
        except ray.exceptions.RayError as exc:  # the host died or its node was lost
            if fail(chunk, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"):
                submit(chunk)
            continue
        if len(result) != chunk.end - chunk.start:
            failures[chunk.start] = f"the verifier host returned {len(result)} verdicts for {chunk.end - chunk.start} items"
            continue
        verdicts[chunk.start:chunk.end] = result
    for ref, chunk in in_flight.items():
        try:
            ray.cancel(ref)  # a queued call never starts; a running one ends on the host's own deadline
        except Exception:  # cancelling is a courtesy: the verdicts below do not depend on it
            pass
        failures.setdefault(chunk.start, "")
    starts = sorted(failures)
    out: list[Verdict] = []
    for index, verdict in enumerate(verdicts):
        if verdict is not None:
            out.append(verdict)
            continue
        reason = failures[max(s for s in starts if s <= index)]
        if not reason:
            reason = f"the batch deadline of {batch_timeout} s passed before the verifier host answered"
        out.append(Verdict("error", reason=reason, details={"backend": "ray"}))
    return out


async def averify_batch(verifier: str, completions: Sequence[Any], golds: Sequence[Any], **options: Any) -> list[Verdict]:
    """Await ``verifier``'s ``verify_batch`` on the caller's node's host (for asyncio callers).

    The event loop is never blocked: the call waits for the host in a thread of the loop's
    executor. ``options`` are the verifier's, plus ``batch_timeout``.

    Example:
        >>> import asyncio
        >>> asyncio.run(averify_batch("gsm8k", ["#### 3"], [3], batch_timeout=0))[0].status
        'error'
    """
    batch_timeout = options.pop("batch_timeout", None)
    options.pop("backend", None)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, lambda: run_batch(verifier, completions, golds, options,
                                                              batch_timeout=batch_timeout))


# ---------------------------------------------------------------------------------------------
# Offline scoring across the cluster (``referee score --ray``).


def connect(address: str | None = None) -> Any:
    """Connect this process to the Ray cluster at ``address`` (``"auto"``: the running one,
    ``"local"``: start one here, ``None``: ``RAY_ADDRESS`` or a new local one); returns ``ray``.

    Raises ``ImportError`` without Ray and ``ConnectionError`` when the cluster cannot be reached.

    Example:
        >>> callable(connect)  # needs Ray; see tests/verifiers/test_ray_cluster.py
        True
    """
    try:
        import ray
    except ImportError:
        raise ImportError("Ray is not installed: pip install 'referee[ray]'.") from None
    if ray.is_initialized():
        return ray
    problem = _unreachable(address)
    if problem:
        raise ConnectionError(f"cannot reach the Ray cluster at {address}: {problem}")
    try:
        with _init_lock:
            if ray.is_initialized():  # another thread connected while this one waited
                return ray
            if address == "local":
                ray.init(address="local", log_to_driver=False, include_dashboard=False)
            else:
                ray.init(address=address, log_to_driver=False)
    except Exception as exc:
        raise ConnectionError(f"cannot reach the Ray cluster at {address or 'RAY_ADDRESS'}: "
                              f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    return ray


def _unreachable(address: str | None, timeout: float = 5.0) -> str | None:
    """Why a ``host:port`` address takes no TCP connection (Ray would wait for it for minutes), or ``None``.

    Example:
        >>> _unreachable("auto") is None, _unreachable("127.0.0.1:1") is not None
        (True, True)
    """
    import socket

    host, sep, port = (address or "").rpartition(":")
    if not sep or not port.isdigit() or "/" in host:  # auto, local, ray://... : Ray's own lookup
        return None
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout).close()
    except OSError as exc:
        return f"no Ray GCS answers there ({exc.strerror or exc})"
    return None


def _on_node(verifier: str, completions: list[Any], golds: list[Any], options: dict[str, Any]) -> list[Verdict]:
    """A Ray task's body: the batch on the host of the node the task landed on."""
    return run_batch(verifier, completions, golds, options, batch_timeout=options.pop("batch_timeout", None))


def spread_batches(verifier: str, batches: Any, options: dict[str, Any], *, window: int | None = None) -> Any:
    """Judge ``(completions, golds)`` batches across the cluster; yields each batch's Verdicts, in order.

    Each batch becomes a Ray task (no CPUs of its own, spread over the nodes) that sends it to
    the verifier host of the node it runs on, so every node's host works at once; at most
    ``window`` batches are in flight (default: two per CPU node), so a file of any size
    streams through. A batch whose task is lost with its node is run again by Ray (verification
    has no side effects); one that still fails is ``error`` items.

    Example:
        >>> callable(spread_batches)  # needs a Ray cluster; see tests/verifiers/test_ray_cluster.py
        True
    """
    ray = connect()
    from collections import deque

    task = ray.remote(num_cpus=0, scheduling_strategy="SPREAD", max_retries=2)(_on_node)
    window = window or 2 * max(1, len(cpu_nodes()))
    flight: deque[tuple[Any, int]] = deque()

    def result(ref: Any, size: int) -> list[Verdict]:
        try:
            return ray.get(ref)
        except ray.exceptions.RayError as exc:
            why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            return [Verdict("error", reason=f"the scoring task failed: {why}", details={"backend": "ray"})] * size

    for completions, golds in batches:
        if len(flight) >= window:
            yield result(*flight.popleft())
        flight.append((task.remote(verifier, list(completions), list(golds), dict(options)), len(completions)))
    while flight:
        yield result(*flight.popleft())


def _judge_batch(batch: dict[str, Any], *, verifier: str, completion_column: str, gold_column: str,
                 options: dict[str, Any]) -> dict[str, Any]:
    """``map_batches`` body of :func:`verify_dataset` (run as a Ray task): the batch with its verdict columns."""
    import json

    import numpy as np

    options = dict(options)
    verdicts = run_batch(verifier, [_plain(c) for c in batch[completion_column]], [_plain(g) for g in batch[gold_column]],
                         options, batch_timeout=options.pop("batch_timeout", None))
    return {**batch, "status": np.array([v.status for v in verdicts], dtype=object),
            "score": np.array([v.score for v in verdicts], dtype=float),
            "reason": np.array([v.reason for v in verdicts], dtype=object),
            "verdict": np.array([json.dumps(v.to_dict(), ensure_ascii=False, default=str) for v in verdicts],
                                dtype=object)}


def _plain(value: Any) -> Any:
    """A value as the verifiers take it: numpy scalars and arrays (Arrow's lists) as Python values.

    Example:
        >>> import numpy as np
        >>> _plain(np.str_("#### 3")), _plain({"inputs": np.array([1, 2])})
        ('#### 3', {'inputs': [1, 2]})
    """
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def verify_dataset(dataset: Any, verifier: str, *, completion_column: str = "completion",
                   gold_column: str | None = None, batch_size: int = 256, **options: Any) -> Any:
    """A Ray Dataset with each row judged: ``dataset.map_batches`` whose every batch is sent to the
    verifier host of the node it runs on (no CPUs of its own: the hosts do the work).

    Adds the columns ``status``, ``score``, ``reason`` and ``verdict`` (the Verdict as JSON) to
    each row, lazily like any ``map_batches`` (rows come out in Ray Data's order: set
    ``DataContext.get_current().execution_options.preserve_order`` to keep the input's). Completions are text (take the
    assistant's content out of chat messages first). ``options`` are the verifier's, plus
    ``batch_timeout`` (per batch). For large offline scoring on a cluster: the blocks are judged
    where they lie, by every node's host at once.

    Example:
        >>> callable(verify_dataset)  # needs Ray Data; see tests/verifiers/test_ray_host.py
        True
    """
    from .registry import default_gold_field

    judge = functools.partial(_judge_batch, verifier=verifier, completion_column=completion_column,
                              gold_column=gold_column or default_gold_field(verifier), options=dict(options))
    return dataset.map_batches(judge, batch_size=batch_size, num_cpus=0, batch_format="numpy")
