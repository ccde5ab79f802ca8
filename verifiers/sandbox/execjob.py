"""Jobs that run a program as its own process (a compiler, a compiled binary, node, a checker)
instead of Python code in the fork server: the worker's side and the job's side of the ``exec`` mode.

The worker writes the request's ``files`` into the fresh job folder before the fork (owned by the
worker, read-only for the job where the job has its own uid), the job execs ``argv`` there after
taking every limit of a Python job, and the worker reads back the files the request names in
``collect`` before it removes the folder: the artefacts of a compile job. Nothing a job leaves
reaches a later job except through the trusted side, which keeps the artefacts itself.
"""

from __future__ import annotations

import fnmatch
import os
import socket
import stat
from typing import Any

from .channel import send_message

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # no link, no FIFO that blocks


def place_files(folder: str, files: dict[str, bytes]) -> None:
    """Write ``files`` (plain names) into ``folder``, read-only and executable for everyone.

    Example:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> place_files(folder, {"main": b"#!/bin/sh\\necho hi\\n"})
        >>> oct(os.stat(f"{folder}/main").st_mode & 0o777)
        '0o555'
        >>> place_files(folder, {"../escape": b""})
        Traceback (most recent call last):
        ...
        ValueError: job file name '../escape' is not a plain file name
    """
    for name, data in files.items():
        if not name or "/" in name or name in (".", ".."):
            raise ValueError(f"job file name {name!r} is not a plain file name")
        fd = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o555)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, 0o555)
        finally:
            os.close(fd)


def collect_files(folder: str, patterns: list[str], max_bytes: int) -> dict[str, bytes] | str:
    """The regular files directly in ``folder`` whose names match ``patterns``, or a sentence
    saying why not (more than ``max_bytes`` in all). Links, FIFOs and folders are skipped.

    Example:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> for name in ("A.class", "B.class", "notes"):
        ...     _ = open(f"{folder}/{name}", "w").write(name)
        >>> os.symlink("/etc/passwd", f"{folder}/C.class")
        >>> sorted(collect_files(folder, ["*.class"], 1 << 20))
        ['A.class', 'B.class']
        >>> collect_files(folder, ["*.class"], 10)
        'the compiled files take more than 10 bytes'
    """
    found: dict[str, bytes] = {}
    total = 0
    for name in sorted(os.listdir(folder)):
        if not any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns):
            continue
        try:
            fd = os.open(os.path.join(folder, name), _READ_FLAGS)
        except OSError:  # a symbolic link (ELOOP), or gone
            continue
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                continue
            total += info.st_size
            if total > max_bytes:
                return f"the compiled files take more than {max_bytes} bytes"
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            found[name] = b"".join(chunks)
        finally:
            os.close(fd)
    return found


def exec_program(channel: socket.socket, request: dict[str, Any]) -> None:
    """In a job that has taken its limits: become ``request["argv"]`` (with stderr on stdout when
    ``merge_stderr``, so a compiler's first lines are kept in order).

    The first message on the channel is ours, sent before anything of the program runs:
    ``("exec_error", why)`` when ``argv[0]`` cannot be run here (a toolchain missing inside the
    sandbox, not the program's fault), else ``("started",)``. The channel stays open in the
    program, so the judge sees it close when the program ends; whatever the program writes on it
    after that is never believed.

    Example (in a forked child: the exec replaces it):
        >>> import time
        >>> from referee.verifiers.sandbox.channel import recv_message
        >>> judge, job = socket.socketpair()
        >>> child = os.fork()
        >>> if child == 0:
        ...     exec_program(job, {"argv": ["/no/such/compiler"]})
        >>> recv_message(judge, deadline=time.monotonic() + 5)
        ('exec_error', 'cannot run /no/such/compiler: it is not an executable file inside the sandbox')
        >>> os.waitpid(child, 0)[1] >> 8
        127
    """
    argv = [str(part) for part in request["argv"]]
    if not (os.path.isfile(argv[0]) and os.access(argv[0], os.X_OK)):
        send_message(channel, ("exec_error", f"cannot run {argv[0]}: it is not an executable file inside the sandbox"))
        os._exit(127)
    send_message(channel, ("started",))
    if request.get("merge_stderr"):
        os.dup2(1, 2)
    try:
        os.execve(argv[0], argv, dict(os.environ))
    except OSError:
        os._exit(127)  # after "started": the judge reads it as the run's failure
