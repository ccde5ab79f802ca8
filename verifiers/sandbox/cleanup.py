"""Ending a job from outside: kill every process it left, check that none survive, remove its files.

A job's processes are found three ways, so none escapes: its session (the job leader calls
``setsid``), the job's own uid when it has one, and the children of the fork server, which is
a child subreaper so that double-forked daemons are re-parented to it.
"""

from __future__ import annotations

import os
import select
import signal
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass

# World-writable places a job with its own uid could write to when no private /tmp hides them.
SHARED_WRITABLE_DIRS: tuple[str, ...] = ("/tmp", "/var/tmp", "/dev/shm")


@dataclass(frozen=True)
class ProcessInfo:
    """One process as ``/proc`` shows it (pids as seen from this process's pid namespace).

    Example:
        >>> me = next(p for p in list_processes() if p.pid == os.getpid())
        >>> me.ppid == os.getppid(), me.uids[0] == os.getuid()
        (True, True)
    """

    pid: int
    ppid: int
    session: int
    uids: tuple[int, ...]
    state: str


def _read_status(pid: int) -> ProcessInfo | None:
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            text = handle.read().decode("ascii", "replace")
    except OSError:  # it exited while we looked
        return None
    fields = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    try:
        sid = fields.get("NSsid", "0").split()[0]  # first: as seen from this /proc
        return ProcessInfo(pid, int(fields["PPid"]), int(sid), tuple(int(u) for u in fields["Uid"].split()),
                           fields.get("State", "?")[:1])
    except (KeyError, ValueError, IndexError):
        return None


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def list_processes() -> list[ProcessInfo]:
    """Every process this process can see in ``/proc``, with its real, effective, saved and fs uids.

    Example:
        >>> any(p.pid == os.getpid() for p in list_processes())
        True
    """
    return [info for info in map(_read_status, _pids()) if info is not None]


def _children(pid: int) -> list[int]:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    children = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                children += [int(child) for child in handle.read().split()]
        except OSError:
            pass
    return children


def resume_stopped(root: int) -> int:
    """Send SIGCONT to every stopped process in the tree under ``root`` (``root`` included); how many.

    A job that stops its own sandbox worker (``kill(-1, SIGSTOP)`` reaches it in a pid namespace
    where the job has the worker's uid) would otherwise leave it deaf to the next request until the
    reply deadline; resumed, the worker ends the job as usual. Processes this one may not signal
    are passed over.

    Example:
        >>> child = os.fork()
        >>> if child == 0:
        ...     os.kill(os.getpid(), signal.SIGSTOP); os._exit(0)
        >>> _ = os.waitpid(child, os.WUNTRACED)  # it has stopped
        >>> resume_stopped(child), os.waitpid(child, 0)[1]
        (1, 0)
    """
    resumed, pending = 0, [root]
    while pending:
        pid = pending.pop()
        info = _read_status(pid)
        if info is None:
            continue
        if info.state in ("T", "t"):
            try:
                os.kill(pid, signal.SIGCONT)
                resumed += 1
            except OSError:
                pass
        pending += _children(pid)
    return resumed


def running_since(pid: int) -> int | None:
    """When ``pid`` started (clock ticks after boot), while it runs; ``None`` once it has ended,
    reaped or not: a killed process stays in ``/proc`` as a zombie until its parent reaps it.
    With the start, a pid that the kernel gave to a new process is not mistaken for the old one.

    Example:
        >>> child = os.fork()
        >>> if child == 0:
        ...     os._exit(0)
        >>> _ = os.waitid(os.P_PID, child, os.WEXITED | os.WNOWAIT)  # it has ended; not reaped yet
        >>> running_since(child), os.path.exists(f"/proc/{child}")
        (None, True)
        >>> _ = os.waitpid(child, 0); running_since(os.getpid()) > 0
        True
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] in (b"Z", b"X") else int(fields[19])


def _belongs(pid: int, *, session: int | None, uid: int | None, reaper: int) -> bool:
    """Cheap test on ``/proc/<pid>/stat`` and the owner of ``/proc/<pid>`` (its effective uid)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        owner = os.stat(f"/proc/{pid}").st_uid
    except (OSError, IndexError):
        return False
    ppid, process_session = int(fields[1]), int(fields[3])
    return ((session is not None and process_session == session) or ppid == reaper
            or (uid is not None and owner == uid))


def job_processes(*, session: int | None, uid: int | None, reaper: int, pid_namespace: bool = False) -> list[int]:
    """The pids that belong to a job: in its session, of its uid, or children of the reaper.

    In a pid namespace of its own (``pid_namespace``) the reaper sees only its namespace's
    init (pid 1), itself and job processes, so everything else is the job's. A process that
    makes itself non-dumpable shows root as its owner; it is still caught by its session, or
    once its parent is killed, as a child of the reaper.

    Example:
        >>> job_processes(session=None, uid=None, reaper=-1)
        []
    """
    me = os.getpid()
    if pid_namespace:
        return [pid for pid in _pids() if pid not in (1, me)]
    return [pid for pid in _pids() if pid != me and _belongs(pid, session=session, uid=uid, reaper=reaper)]


def cpu_seconds_of(pids: Iterable[int]) -> float:
    """CPU seconds ``pids`` have used, with the children each waited for (user and system time of
    ``/proc/<pid>/stat``; a zombie keeps its own). Pids gone meanwhile count nothing.

    Example:
        >>> cpu_seconds_of([os.getpid()]) > 0, cpu_seconds_of([])
        (True, 0.0)
    """
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            total += sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime
        except (OSError, IndexError, ValueError):
            continue
    return total / ticks


def reap_child(pid: int, timeout: float) -> tuple[int, float] | None:
    """Wait up to ``timeout`` seconds for child ``pid`` to end and reap it: its wait status and the
    CPU seconds it used, or ``None`` when it is still running (or was reaped before).

    Example:
        >>> child = os.fork()
        >>> if child == 0:
        ...     os._exit(3)
        >>> status, cpu = reap_child(child, 5.0)
        >>> os.waitstatus_to_exitcode(status), 0 <= cpu < 5
        (3, True)
    """
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:  # reaped already
        return None
    try:
        select.select([handle], [], [], timeout)  # readable once the process has ended
    finally:
        os.close(handle)
    try:
        done, status, usage = os.wait4(pid, os.WNOHANG)
    except ChildProcessError:
        return None
    return (status, usage.ru_utime + usage.ru_stime) if done == pid else None


def wait_child(pid: int, timeout: float) -> int | None:
    """Wait up to ``timeout`` seconds for child ``pid`` to end and reap it: its wait status, or
    ``None`` when it is still running (or was reaped before).

    Example:
        >>> child = os.fork()
        >>> if child == 0:
        ...     os._exit(3)
        >>> os.waitstatus_to_exitcode(wait_child(child, 5.0))
        3
    """
    ended = reap_child(pid, timeout)
    return None if ended is None else ended[0]


def kill_job(*, session: int | None, uid: int | None, pid_namespace: bool = False, children: bool = False,
             timeout: float = 2.0) -> tuple[dict[int, int], list[int]]:
    """Kill the job's process group, then every process of the job until none is left.

    ``session`` is the job leader's pid (it called ``setsid``), or ``None`` to sweep only the
    uid. ``children``: every child of this process is a job process, so orphans re-parented to
    it are killed too (only a fork server, a child subreaper, may say so). Returns the wait
    statuses of the job processes this process reaped, and the pids still running after
    ``timeout`` seconds (empty when the cleanup succeeded). A killed process that another
    parent has not reaped yet (a zombie) has ended: it is no survivor.

    Example:
        >>> ready, say_ready = os.pipe()
        >>> leader = os.fork()
        >>> if leader == 0:
        ...     os.setsid()
        ...     if os.fork() == 0:  # a grandchild in the same session
        ...         time.sleep(60)
        ...     os.write(say_ready, b"!")
        ...     time.sleep(60)
        >>> os.read(ready, 1)
        b'!'
        >>> statuses, survivors = kill_job(session=leader, uid=None)
        >>> survivors, os.WTERMSIG(statuses[leader]) == signal.SIGKILL
        ([], True)
    """
    statuses: dict[int, int] = {}
    reaper = os.getpid() if children else -1
    deadline = time.monotonic() + timeout
    if session is not None and session > 1:  # never killpg(1) or (0): that is everyone, or us
        try:
            os.killpg(session, signal.SIGKILL)
        except OSError:  # the group is already gone
            pass
        status = wait_child(session, timeout)  # the leader dies in microseconds
        if status is not None:
            statuses[session] = status
    while True:
        alive, reaped = [], False
        for pid in job_processes(session=session, uid=uid, reaper=reaper, pid_namespace=pid_namespace):
            ended = running_since(pid) is None  # a zombie: it holds nothing but its pid
            try:
                if not ended:
                    os.kill(pid, signal.SIGKILL)
                done, status = os.waitpid(pid, os.WNOHANG)  # reap the job's processes that are ours, zombies too
            except ProcessLookupError:  # gone
                continue
            except (OSError, ChildProcessError):  # not our child: only its parent can reap it
                done = 0
            if done:
                statuses[pid] = status
                reaped = True
            elif not ended:  # checked before the kill: one that died since is reaped on the next pass
                alive.append(pid)
        # A process that ended during the pass (killed, or exiting by itself) handed its children to
        # the reaper after the listing was taken: only a pass that reaps nothing has seen them all.
        if not alive and not reaped:
            return statuses, []
        if time.monotonic() > deadline:
            return statuses, alive
        time.sleep(0.0002)


_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_folder(name: str, parent: int | None) -> int:
    """Open folder ``name`` (relative to the folder ``parent`` is open on) without following a
    link; unlock it first when a job made it unreadable (``chmod 000``)."""
    try:
        return os.open(name, _DIRECTORY_FLAGS, dir_fd=parent)
    except PermissionError:
        os.chmod(name, 0o700, dir_fd=parent)  # lstat said folder, not link: nothing to follow
        return os.open(name, _DIRECTORY_FLAGS, dir_fd=parent)


def _unlock(fd: int) -> None:
    """Give the owner rwx on the open folder, so that its entries can be listed and removed."""
    if os.fstat(fd).st_mode & 0o700 != 0o700:
        os.fchmod(fd, 0o700)


def _empty_folder(fd: int) -> list[str]:
    """Remove every entry of the open folder that is not a folder; the names of its folders."""
    folders = []
    with os.scandir(fd) as entries:
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.name)
                else:
                    os.unlink(entry.name, dir_fd=fd)
            except FileNotFoundError:
                continue
    return folders


def remove_tree(path: str) -> None:
    """Delete ``path`` (file, link or folder) without following links; missing is fine.

    No recursion and no long paths: the walk holds one open folder at a time and goes back up
    through ``..`` (checked against the folder it came from), so a tree of any depth a job can
    make (thousands of nested folders, paths far past ``PATH_MAX``) is removed, in linear time.
    Folders a job locked (``chmod 000``) are unlocked on the way.

    Example:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> deep = os.open(folder, os.O_RDONLY)
        >>> for _ in range(3000):  # far past the recursion limit and PATH_MAX (4096)
        ...     os.mkdir("d", dir_fd=deep)
        ...     deep, previous = os.open("d", os.O_RDONLY, dir_fd=deep), deep
        ...     os.close(previous)
        >>> os.close(deep); os.chmod(folder, 0)
        >>> remove_tree(folder); os.path.exists(folder)
        False
    """
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(mode):
        os.unlink(path)
        return
    path = os.path.abspath(path)
    top_name = os.path.basename(path)
    top_parent = os.open(os.path.dirname(path), _DIRECTORY_FLAGS & ~os.O_NOFOLLOW)
    try:
        current = _open_folder(top_name, top_parent)
        # One level per folder on the way down: its identity, its name, the subfolders still to remove.
        levels: list[tuple[tuple[int, int], str, list[str]]] = []

        def enter(folder: int, name: str) -> None:
            _unlock(folder)
            status = os.fstat(folder)
            levels.append(((status.st_dev, status.st_ino), name, _empty_folder(folder)))

        try:
            enter(current, top_name)
            while levels:
                if levels[-1][2]:  # a subfolder left: go down into it
                    name = levels[-1][2].pop()
                    try:
                        child = _open_folder(name, current)
                    except FileNotFoundError:
                        continue
                    os.close(current)
                    current = child
                    enter(current, name)
                    continue
                _, done, _ = levels.pop()  # empty now: go up and remove it
                if not levels:
                    break
                parent = os.open("..", _DIRECTORY_FLAGS, dir_fd=current)
                status = os.fstat(parent)
                if (status.st_dev, status.st_ino) != levels[-1][0]:
                    os.close(parent)
                    raise OSError(f"the folder above {done!r} in {path} changed while it was removed")
                os.close(current)
                current = parent
                os.rmdir(done, dir_fd=current)
        finally:
            os.close(current)
        os.rmdir(top_name, dir_fd=top_parent)
    finally:
        os.close(top_parent)


def tree_bytes(path: str, stop_above: int) -> int:
    """What the tree at ``path`` holds, in bytes: its files' blocks, and at least one page (4 KiB)
    per entry, so that a million empty files count too. The walk stops as soon as the total
    passes ``stop_above`` (then the total so far); like :func:`remove_tree` it has no recursion
    and holds one open folder at a time. A missing ``path`` holds 0. It runs while the job may
    still change the tree, so it never fails on what it finds: a folder that vanishes or is swapped
    for a link is skipped, one the job locked is unlocked first.

    Example:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> os.makedirs(f"{folder}/a/b")
        >>> with open(f"{folder}/a/b/data", "wb") as handle:
        ...     _ = handle.write(b"x" * 100_000)
        >>> 100_000 <= tree_bytes(folder, 1 << 30) < 120_000, tree_bytes(folder, 1000) > 1000
        (True, True)
        >>> remove_tree(folder); tree_bytes(folder, 1000)
        0
    """
    try:
        current = _open_folder(path, None)
    except OSError:  # missing, or not a folder (any more)
        return 0
    total = 4096
    levels: list[tuple[tuple[int, int], list[str]]] = []

    def enter(folder: int) -> None:
        nonlocal total
        status = os.fstat(folder)
        folders = []
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                total += max(4096, info.st_blocks * 512)
                if stat.S_ISDIR(info.st_mode):
                    folders.append(entry.name)
        levels.append(((status.st_dev, status.st_ino), folders))

    try:
        enter(current)
        while levels and total <= stop_above:
            if levels[-1][1]:
                try:
                    child = _open_folder(levels[-1][1].pop(), current)  # a folder the job locked is unlocked
                except OSError:  # gone, or swapped for a link while we looked: not counted now
                    continue
                os.close(current)
                current = child
                enter(current)
                continue
            levels.pop()
            if levels:
                parent = os.open("..", _DIRECTORY_FLAGS, dir_fd=current)
                status = os.fstat(parent)
                os.close(current)
                current = parent
                if (status.st_dev, status.st_ino) != levels[-1][0]:
                    return total  # the job moved the folder we were in: what was counted so far
    finally:
        os.close(current)
    return total


def files_owned_by(uid: int, folders: Iterable[str] = SHARED_WRITABLE_DIRS) -> list[str]:
    """Top-level entries of ``folders`` owned by ``uid``.

    Example:
        >>> files_owned_by(-5)
        []
    """
    found = []
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid == uid:
                    found.append(entry.path)
            except OSError:
                continue
    return found
