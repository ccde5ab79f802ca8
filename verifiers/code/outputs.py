"""Comparing what a program gave with what the tests expect, on the trusted side, in one place.

Both sides are plain data (the strict wire encoding guarantees it for the program's side),
so ``==`` here is always the built-in one.
"""

from __future__ import annotations

import math
import re
from typing import Any

_DECIMAL_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr`` cut to ``limit`` characters; safe for ints too long to print.

    Example:
        >>> short_repr(list(range(100)), 20)
        '[0, 1, 2, 3, 4, 5...'
        >>> short_repr(10 ** 5000)
        '<int of 16610 bits>'
    """
    try:
        text = repr(value)
    except ValueError:  # more digits than int -> str allows
        return f"<int of {value.bit_length()} bits>" if isinstance(value, int) else f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _numbers_close(a: Any, b: Any, abs_tol: float, rel_tol: float) -> bool:
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)


def values_match(got: Any, expected: Any, *, abs_tol: float = 0.0, rel_tol: float = 0.0) -> bool:
    """Deep equality where a tuple equals the list with the same items, and numbers may differ
    by ``abs_tol`` or ``rel_tol`` (both 0 by default: exact).

    Example:
        >>> values_match((1, [2, 3]), [1, (2, 3)])
        True
        >>> values_match(0.1 + 0.2, 0.3), values_match(0.1 + 0.2, 0.3, abs_tol=1e-9)
        (False, True)
        >>> values_match({"a": [1.0]}, {"a": (1,)}), values_match("1", 1)
        (True, False)
    """
    sequences = (list, tuple)
    if type(got) in sequences and type(expected) in sequences:
        return len(got) == len(expected) and all(
            values_match(g, e, abs_tol=abs_tol, rel_tol=rel_tol) for g, e in zip(got, expected))
    if type(got) is dict and type(expected) is dict:
        return got.keys() == expected.keys() and all(
            values_match(got[k], expected[k], abs_tol=abs_tol, rel_tol=rel_tol) for k in got)
    tolerant = abs_tol > 0 or rel_tol > 0
    if tolerant and type(got) in (int, float) and type(expected) in (int, float):
        return _numbers_close(got, expected, abs_tol, rel_tol)
    return bool(got == expected)


def call_output_matches(got: Any, expected: Any, *, abs_tol: float = 0.0, rel_tol: float = 0.0) -> bool:
    """:func:`values_match`, where an expected one-item list also matches its item
    (APPS and TACO store many call outputs wrapped in a list).

    Example:
        >>> call_output_matches(3, [3]), call_output_matches([3], [3]), call_output_matches(4, [3])
        (True, True, False)
    """
    if values_match(got, expected, abs_tol=abs_tol, rel_tol=rel_tol):
        return True
    return (type(expected) is list and len(expected) == 1
            and values_match(got, expected[0], abs_tol=abs_tol, rel_tol=rel_tol))


def _tokens(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip()]


def _token_match(got: str, expected: str, abs_tol: float, rel_tol: float) -> bool:
    if got == expected:
        return True
    if (abs_tol > 0 or rel_tol > 0) and _DECIMAL_RE.fullmatch(got) and _DECIMAL_RE.fullmatch(expected):
        return _numbers_close(float(got), float(expected), abs_tol, rel_tol)
    return False


def stdout_matches(got: str, expected: str, *, abs_tol: float = 0.0, rel_tol: float = 0.0) -> bool:
    """Line by line, token by token: spacing and blank lines never matter; numbers may differ
    by ``abs_tol`` or ``rel_tol`` when given.

    Example:
        >>> stdout_matches("3  4\\r\\n\\n5\\n", "3 4\\n5")
        True
        >>> stdout_matches("3 4 5", "3 4\\n5")
        False
        >>> stdout_matches("0.333333", "0.3333333333", abs_tol=1e-5)
        True
    """
    got_lines, expected_lines = _tokens(got), _tokens(expected)
    return len(got_lines) == len(expected_lines) and all(
        len(g) == len(e) and all(_token_match(a, b, abs_tol, rel_tol) for a, b in zip(g, e))
        for g, e in zip(got_lines, expected_lines))


def first_difference(got: str, expected: str) -> str:
    """Where two outputs first differ, for a reason line.

    Example:
        >>> first_difference("3\\n4\\n", "3\\n5\\n")
        "line 2: got '4', expected '5'"
    """
    got_lines, expected_lines = _tokens(got), _tokens(expected)
    for number, (g, e) in enumerate(zip(got_lines, expected_lines), start=1):
        if g != e:
            return f"line {number}: got {short_repr(' '.join(g), 40)}, expected {short_repr(' '.join(e), 40)}"
    return f"got {len(got_lines)} lines, expected {len(expected_lines)}"
