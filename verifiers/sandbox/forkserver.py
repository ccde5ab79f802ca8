"""The fork-server worker: started once per pool slot (inside its namespaces where it has them), it forks
one locked-down job per request.

A job is a fork of this warm process (common modules already imported), so it starts in
about a millisecond. Before running anything of the program the child makes its own session,
keeps only its channel and three pipes, moves into a fresh job folder, takes hard rlimits,
drops to the worker's unprivileged uid when there is one, forbids new privileges and, without
namespaces of its own, takes Landlock and a seccomp filter (:mod:`.confine`). The
worker drains the job's stdout and stderr with a cap, enforces a backstop deadline, and on
``end`` kills every process of the job, checks that none survive and removes its files.

Protocol on the control socket (framed wire messages, from the trusted judge):
``("start", request)`` is answered by one byte ``J`` carrying the job's channel as a passed
file descriptor (or ``E`` then ``("error", reason)``); ``("end", grace)`` by ``("report", report)``,
where ``grace`` is how long a job whose channel closed may take to finish exiting by itself (so
that the report can say how it ended). Run as
``python -I -m referee.verifiers.sandbox.forkserver --fd N [--uid U] [--pid-namespace] [--unshare-net]
[--confine] [--read-only FOLDER]...``.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import importlib
import os
import re
import select
import selectors
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from .channel import ChannelClosed, recv_message, send_message
from .cleanup import (SHARED_WRITABLE_DIRS, cpu_seconds_of, files_owned_by, job_processes, kill_job, list_processes,
                      reap_child, remove_tree, running_since, tree_bytes)
from .confine import LAYER_NAME as CONFINEMENT, confine_job, job_rules, self_test
from .cells import serve_cells
from .execjob import collect_files, exec_program, place_files
from .isolation import SANDBOX_ENV, read_only_paths
from .job import run_main, serve_calls
from .limits import DEFAULT_TMP_MB, Limits, apply_limits
from .mounts import let_others_reach, private_shared_folders

# Imported once here so that jobs find them warm (a fork shares them, copy-on-write).
PRELOADED_MODULES: tuple[str, ...] = (
    "abc", "array", "bisect", "cmath", "collections", "contextlib", "copy", "dataclasses", "datetime",
    "decimal", "enum", "fractions", "functools", "hashlib", "heapq", "io", "itertools", "json", "math",
    "numbers", "operator", "random", "re", "statistics", "string", "traceback", "typing",
)
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36
_CLONE_NEWNET = 0x40000000
_CLONE_NEWIPC = 0x08000000
_CAPABILITY_VERSION_3 = 0x20080522
_STDERR_TAIL = 2000
_TMP_CHECK_SECONDS = 0.05  # how often a job's folder is measured where no private /tmp bounds it
_JOBS_FOLDER_NAME = re.compile(r"referee-jobs-(?P<pid>\d+)-(?:(?P<start>\d+)-)?[^-]+")  # no start: older releases
_SHM_ROOM_JOBS = 4  # /dev/shm holds job folders only with room for this many jobs at their bound, or one per CPU
_LIBC = ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> bool:
    return _LIBC.prctl(option, value, 0, 0, 0) == 0


def _unshare_network() -> bool:
    return _LIBC.unshare(_CLONE_NEWNET) == 0


def _entries(folders: tuple[str, ...]) -> set[str]:
    """The paths of the entries of ``folders`` (the ones that exist)."""
    found = set()
    for folder in folders:
        try:
            found.update(entry.path for entry in os.scandir(folder))
        except OSError:
            continue
    return found


def _own_ipc_namespace() -> bool:
    """A System V IPC namespace of the job's own: the shared memory, queues and semaphores it makes
    die with it, outside any memory limit otherwise, and never reach the next job (or the host)."""
    return _LIBC.unshare(_CLONE_NEWIPC) == 0


def _drop_capabilities() -> None:
    """Leave a job that stays root (in its namespaces) no capability, and none to regain: root in name
    only (it cannot ptrace, write other processes' memory or remount)."""
    try:
        last = int(open("/proc/sys/kernel/cap_last_cap").read())
    except (OSError, ValueError):
        last = 63
    for capability in range(last + 1):
        _prctl(_PR_CAPBSET_DROP, capability)
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable; twice (capabilities 0-31, 32-63): none
    _LIBC.capset(header, data)


def _tasks_of_uid(uid: int) -> int:
    """Threads (what ``RLIMIT_NPROC`` counts) of ``uid`` visible here."""
    total = 0
    for process in list_processes():
        if process.uids[0] == uid:
            try:
                total += len(os.listdir(f"/proc/{process.pid}/task"))
            except OSError:
                continue
    return total


def killed_from_outside(status: int, cpu: float, killed: str | None, cpu_limit: int) -> bool:
    """Whether a job that ended by itself with wait ``status`` was killed by someone else: a
    ``SIGKILL`` that the worker did not send (``killed`` says why it did) and that the job's CPU
    limit did not send either (the kernel sends ``SIGKILL`` past the limit to a job that ignores
    ``SIGXCPU``). That is the OOM killer or an operator, not the program's fault. (A program that
    SIGKILLs itself looks the same, and is not rewarded either.)

    Example:
        >>> killed = 0x09  # the wait status of a process killed by SIGKILL
        >>> killed_from_outside(killed, 0.1, None, 4), killed_from_outside(killed, 4.5, None, 4)
        (True, False)
        >>> killed_from_outside(killed, 0.1, "deadline", 4), killed_from_outside(0x0b, 0.1, None, 4)
        (False, False)
    """
    return (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL and killed is None
            and cpu < cpu_limit)


@dataclass
class _Job:
    pid: int
    folder: str
    mode: str
    output_cap: int
    deadline: float
    pipes: dict[int, str]
    cpu_seconds: int  # the job's RLIMIT_CPU (soft): a SIGKILL past it is the job's own limit
    tmp_bytes: int  # what it may keep in files
    collect: tuple[list[str], int] = ([], 0)  # file patterns to read back before the folder goes, and their cap
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    output_bytes: int = 0
    killed: str | None = None  # why the worker killed it before "end": "deadline", "output" or "disk"


class _ForkServer:
    """Serves start/end requests from one judge over ``control``."""

    def __init__(self, control: socket.socket, *, uid: int | None, jobs: str, sweep_shared: bool,
                 pid_namespace: bool, check_tmp: bool = False,
                 confinement: tuple[list[str], list[str]] | None = None) -> None:
        self.control = control
        self.confinement = confinement  # (read, write) of landlock + seccomp, each job's folder added to write
        self.check_tmp = check_tmp  # no private /tmp bounds the job folder: measure it while the job runs
        self.uid = uid
        self.pid_namespace = pid_namespace
        self.jobs = jobs
        self.sweep_shared = sweep_shared
        # Jobs that keep the worker's uid (root in referee's namespaces): their private /tmp and /dev/shm are
        # the worker's own, and whatever a job adds there goes with it (what was there at the start stays).
        self.shared_at_start = None if uid is not None or not sweep_shared else _entries(SHARED_WRITABLE_DIRS)
        self.count = 0
        self.devnull = os.open(os.devnull, os.O_RDONLY)
        self.tasks_already = 0 if uid is not None else _tasks_of_uid(os.getuid())

    # --- the child side -----------------------------------------------------------------
    def _become_job(self, request: dict[str, Any], folder: str, fds: tuple[int, int, int, int]) -> None:
        stdin, stdout, stderr, channel = fds
        os.setsid()
        _prctl(_PR_SET_DUMPABLE, 1)  # the job's own /proc entries stay its own; the worker it forked from stays closed
        for target, source in enumerate((stdin, stdout, stderr, channel)):
            os.dup2(source, target)
        for fd in map(int, os.listdir("/proc/self/fd")):  # nothing inherited but the channel
            if fd > 3:
                try:
                    os.close(fd)
                except OSError:  # the listing's own descriptor, already closed
                    pass
        os.chdir(folder)
        apply_limits(Limits.from_dict(request["limits"]), processes_already=self.tasks_already)
        _own_ipc_namespace()  # where the worker may (root); elsewhere its objects are swept after the job
        if self.uid is not None:
            os.setgroups([])
            os.setresgid(self.uid, self.uid, self.uid)
            os.setresuid(self.uid, self.uid, self.uid)
        elif os.getuid() == 0:
            _drop_capabilities()
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if self.confinement is not None:  # last: the job's process is confined from here on
            read, write = self.confinement
            confine_job(job_rules(read, [*write, folder]))
        os.environ.clear()
        os.environ.update(SANDBOX_ENV, HOME=folder, TMPDIR=folder)
        sys.argv = ["solution.py"]
        sys.stdin = open(0, encoding="utf-8", errors="surrogateescape", closefd=False)
        sys.stdout = open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        sys.modules.pop("tempfile", None)  # it caches the worker's temp folder

    def _run_child(self, request: dict[str, Any], folder: str, fds: tuple[int, int, int, int]) -> None:
        status = 71
        try:
            self._become_job(request, folder, fds)
            status = 0
            channel = socket.socket(fileno=3)
            if request["mode"] == "stdio":
                run_main(channel, request["code"])
            elif request["mode"] == "exec":
                exec_program(channel, request)
            elif request["mode"] == "cells":
                serve_cells(channel, cpu_seconds=float(request["cell_cpu_seconds"]),
                            output_chars=int(request["output_chars"]))
            else:
                serve_calls(channel, request["code"], request["names"],
                            standard_imports=bool(request.get("standard_imports")))
        except BaseException:
            pass
        finally:
            os._exit(status)

    # --- the worker side ----------------------------------------------------------------
    def _stdin_fd(self, data: bytes) -> int:
        if not data:
            return os.dup(self.devnull)
        fd = os.memfd_create("stdin")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
        return fd

    def _start(self, request: dict[str, Any]) -> _Job:
        self.count += 1
        folder = os.path.join(self.jobs, f"job-{self.count}")
        os.mkdir(folder, 0o700)
        if self.uid is not None:
            os.chown(folder, self.uid, self.uid)
        place_files(folder, request.get("files", {}))
        parent_end, child_end = socket.socketpair()
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        stdin = self._stdin_fd(request.get("stdin", b""))
        try:
            pid = os.fork()
        except OSError:
            for fd in (out_read, out_write, err_read, err_write, stdin):
                os.close(fd)
            parent_end.close()
            child_end.close()
            remove_tree(folder)
            raise
        if pid == 0:
            self._run_child(request, folder, (stdin, out_write, err_write, child_end.fileno()))
        for fd in (out_write, err_write, stdin):
            os.close(fd)
        child_end.close()
        socket.send_fds(self.control, [b"J"], [parent_end.fileno()])
        parent_end.close()
        for fd in (out_read, err_read):
            os.set_blocking(fd, False)
        return _Job(pid, folder, request["mode"], int(request["limits"]["output_bytes"]),
                    time.monotonic() + float(request["deadline_s"]), {out_read: "stdout", err_read: "stderr"},
                    int(request["limits"]["cpu_seconds"]),
                    int(request["limits"].get("tmp_bytes", DEFAULT_TMP_MB << 20)),
                    (list(request.get("collect", [])), int(request.get("collect_bytes", 0))))

    def _kill(self, job: _Job, why: str) -> None:
        if job.killed is None:
            job.killed = why
            try:
                os.killpg(job.pid, signal.SIGKILL)
            except OSError:
                pass

    def _drain(self, job: _Job, fd: int, selector: selectors.BaseSelector | None) -> None:
        """Read what ``fd`` has (with the output cap); close it at EOF."""
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        if not data:
            if selector is not None:
                selector.unregister(fd)
            os.close(fd)
            del job.pipes[fd]
            return
        job.output_bytes += len(data)
        if job.output_bytes > job.output_cap:
            self._kill(job, "output")
        elif job.pipes[fd] == "stdout" and job.mode in ("stdio", "exec"):
            job.stdout += data
        if job.pipes[fd] == "stderr":
            job.stderr = (job.stderr + data)[-_STDERR_TAIL:]

    def _supervise(self, job: _Job) -> float | None:
        """Watch the job until the judge says ``end``; its grace seconds, or ``None`` if the judge went away."""
        with selectors.DefaultSelector() as selector:
            selector.register(self.control, selectors.EVENT_READ, None)
            for fd in job.pipes:
                selector.register(fd, selectors.EVENT_READ, None)
            next_check = time.monotonic() + _TMP_CHECK_SECONDS
            while True:
                wait = None if job.killed else max(0.0, job.deadline - time.monotonic())
                if self.check_tmp and job.killed is None:
                    wait = min(wait, max(0.0, next_check - time.monotonic()))
                events = selector.select(wait)
                if not events and job.killed is None and time.monotonic() >= job.deadline:
                    self._kill(job, "deadline")
                if self.check_tmp and job.killed is None and time.monotonic() >= next_check:
                    try:
                        if tree_bytes(job.folder, job.tmp_bytes) > job.tmp_bytes:
                            self._kill(job, "disk")
                    except OSError:  # the job changed its folder while we measured: next time
                        pass
                    next_check = time.monotonic() + _TMP_CHECK_SECONDS
                for key, _ in events:
                    if key.fileobj is self.control:
                        try:
                            message = recv_message(self.control, deadline=time.monotonic() + 10)
                        except (ChannelClosed, TimeoutError):
                            return None
                        if type(message) is tuple and len(message) == 2 and message[0] == "end":
                            return float(message[1])
                    elif isinstance(key.fileobj, int) and key.fileobj in job.pipes:
                        self._drain(job, key.fileobj, selector)

    def _finish(self, job: _Job, grace: float) -> dict[str, Any]:
        """Clean up after the job; ``grace`` seconds to let a job that closed its channel finish exiting."""
        ended = reap_child(job.pid, grace)
        alone = None if ended is None else ended[0]
        # what the rest of an exec job used (children it left running or never waited for), before they are
        # killed: its CPU time is judged (Python jobs skip the extra pass over /proc)
        others_cpu = cpu_seconds_of(job_processes(session=job.pid, uid=self.uid, reaper=os.getpid(),
                                                  pid_namespace=self.pid_namespace)) if job.mode == "exec" else 0.0
        statuses, survivors = kill_job(session=job.pid, uid=self.uid, pid_namespace=self.pid_namespace, children=True)
        status = alone if alone is not None else statuses.get(job.pid, 0)
        drain_until = time.monotonic() + 1.0
        while job.pipes and time.monotonic() < drain_until:  # every writer is dead: EOF comes at once
            ready, _, _ = select.select(list(job.pipes), [], [], max(0.0, drain_until - time.monotonic()))
            for fd in ready:
                self._drain(job, fd, None)
        for fd in list(job.pipes):
            os.close(fd)
        collected = collect_files(job.folder, *job.collect) if job.collect[0] else {}
        remove_tree(job.folder)
        if self.shared_at_start is not None:
            leftovers = sorted(_entries(SHARED_WRITABLE_DIRS) - self.shared_at_start)
        else:
            leftovers = files_owned_by(self.uid) if self.sweep_shared and self.uid is not None else []
        for path in leftovers:
            remove_tree(path)
        return {
            "ended_alone": alone is not None,
            "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "killed": job.killed,
            "killed_from_outside": alone is not None and killed_from_outside(alone, ended[1], job.killed, job.cpu_seconds),
            "stdout": bytes(job.stdout),
            "stderr": job.stderr.decode("utf-8", "replace"),
            "output_bytes": job.output_bytes,
            "survivors": len(survivors),
            "leftover_files": len(leftovers),
            # every process of the job; a leader still running was read from /proc with the others (exec jobs)
            "cpu_seconds": ended[1] + others_cpu if ended is not None else others_cpu if job.mode == "exec" else None,
            "files": collected,
        }

    def serve(self) -> None:
        """Answer requests until the judge closes the control socket."""
        while True:
            try:
                message = recv_message(self.control)
            except ChannelClosed:
                return
            if type(message) is not tuple or len(message) != 2 or message[0] != "start":
                send_message(self.control, ("error", f"unexpected request {message!r:.80}"))
                continue
            try:
                job = self._start(message[1])
            except (OSError, ValueError) as exc:  # ValueError: a job file name that is not a plain name
                self.control.sendall(b"E")
                send_message(self.control, ("error", f"cannot start a job: {exc}"))
                continue
            grace = self._supervise(job)
            report = self._finish(job, grace or 0.0)
            if grace is None:  # the judge went away
                return
            send_message(self.control, ("report", report))
            if report["survivors"]:
                return  # a job we cannot clean up taints the worker: stop, the judge starts a fresh one


def jobs_base(tmp_bytes: int = 0) -> str:
    """Where workers without a private /tmp make their job folders, for jobs that may keep
    ``tmp_bytes`` in files: in memory when /dev/shm is writable and has room for that many bytes
    per CPU (at least four times; a pool runs at most about a job per CPU at once), since
    removing a folder on disk is slow; else the system's temporary folder. A small /dev/shm (a
    container's 64 MiB) that one job could fill would make the jobs beside it fail for want of
    space, through no fault of theirs.

    Example:
        >>> jobs_base() in ("/dev/shm", tempfile.gettempdir()), jobs_base(tmp_bytes=1 << 60) == tempfile.gettempdir()
        (True, True)
    """
    if os.access("/dev/shm", os.W_OK):
        shm = os.statvfs("/dev/shm")
        if shm.f_bavail * shm.f_frsize >= max(_SHM_ROOM_JOBS, os.cpu_count() or 1) * tmp_bytes:
            return "/dev/shm"
    return tempfile.gettempdir()


def _jobs_folder(tmp_bytes: int) -> str:
    """A fresh folder for job folders on the host (no private /tmp without namespaces), where
    :func:`jobs_base` says for jobs that may keep ``tmp_bytes``, after removing those that workers killed before they
    could clean up left behind (in either place). The folder is named after its worker's pid and
    start time: a worker that was killed and not yet reaped by its judge (a zombie) has ended
    too, and a pid used again by another process does not keep the folder."""
    for base in {jobs_base(), tempfile.gettempdir()}:
        for name in os.listdir(base):
            owner = _JOBS_FOLDER_NAME.fullmatch(name)
            if owner is None:
                continue
            started = running_since(int(owner["pid"]))
            path = os.path.join(base, name)
            if ((started is None or owner["start"] not in (None, str(started)))
                    and os.lstat(path).st_uid == os.getuid()):
                remove_tree(path)
    folder = tempfile.mkdtemp(prefix=f"referee-jobs-{os.getpid()}-{running_since(os.getpid())}-",
                              dir=jobs_base(tmp_bytes))
    os.chmod(folder, 0o711)  # the jobs' uid may pass through to its own folder, not list the others
    return folder


def _self_test_uid(uid: int) -> bool:
    """Fork once and drop to ``uid``: the own-uid layer really works here."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            os._exit(0 if os.getuid() == uid else 1)
        except BaseException:
            os._exit(1)
    return os.waitpid(pid, 0)[1] == 0


def main(argv: list[str] | None = None) -> int:
    """Start the worker: set it up, say ``ready`` with the layers it got, then serve until the
    control socket closes.

    Example:
        >>> import subprocess
        >>> ours, theirs = socket.socketpair()
        >>> worker = subprocess.Popen([sys.executable, "-m", "referee.verifiers.sandbox.forkserver",
        ...                            "--fd", str(theirs.fileno())], pass_fds=[theirs.fileno()])
        >>> theirs.close()
        >>> recv_message(ours, deadline=time.monotonic() + 60)
        ('ready', {'subreaper': True, 'worker not dumpable': True})
        >>> ours.close(); worker.wait()
        0
    """
    parser = argparse.ArgumentParser(prog="referee-forkserver")
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--uid", type=int)
    parser.add_argument("--unshare-net", action="store_true")
    parser.add_argument("--sweep-shared", action="store_true")
    parser.add_argument("--reach-python", action="store_true", help="own mount namespace where the jobs' uid "
                                                                    "can reach the Python installation")
    parser.add_argument("--pid-namespace", action="store_true", help="own pid namespace (bubblewrap's or referee's "
                                                                     "own) and private /tmp")
    parser.add_argument("--tmp-bytes", type=int, default=DEFAULT_TMP_MB << 20,
                        help="the size of the private /tmp (its namespaces make it) or of --private-tmp")
    parser.add_argument("--private-tmp", action="store_true", help="root without bubblewrap: own mount namespace "
                        "with an in-memory /dev/shm of --tmp-bytes, /tmp and /var/tmp bound inside it")
    parser.add_argument("--confine", action="store_true", help="landlock + seccomp for every job (no namespaces "
                        "of its own): read the system, Python and the --read-only folders, write its folder (and a "
                        "private /tmp)")
    parser.add_argument("--read-only", action="append", default=[], metavar="FOLDER",
                        help="a folder outside the system's that jobs read (a compiler's), besides Python and referee")
    args = parser.parse_args(argv)
    reading = read_only_paths(args.read_only)
    # No death signal from the judge: when it dies its end of the control socket closes, and the
    # worker then ends the job, cleans up and exits (a signal could cut that cleanup short).
    control = socket.socket(fileno=args.fd)
    layers = {"subreaper": _prctl(_PR_SET_CHILD_SUBREAPER, 1)}
    if args.unshare_net:
        layers["no network"] = _unshare_network()
    if args.reach_python:
        layers["python reachable"] = let_others_reach(reading)
    if args.uid is not None:
        kill_job(session=None, uid=args.uid, children=True)  # leftovers of an earlier worker with this uid
        for path in files_owned_by(args.uid, SHARED_WRITABLE_DIRS if args.sweep_shared else ()):
            remove_tree(path)
        layers["own uid"] = _self_test_uid(args.uid)
    if args.private_tmp:  # after the sweep above: that one cleans the host's shared folders
        layers["private /tmp"] = private_shared_folders(args.tmp_bytes, keep=reading)
    for name in PRELOADED_MODULES:
        importlib.import_module(name)
    gc.collect()
    gc.freeze()  # fewer copy-on-write faults in every job
    jobs = "/tmp" if args.pid_namespace else _jobs_folder(args.tmp_bytes)
    confinement = None
    if args.confine:
        # the host's /tmp and /dev/shm hold the caller's files: writable only where they are the worker's own
        confinement = (reading, ["/tmp", "/var/tmp", "/dev/shm"] if layers.get("private /tmp") else [])
        layers[CONFINEMENT] = self_test(job_rules(confinement[0], [*confinement[1], jobs]))
    server = _ForkServer(control, uid=args.uid, jobs=jobs, sweep_shared=args.sweep_shared,
                         # pid 1 (referee's own namespaces) or 2 (under bubblewrap's init): every other process is a job's
                         pid_namespace=args.pid_namespace and os.getpid() in (1, 2),
                         check_tmp=not (args.pid_namespace or layers.get("private /tmp")),
                         confinement=confinement)
    # Not dumpable: a job cannot read or write the worker's memory through /proc/<pid>/mem (every later
    # job is forked from it), nor ptrace it, even as the same uid.
    layers["worker not dumpable"] = _prctl(_PR_SET_DUMPABLE, 0)
    send_message(control, ("ready", layers))
    try:
        server.serve()
    finally:
        if not args.pid_namespace:  # its namespaces vanish with the worker; the host's folders do not
            kill_job(session=None, uid=args.uid, children=True)
            remove_tree(jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
