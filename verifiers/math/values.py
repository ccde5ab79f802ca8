"""Values of simple closed-form LaTeX (numbers, fractions, roots, pi, i, + - x /, bounded powers,
factorials, binomials, logarithms, infinity) without sympy.

A strict little grammar, evaluated in time linear in the text: integers and their rational steps
exactly (so ``21! + 1 - 21!`` is 1, not 0), the rest with floats (decimals too, as latex2sympy
reads them; a float sum whose digits cancel is outside the grammar). Powers, factorials and
binomials are bounded, so nothing can blow up. It serves three fast paths of the maths verifier:

* a gold inside the grammar, or a list, tuple or interval of such values, certainly parses as
  maths, so it needs no sympy check before the other fast paths may judge against it;
* two closed forms whose values are far apart (``2\\sqrt{5}`` against ``6``) cannot be equal for
  math-verify either, so they are ``wrong`` without sympy;
* two closed forms of rational steps only (``4^{2006}``, ``\\frac{3-3^{-999}}{4}``) have exact values
  (:func:`rational_value`, within more bits), so they are equal or not however large or close.
  Otherwise equality is never decided here.

Anything else (symbols, ``e``, other functions, percent) is outside the grammar: ``None``. ``i`` is the
imaginary unit (math-verify reads it as that or as a symbol: either way ``1+2i`` is not ``12``).
Each construct reads as latex2sympy reads it: ``n!`` of a literal ``n`` (``2^3!`` is ``(2^3)!``
there, so it is left out); ``\\log`` is base 10, ``\\ln`` base e, and a logarithm's argument
without parentheses runs on over products (``\\log_2 8 \\cdot 3`` is ``\\log_2 24``), so one is
read only where a sum, a bracket or the end follows it.
"""

from __future__ import annotations

import cmath
import math
import re
import string
from fractions import Fraction
from functools import lru_cache

from ..text.latex import top_level_parts
from .exact import canonical, may_end_in_unit
from .options import CompareOptions

_TOKEN_RE = re.compile(r"\\(?:[dt]?binom|log|ln)(?![A-Za-z])|\\(?:frac|sqrt|pi|infty|cdot|times|div|\{|\})"
                       r"|[0-9]+(?:\.[0-9]+)?|\.[0-9]+|[-+*/^(){}\[\],!_A-Za-z]")
# Where expressions in variables are compared: every letter but e and i gets a fixed value in
# [1, 2) (golden-ratio steps), so two expressions equal as functions agree here. R and r share
# a value: latex2sympy reads them as one symbol.
_POINT = {letter: 1.0 + (k * 0.6180339887498949) % 1.0
          for k, letter in enumerate(string.ascii_lowercase, start=1) if letter not in "ei"}
_FUNCTION_NAMES = frozenset("fghFGHPpq")  # f(x) may be a function; n(n+1) is a product for latex2sympy
_SPACED_DIGITS_RE = re.compile(r"[0-9.}](?:\s|\\[,;:! ])+[0-9.]")
_LOG_BASE_RE = re.compile(r"(\\log\s*_\s*(?:\{[^{}]*\}|[0-9]))\s+")  # the space in \log_{10} 250 parts no digits
_STARTS_FACTOR = ("\\frac", "\\sqrt", "\\pi", "i", "(", "{", "\\binom", "\\dbinom", "\\tbinom", "\\log", "\\ln")
_INFINITY_RE = re.compile(r"[-+]?\\infty")
_ENDS_LOG_ARGUMENT = (None, "+", "-", ")", "}", "]")  # what may follow an argument written without parentheses
_MAX_EXPONENT = 64.0  # of an inexact base; an exact one may go as far as _MAX_BITS allows (2^{625})
_MAX_BITS = 4096  # of an exact value's numerator and denominator: every exact step stays cheap
_MAX_EXACT_BITS = 16384  # the same, where only the exact value is wanted (4^{2006}, 2\cdot 3^{2008}): still cheap
_MAX_FACTORIAL = 170  # 171! is over _MAX_MAGNITUDE
_MAX_BINOMIAL = 1000  # \binom{1000}{500} is under it
_MAX_MAGNITUDE = 1e300
_CANCELLED = 1e-4  # a float sum this much smaller than its terms has lost the digits a comparison needs
_MAX_ELEMENTS = 64  # of a list whose elements are compared pairwise
_COMMA_NUMBER_RE = re.compile(r"-?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?")  # latex2sympy's thousands separators


class _Unsupported(Exception):
    """The text is outside the grammar."""


Value = Fraction | float | complex  # exact while only rational steps made it


def _real(value: Value) -> Fraction | float:
    if isinstance(value, complex):
        if value.imag != 0:
            raise _Unsupported
        return value.real
    return value


def _log2_size(value: Fraction) -> float:
    """log2 of the larger of ``value``'s numerator and denominator: the bits each power of it adds."""
    largest = max(abs(value.numerator), value.denominator)
    return math.log2(largest) if largest > 1 else 0.0


class _Parser:
    """Recursive descent: expression := term (+|- term)*, term := signed (*|/ signed)*, product := power+."""

    def __init__(self, tokens: list[str], variables: bool, exact: bool = False) -> None:
        self.tokens = tokens
        self.variables = variables
        self.exact = exact  # only the exact value is wanted: rational values may pass any magnitude, within more bits
        self.max_bits = _MAX_EXACT_BITS if exact else _MAX_BITS
        self.at = 0

    def checked(self, value: Value) -> Value:
        """``value``, unless it is over the bounds that keep every step cheap (then outside the grammar)."""
        if isinstance(value, Fraction):
            if max(value.numerator.bit_length(), value.denominator.bit_length()) > self.max_bits:
                raise _Unsupported
            if self.exact:
                return value
        elif not cmath.isfinite(value):
            raise _Unsupported
        if abs(value) > _MAX_MAGNITUDE:
            raise _Unsupported
        return value

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise _Unsupported
        self.at += 1
        return token

    def expression(self) -> Value:
        value = self.term()
        while self.peek() in ("+", "-"):
            adding, following = self.take() == "+", self.term()
            total = value + following if adding else value - following
            if not isinstance(total, Fraction) and abs(total) < _CANCELLED * max(abs(value), abs(following)):
                raise _Unsupported  # float digits cancelled (\pi + 20! - 20!): what is left is rounding noise
            value = self.checked(total)
        return self.checked(value)

    def term(self) -> Value:
        value = self.signed()
        while self.peek() in ("*", "\\cdot", "\\times", "/", "\\div"):
            if self.take() in ("/", "\\div"):
                divisor = self.signed()
                if divisor == 0:
                    raise _Unsupported
                value = self.checked(value / divisor)
            else:
                value = self.checked(value * self.signed())
        return self.checked(value)

    def signed(self) -> Value:
        if self.peek() in ("-", "+"):
            return -self.signed() if self.take() == "-" else self.signed()
        return self.product()

    def product(self) -> Value:
        """Juxtaposition binds tighter than ``/``: ``1/2\\pi`` is ``1/(2 pi)``."""
        value = factor = self.power()
        while (token := self.peek()) is not None and (token[0].isdigit() or token[0] == "." or token in _STARTS_FACTOR
                                                      or token.isalpha()):
            if token[0].isdigit() or token[0] == "." or token == "\\frac" and self.tokens[self.at - 1].isdigit():
                # \\frac{3}{4}17 and 2\\frac{3}{4} (a mixed number) read otherwise in latex2sympy
                raise _Unsupported
            previous, factor = factor, self.power()
            if isinstance(previous, Fraction) and isinstance(factor, Fraction):
                raise _Unsupported  # latex2sympy may add them as a mixed number: 2(3) is 5, \\binom{5}{2}\\binom{4}{2} 16
            value = self.checked(value * factor)
        return self.checked(value)

    def power(self) -> Value:
        start = self.at
        base = self.atom()
        if self.peek() == "!":
            return self.factorial(start)
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
        if base == 0 and exponent < 0:
            raise _Unsupported
        if isinstance(base, Fraction) and isinstance(exponent, Fraction) and exponent.denominator == 1:
            # exact: bounded by the bits of the result, counted before it is built
            if abs(exponent) * _log2_size(base) > self.max_bits:
                raise _Unsupported
            return self.checked(base ** int(exponent))
        if abs(exponent) > _MAX_EXPONENT:
            raise _Unsupported
        if exponent == int(exponent):
            return self.checked(base ** int(exponent))
        real_base = _real(base)
        if real_base < 0:
            raise _Unsupported
        return self.checked(real_base ** exponent)

    def factorial(self, start: int) -> Fraction:
        """``n!`` of a literal ``n`` only: latex2sympy reads ``2^3!`` as ``(2^3)!`` and ``3!^2`` not at all."""
        literal = self.tokens[start]
        self.take("!")
        if self.at != start + 2 or not literal.isdigit() or int(literal) > _MAX_FACTORIAL or self.peek() in ("!", "^"):
            raise _Unsupported
        return Fraction(math.factorial(int(literal)))

    def atom(self) -> Value:
        token = self.peek()
        if token == "\\frac":
            self.take()
            numerator, denominator = self.group(), self.group()
            if denominator == 0:
                raise _Unsupported
            return self.checked(numerator / denominator)
        if token == "\\sqrt":
            self.take()
            degree: Fraction | float = 2
            if self.peek() == "[":
                self.take()
                degree = _real(self.expression())
                self.take("]")
            radicand = _real(self.group())
            if radicand < 0 or degree <= 0:
                raise _Unsupported
            return radicand ** (1 / degree)
        if token in ("\\binom", "\\dbinom", "\\tbinom"):
            self.take()
            n, k = self.braced_literal(), self.braced_literal()
            if n > _MAX_BINOMIAL:
                raise _Unsupported
            return Fraction(math.comb(n, k))
        if token in ("\\log", "\\ln"):
            return self.logarithm()
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

    def braced_literal(self) -> int:
        self.take("{")
        literal = self.take()
        self.take("}")
        if not literal.isdigit() or len(literal) > 4:
            raise _Unsupported
        return int(literal)

    def logarithm(self) -> float:
        """``\\log_{b} a``, ``\\log_2 8``, ``\\log a`` (base 10) or ``\\ln a`` of closed forms, as latex2sympy reads them."""
        variables, self.variables = self.variables, False  # \\ln x: logarithms of constants only
        base: Fraction | float = math.e if self.take() == "\\ln" else Fraction(10)
        if base == 10 and self.peek() == "_":
            self.take()
            if self.peek() == "{":
                base = _real(self.group())
                if "\\frac" in self.tokens[:self.at] and (self.peek() or "x")[0].isdigit():
                    raise _Unsupported  # math-verify rewrites \\frac{1}{2}\\log_{10} 250 to \\frac{1}{2}\\log_{10}{2}50
            else:  # \\log_2 8 reads \\log_28 once spaces are gone: a subscript is one digit
                digits = self.take()
                if not digits.isdigit():
                    raise _Unsupported
                base = Fraction(int(digits[0]))
                if len(digits) > 1:
                    self.at -= 1
                    self.tokens[self.at] = digits[1:]
        if self.peek() == "(":
            argument = _real(self.group())
        elif self.peek() in ("{", "\\frac", "\\sqrt") or (self.peek() or "x")[0].isdigit():
            argument = _real(self.atom())
            if self.peek() not in _ENDS_LOG_ARGUMENT:
                raise _Unsupported
        else:
            raise _Unsupported
        self.variables = variables
        # ln of a value next to 1 would lose its digits in floats
        if argument <= 0 or base <= 0 or base == 1 or any(0 < abs(x - 1) < 1e-6 for x in (argument, base)):
            raise _Unsupported
        return math.log(argument) / math.log(base)

    def group(self) -> Value:
        closer = {"(": ")", "{": "}"}.get(self.take())
        if closer is None:
            raise _Unsupported
        value = self.expression()
        self.take(closer)
        return value

    def number(self) -> Fraction | float:
        """An integer exactly; a decimal as the float latex2sympy reads it (``0.5 + 20! - 20!`` is 0 there)."""
        token = self.take()
        if not (token[0].isdigit() or token[0] == "."):
            raise _Unsupported
        return float(token) if "." in token else Fraction(token)


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
        >>> closed_form_value(r"\\frac{1}{\\binom{39}{36}}") == 1 / 9139, closed_form_value("21! + 1 - 21!"), closed_form_value(r"-\\infty")
        (True, 1.0, -inf)
        >>> round(closed_form_value(r"-\\log _{10} 250"), 6), closed_form_value(r"\\log_2 8 + 1"), closed_form_value("2^{625}") > 1e188
        (-2.39794, 4.0, True)
        >>> [closed_form_value(t) for t in ("x + 1", "e^2", r"2^{2^{100}}", "(1, 2)", r"\\frac{1}{0}", r"2\\frac{3}{4}")]
        [None, None, None, None, None, None]
        >>> [closed_form_value(t) for t in ("171!", "2^3!", r"\\log_2 8 \\cdot 3", r"\\ln x", r"\\lg 100")]
        [None, None, None, None, None]
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


@lru_cache(maxsize=4096)  # an answer and its gold are asked for again by the next checks
def rational_value(text: str) -> Fraction | None:
    """The exact value of a closed form reached by rational steps only (``+ - \\times /``, integer
    powers, factorials, binomials), else ``None``: what two such forms are decided on exactly,
    however close their values (``\\frac{3-3^{-999}}{4}`` is not ``\\frac34``).

    Numerators and denominators stay within ``_MAX_EXACT_BITS`` bits, counted before each power is
    built, so ``10^{10^{10}}`` is ``None`` at once.

    Example:
        >>> rational_value("4^{2006}") == rational_value("2^{4012}"), rational_value(r"6\\times3^{2007}") == 2 * 3 ** 2008
        (True, True)
        >>> rational_value(r"\\frac{3-3^{-999}}{4}") == Fraction(3, 4), rational_value(r"\\frac{1}{2} + \\frac{1}{4}")
        (False, Fraction(3, 4))
        >>> [rational_value(t) for t in (r"\\sqrt{4}", r"\\pi", "x", "0.5", "10^{10^{10}}", "2^{-20000}")]
        [None, None, None, None, None, None]
    """
    value = _parsed(text, variables=False, exact=True)
    return value if isinstance(value, Fraction) else None


def _parsed(text: str, *, variables: bool, exact: bool = False) -> Value | None:
    """``text`` read by the grammar (see :class:`_Parser`), else ``None``."""
    if _SPACED_DIGITS_RE.search(_LOG_BASE_RE.sub(r"\1", text)):
        return None  # "17 3" and "1\\,000": latex2sympy's reading is not a product
    try:
        parser = _Parser(_tokens(canonical(text)), variables, exact)
        value = parser.expression()
    except (_Unsupported, OverflowError, ZeroDivisionError, ValueError, RecursionError):  # (((...))) too deep
        return None
    return value if parser.peek() is None else None


def _evaluate(text: str, *, variables: bool, units_matter: bool = True) -> complex | None:
    if variables and units_matter and (may_end_in_unit(text) or may_end_in_unit(canonical(text))):
        return None  # "5 m": math-verify may drop the word as a unit
    if _INFINITY_RE.fullmatch(canonical(text)):
        return -math.inf if canonical(text).startswith("-") else math.inf
    value = _parsed(text, variables=variables)
    try:
        value = None if value is None else complex(value)
    except OverflowError:
        return None
    return None if value is None else value.real if value.imag == 0 else value


def ordered_values(text: str) -> list[complex] | None:
    """The values of a tuple or interval of simple closed forms, in order; ``None`` for anything else.

    Only shapes latex2sympy reads as that many values in that order: not an interval that is
    empty or one point (``(3, 1]``, ``[1, 1]``), nor three values in mixed brackets.

    Example:
        >>> ordered_values(r"\\left( 3, \\frac{1}{2} \\right)"), ordered_values(r"(-\\infty, 2]")
        ([3.0, 0.5], [-inf, 2.0])
        >>> ordered_values(r"\\{1, 2\\}") is None, ordered_values("1, 2") is None, ordered_values("(3, 1]") is None
        (True, True, True)
    """
    text = canonical(text)
    if not (text.startswith(("(", "[")) and text.endswith((")", "]"))):
        return None
    values = [closed_form_value(item) for item in top_level_parts(text[1:-1])]
    if len(values) < 2 or None in values:
        return None
    brackets = text[0] + text[-1]
    if brackets == "()":
        return values  # type: ignore[return-value]
    if len(values) == 2 and not any(isinstance(value, complex) for value in values) and far_apart(
            values[0], values[1], CompareOptions()) and (brackets == "[]" or values[0] < values[1]):  # type: ignore[operator]
        return values  # type: ignore[return-value]
    return values if len(values) > 2 and brackets == "[]" else None  # type: ignore[return-value]


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


def element_shape(text: str) -> tuple[int, frozenset[int]] | None:
    """How many elements math-verify compares in a closed form or a list, set, tuple or interval of
    them (lists and sets may hold tuples), and what they are (0: a number, n: an n-tuple); else ``None``.

    math-verify compares two collections element by element, only where their counts agree; one
    number is a one-element set, a single tuple counts its entries (``1,2,3`` equals ``(1, 2, 3)``),
    and a tuple never equals a number. A list or set counts distinct elements: all must be far
    apart. ``1,000`` is one number for latex2sympy, so such text is left out.

    Example:
        >>> element_shape("-2,0,2"), element_shape(r"\\left\\{ 1 \\right\\}"), element_shape("(12, 20, 28)")
        ((3, frozenset({0})), (1, frozenset({0})), (3, frozenset({0})))
        >>> element_shape("(3,0),(-3,1)"), element_shape(r"\\frac{1}{2}")
        ((2, frozenset({2})), (1, frozenset({0})))
        >>> [element_shape(t) for t in ("1,1", "1,000", "[2, 2]", "(1, x)", r"\\{(1,2), (1,2)\\}")]
        [None, None, None, None, None]
    """
    text = canonical(text)
    if _COMMA_NUMBER_RE.fullmatch(text):
        return None
    if text.startswith("\\{") and text.endswith("\\}"):
        items = top_level_parts(text[2:-2])
    else:
        entries = ordered_values(text)
        if entries is not None:
            return len(entries), frozenset({0})
        items = top_level_parts(text)
    if len(items) > _MAX_ELEMENTS:
        return None
    elements = []
    for item in items:
        value = closed_form_value(item)
        entries = [value] if value is not None else ordered_values(item)
        if entries is None:
            return None
        elements.append(entries)
    for at, element in enumerate(elements):  # distinct: another length, or an entry far apart
        if any(len(other) == len(element) and not any(far_apart(a, b, CompareOptions()) for a, b in zip(element, other))
               for other in elements[:at]):
            return None
    return len(elements), frozenset(len(element) if len(element) > 1 else 0 for element in elements)


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
