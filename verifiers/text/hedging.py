"""The plain-text cues of the hedge and override policy, which every answer domain reads alike.

Each domain reads its own answers (a maths box, a GSM8K ``####`` line); around them, these are
the words and marks that make a statement *not* the completion's answer, or not its only one:
a think block left open, a box disowned (in a comment or code block, negated, hypothetical,
quoted), a blank box, a hedge word, an earlier box offered as an alternative, a correction
between two answers, a check after the answer. docs/verifiers.md, "Hedges, overrides and
disowned answers", gives the rules that use them.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Generic, TypeVar

from .labels import is_label
from .latex import boxed_spans
from .numbers import parse_number
from .vocabulary import SCALE_WORD, SCALES, UNIT_SYMBOL, UNIT_WORD

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
_FENCED_RE = re.compile(r"<!--.*?(?:-->|$)|```.*?(?:```|$)", re.DOTALL)
_NEGATED_RE = re.compile(r"\b(?:not|never|isn'?t|isn’t|cannot\s+be|can'?t\s+be)\s*(?:\$|\\\(|\\\[)?\s*$", re.IGNORECASE)
_HYPOTHETICAL_RE = re.compile(r"\b(?:if|suppose|supposing|assume|assuming)\b[^.!?\n]*\b(?:were|would\s+be|had\s+been)"
                              r"\s*(?:\$|\\\(|\\\[)?\s*$", re.IGNORECASE)
_HYPOTHETICAL_TAIL_RE = re.compile(r"\b(?:were|would\s+be|had\s+been)\s*(?:\$|\\\(|\\\[)?\s*$", re.IGNORECASE)
_CUE_CHARS = 40  # a negation or a "were" stands right before the box it disowns
DISOWNING_CUES = ("not", "never", "isn", "can", "were", "would", "had")  # one is in every match of _NEGATED_RE and _HYPOTHETICAL_TAIL_RE
_QUOTES = ('"', "“", "”")
_BLANK_BOX_RE = re.compile(r"(?:\\[ ,;:!]|\\q?quad|~|\s)*")
# "guess" hedges as the writer's own ("I guess", "my best guess"), never as a noun of the problem
# ("the minimum number of guesses needed", "by guessing the corner squares": Sky-T1 traces of AMC 2023).
_OWN_GUESS = r"(?:a|i(?:'d|'m|\s+would|\s+am)?|my|our|best|educated|wild|rough)\s+guess(?:es|ing)?"


def closing_statement(text: str) -> re.Match[str] | None:
    """``CLOSING_RE.search(text)``: a closing ``Therefore, X.`` that ends the text, read only near its end.

    What follows the word of a match is at most 62 characters but for whitespace and one comma, so
    no match starts before the point found by stepping back that far from the end.

    Example:
        >>> closing_statement("So 3 + 4 = 7.\\n\\nTherefore, 7.").group("value")
        '7'
    """
    end = _before_blanks(text, len(text))
    if text.endswith(".", 0, end):
        end = _before_blanks(text, end - 1)
    start = _before_blanks(text, max(0, end - 61))  # where the value may start, less the blanks before it
    start = max(0, _before_blanks(text, max(0, start - len("therefore") - 1)) - 2)  # "\n" or ". " before the word
    cues = cue_text(text[start:])
    if cues is not None and not ("so" in cues or "thus" in cues or "hence" in cues or "therefore" in cues):
        return None
    found = _CLOSING_AT_START_RE.match(text) if start == 0 else None
    return found if found is not None else _CLOSING_AFTER_MARK_RE.search(text, start)


def _before_blanks(text: str, end: int) -> int:
    """Where the run of whitespace and commas that ends at ``end`` starts."""
    while end > 0 and (text[end - 1].isspace() or text[end - 1] == ","):
        end -= 1
    return end


def cue_text(text: str) -> str | None:
    """``text`` lower-cased, to test for the words a case-insensitive pattern needs; ``None`` when it
    holds one of the letters that pattern would also read as an ASCII one and ``str.lower`` does
    not turn into it (dotless ``ı``, long ``ſ``, dotted ``İ``: only the pattern can tell).

    Example:
        >>> cue_text("Maybe 5"), cue_text("Perhapſ 5")
        ('maybe 5', None)
    """
    if not text.isascii() and ("ſ" in text or "ı" in text or "İ" in text):
        return None
    return text.lower()


_last_cues: tuple[str | None, str | None] = (None, None)


def completion_cues(text: str) -> str | None:
    """:func:`cue_text` of ``text``, kept for the last text asked about: a completion's answer is read,
    then reviewed, and both read its lower-cased copy.

    Where it is not ``None`` it keeps every index of ``text`` (of all characters only ``İ`` lower-cases
    to two), so a slice of it is the lower-cased slice of ``text``.

    Example:
        >>> text = "The ANSWER is 5."
        >>> completion_cues(text), completion_cues(text) is completion_cues(text)
        ('the answer is 5.', True)
    """
    global _last_cues
    last = _last_cues
    if last[0] is text:
        return last[1]
    cues = cue_text(text)
    _last_cues = (text, cues)  # one assignment: safe under threads
    return cues


class CuedPattern:
    """A case-insensitive word pattern that is only searched where it can match.

    ``cues``: lower-case substrings one of which every match holds; ``cue_pattern``: a pattern
    searched on the lower-cased text that finds every other match's cue. The pattern runs only
    when a cue is in :func:`cue_text`: these word lists scan at tens of nanoseconds a character,
    a cue test at about one.

    Example:
        >>> HEDGE_WORD_RE.search("So it is 18.") is None, HEDGE_WORD_RE.search("It is MAYBE 18.").group()
        (True, 'MAYBE')
    """

    __slots__ = ("pattern", "cues", "cue_pattern")

    def __init__(self, pattern: re.Pattern[str], cues: tuple[str, ...], cue_pattern: re.Pattern[str] | None = None):
        self.pattern, self.cues, self.cue_pattern = pattern, cues, cue_pattern

    def search(self, text: str) -> re.Match[str] | None:
        """``pattern.search(text)``, skipped when ``text`` holds no cue."""
        return self.search_cued(text, cue_text(text))

    def search_cued(self, text: str, cues: str | None) -> re.Match[str] | None:
        """``pattern.search(text)``, skipped when ``cues`` holds no cue: ``cues`` is :func:`cue_text` of
        ``text``, or a slice of a longer text's that keeps every index (the same ASCII words)."""
        if cues is not None:
            for cue in self.cues:
                if cue in cues:
                    break
            else:
                if self.cue_pattern is None or self.cue_pattern.search(cues) is None:
                    return None
        return self.pattern.search(text)


HEDGE_WORD_RE = CuedPattern(re.compile(rf"\b(?:maybe|perhaps|probably|possibly|might|{_OWN_GUESS}|not\s+sure)\b",
                                       re.IGNORECASE), ("maybe", "perhaps", "probabl", "possibl", "might", "guess", "sure"))
_RANKED_RE = CuedPattern(re.compile(rf"\b(?:alternatively|otherwise|candidates?|most\s+likely|{_OWN_GUESS})\b",
                                    re.IGNORECASE), ("alternatively", "otherwise", "candidate", "likely", "guess"))
CHECK_RE = CuedPattern(re.compile(r"\b(?:check\w*|verif\w*|substitut\w*|plug\w*)\b", re.IGNORECASE),
                       ("check", "verif", "substitut", "plug"))  # a check that follows the answer
_ALTERNATIVE_RE = re.compile(r"\b(?:alternatively|otherwise|candidates?|either|or)\b|\bor\b|/", re.IGNORECASE)
CORRECTION_RE = CuedPattern(re.compile(
    r"\b(?:wait|actually|mistake|wrong|incorrect|correct(?:ed|ion|ing)?|re-?check\w*|re-?calculat\w*|re-?evaluat\w*"
    r"|error|oops|instead|fix\w*|redo|revis\w*|however|sorry|fails?|rather|equivalently|simplif\w*)\b|\bno\s*[,.]",
    re.IGNORECASE), ("wait", "actually", "mistake", "wrong", "correct", "check", "calculat", "evaluat", "error", "oops",
                     "instead", "fix", "redo", "revis", "however", "sorry", "fail", "rather", "equivalently", "simplif"),
    re.compile(r"no\s*[,.]"))
# A mark before a blank, a line break or a think tag; matched on its first character, so that the regex engine
# scans for one at C speed.
_SENTENCE_START_RE = re.compile(r"[.!?:\n<](?:(?<=[.!?:])(?=\s)|(?<=\n)|(?<=<)/?think>)")
# The last of _SENTENCE_START_RE's marks, found from the end (no two of them overlap, so it is finditer's last).
_LAST_SENTENCE_START_RE = re.compile(r"(?s:.*)(?:[.!?:](?=\s)|\n|</?think>)")
_SENTENCE_WINDOW = 400  # characters the cues of one statement are looked for in: bounded, so the reading stays linear
_CLOSING_TAIL = r"\s*(?:therefore|thus|hence|so)\s*,?\s*(?P<value>[^\n]{1,60}?)\s*\.?\s*$"
CLOSING_RE = re.compile(rf"(?:^|\n|[.!?]\s){_CLOSING_TAIL}", re.IGNORECASE)
# CLOSING_RE in two parts, each quick to search: its match at the start of the text ("^"), and its matches
# after a mark, whose first character the regex engine scans for at C speed ("[.!?]\s": a mark before a blank).
_CLOSING_AT_START_RE = re.compile(_CLOSING_TAIL, re.IGNORECASE)
_CLOSING_AFTER_MARK_RE = re.compile(rf"[\n.!?](?:(?<=\n)|(?=\s)){_CLOSING_TAIL}", re.IGNORECASE)

BOLD_LINE_RE = re.compile(r"^[ \t]*\*\*(?P<value>[^*\n]{1,40})\*\*[ \t.]*$", re.MULTILINE)  # a bold answer alone on its line
_DIGIT_RE = re.compile(r"[0-9]")
# PRM800K's answer heading: "# Answer" on a line of its own, the answer in the paragraph below it.
ANSWER_HEADING_RE = re.compile(r"^[ \t]*#{1,6}[ \t]*(?:final[ \t]+)?answer[ \t]*:?[ \t]*$", re.IGNORECASE | re.MULTILINE)
MINERVA_TAIL_RE = re.compile(r"I hope it is correct", re.IGNORECASE)  # "Final Answer: ... I hope it is correct."
STATEMENT_GAP = 80  # characters of words between two final statements that are one after the other


_ANSWER_TAG_RE = re.compile(r"<answer>(?P<content>.*?)(?:</answer>|$)", re.IGNORECASE | re.DOTALL)
# "The answer is not 24.", "the answer isn't $24$", "Answer: not **24**": a value the text says is not its answer.
# What may stand between the cue and the value: maths delimiters, bold, an answer tag ("were <answer>24</answer>").
_VALUE_OPENING = r"[ \t*_]*(?:\$|\\\(|<answer>)?[ \t*_]*"
_SUPPOSED_ANSWER_RE = re.compile(r"\b(?:if|suppose|supposing|assuming)\b[^.\n]{0,30}?\banswers?\s+(?:were|was|is|would\s+be)"
                                 rf"{_VALUE_OPENING}(?P<value>[^\s$*,;:!?()<]+?)\.?(?=[\s$*,;:!?()<]|$)", re.IGNORECASE)
_NEGATION_RE = re.compile(r"\b(?:not|never)\s+\S+", re.IGNORECASE)  # "#### not 24" after "The answer is not 24."
_NEGATED_ANSWER_RE = re.compile(r"\banswers?\b(?:\s+(?:is|was|would\s+be|will\s+be)\s*:?|\s*:)?[\s*_]*"
                                r"(?:not|never|isn['’]t|wasn['’]t)"
                                rf"{_VALUE_OPENING}(?P<value>[^\s$*,;:!?()<]+?)\.?(?=[\s$*,;:!?()<]|$)", re.IGNORECASE)

# "<final>not 72</final>", "Result: not 72", "#### not 72", "[[not 72]]", "\answer{not 72}": a value a tag, a line,
# a label or a bracket opens by negating.
_NEGATED_VALUE_RE = re.compile(r"(?:^|(?<=[>:(\[{\"'#=]))[ \t*_\"'\[({]*(?:not|never)"
                               rf"{_VALUE_OPENING}(?P<value>[-+]?[0-9][^\s$*,;:!?()<}}\]\"']*?)\.?"
                               r"(?=[\s$*,;:!?()<}\]\"']|$)", re.IGNORECASE | re.MULTILINE)
_DISOWNING_PATTERNS = (_NEGATED_ANSWER_RE, _SUPPOSED_ANSWER_RE, _NEGATED_VALUE_RE)


def answer_tags(text: str) -> list[tuple[int, int, str]]:
    """Every ``<answer>...</answer>`` of ``text`` as ``(start, end, content)``; an unclosed last one runs to the end.

    Example:
        >>> [content for _, _, content in answer_tags("<answer>25</answer> so <answer>24</answer>")]
        ['25', '24']
    """
    if "<" not in text:
        return []
    return [(tag.start(), tag.end(), tag.group("content")) for tag in _ANSWER_TAG_RE.finditer(text)]


def tags_standing_beside_the_last(text: str, tags: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The answer tags before the last one (``tags``: :func:`answer_tags`) with no correction between
    their end and the last tag's start: each of them is offered as an answer beside the last one.

    Linear in the length of ``text`` however many tags it holds: the text between two tags is
    searched once (a correction after a tag is after every earlier tag too). Every tag but the last
    ends on ``>``, which no correction reads, so a search from a tag's end sees what a search of the
    text cut there sees.

    Example:
        >>> text = "<answer>25</answer> <answer>26</answer> wait, no. <answer>27</answer> <answer>24</answer>"
        >>> [content for _, _, content in tags_standing_beside_the_last(text, answer_tags(text))]
        ['27']
    """
    kept: list[tuple[int, int, str]] = []
    boundary = tags[-1][0] if tags else 0
    for tag in reversed(tags[:-1]):
        if CORRECTION_RE.pattern.search(text, tag[1], boundary) is not None:
            break
        kept.append(tag)
        boundary = tag[1]
    return kept[::-1]


def disowned_answer(text: str) -> str | None:
    """The value ``text`` says last that its answer is *not* (``The answer is not 24.``) or offers
    only as a supposition (``If the answer were 24, ...``), when nothing is stated after it but
    other negations (``#### not 24``): a value read there is disowned, as a negated or
    hypothetical box is.

    Example:
        >>> disowned_answer("20 + 4 = 24. The answer is not 24."), disowned_answer("The answer is not 24 but 25.")
        ('24', None)
        >>> disowned_answer("If the answer were 24, the check would pass, but it does not.")
        '24'
        >>> disowned_answer("<final>not 24</final>"), disowned_answer("It is not 23 but 24.")
        ('24', None)
    """
    lowered = completion_cues(text)  # (the completion's answer was read on it)
    if lowered is None:  # letters only the patterns read as ASCII ones: each is searched
        matches = [match for pattern in _DISOWNING_PATTERNS for match in pattern.finditer(text)]
    else:  # each pattern only where its words stand ("answer"; "not", "never")
        matches = [match for pattern in _DISOWNING_PATTERNS[:2] for match in pattern.finditer(text)] \
            if "answer" in lowered else []
        if "not" in lowered or "never" in lowered:
            matches += _negated_values(text, lowered)
    found = max(matches, key=lambda match: match.start(), default=None)
    if found is None or found.group("value").lower() in ("a", "an", "the"):
        return None
    return None if re.search(r"[0-9]", _NEGATION_RE.sub("", text[found.end():])) else found.group("value")


_NEGATION_CUE_RE = re.compile(rf"(?:not|never){_VALUE_OPENING}[-+]?[0-9]")  # on the lower-cased text: a value follows
_OPENERS = '\n>:([{"\'#='
_NEGATION_DRESS = ' \t*_"\'[({'


def _negated_values(text: str, lowered: str) -> list[re.Match[str]]:
    """``list(_NEGATED_VALUE_RE.finditer(text))``, the pattern tried only where ``lowered`` (the lower-cased
    ``text``, every index kept) holds "not" or "never" before a value: a match starts on the run of dressing
    before the word, at its first place that opens a line or follows an opener."""
    found: list[re.Match[str]] = []
    scanned = 0
    for cue in _NEGATION_CUE_RE.finditer(lowered):
        at = cue.start()
        if at < scanned:
            continue
        run = at
        while run > scanned and text[run - 1] in _NEGATION_DRESS:
            run -= 1
        start = next((index for index in range(run, at + 1) if index == 0 or text[index - 1] in _OPENERS), None)
        match = _NEGATED_VALUE_RE.match(text, start) if start is not None else None
        if match is not None:
            found.append(match)
            scanned = max(match.end(), match.start() + 1)
    return found


_STATED_NUMBER_RE = re.compile(r"(?<![0-9])[-+\u2212]?[0-9]+(?:[.,][0-9]+)*(?![0-9])")
_OR_RE = re.compile(r"\s+(?:or|OR|Or)\s+")
_CLOSING_PUNCTUATION = ".!,;: \t"
_NUMBER_START = frozenset("0123456789-+\u2212")
_FORMAT_MARK_RE = re.compile(r"[\[\](){}<>:=#*|\\]")


def repeated_statement(text: str) -> tuple[str, ...]:
    """The numbers of one statement written again with only its number changed, at the end of ``text``:
    offered with "or" on the last line (``Answer: 73 or Answer: 72``, ``[[73]] or [[72]]``) or on each
    of the last two lines (``Result: 73`` then ``Result: 72``), in any answer format; ``()`` when there is
    none, when every copy states the same number, when the copies are bare numbers (``5 or 6``), or when the
    last line holds no mark of a format (a bracket, a colon, an equals sign, ``#``, ``*``, ``|`` or ``\\``).

    Example:
        >>> repeated_statement("So:\\nANS(73) or ANS(72)"), repeated_statement("Result: 73\\n\\nResult: 72.")
        (('73', '72'), ('73', '72'))
        >>> repeated_statement("Part 1: 73\\nPart 2: 72"), repeated_statement("Result: 72\\nResult: 72")
        ((), ())
    """
    end = len(text.rstrip())  # (the text itself when it ends on no blank)
    last_break = text.rfind("\n", max(0, end - 600), end)
    last = text[last_break + 1:end].strip()
    if not last or not _FORMAT_MARK_RE.search(last):  # an answer format marks its statement; a sentence is read
        return ()                                      # by the readers' own rules
    if ("or" in last or "OR" in last or "Or" in last) and _OR_RE.search(last):
        found = _same_but_number(_OR_RE.split(last))
        if found:
            return found
    if last_break <= 0:
        return ()
    previous_break = text.rfind("\n", max(0, last_break - 600), last_break)
    previous = text[previous_break + 1:last_break].strip()
    if not previous:  # a blank line between: the line before it
        head_end = last_break
        while head_end > 0 and text[head_end - 1].isspace():
            head_end -= 1
        previous_break = text.rfind("\n", max(0, head_end - 600), head_end)
        previous = text[previous_break + 1:head_end].strip()
    # Two lines alike but for their number are about as long and begin alike (the same character, or a number).
    if not previous or abs(len(previous) - len(last)) > 24 \
            or previous[0] != last[0] and not (previous[0] in _NUMBER_START and last[0] in _NUMBER_START):
        return ()
    return _same_but_number([previous, last])


def _same_but_number(parts: list[str]) -> tuple[str, ...]:
    """The numbers of ``parts`` when each states one number, all read alike without it and with something
    besides it (bare numbers are left to the readers' own hedge rules), and the numbers differ; else ``()``."""
    if len(parts) < 2:
        return ()
    numbers, shapes = [], set()
    for part in parts:
        found = _STATED_NUMBER_RE.findall(part)
        if len(found) != 1:
            return ()
        numbers.append(found[0])
        shapes.add(_STATED_NUMBER_RE.sub("#", part).rstrip(_CLOSING_PUNCTUATION))
    if len(shapes) != 1 or shapes == {"#"} or len(set(numbers)) == 1:
        return ()
    return tuple(numbers)


def negates_an_answer(span: str) -> bool:
    """Whether ``span``, what follows an answer phrase, says an answer is *not* a value (``Final Answer:
    The final answer is not 72.``): the phrase then states nothing, as ``The answer is not 72.`` does.

    Example:
        >>> negates_an_answer("The final answer is not 72"), negates_an_answer("The final answer is 72")
        (True, False)
    """
    return "answer" in span.lower() and _NEGATED_ANSWER_RE.search(span) is not None


# "\boxed{24}, or 25.", "The answer is 24. Or maybe 25.", "But it could also be 25.", "Hmm, or is it 25?": a
# number offered as another answer right after the one stated. Only hedge words, maths delimiters or bold stand
# between the cue and the number; the clause ends after it (after "or" and its kin, up to two words first:
# "or 25 eggs."). A percent ("or 14.76%") or an expression ("or 6 + 6 + ...") is no such number.
_OFFER_CUE = (r"\b(?:(?P<offer>or(?:\s+is\s+it|\s+it\s+is|\s+it['’]s)?|alternatively|(?:it\s+)?could\s+(?:also\s+)?be"
              r"|unless\s+it(?:\s+is|['’]s))|maybe|perhaps|possibly|probably)[ \t,:]*"
              r"(?:(?:maybe|perhaps|possibly|probably|even)[ \t,:]+)?(?:\$|\\\(|\\boxed\{|\*\*)?[ \t]*")
_OFFERING_CUE_RE = re.compile(rf"{_OFFER_CUE}\Z", re.IGNORECASE)  # right before a number it offers
_OFFERED_AFTER_RE = re.compile(
    _OFFER_CUE + r"(?P<value>[-\u2212]?[0-9][0-9,]*(?:\.[0-9]+)?(?:/[0-9]+)?)(?![0-9]|[.,/][0-9])"
    r"(?:[ \t]*(?:\$|\\\)|\}|\*\*))*(?P<words>(?:[ \t]+[A-Za-z]+){0,2})[ \t]*(?=[.?!,;)]|$)",
    re.IGNORECASE | re.MULTILINE)
_PERCENT_BEFORE_RE = re.compile(r"(?:%|\\%|percent)[ \t}$)*]*\Z")  # a statement that ends on a percent
_OFFERED_WINDOW = 200  # characters after a statement an offered number is looked for in
_CUE_REACH = 48  # characters before it its cue, hedge words and opener take at most ("alternatively, perhaps \boxed{")


# How every _OFFER_CUE ends, its words one space apart ("or", "or is it", "could also be", "unless it's", a hedge word).
_CUE_ENDINGS = ("or", "or is it", "or it is", "or it's", "or it’s", "alternatively", "could be", "could also be",
                "unless it is", "unless it's", "unless it’s", "maybe", "perhaps", "possibly", "probably", "even")
_VALUE_OPENERS = ("\\boxed{", "\\(", "$", "**")
_CUE_LAST_LETTERS = frozenset("rtsyenRTSYEN")  # the last letter of every cue ending


def _ends_on_cue(text: str, lo: int, pos: int) -> bool:
    """Whether ``text[lo:pos]`` may end on an offering cue (:data:`_OFFER_CUE`): its words, past an opener,
    blanks, commas and colons, end as a cue does. A few string tests, far quicker than a search that tries
    every place before ``pos``; letters outside ASCII are left to the pattern."""
    tail = text[lo:pos].rstrip(" \t")
    if tail.endswith(_VALUE_OPENERS):
        tail = tail[:-next(len(opener) for opener in _VALUE_OPENERS if tail.endswith(opener))]
    tail = tail.rstrip(" \t,:")
    if not tail.isascii():
        return True
    # (a cue's words may stand apart by any blanks, "could\n  be": its last three words, one space apart)
    return tail[-1:] in _CUE_LAST_LETTERS and " ".join(tail.split()[-3:]).lower().endswith(_CUE_ENDINGS)


# A unit after a number: "90 minutes", "5 km", "90 \text{ min".
_UNIT_AFTER_RE = re.compile(rf"[ \t$]*(?:\\(?:text|mathrm)\{{\s*)?({UNIT_WORD}|{UNIT_SYMBOL})", re.IGNORECASE)
_SCALED_RE = re.compile(rf"[-\u2212]?[0-9][0-9,.]*\s+({SCALE_WORD})s?", re.IGNORECASE)
# A statement's verb or mark right before a hedge word: "it is maybe 24", "the total would be probably 24", "x = maybe 5"
_STATED_BY_RE = re.compile(r"(?:\b(?:is|are|was|were|be|equals?|gives?|makes?|get)|[:=])\s*\Z", re.IGNORECASE)
_OFFERED_BESIDE_CHARS = 120  # characters before an offering cue the number it offers an alternative to stands in
_NUMBER_OR_FRACTION_RE = re.compile(r"\\[dt]?frac\{[0-9]+\}\{[0-9]+\}"
                                    r"|(?<![0-9])[-\u2212]?[0-9][0-9,]*(?:\.[0-9]+)?(?:/[0-9]+)?")


def _unit(text: str, start: int, end: int) -> str | None:
    """The unit of the number at ``text[start:end]``: a unit word after it (singular), ``dollar`` for a
    currency sign before it (``$18``, not the maths span ``$18$``), else ``None``."""
    word = _UNIT_AFTER_RE.match(text, end)
    if word is not None:
        return word.group(1).lower().rstrip("s")
    return "dollar" if start > 0 and text[start - 1] == "$" and not text.startswith("$", end) else None


def _offered_beside(text: str, end: int, value: str, value_end: int) -> bool:
    """Whether the last number of the characters before ``end`` is another value than ``value`` (written
    otherwise and unequal; ``value`` ends at ``value_end``): the number an offering cue at ``end`` offers
    ``value`` beside. ``72 or 72``, ``$\\frac{1}{2}$, or 0.5``, ``n = 4. (Or, n could be 4.)`` restate it, and
    so do two numbers in different units (``1.5 hours, or 90 minutes``, ``$18, or 1800 cents``); with no
    number before, nothing is offered beside it."""
    before = None
    for before in _NUMBER_OR_FRACTION_RE.finditer(text, max(0, end - _OFFERED_BESIDE_CHARS), end):
        pass
    if before is None or before.group() == value:
        return False
    units = _unit(text, before.start(), before.end()), _unit(text, value_end - len(value), value_end)
    if units[0] is not None and units[1] is not None and units[0] != units[1]:
        return False  # one quantity in two units
    number = parse_number(value)
    scaled = _SCALED_RE.fullmatch(value.strip())  # "2 dozen", "1.2 million"
    if scaled is not None and number is not None:
        number *= SCALES[scaled.group(1).lower()]
    return number is None or parse_number(before.group()) != number


def statement_hedge(text: str, start: int, end: int, *, phrase: int | None = None) -> str | None:
    """Why the value stated at ``text[start:end]`` is offered rather than stated, else ``None``:

    * a cue right before it (``or``, ``alternatively``, ``could (also) be``, ``unless it is``, with hedge
      words, maths delimiters or bold after it) offers it beside another number just before
      (:func:`_offered_beside`: ``..., but it could be 24.``; ``72 or 72``, ``$\\frac{1}{2}$, or 0.5``
      and ``1.5 hours, or 90 minutes`` restate one value);
    * a hedge word right before it qualifies a statement of it (``It is maybe 24.``, ``The total is
      probably 24``; ``Probably 24 is what it asks.`` states nothing to qualify);
    * ``phrase``: where the answer phrase it was read from starts; a hedge word between the phrase and the
      value (``The answer is probably 24.``; not ``Since we might double count, the answer is 24.``).

    Example:
        >>> text = "I think the answer is 25, but it could be 24."
        >>> statement_hedge(text, 42, 44)
        "its answer is offered as a possibility ('it could be' before it), not stated"
        >>> statement_hedge("The answer is probably 24.", 23, 25, phrase=0) is not None
        True
        >>> statement_hedge("So it is 72 or 72.", 15, 17), statement_hedge("Probably 24 is what it asks.", 9, 11)
        (None, None)
    """
    lo = max(0, start - _CUE_REACH)
    cue = _OFFERING_CUE_RE.search(text, lo, start) if _ends_on_cue(text, lo, start) else None
    if cue is not None and (_offered_beside(text, cue.start(), text[start:end], end) if cue.group("offer") is not None
                            else _STATED_BY_RE.search(text, max(0, cue.start() - 40), cue.start()) is not None):
        return f"its answer is offered as a possibility ({cue.group().strip()!r} before it), not stated"
    if phrase is not None and 0 <= phrase < start and HEDGE_WORD_RE.search(text[phrase:start]):
        return "its answer phrase hedges it (maybe, probably, might) before stating it"
    return None


def offered_after(text: str, end: int, value: Fraction, *, words: bool = True) -> re.Match[str] | None:
    """A number offered as another answer right after a statement of ``value`` that ends at ``end``
    (``\\boxed{24}, or 25.``, ``The answer is 24. Or maybe 25.``, ``But it could also be 25.``): the first
    number after the statement, with ``or``, ``alternatively``, ``could be``, ``unless it is`` or a hedge
    word (``maybe``, ``perhaps``) right before it, ending its clause, and different from ``value`` beyond
    its own rounding (``\\boxed{24.4}, or 24`` restates it; ``or 1.2 million`` is 1200000; after a percent,
    ``\\boxed{25\\%}, or 0.25``, it is read as one). Its ``value`` group is the number, its ``words`` group
    what follows it after ``or`` and its kin (up to two words: a unit; ``words=False``: none may); a hedge
    word takes no words after the number (``Possibly 3 more eggs.`` offers no answer).

    Example:
        >>> offered_after(r"So \\boxed{24}, or 25.", 14, Fraction(24)).group("value")
        '25'
        >>> offered_after(r"So \\boxed{24}, or 24.0.", 14, Fraction(24)), offered_after("24. Or 6 + 6.", 2, 24)
        (None, None)
    """
    first = _DIGIT_RE.search(text, end, end + _OFFERED_WINDOW)
    if first is None:  # (a completion that ends on its answer: the common case)
        return None
    # The cue, a hedge word and an opener stand right before the number (and its sign): a cue is looked for there.
    value_start = first.start() - 1 if first.start() > end and text[first.start() - 1] in "-\u2212" else first.start()
    lo = max(end, value_start - _CUE_REACH)
    if not _ends_on_cue(text, lo, value_start):
        return None
    found = _OFFERED_AFTER_RE.search(text, lo, _line_end(text, first.start()))  # ("$": the line's end)
    if found is None or found.start("value") > first.start() or (
            found.group("words") and (not words or found.group("offer") is None)):
        return None  # (a sign may stand before the first digit)
    offered = parse_number(found.group("value").replace("\u2212", "-"))
    if offered is None:
        return None
    scale = SCALES.get(found.group("words").split()[0].lower(), 1) if found.group("words") else 1
    decimals = len(found.group("value").partition(".")[2])
    if _PERCENT_BEFORE_RE.search(text, max(0, end - 12), end) is not None:  # "\boxed{25\%}, or 0.25"
        scale *= 100
    return None if abs(Fraction(offered) * scale - value) * 2 * 10 ** decimals <= scale else found


def only_words_between(text: str, end: int, start: int) -> bool:
    """Whether a statement ending at ``end`` stands right before one starting at ``start``: at most
    80 characters between them, no digit and no correction (Minerva's "I hope it is correct." is
    none); a label line between them (``**Step 3: Final answer**``) is no digit of the gap. Two such statements with different values are two answers.

    Example:
        >>> text = "The answer is 20.\\n\\nSo the answer is 15."
        >>> only_words_between(text, text.index("20") + 3, text.index("So"))
        True
        >>> text = "The answer is 20. Wait, no: 15."
        >>> only_words_between(text, text.index("20") + 3, text.index(": 15"))
        False
    """
    if end > start:
        return False
    gap = text[end:start]
    if "\n" in gap:
        # a label line is no part of the gap ("**Step 3: Final answer**")
        return _only_words("\n".join(line for line in gap.split("\n") if not is_label(line)))
    return _only_words(gap) or is_label(gap)  # a gap that is one label line is no gap


def _only_words(gap: str) -> bool:
    """Whether ``gap`` is at most 80 characters of words: no digit, no correction (Minerva's "I hope it is
    correct." is none)."""
    if len(gap) > STATEMENT_GAP or _DIGIT_RE.search(gap) is not None:
        return False
    cues = cue_text(gap)
    if cues is None or "hope" in cues:
        return CORRECTION_RE.search(MINERVA_TAIL_RE.sub("", gap)) is None
    return CORRECTION_RE.search_cued(gap, cues) is None



Answer = TypeVar("Answer")
Statement = TypeVar("Statement")


@dataclass(frozen=True, init=False)
class Review(Generic[Answer, Statement]):
    """What a domain's hedge and override stage makes of a completion's answer (a maths
    :class:`~referee.verifiers.math.extract.Extraction` and its statements as text, a GSM8K one
    and its statements as numbers).

    ``answer``: the answer to compare (read again when a disowned box was dropped); ``rule`` and
    ``reason``: a rule that makes the completion ``wrong`` whatever the gold, else ``None``;
    ``others``: further statements of the answer, each of which must equal the gold too, with
    ``others_rule`` naming why they count.

    Example:
        >>> Review("5").rule is None, Review("5", others=("6",), others_rule="override").others
        (True, ('6',))
    """

    answer: Answer | None
    rule: str | None = None
    reason: str = ""
    others: tuple[Statement, ...] = ()
    others_rule: str = ""

    def __init__(self, answer: Answer | None, rule: str | None = None, reason: str = "",
                 others: tuple[Statement, ...] = (), others_rule: str = "") -> None:
        # One Review per completion, so the fields are stored directly (the dataclass is frozen:
        # attribute assignment is refused), at under half the cost of the generated __init__.
        fields = self.__dict__
        fields["answer"], fields["rule"], fields["reason"] = answer, rule, reason
        fields["others"], fields["others_rule"] = others, others_rule


def after_reasoning(completion: str) -> str | None:
    """What follows the last ``</think>``; the whole text when it has no think block; ``None`` when one is left open.

    Example:
        >>> after_reasoning("<think>maybe \\\\boxed{3}</think> so \\\\boxed{4}"), after_reasoning("<think>\\\\boxed{3}")
        (' so \\\\boxed{4}', None)
    """
    if "<" not in completion:  # no think tag (a test for one character is the quickest)
        return completion
    close = completion.rfind(THINK_CLOSE)
    if close >= 0:
        return completion[close + len(THINK_CLOSE):]
    return None if THINK_OPEN in completion else completion


def blanked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each ``(start, end)`` span replaced by as many spaces (every index kept).

    Example:
        >>> blanked("a [b] c", [(2, 5)])
        'a     c'
    """
    for start, end in spans:
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _line_start(text: str, position: int) -> int:
    """Where the line holding ``position`` starts, at most 400 characters back."""
    return max(text.rfind("\n", 0, position) + 1, position - _SENTENCE_WINDOW)


def _line_end(text: str, position: int) -> int:
    """Where the line holding ``position`` ends, at most 400 characters on."""
    end = text.find("\n", position, position + _SENTENCE_WINDOW)
    return end if end >= 0 else min(len(text), position + _SENTENCE_WINDOW)


def sentence_start(text: str, position: int) -> int:
    """Where the sentence holding ``position`` starts (after ``.``, ``!``, ``?``, ``:``, a line break or a
    think tag), looking back at most 400 characters (a longer sentence is read from there).

    Example:
        >>> text = "First 5. Then 6."
        >>> text[sentence_start(text, 14):]
        ' Then 6.'
    """
    window = max(0, position - _SENTENCE_WINDOW)
    last = _LAST_SENTENCE_START_RE.match(text, window, position)
    return last.end() if last else window


def sentence_end(text: str, position: int) -> int:
    """Where the sentence holding ``position`` ends.

    Example:
        >>> text = "First 5. Then 6."
        >>> text[:sentence_end(text, 2)]
        'First 5'
    """
    match = _SENTENCE_START_RE.search(text, position)
    return match.start() if match else len(text)


def _quoted(text: str, start: int, end: int) -> bool:
    line_start = max(text.rfind("\n", max(0, start - _SENTENCE_WINDOW), start) + 1, start - _SENTENCE_WINDOW, 0)
    line_end = text.find("\n", end, end + _SENTENCE_WINDOW)
    before, after = text[line_start:start], text[end:line_end if line_end >= 0 else end + _SENTENCE_WINDOW]
    return sum(before.count(q) for q in _QUOTES) % 2 == 1 and any(q in after for q in _QUOTES)


def disowned_boxes(text: str, boxes: list[tuple[int, int, str]] | None = None) -> list[tuple[int, int, str]]:
    """The boxes ``text`` disowns, with why: in a comment or code block, negated, hypothetical, quoted.

    ``boxes``: the :func:`~referee.verifiers.text.latex.boxed_spans` of ``text``, when the caller has them.

    Example:
        >>> [why for _, _, why in disowned_boxes(r"It is not \\boxed{7}. <!-- \\boxed{8} --> So \\boxed{9}.")]
        ['negated', 'in a comment or code block']
    """
    boxes = boxed_spans(text) if boxes is None else boxes
    if not boxes:
        return []
    # (a test for one character, far quicker than for several, first)
    fenced = [match.span() for match in _FENCED_RE.finditer(text)] \
        if ("<" in text and "<!--" in text) or ("`" in text and "```" in text) else []
    fence_starts = [fence_start for fence_start, _ in fenced]
    quotes = '"' in text or "“" in text or "”" in text  # _QUOTES
    found = []
    for start, end, _ in boxes:
        fence = bisect.bisect_right(fence_starts, start) - 1 if fenced else -1
        if fence >= 0 and start < fenced[fence][1]:
            found.append((start, end, "in a comment or code block"))
            continue
        why = _disowning_cue(text, start) or ("quoted" if quotes and _quoted(text, start, end) else None)
        if why is not None:
            found.append((start, end, why))
    return found


def _disowning_cue(text: str, start: int) -> str | None:
    """``"negated"`` or ``"hypothetical"`` when the words right before the box at ``start`` disown it."""
    window = max(0, start - _CUE_CHARS)
    whole = completion_cues(text)  # a slice of it holds the same ASCII words as the slice lower-cased
    cues = whole[window:start] if whole is not None else cue_text(text[window:start])
    if cues is not None:
        for word in DISOWNING_CUES:
            if word in cues:
                break
        else:  # neither rule can match
            return None
    before = text[sentence_start(text, start):start]
    if _NEGATED_RE.search(before[-_CUE_CHARS:]):
        return "negated"
    if _HYPOTHETICAL_TAIL_RE.search(before[-_CUE_CHARS:]) and _HYPOTHETICAL_RE.search(before):
        return "hypothetical"
    return None


def is_blank_box(content: str) -> bool:
    """Whether a box's content is nothing but spacing (``\\boxed{}``, ``\\boxed{\\ }``).

    Example:
        >>> is_blank_box(""), is_blank_box("\\\\ "), is_blank_box("7")
        (True, True, False)
    """
    return _BLANK_BOX_RE.fullmatch(content) is not None


def same_statement(first: str, second: str) -> bool:
    """Whether two statements are one text but for spacing and ``$``.

    Example:
        >>> same_statement("$12$", "12 "), same_statement("12", "15")
        (True, False)
    """
    return re.sub(r"\s|\$", "", first) == re.sub(r"\s|\$", "", second)


def alternatives_before(text: str, boxes: list[tuple[int, int, str]]) -> list[str]:
    """The contents of earlier boxes offered as alternatives to the last of ``boxes`` (no correction in between).

    An earlier box is an alternative when its sentence hedges or ranks (``maybe``,
    ``alternatively``, ``candidate``) or when only a short ``or`` / ``/`` stands between the two.

    Example:
        >>> text = r"Candidate 1: \\boxed{5}. Candidate 2: \\boxed{6}."
        >>> alternatives_before(text, boxed_spans(text))
        ['5']
        >>> text = r"First \\boxed{5}. Wait, that is wrong: \\boxed{6}."
        >>> alternatives_before(text, boxed_spans(text))
        []
    """
    found = []
    later = boxes[-1]
    for box in reversed(boxes[:-1]):
        between = text[box[1]:later[0]]
        # the lines of the two boxes: a word of the lines between them ranks or hedges neither
        window = text[_line_start(text, box[0]):_line_end(text, box[1])] + "\n" \
            + text[max(box[1], _line_start(text, later[0])):later[0]]
        if CORRECTION_RE.search(between) or same_statement(box[2], later[2]):
            break
        short = len(re.sub(r"[\s$\\()\[\]{}.,;:]|quad|text", "", between)) <= 3
        if HEDGE_WORD_RE.search(window) or _RANKED_RE.search(window) \
                or (short and _ALTERNATIVE_RE.search(between)):
            found.append(box[2].strip())
            later = box
            continue
        break
    return found
