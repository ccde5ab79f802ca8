"""Maths equivalence through math-verify and sympy: the part that can hang, run only in workers.

:mod:`referee.verifiers.math.pipeline` calls these functions through a
:class:`~referee.verifiers.deadline_pool.DeadlinePool`, whose deadline replaces math-verify's
own ``signal.alarm`` timeouts (switched off here: ``parsing_timeout=None``,
``timeout_seconds=None``). Every function takes and returns plain data: parsed sympy objects
never leave the worker, and nothing here stringifies them.

Answers are parsed as ``\\boxed{answer}``, so bare LaTeX (``\\frac{1}{2}``, ``x+1``, ``50\\%``)
reads as well as a boxed one. Parsed golds are cached: a GRPO group shares one gold.

The worker template calls :func:`prepare` once (faster LaTeX parsing, see there), then
advances :func:`warm_up_steps` while it has nothing else to do.
"""

from __future__ import annotations

import cmath
import functools
import importlib
import logging
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from antlr4.atn.PredictionMode import PredictionMode
from antlr4.error.ErrorStrategy import BailErrorStrategy
try:  # a private class of latex2sympy: without it (another version) parsing stays one-stage, same results
    from latex2sympy2_extended.latex2sympy2 import _Latex2Sympy
except ImportError:  # pragma: no cover - depends on the installed latex2sympy
    _Latex2Sympy = None
from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse
from math_verify import verify as math_verify
from sympy import Basic, Derivative, Expr, Float, Integral, Limit, MatrixBase, Product, Sum, Symbol, UnevaluatedExpr
from sympy.core.function import AppliedUndef

from . import antlr_closure
from .options import CompareOptions

# math-verify warns once per process that its timeouts are off: the pool enforces them.
for _name in ("math_verify", "math_verify.parser", "math_verify.grader"):
    logging.getLogger(_name).setLevel(logging.ERROR)

_EXTRACTION = (LatexExtractionConfig(boxed_match_priority=0), ExprExtractionConfig())


def _parse(text: str) -> list[Any]:
    return parse(f"\\boxed{{{text}}}", extraction_config=_EXTRACTION, parsing_timeout=None)


@lru_cache(maxsize=4096)
def _parsed_gold(text: str) -> list[Any]:
    return _parse(text)


def _is_maths(parsed: list[Any]) -> bool:
    return any(isinstance(item, (Basic, MatrixBase)) for item in parsed)


# Modules sympy imports on first use (simplify() imports the units system, about 0.2 s; some sums
# import the tensor module): imported once in the template, so that no worker pays them.
_FIRST_USE_MODULES = ("sympy.physics.units", "sympy.tensor.tensor")
# Answer shapes parsed once in the worker template: the LaTeX parser's prediction cache then
# starts warmer in every worker forked after them.
_WARM_UP_ANSWERS = (
    r"\frac{1}{2}", r"-\dfrac{3}{4}", r"2\sqrt{3}+1", r"\frac{\sqrt{3}}{2}", r"x^2+3x-4", r"(1, 2)", r"[-2, 7)",
    r"(-\infty, 3) \cup (5, \infty)", r"\{1, 2, 3\}", r"\frac{\pi}{4}", r"y = 2x + 3",
    r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", r"\text{Evelyn}", r"30^\circ", r"50\%", r"6 - 5i",
    r"\left( 3, \frac{\pi}{2} \right)", r"\log_2 8", r"\sin x", r"e^{2}", r"a_n", r"3.14", r"1,000", r"\infty",
    r"\cos^2 \theta", r"\frac{x+1}{x-1}", r"2^{10}", r"|x|", r"\binom{5}{2}", r"5!",
    # Shapes of competition answers (lists of tuples, functions, floors, logs, unions, bounds)
    r"(1, 2), (3, -4)", r"f(x) = 2x + 1", r"\left\lfloor \frac{n}{2} \right\rfloor", r"\log_{10} 2", r"\ln 3",
    r"(-\infty, -2) \cup (3, \infty)", r"k \geq 2", r"\frac{n(n+1)}{2}", r"2^{k-1}", r"\binom{n}{k}", r"n!",
    r"\sqrt[3]{2}", r"\text{No solution}", r"a_n = 2^n", r"\pm 1", r"\angle ABC = 90^\circ", r"\frac{\pi}{6} + k\pi",
    r"10^{3}, 10", r"x = 1, y = 2", r"3 n",
)


def warm_up_steps() -> Iterator[None]:
    """Import what sympy imports on first use, then parse and compare a spread of answer shapes,
    one per step (the worker template runs a step while no worker is asked of it or busy, so a
    worker never waits for the whole warm-up).

    Example:
        >>> sum(1 for _ in warm_up_steps()) == len(_FIRST_USE_MODULES) + len(_WARM_UP_ANSWERS)
        True
    """
    for module in _FIRST_USE_MODULES:
        importlib.import_module(module)
        yield
    for answer in _WARM_UP_ANSWERS:
        equivalent(answer, answer + "+1", CompareOptions())
        yield
    _parsed_gold.cache_clear()


def _two_stage(create_parser: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    """``create_parser`` whose parsers predict with ANTLR's SLL mode first and fall back to full LL.

    ANTLR guarantees that SLL either returns the tree LL would return or reports a syntax error;
    latex2sympy's parsers raise on any syntax error, so an SLL failure is parsed again with LL
    from scratch: the result (tree or error) is always LL's. SLL skips LL's full-context
    prediction, which the parser's DFA never caches and which is most of a parse's time. The
    SLL stage stops at its first error without describing it (ANTLR's bail strategy, no
    listener): the LL stage describes it as latex2sympy always has.
    """
    @functools.wraps(create_parser)
    def create(converter: Any, latex: str) -> Any:
        parser = create_parser(converter, latex)
        parser._interp.predictionMode = PredictionMode.SLL
        parser.removeErrorListeners()
        parser._errHandler = BailErrorStrategy()
        sll_math = parser.math

        def math() -> Any:
            try:
                return sll_math()
            except Exception:  # a syntax error under SLL (or in the lexer): LL decides, from a fresh parser
                return create_parser(converter, latex).math()

        parser.math = math
        return parser

    create.two_stage = True  # type: ignore[attr-defined]
    return create


def prepare() -> None:
    """Switch latex2sympy to two-stage parsing in this process, and ANTLR to its faster closure walk
    (:mod:`~referee.verifiers.math.antlr_closure`); the worker template calls it once.

    Both change how long a parse takes, not what it returns (short of Python's recursion limit,
    which the faster walk reaches about one nesting level later).

    Example:
        >>> prepare(); prepare()  # idempotent
        >>> _Latex2Sympy.create_parser.two_stage
        True
    """
    antlr_closure.install()
    create_parser = getattr(_Latex2Sympy, "create_parser", None)
    if create_parser is not None and not getattr(create_parser, "two_stage", False):
        _Latex2Sympy.create_parser = _two_stage(create_parser)  # type: ignore[method-assign,union-attr]


@lru_cache(maxsize=4096)
def gold_problem(gold: str) -> str | None:
    """Why the gold answer text cannot be used, or ``None`` when sympy reads it.

    The gold is also evaluated numerically once, so that a gold whose evaluation hangs (a power
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
    _values(parsed)
    return None


def _values(parsed: list[Any]) -> list[complex]:
    """The numeric values of the closed-form numbers among ``parsed`` (percentages left out)."""
    values = []
    for item in parsed:
        if isinstance(item, Expr) and item.is_number and not item.has(UnevaluatedExpr):
            try:
                values.append(complex(item.evalf(30, strict=True)))
            except (TypeError, ValueError, ArithmeticError):
                continue
    return values


def _one_number(parsed: list[Any], values: list[complex]) -> bool:
    return len(values) == 1 and sum(isinstance(item, (Basic, MatrixBase)) for item in parsed) == 1


def _within(gold: list[complex], answer: list[complex], tolerance: float, relative: float) -> bool:
    return any(abs(a - g) <= max(tolerance, relative * max(abs(a), abs(g))) for g in gold for a in answer)


# Where two expressions in variables are compared: every variable gets a value in [1, 2), in two
# spreads of transcendental steps (e - 2, pi - 3), so that no variable sits on a root of a
# polynomial with integer coefficients (the golden ratio would: n^2 - n - 1), and values far
# apart there prove the expressions different as functions.
_POINT_STEPS = (0.7182818284590452, 0.14159265358979312)
_FAR_APART = 1e-6  # relative: far beyond float error at 15 digits, below any rounding math-verify applies to numbers
_UNEVALUATED = (AppliedUndef, UnevaluatedExpr, Sum, Product, Integral, Limit, Derivative)


def _comparable_expression(parsed: list[Any]) -> Expr | None:
    """The one sympy expression among ``parsed`` when it evaluates at a point.

    Not an equation, set, tuple, matrix or lone symbol (math-verify compares those its own ways),
    nor anything with an undefined function, a percentage or an unevaluated sum, integral, limit
    or derivative.
    """
    maths = [item for item in parsed if isinstance(item, (Basic, MatrixBase))]
    if len(maths) != 1 or not isinstance(maths[0], Expr) or isinstance(maths[0], Symbol) or maths[0].has(*_UNEVALUATED):
        return None
    return maths[0]


def _differ_as_functions(parsed_gold: list[Any], parsed_answer: list[Any]) -> bool:
    """Whether the gold and the answer, expressions at least one of which has variables, take values far
    apart at two points.

    Expressions equal as functions agree at every point where both are defined, and math-verify
    (strict) finds two such expressions equal only when they are the same expression or when
    ``simplify()`` takes their difference to zero: far-apart values at a point rule out both.
    Anything else (a value that does not evaluate, a point where either is undefined, values
    close together) leaves the comparison to math-verify; two numbers are compared before this.

    Example:
        >>> _differ_as_functions(_parse("3 n"), _parse("3(n-1)n^2")), _differ_as_functions(_parse("x+1"), _parse("1+x"))
        (True, False)
        >>> _differ_as_functions(_parse(r"\\frac{x^2-1}{x-1}"), _parse("x+1")), _differ_as_functions(_parse("f(x)"), _parse("x"))
        (False, False)
    """
    gold_expr, answer_expr = _comparable_expression(parsed_gold), _comparable_expression(parsed_answer)
    if gold_expr is None or answer_expr is None:
        return False
    variables = sorted(gold_expr.free_symbols | answer_expr.free_symbols, key=str)
    if not variables:
        return False
    for step in _POINT_STEPS:
        point = {variable: Float(1.0 + (k * step) % 1.0, 20) for k, variable in enumerate(variables, start=1)}
        try:
            gold_value = complex(gold_expr.evalf(15, subs=point, strict=True))
            answer_value = complex(answer_expr.evalf(15, subs=point, strict=True))
        except Exception:  # sympy cannot evaluate it there (any error): math-verify decides
            return False
        if not (cmath.isfinite(gold_value) and cmath.isfinite(answer_value)) or \
                abs(gold_value - answer_value) <= _FAR_APART * max(1.0, abs(gold_value), abs(answer_value)):
            return False
    return True


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
    gold_values, answer_values = _values(parsed_gold), _values(parsed_answer)
    if _one_number(parsed_gold, gold_values) and _one_number(parsed_answer, answer_values):
        rounding = 10.0 ** -options.float_rounding
        if not _within(gold_values, answer_values, rounding + options.abs_tol, rounding + options.rel_tol):
            return False, True  # two closed-form numbers far apart: simplify() cannot make them equal
    elif options.strict and _differ_as_functions(parsed_gold, parsed_answer):
        return False, True
    if math_verify(parsed_gold, parsed_answer, float_rounding=options.float_rounding, strict=options.strict,
                   timeout_seconds=None):
        return True, _is_maths(parsed_answer)
    tolerant = (options.abs_tol or options.rel_tol) and _within(gold_values, answer_values, options.abs_tol, options.rel_tol)
    return bool(tolerant), _is_maths(parsed_answer)


def judge(gold: str, answer: str | None, options: CompareOptions) -> tuple[str | None, tuple[bool, bool] | None]:
    """``(gold_problem(gold), equivalent(gold, answer, options))``; no comparison for a bad gold or no answer.

    Example:
        >>> judge(r"\\sqrt{8}", r"2\\sqrt{2}", CompareOptions()), judge(r"\\frac{", "1", CompareOptions())
        ((None, (True, True)), ('gold does not parse as maths', None))
    """
    problem = gold_problem(gold)
    if problem is not None or answer is None:
        return problem, None
    return None, equivalent(gold, answer, options)
