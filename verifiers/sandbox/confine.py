"""The ``landlock + seccomp`` layer: how a job is confined where it has no namespaces of its own
(the ``basic`` and ``uid`` levels), and whether this kernel can.

In the job's process, after its limits, its uid and ``no_new_privs`` and before anything of the
program runs (the ``exec`` of a compiler or a compiled program included), :func:`confine_job`
takes a Landlock domain (:mod:`.landlock`: read and execute the system's folders, the Python
installation, this package and the toolchains; read and write its own folder and, where the worker
has a private one, ``/tmp``; no TCP; no signal, ptrace, ``/proc/<pid>/mem`` or ``environ`` of a
process outside the job) and then a seccomp filter (:mod:`.seccomp`: no ptrace, no
``process_vm_*``, no mount or namespace calls, no new socket but an ``AF_UNIX`` pair, no
``kill(-1)`` or ``kill`` of another process group).

What that holds, measured by ``tests/reliability/test_confined_levels.py``: with Landlock ABI 6 or
later (Linux 6.12) a job can neither signal the caller's processes nor read their home, even with
the caller's uid (``basic`` without root), so that level is no longer weak. As root at ``basic``
the jobs keep root's capabilities (the clock, rlimits, raw devices through any right Landlock
leaves), so the level stays weak there. The host's ``/tmp`` and ``/dev/shm`` stay unwritable at
``basic`` (they hold the caller's files): a job writes in its folder, which is its ``TMPDIR`` and
``HOME``.
"""

from __future__ import annotations

import ctypes
import functools
import os
import socket
from collections.abc import Sequence

from . import landlock, seccomp

LAYER_NAME = "landlock + seccomp"
# Read (and execute) for every job: the system's folders and the files programs look up at start.
SYSTEM_READ: tuple[str, ...] = (
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/ld.so.cache", "/etc/ld.so.conf",
    "/etc/ld.so.conf.d", "/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
    "/etc/ssl/openssl.cnf", "/etc/ssl/certs",  # not /etc/ssl/private
    "/proc", "/sys/devices/system/cpu", "/sys/fs/cgroup", "/sys/kernel/mm/transparent_hugepage",
    "/dev/urandom", "/dev/random")
DEVICES_WRITE: tuple[str, ...] = ("/dev/null", "/dev/zero", "/dev/full")
SIGNAL_SCOPE_ABI = 6


def job_rules(read: Sequence[str], write: Sequence[str]) -> list[tuple[str, int]]:
    """The Landlock rules of a job: :data:`SYSTEM_READ` and ``read`` to read and execute, the devices
    and ``write`` (its folder, a private ``/tmp``) to write.

    Example:
        >>> rules = job_rules(["/opt/python"], ["/tmp/job-1"])
        >>> ("/opt/python", landlock.READ) in rules, rules[-1] == ("/tmp/job-1", landlock.WRITE)
        (True, True)
    """
    return ([(path, landlock.READ) for path in (*SYSTEM_READ, *read)]
            + [(path, landlock.READ_FILE | landlock.WRITE_FILE | landlock.TRUNCATE) for path in DEVICES_WRITE]
            + [(path, landlock.WRITE) for path in write])


@functools.lru_cache(maxsize=1)
def probe() -> tuple[bool, str]:
    """Whether this kernel can confine jobs (Landlock and seccomp), and why, naming each right an
    older Landlock lacks.

    Example:
        >>> on, why = probe()
        >>> on == (landlock.abi_version() > 0 and seccomp.available()[0]) and bool(why)
        True
    """
    abi = landlock.abi_version()
    filters, filters_why = seccomp.available()
    if abi == 0:
        return False, ("this kernel has no Landlock (Linux 5.13 or later with landlock in its lsm= list): "
                       "jobs are not confined beyond their uid")
    if not filters:
        return False, f"Landlock ABI {abi} but {filters_why}: jobs are not confined beyond their uid"
    missing = landlock.missing_rights(abi)
    return True, (f"Landlock ABI {abi}: jobs read only the system's folders, Python and the toolchains, write only "
                  "their own folder (and the worker's private /tmp at uid), and reach no TCP port, signal, ptrace "
                  "or /proc memory outside the job; "
                  f"{filters_why}: no ptrace, process_vm_*, mount or namespace calls, no socket but an AF_UNIX pair, "
                  "no kill(-1) or kill of another process group"
                  + "".join(f"; {why}" for why in missing))


def holds(jobs_are_root: bool) -> bool:
    """Whether the layer keeps a job from signalling the caller and reading their home: the kernel
    confines (:func:`probe`) with Landlock's signal scope, and the jobs are not root.

    Example:
        >>> holds(True)
        False
        >>> holds(False) == (probe()[0] and landlock.abi_version() >= SIGNAL_SCOPE_ABI)
        True
    """
    return not jobs_are_root and probe()[0] and landlock.abi_version() >= SIGNAL_SCOPE_ABI


def confine_job(rules: Sequence[tuple[str, int]]) -> None:
    """Confine the calling process for good: Landlock with ``rules`` (:func:`job_rules`), then the
    seccomp filter for its process group. ``no_new_privs`` must be set first; raises ``OSError``
    when the kernel refuses either.

    Example (in a forked child):
        >>> child = os.fork()
        >>> if child == 0:
        ...     os.setsid()
        ...     _ = ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
        ...     confine_job(job_rules([], []))
        ...     try:
        ...         os.listdir(os.path.expanduser("~"))
        ...     except PermissionError:
        ...         os._exit(7)
        ...     os._exit(1)
        >>> os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) if probe()[0] else 7
        7
    """
    landlock.restrict_self(rules, landlock.abi_version())
    arch = seccomp.machine_architecture()
    assert arch is not None  # probe() said so before any job was confined
    seccomp.install(seccomp.job_filter(arch, os.getpgrp()))


def self_test(rules: Sequence[tuple[str, int]]) -> bool:
    """Fork once, confine the child with ``rules`` and check that it holds: ``kill(-1, 0)`` (which
    sends nothing) is refused, the caller's ``/proc/<pid>/mem`` cannot be opened, and no socket
    can be made.

    Example:
        >>> self_test(job_rules([], [])) == probe()[0]
        True
    """
    caller = os.getpid()
    child = os.fork()
    if child == 0:
        try:
            os.setsid()
            ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
            confine_job(rules)
            for attempt in (lambda: os.kill(-1, 0), lambda: open(f"/proc/{caller}/mem", "rb").close(),
                            lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()):
                try:
                    attempt()
                except OSError:
                    continue
                os._exit(1)
            os._exit(0)
        except BaseException:
            os._exit(1)
    try:
        return os.waitpid(child, 0)[1] == 0
    except ChildProcessError:
        return False

