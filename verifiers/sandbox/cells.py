"""The job side of a Python session: cells run one after another in one persistent namespace,
inside a forked, locked-down job (the ``cells`` mode of the fork server).

Each ``("cell", code)`` message is answered by ``("cell", output, more, error)``: what the cell
printed (``sys.stdout`` and ``sys.stderr`` together, then the ``repr`` of a trailing expression, as
a notebook shows it), capped at ``output_chars`` with ``more`` the characters left out, and the
last lines of the traceback when the cell raised (``""`` when it did not). The cell can tamper
with all of this; all it changes is the text its own session shows, which the trusted side
(:mod:`.cell_session`) reads with a deadline and a size cap, and caps again.
"""

from __future__ import annotations

import ast
import builtins
import io
import linecache
import math
import os
import resource
import socket
import sys
import traceback
import types
from typing import Any

from .channel import ChannelClosed, recv_message, send_message

ERROR_LINES = 8  # the traceback's last lines: the failing line of the cell and the exception
ERROR_CHARS = 2000


class _Capture(io.TextIOBase):
    """A text stream that keeps the first ``cap`` characters written and counts the rest.

    Example:
        >>> out = _Capture(5); _ = out.write("hello world")
        >>> out.text(), out.more
        ('hello', 6)
    """

    def __init__(self, cap: int) -> None:
        super().__init__()
        self.cap = cap
        self.parts: list[str] = []
        self.kept = 0
        self.more = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:  # type: ignore[override]
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        text = str.__str__(text)  # a plain str, whatever a subclass's own methods do
        room = max(0, self.cap - self.kept)
        if room:
            self.parts.append(text[:room])
            self.kept += min(room, len(text))
        self.more += max(0, len(text) - room)
        return len(text)

    def text(self) -> str:
        return "".join(self.parts)


def error_tail(exc: BaseException) -> str:
    """The last lines of ``exc``'s traceback from the first frame of a cell on (what a model can
    learn from: the failing line and the exception), at most :data:`ERROR_CHARS` characters.

    Example:
        >>> namespace = {}
        >>> try:
        ...     run_code("x = 1\\n1 / 0", "<cell 1>", namespace)
        ... except ZeroDivisionError as exc:
        ...     print(error_tail(exc))
        Traceback (most recent call last):
          File "<cell 1>", line 2, in <module>
            1 / 0
        ...
        ZeroDivisionError: division by zero
    """
    tb = exc.__traceback__
    while tb is not None and not tb.tb_frame.f_code.co_filename.startswith("<cell "):
        tb = tb.tb_next
    try:
        lines = "".join(traceback.format_exception(type(exc), exc, tb)).rstrip("\n").splitlines()
    except BaseException:  # an exception whose formatting itself fails
        lines = [type(exc).__name__]
    if len(lines) > ERROR_LINES:
        lines = lines[:1] + ["  ..."] + lines[-(ERROR_LINES - 1):]
    text = "\n".join(lines)
    return text if len(text) <= ERROR_CHARS else "..." + text[-ERROR_CHARS:]


def run_code(code: str, filename: str, namespace: dict[str, Any]) -> None:
    """Run ``code`` in ``namespace``; when its last statement is an expression whose value is not
    ``None``, print its ``repr`` and keep it as ``_`` (as a notebook does). Exceptions propagate.

    Example:
        >>> namespace = {}
        >>> run_code("x = 20\\nx + 22", "<cell 1>", namespace)
        42
        >>> run_code("print(x)\\nNone", "<cell 2>", namespace); namespace["_"]
        20
        42
    """
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)  # tracebacks show the lines
    tree = ast.parse(code, filename, "exec")
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, filename, "exec", dont_inherit=True), namespace)
    if last is not None:
        value = eval(compile(ast.Expression(last.value), filename, "eval", dont_inherit=True), namespace)
        if value is not None:
            namespace["_"] = value
            print(repr(value))


def _cpu_for_one_cell(seconds: float) -> None:
    """Lower this process's soft CPU limit to what it used so far plus ``seconds`` (``SIGXCPU``
    past it); the hard limit, the job's whole budget, stays and bounds a cell that raises it."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    wanted = math.ceil(usage.ru_utime + usage.ru_stime + seconds)
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (wanted, hard))


def run_cell(code: str, filename: str, namespace: dict[str, Any], output_chars: int) -> tuple[str, int, str]:
    """``(output, more, error)`` of one cell (see the module's docstring); never raises.

    Example:
        >>> namespace = {}
        >>> run_cell("x = 6\\nprint('x' * 10)\\nx * 7", "<cell 1>", namespace, 8)
        ('xxxxxxxx', 6, '')
        >>> run_cell("x +", "<cell 2>", namespace, 100)[2].splitlines()[-1]
        'SyntaxError: invalid syntax'
    """
    capture = _Capture(output_chars)
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = capture
    error = ""
    try:
        run_code(code, filename, namespace)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: shown, the session goes on
        error = error_tail(exc)
    finally:
        sys.stdout, sys.stderr = saved
    return capture.text(), capture.more, error


def serve_cells(channel: socket.socket, *, cpu_seconds: float | None, output_chars: int) -> None:
    """Answer ``("cell", code)`` messages in one namespace (a fresh ``__main__`` module) until EOF;
    each cell may use ``cpu_seconds`` of CPU (``None``: no limit of its own).

    Example (in a thread here; in a locked-down job process for real):
        >>> import threading
        >>> trusted, job = socket.socketpair()
        >>> worker = threading.Thread(target=serve_cells, args=(job,), kwargs={"cpu_seconds": None, "output_chars": 100})
        >>> worker.start()
        >>> send_message(trusted, ("cell", "x = 41")); recv_message(trusted)
        ('cell', '', 0, '')
        >>> send_message(trusted, ("cell", "x + 1")); recv_message(trusted)
        ('cell', '42\\n', 0, '')
        >>> trusted.close(); worker.join()
    """
    owner = os.getpid()  # a process a cell forked never answers: it ends where its cell ends
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    previous = sys.modules.get("__main__")
    namespace = main.__dict__
    count = 0
    while True:
        try:
            message = recv_message(channel)
        except ChannelClosed:
            return
        if type(message) is not tuple or len(message) != 2 or message[0] != "cell" or type(message[1]) is not str:
            send_message(channel, ("cell", "", 0, "the session got a malformed request"))
            continue
        count += 1
        if cpu_seconds is not None:
            _cpu_for_one_cell(cpu_seconds)
        sys.modules["__main__"] = main  # classes and functions of the cells pickle as __main__'s
        try:
            output, more, error = run_cell(message[1], f"<cell {count}>", namespace, output_chars)
        finally:
            if previous is not None:
                sys.modules["__main__"] = previous
        if os.getpid() != owner:
            os._exit(0)
        send_message(channel, ("cell", output, more, error))
