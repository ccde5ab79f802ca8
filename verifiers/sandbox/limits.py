"""The resource limits of one job, and applying them as rlimits in the job's process."""

from __future__ import annotations

import math
import resource
from dataclasses import asdict, dataclass
from typing import Any


# What a job may keep in files at once (its job folder, /tmp, /dev/shm), in MiB: the sandbox's
# private /tmp lives in memory, outside ``memory_mb``, so it has its own bound (``tmp_mb``).
DEFAULT_TMP_MB = 64


@dataclass(frozen=True)
class Limits:
    """Hard limits for one job (one forked run of the program).

    Attributes:
        cpu_seconds: CPU time of the whole job (a backstop: wall-clock deadlines come first).
        memory_bytes: address space (``RLIMIT_AS``).
        processes: processes and threads the job may add (``RLIMIT_NPROC``).
        open_files: file descriptors (``RLIMIT_NOFILE``).
        file_bytes: size of any file the job writes (``RLIMIT_FSIZE``).
        output_bytes: what the job may print, and the size of any value it returns.
        tmp_bytes: what the job may keep in files at once (its folder, ``/tmp``, ``/dev/shm``):
            the size of the worker's private in-memory ``/tmp`` where it has one, else checked
            from outside while the job runs.

    Example:
        >>> Limits.for_tests(timeout=2.0, tests=3, memory_mb=512).cpu_seconds
        9
        >>> Limits.from_dict(Limits.for_tests(timeout=1.0, tests=1).to_dict()).processes
        16
    """

    cpu_seconds: int
    memory_bytes: int
    processes: int = 16
    open_files: int = 64
    file_bytes: int = 16 << 20
    output_bytes: int = 4 << 20
    tmp_bytes: int = DEFAULT_TMP_MB << 20

    @classmethod
    def for_tests(cls, *, timeout: float, tests: int, memory_mb: int = 1024,
                  output_bytes: int = 4 << 20, tmp_mb: int = DEFAULT_TMP_MB) -> Limits:
        """Limits for a job that loads the program once and runs up to ``tests`` tests."""
        return cls(cpu_seconds=math.ceil(timeout * (tests + 1)) + 1, memory_bytes=memory_mb << 20,
                   output_bytes=output_bytes, tmp_bytes=tmp_mb << 20)

    def to_dict(self) -> dict[str, int]:
        """Plain data, to send over the wire."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Limits:
        """The inverse of :meth:`to_dict`."""
        return cls(**{key: int(value) for key, value in data.items()})


def apply_limits(limits: Limits, *, processes_already: int = 0) -> None:
    """Set hard rlimits for the calling process (call it in the job's child, before dropping privileges).

    ``processes_already`` is how many processes its uid already counts when the job keeps the
    worker's uid, so the cap still leaves it ``limits.processes`` more.

    Example (in a forked child: the limits are for good):
        >>> import os
        >>> child = os.fork()
        >>> if child == 0:
        ...     apply_limits(Limits.for_tests(timeout=1.0, tests=1, memory_mb=256))
        ...     os._exit(resource.getrlimit(resource.RLIMIT_AS)[1] >> 20)
        >>> os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
        0
    """
    cpu = max(1, limits.cpu_seconds)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # SIGXCPU first, SIGKILL a second later
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes + processes_already,) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_MEMLOCK, (0, 0))
    resource.setrlimit(resource.RLIMIT_MSGQUEUE, (0, 0))
