"""GSM8K answer reading: the final number a completion states, the way models write it.

Extraction is a short declarative pipeline, tried in order:

* ``strict``: the last ``#### N`` line (GSM8K's own format). A ``####`` line that does not
  start with a number (a markdown heading such as ``#### Step 1``) is not an answer line.
* ``flexible``: the later of the last ``\\boxed{...}`` and the last final-answer phrase
  (``The answer is``, ``Answer:``, ``Final answer:``), so a self-correction wins; else the last
  bold number (``**18**``) or a bold sentence that ends the text; else the last number in the
  text before a closing remark (``Check: ...``, ``(5 arms and 3 legs)``), or the one before it
  when it only qualifies it (``$36 for the 2 shirts``); none in a completion cut off mid-sentence.
* ``auto`` (default): ``strict`` when the completion has an answer line, else ``flexible``.

Nothing is clipped: the whole completion is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from fractions import Fraction
from functools import lru_cache
from typing import Any, Literal, NamedTuple, TypeVar

from ..text.hedging import completion_cues, negates_an_answer
from ..text.labels import is_label
from ..text.latex import boxed_spans
from ..text.numbers import NumberMatch, first_number, iter_numbers, last_number
from ..text.prose import before_modifier, looks_cut_off, offered_before, without_closing_remark
from ..text.vocabulary import MARKUP_TAG

Mode = Literal["strict", "flexible", "auto"]
MODES: tuple[str, ...] = ("strict", "flexible", "auto")

# An answer line starts with the number, possibly behind markup: "#### $18", "#### **18**",
# "#### \boxed{18}", "#### -3".
_ANSWER_LINE_START_RE = re.compile(r"^(?:[*_$\s]|\\\$|\\\(|\\\[|\\boxed\{|\\text\{)*[-\u2212+]?\s?\$?\s?\.?[0-9]")
_PHRASE_TAIL = (
    r"answer\b[ \t*_]*(?:\((?:[^()\n]{0,30})\))?[ \t*_]*"
    r"(?::|=|\bis\b|\bwas\b|\bwould be\b|\bwill be\b|\bshould be\b|\bequals\b)[ \t*_:]*"
)
# Starting on the literal "answer" lets the regex engine skip ahead quickly; it runs on a
# lower-cased copy of ASCII text, else case-insensitively.
_PHRASE_RE = re.compile(_PHRASE_TAIL)
_PHRASE_RE_ANY_CASE = re.compile(_PHRASE_TAIL, re.IGNORECASE)
_PARENTHETICAL_CHARS = 31  # "(" plus the at most 30 characters a phrase's parenthetical holds
# A line break, a ";", or a full stop after a word and before a blank or the end ("3.5" and "..." end
# nothing); the mark is matched first, so that the regex engine scans for one at C speed.
_SENTENCE_END_RE = re.compile(r"[\n.;](?:(?<=[\n;])|(?<=[^\s.]\.)(?=\s|$))")
_BOLD_RE = re.compile(r"\*\*([^*\n]{1,80})\*\*")
# A bold span is an answer only when it is a number with at most a unit around it, so a
# heading such as "**Step 3: add**" is never read as the answer 3.
_BOLD_ANSWER_RE = re.compile(r"^[\s$\\]*(?:[A-Za-z]+\s?)?[-\u2212+]?\s?\$?[0-9.,/%\s]+(?:[A-Za-z]+\.?)?\s*\.?$")
# "18 or 20", "either 18 or 20": several answers offered at once, a hedge.
_ALTERNATIVE_RE = re.compile(r"\bor\b|\beither\b", re.IGNORECASE)
# What a box may hold around its number and still state that number: currency, percent, units
# in words, styling, an assignment ("x = 18"). Anything else qualifies the number instead of
# stating it: a power (6^2), a relation (x \neq 6, < 6), a sign or term (6 \pm 1, 6 + 10^{-9}),
# a negation (\text{not } 6), a strike-out (\cancel{6}), another number.
_BOX_DRESS_RE = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mathit|displaystyle|mbox|q?quad)\b|\\[$,;:! %]"
                           r"|[A-Za-z]+|[\s$%.,:;{}()]")
# Units dress a number with their powers and slashes too: "\text{cm}^2", "m/s", "kcal m^{-2} yr^{-1}", "m⁻²",
# "4080 Å", and so does a degree sign ("45^\circ", "45°"). A unit is letters, written plain or in a text
# command; a power on the number itself ("6^2", "{6}^2") is no unit's and qualifies it.
_UNIT_TEXT_RE = re.compile(r"\\(?:text|mathrm|mbox)\s*\{([^{}]*)\}")
_UNIT_MARK_RE = re.compile(r"(?<=[A-Za-zÅμ])(?:\s*\^\s*(?:\{\s*-?\s*[0-9]\s*\}|-?[0-9])|[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)"
                           r"|(?<=[A-Za-zÅμ])\s*/\s*(?=[A-Za-zÅμ])|\^\s*\{?\s*\\circ\s*\}?|°|\\degree\b|[Åμ]")
_BOX_QUALIFIER_WORD_RE = re.compile(r"\b(?:not|no|or|either|and|about|approx\w*|roughly|nearly|almost|around|over"
                                    r"|under|least|most|than|maybe|perhaps|probably)\b", re.IGNORECASE)
# The last line of a completion offering two numbers: "5 or 6", "**Either 5 or 6.**", "<answer>5 or 6</answer>".
_LAST_LINE_HEDGE_RE = re.compile(r"^[\s*_$]*(?:either\s+)?\\?\$?\s?(?P<first>[-+]?[0-9][0-9.,]*)\s*(?:,\s*)?or\s+"
                                 r"\\?\$?\s?(?P<second>[-+]?[0-9][0-9.,]*)[\s*_.$]*$", re.IGNORECASE)
_TAG_RE = re.compile(MARKUP_TAG)
# Words that turn an earlier boxed answer into a corrected one rather than a hedge.
_CORRECTION_RE = re.compile(r"\b(?:wait|no|actually|correction|mistake|re-?check\w*|instead|rather|oops|sorry)\b",
                            re.IGNORECASE)


class Extraction(NamedTuple):
    """The number read from a completion, by which rule, and any other answers offered with it.

    ``alternatives`` holds the different values of a hedge ("18 or 20", two boxed answers side
    by side); a hedged answer is never judged correct.
    """

    number: NumberMatch
    source: Literal["####", "boxed", "answer phrase", "bold", "last number"]
    alternatives: tuple[NumberMatch, ...] = ()
    qualified: str = ""  # a box whose content qualifies its number (``6^2``, ``x \neq 6``): never an answer
    start: int = -1  # where the statement read starts in the text (a box, a phrase, a ``####`` line); -1: not kept


# An answer line whose number is not a number ("#### 2C#"): no answer, and no fallback.
_NO_NUMBER = Extraction(NumberMatch(0, "", 0, 0, False), "####")

_CACHED_SPAN_CHARS = 200
_Read = TypeVar("_Read")


def _cached_when_short(read: Callable[[str], _Read]) -> Callable[[str], _Read]:
    """``read`` with an LRU cache for texts of at most 200 characters.

    The G completions of one prompt often end on the same few answer spans; long spans (a
    huge boxed content) are not kept, so the cache stays small.
    """
    cached = lru_cache(maxsize=4096)(read)

    def call(text: str) -> _Read:
        return cached(text) if len(text) <= _CACHED_SPAN_CHARS else read(text)

    return call


@_cached_when_short
def _span_answer(span: str) -> tuple[NumberMatch, tuple[NumberMatch, ...]] | None:
    """The answer stated in a short span (the number after the last ``=``, else the first),
    with the other values it offers when the span hedges ("18 or 20")."""
    if "=" in span:
        after = span.rsplit("=", 1)[1]
        if first_number(after, whole_as_int=True) is not None:
            span = after
    number = first_number(span, whole_as_int=True)
    if number is None:
        return None
    if _ALTERNATIVE_RE.search(span):
        others = tuple(n for n in iter_numbers(span, whole_as_int=True) if n.value != number.value)
        return number, others
    return number, ()


@_cached_when_short
def _line_answer(line: str) -> Extraction | None:
    """The answer of a line when it is an answer line, ``None`` when it is not (``start`` is left at -1).

    A line is an answer line when it starts, after spaces, tabs or quote marks (">"), with
    ``####`` and then a number, possibly behind markup (``#### Step 1`` is a heading). A number
    glued to letters (``#### 2C#``, ``#### 0x1F``) is not a number: ``_NO_NUMBER``.
    """
    body = line.lstrip(" \t>")
    if not body.startswith("####"):
        return None
    content = body[4:].lstrip(" \t")
    if _ANSWER_LINE_START_RE.match(content) is None:
        return None
    span = _until_sentence_end(content, 0)
    answer = _span_answer(span)
    if answer is None:
        return _NO_NUMBER
    number = answer[0]
    after = span.rsplit("=", 1)[1] if "=" in span else span  # where _span_answer read it
    read = after if after.startswith(number.text, number.start) else span
    glued = read[number.end:number.end + 1]
    if glued.isalpha() or glued == "#":
        return _NO_NUMBER
    return Extraction(number, "####", answer[1])


@_cached_when_short
def _phrase_answer(span: str) -> Extraction | None:
    """The answer of an answer phrase, from the rest of its sentence."""
    if span.lstrip().lower().startswith("not ") or negates_an_answer(span):  # "the answer is not 5"
        return None
    answer = _span_answer(span)
    return Extraction(answer[0], "answer phrase", answer[1]) if answer is not None else None


def _until_sentence_end(text: str, start: int, limit: int = 300) -> str:
    window = text[start:start + limit]
    end = _SENTENCE_END_RE.search(window)
    return window[: end.start()] if end else window


def _strict(text: str) -> Extraction | None:
    found = _last_answer_line(text)
    return None if found is _NO_NUMBER else found


def _last_answer_line(text: str) -> Extraction | None:
    """The answer of the last ``####`` answer line (:func:`_line_answer`); ``_NO_NUMBER`` when that line's
    number is not one (glued to letters), ``None`` when there is no answer line."""
    # Answer lines are found from the end with str.rfind; the line of each "####" is read whole.
    # (Looking for one character first is several times faster than for several.)
    if "#" not in text:
        return None
    at = text.rfind("####")
    while at >= 0:
        line_start = text.rfind("\n", 0, at) + 1
        line_end = text.find("\n", at)
        found = _line_answer(text[line_start:] if line_end < 0 else text[line_start:line_end])
        if found is not None:  # the last answer line decides, even when it holds no number
            return found if found is _NO_NUMBER else Extraction(found.number, "####", found.alternatives, "", line_start)
        at = text.rfind("####", 0, line_start)
    return None


def _box_qualifies(content: str, number: NumberMatch) -> bool:
    """Whether a box says more of its number than the number (``6^2``, ``6 \\pm 1``, ``\\text{not } 6``).

    Example:
        >>> [_box_qualifies(c, first_number(c.rsplit("=", 1)[-1])) for c in (r"\\$18", r"x = 6", r"6^2", r"x \\neq 6")]
        [False, False, True, True]
    """
    span = content.rsplit("=", 1)[1] if "=" in content and first_number(content.rsplit("=", 1)[1]) else content
    rest = span[:number.start] + " " + span[number.end:]
    if _BOX_QUALIFIER_WORD_RE.search(rest):
        return True
    if "^" in rest or "/" in rest or "\\" in rest or not rest.isascii():  # (a unit's marks, only where one may stand)
        if "^" in rest and span[number.end:number.end + 1].isalpha():  # "2k^2": a term, no unit
            return True
        rest = _UNIT_MARK_RE.sub(" ", _UNIT_TEXT_RE.sub(r" \1 ", rest))
    return bool(_BOX_DRESS_RE.sub("", rest).strip())


def qualifies_its_number(text: str) -> bool:
    """Whether ``text`` says more of its number than the number (``\\sqrt{6}``, ``2^k``, ``3 (mod 7)``).

    Currency, percent, units in words and an assignment (``x = 3``) only dress the number.

    Example:
        >>> [qualifies_its_number(t) for t in ("3 apples", "x = 3", r"\\$1,234.50", r"\\sqrt{6}", "3 (mod 7)")]
        [False, False, False, True, True]
    """
    after = text.rsplit("=", 1)[1] if "=" in text else text
    number = first_number(after) or first_number(text)
    return number is None or _box_qualifies(text, number)


def _last_line_hedge(text: str) -> Extraction | None:
    """Two numbers offered on the last line (``5 or 6``, ``**Either 5 or 6.**``), as a hedge."""
    body = (_TAG_RE.sub("", text) if "<" in text else text).rstrip()
    last_line = body[body.rfind("\n") + 1:]
    match = _LAST_LINE_HEDGE_RE.match(last_line)
    if match is None:
        return None
    first, second = first_number(match.group("first"), whole_as_int=True), first_number(match.group("second"), whole_as_int=True)
    if first is None or second is None or first.value == second.value:
        return None
    return Extraction(first, "bold" if "**" in last_line else "last number", (second,))


def _last_boxed(text: str, spans: list[tuple[int, int, str]] | None = None) -> tuple[int, Extraction] | None:
    """Where the last box stating a number starts, and what it states; ``spans``: the text's boxes, when known."""
    if spans is None:
        if "\\" not in text or ("\\boxed" not in text and "\\fbox" not in text):
            return None
        spans = boxed_spans(text)
    for index in range(len(spans) - 1, -1, -1):
        start, _, content = spans[index]
        answer = _span_answer(content)
        if answer is None:
            continue
        number, alternatives = answer
        # Earlier boxed answers on the same line, with no correction between, are a hedge.
        later_start = start
        for earlier_start, earlier_end, earlier_content in reversed(spans[:index]):
            between = text[earlier_end:later_start]
            if "\n" in between or _CORRECTION_RE.search(between):
                break
            other = _span_answer(earlier_content)
            if other is not None and other[0].value != number.value:
                alternatives += (other[0],)
            later_start = earlier_start
        return start, Extraction(number, "boxed", alternatives, content if _box_qualifies(content, number) else "", start)
    return None


def _phrases_from_the_end(lowered: str) -> Iterator[re.Match[str]]:
    """The matches of ``_PHRASE_RE.finditer(lowered)``, last first, found with ``str.rfind``.

    A phrase starts on the word "answer", so each occurrence is tried from the end. An
    occurrence inside an earlier phrase's parenthetical ("answer (answer is 5) is 7") is not a
    match of finditer; when a "(" comes shortly before an occurrence, finditer decides.
    """
    at = lowered.rfind("answer")
    while at >= 0:
        if "(" in lowered[max(0, at - _PARENTHETICAL_CHARS):at]:
            yield from reversed([m for m in _PHRASE_RE.finditer(lowered) if m.start() <= at])
            return
        phrase = _PHRASE_RE.match(lowered, at)
        if phrase is not None:
            yield phrase
        at = lowered.rfind("answer", 0, at)


def _last_phrase(text: str, lowered: str | None) -> tuple[int, Extraction] | None:
    """Where the last answer phrase stating a number starts, and what it states (its ``start`` left at -1);
    ``lowered``: the :func:`~referee.verifiers.text.hedging.cue_text` of ``text`` (every index kept), else ``None``."""
    phrases = _phrases_from_the_end(lowered) if lowered is not None else reversed(list(_PHRASE_RE_ANY_CASE.finditer(text)))
    for phrase in phrases:
        start = phrase.start()
        if start > 0 and text[start - 1].isalpha():  # "reanswer", "answers"
            continue
        answer = _phrase_answer(_until_sentence_end(text, phrase.end()))
        if answer is not None:
            return start, answer
    return None


def _last_bold(text: str) -> NumberMatch | None:
    """The last bold number (``**18**``), or the number a bold sentence ending the text states."""
    if "*" not in text or "**" not in text:
        return None
    closing = len(text.rstrip().rstrip("."))
    for bold in reversed(list(_BOLD_RE.finditer(text))):
        content = bold.group(1)
        if _BOLD_ANSWER_RE.match(content):
            number = first_number(content, whole_as_int=True)
            if number is not None:
                return number
        elif bold.end() >= closing - 1 and not is_label(content):  # "**There are 63 points.**" ends the text
            return last_number(without_closing_remark(content), whole_as_int=True)
    return None


def _phrase_at(phrase: tuple[int, Extraction]) -> Extraction:
    """The answer of a phrase (:func:`_last_phrase`), with where it starts."""
    start, found = phrase
    return Extraction(*found[:4], start)


def _flexible(text: str) -> Extraction | None:
    lowered = completion_cues(text)  # phrases are searched on a lower-cased copy where one keeps every index
    last_answer_word = lowered.rfind("answer") if lowered is not None else len(text)
    last_box_mark = max(text.rfind("\\boxed"), text.rfind("\\fbox")) if "\\" in text else -1
    if last_answer_word > last_box_mark:  # a phrase after every box is the answer, if it states a number
        phrase = _last_phrase(text, lowered)
        if phrase is not None and phrase[0] > last_box_mark:
            return _phrase_at(phrase)
        boxed = _last_boxed(text) if last_box_mark >= 0 else None
    else:
        boxed = _last_boxed(text)
        if boxed and boxed[0] > last_answer_word:  # no answer phrase can start after the box
            return boxed[1]
        phrase = _last_phrase(text, lowered) if last_answer_word >= 0 else None
    if boxed and (phrase is None or boxed[0] >= phrase[0]):
        return boxed[1]
    if phrase:
        return _phrase_at(phrase)
    hedge = _last_line_hedge(text)
    if hedge is not None:
        return hedge
    bold = _last_bold(text)
    if bold is not None:
        return Extraction(bold, "bold")
    if looks_cut_off(text):  # cut at the length limit: its last number is no answer
        return None
    body = without_closing_remark(text)
    number = last_number(body, whole_as_int=True) or last_number(text, whole_as_int=True)
    if number is None:
        return None
    offered = offered_before(text, number.start)  # "So it is 73 or 72.": a hedge
    if offered is not None:
        other = first_number(offered, whole_as_int=True)
        if other is not None and other.value != number.value:
            return Extraction(number, "last number", (other,))
    answer = before_modifier(body, number.start)  # "$36 for the 2 shirts": 36
    if answer is not None:
        number = first_number(body[answer[0]:answer[0] + 40], whole_as_int=True) or number
    return Extraction(number, "last number")


def extract_answer(completion: str, *, mode: Mode = "auto") -> Extraction | None:
    """Read the final numeric answer of a completion, or ``None`` when it states none.

    Example:
        >>> extract_answer("16 - 3 - 4 = 9 eggs, 9 * 2 = 18.\\n#### $18").number.value
        Fraction(18, 1)
        >>> extract_answer("So she makes $\\\\boxed{18}$ dollars.").source
        'boxed'
        >>> extract_answer("no digits here") is None
        True
    """
    extract = _extractor(mode)
    if extract is None:
        raise ValueError(f"mode={mode!r} is not one of {', '.join(MODES)}.")
    found = extract(completion)
    if found is None:
        return None
    # The extractors read whole numbers as ints (fast to compare); callers get Fractions.
    return found._replace(number=_as_fraction(found.number), alternatives=tuple(map(_as_fraction, found.alternatives)))


def _as_fraction(number: NumberMatch) -> NumberMatch:
    return number._replace(value=Fraction(number.value))


def _auto(text: str) -> Extraction | None:
    found = _last_answer_line(text)
    if found is _NO_NUMBER:  # the completion wrote its answer line, and it holds no number
        return None
    return found or _flexible(text)


_EXTRACTORS = {"strict": _strict, "flexible": _flexible, "auto": _auto}


def _extractor(mode: Any) -> Callable[[str], Extraction | None] | None:
    return _EXTRACTORS.get(mode) if isinstance(mode, str) else None  # an unhashable mode is no mode


# Closing lines recur across the completions of a prompt: their reading is cached.
_LINE_READERS = {mode: _cached_when_short(read) for mode, read in _EXTRACTORS.items()}


def _line_reader(mode: Mode) -> Callable[[str], Extraction | None]:
    """The reading of ``mode`` for one closing line (:mod:`.closing`), cached for short lines."""
    return _LINE_READERS[mode]
