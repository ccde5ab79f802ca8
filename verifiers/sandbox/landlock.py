"""Landlock for one sandbox job: read only the folders it needs, write only its own, no TCP, and no
signal, ptrace or abstract unix socket reaching a process outside the job.

The kernel's Landlock rights by ABI version (``landlock_create_ruleset`` tells it): 1, the file
system rules, and a process that can neither ptrace nor open ``/proc/<pid>/mem``, ``environ`` or
``fd`` of a process outside its domain; 2, ``REFER`` (links and renames between folders); 3,
``TRUNCATE``; 4, TCP ``bind`` and ``connect``; 5, device ``ioctl``; 6, the scopes: no signal to
a process outside the domain (``LANDLOCK_SCOPE_SIGNAL``) and no connection to an abstract unix
socket made outside it. Each right this kernel lacks is named by :func:`missing_rights`, and what
it has is used.

Written with ctypes over the three documented system calls (444-446 on every architecture). The
PyPI package ``landlock`` (1.0.0.dev5, a development release) covers the file system rules only:
no TCP rules and no scopes, which are what keep a job from signalling the caller.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
from collections.abc import Sequence

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
READ = EXECUTE | READ_FILE | READ_DIR
FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the rights a rule on a file (not a folder) may carry
WRITE = (READ | WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO | MAKE_SYM
         | REFER | TRUNCATE)  # no device nodes, no device ioctl
_MISSING = [
    (2, "links and renames into the job's folder (REFER, ABI 2) are refused outright"),
    (3, "truncating a readable file is not a right of its own (TRUNCATE, ABI 3)"),
    (4, "TCP bind and connect are not restricted by Landlock (ABI 4)"),
    (5, "device ioctls are not restricted (ABI 5)"),
    (6, "signals and abstract unix sockets to processes outside the job are not refused by Landlock (ABI 6)"),
]


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.syscall.restype = ctypes.c_long


def abi_version() -> int:
    """The Landlock ABI this kernel gives (0: none, disabled, or not in the kernel's LSM list).

    Example:
        >>> abi_version() >= 0
        True
    """
    version = _LIBC.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, int(version))


def missing_rights(abi: int) -> list[str]:
    """What a job's Landlock domain cannot say at ``abi``, one sentence each.

    Example:
        >>> missing_rights(7), len(missing_rights(4))
        ([], 2)
        >>> missing_rights(5)
        ['signals and abstract unix sockets to processes outside the job are not refused by Landlock (ABI 6)']
    """
    return [why for version, why in _MISSING if abi < version]


def handled_fs(abi: int) -> int:
    """The file system rights this ABI knows (all handled: what no rule grants is refused).

    Example:
        >>> handled_fs(1) == (1 << 13) - 1, handled_fs(7) & IOCTL_DEV == IOCTL_DEV
        (True, True)
    """
    return _FS_BY_ABI[max(version for version in _FS_BY_ABI if version <= abi)]


def _check(result: int, what: str) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"landlock {what} failed: {errno.errorcode.get(code, code)}")
    return result


def restrict_self(rules: Sequence[tuple[str, int]], abi: int) -> None:
    """Confine the calling thread (and what it starts) for good: ``rules`` are ``(path, rights)``
    (paths that do not exist are skipped), all other file access, TCP bind and connect (ABI 4),
    signals and abstract unix sockets outside the domain (ABI 6) are refused. ``no_new_privs``
    must be set first. Raises ``OSError`` when the kernel refuses.

    Example (in a forked child: a Landlock domain is for good):
        >>> child = os.fork()
        >>> if child == 0:
        ...     _ = ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
        ...     restrict_self([("/usr", READ)], abi_version())
        ...     os.listdir("/usr/lib")
        ...     try:
        ...         open("/etc/passwd").close()  # (``os.access`` does not ask Landlock: try it)
        ...     except PermissionError:
        ...         os._exit(7)
        ...     os._exit(1)
        >>> os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) if abi_version() else 7
        7
    """
    fs = handled_fs(abi)
    attr = _RulesetAttr(fs, NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
                        SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8  # the struct as this ABI knows it
    ruleset = _check(_LIBC.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)),
                     "create_ruleset")
    try:
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                allowed = rights & fs & (~0 if stat.S_ISDIR(os.fstat(fd).st_mode) else FILE_ONLY)
                rule = _PathBeneathAttr(allowed, fd)
                _check(_LIBC.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)),
                       f"add_rule {path}")
            finally:
                os.close(fd)
        _check(_LIBC.syscall(_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)), "restrict_self")
    finally:
        os.close(ruleset)
