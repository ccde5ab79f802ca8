"""A completion that ends on its answer alone: the closing statement, read without the text before it.

Most completions end on one statement of the answer: a sentence around a box (``Therefore, she
makes \\(\\boxed{18}\\) dollars.``, ``\\[ \\boxed{18} \\]`` under a ``**Final Answer**`` heading, as
reasoning models close), an answer phrase (``The answer is 18.``, Minerva's ``Final Answer: ...``,
``**Answer:** 18``) or a bold number, with nothing after it but display-maths fences and rules.
When that statement holds one plain number and the text before it holds no other statement the
hedge and override policy would read (no other box, no ``####`` line, no answer tag, no
statement just before it), reading the statement alone gives the answer the whole text gives,
and the policy has nothing to say. :func:`closing_answer` finds it from the end; the verifier
then reads that short statement (the same ones recur across a group of completions: that
reading is cached) and skips the policy. The policy's own tests decide what they can: whether
the box is disowned or hedged, whether a statement stands just before it, whether the last two
lines state one thing twice. A text with a ``####`` line is left to the full reading: that line
is read first, and its policy is quick. ``tests/verifiers/test_hedge_fast_paths.py`` holds every
verdict to the full reading.
"""

from __future__ import annotations

import re

from ..text.hedging import DISOWNING_CUES, HEDGE_WORD_RE, completion_cues, disowned_boxes, repeated_statement
from .hedges import _statement_before, box_hedged

_NUMBER = r"(?:\\?\$)?[-\u2212]?(?:\\?\$)?[0-9][0-9,.]*"
_PHRASE = r"(?:(?:So|Therefore|Thus|Hence),? )?(?:[Tt]he (?:final )?answer is:?|(?:\*\*)?(?:Final )?Answer:(?:\*\*)?)"
# Closing lines with one number and none of the words the policy reads (a negation, "or", a hedge or
# correction word): an answer phrase, a bold number. A box is read from its sentence: one plain number
# in it, words after it (no digit, mark, quote or command but maths brackets).
_STATEMENT_LINE_RE = re.compile(rf"[ \t]*(?:{_PHRASE} (?:\*\*)?{_NUMBER}(?:\*\*)?\$?\.?|Final Answer: The final answer is "
                                rf"{_NUMBER}\$?\. I hope it is correct\.|(?P<bold>\*\*{_NUMBER}\*\*))[ \t.]*")
_WORD = r"[^\n0-9<>`*#\\\"“”]*"
_BOX_CLOSING_RE = re.compile(rf"\\boxed\{{(?P<content>{_NUMBER})\}}{_WORD}(?:\\[()\[\]]{_WORD})*")
_FENCE_RE = re.compile(r"[ \t]*(?:\\\[|\\\]|\$\$|-{3,}|_{3,}|\*{3,})[ \t]*")  # below the statement: states nothing
_FENCES = 3  # fence lines looked past
# Every hedge word (HEDGE_WORD_RE) and every word that disowns a box (negated, supposed) holds one of these.
_HEDGED_OR_DISOWNED_RE = re.compile("|".join((*HEDGE_WORD_RE.cues, *DISOWNING_CUES)))
_QUOTE_RE = re.compile("[\"“”]")
_TAG_RE = re.compile(r"<[A-Za-z/!]")  # an answer tag, a think tag, a comment (a "<" before a digit is maths)
_READ_ALONE = ("auto", "flexible")  # the modes that read such statements (strict mode reads "####" lines alone)


def closing_answer(text: str, mode: str) -> str | None:
    """The closing statement, from where its answer is read, when ``text`` ends on its answer alone
    (see above); else ``None``.

    Example:
        >>> closing_answer("9 * 2 = 18 dollars a day.\\n\\n**Final Answer**\\n\\\\[\\n\\\\boxed{18}\\n\\\\]\\n", "auto")
        '\\\\boxed{18}'
        >>> closing_answer("9 * 2 = 18.\\nThe answer is 18.", "auto")
        'The answer is 18.'
        >>> closing_answer("The answer is 20.\\n\\\\boxed{18}", "auto"), closing_answer("It is maybe \\\\boxed{18}.", "auto")
        (None, None)
    """
    # (A "####" line is read before anything else, and its policy is quick: it is never read alone here.)
    if mode not in _READ_ALONE or "#" in text and "####" in text:
        return None
    start, end = _line_before(text, len(text))
    for _ in range(_FENCES):
        if _FENCE_RE.fullmatch(text, start, end) is None:
            break
        start, end = _line_before(text, start)
    line = text[start:end]
    if "\\boxed" not in line and "nswer" not in line and "**" not in line:  # (one of these is in each closing)
        return None
    if "`" in text or "<" in text and _TAG_RE.search(text) is not None:
        return None
    box = line.rfind("\\boxed")
    if box >= 0:
        return _box_alone(text, start, start + box, end)
    found = _STATEMENT_LINE_RE.fullmatch(line)
    cues = completion_cues(text) if found is not None else None
    if cues is None or "\\" in text and (text.find("\\boxed", 0, start) >= 0 or text.find("\\fbox", 0, start) >= 0):
        return None
    if found.group("bold") is not None:  # the policy reads every bold number and answer phrase before a bold one
        return line if cues.find("answer", 0, start) < 0 and text.find("**", 0, start) < 0 else None
    phrase = max(start, cues.rfind("answer", start, end))
    return line if _statement_before(text, phrase, None) is None and not repeated_statement(text) else None


def _box_alone(text: str, start: int, box: int, end: int) -> str | None:
    """The box at ``box`` and the words after it to ``end``, when it is the only box and the policy
    finds nothing to say of it (it is not disowned, hedged, nor preceded by another statement);
    ``start``: where its line starts."""
    found = _BOX_CLOSING_RE.fullmatch(text, box, end)
    if found is None or text.find("\\boxed", 0, box) >= 0 or "fbox" in text and text.find("\\fbox") >= 0:
        return None
    cues = completion_cues(text)
    if cues is None:
        return None
    # The box's sentence is on its line: a line with no word of a hedge or a disowning, and no quote,
    # is neither (the policy's own tests run on the others).
    if _HEDGED_OR_DISOWNED_RE.search(cues, start, end) is not None or _QUOTE_RE.search(text, start, end) is not None:
        span = (box, found.end("content") + 1, found.group("content"))
        if disowned_boxes(text, [span]) or box_hedged(text, span):
            return None
    return text[box:end] if _statement_before(text, box, None) is None else None


def _line_before(text: str, end: int) -> tuple[int, int]:
    """``(start, end)`` of the last line of ``text[:end]`` that is not blank (``(0, 0)``: none)."""
    while end > 0 and text[end - 1] in " \t\r\n":
        end -= 1
    return text.rfind("\n", 0, end) + 1, end
