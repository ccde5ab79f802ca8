"""The forms an answer and its gold are compared in: the same value written another way.

:func:`comparable` rewrites an (answer, gold) pair before any comparison, in plain string work:

* **clutter**: commands escaped twice (``\\\\frac``, JSON's doing), currency (``\\$15``, ``$129,200``, the typo ``\\15``), ``\\mathrm{e}``, a trailing ``\\``,
  spacing commands, percent words (``28 percent``, ``28 pct`` -> ``28\\%``), ``\\approx`` tails;
* **equations**: against a gold that states no relation, an answer ``lhs = rhs`` is its last
  right-hand side (``E(2020, 1993) = 76`` -> ``76``, ``160 - 36 - 65 = 59`` -> ``59``), element by
  element in a list (``x = -1, x = 2`` -> ``-1, 2``);
* **intervals**: ``x \\in [-2, 7]``, ``-2 \\le x \\le 7``, ``\\{x \\mid -2 \\le x \\le 7\\}`` and ``[-2, 7]`` are
  one form when either side is an interval or an inequality (``k < -5`` -> ``(-\\infty, -5)``); points left out make
  the union they are (``0 < x < 36, x \\ne 9`` -> ``(0, 9) \\cup (9, 36)``);
* **functions**: ``f(y) = 1`` against ``f(x) = 1`` is read in the gold's variable;
* **vectors**: a one-column or one-row matrix against a tuple (``(1, 2)``, ``\\langle 1, 2 \\rangle``)
  of as many entries is that tuple;
* **ordinals**: ``12^{\\text{th}}``, ``3rd`` -> ``12``, ``3``;
* **choices**: against a gold that is a choice letter (``C``, ``(C)``, ``\\textbf{C}``) the answer's
  leading letter (``C. x = 42``, ``\\text{(E) Hyperbola}`` -> ``C``, ``E``); against a named option
  (``(C) Parabola``, ``\\textbf{(B) }12``) the letter, or what the option names (:func:`named_option`);
* **decimal commas**: ``1000,99`` against ``1000.99`` (a comma that groups three digits stays a
  thousands separator: ``1,000``);
* **repeating decimals**: ``0.1\\overline{6}`` -> ``\\frac{1}{6}``;
* **plain-text values**: ``pi`` as ``\\pi``, ``14.0 + -1.0i`` as ``14.0 - i``, ``-3./2`` as ``-3/2``,
  ``\\mathrm{~N}`` as ``N``;
* **qualifiers**: a prose qualifier that ends the answer (``\\text{ for any positive integer } a``,
  ``\\text{ where } ...``; never a condition such as ``\\text{ if } ...``);
* **other scripts**: full-width and other decimal digits (``４２``) as ASCII digits;
* **temperatures**: a degree sign with its scale after a number (``700°C``, ``212 ^\\circ F``) is a unit;
* **superscript powers**: a power in superscripts right after a number (``10⁻⁷``, ``5²``) is
  ``10^{-7}``, ``5^{2}``; after a letter (``m⁻²``) it stays a unit's;
* **powered units**: units raised to powers after a number end the answer (``15000 \\text{ kcal m}^{-2}
  \\text{yr}^{-1}``, ``6 \\times 10^{-3} \\text{ m/s}^2`` -> ``15000``, ``6 \\times 10^{-3}``), and so does a unit
  written bare after a power of ten (``5.89 \\times 10^{-7} m``, ``3 \\times 10^{8} m/s``: a variable is never written there);
* **scale words**: a whole answer ``1.45 million``, ``\\text{2 dozen}`` -> ``1450000``, ``24``.

Each rewrite keeps the value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction

from ..text.latex import balanced, bracket_depths, top_level_parts
from ..text.prose import ascii_digits
from ..text.vocabulary import ORDER_COMMAND, RELATION_COMMAND, SCALE_WORD, SCALES, STYLED_TEXT_COMMAND, TEXT_COMMAND
from .exact import canonical, exact_number, plain_words
from .extract import is_mention

_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million "
    "billion and half halves third thirds quarter quarters".split()
)
_CURRENCY_RE = re.compile(r"\\\$\s?|(?<![\\$])\$(?=\s?[-0-9.])|[€£¥₹]|(?<=[0-9])\s?\\?\$(?=\s*$)")
_DIGIT_TYPO_RE = re.compile(r"(?<![\\])\\(?=[0-9])")  # \boxed{\15}: a dollar sign lost its $
_LETTER_WRAPPER_RE = re.compile(rf"{STYLED_TEXT_COMMAND}\s*\{{" r"[\s~]*(\(?[A-Za-z]\)?)[\s~]*\}")  # "\mathrm{~N}" too
_AFTER_NUMBER_RE = re.compile(r"[0-9]\s*(?:\\[,;: ]\s*)*$")  # "50 \text{ m}": a unit, not a letter to unwrap
_ROW_SPACING_RE = re.compile(r"\\\\\s*\[\s*-?[0-9.]+\s*(?:pt|em|ex|mm|cm)\s*\]")  # "\\\\[4pt]": a row break with spacing
_DOUBLED_COMMAND_RE = re.compile(r"(?<!\\)\\\\(?=[A-Za-z])")  # "\\\\frac" escaped twice (JSON) is "\\frac"
_NUMBER_IN_TEXT_RE = re.compile(rf"{TEXT_COMMAND}\s*\{{\s*(-?[0-9][0-9,.]*)\s+(?!(?:{SCALE_WORD}|score)\b)"
                                r"([A-Za-z][A-Za-z ./]*)\}", re.IGNORECASE)
_SPACING_COMMAND_RE = re.compile(r"(?<![\\])\\[,;: ]|~")
_NEGATIVE_SPACE_RE = re.compile(r"(?<![\\])\\!\s*")
_PERCENT_WORD_RE = re.compile(r"(?<=[0-9}])\s*(?:\\text\{\s*)?(?:percent(?:age)?|pct)\b\}?", re.IGNORECASE)
_UNICODE_RELATIONS = {"≤": "\\le ", "≥": "\\ge ", "≠": "\\ne ", "−": "-", "∞": "\\infty ", "∈": "\\in ", "∪": "\\cup ",
                      "∩": "\\cap ", "×": "\\times ", "·": "\\cdot ", "÷": "\\div ", "π": "\\pi "}
_STATED_RELATION_RE = re.compile(rf"(?<![<>!:=])=(?!=)|<|>|{RELATION_COMMAND}")  # not "==", "!=", ":="
_AND_RE = re.compile(r"(?<=[0-9)}\]])\s*(?:,\s*)?(?:\\text\{\s*(?:and|和)\s*\}|\band\b|[和与與及、，])\s*(?=[-+0-9(\[\\])")
# A prose qualifier that ends an answer: "(a,1) \text{ for any positive integer } a", "x = 2 \text{ where } x > 0"
# (never a condition: "6 \text{ if } n \text{ is even}" offers a case, not the answer).
_QUALIFIER_TAIL_RE = re.compile(rf"(?<![\s,])(?:\s|,|\\q?quad|\\[,;:])*{TEXT_COMMAND}\s*\{{\s*(?:for\s+(?:any|all|every|each|some)"
                                r"|where|with|such\s+that|in\s+which)(?![A-Za-z]).*$", re.DOTALL | re.IGNORECASE)
# Plain-text spellings of LaTeX values: "pi/2", "14.0 + -1.0i", "-3./2".
_PI_WORD_RE = re.compile(r"(?<![A-Za-z\\])pi(?![A-Za-z])")
_PLUS_MINUS_SIGN_RE = re.compile(r"\+\s*-")
_UNIT_IMAGINARY_RE = re.compile(r"(?<![0-9.])1(?:\.0+)?\s*(?=i(?![A-Za-z]))")  # "1.0i" is i
_BARE_POINT_RE = re.compile(r"(?<=[0-9])\.(?![0-9])(?=\s*[/)])")  # "3./2" is 3/2
# A temperature's unit after its number: "700°C", "700 ^\circ \text{C}", "212 °F" (a degree alone is an angle's: kept).
_TEMPERATURE_RE = re.compile(r"(?<=[0-9}])\s*(?:°|\^\s*\{?\s*\\circ\s*\}?)\s*(?:\\(?:text|mathrm)\s*\{\s*)?[CF](?![A-Za-z])\s*\}?")
# Units raised to powers after a number end the answer: "15000 \text{ kcal m}^{-2} \text{yr}^{-1}", "6 \times 10^{-3}
# \text{ m/s}^2", "3 \text{ m/s²}" (a unit without a power is read as one already: "50 \text{ m}").
_UNIT_GROUP = rf"\s*{TEXT_COMMAND}\s*\{{\s*[A-Za-zÅμΩ/ ⁻¹²³]+\}}\s*(?:\^\s*(?:\{{\s*-?\s*[0-9]\s*\}}|-?[0-9]))?"
_POWERED_UNITS_RE = re.compile(rf"(?<=[0-9}}])(?=(?:{_UNIT_GROUP})+\s*$)(?=.*(?:\^|[⁻¹²³]))(?:{_UNIT_GROUP})+\s*$", re.DOTALL)
_APPROX_RE = re.compile(r"\\approx(?![A-Za-z])|≈")
_SCALED_NUMBER_RE = re.compile(  # "1.45 million", "\text{2 dozen}", "3 \text{ thousand}": the whole (stripped) answer
    rf"(?:{TEXT_COMMAND}\s*\{{\s*)?" r"(?P<sign>-?)(?P<number>[0-9]{1,3}(?:,[0-9]{3})*(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?)"
    rf"\s?(?:{TEXT_COMMAND}\s*\{{\s*)?(?P<scale>{SCALE_WORD})s?"
    r"(?:\s*\})?(?:\s*\})?",  # no two optional runs of spaces side by side: linear
    re.IGNORECASE)
_REPEATING_RE = re.compile(r"(?<![0-9.,])(?P<whole>[0-9]{1,3}(?:,[0-9]{3})+|[0-9]*)\.(?P<fixed>[0-9]*)"
                           r"\\overline\s*(?:\{\s*(?P<braced>[0-9]+)\s*\}|(?P<digit>[0-9]))")

_LESS = {"\\le": "<=", "\\leq": "<=", "\\leqslant": "<=", "\\lt": "<", "<": "<", "<=": "<="}
_GREATER = {"\\ge": ">=", "\\geq": ">=", "\\geqslant": ">=", "\\gt": ">", ">": ">", ">=": ">="}
_INEQUALITY_TOKEN_RE = re.compile(rf"{ORDER_COMMAND}|<=|>=|<|>")
_LATIN_VARIABLE = r"[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?"  # x, a_1
_GREEK_VARIABLE = r"\\(?!infty(?![A-Za-z])|pi(?![A-Za-z]))[A-Za-z]+(?:_\{?[A-Za-z0-9]+\}?)?"  # \lambda, not \pi


def _inequality_patterns(variable: str) -> tuple[re.Pattern[str], ...]:
    """``a < v < b``, ``a > v > b``, ``v < a`` and ``a < v`` for a variable of this kind."""
    return (re.compile(rf"^(?P<a>[^<>]+?)(?P<r1><=?)\s*(?P<v>{variable})\s*(?P<r2><=?)(?P<b>[^<>]+)$"),
            re.compile(rf"^(?P<a>[^<>]+?)(?P<r1>>=?)\s*(?P<v>{variable})\s*(?P<r2>>=?)(?P<b>[^<>]+)$"),
            re.compile(rf"^\s*(?P<v>{variable})\s*(?P<r>[<>]=?)(?P<a>[^<>]+)$"),
            re.compile(rf"^(?P<a>[^<>]+?)(?P<r>[<>]=?)\s*(?P<v>{variable})\s*$"))


# A Latin letter is the variable before a Greek one: "\phi > x" bounds x.
_INEQUALITY_PATTERNS = (_inequality_patterns(_LATIN_VARIABLE), _inequality_patterns(_GREEK_VARIABLE))
_MEMBER_RE = re.compile(rf"^\s*(?P<v>{_LATIN_VARIABLE}|{_GREEK_VARIABLE})\s*\\in(?![A-Za-z])\s*(?P<set>.+)$", re.DOTALL)
_INTERVAL_RE = re.compile(r"^\s*(?:\\left)?\s*[\[(].*[\])]\s*$|\\cup", re.DOTALL)
# Set-builder notation: "\{x \mid x > 2\}", "\left\{ x : x>2 \right\}", "\{x \in \mathbb{R} \mid x > 2\}".
_SET_BUILDER_RE = re.compile(
    rf"^\s*(?:\\left\s*)?\\\{{\s*(?P<v>{_LATIN_VARIABLE}|{_GREEK_VARIABLE})\s*(?:\\in\s*\\mathbb\s*\{{?\s*R\s*\}}?\s*)?"
    r"(?:\\middle\s*\||\\mid(?![A-Za-z])|\\vert(?![A-Za-z])|\||:|\\colon(?![A-Za-z]))(?P<condition>[^{}]*?)(?:\\right\s*)?\\\}\s*$", re.DOTALL)
_FUNCTION_RE = re.compile(r"^\s*(?P<f>[A-Za-z])\s*\(\s*(?P<v>[A-Za-z])\s*\)\s*=(?!=)(?P<rhs>.+)$", re.DOTALL)
_DEFINITION_RE = re.compile(r"^\s*[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?(?:\(\s*[A-Za-z]\s*\))?\s*=(?!=)[^=<>]+$")
_PLUS_MINUS_RE = re.compile(r"^(?:\\pm|±)\s*(?P<value>.+)$")
_UNICODE_ROOT_RE = re.compile(r"√\s*(?:(?P<digits>[0-9]+(?:\.[0-9]+)?)|\((?P<group>[^()]*)\)|(?P<letter>[A-Za-z]))")
_CHOICE_GOLD_RE = re.compile(r"^\s*\(?\s*(?P<letter>[A-J])\s*\)?\s*\.?\s*$")
_CHOICE_ANSWER_RE = re.compile(  # "C. x = 42", "(C)", "\text{(E) Hyperbola}"
    rf"^\s*(?:{STYLED_TEXT_COMMAND}\s*\{{\s*)?" r"\(?\s*(?P<letter>[A-J])\s*(?:\)|\.|:|\}|$)")
# A choice with what it names: "(C) Parabola", "\textbf{(B) }12", "C. Parabola", "Option C".
_OPTION_RE = re.compile(r"^\s*(?:(?i:option|choice)\s*)?\(\s*(?P<letter>[A-J])\s*\)\s*[.:]?(?P<value>.*)$"
                        r"|^\s*(?i:option|choice)\s+(?P<named>[A-J])\s*[.:]?(?P<named_value>.*)$"
                        r"|^\s*(?P<dotted>[A-J])\s*[.:)]\s(?P<dotted_value>.*\S.*)$", re.DOTALL)  # values stripped after
_ANOTHER_CHOICE_RE = re.compile(r"\(\s*[A-J]\s*\)|(?:(?<![A-Za-z])(?i:and|or)|&|[,;])\s*\(?\s*[A-J](?![A-Za-z])")
_ORDINAL_RE = re.compile(
    rf"(?<=[0-9])\s*(?:\^\s*\{{?\s*(?:{TEXT_COMMAND}\s*\{{\s*)?(?:st|nd|rd|th)\s*\}}?\s*\}}?"
    rf"|{TEXT_COMMAND}\s*\{{\s*(?:st|nd|rd|th)\s*\}}|" r"(?:st|nd|rd|th)(?![A-Za-z]))")
_VECTOR_RE = re.compile(r"^\s*\\begin\{(?P<env>[pbB]?matrix)\}(?P<body>.*)\\end\{(?P=env)\}\s*$", re.DOTALL)
_ANGLE_RE = re.compile(r"^\s*(?:\\left\s*)?(?:\\langle|⟨)(?P<body>.*?)(?:\\right\s*)?(?:\\rangle|⟩)\s*$", re.DOTALL)
_PAREN_RE = re.compile(r"^\s*(?:\\left\s*)?\((?P<body>.*)(?:\\right\s*)?\)\s*$", re.DOTALL)
_COMMA_NUMBER_RE = re.compile(r"^\s*-?(?P<whole>[0-9]+),(?P<decimals>[0-9]+)\s*$")
_POINT_NUMBER_RE = re.compile(r"^\s*-?[0-9]+\.[0-9]+\s*$")


def has_relation(text: str) -> bool:
    """Whether ``text`` states a relation (``=``, ``<``, ``\\le``, ``\\in``, ...) rather than a value.

    Example:
        >>> has_relation("x = 5"), has_relation(r"k \\geqslant 2"), has_relation(r"\\frac{1}{2}")
        (True, True, False)
    """
    return _STATED_RELATION_RE.search(text) is not None


def right_hand_side(text: str) -> str:
    """What follows the last ``=`` outside brackets, else ``text``.

    Example:
        >>> right_hand_side("E(2020, 1993) = 76"), right_hand_side(r"\\text{Total} = \\$129 + \\$195 = \\$324")
        ('76', '\\\\$324')
    """
    depths = bracket_depths(text)
    for index in range(len(text) - 1, -1, -1):
        if text[index] == "=" and depths[index] == 0 and (index == 0 or text[index - 1] not in "<>!:=") \
                and text[index + 1:index + 2] != "=":
            rhs = text[index + 1:].strip()
            return rhs or text
    return text


def _unwrap_letter(match: re.Match[str]) -> str:
    """``\\textbf{C}`` -> ``C``, ``\\mathrm{e}`` -> ``e``; a unit after a number (``5 \\text{ m}``) stays,
    but never the constants ``e`` and ``i`` (``3\\,\\mathrm{i}`` is ``3i``)."""
    if match.group(1) in ("e", "i") or not _AFTER_NUMBER_RE.search(match.string, 0, match.start()):
        return match.group(1)
    return match.group()


def _repeating_as_fraction(match: re.Match[str]) -> str:
    """A repeating decimal as the fraction it is: ``0.1\\overline{6}`` -> ``\\frac{1}{6}``."""
    whole, fixed = match.group("whole").replace(",", "") or "0", match.group("fixed")
    repeating = match.group("braced") or match.group("digit")
    value = Fraction(int(whole + fixed + repeating) - int(whole + fixed), 10 ** len(fixed) * (10 ** len(repeating) - 1))
    return str(value.numerator) if value.denominator == 1 else f"\\frac{{{value.numerator}}}{{{value.denominator}}}"


def _scaled(match: re.Match[str]) -> str:
    """A number with a scale word as the number it is: ``1.45 million`` -> ``1450000``."""
    value = Decimal(match.group("number").replace(",", "")) * SCALES[match.group("scale").lower()]
    return match.group("sign") + format(value.normalize(), "f")


def _doubled_commands(text: str) -> str:
    return _DOUBLED_COMMAND_RE.sub(r"\\", text) if "\\begin" not in text else text  # in a matrix "\\\\" breaks a row


def _unicode_relations(text: str) -> str:
    for char, replacement in _UNICODE_RELATIONS.items():
        text = text.replace(char, replacement)
    return text


_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
# A power written in superscripts right after a number: "10⁻⁷", "5²" (after a letter, "m⁻²", it is a unit's power: kept).
_UNICODE_POWER_RE = re.compile(r"(?<=[0-9])[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+")


# A unit written bare after a power of ten ends the answer: "5.89 \times 10^{-7} m", "3 \times 10^{8} m/s".
_UNIT_AFTER_POWER_OF_TEN_RE = re.compile(r"(?P<power>10\^\{[-+]?[0-9]{1,3}\})\s*(?:[kMGcmunpμµ]?(?:m|g|s|J|eV|W|Hz|Pa|N|L|V|K|mol)"
                                         r"|Å|min|yr|years?)(?:/s(?:\^\{?2\}?)?)?\s*$")


def _unicode_powers(text: str) -> str:
    return _UNICODE_POWER_RE.sub(lambda power: "^{" + power.group().translate(_SUPERSCRIPTS) + "}", text)


def _scaled_answer(text: str) -> str:
    scaled = _SCALED_NUMBER_RE.fullmatch(text.strip())  # the whole answer: match, not a scan
    return _scaled(scaled) if scaled else text


def _unicode_root(match: re.Match[str]) -> str:
    return "\\sqrt{" + (match.group("digits") or match.group("group") or match.group("letter")) + "}"


def _trailing_clutter(text: str) -> str:
    text = text.strip().rstrip(".").strip()
    while text.endswith("\\") and not text.endswith("\\\\"):
        text = text[:-1].rstrip()
    return text


def _plain_text_values(text: str) -> str:
    if "pi" in text:
        text = _PI_WORD_RE.sub(r"\\pi ", text).rstrip()
    if "i" in text:
        text = _UNIT_IMAGINARY_RE.sub("", _PLUS_MINUS_SIGN_RE.sub("-", text))
    return _BARE_POINT_RE.sub("", text) if "." in text else text


def _plus_minus_list(text: str) -> str:
    if "\\pm" in text or "±" in text:
        parts = [_PLUS_MINUS_RE.match(part) for part in top_level_parts(text)]
        if all(parts):
            return ", ".join(f"{m.group('value')}, -{m.group('value')}" for m in parts)  # type: ignore[union-attr]
    return text


def _approximation(text: str) -> str:
    approx = _APPROX_RE.search(text)
    if approx:  # "\frac{1}{\sqrt3} \approx 0.577": the exact value; "x \approx 0.577": the approximation
        head, tail = text[:approx.start()].strip(), text[approx.end():].strip()
        return tail if not head or is_mention(head) else head
    return text


# The rewrites that clean an answer before it is compared, in the order they run (each one sees
# what the ones before it left: a unit is split from "\text{7 days}" only after letters are
# unwrapped, currency goes before scale words are read, "and" lists after percent words).
CLEANUPS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("digits of other scripts", ascii_digits),  # "４２" is 42
    ("commands escaped twice", _doubled_commands),  # "\\\\frac" (JSON's doing) is "\\frac"
    ("row spacing", lambda text: _ROW_SPACING_RE.sub(r"\\\\", text)),  # "\\\\[4pt]" is a row break
    ("unicode relations", _unicode_relations),  # "≤" is "\le", "−" is "-"
    ("unicode powers", _unicode_powers),  # "10⁻⁷" is "10^{-7}", "5²" is "5^{2}"
    ("plain-text values", _plain_text_values),  # "pi/2", "14.0 + -1.0i", "-3./2"
    ("qualifier tails", lambda text: _QUALIFIER_TAIL_RE.sub("", text)),  # "(a,1) \text{ for any integer } a" is (a,1)
    ("wrapped letters", lambda text: _LETTER_WRAPPER_RE.sub(_unwrap_letter, text)),  # "\textbf{C}" is "C"
    ("number in text", lambda text: _NUMBER_IN_TEXT_RE.sub(r"\1 \\text{ \2}", text)),  # "\text{7 days}" is 7 with a unit
    ("spacing", lambda text: _SPACING_COMMAND_RE.sub(" ", _NEGATIVE_SPACE_RE.sub("", text))),
    ("repeating decimals", lambda text: _REPEATING_RE.sub(_repeating_as_fraction, text)),
    ("temperatures", lambda text: _TEMPERATURE_RE.sub("", text)),  # "700°C" is 700
    ("powered units", lambda text: _POWERED_UNITS_RE.sub("", text)),  # "3 \text{ m s}^{-1}" is 3
    ("units after a power of ten", lambda text: _UNIT_AFTER_POWER_OF_TEN_RE.sub(r"\g<power>", text)),  # "5.89 \times 10^{-7} m"
    ("currency", lambda text: _DIGIT_TYPO_RE.sub("", _CURRENCY_RE.sub("", text))),
    ("scale words", _scaled_answer),  # "1.45 million" is 1450000
    ("unicode roots", lambda text: _UNICODE_ROOT_RE.sub(_unicode_root, text)),  # "√2" is "\sqrt{2}"
    ("percent words", lambda text: _PERCENT_WORD_RE.sub(r"\\%", text)),  # "28 percent" is "28\%"
    ("ordinals", lambda text: _ORDINAL_RE.sub("", text)),  # "3^{rd}" is 3
    ("and lists", lambda text: _AND_RE.sub(", ", text)),  # "7 \text{ and } -5", "1 和 3", "1、3" are lists
    ("trailing clutter", _trailing_clutter),  # a final "." or a lone "\"
    ("plus-minus lists", _plus_minus_list),  # "\pm 1, \pm 7" lists 1, -1, 7, -7
    ("approximations", _approximation),
)


def _clean(text: str) -> str:
    """``text`` after every rewrite of :data:`CLEANUPS`, in order.

    Example:
        >>> _clean(r"\\text{7 days}."), _clean(r"\\pm 2"), [name for name, _ in CLEANUPS][:3]
        ('7 \\\\text{ days}', '2, -2', ['digits of other scripts', 'commands escaped twice', 'row spacing'])
    """
    for _, rewrite in CLEANUPS:
        text = rewrite(text)
    return text


def _as_interval(text: str) -> str | None:
    """An inequality in one variable, or ``x \\in S``, as an interval (or ``S``); else ``None``."""
    found = _interval_of(text)
    return None if found is None else found[0]


def _interval_of(text: str) -> tuple[str, str] | None:
    """(interval, variable) of an inequality in one variable, of ``x \\in S`` or of the set of the ``x`` such
    that one holds (``\\{x \\mid x > 2\\}``); else ``None``."""
    builder = _SET_BUILDER_RE.match(text)
    if builder:
        found = _interval_of(builder.group("condition"))
        return found if found is not None and found[1] == builder.group("v") else None
    member = _MEMBER_RE.match(text)
    if member:
        return member.group("set").strip(), member.group("v")
    if not _INEQUALITY_TOKEN_RE.search(text):
        return None
    plain = _INEQUALITY_TOKEN_RE.sub(lambda m: " " + (_LESS.get(m.group()) or _GREATER[m.group()]) + " ", text)
    for between, between_down, bound_right, bound_left in _INEQUALITY_PATTERNS:
        for pattern, low, high in ((between, "a", "b"), (between_down, "b", "a")):
            match = pattern.match(plain)
            if match:
                r_low, r_high = (match.group("r1"), match.group("r2")) if low == "a" else (match.group("r2"), match.group("r1"))
                return (f"{'[' if r_low.endswith('=') else '('}{match.group(low).strip()}, "
                        f"{match.group(high).strip()}{']' if r_high.endswith('=') else ')'}"), match.group("v")
        bound = bound_right.match(plain) or bound_left.match(plain)
        if bound is None:
            continue
        relation, value = bound.group("r"), bound.group("a").strip()
        if bound.re is bound_left:  # "a < x" is "x > a"
            relation = relation.replace("<", ">") if "<" in relation else relation.replace(">", "<")
        closed = relation.endswith("=")
        if relation.startswith("<"):
            return f"(-\\infty, {value}{']' if closed else ')'}", bound.group("v")
        return f"{'[' if closed else '('}{value}, \\infty)", bound.group("v")
    return None


# Greedy and anchored, stripped afterwards: linear however long the text (lazy ones backtrack).
_EXCLUSION_RE = re.compile(rf"^\s*(?P<v>{_LATIN_VARIABLE})\s*\\neq?(?![A-Za-z])(?P<a>[^,]+)$")
_BOUNDS_RE = re.compile(r"^(?P<open>[\[(])(?P<low>[^,]+),(?P<high>[^,]+)(?P<close>[\])])$")


def _bound_value(text: str) -> Fraction | float | None:
    """The value of an interval's end or a point left out: an exact number or ``\\infty``, else ``None``."""

    text = text.strip()
    if text.lstrip("+-").strip() == "\\infty":
        return float("-inf") if text.startswith("-") else float("inf")
    number = exact_number(text)
    return None if number is None or number.percent else number.value


def _with_exclusions(text: str) -> str | None:
    """An interval with points left out, as the union it is (``0 < x < 36, x \\ne 9`` ->
    ``(0, 9) \\cup (9, 36)``, ``x \\ne 2`` -> ``(-\\infty, 2) \\cup (2, \\infty)``), else ``None``."""
    intervals, excluded, variables = [], {}, set()
    for part in top_level_parts(text):
        exclusion = _EXCLUSION_RE.match(part)
        if exclusion:
            variables.add(exclusion.group("v"))
            excluded[_bound_value(exclusion.group("a"))] = exclusion.group("a").strip()
            continue
        found = _interval_of(part)
        if found is not None:
            variables.add(found[1])
        intervals.append(found[0] if found else part.strip())  # "(0, 36), x \ne 9": the interval as written
    if not excluded or None in excluded or len(intervals) > 1 or len(variables) != 1:
        return None
    bounds = _BOUNDS_RE.match(intervals[0] if intervals else "(-\\infty, \\infty)")
    if bounds is None:
        return None
    start, end = bounds.group("low").strip(), bounds.group("high").strip()
    low, high = _bound_value(start), _bound_value(end)
    if low is None or high is None:
        return None
    pieces, opening, closing = [], bounds.group("open"), bounds.group("close")
    for value, point in sorted(excluded.items()):  # type: ignore[arg-type]
        if value == low:  # an end left out is an open end
            opening = "("
        elif value == high:
            closing = ")"
        elif low < value < high:
            pieces.append(f"{opening}{start}, {point})")
            start, opening = point, "("
    pieces.append(f"{opening}{start}, {end}{closing}")
    return " \\cup ".join(pieces)


def _intervals(answer: str, gold: str) -> tuple[str, str]:
    if "\\ne" in answer or "\\ne" in gold:  # against a set of reals only: "x \ne 2" is no answer to "2"
        answer_set, gold_set = _with_exclusions(answer), _with_exclusions(gold)
        if (answer_set or gold_set) and all(found or _INTERVAL_RE.search(side) or _interval_of(side)
                                            for found, side in ((answer_set, answer), (gold_set, gold))):
            answer, gold = answer_set or answer, gold_set or gold
    answer_found, gold_found = _interval_of(answer), _interval_of(gold)
    if answer_found is None and gold_found is None:
        return answer, gold
    if answer_found is not None and gold_found is not None and answer_found[1] != gold_found[1]:
        return answer, gold  # "y \in [0, 1]" is not "x \in [0, 1]"
    answer_interval, gold_interval = (None if found is None else found[0] for found in (answer_found, gold_found))
    answer_side = answer_interval or (answer if _INTERVAL_RE.search(answer) else None)
    gold_side = gold_interval or (gold if _INTERVAL_RE.search(gold) else None)
    if answer_side is None or gold_side is None:
        return answer, gold
    return answer_side, gold_side


def _rename_function(answer: str, gold: str) -> str:
    """``f(y) = y^2`` in the gold's variable when the gold is ``f(x) = ...``."""
    ours, theirs = _FUNCTION_RE.match(answer), _FUNCTION_RE.match(gold)
    if not ours or not theirs or ours.group("f") != theirs.group("f") or ours.group("v") == theirs.group("v"):
        return answer
    old, new = ours.group("v"), theirs.group("v")
    if re.search(rf"(?<![\\A-Za-z]){new}(?![A-Za-z])", ours.group("rhs")):
        return answer  # the gold's variable already means something else here
    rhs = re.sub(rf"(?<![\\A-Za-z]){old}(?![A-Za-z])", new, ours.group("rhs"))
    return f"{ours.group('f')}({new})={rhs.strip()}"


def _vector_entries(text: str) -> list[str] | None:
    """The entries of a one-column or one-row matrix, else ``None``."""
    match = _VECTOR_RE.match(text)
    if match is None:
        return None
    rows = [row.strip() for row in re.split(r"\\\\", match.group("body")) if row.strip()]
    if len(rows) > 1 and not any("&" in row for row in rows):
        return rows
    if len(rows) == 1:
        return [entry.strip() for entry in rows[0].split("&")]
    return None


def _tuple_entries(text: str) -> list[str] | None:
    """The entries of ``(a, b)``, ``\\left(a, b\\right)`` or ``\\langle a, b \\rangle``, else ``None``."""
    match = _ANGLE_RE.match(text) or _PAREN_RE.match(text)
    if match is None or not balanced(match.group("body")):
        return None
    entries = top_level_parts(match.group("body"))
    return entries if len(entries) > 1 else None


def _vectors(answer: str, gold: str) -> tuple[str, str]:
    """A one-column or one-row matrix against a tuple of as many entries: both as that tuple."""
    for vector, other in ((answer, gold), (gold, answer)):
        entries, others = _vector_entries(vector), _tuple_entries(other)
        if entries and others and len(entries) == len(others):
            as_tuple = f"({', '.join(entries)})", f"({', '.join(others)})"
            return as_tuple if vector is answer else as_tuple[::-1]
    return answer, gold


def _decimal_commas(answer: str, gold: str) -> tuple[str, str]:
    """``1000,99`` against ``1000.99``: a comma that does not group three digits is a decimal comma."""
    for comma, point in ((answer, gold), (gold, answer)):
        match = _COMMA_NUMBER_RE.match(comma)
        if match and _POINT_NUMBER_RE.match(point) and (len(match.group("decimals")) != 3 or match.group("whole") == "0"):
            converted = comma.replace(",", ".")
            return (converted, gold) if comma is answer else (answer, converted)
    return answer, gold


def named_option(text: str) -> tuple[str, str] | None:
    """``(letter, what it names)`` of a choice written with its option (``(C) Parabola``, ``\\textbf{(B) }12``,
    ``C. Parabola``; ``Option C`` names nothing more: ``""``), else ``None`` (a bare ``(C)`` included).

    Example:
        >>> named_option(r"\\textbf{(B) }12"), named_option("(C) Parabola."), named_option("Option C")
        (('B', '12'), ('C', 'Parabola'), ('C', ''))
        >>> named_option("(C)"), named_option("(A) and (C)"), named_option("(1, 2)")
        (None, None, None)
    """
    found = _OPTION_RE.match(plain_words(text))
    if found is None:
        return None
    letter = found.group("letter") or found.group("named") or found.group("dotted")
    value = (found.group("value") or found.group("named_value") or found.group("dotted_value") or "").strip()
    value = value[:-1].rstrip() if value.endswith(".") else value
    if not value and found.group("named") is None or _ANOTHER_CHOICE_RE.search(f" {value}"):
        return None
    return letter, value


def _against_option(answer: str, letter: str, value: str) -> tuple[str, str]:
    """An answer against a gold that is a named option: its letter against the letter (``C``, ``(C) ...``), else
    itself against what the option names (``Parabola``, ``12``); an answer that gives the option's letter
    with a value written otherwise is compared by value (``(B) 13`` against ``(B) 12``)."""
    stated = named_option(answer)
    if stated is not None:
        conflict = stated[0] == letter and stated[1] and value and canonical(stated[1]) != canonical(value)
        return (stated[1], value) if conflict else (stated[0], letter)
    choice = _CHOICE_ANSWER_RE.match(answer)
    if choice and not _ANOTHER_CHOICE_RE.search(answer, choice.end()):
        return choice.group("letter"), letter
    return answer, value or letter


def comparable(answer: str, gold: str) -> tuple[str, str]:
    """``(answer, gold)`` rewritten into forms that compare directly (see the module's list).

    Example:
        >>> comparable(r"\\$324.", "324"), comparable("E(2020, 1993) = 76", "76")
        (('324', '324'), ('76', '76'))
        >>> comparable(r"-2 \\le x \\le 7", r"x \\in [-2, 7]"), comparable("k < -5", r"(-\\infty,-5)")
        (('[-2, 7]', '[-2, 7]'), ('(-\\\\infty, -5)', '(-\\\\infty,-5)'))
        >>> comparable("f(y) = 1", "f(x)=1"), comparable("C. x = 42", r"\\textbf{C}"), comparable("1000,99", "1000.99")
        (('f(x)=1', 'f(x)=1'), ('C', 'C'), ('1000.99', '1000.99'))
        >>> comparable("2, -6", "a=2, a=-6"), comparable(r"\\pm 1, \\pm 7", "1,-1,7,-7"), comparable("(81*√2)/8", "1")
        (('2, -6', '2, -6'), ('1, -1, 7, -7', '1,-1,7,-7'), ('(81*\\\\sqrt{2})/8', '1'))
    """
    answer, gold = _clean(answer), _clean(gold)
    option = named_option(gold)
    if option is not None:
        answer, gold = _against_option(answer, *option)
    choice = _CHOICE_GOLD_RE.match(gold)
    if choice:
        letter = _CHOICE_ANSWER_RE.match(answer)
        if letter and _ANOTHER_CHOICE_RE.search(answer, letter.end()):  # "(A) and (C)": two choices, as written
            letter = None
        return (letter.group("letter") if letter else answer), choice.group("letter")
    answer, gold = _vectors(answer, gold)
    answer, gold = _intervals(answer, gold)
    if not has_relation(gold):
        if "=" in answer:
            answer = ", ".join(right_hand_side(part) for part in top_level_parts(answer))
    elif not has_relation(answer) and _defines_values(gold):
        gold = ", ".join(right_hand_side(part) for part in top_level_parts(gold))  # gold "k=3", answer "3"
    else:
        answer = _rename_function(answer, gold)
    answer, gold = _vectors(answer, gold)  # "\mathbf{v} = (1, 2)" once its right-hand side is read
    return _decimal_commas(answer, gold)


def union_of_alternatives(alternatives: list[str], gold: str) -> str | None:
    """Inequalities or intervals offered with "or" (``x < 2`` or ``x > 3``) as one union, when the
    gold is an interval or a union; else ``None``.

    Example:
        >>> union_of_alternatives(["x<2", "x > 3"], r"(-\\infty, 2) \\cup (3, \\infty)")
        '(-\\\\infty, 2) \\\\cup (3, \\\\infty)'
        >>> union_of_alternatives(["x<2", "x > 3"], "2") is None
        True
    """
    gold = _clean(gold)
    if not (_INTERVAL_RE.search(gold) or _as_interval(gold)):
        return None
    found = [_interval_of(_clean(part)) for part in alternatives]  # inequalities only: "[0,2] or [0,3]" is a hedge
    if any(interval is None for interval in found) or len({variable for _, variable in found}) != 1:  # type: ignore[misc]
        return None
    return " \\cup ".join(interval for interval, _ in found)  # type: ignore[misc]


def listed_parts(text: str) -> list[str]:
    """The elements of a list as written, ``and`` lists included (``1 and 3``, ``1 和 3``, ``1、3``).

    Example:
        >>> listed_parts("1 和 3"), listed_parts("(1, 2)"), listed_parts("-1, 2 and 5")
        (['1', '3'], ['(1, 2)'], ['-1', '2', '5'])
    """
    return top_level_parts(_AND_RE.sub(", ", text))


def _defines_values(text: str) -> bool:
    """Whether every element of ``text`` is ``name = value`` (``a=2, a=-6``, ``f(x)=x+1``, ``d=...``)."""
    return all(_DEFINITION_RE.match(part) for part in top_level_parts(text))


def number_words_only(text: str) -> bool:
    """Whether ``text`` is a number written in words (``forty two``), which no maths parser reads.

    Example:
        >>> number_words_only("forty two"), number_words_only("Forty-two."), number_words_only("odd"), number_words_only("2")
        (True, True, False, False)
    """
    words = re.findall(r"[A-Za-z]+", text)
    return bool(words) and not re.search(r"[0-9\\]", text) and all(word.lower() in _NUMBER_WORDS for word in words)
