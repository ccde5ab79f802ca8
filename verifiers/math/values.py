"""Values of simple closed-form LaTeX (numbers, fractions, roots, pi, i, + - x /, small powers) without sympy.

A strict little grammar, evaluated with floats in time linear in the text (powers are bounded,
so nothing can blow up). It serves two fast paths of the maths verifier:

* a gold inside the grammar, or a list, tuple or interval of such values, certainly parses as
  maths, so it needs no sympy check before the other fast paths may judge against it;
* two closed forms whose values are far apart (``2\\sqrt{5}`` against ``6``) cannot be equal for
  math-verify either, so they are ``wrong`` without sympy. Equality is never decided here.

Anything else (symbols, ``e``, functions, percent) is outside the grammar: ``None``. ``i`` is the
imaginary unit (math-verify reads it as that or as a symbol: either way ``1+2i`` is not ``12``).
"""

from __future__ import annotations

import cmath
import math
import re
import string

from ..text.latex import top_level_parts
from .exact import canonical, may_end_in_unit
from .options import CompareOptions

_TOKEN_RE = re.compile(r"\\(?:frac|sqrt|pi|infty|cdot|times|div|\{|\})|[0-9]+(?:\.[0-9]+)?|\.[0-9]+|[-+*/^(){}\[\],A-Za-z]")
# Where expressions in variables are compared: every letter but e and i gets a fixed value in
# [1, 2) (golden-ratio steps), so two expressions equal as functions agree here. R and r share
# a value: latex2sympy reads them as one symbol.
_POINT = {letter: 1.0 + (k * 0.6180339887498949) % 1.0
          for k, letter in enumerate(string.ascii_lowercase, start=1) if letter not in "ei"}
_FUNCTION_NAMES = frozenset("fghFGHPpq")  # f(x) may be a function; n(n+1) is a product for latex2sympy
_SPACED_DIGITS_RE = re.compile(r"[0-9.}](?:\s|\\[,;:! ])+[0-9.]")
_STARTS_FACTOR = ("\\frac", "\\sqrt", "\\pi", "i", "(", "{")
_MAX_EXPONENT = 64.0
_MAX_MAGNITUDE = 1e300


class _Unsupported(Exception):
    """The text is outside the grammar."""


def _checked(value: complex) -> complex:
    if not cmath.isfinite(value) or abs(value) > _MAX_MAGNITUDE:
        raise _Unsupported
    return value


def _real(value: complex) -> float:
    if isinstance(value, complex):
        if value.imag != 0:
            raise _Unsupported
        return value.real
    return value


class _Parser:
    """Recursive descent: expression := term (+|- term)*, term := signed (*|/ signed)*, product := power+."""

    def __init__(self, tokens: list[str], variables: bool) -> None:
        self.tokens = tokens
        self.variables = variables
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise _Unsupported
        self.at += 1
        return token

    def expression(self) -> complex:
        value = self.term()
        while self.peek() in ("+", "-"):
            value = value + self.term() if self.take() == "+" else value - self.term()
        return _checked(value)

    def term(self) -> complex:
        value = self.signed()
        while self.peek() in ("*", "\\cdot", "\\times", "/", "\\div"):
            if self.take() in ("/", "\\div"):
                divisor = self.signed()
                if divisor == 0:
                    raise _Unsupported
                value /= divisor
            else:
                value *= self.signed()
        return _checked(value)

    def signed(self) -> complex:
        if self.peek() in ("-", "+"):
            return -self.signed() if self.take() == "-" else self.signed()
        return self.product()

    def product(self) -> complex:
        """Juxtaposition binds tighter than ``/``: ``1/2\\pi`` is ``1/(2 pi)``."""
        value = self.power()
        while (token := self.peek()) is not None and (token[0].isdigit() or token[0] == "." or token in _STARTS_FACTOR
                                                      or token.isalpha()):
            if token[0].isdigit() or token[0] == "." or token == "\\frac" and self.tokens[self.at - 1].isdigit():
                # \\frac{3}{4}17 and 2\\frac{3}{4} (a mixed number) read otherwise in latex2sympy
                raise _Unsupported
            value *= self.power()
        return _checked(value)

    def power(self) -> complex:
        base = self.atom()
        if self.peek() != "^":
            return base
        self.take()
        following = self.peek()
        if following == "{":
            exponent = _real(self.group())
        elif following is not None and following.isalpha() and len(following) == 1 and self.variables:
            exponent = _real(self.atom())  # 2^k
        else:
            exponent = _real(self.number())
        if abs(exponent) > _MAX_EXPONENT or (base == 0 and exponent < 0):
            raise _Unsupported
        if exponent == int(exponent):
            return _checked(base ** int(exponent))
        real_base = _real(base)
        if real_base < 0:
            raise _Unsupported
        return _checked(real_base ** exponent)

    def atom(self) -> complex:
        token = self.peek()
        if token == "\\frac":
            self.take()
            numerator, denominator = self.group(), self.group()
            if denominator == 0:
                raise _Unsupported
            return _checked(numerator / denominator)
        if token == "\\sqrt":
            self.take()
            degree = 2.0
            if self.peek() == "[":
                self.take()
                degree = _real(self.expression())
                self.take("]")
            radicand = _real(self.group())
            if radicand < 0 or degree <= 0:
                raise _Unsupported
            return radicand ** (1 / degree)
        if token == "\\pi":
            self.take()
            return math.pi
        if token == "i":
            self.take()
            return 1j
        if token is not None and token.isalpha():
            self.take()
            if not self.variables or token.lower() not in _POINT or self.peek() == "(" and token in _FUNCTION_NAMES:
                raise _Unsupported  # e, a function call f(x), or variables not wanted (n(n+1) is a product)
            return _POINT[token.lower()]
        if token in ("(", "{"):
            return self.group()
        return self.number()

    def group(self) -> complex:
        closer = {"(": ")", "{": "}"}.get(self.take())
        if closer is None:
            raise _Unsupported
        value = self.expression()
        self.take(closer)
        return value

    def number(self) -> float:
        token = self.take()
        if not (token[0].isdigit() or token[0] == "."):
            raise _Unsupported
        return float(token)


def _tokens(text: str) -> list[str]:
    tokens, at = [], 0
    for match in _TOKEN_RE.finditer(text):
        if match.start() != at:
            raise _Unsupported
        tokens.append(match.group())
        at = match.end()
    if at != len(text):
        raise _Unsupported
    return tokens


def closed_form_value(text: str) -> complex | None:
    """The value of a simple closed form (a float when real), or ``None`` outside the grammar.

    Example:
        >>> round(closed_form_value(r"\\frac{2\\sqrt{5}}{3} + \\pi"), 6)
        4.632305
        >>> closed_form_value(r"2^{10} - 1"), closed_form_value(r"\\sqrt[3]{27}"), closed_form_value("6 - 5i")
        (1023.0, 3.0, (6-5j))
        >>> [closed_form_value(t) for t in ("x + 1", "e^2", r"2^{2^{100}}", "(1, 2)", r"\\frac{1}{0}", r"2\\frac{3}{4}")]
        [None, None, None, None, None, None]
    """
    return _evaluate(text, variables=False)


def value_at_point(text: str) -> complex | None:
    """The value of a simple expression in one-letter variables at a fixed point, else ``None``.

    Two expressions equal as functions have equal values here; far-apart values prove them
    different (``x^2 + 1`` against ``x^2 - 1``).

    Example:
        >>> square, expanded = value_at_point("(x+1)^2"), value_at_point("x^2 + 2x + 1")
        >>> far_apart(square, expanded, CompareOptions()), far_apart(square, value_at_point("x^2 + 1"), CompareOptions())
        (False, True)
        >>> value_at_point("f(x)") is None, value_at_point("e^x") is None, value_at_point("3 m") is None
        (True, True, True)
    """
    return _evaluate(text, variables=True)


def _evaluate(text: str, *, variables: bool, units_matter: bool = True) -> complex | None:
    if _SPACED_DIGITS_RE.search(text):
        return None  # "17 3" and "1\\,000": latex2sympy's reading is not a product
    if variables and units_matter and (may_end_in_unit(text) or may_end_in_unit(canonical(text))):
        return None  # "5 m": math-verify may drop the word as a unit
    try:
        parser = _Parser(_tokens(canonical(text)), variables)
        value = parser.expression()
        if parser.peek() is not None:
            return None
    except (_Unsupported, OverflowError, ZeroDivisionError, ValueError):
        return None
    return value.real if isinstance(value, complex) and value.imag == 0 else value


def _item_value(item: str) -> complex | None:
    if re.fullmatch(r"[-+]?\\infty", item):
        return -math.inf if item.startswith("-") else math.inf
    return closed_form_value(item)


def ordered_values(text: str) -> list[complex] | None:
    """The values of a tuple or interval of simple closed forms, in order; ``None`` for anything else.

    Example:
        >>> ordered_values(r"\\left( 3, \\frac{1}{2} \\right)"), ordered_values(r"(-\\infty, 2]")
        ([3.0, 0.5], [-inf, 2.0])
        >>> ordered_values(r"\\{1, 2\\}") is None, ordered_values("1, 2") is None
        (True, True)
    """
    text = canonical(text)
    if not (text.startswith(("(", "[")) and text.endswith((")", "]"))):
        return None
    values = [_item_value(item) for item in top_level_parts(text[1:-1])]
    return values if len(values) > 1 and None not in values else None  # type: ignore[return-value]


def unordered_values(text: str) -> list[float] | None:
    """The distinct values, sorted, of a set or bare list of simple real closed forms; else ``None``.

    Example:
        >>> unordered_values(r"\\{2, \\frac{1}{2}, 2\\}"), unordered_values("-2, 1")
        ([0.5, 2.0], [-2.0, 1.0])
        >>> unordered_values("(1, 2)") is None, unordered_values("3") is None
        (True, True)
    """
    text = canonical(text)
    if text.startswith("\\{") and text.endswith("\\}"):
        text = text[2:-2]
    elif text.startswith(("(", "[")):
        return None
    values = []
    for item in top_level_parts(text):
        value = closed_form_value(item)
        if value is None or isinstance(value, complex):
            return None
        values.append(value)
    if len(values) < 2:
        return None
    distinct: list[float] = []
    for value in sorted(values):
        if not distinct or abs(value - distinct[-1]) > 1e-9 * max(1.0, abs(value)):
            distinct.append(value)
    return distinct


def union_values(text: str) -> list[list[complex]] | None:
    """The end points of each interval of a union (``(-\\infty, 2) \\cup (3, \\infty)``), else ``None``.

    Example:
        >>> union_values(r"(-\\infty, 2) \\cup [3, 4]"), union_values("(1, 2)") is None
        ([[-inf, 2.0], [3.0, 4.0]], True)
    """
    text = canonical(text)
    if "\\cup" not in text:
        return None
    intervals = [ordered_values(part) for part in text.split("\\cup")]
    return intervals if all(interval is not None and len(interval) == 2 for interval in intervals) else None  # type: ignore[return-value]


def is_simple_maths(text: str) -> bool:
    """Whether ``text`` is a simple expression, or a list, tuple, set or interval of closed forms.

    Such text always parses as maths: a gold of this shape needs no sympy check.

    Example:
        >>> is_simple_maths(r"\\left( 3, \\frac{\\pi}{2} \\right)"), is_simple_maths(r"(-\\infty, 2]"), is_simple_maths("x^2 + 1")
        (True, True, True)
        >>> is_simple_maths(r"\\frac{1}{}"), is_simple_maths(r"\\sin x")
        (False, False)
    """
    return (value_at_point(text) is not None or ordered_values(text) is not None
            or unordered_values(text) is not None or union_values(text) is not None)


_DEFINITION_RE = re.compile(r"^(?P<name>[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?(?:\([A-Za-z]\))?)=(?!=)(?P<value>[^=<>]+)$")


def surely_parses(text: str) -> bool:
    """Whether ``text`` certainly parses as maths: simple maths, or a list, tuple or definition of it.

    A gold of such a shape needs no sympy check before the fast paths judge against it.

    Example:
        >>> [surely_parses(t) for t in ("2 n", "f(x)=x+1", "(1, 2), (3, x)", r"a=2, a=-6-4\\sqrt{2}")]
        [True, True, True, True]
        >>> surely_parses(r"\\lfloor n \\rfloor"), surely_parses("t(0,4]")
        (False, False)
    """
    if is_simple_maths(text):
        return True
    parts = top_level_parts(canonical(text))
    return all(_part_parses(part) for part in parts)


def definition(text: str) -> tuple[str, str] | None:
    """``(name, value)`` of a definition such as ``f(x) = x + 1`` or ``a_1 = 5``, else ``None``.

    Example:
        >>> definition("f(x) = x + 1"), definition("x + y = 1")
        (('f(x)', 'x+1'), None)
    """
    match = _DEFINITION_RE.match(canonical(text))
    return (match.group("name"), match.group("value")) if match else None


def _part_parses(part: str) -> bool:
    defined = definition(part)
    if defined:
        part = defined[1]
    if part.startswith("(") and part.endswith(")") and len(part) > 2:
        return all(_part_parses(item) for item in top_level_parts(part[1:-1]))
    return _evaluate(part, variables=True, units_matter=False) is not None


def far_apart(a: complex, b: complex, options: CompareOptions) -> bool:
    """Whether two values differ beyond every rounding and tolerance math-verify and ``options`` allow.

    Example:
        >>> far_apart(2 * 5 ** 0.5, 6.0, CompareOptions()), far_apart(1 / 3, 0.3333333, CompareOptions())
        (True, False)
        >>> far_apart(1 / 3, 0.33, CompareOptions(float_rounding=2)), far_apart(1 + 2j, 1 + 3j, CompareOptions())
        (False, True)
    """
    if a == b:  # equal infinities included
        return False
    if cmath.isinf(a) or cmath.isinf(b):
        return True
    scale = max(abs(a), abs(b))
    return abs(a - b) > max(10.0 ** -options.float_rounding, options.abs_tol, options.rel_tol * scale, 1e-9 * scale)
