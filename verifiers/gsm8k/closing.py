"""A completion that ends on its answer alone: the closing line, read without the text before it.

Most completions end on one line that states the answer (``The answer is 18.``, ``Therefore, she
makes \\(\\boxed{18}\\) dollars.``, ``**18**``, Minerva's ``Final Answer: ...``),
often under a heading (``**Final Answer**``, ``### Answer:``, ``So the total is:``) and between
display-maths fences (``\\[`` ... ``\\]``), as reasoning models close. When every mark a statement
is read by (a ``####`` line, a box, "answer" in any case) stands in those last lines and no bold
line that states a number stands just before them, the text before them states nothing: the
closing line read alone gives the answer the whole text gives, and no rule of the hedge and
override policy has anything to read (no other statement, no tag or comment, no code block, no
hedge, negation, correction or "or" where the answer is stated). A text with a ``####`` line is
left to the full reading: that line is read first, and its policy is quick.

:func:`closing_line` finds that line from the end, so that the verifier reads one short line (the
same lines recur across a group of completions: that reading is cached) and skips the policy; a
text that does not end so costs one match on its last line. ``tests/verifiers/
test_hedge_fast_paths.py`` holds every verdict to the full reading.
"""

from __future__ import annotations

import re

from ..text.hedging import _CUE_WORDS, BOLD_LINE_RE, HEDGE_WORD_RE, STATEMENT_GAP, completion_cues, sentence_start
from ..text.labels import is_label
from .extract import _span_answer

_NUMBER = r"(?:\\?\$)?[-\u2212]?(?:\\?\$)?[0-9][0-9,.]*"
_PHRASE = r"(?:(?:So|Therefore|Thus|Hence),? )?(?:[Tt]he (?:final )?answer is:?|(?:\*\*)?(?:Final )?Answer:(?:\*\*)?)"
# Closing lines with one number and none of the words the policy reads (a negation, "or", a hedge or
# correction word): an answer phrase, a bold number; and a sentence of words around one box, its words
# tested for hedges and negations (sentences before it on its line are text before it).
_STATEMENT_LINE_RE = re.compile(rf"[ \t]*(?:{_PHRASE} (?:\*\*)?{_NUMBER}(?:\*\*)?\$?\.?|Final Answer: The final answer is "
                                rf"{_NUMBER}\$?\. I hope it is correct\.|(?P<bold>\*\*{_NUMBER}\*\*))[ \t.]*")
_READ_ALONE = ("auto", "flexible")  # the modes that read such lines (strict mode reads "####" lines alone)
_WORD = r"[^\n0-9<>`*#\\\"“”]*"
_WORDS = rf"{_WORD}(?:\\[()\[\]]{_WORD})*"  # no digit, mark, quote or command but maths brackets
_BOX_SENTENCE_RE = re.compile(rf"{_WORDS}\\boxed\{{{_NUMBER}\}}{_WORDS}")
# Lines around the closing line that state nothing: display-maths fences and rules on either side
# (blank lines are stepped over), and above it one heading or one sentence of words leading in to it.
_FENCE_RE = re.compile(r"[ \t]*(?:\\\[|\\\]|\$\$|-{3,}|_{3,}|\*{3,})[ \t]*")
_HEADING_RE = re.compile(r"[ \t]*(?:(?:#{1,3}[ \t]*|\*\*)?(?:Final [Aa]nswer|FINAL ANSWER|Answer|Conclusion|Final [Rr]esult"
                         rf"|Result)[ \t]*:?[ \t]*(?:\*\*)?[ \t]*:?|{_WORDS}:)[ \t]*")
_HEADING_ENDS = ("answer", "conclusion", "result")
_FENCES = 3  # fence lines looked past on either side
# Every hedge word (HEDGE_WORD_RE) and every word that disowns a box (negated, supposed) holds one of these.
_HEDGED_OR_DISOWNED_RE = re.compile("|".join((*HEDGE_WORD_RE.cues, *_CUE_WORDS)))
_BOLD_WINDOW = STATEMENT_GAP + 100  # the policy reads bold lines this far before a statement


def closing_line(text: str, mode: str) -> str | None:
    """The closing line when ``text`` ends on its answer alone (see above), else ``None``.

    Example:
        >>> closing_line("9 * 2 = 18 dollars a day.\\n\\n**Final Answer**\\n\\\\[\\n\\\\boxed{18}\\n\\\\]\\n", "auto")
        '\\\\boxed{18}'
        >>> closing_line("9 * 2 = 18. Therefore, she makes \\\\(\\\\boxed{18}\\\\) dollars a day.", "auto")
        ' Therefore, she makes \\\\(\\\\boxed{18}\\\\) dollars a day.'
        >>> closing_line("The answer is 20.\\n#### 18", "auto"), closing_line("So it is maybe \\\\boxed{18}.", "auto")
        (None, None)
    """
    # (A "####" line is read before anything else, and its policy is quick: it is never read alone here.)
    if mode not in _READ_ALONE or "<" in text or "`" in text or "#" in text and "####" in text:
        return None
    start, end = _line_before(text, len(text))
    for _ in range(_FENCES):  # fences below the closing line
        if _FENCE_RE.fullmatch(text, start, end) is None:
            break
        start, end = _line_before(text, start)
    line = text[start:end]
    if "nswer" not in line and "*" not in line and "\\" not in line:  # (every closing line holds one of these)
        return None
    box = text.rfind("\\boxed", start, end)
    if box >= 0:  # the sentence of the box; the sentences before it on its line are text before it
        start = max(start, sentence_start(text, box))
        found = _BOX_SENTENCE_RE.fullmatch(text, start, end)
    else:
        found = _STATEMENT_LINE_RE.fullmatch(text, start, end)
    cues = completion_cues(text) if found is not None else None
    if cues is None or box >= 0 and _HEDGED_OR_DISOWNED_RE.search(cues, start, end) is not None:
        return None  # (a hedged, negated or supposed box is the policy's to read)
    head = _heading_above(text, cues, start) if start == 0 or text[start - 1] == "\n" else start
    if cues.find("answer", 0, head) >= 0 \
            or "\\" in text and (text.find("\\boxed", 0, head) >= 0 or text.find("\\fbox", 0, head) >= 0):
        return None  # a statement before it
    if "*" in text:
        if found.groupdict().get("bold") is not None:  # the policy reads every bold number before a bold one
            return text[start:end] if text.find("**", 0, head) < 0 else None
        if _bold_statement_before(text, box if box >= 0 else max(start, cues.rfind("answer", start, end)), head):
            return None
    return text[start:end]


def _line_before(text: str, end: int) -> tuple[int, int]:
    """``(start, end)`` of the last line of ``text[:end]`` that is not blank (``(0, 0)``: none)."""
    while end > 0 and text[end - 1] in " \t\r\n":
        end -= 1
    return text.rfind("\n", 0, end) + 1, end


def _heading_above(text: str, cues: str, start: int) -> int:
    """Where the heading or lead-in line above the line at ``start`` starts (fences and blanks between
    them), else ``start``; ``cues``: the lower-cased ``text``."""
    line_start, line_end = _line_before(text, start)
    for _ in range(_FENCES):
        if _FENCE_RE.fullmatch(text, line_start, line_end) is None:
            break
        line_start, line_end = _line_before(text, line_start)
    # (every heading ends on a colon, bold or a heading word: the pattern runs on those alone)
    if line_end == 0 or text[line_end - 1] not in ":*" and not cues.endswith(_HEADING_ENDS, line_start, line_end):
        return start
    return line_start if _HEADING_RE.fullmatch(text, line_start, line_end) is not None else start


def _bold_statement_before(text: str, start: int, head: int) -> bool:
    """Whether a bold line the policy reads as a statement stands right before the statement at ``start``
    (``head``: where the closing lines start; a heading among them is a label, no statement)."""
    window = max(0, start - _BOLD_WINDOW)
    if text.find("**", window, head) < 0:
        return False
    for bold in BOLD_LINE_RE.finditer(text[window:start]):  # (in a slice, as the policy reads it)
        if not is_label(bold.group(1)) and _span_answer(bold.group(1)) is not None:
            return True
    return False
