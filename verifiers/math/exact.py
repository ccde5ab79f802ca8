"""Decisions without sympy: normalised text, exact numbers, bases, lists (labelled ones too) and matrices, words and
sentences, compared in plain string work.

Everything here is linear in the input and safe to run in the trainer's own process; parsing
with sympy (which can hang) lives in :mod:`referee.verifiers.math.sympy_worker` and runs only in
worker processes. :func:`canonical` and :func:`exact_number` are the fast paths: normalised text
equality and exact numbers (read by :mod:`referee.verifiers.text.numbers`), compared by
:func:`numbers_match`; :func:`never_a_number` and :func:`may_end_in_unit` say which answers a
number can never equal; :func:`labelled_values` reads lists whose values carry labels
(``3 \\text{ apples}, 5 \\text{ pears}``), and :func:`yes_or_no`, :func:`named_choice` and
:func:`sentence_words` what a gold written as a sentence says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from ..text.latex import strip_math_delimiters, top_level_parts
from ..text.numbers import first_number
from ..text.vocabulary import OPERATOR_NAME_COMMAND, SCALE_WORD, STYLED_TEXT_COMMAND, TEXT_COMMAND, UNIT_WORD
from .options import CompareOptions, Percent

# ---------------------------------------------------------------------------------------------
# Fast paths


_TEXT_COMMAND_RE = re.compile(rf"{STYLED_TEXT_COMMAND}\s*\{{([^{{}}]*)\}}")
_SPACING_AND_SIZING_RE = re.compile(r"(?<!\\)\\(?:(?:left|right|displaystyle|quad|qquad)(?![A-Za-z])|[!,;: ])|\s+")
_SHORT_ARGUMENT_RE = re.compile(r"\\(sqrt|frac)\s*([0-9A-Za-z])(?:\s*([0-9A-Za-z]))?")
_SHORT_NUMERATOR_RE = re.compile(r"\\frac\s*([0-9A-Za-z])\s*(?=\{)")  # \frac1{6} is \frac{1}{6}
_BRACED_SCRIPT_RE = re.compile(r"([_^])\{([0-9A-Za-z])\}")  # x^{2} is x^2, a_{n} is a_n
_DEGREES_RE = re.compile(r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|°|\\degree")
_TRAILING_UNIT_RE = re.compile(
    rf"(?<=[0-9])(?:\s|\\[,;: ])*{TEXT_COMMAND}\s*\{{\s*(?!(?:[ei]|{SCALE_WORD}|score)\s*\}})"
    r"\(?[A-Za-z][A-Za-z ./]*\)?\s*\}(?:\^\{?[23]\}?)?\s*$", re.IGNORECASE)
_ASSIGNMENT_RE = re.compile(r"^[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?=(?!=)(.+)$")
_PLAIN_NUMBER_RE = re.compile(
    r"""^[-+]?(?:\\\$)?
    (?:[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]*)?|\.[0-9]+|\\frac\{[0-9]+\}\{[0-9]+\}|[0-9]+/[0-9]+)
    (?:\\?%)?$""",
    re.VERBOSE,
)
_LIST_COMMA_RE = re.compile(r"[0-9],\s")
_INNER_MINUS_RE = re.compile(r"^(-?)\\frac\{-(?=[0-9]+\}\{[0-9]+\}$)")
_SCIENTIFIC_RE = re.compile(
    r"^(?P<mantissa>[-+]?[0-9]+(?:\.[0-9]+)?)(?:[eE]|(?:\\times|\\cdot|\*)10\^)(?P<exponent>\{[-+]?[0-9]{1,3}\}|[-+]?[0-9]{1,3})$"
)


@lru_cache(maxsize=4096)  # the fast checks ask again of the same answer and gold
def canonical(text: str) -> str:
    """``text`` with the formatting that never changes a value removed, for string comparison.

    Drops math delimiters, ``\\left``/``\\right``, spacing commands and all whitespace, ``^\\circ``,
    a final period, ``\\text{}``-like wrappers (keeping their content); ``\\dfrac``/``\\tfrac`` become
    ``\\frac`` and ``{,}`` becomes ``,``.

    Example:
        >>> canonical(r"$\\left( 3, \\dfrac{\\pi}{2} \\right).$")
        '(3,\\\\frac{\\\\pi}{2})'
        >>> canonical(r"\\text{Evelyn}"), canonical(r"30^{\\circ}"), canonical("10{,}000")
        ('Evelyn', '30', '10,000')
        >>> canonical(r"2 \\sqrt5 + \\frac12"), canonical(r"\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}")
        ('2\\\\sqrt{5}+\\\\frac{1}{2}', '\\\\begin{pmatrix}1\\\\\\\\2\\\\end{pmatrix}')
    """
    text = strip_math_delimiters(text)
    text = re.sub(r"\\[dt]frac(?![A-Za-z])", r"\\frac", text)
    text = _DEGREES_RE.sub("", text)
    previous = None
    while previous != text:
        previous, text = text, _TEXT_COMMAND_RE.sub(r"\1", text)
    text = _SPACING_AND_SIZING_RE.sub("", text).replace("{,}", ",")
    text = _SHORT_ARGUMENT_RE.sub(_braced_arguments, text)
    text = _SHORT_NUMERATOR_RE.sub(r"\\frac{\1}", text)
    text = _BRACED_SCRIPT_RE.sub(r"\1\2", text)
    return text.rstrip(".")


def _braced_arguments(match: re.Match[str]) -> str:
    """``\\sqrt3`` -> ``\\sqrt{3}``, ``\\frac12`` -> ``\\frac{1}{2}`` (one-character arguments)."""
    command, first, second = match.groups()
    if command == "sqrt":
        return f"\\sqrt{{{first}}}" + (second or "")
    return f"\\frac{{{first}}}{{{second}}}" if second else match.group()


@dataclass(frozen=True)
class ExactNumber:
    """A plain number read exactly: its value, whether it had a percent sign, its decimal places.

    Example:
        >>> ExactNumber(Fraction(1, 2), percent=False, places=1).value
        Fraction(1, 2)
    """

    value: Fraction
    percent: bool
    places: int  # digits written after the decimal point (0 for integers and fractions)


def exact_number(text: str) -> ExactNumber | None:
    """``text`` as one plain number (decimal, fraction, percent, currency, unit, scientific), else ``None``.

    Anything with a symbol, a root, a power other than ``10^n`` or more than one number is
    ``None``: those go to sympy.

    Example:
        >>> exact_number(r"\\$1,234.50")
        ExactNumber(value=Fraction(2469, 2), percent=False, places=2)
        >>> exact_number(r"-\\dfrac{3}{4}").value, exact_number("12.5\\\\%").percent
        (Fraction(-3, 4), True)
        >>> exact_number(r"1.5 \\times 10^{3}").value, exact_number(r"5 \\text{ cm}").value
        (Fraction(1500, 1), Fraction(5, 1))
        >>> exact_number(r"5\\pi") is None, exact_number("1,2") is None
        (True, True)
    """
    if _LIST_COMMA_RE.search(text):  # "32, 349" is a list, not 32349
        return None
    text = canonical(_TRAILING_UNIT_RE.sub("", text))
    scientific = _SCIENTIFIC_RE.match(text)
    if scientific:
        exponent = int(scientific.group("exponent").strip("{}"))
        mantissa = scientific.group("mantissa")
        return ExactNumber(Fraction(mantissa) * Fraction(10) ** exponent, False, max(0, _places(mantissa) - exponent))
    text = _INNER_MINUS_RE.sub(lambda m: ("" if m.group(1) else "-") + r"\frac{", text)
    if not _PLAIN_NUMBER_RE.match(text):
        return None
    number = first_number(text)
    if number is None or number.end != len(text):
        return None
    return ExactNumber(number.value, number.percent, _places(text))


def _places(text: str) -> int:
    decimals = re.search(r"\.([0-9]*)", text)
    return len(decimals.group(1)) if decimals else 0


_BASE_NUMBER_RE = re.compile(r"^([0-9A-Za-z]+)_\{?([0-9]+)\}?$")


def base_number(text: str) -> tuple[str, int] | None:
    """``(digits, base)`` of a number written in a base, such as ``52_8`` or ``4210_{5}``, else ``None``.

    Example:
        >>> base_number("4210_{5}"), base_number(r"1011_2"), base_number("x_1 + 1")
        (('4210', 5), ('1011', 2), None)
    """
    match = _BASE_NUMBER_RE.match(canonical(text))
    return (match.group(1).upper(), int(match.group(2))) if match else None


def assignment_value(text: str) -> str | None:
    """The right-hand side of a single assignment such as ``x = 5``, else ``None``.

    Example:
        >>> assignment_value("x = 5"), assignment_value("x + y = 5")
        ('5', None)
    """
    match = _ASSIGNMENT_RE.match(canonical(text))
    return match.group(1) if match else None


def exact_elements(text: str) -> tuple[str, tuple[Any, ...]] | None:
    """The distinct exact values of a list or set of numbers, or of a list of tuples of numbers, sorted.

    ``("set", values)`` for ``1, 2`` or ``\\{2, 1\\}``; ``("tuples", tuples)`` for ``(1, 2), (3, 4)``;
    ``("tuple", values)`` in order for one ``(1, 4.5)``; ``None`` for anything else (a single
    value, a symbol, a root). math-verify reads both shapes
    as sets, so two of one shape are equal exactly when these are.

    Example:
        >>> exact_elements(r"\\{4, 8\\}") == exact_elements("8,4"), exact_elements("(3,-2), (1, 0.5)")
        (True, ('tuples', ((Fraction(1, 1), Fraction(1, 2)), (Fraction(3, 1), Fraction(-2, 1)))))
        >>> exact_elements("(1, 4.5)"), exact_elements(r"1, \\sqrt{2}") is None
        (('tuple', (Fraction(1, 1), Fraction(9, 2))), True)
    """
    text = canonical(text)
    if text.startswith("\\{") and text.endswith("\\}"):
        text = text[2:-2]
    parts = top_level_parts(text)
    if len(parts) == 1 and text.startswith("(") and text.endswith(")"):  # one tuple: its elements in order
        numbers = [exact_number(item) for item in top_level_parts(text[1:-1])]
        if len(numbers) < 2 or any(number is None or number.percent for number in numbers):
            return None
        return "tuple", tuple(number.value for number in numbers)  # type: ignore[union-attr]
    if len(parts) < 2:
        return None
    if all(part.startswith("(") and part.endswith(")") for part in parts):
        tuples = set()
        for part in parts:
            numbers = [exact_number(item) for item in top_level_parts(part[1:-1])]
            if len(numbers) < 2 or any(number is None or number.percent for number in numbers):
                return None
            tuples.add(tuple(number.value for number in numbers))  # type: ignore[union-attr]
        return "tuples", tuple(sorted(tuples))
    numbers = [exact_number(part) for part in parts]
    if any(number is None or number.percent for number in numbers):
        return None
    return "set", tuple(sorted({number.value for number in numbers}))  # type: ignore[union-attr]


_MATRIX_RE = re.compile(r"^\\begin\{([pbBvV]?matrix)\}(.*)\\end\{\1\}$", re.DOTALL)


_NAME_RE = re.compile(r"[A-Za-z](?:_[A-Za-z0-9]|_\{[A-Za-z0-9]{1,8}\})?")


def exact_names(text: str) -> frozenset[str] | None:
    """A list of two or more names (``E_{1}, E_{2}``, ``A, C``) as the set of its names in one
    spelling, else ``None``: what no maths parser reads as a list, compared as sets.

    Example:
        >>> sorted(exact_names("E_{1},E_{2}")), exact_names("E_2, E_1") == exact_names("E_{1}, E_{2}")
        (['E_1', 'E_2'], True)
        >>> exact_names("x"), exact_names("1, 2"), exact_names("x + 1, y")
        (None, None, None)
    """
    parts = [canonical(part) for part in top_level_parts(text)]
    if len(parts) < 2 or not all(_NAME_RE.fullmatch(part) for part in parts):
        return None
    return frozenset(parts)


# A congruence: "x = 3 (mod 7)", "x \equiv 3 \pmod{7}", "3 \bmod 7", "3 (mod 7)".
_CONGRUENCE_RE = re.compile(
    r"(?:[A-Za-z]\s*(?:=|\\equiv|≡)\s*)?(?P<residue>-?[0-9]{1,18})\s*(?:\\pmod\s*\{?\s*(?P<p>[0-9]{1,18})\s*\}?"
    r"|\(\s*(?:\\bmod|\\mod|mod)\s*\{?\s*(?P<paren>[0-9]{1,18})\s*\}?\s*\)|\\?(?:bmod|mod)\s*\{?\s*(?P<bare>[0-9]{1,18})\s*\}?)")
# A count of things: "3 apples", "3 \text{ red apples}" (never a measurement unit: "5 cm", "12 dollars").
_COUNTED_RE = re.compile(rf"(?P<number>-?[0-9]+(?:\.[0-9]+)?)\s*(?:{TEXT_COMMAND}\s*\{{\s*)?"
                         r"(?P<noun>[A-Za-z]{3,}(?:\s+[A-Za-z]{3,}){0,2})\s*\}?")


def congruence(text: str) -> tuple[int, int] | None:
    """A congruence as (residue, modulus), else ``None``.

    Example:
        >>> congruence("x = 3 (mod 7)"), congruence(r"x \\equiv 3 \\pmod{7}"), congruence("3")
        ((3, 7), (3, 7), None)
    """
    found = _CONGRUENCE_RE.fullmatch(strip_math_delimiters(text).strip().rstrip("."))
    if found is None:
        return None
    modulus = int(found.group("p") or found.group("paren") or found.group("bare"))
    return (int(found.group("residue")), modulus) if modulus else None


def counted(text: str) -> tuple[Fraction, str] | None:
    """A number of things as (number, the thing, singular and lower case), else ``None``;
    measurement units (``5 cm``, ``12 dollars``, ``3 hours``) are not things counted.

    Example:
        >>> counted("3 apples"), counted(r"3 \\text{ Apple}"), counted("5 cm"), counted("12 dollars")
        ((Fraction(3, 1), 'apple'), (Fraction(3, 1), 'apple'), None, None)
    """
    found = _COUNTED_RE.fullmatch(strip_math_delimiters(text).strip().rstrip("."))
    if found is None:
        return None
    noun = found.group("noun").split()[-1].lower()
    if re.fullmatch(UNIT_WORD, noun) or noun in _NOT_THINGS:
        return None
    return Fraction(found.group("number")), re.sub(r"(?<=[^s])s$", "", noun)


# A label after a value: "\text{ apples}", "\mathrm{cm}^2", or a bare word of three letters or more after a
# space ("3 apples"; "2x" and "3 ab" are products); before a value, with a colon: "\text{Apples: } 3", "Apples: 3".
_LABEL_AFTER_RE = re.compile(rf"(?:{TEXT_COMMAND}\s*\{{\s*(?P<text>[A-Za-z][A-Za-z .'/-]*?)\s*\}}"
                             r"|(?<=\s)(?P<word>[A-Za-z]{3,}(?:\s+[A-Za-z]{3,}){0,2}|(?:cm|mm|km|kg|mg|ml|m|g|s|h|ft|lb|oz)))"
                             r"(?:\^\{?[23]\}?)?\s*\.?\s*$")
_LABEL_BEFORE_RE = re.compile(rf"^\s*(?:{TEXT_COMMAND}\s*\{{\s*(?P<text>[A-Za-z][A-Za-z .'/-]*?)\s*(?::\s*\}}|\}}\s*:)"
                              r"|(?P<word>[A-Za-z]{2,}(?:\s+[A-Za-z]{2,}){0,2})\s*:)\s*")
_WHOLE_TEXT_RE = re.compile(rf"{TEXT_COMMAND}\s*\{{([^{{}}]*)\}}")
_LIST_AND_RE = re.compile(rf"(?<!\s)\s*(?:,\s*)?(?:{TEXT_COMMAND}\s*\{{\s*and\s*\}}|(?<![A-Za-z\\])and(?![A-Za-z]))\s*")
_AND_IN_LABEL_RE = re.compile(r"(?<=[A-Za-z])\s+and\s*\}")  # "3 \text{ apples and } 5 \text{ pears}"
# Other separators of quantities: "3 \text{ apples}; 5 \text{ pears}", "\quad", and none ("3 \text{ hours } 7 \text{ minutes}").
_LIST_SEPARATOR_RE = re.compile(r"(?<!\\);|\\q?quad(?![A-Za-z])")
_LABEL_WORDS = r"\s*[A-Za-z][A-Za-z .'/-]*"  # what a label says: words, never maths or brackets ("\text{ (mod } 7)")
_LABEL_BEFORE_NUMBER_RE = re.compile(rf"({TEXT_COMMAND}\s*\{{{_LABEL_WORDS}\}})\s*(?=-?[0-9])")
# A value with a label, and maths with a number after it outside brackets: several quantities in one answer.
_LABELLED_VALUE_RE = re.compile(rf"[0-9}}]\s*(?:\\[,;: ]\s*)*{TEXT_COMMAND}\s*\{{{_LABEL_WORDS}\}}")
_UNIT_POWER_RE = re.compile(r"\^\s*(?:\{\s*-?[0-9]+\s*\}|-?[0-9])")  # "\text{ cm}^2", "\text{m}^{-2}"
_BRACKETED_RE = re.compile(r"\([^()]*\)")
_THOUSANDS_COMMA_RE = re.compile(r"(?<![0-9])([0-9]{1,3})((?:,[0-9]{3})+)(?![0-9])")  # "1,000 apples": one number
_MAX_LABELLED = 64
_BARE_LETTER_RE = re.compile(r"(?<![\\A-Za-z])[A-Za-z]")  # a letter that starts no command's name
_LABEL_HINT_RE = re.compile(rf"{TEXT_COMMAND}|(?<![\\A-Za-z])[A-Za-z]{{2,}}")  # a word that is no command's name


def _label(words: str) -> str:
    """A label in one spelling: lower case, no articles, each word singular (``the Red Apples`` -> ``red apple``)."""
    return " ".join(re.sub(r"(?<=[^s])s$", "", word) for word in words.lower().split() if word not in _ARTICLES)


def _labelled_value(part: str) -> tuple[str, str | None] | None:
    """One element of a list: its value as written with its label (``None``: none written), else ``None``
    (a value with a bare letter, ``2x``, is an expression, not a labelled value)."""
    label = None
    for pattern in (_LABEL_AFTER_RE, _LABEL_BEFORE_RE):
        found = pattern.search(part)
        if found is not None:
            label = _label(found.group("text") or found.group("word"))
            part = part[:found.start()] + part[found.end():]
            break
    value = part.strip()
    if not value or label == "" or exact_number(value) is None and _BARE_LETTER_RE.search(value):
        return None
    return value, label


def may_be_labelled(text: str) -> bool:
    """Whether ``text`` holds a word that may label a value (cheap: most answers hold none).

    Example:
        >>> may_be_labelled(r"3 \\text{ apples}"), may_be_labelled(r"\\frac{1}{2}, 3"), may_be_labelled("x + 1")
        (True, False, False)
    """
    return _LABEL_HINT_RE.search(text) is not None


@lru_cache(maxsize=4096)  # a gold is asked for again with each of its completions
def labelled_values(text: str) -> tuple[str, tuple[tuple[str, str | None], ...]] | None:
    """A value, or a list, tuple or set of values, any of them labelled (``3 \\text{ apples}, 5 \\text{ pears}``),
    as ``(kind, ((value, label), ...))``: kind ``"set"`` for ``\\{...\\}`` (order free), ``"tuple"`` for
    ``(...)``, else ``"list"``; each value as written, each label in one spelling (``None`` where none is
    written); ``None`` when an element is an expression in a variable (``2x``) or empty.

    math-verify reads such a list as its first number; these are compared element by element instead.

    Example:
        >>> labelled_values(r"3 \\text{ apples}, 5 \\text{ Pears}"), labelled_values(r"\\text{Alice: } 1,000, \\text{Bob: } 7")
        (('list', (('3', 'apple'), ('5', 'pear'))), ('list', (('1000', 'alice'), ('7', 'bob'))))
        >>> labelled_values(r"3 \\text{ apples and } 5 \\text{ pears}") == labelled_values("3 apples and 5 pears")
        True
        >>> labelled_values(r"\\{1024, 3\\}"), labelled_values(r"\\sqrt{2} \\text{ cm}, 1"), labelled_values("2x, 3y")
        (('set', (('1024', None), ('3', None))), ('list', (('\\\\sqrt{2}', 'cm'), ('1', None))), None)
    """
    kind, text = "list", strip_math_delimiters(text).strip().rstrip(".")
    wrapped = _WHOLE_TEXT_RE.fullmatch(text)  # "\text{3 apples and 5 pears}"
    text = wrapped.group(1).strip() if wrapped and re.search(r"[0-9]", wrapped.group(1)) else text
    text = _THOUSANDS_COMMA_RE.sub(lambda m: m.group(1) + m.group(2).replace(",", ""), text)
    for opening, closing, shape in (("\\{", "\\}", "set"), ("(", ")", "tuple")):
        if text.startswith(opening) and text.endswith(closing) and len(top_level_parts(text)) == 1:
            kind, text = shape, text[len(opening):-len(closing)]
            break
    text = _LIST_SEPARATOR_RE.sub(",", _LIST_AND_RE.sub(", ", _AND_IN_LABEL_RE.sub("},", text)))
    parts = top_level_parts(_LABEL_BEFORE_NUMBER_RE.sub(r"\1, ", text))
    if len(parts) > _MAX_LABELLED:
        return None
    values = [_labelled_value(part) for part in parts]
    return None if None in values else (kind, tuple(values))  # type: ignore[arg-type]


def states_several_quantities(text: str) -> bool:
    """Whether ``text`` holds a value with a label and then more maths with a number (``3 \\text{ cm} \\times
    7 \\text{ cm}``, ``2 \\text{ apples} + 3``): math-verify reads such text as its first number. A unit's
    power (``\\text{ cm}^2``), a bracketed restatement (``15 \\text{ cm} (150 \\text{ mm})``) and a
    congruence do not count.

    Example:
        >>> states_several_quantities(r"3 \\text{ cm} \\times 7 \\text{ cm}"), states_several_quantities(r"5 \\text{ cm}^2")
        (True, False)
        >>> states_several_quantities(r"15 \\text{ cm} (150 \\text{ mm})"), states_several_quantities(r"3 \\text{ (mod } 7)")
        (False, False)
    """
    text = _UNIT_POWER_RE.sub("", text)
    label = _LABELLED_VALUE_RE.search(text)
    if label is None or congruence(text) is not None:
        return False
    return re.search(r"[0-9]", _BRACKETED_RE.sub("", text[label.end():])) is not None


_NOT_THINGS = frozenset("and percent cents per each total times units square cubic hundred thousand million billion trillion".split())
_WORDS_TEXT_RE = re.compile(r"[A-Za-z][A-Za-z'-]*(?:\s+[A-Za-z][A-Za-z'-]*){0,7}")
_ARTICLES = frozenset({"a", "an", "the"})


def answer_words(text: str) -> tuple[str, ...] | None:
    """A word answer (``\\text{the Isosceles triangle}``, ``Tuesday``) as its words, lower case,
    without articles; ``None`` for anything else (maths, a single letter, a number).

    Example:
        >>> answer_words(r"\\text{the Isosceles triangle}"), answer_words("Tuesday"), answer_words("B"), answer_words("x+1")
        (('isosceles', 'triangle'), ('tuesday',), None, None)
    """
    text = plain_words(strip_math_delimiters(text).strip().rstrip("."))
    if not _WORDS_TEXT_RE.fullmatch(text):
        return None
    words = tuple(word for word in text.lower().split() if word not in _ARTICLES)
    return words if words and max(len(word) for word in words) >= 3 else None


_SENTENCE_RE = re.compile(r"[A-Za-z][A-Za-z'’-]*(?:[\s,;:]+[A-Za-z][A-Za-z'’-]*){0,24}\s*[.!]?")
_SENTENCE_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_NEGATION_RE = re.compile(r"\b(?:not|no|never|cannot|neither|nor|none|nobody|nothing)\b|n[’']t\b", re.IGNORECASE)
_CONDITION_RE = re.compile(r"\b(?:if|when|whenever|unless|only|otherwise|but|or|and|both|either|except|while|until)\b",
                           re.IGNORECASE)
# Capitalised words that open a sentence without naming anyone: "The first player wins.", "It is Petya."
_SENTENCE_OPENERS = frozenset("the a an it its this that there these those he she they we you i yes no in on at for by "
                              "each every all some any one first second last player".split())
_MAX_NAMED_WORDS = 12


def plain_words(text: str) -> str:
    """``text`` without maths delimiters and text commands (their words kept).

    Example:
        >>> plain_words(r"$\\textbf{(B) }\\text{Parabola}$")
        '(B) Parabola'
    """
    text, previous = strip_math_delimiters(text).strip(), None
    while previous != text:
        previous, text = text, _TEXT_COMMAND_RE.sub(r"\1", text).strip()
    return text


def is_sentence(text: str) -> bool:
    """Whether ``text`` is words only, one to 25 of them, as a gold written as a sentence
    (``Petya will receive the last token.``, ``No, it is not possible.``).

    Example:
        >>> is_sentence("Petya will receive the last token."), is_sentence(r"\\text{No, it is not possible.}")
        (True, True)
        >>> is_sentence("x = 5"), is_sentence("5 apples")
        (False, False)
    """
    return _SENTENCE_RE.fullmatch(plain_words(text)) is not None


def yes_or_no(text: str) -> bool | None:
    """``True`` for an answer that opens with "yes", ``False`` with "no" (``No, it is not possible.``), else
    ``None``; ``None`` too where the other word follows (``Yes and no``).

    Example:
        >>> yes_or_no(r"\\text{No, it is not possible.}"), yes_or_no("**Yes**"), yes_or_no("Not possible"), yes_or_no("yes or no")
        (False, True, None, None)
    """
    words = [word.lower() for word in _SENTENCE_WORD_RE.findall(plain_words(text))]
    if not words or words[0] not in ("yes", "no") or ("no" if words[0] == "yes" else "yes") in words:
        return None
    return words[0] == "yes"


def named_choice(text: str) -> str | None:
    """The one name a short sentence opens with, said without negation or condition (``Petya will
    receive the last token.`` -> ``petya``): the choice such a gold names; else ``None``.

    Example:
        >>> named_choice("Petya will receive the last token."), named_choice("Petya will not win.")
        ('petya', None)
        >>> named_choice("The first player wins."), named_choice("Petya wins if n is odd."), named_choice("Petya and Vasya")
        (None, None, None)
    """
    plain = plain_words(text)
    if not is_sentence(plain) or _NEGATION_RE.search(plain) or _CONDITION_RE.search(plain):
        return None
    words = _SENTENCE_WORD_RE.findall(plain)
    if len(words) > _MAX_NAMED_WORDS or words[0].lower() in _SENTENCE_OPENERS \
            or [word for word in words if word[0].isupper()] != words[:1]:
        return None
    return words[0].lower()


def sentence_words(text: str) -> tuple[str, ...]:
    """The words of a sentence in one spelling: lower case, no articles, no punctuation.

    Example:
        >>> sentence_words(r"\\text{Petya will receive the last token.}") == sentence_words("petya will receive last token")
        True
    """
    return tuple(word.lower() for word in _SENTENCE_WORD_RE.findall(plain_words(text)) if word.lower() not in _ARTICLES)


def exact_matrix(text: str) -> tuple[tuple[Fraction, ...], ...] | None:
    """The rows of a ``pmatrix`` / ``bmatrix`` (or vector) of exact numbers, else ``None``.

    Example:
        >>> exact_matrix(r"\\begin{pmatrix} 1 & \\frac{1}{2} \\\\ 0 & -3 \\end{pmatrix}")
        ((Fraction(1, 1), Fraction(1, 2)), (Fraction(0, 1), Fraction(-3, 1)))
        >>> exact_matrix(r"\\begin{pmatrix} x \\\\ 1 \\end{pmatrix}") is None
        True
    """
    match = _MATRIX_RE.match(canonical(text))
    if match is None:
        return None
    rows = []
    for row in match.group(2).split("\\\\"):
        if not row:
            continue  # a trailing \\ ends the last row
        numbers = [exact_number(cell) for cell in row.split("&")]
        if any(number is None or number.percent for number in numbers):
            return None
        rows.append(tuple(number.value for number in numbers))  # type: ignore[union-attr]
    return tuple(rows) if rows else None


def has_decimals(text: str) -> bool:
    """Whether ``text`` writes a number with a decimal point (math-verify then rounds).

    Example:
        >>> has_decimals("1, 0.5"), has_decimals("(1, 2)")
        (True, False)
    """
    return re.search(r"[0-9]\.[0-9]|(?<![0-9])\.[0-9]", text) is not None


def _candidates(number: ExactNumber, percent: Percent) -> tuple[Fraction, ...]:
    if not number.percent or percent == "ignore":
        return (number.value,)
    if percent == "divide":
        return (number.value / 100,)
    return (number.value, number.value / 100)


def numbers_match(answer: ExactNumber, gold: ExactNumber, options: CompareOptions) -> bool:
    """Whether two exact numbers are equal under ``options`` (percent mode, rounding, tolerance).

    Example:
        >>> half = exact_number("0.5")
        >>> numbers_match(exact_number("50\\\\%"), half, CompareOptions())
        True
        >>> numbers_match(exact_number("50\\\\%"), half, CompareOptions(percent="ignore"))
        False
        >>> numbers_match(exact_number("0.333333"), exact_number(r"\\frac{1}{3}"), CompareOptions())
        True
        >>> numbers_match(exact_number(".0000673"), exact_number(".0000672"), CompareOptions())
        False
    """
    # math-verify's rule (round to float_rounding places when a decimal is involved), but never
    # coarser than the places actually written: .0000672 is not .0000673.
    places = max(options.float_rounding, answer.places, gold.places) if answer.places or gold.places else None
    for a in _candidates(answer, options.percent):
        for g in _candidates(gold, options.percent):
            if a == g:
                return True
            if places is not None and round(a, places) == round(g, places):
                return True
            if abs(a - g) <= max(Fraction(options.abs_tol), Fraction(options.rel_tol) * max(abs(a), abs(g))):
                return True
    return False


def for_sympy(text: str, percent: Percent) -> str:
    """The answer text as sympy should read it under a percent mode (``50\\%`` -> ``\\frac{50}{100}``).

    Example:
        >>> for_sympy("x\\\\%", "divide"), for_sympy("x\\\\%", "ignore"), for_sympy("x\\\\%", "either")
        ('\\\\frac{x}{100}', 'x', 'x\\\\%')
    """
    if percent == "ignore":
        return re.sub(r"\\?%", "", text).strip()
    if percent == "divide":
        match = re.match(r"^(.*?)\s*\\?%\s*$", text, re.DOTALL)
        if match:
            return f"\\frac{{{match.group(1)}}}{{100}}"
    return text


_TEXT_BLOCK_RE = re.compile(rf"(?:{STYLED_TEXT_COMMAND}|{OPERATOR_NAME_COMMAND})\s*\{{[^{{}}]*\}}")
# Narrower than vocabulary.RELATION_COMMAND (no \leqslant, \geqslant, \lt, \gt): widening it sends
# "k \geqslant 2" against a number to sympy instead of deciding it here (same verdict, another reason).
_ANY_RELATION_RE = re.compile(r"[=<>]|\\(?:le|ge|leq|geq|ne|neq|in|approx|equiv)(?![A-Za-z])")
_WORD_RE = re.compile(r"(?:\\text\{)?[A-Za-z][A-Za-z ]+\}?")


def _top_level_comma(text: str) -> bool:
    depth = 0
    for char in text:
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            return True
    return False


_TRAILING_WORD_RE = re.compile(r"(?:[0-9}]|\s)\s*(?!i\s*$)[A-Za-z]+\s*$")  # a lone i is imaginary, no unit


def may_end_in_unit(text: str) -> bool:
    """Whether ``text`` ends in a bare word after a number, a brace or a space (``5 m``, ``3ab``).

    math-verify drops such a word when it is a unit, so its letters are not variables.

    Example:
        >>> may_end_in_unit("5 cm"), may_end_in_unit("2x"), may_end_in_unit("x^2 + 1"), may_end_in_unit("1+2i")
        (True, True, False, False)
    """
    return _TRAILING_WORD_RE.search(text) is not None


_ZERO_RE = re.compile(r"(?<![0-9.])0+(?:\.0+)?(?![0-9]|\.[0-9])")  # a zero may make a variable vanish: 0x, x0, x^0


def never_a_number(text: str) -> bool:
    """Whether a (non-numeric) answer can never equal a plain number, for math-verify as for sympy.

    True for lists, tuples, sets, intervals and matrices, for words (``\\text{Evelyn}``), and for
    expressions in a free variable (``3R^2``, ``x^5 - 1``) that state no relation. Closed forms
    such as ``2\\sqrt{5}``, ``8\\pi`` or ``1+2i`` may, and are left to sympy; so is an expression
    whose variable could cancel (one written twice, ``x - x``, ``x/x``) or vanish (``0x``, ``x^0``:
    any number that is zero).

    Example:
        >>> [never_a_number(t) for t in ("(1, 2)", r"\\text{Evelyn}", "3R^2", r"2\\sqrt{5}", "1+2i", "x = 5", "5 cm")]
        [True, True, True, False, False, False, False]
        >>> [never_a_number(t) for t in ("x-x", r"\\frac{y}{y}", "0x", "x^0", "x^2+2y+1")]
        [False, False, False, False, True]
    """
    raw, text = text, canonical(text)
    if _top_level_comma(text) or "\\cup" in text or "\\begin{" in text or _WORD_RE.fullmatch(text):
        return True
    if _ANY_RELATION_RE.search(text) or may_end_in_unit(raw) or may_end_in_unit(text):
        return False
    bare = re.sub(r"\\[A-Za-z]+", " ", _TEXT_BLOCK_RE.sub("", text))  # a space: the 0 of "0\\pi2x" stays a zero
    variables = re.findall(r"[A-Za-df-hj-z]", bare)  # letters other than e and i
    return bool(variables) and len(set(variables)) == len(variables) and not _ZERO_RE.search(bare)


