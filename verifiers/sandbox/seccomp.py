"""A seccomp filter for one sandbox job: the system calls a job never needs are refused, and the
signals it sends stay inside its own process group.

Refused (``EPERM``): ``ptrace``, ``process_vm_readv``/``writev``, ``pidfd_getfd``; every mount,
namespace and root call (``mount``, ``umount2``, the new mount API, ``pivot_root``, ``chroot``,
``unshare``, ``setns``, and ``clone`` with a ``CLONE_NEW*`` flag); ``kexec_*``, ``bpf``,
``perf_event_open``, ``userfaultfd``, the keyring (``keyctl``, ``add_key``, ``request_key``), modules,
swap, reboot, the clock, host names, ``io_uring`` (its operations would bypass this filter); and
every new socket: ``socket`` always (a job talks only on the channel it was given), ``socketpair``
for ``AF_UNIX`` only (``asyncio`` and ``multiprocessing`` pipes use it). ``clone3`` answers ``ENOSYS``
(its flags sit in memory a filter cannot read), so the C library falls back to ``clone``, whose
flags it can. ``kill(-1, sig)`` and ``kill(-pgid, sig)`` for any group but the job's own are
refused by argument; a positive pid is left to Landlock's signal scope (:mod:`.landlock`), which
the filter cannot see. A call from another architecture (a 32-bit ``int 0x80`` on x86-64, x32)
kills the job.

Written with ctypes: a classic BPF program assembled here and installed with
``prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)``. The PyPI bindings were weighed: ``pyseccomp``
(last release 2021) is a ctypes wrapper that needs ``libseccomp.so.2`` installed, and libseccomp's
own Python bindings are not on PyPI; thirty lines of BPF need neither, and the unit tests run the
program through a small BPF interpreter. The call numbers are those of the kernel's headers
(``asm/unistd_64.h`` for x86-64, ``asm-generic/unistd.h`` for aarch64); only x86-64 has been run.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct
import sys
from dataclasses import dataclass

# struct seccomp_data: nr (u32), arch (u32), instruction_pointer (u64), args[6] (u64 each)
_NR, _ARCH, _ARG0_LOW = 0, 4, 16
_LD_W_ABS, _JEQ_K, _JSET_K, _JGE_K, _RET_K = 0x20, 0x15, 0x45, 0x35, 0x06
RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, _PR_GET_SECCOMP = 22, 2, 21
_AF_UNIX = 1
_CLONE_NEW_FLAGS = 0x7E020000  # NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
_X32_BIT = 0x40000000


@dataclass(frozen=True)
class Architecture:
    """One architecture's ``AUDIT_ARCH`` value and the numbers of the calls the filter decides on.

    Example:
        >>> ARCHITECTURES["x86_64"].calls["kill"], ARCHITECTURES["aarch64"].calls["kill"]
        (62, 129)
    """

    audit_arch: int
    calls: dict[str, int]
    x32: bool = False  # x86-64's x32 calls carry bit 30 in the number under the same AUDIT_ARCH


_DENIED = ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "mount", "umount2", "pivot_root",
           "chroot", "unshare", "setns", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree",
           "mount_setattr", "kexec_load", "kexec_file_load", "bpf", "perf_event_open", "userfaultfd", "keyctl",
           "add_key", "request_key", "init_module", "finit_module", "delete_module", "open_by_handle_at",
           "name_to_handle_at", "swapon", "swapoff", "reboot", "acct", "quotactl", "quotactl_fd", "sethostname",
           "setdomainname", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "syslog", "vhangup",
           "lookup_dcookie", "io_uring_setup", "io_uring_enter", "io_uring_register", "socket")
_X86_64_ONLY = {"iopl": 172, "ioperm": 173, "uselib": 134, "modify_ldt": 154}

ARCHITECTURES: dict[str, Architecture] = {
    "x86_64": Architecture(0xC000003E, {
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_getfd": 438, "mount": 165,
        "umount2": 166, "pivot_root": 155, "chroot": 161, "unshare": 272, "setns": 308, "fsopen": 430,
        "fsconfig": 431, "fsmount": 432, "fspick": 433, "move_mount": 429, "open_tree": 428, "mount_setattr": 442,
        "kexec_load": 246, "kexec_file_load": 320, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
        "keyctl": 250, "add_key": 248, "request_key": 249, "init_module": 175, "finit_module": 313,
        "delete_module": 176, "open_by_handle_at": 304, "name_to_handle_at": 303, "swapon": 167, "swapoff": 168,
        "reboot": 169, "acct": 163, "quotactl": 179, "quotactl_fd": 443, "sethostname": 170, "setdomainname": 171,
        "settimeofday": 164, "clock_settime": 227, "clock_adjtime": 305, "adjtimex": 159, "syslog": 103,
        "vhangup": 153, "lookup_dcookie": 212, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "socket": 41, "socketpair": 53, "kill": 62, "clone": 56, "clone3": 435,
        **_X86_64_ONLY}, x32=True),
    "aarch64": Architecture(0xC00000B7, {  # the generic table (asm-generic/unistd.h)
        "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "pidfd_getfd": 438, "mount": 40,
        "umount2": 39, "pivot_root": 41, "chroot": 51, "unshare": 97, "setns": 268, "fsopen": 430, "fsconfig": 431,
        "fsmount": 432, "fspick": 433, "move_mount": 429, "open_tree": 428, "mount_setattr": 442, "kexec_load": 104,
        "kexec_file_load": 294, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "keyctl": 219,
        "add_key": 217, "request_key": 218, "init_module": 105, "finit_module": 273, "delete_module": 106,
        "open_by_handle_at": 265, "name_to_handle_at": 264, "swapon": 224, "swapoff": 225, "reboot": 142,
        "acct": 89, "quotactl": 60, "quotactl_fd": 443, "sethostname": 161, "setdomainname": 162,
        "settimeofday": 170, "clock_settime": 112, "clock_adjtime": 266, "adjtimex": 171, "syslog": 116,
        "vhangup": 58, "lookup_dcookie": 18, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "socket": 198, "socketpair": 199, "kill": 129, "clone": 220, "clone3": 435}),
}


def machine_architecture() -> Architecture | None:
    """This machine's :class:`Architecture`, or ``None`` where the filter does not know its calls.

    Example:
        >>> machine_architecture() is ARCHITECTURES.get(platform.machine())
        True
    """
    return ARCHITECTURES.get(platform.machine()) if sys.byteorder == "little" else None


def _errno(code: int) -> int:
    return RET_ERRNO | code


def job_filter(arch: Architecture, pgid: int) -> list[tuple[int, int, int, int]]:
    """The filter for a job whose process group is ``pgid``: BPF instructions ``(code, jt, jf, k)``.

    Example:
        >>> program = job_filter(ARCHITECTURES["x86_64"], 4242)
        >>> program[:2]  # load the architecture; not ours: jump to the end, which kills the process
        [(32, 0, 0, 4), (21, 0, 72, 3221225534)]
        >>> program[1 + 1 + 72] == (0x06, 0, 0, RET_KILL_PROCESS)
        True
    """
    calls = arch.calls
    denied = [calls[name] for name in (*_DENIED, *(_X86_64_ONLY if arch.x32 else ())) if name in calls]
    # (instruction, label of the jump when true, label when false); labels are resolved below
    code: list[tuple[int, str | int, str | int, int]] = [
        (_LD_W_ABS, 0, 0, _ARCH), (_JEQ_K, 0, "kill_process", arch.audit_arch), (_LD_W_ABS, 0, 0, _NR)]
    if arch.x32:
        code.append((_JGE_K, "deny", 0, _X32_BIT))
    code += [(_JEQ_K, "deny", 0, nr) for nr in denied]
    code += [(_JEQ_K, "clone3", 0, calls["clone3"]), (_JEQ_K, "clone", 0, calls["clone"]),
             (_JEQ_K, "socketpair", 0, calls["socketpair"]), (_JEQ_K, "kill", 0, calls["kill"]),
             (_RET_K, 0, 0, RET_ALLOW)]
    labels: dict[str, int] = {}

    def label(name: str, *instructions: tuple[int, str | int, str | int, int]) -> None:
        labels[name] = len(code)
        code.extend(instructions)

    label("clone", (_LD_W_ABS, 0, 0, _ARG0_LOW), (_JSET_K, "deny", 0, _CLONE_NEW_FLAGS), (_RET_K, 0, 0, RET_ALLOW))
    label("socketpair", (_LD_W_ABS, 0, 0, _ARG0_LOW), (_JEQ_K, "allow", "deny", _AF_UNIX))
    # pid is an int: its low 32 bits, read as two's complement
    label("kill", (_LD_W_ABS, 0, 0, _ARG0_LOW), (_JEQ_K, "deny", 0, 0xFFFFFFFF),
          (_JEQ_K, "allow", 0, -pgid & 0xFFFFFFFF), (_JSET_K, "deny", "allow", 0x80000000))
    label("allow", (_RET_K, 0, 0, RET_ALLOW))
    label("deny", (_RET_K, 0, 0, _errno(errno.EPERM)))
    label("clone3", (_RET_K, 0, 0, _errno(errno.ENOSYS)))
    label("kill_process", (_RET_K, 0, 0, RET_KILL_PROCESS))
    program = []
    for at, (op, jt, jf, k) in enumerate(code):
        offsets = [target if isinstance(target, int) else labels[target] - at - 1 for target in (jt, jf)]
        if not all(0 <= offset < 256 for offset in offsets):
            raise AssertionError(f"seccomp jump out of range at {at}")  # the program's shape, not the input
        program.append((op, offsets[0], offsets[1], k))
    return program


def encode(program: list[tuple[int, int, int, int]]) -> bytes:
    """The instructions as ``struct sock_filter`` bytes.

    Example:
        >>> encode([(0x06, 0, 0, RET_ALLOW)]).hex()
        '060000000000ff7f'
    """
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program)


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def available() -> tuple[bool, str]:
    """Whether this kernel takes seccomp filters and this module knows the machine's calls, and why.

    Example:
        >>> ok, why = available()
        >>> isinstance(ok, bool) and bool(why)
        True
    """
    if machine_architecture() is None:
        return False, f"the seccomp filter knows x86_64 and aarch64 only, not {platform.machine()}"
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_GET_SECCOMP, 0, 0, 0, 0) < 0:
        return False, f"this kernel has no seccomp ({errno.errorcode.get(ctypes.get_errno(), 'error')})"
    return True, f"seccomp filters ({platform.machine()})"


def install(program: list[tuple[int, int, int, int]]) -> None:
    """Install ``program`` on the calling thread for good (``no_new_privs`` must be set first).

    Raises ``OSError`` when the kernel refuses it.

    Example (in a forked child: a filter is for good):
        >>> import os
        >>> child = os.fork()
        >>> if child == 0:
        ...     _ = ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
        ...     install(job_filter(machine_architecture(), os.getpid()))
        ...     try:
        ...         os.kill(-1, 0)
        ...     except PermissionError:
        ...         os._exit(7)
        ...     os._exit(0)
        >>> os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
        7
    """
    data = encode(program)
    fprog = _Program(len(program), data)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"the kernel refused the seccomp filter: {errno.errorcode.get(code, code)}")
