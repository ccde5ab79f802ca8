"""Maths equivalence through math-verify and sympy: the part that can hang, run only in workers.

:mod:`referee.verifiers.math` calls these functions through a
:class:`~referee.verifiers.deadline_pool.DeadlinePool`, whose deadline replaces math-verify's
own ``signal.alarm`` timeouts (switched off here: ``parsing_timeout=None``,
``timeout_seconds=None``). Every function takes and returns plain data: parsed sympy objects
never leave the worker, and nothing here stringifies them.

Answers are parsed as ``\\boxed{answer}``, so bare LaTeX (``\\frac{1}{2}``, ``x+1``, ``50\\%``)
reads as well as a boxed one. Parsed golds are cached: a GRPO group shares one gold.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import Any

from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse
from math_verify import verify as math_verify
from sympy import Basic, MatrixBase

from .math_answers import CompareOptions

# math-verify warns once per process that its timeouts are off: the pool enforces them.
for _name in ("math_verify", "math_verify.parser", "math_verify.grader"):
    logging.getLogger(_name).setLevel(logging.ERROR)

_EXTRACTION = (LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig())


def _parse(text: str) -> list[Any]:
    return parse(f"\\boxed{{{text}}}", extraction_config=_EXTRACTION, parsing_timeout=None)


_PROBE = _parse("0")


@lru_cache(maxsize=4096)
def _parsed_gold(text: str) -> list[Any]:
    return _parse(text)


def _is_maths(parsed: list[Any]) -> bool:
    return any(isinstance(item, (Basic, MatrixBase)) for item in parsed)


def gold_problem(gold: str) -> str | None:
    """Why the gold answer text cannot be used, or ``None`` when sympy reads it.

    The gold is also compared once with ``0``, so that a gold whose comparison hangs (a power
    tower) times out here, as the gold's fault, rather than later on a completion.

    Example:
        >>> gold_problem(r"\\frac{1}{2}") is None, gold_problem(r"\\left( 3, \\frac{\\pi}{2} \\right)") is None
        (True, True)
        >>> gold_problem(r"\\frac{")
        'gold does not parse as maths'
    """
    parsed = _parsed_gold(gold)
    if not _is_maths(parsed):
        return "gold does not parse as maths"
    math_verify(parsed, _PROBE, timeout_seconds=None)
    return None


def _numbers(parsed: list[Any]) -> list[complex]:
    values = []
    for item in parsed:
        if isinstance(item, Basic) and getattr(item, "is_number", False):
            try:
                values.append(complex(item.evalf()))
            except (TypeError, ValueError):
                continue
    return values


def _close(gold: list[Any], answer: list[Any], options: CompareOptions) -> bool:
    for g in _numbers(gold):
        for a in _numbers(answer):
            if abs(a - g) <= max(options.abs_tol, options.rel_tol * max(abs(a), abs(g))):
                return True
    return False


def equivalent(gold: str, answer: str, options: CompareOptions) -> tuple[bool, bool]:
    """``(equal, answer_parsed)``: math-verify's ``verify(gold, answer)`` (order kept), then tolerance.

    Example:
        >>> equivalent(r"\\frac{1}{2}", "0.5", CompareOptions())
        (True, True)
        >>> equivalent("x+1", "1+x", CompareOptions()), equivalent(r"[-2, 7]", r"(-2, 7]", CompareOptions())
        ((True, True), (False, True))
        >>> equivalent(r"\\pi", "3.1416", CompareOptions(abs_tol=1e-4))
        (True, True)
    """
    parsed_gold = _parsed_gold(gold)
    parsed_answer = _parse(answer)
    if math_verify(parsed_gold, parsed_answer, float_rounding=options.float_rounding, strict=options.strict,
                   timeout_seconds=None):
        return True, _is_maths(parsed_answer)
    if options.abs_tol or options.rel_tol:
        return _close(parsed_gold, parsed_answer, options), _is_maths(parsed_answer)
    return False, _is_maths(parsed_answer)
