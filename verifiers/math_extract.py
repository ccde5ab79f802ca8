"""Reading the final answer a maths completion states, and which rule read it.

Plain string work, linear in the text, safe in the trainer's own process. The rules, in order
of precedence (the first that reads something wins; ``Extraction.source`` names it):

1. ``bare``: the whole completion is an answer and nothing else (``42``, ``\\frac{1}{2}``,
   ``(1,2)``, ``x^2+2x+1``, ``\\text{odd}``, ``E``, a matrix, ``28 percent``): what golden files
   hold, what an ``<answer>`` tag holds once a trainer strips it, what terse models write.
2. ``answer tag``: the last ``<answer>...</answer>``; its content is read with the rules below,
   else taken whole.
3. ``boxed``: the last ``\\boxed{}`` / ``\\fbox{}``; boxes joined by ``,``, ``and`` or spacing
   (``\\boxed{-1}$ and $\\boxed{-9}``, ``\\boxed{(2, 2)} \\quad \\text{and} \\quad \\boxed{(6, 2)}``)
   are one answer. A later *final answer* phrase overrides a box.
4. ``final answer``: ``The final answer is $X$``, ``Answer: X``, ``**Answer:** X``,
   ``The correct option is (C)``; when the phrase is followed by a sentence (``Final Answer: The
   largest $n$ is 34.``) the value in it.
5. ``bold``: the last ``**X**`` whose content is an answer (``**6**``, ``**$7.00**``), or the
   value of a bold sentence that ends the text (``**There are 63 points.**``).
6. ``math span`` / ``last number``: whichever comes last in the text, the last ``$...$``,
   ``\\(...\\)``, ``\\[...\\]`` that states a value (not a bare mention such as ``\\(n\\)``, not
   prose caught between two dollar signs; spans joined by ``,`` / ``and`` are one answer), or
   the last number written in prose (``So it took James 2 hours.``, any script's digits,
   ``12π``, ``3√13``, ``2^10``, ``1.45 million``). A remark after the answer is skipped (``Check: ...``,
   ``x = 2 because ...``, ``8 limbs (5 arms and 3 legs).``, ``12π ≈ 37.7``, ``227 minutes, or 3
   hours and 47 minutes``); a completion cut off mid-sentence (:func:`looks_cut_off`) has no answer.

A final answer (rules 2-5) always beats a number met earlier in the reasoning; the fallbacks
of rule 6 apply only when no final answer exists.

Besides the answer, ``Extraction.group`` holds every answer boxed in the last paragraph when
the completion boxes several there (``The maximum is \\boxed{3}, the minimum \\boxed{1}``):
the maths verifier compares it when the gold itself has several elements.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from .latex import boxed_spans

Source = Literal["bare", "answer tag", "boxed", "final answer", "bold", "math span", "last number"]
HEDGE = " \u27eaor\u27eb "  # " ⟪or⟫ ": joins answers offered as alternatives ("\boxed{5} or \boxed{7}")

_OPEN_TAG_RE = re.compile(r"<answer>", re.IGNORECASE)
_CLOSE_TAG_RE = re.compile(r"</answer>", re.IGNORECASE)
_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_DELIMITER_RE = re.compile(r"(?<!\\)\$\$|(?<!\\)\$|\\\(|\\\)|\\\[|\\\]")
_CLOSERS = {"$$": "$$", "$": "$", "\\(": "\\)", "\\[": "\\]"}
_INLINE = ("$", "\\(")  # inline maths never spans a line (as in Markdown and math-verify)

_PHRASE_RE = re.compile(r"\b(?:(?P<final>final\s+)?answer|(?P<option>(?:correct|right)\s+(?:option|choice)))\b"
                        r"[ \t*_]*(?P<mark>is\b|:)[ \t*_:]*", re.IGNORECASE)
_CHOICE_RE = re.compile(r"^(?!I\s+[a-z])\(?[A-J]\)?(?:[\s.:,;]|$)")
# "The answer is 1, no matter how ...": the value that leads the last sentence, followed by an
# elaboration (never "or", "no", "then": alternatives, corrections and hypotheses stay unread).
_LEADING_VALUE_RE = re.compile(r"^(?P<value>[-+\u2212]?(?:\\?\$)?[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?(?:/[0-9]+)?(?:\s?\\?%)?)"
                               r"(?=,?\s+(?:because|since|which\s+is|no\s+matter)\b)")
_HYPOTHESIS_RE = re.compile(r"\b(?:suppose|assume|assuming|if|guess|maybe|perhaps|say|think|whether)\b", re.IGNORECASE)
# After a plain "answer is" only maths counts ("so our answer is correct" is not an answer).
_MATHS_START_RE = re.compile(r"[-+\u2212$\\(\[{0-9.]")
_PHRASE_TAIL_RE = re.compile(r"(?:\.\s|\n|\.?\s*I hope it is correct|\.$)", re.IGNORECASE)
_PHRASE_SPAN_LIMIT = 300

# Between two answers that are one answer: delimiters, spacing, commas and "and" only.
_JOIN_NOISE_RE = re.compile(r"\\(?:quad|qquad|text|textbf|mathrm|mbox)\b|\\[,;:! ]|\\\(|\\\)|\\\[|\\\]|[${}\s,;.&]")
_JOIN_WORD_RE = re.compile(r"^(?:and)?$", re.IGNORECASE)
_INEQUALITY_RE = re.compile(r"<|>|\\(?:le|ge|leq|geq|lt|gt|ne|neq|leqslant|geqslant)(?![A-Za-z])|[≤≥≠]")
_PARAGRAPH_END_RE = re.compile(r"[.!?]\s*\n\s*\n")  # a sentence that ends a paragraph: what follows is new
_LOOSE_GAP = 240  # characters of prose between boxes of one paragraph that still group
_MAX_GROUP = 8

# Remarks after the answer, read only by the fallbacks (rule 6): a check, a justification, a
# parenthetical in words. Nothing after a cut may conclude ("therefore", "so the answer").
_CHECK_SENTENCE_RE = re.compile(
    r"(?:(?<=[.!?:)]\s)|(?<=\n))\s*\(?\s*(?:(?:let'?s|let\s+us|we\s+can|to)\s+)?(?:check|verify|verification|double[- ]check)"
    r"(?:ing)?\b|(?:(?<=[.!?)]\s)|(?<=\n))\s*(?:this\s+(?:makes\s+sense|is\s+consistent|agrees|checks\s+out)"
    r"|as\s+a\s+(?:quick\s+)?(?:check|sanity\s+check))\b", re.IGNORECASE)
_UNIT_WORD = (r"(?:second|minute|hour|day|week|month|year|cent|dollar|foot|feet|inch|inches|yard|mile"
              r"|(?:centi|milli|kilo)?(?:meter|gram)|pound|ounce|liter|gallon|quart|pint|cup|dozen|percent)s?\b")
_CLAUSE_MARKER_RE = re.compile(
    r"(?:[,;]\s*|(?<!\s)\s+)(?:because|since|and\s+indeed|no\s+matter|which\s+agrees|note\s+that)\b"
    r"|,\s+or\s+(?:about|approximately|roughly)\b|\s?(?P<approx>≈)"
    # the same value in units mixed: "227 minutes, or 3 hours and 47 minutes" (one number after
    # "or", as in "1.5 hours, or 90 minutes", could be the answer asked for: nothing is cut)
    rf"|(?<=[0-9])\s?{_UNIT_WORD},\s+or\s+[0-9][0-9,.]*\s?{_UNIT_WORD}\s+(?:and\s+)?[0-9][0-9,.]*\s?{_UNIT_WORD}",
    re.IGNORECASE)
_OPERAND_BEFORE_RE = re.compile(r"[-+×*/÷]\s*[^-+×*/÷=\s]+\s*$")  # "4 × 2.5 ≈ 10": 2.5 is no value of its own
_OR_BETWEEN_RE = re.compile(r"(?<![\\A-Za-z])or(?![A-Za-z])", re.IGNORECASE)
_SENTENCE_BREAK_RE = re.compile(r"[.!?](?:\s|$)")
_RESTATED_RE = re.compile(r"\bor\s*,?\s*(?:equivalently|simply|in\s+other\s+words|written\s+as|expressed\s+as|as\s+a)\b",
                          re.IGNORECASE)
_UNIT_AFTER_ANSWER_RE = re.compile(rf"[\s$)\\]*(?:text\s*\{{\s*)?{_UNIT_WORD}", re.IGNORECASE)
_REMARK_WINDOW = 600  # characters from the end where a closing remark may start
_REMARK_WORDS = ("check", "verif", "because", "since", "indeed", "no matter", "agrees", "note that", "or about",
                 "approximately", "roughly", "makes sense", "consistent", "≈", ", or ")
_REMARK_WORD_RE = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")  # a word, not a command's name
_SENTENCE_END_RE = re.compile(r"(?<!\bi\.e)(?<!\be\.g)(?<!\betc)[.!?]\s+|\n")
# A completion cut off mid-sentence (see looks_cut_off): its last value is no answer.
_OPEN_INLINE_RE, _CLOSE_INLINE_RE = re.compile(r"(?<!\\)\\\("), re.compile(r"(?<!\\)\\\)")
_OPEN_DISPLAY_RE, _CLOSE_DISPLAY_RE = re.compile(r"(?<!\\)\\\["), re.compile(r"(?<!\\)\\\]")  # not "\\\\[4pt]"
_CUT_OFF_WINDOW = 2000  # characters from the end that looks_cut_off reads
_OPENS_MATHS_RE = re.compile(r"\s*[\\A-Za-z(\[{]")  # "$$x = ..." opens maths; "$$<<16+27=43>>" (GSM8K notes) does not
_OPEN_DOLLAR_RE = re.compile(r"(?<![0-9])(?<![0-9] )\$(?!\s?[0-9.])[^$]+$")  # not a price: "$5", "2,74 $"
_DANGLING_SIGNS = frozenset(",=+-/(:×÷")  # a sign that needs what follows it
_DANGLING_COMMANDS = ("\\times", "\\cdot", "\\div", "\\frac", "\\sqrt")
_DANGLING_WORDS = frozenset("the a an of to and or is are was were be by with from into than then therefore thus hence "
                            "gives giving equals".split())
# A clause that only leads to a statement, then one maths statement and nothing more: "Since $f(5) = 7$".
_LEADING_CLAUSE_RE = re.compile(r"\s*(?:since|if|when|because|given|substituting|once|after|although|while|unless"
                                r"|now\s+(?:substitute|plug|compute|calculate))\s+(?:\$[^$]+\$|\\\(.+?\\\)|\S+\s*=\s*\S+)\s*$",
                                re.IGNORECASE)
_RULE_LINE_RE = re.compile(r"(?:\n[ \t]*(?:[-*_=][ \t]*){3,})+\s*$")  # a Markdown rule closing the text
_VALUE_HINT_RE = re.compile(r"[0-9]|\\\(|\\\[|\$")
_CONCLUDES_RE = re.compile(r"\b(?:therefore|thus|hence|so|instead|actually|wait|correct(?:ed|ion)?|the\s+(?:final\s+)?answer"
                           r"|in\s+conclusion|we\s+(?:take|get|obtain|choose|have))\b", re.IGNORECASE)

_BOLD_RE = re.compile(r"\*\*([^*\n]{1,80})\*\*")
_ENUMERATOR_RE = re.compile(r"^\s*(?:[0-9]+|[A-Za-z])[.)]\s*$")

# A bare answer: maths with at most a few words that are part of answers.
_COMMAND_RE = re.compile(r"\\(?:begin|end)\s*\{[^{}]*\}|\\(?:text|textbf|textit|textrm|mathrm|mathbf|mbox|operatorname)\s*\{[^{}]*\}|\\[A-Za-z]+")
_WORD_RE = re.compile(r"[^\W\d_]{3,}")
_ANSWER_WORDS = frozenset({"and", "percent", "pct", "percentage", "or"})
_SHORT_WORD_RE = re.compile(r"(?<![A-Za-z\\])(?:so|is|it|to|of|in|on|at|we|be|as|by|if|an|do|no|my|he|us|am)(?![A-Za-z])",
                            re.IGNORECASE)
_SCRIPT_WORD_RE = re.compile(r"[^\W\d_a-zA-Z]{2}")  # two letters of a script other than Latin
_MATHS_CHAR_RE = re.compile(r"[0-9\\^_=+\-*/()\[\]{}<>|]")
_BARE_LIMIT = 400

# A mention, not a value: a variable, a function of variables, a point or segment name.
_MENTION_RE = re.compile(
    r"^\s*(?:[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?(?:\^\{?[A-Za-z]\}?)?(?:\([A-Za-z, ]*\))?|[A-Z]{2,4}"
    r"|\\(?:angle|triangle|overline|mathcal|mathbb)\s*\{?[A-Za-z]{1,4}\}?)\s*$"
)

# A number in prose: sign, currency, digits with separators, fraction, plain-text root, power,
# π or scale word (``√117``, ``3√13``, ``2^10``, ``12π``, ``1.45 million``: never only their
# digits), percent word.
_PROSE_NUMBER_RE = re.compile(
    r"(?<![A-Za-z0-9_.,^\\{}/|])(?P<sign>[-\u2212\u2013])?(?:\\?\$|[€£¥₹])?\s?(?P<root>√)?"
    r"(?P<number>[0-9]+(?:[.,][0-9]+)*|\.[0-9]+)(?:/(?P<denominator>[0-9]+))?(?![0-9])"
    r"(?:√(?P<radicand>[0-9]+)|\^(?P<power>[0-9]+)(?![0-9.,]?[0-9])|\s?(?P<pi>π)"
    r"|\s(?P<scale>hundred|thousand|million|billion|trillion|dozen)s?\b)?"
    r"(?:/(?P<under>[0-9]+)(?![0-9.,]?[0-9]))?"  # "2√3/3", "12π/5": the whole fraction
    r"(?:\s?(?P<percent>\\?%|percent\b|pct\b))?"
)
_HEDGE_GAP_RE = re.compile(r"[\s,$]*or\b[\w\s$]{0,15}")  # "5 or 7", "5, or maybe 7": alternatives
# A number that only qualifies the answer before it: "... for the 2 shirts", "... 10 years from now".
_MODIFIER_BEFORE_RE = re.compile(r"\b(?:in|for|of|from|to|during|within|over|per|after|by)\s+"
                                 r"(?:(?:the|his|her|their|its|all|each|every)\s+)?(?:\\?\$\s?)?$", re.IGNORECASE)
_MODIFIER_AFTER_RE = re.compile(r"\s*[A-Za-z-]*\s*(?:from\s+now|ago|later|earlier)\b", re.IGNORECASE)
_OPERAND_RE = re.compile(r"\s*(?:[-+*/×÷=]|x(?![A-Za-z])|\\times|\\cdot)")
_THOUSANDS_RE = re.compile(r"^[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?$")
_DECIMAL_COMMA_RE = re.compile(r"^(?P<whole>[0-9]+),(?P<decimals>[0-9]+)$")


@dataclass(frozen=True)
class Extraction:
    """The final answer read from a completion, by which rule, and any answers stated with it.

    Example:
        >>> Extraction("18", "boxed").source
        'boxed'
    """

    text: str
    source: Source
    group: str | None = None  # several answers boxed in the last paragraph, joined with ", "


# ---------------------------------------------------------------------------------------------
# Pieces


def math_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of every ``$...$``, ``$$...$$``, ``\\(...\\)`` and ``\\[...\\]``, in order.

    Inline spans (``$``, ``\\(``) end at a line break: a ``$`` left open there was a price.

    Example:
        >>> [content for _, _, content in math_spans(r"so $x=1$ and \\[y = 2\\] cost $5\\n then")]
        ['x=1', 'y = 2']
    """
    spans = []
    opener: tuple[str, int] | None = None
    for match in _DELIMITER_RE.finditer(text):
        token = match.group()
        if opener is not None and opener[0] in _INLINE and "\n" in text[opener[1]:match.start()]:
            opener = None
        if opener is None:
            if token in _CLOSERS:
                opener = (token, match.end())
        elif token == _CLOSERS[opener[0]]:
            spans.append((opener[1] - len(opener[0]), match.end(), text[opener[1]:match.start()]))
            opener = None
    return spans


def strip_math_delimiters(text: str) -> str:
    """``text`` without one pair of enclosing maths delimiters.

    Example:
        >>> strip_math_delimiters(r" \\( x+1 \\) "), strip_math_delimiters("$a$ and $b$")
        ('x+1', '$a$ and $b$')
    """
    text = text.strip()
    for opener, closer in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if text.startswith(opener) and text.endswith(closer) and len(text) >= len(opener) + len(closer):
            inner = text[len(opener):len(text) - len(closer)]
            if opener != "$" or "$" not in inner:
                return inner.strip()
    return text


def prose_words(text: str) -> list[str]:
    """Words of three or more letters outside LaTeX commands and ``\\text{}`` blocks.

    Example:
        >>> prose_words(r"\\text{so} x = 5 meters and \\frac{1}{2}")
        ['meters', 'and']
    """
    return _WORD_RE.findall(_COMMAND_RE.sub(" ", text))


def is_bare_answer(text: str) -> bool:
    """Whether ``text`` is only an answer: one token, or maths with no words but ``and``/``percent``.

    Example:
        >>> [is_bare_answer(t) for t in ("42", r"\\frac{1}{2}", "(1,2)", "E", "28 percent", r"\\text{odd}")]
        [True, True, True, True, True, True]
        >>> [is_bare_answer(t) for t in ("no idea", "So the answer is 4.", r"\\boxed{4}", "")]
        [False, False, False, False]
    """
    text = text.strip()
    if not text or len(text) > _BARE_LIMIT or "\\boxed" in text or "\\fbox" in text:
        return False
    if not any(char.isspace() for char in text):
        return _SCRIPT_WORD_RE.search(text) is None  # "所以答案是12。" is a sentence written without spaces
    if "\n\n" in text or not _MATHS_CHAR_RE.search(text):
        return False
    if _SHORT_WORD_RE.search(_COMMAND_RE.sub(" ", text)):
        return False  # "So 7.", "x is 5": a sentence
    return all(word.lower() in _ANSWER_WORDS for word in prose_words(text))


def is_mention(text: str) -> bool:
    """Whether ``text`` names something rather than stating a value (``n``, ``f(x)``, ``a_n``, ``AB``).

    Example:
        >>> is_mention("f(x)"), is_mention(r"\\triangle ABC"), is_mention("12"), is_mention("x + 1")
        (True, True, False, False)
    """
    return _MENTION_RE.match(text) is not None


def _is_value(content: str) -> bool:
    """Whether a maths span's content states a value: not empty, not a mention, not prose."""
    content = content.strip().rstrip(".,;")
    if not content or is_mention(content):
        return False
    return len(prose_words(content)) < 2 or "=" in content and "\n" not in content  # "Total\ Cost = \$300"


def _ascii_digits(text: str) -> str:
    """Digits of any script (Arabic-Indic, Devanagari, full-width, ...) as ASCII digits."""
    if text.isascii():
        return text
    return "".join(str(unicodedata.digit(char)) if char.isdigit() and not char.isascii()
                   and unicodedata.digit(char, None) is not None else char for char in text)


def prose_number(match: re.Match[str]) -> str:
    """The number a ``_PROSE_NUMBER_RE`` match holds, written plainly (``2,74 $`` -> ``2.74``).

    A comma is a thousands separator where it groups three digits (``1,000``) and a decimal
    comma otherwise (``1000,99``, ``0,5``).
    """
    number = match.group("number")
    if _THOUSANDS_RE.match(number) and not number.startswith("0,"):
        number = number.replace(",", "")
    else:
        decimal = _DECIMAL_COMMA_RE.match(number)
        if decimal:
            number = f"{decimal.group('whole')}.{decimal.group('decimals')}"
    denominator = match.group("denominator")
    if match.group("root"):
        number = f"\\sqrt{{{number}}}"
    if match.group("power") and denominator:  # "1/2^10": the power is the denominator's
        denominator = f"{denominator}^{{{match.group('power')}}}"
    elif match.group("radicand"):
        number += f"\\sqrt{{{match.group('radicand')}}}"
    elif match.group("power"):
        number += f"^{{{match.group('power')}}}"
    elif match.group("pi"):
        number += "\\pi"
    elif match.group("scale"):
        number += f" {match.group('scale')}"  # read as the number it scales to (math_forms)
    if denominator:
        number = f"{number}/{denominator}"
    if match.group("under"):
        number = f"{number}/{match.group('under')}"
    sign = "-" if match.group("sign") else ""
    return sign + number + ("\\%" if match.group("percent") else "")


def last_prose_number(text: str, start: int = 0) -> tuple[int, str] | None:
    r"""Start and plain text of the last number written in ``text[start:]``, else ``None``.

    Two numbers offered as alternatives (``5 or 7``, ``5, or maybe 7``) are read together, as a
    hedge that matches no single gold.

    Example:
        >>> last_prose_number("So it took James 2 hours to walk to the store.")
        (17, '2')
        >>> last_prose_number("Soucis : 2,74 $ a.."), last_prose_number("AZYUK2A"), last_prose_number("It is 5 or 7.")
        ((9, '2.74'), None, (6, '5 ⟪or⟫ 7'))
        >>> last_prose_number("The speed is 12π m/s."), last_prose_number("d = 3√13.")
        ((13, '12\\pi'), (4, '3\\sqrt{13}'))
    """
    text = _ascii_digits(text)
    previous = found = None
    for match in _PROSE_NUMBER_RE.finditer(text, start):
        previous, found = found, match
    if found is None:
        return None
    if previous is not None and _HEDGE_GAP_RE.fullmatch(text, previous.end(), found.start("number")):
        return previous.start("number"), f"{prose_number(previous)}{HEDGE}{prose_number(found)}"
    return found.start("number"), prose_number(found)


def before_modifier(text: str, start: int) -> tuple[int, str] | None:
    """When the prose number at ``start`` only qualifies the sentence's answer (``$36 for the 2
    shirts``, ``26 inches in 13 years``, ``109 years old 10 years from now``), the answer: the
    number before it in the sentence that is no operand and no modifier itself; else ``None``.

    Example:
        >>> text = "So, Davos paid $36 for the 2 shirts."
        >>> before_modifier(text, text.index("2 shirts"))
        (16, '36')
        >>> text = "She has 5 + 3 = 8 in 2 bags."
        >>> before_modifier(text, text.index("2 bags")), before_modifier("It takes 4 hours.", 9)
        ((16, '8'), None)
    """
    text = _ascii_digits(text)  # same length: positions hold
    found = next(_PROSE_NUMBER_RE.finditer(text, start), None)
    if found is None or found.start("number") != start:
        return None
    sentence = max(text.rfind(". ", 0, start), text.rfind("\n", 0, start)) + 1
    if not (_MODIFIER_BEFORE_RE.search(text, sentence, found.start()) or _MODIFIER_AFTER_RE.match(text, found.end())):
        return None
    for candidate in reversed(list(_PROSE_NUMBER_RE.finditer(text, sentence, found.start()))):
        if _OPERAND_RE.match(text, candidate.end()) or _MODIFIER_BEFORE_RE.search(text, sentence, candidate.start()):
            continue
        return candidate.start("number"), prose_number(candidate)
    return None


def _joined(text: str, first_end: int, second_start: int) -> bool:
    """Whether the text between two answers joins them into one (``,``, ``and``, spacing)."""
    between = text[first_end:second_start]
    return len(between) <= 80 and bool(_JOIN_WORD_RE.match(_JOIN_NOISE_RE.sub("", between))) \
        and not _PARAGRAPH_END_RE.search(between)


def _offered_instead(text: str, first_end: int, second_start: int) -> bool:
    """Whether the text between two answers offers the second as an alternative: ``or`` alone, or
    within the sentence (``\\boxed{3} books, or \\boxed{6} if ...``), unless the second restates
    the first (``\\boxed{2} hours, or \\boxed{120} minutes``, ``or equivalently``)."""
    between = text[first_end:second_start]
    if len(between) > 80 or _PARAGRAPH_END_RE.search(between):
        return False
    return _JOIN_NOISE_RE.sub("", between).lower() == "or" or (
        _OR_BETWEEN_RE.search(between) is not None and not _SENTENCE_BREAK_RE.search(between)
        and not _UNIT_AFTER_ANSWER_RE.match(between) and not _RESTATED_RE.search(between))


def _joined_run(text: str, parts: list[tuple[int, int, str]]) -> tuple[int, str]:
    """Start and joined content of the last run of answers joined by ``_joined``."""
    start, end, content = parts[-1]
    contents = [content.strip()]
    for previous in reversed(parts[:-1]):
        if previous[1] > start or not _joined(text, previous[1], start):
            break
        if bool(_INEQUALITY_RE.search(previous[2])) != bool(_INEQUALITY_RE.search(contents[0])):
            break  # "Since $x > 0$, $x = 3$": a condition, then the answer
        contents.insert(0, previous[2].strip())
        start = previous[0]
    if len(contents) == 1:
        return start, contents[0]
    return start, ", ".join(part.strip(", ") for part in contents)  # "$-1, 0,$ and $1$"


def _last_answer_run(text: str, parts: list[tuple[int, int, str]]) -> tuple[int, str]:
    """:func:`_joined_run`, with the answers offered before it as alternatives joined by ``HEDGE``
    (``\\boxed{5} or \\boxed{7}``, ``$x < 2$ or $x > 3$``)."""
    start, content = _joined_run(text, parts)
    for previous in reversed([part for part in parts if part[1] <= start]):
        if not _offered_instead(text, previous[1], start):
            break
        start, content = previous[0], f"{previous[2].strip()}{HEDGE}{content}"
    return start, content


def last_boxed(text: str) -> tuple[int, str, str | None] | None:
    """Start and content of the last boxed answer (joined boxes read together), and the paragraph's group.

    Example:
        >>> last_boxed(r"roots $\\boxed{1}$ and $\\boxed{2}$")[1:]
        ('1, 2', None)
        >>> last_boxed(r"The maximum is \\boxed{3}, the minimum is \\boxed{1}.")[1:]
        ('1', '3, 1')
        >>> last_boxed(r"$\\boxed{5}$ or $\\boxed{7}$")[1]  # alternatives: a hedge, unless they are equal
        '5 ⟪or⟫ 7'
    """
    spans = [span for span in boxed_spans(text) if span[2].strip()]
    if not spans:
        return None
    start, content = _last_answer_run(text, spans)
    group = [spans[-1]]
    for previous in reversed(spans[:-1]):
        gap = text[previous[1]:group[0][0]]
        if len(group) >= _MAX_GROUP or len(gap) > _LOOSE_GAP or "\n\n" in gap or re.search(r"\bor\b", gap):
            break
        group.insert(0, previous)
    joined_group = ", ".join(part[2].strip() for part in group) if len(group) > 1 else None
    return start, content, joined_group if joined_group != content else None


def _value_in_sentence(sentence: str) -> str | None:
    """The value a sentence states: its last maths value or number, whichever comes last."""
    spans = [(start, end, content) for start, end, content in math_spans(sentence) if _is_value(content)]
    span_end = spans[-1][1] if spans else 0
    number = last_prose_number(sentence, span_end)
    if number is not None:
        return number[1]
    if spans:
        return _joined_run(sentence, spans)[1]
    return None


def _last_phrase(text: str, *, final_only: bool = False) -> tuple[int, str] | None:
    """Start and answer of the last answer phrase (``The final answer is $X$``, ``Answer: X``)."""
    for phrase in reversed(list(_PHRASE_RE.finditer(text))):
        if final_only and not phrase.group("final"):
            continue
        rest = text[phrase.end():phrase.end() + _PHRASE_SPAN_LIMIT]
        spans = math_spans(rest)
        if spans and spans[0][0] == 0:
            answer = spans[0][2]
            for previous, following in zip(spans, spans[1:]):  # "The final answer is $5$ or $7$."
                if not _offered_instead(rest, previous[1], following[0]):
                    break
                answer = f"{answer}{HEDGE}{following[2]}"
        else:
            tail = _PHRASE_TAIL_RE.search(rest)
            answer = rest[:tail.start()] if tail else rest
        answer = strip_math_delimiters(_unemphasised(answer).rstrip(".").strip())
        if not answer or answer.lower().startswith("not "):
            continue
        if phrase.group("option"):  # "The correct option is (C) Plane."
            if _CHOICE_RE.match(answer):
                return phrase.start(), answer
            continue
        colon = ":" in phrase.group()  # "Answer: X", "The answer is: X"
        if not is_bare_answer(answer):
            leading = _LEADING_VALUE_RE.match(answer)
            if leading and _concludes_at(text, phrase.start(), phrase.end() + len(answer)):
                return phrase.start(), leading.group("value")
            if not (phrase.group("final") or colon):
                continue
            answer = _value_in_sentence(answer)
            if answer is None:
                continue
        elif not (phrase.group("final") or colon or _MATHS_START_RE.match(answer)):
            continue
        return phrase.start(), answer
    return None


def _concludes_at(text: str, start: int, end: int) -> bool:
    """Whether the sentence around ``text[start:end]`` concludes the text: no hypothesis before it
    in its sentence (``Suppose the answer is 4, ...``) and no number after it."""
    sentence_start = max(text.rfind(". ", 0, start), text.rfind("\n", 0, start), -1) + 1
    after = text[end:]
    return not _HYPOTHESIS_RE.search(text, sentence_start, start) and not re.search(r"[0-9]", after[after.find(".") + 1:]
                                                                                      if "." in after else "")


def _unemphasised(text: str) -> str:
    """``text`` without Markdown emphasis around it (``**$1,200**`` -> ``$1,200``)."""
    return text.strip().strip("*_").strip()


def _last_bold(text: str) -> str | None:
    """The last bold answer (``**6**``), or the value of a bold sentence that closes the text
    (``**There are 63 points.**``); headings (``**Step 2:**``) are passed over."""
    if "**" not in text:
        return None
    closing = text.rstrip()
    for bold in reversed(list(_BOLD_RE.finditer(text))):
        content = bold.group(1).strip()
        if _ENUMERATOR_RE.match(content) or content.endswith(":"):
            continue
        content = strip_math_delimiters(content.rstrip(".").strip())
        if content.startswith("$") and content.count("$") == 1:  # a price
            content = content[1:]
        if is_bare_answer(content):
            return content
        if bold.end() >= len(closing.rstrip(".")) - 1:  # a bold sentence that ends the text states the answer
            return _value_in_sentence(content)
    return None


def without_closing_remark(text: str) -> str:
    r"""``text`` without a remark that follows its last statement of the answer: a check
    (``Check: ...``, ``This makes sense because ...``), a justification in the same sentence
    (``x = 2 because 2^2 = 4``, ``..., and indeed ...``, ``..., or about 33.3%``), an approximation
    of a value (``12π ≈ 37.7``, not of a product: ``4 × 2.5 ≈ 10``), the value restated in mixed
    units (``227 minutes, or 3 hours and 47 minutes``) or a closing parenthetical in words
    (``8 new limbs (5 arms and 3 legs).``). Only the last paragraph is read; a remark is cut
    only when a value comes before it and nothing after it concludes.

    Example:
        >>> without_closing_remark("So $x = 17$. Let's check: (7 + 2 + 17 + 10)/4 = 9.")
        'So $x = 17$. '
        >>> without_closing_remark("So $\\log_2 64 = 6$ because $2^6 = 64$.")
        'So $\\log_2 64 = 6$'
        >>> without_closing_remark("He grows 8 new limbs (5 arms and 3 legs).")
        'He grows 8 new limbs'
        >>> without_closing_remark("It takes 90 minutes, or 1 hour and 30 minutes, in all.")
        'It takes 90'
        >>> without_closing_remark("Since 2x = 8, x = 4.")  # the reasoning that leads to the answer stays
        'Since 2x = 8, x = 4.'
    """
    body = text.rstrip()
    # A closing remark is short: only the end of the last paragraph is read, and only when it
    # holds a word that opens one (most completions have none: no regex work then).
    paragraph = max(body.rfind("\n\n") + 2, len(body) - _REMARK_WINDOW, 0)
    window = body[paragraph:].lower()
    if not (body.endswith((")", ").")) or any(word in window for word in _REMARK_WORDS)):
        return text
    check = _CHECK_SENTENCE_RE.search(body, paragraph)
    if check and _VALUE_HINT_RE.search(body, 0, check.start()) and not _CONCLUDES_RE.search(body, check.start()):
        body = body[:check.start()]
    ends = [end.end() for end in _SENTENCE_END_RE.finditer(body.rstrip(), paragraph)]
    sentence = ends[-1] if ends else paragraph
    for marker in _CLAUSE_MARKER_RE.finditer(body, sentence):
        if marker.group("approx") and _OPERAND_BEFORE_RE.search(body, sentence, marker.start()):
            continue
        if _VALUE_HINT_RE.search(body, sentence, marker.start()) and not _CONCLUDES_RE.search(body, marker.start()):
            body = body[:marker.start()]
            break
    remark = _trailing_parenthetical(body, paragraph)
    if remark is not None and _VALUE_HINT_RE.search(body, paragraph, remark):
        body = body[:remark].rstrip()
    return body if body.strip() != text.strip() else text


def _trailing_parenthetical(text: str, start: int) -> int | None:
    """Where a parenthetical of at least two words that ends ``text`` opens (``\\(`` and ``\\)``
    are maths, not parentheses), if it opens at or after ``start``."""
    end = len(text.rstrip().rstrip(".").rstrip())
    if end < 2 or text[end - 1] != ")" or text[end - 2] == "\\":
        return None
    depth = 0
    for index in range(end - 1, start - 1, -1):
        char = text[index]
        if char not in "()" or (index and text[index - 1] == "\\"):
            continue
        depth += 1 if char == ")" else -1
        if depth == 0:
            return index if len(_REMARK_WORD_RE.findall(text, index, end)) >= 2 else None
    return None


CUT_OFF_REASON = "the completion stops mid-sentence (cut off at the length limit?) before stating a final answer"


def looks_cut_off(text: str) -> bool:
    r"""Whether ``text`` stops in the middle of a sentence, as a completion cut at the length limit
    does: inside maths it opened, on a word or sign that needs more, or in a clause that only
    leads to one (``Since $f(5) = 7$``).

    Example:
        >>> looks_cut_off("so the total is \\(5 \\cdot 80 = 400"), looks_cut_off("Therefore, the")
        (True, True)
        >>> looks_cut_off("Since $f(5) = 7$"), looks_cut_off("Money: 9 * 2 = 18"), looks_cut_off("It costs $5")
        (True, False, False)
        >>> looks_cut_off("So $2 + 3 = 5$"), looks_cut_off("the set is $(2,12) \\cup (12,")
        (False, True)
    """
    tail = text[-_CUT_OFF_WINDOW:].rstrip()  # the end decides: linear, cheap
    if tail[-1:] in ("-", "*", "_", "="):
        tail = _RULE_LINE_RE.sub("", tail).rstrip()
    line = tail[tail.rfind("\n") + 1:]
    paragraph = tail[tail.rfind("\n\n") + 1:]
    opened_display = paragraph.count("$$") % 2 and _OPENS_MATHS_RE.match(paragraph, paragraph.rfind("$$") + 2)
    if len(_OPEN_INLINE_RE.findall(line)) > len(_CLOSE_INLINE_RE.findall(line)) or opened_display \
            or len(_OPEN_DISPLAY_RE.findall(paragraph)) > len(_CLOSE_DISPLAY_RE.findall(paragraph)):
        return True
    dollars = line.replace("\\$", "").replace("$$", "") if "$" in line else ""
    if dollars.count("$") % 2 and _OPEN_DOLLAR_RE.search(dollars):  # "$x ..." left open ("$5" is a price)
        return True
    last_word = tail[-40:].rsplit(None, 1)[-1] if tail.strip() else ""
    if (tail[-1:] in _DANGLING_SIGNS and tail[-2:-1] not in ("-", "=", "*", "_")) or last_word.endswith(_DANGLING_COMMANDS) \
            or last_word.lower().lstrip("(") in _DANGLING_WORDS:
        return True
    window = tail[-400:]
    sentence = window[max(window.rfind(". "), window.rfind("! "), window.rfind("? "), window.rfind("\n")) + 1:]
    return bool(_LEADING_CLAUSE_RE.match(sentence))


def _fallback(text: str) -> Extraction | None:
    """The last value stated in maths or in prose, whichever comes last, before any closing remark;
    none in a completion that :func:`looks_cut_off`."""
    if looks_cut_off(text):
        return None
    trimmed = without_closing_remark(text)
    if trimmed is not text:
        found = _last_value(trimmed)
        if found is not None:
            return found
    return _last_value(text)


def _last_value(text: str) -> Extraction | None:
    spans = [span for span in math_spans(text) if _is_value(span[2])]
    number = last_prose_number(text, spans[-1][1] if spans else 0)
    if number is not None:
        if HEDGE not in number[1]:
            number = before_modifier(text, number[0]) or number
        return Extraction(number[1], "last number")
    if spans:
        return Extraction(_last_answer_run(text, spans)[1], "math span")
    return None


def _extract_plain(text: str) -> Extraction | None:
    if is_bare_answer(text):
        return Extraction(strip_math_delimiters(_unemphasised(text)).rstrip(".").strip() or text.strip(), "bare")
    boxed = last_boxed(text)
    # Only a "final answer" phrase overrides an earlier box: "so our answer is ..." after a box
    # is usually the check of that answer, not a new one.
    phrase = _last_phrase(text, final_only=boxed is not None)
    if boxed and (phrase is None or boxed[0] >= phrase[0]):
        return Extraction(boxed[1], "boxed", boxed[2])
    if phrase:
        return Extraction(phrase[1], "final answer")
    bold = _last_bold(text)
    if bold is not None:
        return Extraction(bold, "bold")
    return _fallback(text)


def after_reasoning(completion: str) -> str | None:
    """What follows the last ``</think>``; the whole text when it has no think block; ``None`` when one is left open.

    Example:
        >>> after_reasoning("<think>maybe \\\\boxed{3}</think> so \\\\boxed{4}"), after_reasoning("<think>\\\\boxed{3}")
        (' so \\\\boxed{4}', None)
    """
    close = completion.rfind(_THINK_CLOSE)
    if close >= 0:
        return completion[close + len(_THINK_CLOSE):]
    return None if _THINK_OPEN in completion else completion


def extract_answer(completion: str, *, after_think: bool = False) -> Extraction | None:
    """The final answer stated by a completion, or ``None`` when it states none.

    Rules in the module's order of precedence. With ``after_think=True`` only the text after
    the last ``</think>`` is read, and a think block left open means no answer.

    Example:
        >>> extract_answer(r"so $x = \\frac{1}{2}$ and \\boxed{\\frac{1}{2}}.")
        Extraction(text='\\\\frac{1}{2}', source='boxed', group=None)
        >>> extract_answer("Final Answer: The final answer is $18$. I hope it is correct.").text
        '18'
        >>> extract_answer("<think>2+2</think><answer>4</answer>").source
        'answer tag'
        >>> extract_answer("So it took James 2 hours to walk to the store.").text
        '2'
        >>> extract_answer(r"\\frac{1}{2}").source, extract_answer("I am not sure.") is None
        ('bare', True)
    """
    if after_think:
        answer_part = after_reasoning(completion)
        if answer_part is None:
            return None
        completion = answer_part
    tags = list(_OPEN_TAG_RE.finditer(completion))
    if tags:
        close = _CLOSE_TAG_RE.search(completion, tags[-1].end())
        content = completion[tags[-1].end():close.start() if close else len(completion)]
        inner = _extract_plain(content)
        if inner is not None:
            return Extraction(inner.text, "answer tag", inner.group)
        content = strip_math_delimiters(content)
        if content:
            return Extraction(content, "answer tag")
    return _extract_plain(completion)
