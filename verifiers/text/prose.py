"""How a text ends, read in plain text: a cut-off sentence, a closing remark, a hedge, a number written in prose.

Every answer reader shares these (the maths reader's fallbacks, GSM8K's flexible mode). All of
it is plain string work, linear in the text.
"""

from __future__ import annotations

import re
import unicodedata

from .hedging import cue_text
from .vocabulary import MARKUP_TAG, SCALE_WORD, UNIT_WORD

HEDGE = " \u27eaor\u27eb "  # " ⟪or⟫ ": joins answers offered as alternatives ("\boxed{5} or \boxed{7}")

# Remarks after the answer, read only by the fallbacks (rule 6): a check, a justification, a
# parenthetical in words. Nothing after a cut may conclude ("therefore", "so the answer").
_CHECK_SENTENCE_RE = re.compile(
    r"(?:(?<=[.!?:)]\s)|(?<=\n))\s*\(?\s*(?:(?:let'?s|let\s+us|we\s+can|to)\s+)?(?:check|verify|verification|double[- ]check)"
    r"(?:ing)?\b|(?:(?<=[.!?)]\s)|(?<=\n))\s*(?:this\s+(?:makes\s+sense|is\s+consistent|agrees|checks\s+out)"
    r"|as\s+a\s+(?:quick\s+)?(?:check|sanity\s+check))\b", re.IGNORECASE)
_CLAUSE_MARKER_RE = re.compile(
    r"(?:[,;]\s*|(?<!\s)\s+)(?:because|since|and\s+indeed|no\s+matter|which\s+agrees|note\s+that)\b"
    r"|,\s+or\s+(?:about|approximately|roughly)\b|\s?(?P<approx>≈)"
    # the same value in units mixed: "227 minutes, or 3 hours and 47 minutes" (one number after
    # "or", as in "1.5 hours, or 90 minutes", could be the answer asked for: nothing is cut)
    rf"|(?<=[0-9])\s?{UNIT_WORD},\s+or\s+[0-9][0-9,.]*\s?{UNIT_WORD}\s+(?:and\s+)?[0-9][0-9,.]*\s?{UNIT_WORD}",
    re.IGNORECASE)
_OPERAND_BEFORE_RE = re.compile(r"[-+×*/÷]\s*[^-+×*/÷=\s]+\s*$")  # "4 × 2.5 ≈ 10": 2.5 is no value of its own
_REMARK_WINDOW = 600  # characters from the end where a closing remark may start
_REMARK_WORDS = ("check", "verif", "because", "since", "indeed", "no matter", "agrees", "note that", "or about",
                 "approximately", "roughly", "makes sense", "consistent", "≈", ", or ")
_REMARK_WORD_RE = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")  # a word, not a command's name
# (the mark is matched first, so that the regex engine scans for its characters at C speed; the
# lookbehinds then test the words before it, "i.e." and "e.g." being no sentence's end)
_SENTENCE_END_RE = re.compile(r"[.!?](?<!\bi\.e[.!?])(?<!\be\.g[.!?])(?<!\betc[.!?])\s+|\n")
# A completion cut off mid-sentence (see looks_cut_off): its last value is no answer.
_OPEN_INLINE_RE, _CLOSE_INLINE_RE = re.compile(r"(?<!\\)\\\("), re.compile(r"(?<!\\)\\\)")
_OPEN_DISPLAY_RE, _CLOSE_DISPLAY_RE = re.compile(r"(?<!\\)\\\["), re.compile(r"(?<!\\)\\\]")  # not "\\\\[4pt]"
_CUT_OFF_WINDOW = 2000  # characters from the end that looks_cut_off reads
_OPENS_MATHS_RE = re.compile(r"\s*[\\A-Za-z(\[{]")  # "$$x = ..." opens maths; "$$<<16+27=43>>" (GSM8K notes) does not
_OPEN_DOLLAR_RE = re.compile(r"(?<![0-9])(?<![0-9] )\$(?!\s?[0-9.])[^$]+$")  # not a price: "$5", "2,74 $"
# An operation between numbers that ends the text with no result and no full stop: "60 + 3", "12 \times 5".
# (not "since 54 = 6 × 9": an operation after "=" in its clause is a result written out).
_OPEN_OPERATION_RE = re.compile(r"(?:^|[,;:.]\s|\n)[^,;:=\n]*?[0-9)}]\s*(?:[-+*/×÷]|\\times|\\cdot|\\div)\s*\(?-?[0-9]+(?:[.,][0-9]+)*$")
_DIGITS = tuple("0123456789")
_DANGLING_SIGNS = frozenset(",=+-/(:×÷")  # a sign that needs what follows it
_DANGLING_COMMANDS = ("\\times", "\\cdot", "\\div", "\\frac", "\\sqrt")
_DANGLING_WORDS = frozenset("the a an of to and or is are was were be by with from into than then therefore thus hence "
                            "gives giving equals".split())
# A clause that only leads to a statement, then one maths statement and nothing more: "Since $f(5) = 7$".
_LEADING_CLAUSE_RE = re.compile(r"\s*(?:since|if|when|because|given|substituting|once|after|although|while|unless"
                                r"|now\s+(?:substitute|plug|compute|calculate))\s+(?:\$[^$]+\$|\\\(.+?\\\)|\S+\s*=\s*\S+)\s*$",
                                re.IGNORECASE)
_RULE_LINE_RE = re.compile(r"(?:\n[ \t]*(?:[-*_=][ \t]*){3,})+\s*$")  # a Markdown rule closing the text
# One of these is in every match of _CHECK_SENTENCE_RE, of _CLAUSE_MARKER_RE ("or" in "or about" and in the
# units' ", or"), lower-cased.
_CHECK_CUES = ("check", "verif", "this")
_CLAUSE_CUES = ("because", "since", "indeed", "matter", "agrees", "note", "or", "≈")
_VALUE_HINT_RE = re.compile(r"[0-9]|\\\(|\\\[|\$")
_CONCLUDES_RE = re.compile(r"\b(?:therefore|thus|hence|so|instead|actually|wait|correct(?:ed|ion)?|the\s+(?:final\s+)?answer"
                           r"|in\s+conclusion|we\s+(?:take|get|obtain|choose|have))\b", re.IGNORECASE)

# A number in prose: sign, currency, digits with separators, fraction, plain-text root, power,
# π or scale word (``√117``, ``3√13``, ``2^10``, ``12π``, ``1.45 million``: never only their
# digits), percent word.
_PROSE_NUMBER_RE = re.compile(
    r"(?<![A-Za-z0-9_.,^\\{}/|])(?P<sign>[-\u2212\u2013])?(?:\\?\$|[€£¥₹])?\s?(?P<root>√)?"
    r"(?P<number>[0-9]+(?:[.,][0-9]+)*|\.[0-9]+)(?:/(?P<denominator>[0-9]+))?(?![0-9])"
    r"(?:√(?P<radicand>[0-9]+)|\^(?P<power>[0-9]+)(?![0-9.,]?[0-9])|\s?(?P<pi>π)"
    rf"|\s(?P<scale>{SCALE_WORD})s?\b)?"
    r"(?:/(?P<under>[0-9]+)(?![0-9.,]?[0-9]))?"  # "2√3/3", "12π/5": the whole fraction
    r"(?:\s?(?P<percent>\\?%|percent\b|pct\b))?"
)
# "5 or 7", "5, or maybe 7", "<final>5</final> or <final>7</final>", '{"answer": "5"} or {"answer": "7"}': alternatives
_HEDGE_GAP_RE = re.compile(rf"(?:[\s,$\"'}}]|{MARKUP_TAG})*or\b[\w\s$]{{0,15}}"
                           r"(?:<[A-Za-z][\w-]{0,20}>|\{\s*\"[A-Za-z_]{1,20}\"\s*:\s*\"?)?")
# A number that only qualifies the answer before it: "... for the 2 shirts", "... 10 years from now".
_MODIFIER_WORDS = ("in", "for", "of", "from", "to", "during", "within", "over", "per", "after", "by")
_MODIFIER_ARTICLES = ("the", "his", "her", "their", "its", "all", "each", "every")
_MODIFIER_BEFORE_RE = re.compile(rf"\b(?:{'|'.join(_MODIFIER_WORDS)})\s+(?:(?:{'|'.join(_MODIFIER_ARTICLES)})\s+)?"
                                 r"(?:\\?\$\s?)?$", re.IGNORECASE)
_MODIFIER_AFTER_RE = re.compile(r"\s*[A-Za-z-]*\s*(?:from\s+now|ago|later|earlier)\b", re.IGNORECASE)
_OPERAND_RE = re.compile(r"\s*(?:[-+*/×÷=]|x(?![A-Za-z])|\\times|\\cdot)")
# A decimal digit of another script (\d: the characters str.isdecimal accepts); the digit is matched
# first, so that the regex engine scans for one at C speed.
_OTHER_DIGIT_RE = re.compile(r"\d(?<![0-9])")
_THOUSANDS_RE = re.compile(r"^[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?$")
_DECIMAL_COMMA_RE = re.compile(r"^(?P<whole>[0-9]+),(?P<decimals>[0-9]+)$")


def ascii_digits(text: str) -> str:
    """Decimal digits of any script (Arabic-Indic, Devanagari, full-width, ...) as ASCII digits, one
    for one (positions hold); superscripts and subscripts stay (``m⁻²`` is a unit's power, not a 2).

    Example:
        >>> ascii_digits("答案是１２，٤٥"), ascii_digits("kcal m⁻² yr⁻¹")
        ('答案是12，45', 'kcal m⁻² yr⁻¹')
    """
    if text.isascii() or _OTHER_DIGIT_RE.search(text) is None:
        return text
    return "".join(str(unicodedata.decimal(char)) if not char.isascii() and char.isdecimal() else char for char in text)


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
        number += f" {match.group('scale')}"  # read as the number it scales to (referee.verifiers.math.forms)
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
    text = ascii_digits(text)
    previous = found = None
    for match in _PROSE_NUMBER_RE.finditer(text, start):
        previous, found = found, match
    if found is None:
        return None
    if previous is not None and _HEDGE_GAP_RE.fullmatch(text, previous.end(), found.start("number")):
        return previous.start("number"), f"{prose_number(previous)}{HEDGE}{prose_number(found)}"
    return found.start("number"), prose_number(found)


def offered_before(text: str, start: int) -> str | None:
    """The number offered as an alternative to the number at ``start`` (``73 or 72``, ``73, or maybe 72``:
    the 73), as written, else ``None``; read as :func:`last_prose_number` reads two numbers together.

    Example:
        >>> text = "So it is 73 or 72."
        >>> offered_before(text, text.index("72")), offered_before("So it is 72.", 9)
        ('73', None)
    """
    window = text[max(0, start - 40):start]
    if "or" not in window:  # the word of every gap
        return None
    previous = None
    for match in _PROSE_NUMBER_RE.finditer(window):
        previous = match
    if previous is None or not _HEDGE_GAP_RE.fullmatch(window, previous.end(), len(window)):
        return None
    return previous.group()


# A word that opens a phrase qualifying the answer ("between 30 and 40", "after giving 9", "in 6
# boxes"), in English and in the other languages models answer in.
_QUALIFIER_WORD_RE = re.compile(
    r"(?<![^\W\d_])(?:between|after|before|for|from|in|of|out|to|during|within|over|per|by|than|with|among|at|on"
    r"|entre|de|du|des|dans|pour|sur|soit|après|avant|en|con|por|para|desde|hasta|von|mit|auf|für|aus|zu|nach|bei|vor"
    r")(?![^\W\d_])", re.IGNORECASE)
_CLAUSE_WORD_RE = re.compile(r"(?<![^\W\d_])(?!(?:and|or|und|et|y)(?![^\W\d_]))[^\W\d_]{2,}")  # a word, not a joiner


def stated_number(text: str, start: int = 0) -> tuple[int, str] | None:
    r"""Start and plain text of the number a statement gives as its answer, else ``None``: the
    last number of ``text[start:]`` that no qualifying phrase holds (``between 30 and 40``,
    ``after giving 9 to Ann``, ``in 6 boxes``); numbers joined by ``and``, ``,`` or signs share
    a phrase. When every number is in one, the last (as :func:`last_prose_number`).

    Example:
        >>> stated_number("There are 2 primes between 30 and 40.")
        (10, '2')
        >>> stated_number("So Tom has 15 marbles left after giving 9 to Ann."), stated_number("It is 5 + 3 = 8 apples.")
        ((11, '15'), (14, '8'))
        >>> stated_number("Es sind 42 Äpfel in 6 Kisten."), stated_number("It rises from 30 to 40.")
        ((8, '42'), (20, '40'))
    """
    text = ascii_digits(text)
    free = last = None
    qualified = False
    previous_end = start
    for match in _PROSE_NUMBER_RE.finditer(text, start):
        between = text[previous_end:match.start()]
        if _QUALIFIER_WORD_RE.search(between):
            qualified = True
        elif _CLAUSE_WORD_RE.search(between):
            qualified = False
        if not qualified:
            free = match
        last, previous_end = match, match.end()
    if free is None or free is last:
        return last_prose_number(text, start)
    return free.start("number"), prose_number(free)


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
    text = ascii_digits(text)  # same length: positions hold
    found = _PROSE_NUMBER_RE.match(text, start)  # the first match from ``start`` when one starts there
    if found is None or found.start("number") != start:
        return None
    sentence = max(text.rfind(". ", 0, start), text.rfind("\n", 0, start)) + 1
    if not (_ends_on_modifier(text, sentence, found.start()) or _MODIFIER_AFTER_RE.match(text, found.end())):
        return None
    for candidate in reversed(list(_PROSE_NUMBER_RE.finditer(text, sentence, found.start()))):
        if _OPERAND_RE.match(text, candidate.end()) or _ends_on_modifier(text, sentence, candidate.start()):
            continue
        return candidate.start("number"), prose_number(candidate)
    return None


def _ends_on_modifier(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` ends on a modifier (``for the $``): ``_MODIFIER_BEFORE_RE.search(text,
    start, end)``, searched only when the last word, once the blanks and a ``$`` after it are dropped, is
    one of its words or an ASCII letter is not (the pattern ignores case beyond ASCII: ``ſ`` is an ``s``)."""
    rest = text[start:end].rstrip()
    if rest.endswith("$"):
        rest = rest[:-1].removesuffix("\\").rstrip()
    last = rest[-6:]  # the longest word is six letters
    if last.isascii() and not last.lower().endswith(_MODIFIER_WORDS + _MODIFIER_ARTICLES):
        return False
    return _MODIFIER_BEFORE_RE.search(text, start, end) is not None


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
    cues = cue_text(body[paragraph:])  # None: only the patterns can tell (each is then searched)
    window = cues if cues is not None else body[paragraph:].lower()
    if not (body.endswith((")", ").")) or any(word in window for word in _REMARK_WORDS)):
        return text
    check = _CHECK_SENTENCE_RE.search(body, paragraph) if _holds_any(cues, _CHECK_CUES) else None
    if check and _VALUE_HINT_RE.search(body, 0, check.start()) and not _CONCLUDES_RE.search(body, check.start()):
        body = body[:check.start()]
    ends = [end.end() for end in _SENTENCE_END_RE.finditer(body.rstrip(), paragraph)]
    sentence = ends[-1] if ends else paragraph
    for marker in _CLAUSE_MARKER_RE.finditer(body, sentence) if _holds_any(cues, _CLAUSE_CUES) else ():
        if marker.group("approx") and _OPERAND_BEFORE_RE.search(body, sentence, marker.start()):
            continue
        if _VALUE_HINT_RE.search(body, sentence, marker.start()) and not _CONCLUDES_RE.search(body, marker.start()):
            body = body[:marker.start()]
            break
    remark = _trailing_parenthetical(body, paragraph)
    if remark is not None and _VALUE_HINT_RE.search(body, paragraph, remark):
        body = body[:remark].rstrip()
    return body if body.strip() != text.strip() else text


def _holds_any(cues: str | None, words: tuple[str, ...]) -> bool:
    """Whether the lower-cased text ``cues`` (:func:`cue_text`; ``None``: unknown) may hold a match of a pattern
    every match of which holds one of ``words``."""
    return cues is None or any(word in cues for word in words)


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


def _opens_more_than_closes(text: str, openings: str, closings: str) -> bool:
    """Whether ``text`` opens more brackets of these kinds than it closes (escaped ones, ``\\{``, do
    not count; round and square ones together: ``(2, 5]`` is a half-open interval, closed)."""
    for bracket in openings + closings:
        text = text.replace("\\" + bracket, "")
    return sum(text.count(opening) for opening in openings) > sum(text.count(closing) for closing in closings)


def looks_cut_off(text: str) -> bool:
    r"""Whether ``text`` stops in the middle of a sentence, as a completion cut at the length limit
    does: inside maths it opened, on a word or sign that needs more, inside a brace or bracket it
    opened (``= \\frac{5``, ``f(3) = 2(3``), on an operation with no result (``60 + 3``), or in a
    clause that only leads to one (``Since $f(5) = 7$``).

    Example:
        >>> looks_cut_off("so the total is \\(5 \\cdot 80 = 400"), looks_cut_off("Therefore, the")
        (True, True)
        >>> looks_cut_off("Since $f(5) = 7$"), looks_cut_off("Money: 9 * 2 = 18"), looks_cut_off("It costs $5")
        (True, False, False)
        >>> looks_cut_off("So $2 + 3 = 5$"), looks_cut_off("the set is $(2,12) \\cup (12,")
        (False, True)
        >>> looks_cut_off("The sum is \\frac{1}{2} + \\frac{1}{3} = \\frac{5"), looks_cut_off("Then we add them: 60 + 3")
        (True, True)
        >>> looks_cut_off("So 60 + 3 = 63"), looks_cut_off("The roots are 1) and 2)")
        (False, False)
    """
    tail = text[-_CUT_OFF_WINDOW:].rstrip()  # the end decides: linear, cheap
    if tail[-1:] in ("-", "*", "_", "="):
        tail = _RULE_LINE_RE.sub("", tail).rstrip()
    line = tail[tail.rfind("\n") + 1:]
    paragraph = tail[tail.rfind("\n\n") + 1:]
    opened_display = "$" in paragraph and paragraph.count("$$") % 2 \
        and _OPENS_MATHS_RE.match(paragraph, paragraph.rfind("$$") + 2)
    # Each pattern is counted only where its opening stands (a scan for it costs far more than the test).
    if ("\\(" in line and len(_OPEN_INLINE_RE.findall(line)) > len(_CLOSE_INLINE_RE.findall(line))) or opened_display \
            or ("\\[" in paragraph and len(_OPEN_DISPLAY_RE.findall(paragraph)) > len(_CLOSE_DISPLAY_RE.findall(paragraph))):
        return True
    dollars = line.replace("\\$", "").replace("$$", "") if "$" in line else ""
    if dollars.count("$") % 2 and _OPEN_DOLLAR_RE.search(dollars):  # "$x ..." left open ("$5" is a price)
        return True
    if ("{" in paragraph and _opens_more_than_closes(paragraph, "{", "}")) \
            or (("(" in line or "[" in line) and _opens_more_than_closes(line, "([", ")]")) \
            or (tail.endswith(_DIGITS) and _OPEN_OPERATION_RE.search(tail[-120:])):  # it ends on a digit
        return True  # "= \frac{5", "f(3) = 2(3", "60 + 3": an expression left open
    last_word = tail[-40:].rsplit(None, 1)[-1] if tail else ""  # (tail ends on no blank)
    if (tail[-1:] in _DANGLING_SIGNS and tail[-2:-1] not in ("-", "=", "*", "_")) or last_word.endswith(_DANGLING_COMMANDS) \
            or last_word.lower().lstrip("(") in _DANGLING_WORDS:
        return True
    window = line[-400:]  # the last sentence starts on the last line, at most 400 characters from the end
    sentence = window[max(window.rfind(". "), window.rfind("! "), window.rfind("? ")) + 1:]
    return bool(_LEADING_CLAUSE_RE.match(sentence))
