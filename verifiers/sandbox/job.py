"""The job side: what runs inside one forked, locked-down job process, next to the untrusted program.

It loads the program, then answers the trusted judge over its channel: each ``call`` gets the
return value (plain data only), the exception's type and message, or ``unsendable``. It never
sees a test, an expected value or a verdict; the program can tamper with this code freely,
because all it can change is what it sends back, and the judge reads that strictly.
"""

from __future__ import annotations

import builtins
import socket
import sys
import traceback
import types
from collections.abc import Callable, Sequence
from typing import Any

from .channel import ChannelClosed, recv_message, send_encoded, send_message
from .wire import WireError, encode

SOLUTION_FILENAME = "<solution>"
_MESSAGE_CHARS = 300
# What APPS and LiveCodeBench run before a call-based (LeetCode-style) program, whose solutions
# use ``List``, ``defaultdict`` or ``heapq`` without importing them (LiveCodeBench's import string;
# ``from builtins import *`` puts back ``pow`` and the other built-ins that ``math`` shadows).
STANDARD_IMPORTS = """\
from string import *
from re import *
from datetime import *
from collections import *
from heapq import *
from bisect import *
from copy import *
from math import *
from random import *
from statistics import *
from itertools import *
from functools import *
from operator import *
from io import *
from sys import *
from json import *
from builtins import *
from typing import *
import string, re, datetime, collections, heapq, bisect, copy, math, random, statistics, itertools, functools
import operator, io, sys, json
sys.setrecursionlimit(50000)
"""


def _message(exc: BaseException) -> str:
    try:
        return str(exc)[:_MESSAGE_CHARS]
    except Exception:  # an exception whose __str__ itself fails
        return ""


def _load(code: str, module_name: str, preamble: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run the program in a fresh namespace (after the names of ``preamble``, if given); never
    with this module's ``from __future__`` imports (``dont_inherit``)."""
    namespace: dict[str, Any] = {"__name__": module_name, "__builtins__": builtins, **(preamble or {})}
    exec(compile(code, SOLUTION_FILENAME, "exec", dont_inherit=True), namespace)
    return namespace


def standard_names() -> dict[str, Any]:
    """The names :data:`STANDARD_IMPORTS` binds, for a call-based program to find already imported.

    Example:
        >>> names = standard_names()
        >>> names["List"], names["defaultdict"].__name__, names["heappush"].__module__, names["pow"] is pow
        (typing.List, 'defaultdict', '_heapq', True)
    """
    namespace: dict[str, Any] = {"__name__": "__standard_imports__", "__builtins__": builtins}
    exec(compile(STANDARD_IMPORTS, "<standard imports>", "exec", dont_inherit=True), namespace)
    for name in ("__name__", "__builtins__"):
        namespace.pop(name)
    return namespace


def _resolve(namespace: dict[str, Any], name: str,
             preamble: dict[str, Any] | None = None) -> tuple[Callable[..., Any] | None, tuple[Any, ...]]:
    """What ``name`` is in the program: (function or None, description sent to the judge). A name
    the program got only from ``preamble`` (``gcd``, ``accumulate``) is not the program's."""
    if preamble and name in preamble and namespace.get(name) is preamble[name]:
        namespace = {key: value for key, value in namespace.items() if key != name}
    if name not in namespace:
        solution = namespace.get("Solution")  # LeetCode style: the function is a method of class Solution
        if isinstance(solution, type) and hasattr(solution, name):
            return getattr(solution(), name), ("callable",)
        return None, ("missing",)
    value = namespace[name]
    if isinstance(value, types.ModuleType):
        return None, ("module", value.__name__)
    if callable(value):
        return value, ("callable",)
    try:
        encode(value)
    except WireError:
        return None, ("other", type(value).__name__)
    return None, ("value", value)


def serve_calls(channel: socket.socket, code: str, names: Sequence[str], *, standard_imports: bool = False) -> None:
    """Load the program (``__name__`` is not ``"__main__"``), describe ``names``, then answer calls until EOF.

    ``standard_imports``: run :data:`STANDARD_IMPORTS` first (call-based tests, as APPS and
    LiveCodeBench do).

    Example (in a thread here; in a locked-down job process for real):
        >>> import threading
        >>> judge, job = socket.socketpair()
        >>> threading.Thread(target=serve_calls, args=(job, "def f(x):\\n    return [x, x]", ["f", "g"])).start()
        >>> recv_message(judge)
        ('loaded', {'f': ('callable',), 'g': ('missing',)})
        >>> send_message(judge, ("call", "f", (1,), {})); recv_message(judge)
        ('return', [1, 1])
        >>> send_message(judge, ("call", "f", (), {})); recv_message(judge)[:2]
        ('raise', 'TypeError')
        >>> judge.close()
    """
    preamble = None
    try:
        preamble = standard_names() if standard_imports else None
        namespace = _load(code, "__solution__", preamble)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the program ended while loading
        send_message(channel, ("load_error", type(exc).__name__, _message(exc)))
        return
    functions: dict[str, Callable[..., Any]] = {}
    described: dict[str, tuple[Any, ...]] = {}
    for name in names:
        try:
            function, described[name] = _resolve(namespace, name, preamble)
        except BaseException as exc:  # a Solution() constructor or a hasattr that raises
            described[name] = ("other", type(exc).__name__)
            continue
        if function is not None:
            functions[name] = function
    send_message(channel, ("loaded", described))
    while True:
        try:
            _, name, args, kwargs = recv_message(channel)
        except ChannelClosed:
            return
        try:
            result = functions[name](*args, **kwargs)
        except BaseException as exc:
            send_message(channel, ("raise", type(exc).__name__, _message(exc)))
            continue
        try:
            payload = encode(("return", result))
        except (WireError, RecursionError):
            payload = encode(("unsendable", type(result).__name__))
        send_encoded(channel, payload)


def run_main(channel: socket.socket, code: str) -> None:
    """Run the program as ``__main__`` on its stdin, flush its output, and report how it ended:
    ``("done", exception or None, exit code)``, the code Python itself would exit with.

    ``SystemExit`` is a normal end whatever its code: the judge never lets exit codes decide
    (``referee.verifiers.code.run_program`` only reports them).

    Example:
        >>> judge, job = socket.socketpair()
        >>> run_main(job, "import sys\\nprint(6 * 7)\\nsys.exit(3)")
        42
        >>> recv_message(judge)
        ('done', None, 3)
    """
    outcome: tuple[str, str] | None = None
    exit_code = 0
    try:
        _load(code, "__main__")
    except SystemExit as exc:
        exit_code = _exit_code(exc)
    except BaseException as exc:
        outcome, exit_code = (type(exc).__name__, _message(exc)), 130 if isinstance(exc, KeyboardInterrupt) else 1
        try:
            traceback.print_exc()
        except BaseException:
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    send_message(channel, ("done", outcome, exit_code))


def _exit_code(exc: SystemExit) -> int:
    """The status Python exits with for ``exc``: its int code, 0 for ``None``, else 1 (the message
    goes to stderr, as Python prints it)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):  # past a C long, Python exits with -1 too
        return (int(exc.code) if -(2**63) <= exc.code < 2**63 else -1) & 0xFF
    try:
        print(exc.code, file=sys.stderr)
    except BaseException:
        pass
    return 1
