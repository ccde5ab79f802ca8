"""Referee's own namespaces for a sandbox worker, where bubblewrap is missing: the same containment
(own user, pid, mount, network, ipc and uts namespaces, a minimal read-only root) with no binary.

Run as a script, ``python -I -B namespaces.py [--user-namespace] [--tmp-bytes N] [--ro PATH]...
-- COMMAND...`` (:func:`launcher_argv` builds that line; a script, not ``-m``, so that no package
import can start a thread: a user namespace needs a single-threaded caller). It

1. unshares the mount, pid, network, ipc and uts namespaces in one call, and, with
   ``--user-namespace`` (not root), a user namespace first in which it maps its own uid and gid
   onto themselves, ``setgroups`` denied (as bubblewrap does);
2. forks: the child is pid 1 of the new pid namespace (it ignores signals from inside it, every
   process of the namespace dies with it, and orphans are re-parented to it: the fork server
   reaps them). The parent stays outside, closes everything but stdio, waits, and exits with the
   child's status; both die with their parent (``PR_SET_PDEATHSIG``), so a killed launcher takes
   the whole namespace with it (it shares the child's mount namespace, so it is moved into the new
   root too);
3. in the child, builds a new root on a tmpfs: a fresh ``/proc``; a minimal ``/dev`` (null, zero,
   full, random, urandom, tty bound from the host; fd, stdin, stdout, stderr links); ``/tmp`` and
   ``/dev/shm`` as tmpfs of ``--tmp-bytes`` each, mode 1777; then each ``--ro`` path bound
   read-only (a link is copied as a link; a bind is not recursive, so that no mount below one
   can stay writable: a path on a mount of its own is given as a path of its own); then ``pivot_root`` into it, detaches the old root and
   remounts the new root and ``/dev`` read-only;
4. brings the loopback interface of its empty network namespace up, names the host ``sandbox``,
   makes its own session, and executes ``COMMAND`` in ``/tmp`` with the environment it was given.

The syscalls go through :mod:`ctypes`: ``unshare``, ``mount`` and ``umount2`` (glibc wrappers)
and ``pivot_root`` (through ``syscall``: glibc has no wrapper). Python 3.10 and 3.11 have none of
them (``os.unshare`` came with 3.12; there is no ``os.mount``), and the packages on the registries
that wrap them are unmaintained or wrap far more (whole container runtimes); four documented
calls are the smaller, auditable dependency. Any step the kernel refuses ends the launcher with
exit status 70 and one line on stderr naming the step and the error (EPERM, EINVAL, ENOSPC...),
which :func:`~referee.verifiers.sandbox.isolation.probe_own_namespaces` reports.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import platform
import signal
import socket
import struct
import sys

SCRIPT = os.path.abspath(__file__)
EXIT_REFUSED = 70
_CLONE_NEWNS, _CLONE_NEWUTS, _CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
_CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME = 0x400, 0x800, 0x200000
_ST_NOATIME, _ST_NODIRATIME, _ST_RELATIME = 0x400, 0x800, 0x1000  # statvfs's f_flag bits for the same
_MNT_DETACH = 0x2
_PR_SET_PDEATHSIG = 1
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "ppc64le": 203, "s390x": 217, "riscv64": 41}
_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
_DEV_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
              "stderr": "/proc/self/fd/2"}
_NEW_ROOT = "/tmp"  # any folder will do as the mount point of the new root's tmpfs: it is ours alone
_LIBC = ctypes.CDLL(None, use_errno=True)


class Refused(Exception):
    """A step the kernel refused: the step and the error, in one line.

    Example:
        >>> str(Refused("unshare", errno.EPERM))
        'unshare: Operation not permitted (EPERM)'
    """

    def __init__(self, step: str, error: int) -> None:
        super().__init__(f"{step}: {os.strerror(error)} ({errno.errorcode.get(error, error)})")
        self.error = error


def launcher_argv(command: list[str], *, user_namespace: bool, tmp_bytes: int, read_only: list[str]) -> list[str]:
    """The command line that runs ``command`` in namespaces of its own, with a minimal root holding
    ``read_only`` (read-only) and a ``/tmp`` and ``/dev/shm`` of ``tmp_bytes`` each.

    Example:
        >>> argv = launcher_argv(["true"], user_namespace=True, tmp_bytes=1 << 20, read_only=["/usr"])
        >>> argv[1:3], argv[4:], argv[3] == SCRIPT
        (['-I', '-B'], ['--tmp-bytes', '1048576', '--user-namespace', '--ro', '/usr', '--', 'true'], True)
    """
    argv = [sys.executable, "-I", "-B", SCRIPT, "--tmp-bytes", str(int(tmp_bytes))]
    if user_namespace:
        argv.append("--user-namespace")
    for path in read_only:
        argv += ["--ro", path]
    return argv + ["--", *command]


def _check(result: int, step: str) -> None:
    if result != 0:
        raise Refused(step, ctypes.get_errno())


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def raw(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    _check(_LIBC.mount(raw(source), raw(target), raw(fstype), ctypes.c_ulong(flags), raw(data)), f"mount on {target}")


def _unshare(user_namespace: bool) -> None:
    flags = _CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWNET | _CLONE_NEWIPC | _CLONE_NEWUTS
    if user_namespace:
        uid, gid = os.getuid(), os.getgid()
        _check(_LIBC.unshare(flags | _CLONE_NEWUSER), "unshare of user, mount, pid, network, ipc and uts namespaces")
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            try:
                with open(f"/proc/self/{name}", "w") as handle:
                    handle.write(text)
            except OSError as exc:
                raise Refused(f"writing /proc/self/{name}", exc.errno or errno.EPERM) from None
    else:
        _check(_LIBC.unshare(flags), "unshare of mount, pid, network, ipc and uts namespaces")


def _kept_flags(path: str) -> int:
    """The flags of the mount at ``path`` that a user namespace may not clear (its atime mode and
    noexec): a read-only remount that dropped them would be refused."""
    have = os.statvfs(path).f_flag
    kept = _MS_NOEXEC if have & os.ST_NOEXEC else 0
    for st, ms in ((_ST_NOATIME, _MS_NOATIME), (_ST_NODIRATIME, _MS_NODIRATIME), (_ST_RELATIME, _MS_RELATIME)):
        if have & st:
            kept |= ms
    return kept


def _make_parents(root: str, path: str) -> str:
    """``path`` inside ``root``, with its missing parent folders made (0755); the full target."""
    target = root + path
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        os.makedirs(parent, mode=0o755)
    return target


def _bind(source: int, root: str, path: str, *, read_only: bool) -> None:
    """Bind the file or folder open as ``source`` (an ``O_PATH`` handle) at ``path`` inside ``root``."""
    target = _make_parents(root, path)
    if os.path.isdir(f"/proc/self/fd/{source}"):
        os.makedirs(target, mode=0o755, exist_ok=True)
    elif not os.path.exists(target):
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o644))
    _mount(f"/proc/self/fd/{source}", target, None, _MS_BIND)
    if read_only:
        _mount(None, target, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _kept_flags(target))


def _tmpfs(target: str, size: int, mode: str) -> None:
    os.makedirs(target, mode=0o755, exist_ok=True)
    inodes = max(1024, size // 4096)  # empty files cost no blocks: bound them too
    _mount("tmpfs", target, "tmpfs", _MS_NOSUID | _MS_NODEV, f"size={size},nr_inodes={inodes},mode={mode}")


def _build_root(read_only: list[str], tmp_bytes: int) -> None:
    """Make the new root at :data:`_NEW_ROOT`, pivot into it, and close it for writing."""
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)  # nothing of ours reaches the host
    # Handles first: the new root's tmpfs covers _NEW_ROOT, where a Python or a checkout may live.
    links = {path: os.readlink(path) for path in read_only if os.path.islink(path)}
    binds = {path: os.open(path, os.O_PATH | os.O_CLOEXEC) for path in read_only
             if path not in links and os.path.exists(path)}
    devices = {name: os.open(f"/dev/{name}", os.O_PATH | os.O_CLOEXEC) for name in _DEVICES
               if os.path.exists(f"/dev/{name}")}
    os.chdir("/")
    root = _NEW_ROOT
    _mount("tmpfs", root, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=1m,mode=0755")
    # /proc, /dev and /tmp before the binds: mounted after, they would hide what lives under them.
    os.mkdir(root + "/proc", 0o755)
    _mount("proc", root + "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    _tmpfs(root + "/dev", 1 << 20, "0755")
    for name, handle in devices.items():
        _bind(handle, root, f"/dev/{name}", read_only=False)  # devices stay writable on a read-only mount
    for name, target in _DEV_LINKS.items():
        os.symlink(target, f"{root}/dev/{name}")
    _tmpfs(root + "/dev/shm", tmp_bytes, "1777")
    _tmpfs(root + "/tmp", tmp_bytes, "1777")
    for path, target in links.items():
        os.symlink(target, _make_parents(root, path))
    for path, handle in binds.items():
        _bind(handle, root, path, read_only=True)
    for handle in [*binds.values(), *devices.values()]:
        os.close(handle)
    _mount(None, root + "/dev", None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID)
    os.chdir(root)
    pivot_root = _PIVOT_ROOT.get(platform.machine())
    if pivot_root is None:
        raise Refused(f"pivot_root on {platform.machine()} (no syscall number known)", errno.ENOSYS)
    # pivot_root(".", "."): the old root is stacked on the new one, then detached (pivot_root(2), NOTES)
    _check(_LIBC.syscall(pivot_root, b".", b"."), "pivot_root")
    _check(_LIBC.umount2(b".", _MNT_DETACH), "umount2 of the old root")
    os.chdir("/")
    _mount(None, "/", None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)


def _loopback_up() -> None:
    """Bring ``lo`` up, as bubblewrap does: a program may talk to itself, never leave the namespace."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        flags = struct.unpack("16sH", fcntl.ioctl(probe, siocgifflags, struct.pack("16sH", b"lo", 0))[:18])[1]
        fcntl.ioctl(probe, siocsifflags, struct.pack("16sH", b"lo", flags | iff_up))


def _child(command: list[str], read_only: list[str], tmp_bytes: int) -> None:
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _build_root(read_only, tmp_bytes)
    try:
        _loopback_up()
    except OSError:  # a sandbox without loopback still holds
        pass
    socket.sethostname("sandbox")
    os.setsid()
    os.chdir("/tmp")
    os.execve(command[0], command, os.environ)


def _descriptors_but_stdio() -> list[int]:
    return [fd for fd in map(int, os.listdir("/proc/self/fd")) if fd > 2]


def _close(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:  # the listing's own descriptor, closed already
            pass


def _status_of(wait_status: int) -> int:
    return os.WEXITSTATUS(wait_status) if os.WIFEXITED(wait_status) else 128 + os.WTERMSIG(wait_status)


def main(argv: list[str]) -> int:
    """Run the command after ``--`` in namespaces of its own (see the module's description); the
    command's exit status, or :data:`EXIT_REFUSED` with one line on stderr when a step is refused.

    Example (nothing to run: the command line is refused before any namespace is made):
        >>> main(["--tmp-bytes", "1024"])
        2
    """
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        print("referee namespaces: give the command to run after --", file=sys.stderr)
        return 2
    options, command = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    user_namespace = "--user-namespace" in options
    tmp_bytes = int(options[options.index("--tmp-bytes") + 1]) if "--tmp-bytes" in options else 64 << 20
    read_only = [options[i + 1] for i, option in enumerate(options) if option == "--ro"]
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # die with the judge that started us
    try:
        _unshare(user_namespace)
    except Refused as exc:
        print(f"referee namespaces: {exc}", file=sys.stderr, flush=True)
        return EXIT_REFUSED
    # Listed before the fork: the child's pivot_root moves this process's root too (they share the
    # mount namespace), into a /proc where this process has no entry.
    inherited = _descriptors_but_stdio()
    child = os.fork()
    if child == 0:
        try:
            _child(command, read_only, tmp_bytes)
        except (Refused, OSError) as exc:
            print(f"referee namespaces: {exc}", file=sys.stderr, flush=True)
        os._exit(EXIT_REFUSED)
    _close(inherited)  # the worker's control socket must close when the worker dies, not with us
    while True:
        try:
            return _status_of(os.waitpid(child, 0)[1])
        except InterruptedError:
            continue


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
