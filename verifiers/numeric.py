"""Reading numbers the way people and models write them, as exact fractions.

One place for number normalisation: thousands separators, currency, percent, signs (ASCII
and Unicode minus), decimals, plain and LaTeX fractions. Values are `fractions.Fraction`
so ``18 == 18.0 == 18.00`` holds exactly and ``0.1 + 0.2 == 0.3`` does too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterator

# A sign counts only when it is not glued to something before it: "16-3" is 16 and 3,
# while "x = -3" and "(-3)" hold -3.
_NUMBER_RE = re.compile(
    r"""
    (?<![\w.)\]}])
    (?P<sign>[-\u2212\u2013+](?=\s?\\?\$?\s?[0-9.]|\\d?frac))?
    \s?(?:\\\$|\$)?\s?
    (?:
        \\[dt]?frac\{\s*(?P<fnum>[0-9]{1,50})\s*\}\{\s*(?P<fden>[0-9]{1,50})\s*\}
      | (?P<num>[0-9]{1,50})\s?/\s?(?P<den>[0-9]{1,50})(?![0-9.,/])
      | (?P<body>
            [0-9]{1,3}(?:,[0-9]{3})+(?![0-9])(?:\.[0-9]+)?
          | [0-9]+(?:\.[0-9]+)?
          | \.[0-9]+
        )
    )
    (?P<percent>\s?\\?%)?
    """,
    re.VERBOSE,
)

_MAX_DIGITS = 1000  # int() refuses more than 4300 digits; no real answer has this many


@dataclass(frozen=True)
class NumberMatch:
    """A number found in text: its exact value, the text it was read from, and where."""

    value: Fraction
    text: str
    start: int
    end: int
    percent: bool


def _value(match: re.Match[str]) -> Fraction | None:
    groups = match.groupdict()
    if groups["fnum"] is not None:
        numerator, denominator = groups["fnum"], groups["fden"]
    elif groups["num"] is not None:
        numerator, denominator = groups["num"], groups["den"]
    else:
        body = groups["body"].replace(",", "")
        if len(body) > _MAX_DIGITS:
            return None
        value = Fraction(body)
        return -value if groups["sign"] in ("-", "\u2212", "\u2013") else value
    if int(denominator) == 0:
        return None
    value = Fraction(int(numerator), int(denominator))
    return -value if groups["sign"] in ("-", "\u2212", "\u2013") else value


def iter_numbers(text: str) -> Iterator[NumberMatch]:
    """Every number in ``text``, left to right.

    Example:
        >>> [str(m.value) for m in iter_numbers("She pays $1,234.50 for 3/4 of it, -2 left")]
        ['2469/2', '3/4', '-2']
    """
    for match in _NUMBER_RE.finditer(text):
        value = _value(match)
        if value is not None:
            yield NumberMatch(value, match.group(0).strip(), match.start(), match.end(),
                              match.group("percent") is not None)


def first_number(text: str) -> NumberMatch | None:
    """The first number in ``text``, or ``None``.

    Example:
        >>> first_number("about $18.00 a day").value
        Fraction(18, 1)
    """
    return next(iter_numbers(text), None)


def last_number(text: str) -> NumberMatch | None:
    """The last number in ``text``, or ``None``.

    Example:
        >>> last_number("16 - 3 - 4 = 9, and 9 * 2 = 18 dollars").value
        Fraction(18, 1)
    """
    last = None
    for last in iter_numbers(text):
        pass
    return last


def parse_number(text: str) -> Fraction | None:
    """Read ``text`` as one number (currency, commas, percent and unit words allowed), or ``None``.

    Text that holds no number, or more than one, is ``None``.

    Example:
        >>> parse_number("$1,000.00"), parse_number("50%"), parse_number("18 dollars")
        (Fraction(1000, 1), Fraction(50, 1), Fraction(18, 1))
        >>> parse_number("3 or 4") is None, parse_number("abc") is None
        (True, True)
    """
    found = iter_numbers(text)
    only = next(found, None)
    if only is None or next(found, None) is not None:
        return None
    return only.value


def format_number(value: Fraction) -> str:
    """A canonical text for an exact value: integers plain, terminating decimals as decimals.

    Example:
        >>> format_number(Fraction(18)), format_number(Fraction(5, 2)), format_number(Fraction(1, 3))
        ('18', '2.5', '1/3')
    """
    if value.denominator == 1:
        return str(value.numerator)
    denominator = value.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    if denominator != 1:
        return f"{value.numerator}/{value.denominator}"
    digits = 0
    scaled = value
    while scaled.denominator != 1:
        scaled *= 10
        digits += 1
    text = f"{abs(scaled.numerator):0{digits + 1}d}"
    sign = "-" if value < 0 else ""
    return f"{sign}{text[:-digits]}.{text[-digits:]}"
