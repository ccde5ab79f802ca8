"""Helpers for the fault-injection tests: this test process's sandbox processes, seen from outside."""

import os
import time

import pytest

from referee.verifiers.sandbox.cleanup import running_since
from referee.verifiers.sandbox.namespaces import SCRIPT as NAMESPACES_LAUNCHER

FORKSERVER = b"referee.verifiers.sandbox.forkserver"
LAUNCHER = os.fsencode(NAMESPACES_LAUNCHER)


def _is_worker(argv: list[bytes]) -> bool:
    """A Python fork server, or one of its jobs (a fork of it): not the bubblewrap or the
    namespaces launcher around it."""
    return FORKSERVER in argv and b"bwrap" not in argv[0] and LAUNCHER not in argv


def _tree() -> dict[int, tuple[int, list[bytes], int]]:
    """pid -> (parent pid, argv, uid) for every process we can read."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                ppid = int(handle.read().rsplit(b")", 1)[1].split()[1])
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
            uid = os.stat(f"/proc/{name}").st_uid
        except (OSError, IndexError, ValueError):
            continue
        found[int(name)] = (ppid, argv, uid)
    return found


class Sandboxes:
    """The sandbox processes under this test process: judges, fork servers, jobs."""

    @staticmethod
    def descendants() -> dict[int, tuple[int, list[bytes], int]]:
        tree = _tree()
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in tree.items():
            children.setdefault(ppid, []).append(pid)
        found, stack = {}, [os.getpid()]
        while stack:
            for child in children.get(stack.pop(), []):
                found[child] = tree[child]
                stack.append(child)
        return found

    def forkservers(self) -> list[int]:
        """Fork-server workers (not their bubblewrap, not their jobs)."""
        mine = self.descendants()
        return [pid for pid, (ppid, argv, _) in mine.items()
                if _is_worker(argv) and not _is_worker(mine.get(ppid, (0, [b""], 0))[1])]

    def jobs(self) -> list[int]:
        """Job leaders: children of a fork server."""
        servers = set(self.forkservers())
        return [pid for pid, (ppid, _, _) in self.descendants().items() if ppid in servers]

    def judges(self) -> list[int]:
        """Judge workers: the processes that started a sandbox (bubblewrap or a fork server)."""
        mine = self.descendants()
        return sorted({ppid for pid, (ppid, argv, _) in mine.items()
                       if FORKSERVER in argv and ppid in mine and FORKSERVER not in mine[ppid][1]})

    def leftovers(self, timeout: float = 5.0) -> list[int]:
        """Processes of a job still alive after ``timeout`` seconds (jobs, or their escaped children)."""
        deadline = time.monotonic() + timeout
        while True:
            servers = set(self.forkservers())
            mine = self.descendants()
            left = [pid for pid, (ppid, argv, _) in mine.items() if _is_worker(argv) and pid not in servers]
            # a zombie has ended (it holds nothing but its pid): a container init that never reaps keeps it forever
            orphans = [pid for pid, (ppid, argv, uid) in _tree().items()
                       if uid in self.job_uids() and ppid == 1 and running_since(pid) is not None]
            if not (left or orphans) or time.monotonic() > deadline:
                return left + orphans
            time.sleep(0.05)

    def job_uids(self) -> set[int]:
        uids = set()
        for pid in self.forkservers():
            argv = self.descendants().get(pid, (0, [], 0))[1]
            if b"--uid" in argv:
                uids.add(int(argv[argv.index(b"--uid") + 1]))
        return uids

    @staticmethod
    def kill_when(find, *, timeout: float = 20.0, settle: float = 0.0) -> list[int]:
        """SIGKILL the first pid ``find()`` returns (polled every 5 ms), ``settle`` seconds after it appears."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pids = find()
            if pids:
                time.sleep(settle)
                try:
                    os.kill(pids[0], 9)
                except ProcessLookupError:
                    continue
                return pids[:1]
            time.sleep(0.005)
        return []


@pytest.fixture()
def sandboxes():
    return Sandboxes()
