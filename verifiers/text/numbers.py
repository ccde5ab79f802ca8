"""Reading numbers the way people and models write them, as exact rationals.

One place for number normalisation: thousands separators, currency, percent, signs (ASCII
and Unicode minus), decimals, plain and LaTeX fractions. Values are `fractions.Fraction`,
so ``18 == 18.0 == 18.00`` holds exactly and ``0.1 + 0.2 == 0.3`` does too.

With ``whole_as_int=True`` whole numbers come back as ``int`` instead (both are exact and
compare equal): verifiers that compare one number per completion use it, as ``Fraction``
construction and comparison are pure Python and several times slower. Mind that ``int / int``
is a float: divide ``Fraction(value)``.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Iterator, NamedTuple, Union

Exact = Union[int, Fraction]
"""A value read with ``whole_as_int=True``: ``int`` when whole, else ``Fraction``."""

# Body shapes: a fraction "3/4", thousands "1,234.5", plain "18", "18.00", ".5".
_FRACTION = r"[0-9]{1,50}\s?/\s?[0-9]{1,50}(?![0-9.,/])"
_PLAIN = _FRACTION + r"|[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?|\.[0-9]+"
# The same shapes once their first digit has been read.
_AFTER_FIRST_DIGIT = (
    r"[0-9]{0,49}\s?/\s?[0-9]{1,50}(?![0-9.,/])|[0-9]{0,2}(?:,[0-9]{3})+(?![0-9])(?:\.[0-9]+)?|[0-9]*(?:\.[0-9]+)?"
)
_LATEX_FRACTION = r"[dt]?frac\{\s*[0-9]{1,50}\s*\}\{\s*[0-9]{1,50}\s*\}"

# Every number starts with one character of a small set, read first so that the regex
# engine scans for it at C speed; lookbehinds then check what stood before and what the
# first character was. A sign counts only when nothing is glued before it and the digits
# follow at once: "x = -3" and "(-3)" hold -3, while "16-3" and "16 - 3" hold 16 and 3.
_NUMBER_RE = re.compile(
    rf"""
    (?P<lead>[-\u2212\u2013+$\\0-9.])(?<![\w.)\]}}].)
    (?:
        (?<=[0-9])(?P<digits>{_AFTER_FIRST_DIGIT})
      | (?<=\.)(?P<decimals>[0-9]+)
      | (?<=[-\u2212\u2013+])(?:\\?\$\s?)?(?P<signed>\\{_LATEX_FRACTION}|{_PLAIN})
      | (?<=\$)\s?(?P<priced>{_PLAIN})
      | (?<=\\)(?:\$\s?(?P<escaped_price>{_PLAIN})|(?P<latex>{_LATEX_FRACTION}))
    )
    (?P<percent>\s?\\?%)?
    """,
    re.VERBOSE,
)
# Every character any _NUMBER_RE match can contain ("dfrac", "tfrac" included); any other
# character separates numbers.
_NUMBER_CHARS = r"0-9,./\s\-\u2212\u2013+$\\%{}dtfrac"
_OUTSIDE_NUMBERS_RE = re.compile(rf"[^{_NUMBER_CHARS}]")
_TAILS = (16, 64)  # characters from the end read first, then further back
_LATEX_FRACTION_PARTS = re.compile(r"\{\s*([0-9]+)\s*\}\{\s*([0-9]+)\s*\}")
_NEGATIVE_SIGNS = ("-", "\u2212", "\u2013")
_MAX_DIGITS = 1000  # int() refuses more than 4300 digits; no real answer has this many


class NumberMatch(NamedTuple):
    """A number found in text: its exact value, the text it was read from, and where."""

    value: Exact
    text: str
    start: int
    end: int
    percent: bool


def _body_value(body: str) -> Exact | None:
    """The exact value of a matched body: LaTeX fraction, ``a/b``, or a decimal with commas."""
    if "{" in body:
        numerator, denominator = _LATEX_FRACTION_PARTS.search(body).groups()  # type: ignore[union-attr]
    elif "/" in body:
        numerator, _, denominator = body.partition("/")
    else:
        body = body.replace(",", "")
        if len(body) > _MAX_DIGITS:
            return None
        whole, _, decimals = body.partition(".")
        # Built from ints: several times faster than Fraction(str), and just as exact.
        return exact(Fraction(int(whole + decimals), 10 ** len(decimals))) if decimals else int(whole)
    if int(denominator) == 0:
        return None
    return exact(Fraction(int(numerator), int(denominator)))


def exact(value: Fraction) -> Exact:
    """``value`` as an ``int`` when it is whole, else unchanged.

    Example:
        >>> exact(Fraction(36, 2)), exact(Fraction(1, 2))
        (18, Fraction(1, 2))
    """
    return value.numerator if value.denominator == 1 else value


def _number_match(match: re.Match[str], whole_as_int: bool) -> NumberMatch | None:
    lead, digits, decimals, signed, priced, escaped_price, latex, percent = match.groups()  # _NUMBER_RE's groups in order
    if digits is not None:
        body = lead + digits
    elif decimals is not None:
        body = "." + decimals
    else:
        body = signed or priced or escaped_price or latex
    value = _body_value(body)
    if value is None:
        return None
    if lead in _NEGATIVE_SIGNS:
        value = -value
    if not whole_as_int and type(value) is int:
        value = Fraction(value)
    return NumberMatch(value, match.group(0).strip(), match.start(), match.end(), percent is not None)


def iter_numbers(text: str, *, whole_as_int: bool = False) -> Iterator[NumberMatch]:
    """Every number in ``text``, left to right (whole ones as ``int`` with ``whole_as_int``).

    Example:
        >>> [str(m.value) for m in iter_numbers("She pays $1,234.50 for 3/4 of it, -2 left")]
        ['2469/2', '3/4', '-2']
        >>> [str(m.value) for m in iter_numbers("16 - 3 - 4 = 9, x = -\\\\frac{1}{2}")]
        ['16', '3', '4', '9', '-1/2']
    """
    for match in _NUMBER_RE.finditer(text):
        number = _number_match(match, whole_as_int)
        if number is not None:
            yield number


def first_number(text: str, *, whole_as_int: bool = False) -> NumberMatch | None:
    """The first number in ``text``, or ``None`` (whole ones as ``int`` with ``whole_as_int``).

    Example:
        >>> first_number("about $18.00 a day").value, first_number("about $18.00", whole_as_int=True).value
        (Fraction(18, 1), 18)
    """
    for match in _NUMBER_RE.finditer(text):
        number = _number_match(match, whole_as_int)
        if number is not None:
            return number
    return None


def last_number(text: str, *, whole_as_int: bool = False) -> NumberMatch | None:
    """The last number in ``text``, or ``None`` (whole ones as ``int`` with ``whole_as_int``).

    Example:
        >>> last_number("16 - 3 - 4 = 9, and 9 * 2 = 18 dollars").value
        Fraction(18, 1)
    """
    # Completions hold many numbers and the answer is near the end: read the tail first, then a
    # longer one before it. No number can span a character outside _NUMBER_CHARS, so the numbers
    # after one such character are exactly those a scan of the whole text finds there.
    endpos = len(text)
    for tail in _TAILS:
        if endpos <= tail:
            break
        boundary = _OUTSIDE_NUMBERS_RE.search(text, endpos - tail, endpos)
        if boundary is None:
            break
        number = _last_valid(_NUMBER_RE.finditer(text, boundary.end(), endpos), whole_as_int)
        if number is not None:
            return number
        endpos = boundary.start()
    return _last_valid(_NUMBER_RE.finditer(text, 0, endpos), whole_as_int)


def _last_valid(matches: Iterator[re.Match[str]], whole_as_int: bool) -> NumberMatch | None:
    # Values are computed for the last matches only.
    for match in reversed(list(matches)):
        number = _number_match(match, whole_as_int)
        if number is not None:
            return number
    return None


def parse_number(text: str, *, whole_as_int: bool = False) -> Exact | None:
    """Read ``text`` as one number (currency, commas, percent and unit words allowed), or ``None``.

    Text that holds no number, or more than one, is ``None``.

    Example:
        >>> parse_number("$1,000.00"), parse_number("2.5%"), parse_number("18 dollars", whole_as_int=True)
        (Fraction(1000, 1), Fraction(5, 2), 18)
        >>> parse_number("3 or 4") is None, parse_number("abc") is None
        (True, True)
    """
    found = iter_numbers(text, whole_as_int=whole_as_int)
    only = next(found, None)
    if only is None or next(found, None) is not None:
        return None
    return only.value


def format_number(value: Exact) -> str:
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


_UNITS_WORDS = {word: value for value, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen".split())}
_TENS_WORDS = {word: 10 * value for value, word in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)}
_SCALE_WORDS = {"hundred": 100, "thousand": 1000, "million": 10 ** 6}
_WORD_TOKEN_RE = re.compile(r"[A-Za-z]+|[^A-Za-z\s-]")  # a word, or a sign that ends the number
_WORDS_WINDOW = 100
# Words after a number word that make it no whole count: "ten and a half", "two point five", "one of them".
_FRACTION_WORDS = frozenset("a half halves third thirds quarter quarters fifth fifths point percent of".split())


def leading_number_words(text: str) -> int | None:
    """The whole number written in words at the start of ``text`` (``six``, ``forty-two apples``,
    ``one hundred and five``), or ``None`` when it starts with no number word.

    Example:
        >>> leading_number_words("six."), leading_number_words("Forty-two apples"), leading_number_words("one hundred and five")
        (6, 42, 105)
        >>> [leading_number_words(t) for t in ("none of them", "a dozen", "ten and a half", "two point five")]
        [None, None, None, None]
    """
    total = current = 0
    found = False
    for word in _WORD_TOKEN_RE.findall(text, 0, _WORDS_WINDOW):
        word = word.lower()
        if word in _UNITS_WORDS or word in _TENS_WORDS:
            current += _UNITS_WORDS.get(word, 0) + _TENS_WORDS.get(word, 0)
        elif word in _SCALE_WORDS and found:
            current = max(current, 1) * _SCALE_WORDS[word]
            if _SCALE_WORDS[word] >= 1000:
                total, current = total + current, 0
        elif word == "and" and found:
            continue
        elif word in _FRACTION_WORDS and found:
            return None  # "ten and a half", "two point five": not a whole number
        else:
            break
        found = True
    return total + current if found else None
