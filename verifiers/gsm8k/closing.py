"""A completion that ends on its answer alone: the closing line, read without the text around it.

Most completions end on one line that states the answer (``#### 18``, ``The answer is 18.``,
``$\\boxed{18}$``, ``**18**``, Minerva's ``Final Answer: ...``), often under a heading
(``**Final Answer**``, ``### Answer:``) and between display-maths fences (``\\[`` ... ``\\]``), as
reasoning models close. When every mark a statement is read by (a ``####`` line, a box, ``**``,
"answer" in any case) stands on those lines, the text before them states nothing: the closing
line read alone gives the answer the whole text gives, and no rule of the hedge and override
policy has anything to read (no other statement, no tag or comment, no code block, no hedge,
negation, correction or "or" on the closing line). After a ``####`` line or an answer phrase a
remark may follow (``I hope this helps!``) when it states nothing: no mark, no closing
``Therefore, X.`` and, after a phrase, no statement written again with only its number changed.

:func:`closing_line` finds that line, so that the verifier reads one short line (the same lines
recur across a group of completions: the reading is cached) and skips the policy.
``tests/verifiers/test_hedge_fast_paths.py`` holds every verdict to the full reading.
"""

from __future__ import annotations

import re

from ..text.hedging import (_CUE_WORDS, BOLD_LINE_RE, HEDGE_WORD_RE, STATEMENT_GAP, completion_cues, repeated_statement,
                            sentence_start)
from ..text.labels import is_label
from .extract import _span_answer
from .hedges import _statements_after

_NUMBER = r"(?:\\?\$)?[-\u2212]?(?:\\?\$)?[0-9][0-9,.]*"
_PHRASE = r"(?:(?:So|Therefore|Thus|Hence),? )?(?:[Tt]he (?:final )?answer is:?|(?:\*\*)?(?:Final )?Answer:(?:\*\*)?)"
# Closing lines with one number: a "####" line or an answer phrase with none of the words the policy reads
# (a negation, "or", a hedge or correction word), which a remark may follow; a bold number; a sentence of
# words around one box (its words are tested for hedges and negations). Only fences follow the last two.
_ANSWER_LINE = rf"[ \t>]*####[ \t]*{_NUMBER}[ \t]*"
_PHRASE_LINE = (rf"[ \t]*(?:{_PHRASE} (?:\*\*)?{_NUMBER}(?:\*\*)?\$?\.?"
                rf"|Final Answer: The final answer is {_NUMBER}\$?\. I hope it is correct\.)[ \t]*")
_BOLD_LINE = rf"[ \t]*\*\*{_NUMBER}\*\*[ \t.]*"
_WORD = r"[^\n0-9<>`*#\\\"“”]*"
_WORDS = rf"{_WORD}(?:\\[()\[\]]{_WORD})*"  # no digit, mark, quote or command but maths brackets
_BOX_SENTENCE = rf"{_WORDS}\\boxed\{{{_NUMBER}\}}{_WORDS}"
# Lines around the closing line that state nothing: blanks, display-maths fences, rules; above it one
# heading (``**Final Answer**``, ``### Answer:``) or a sentence of words leading in to it (``So the total is:``).
_FENCE = r"[ \t]*(?:\\\[|\\\]|\$\$|-{3,}|_{3,}|\*{3,})?[ \t]*"
_HEADING = (r"[ \t]*(?:(?:#{1,3}[ \t]*|\*\*)?(?:Final [Aa]nswer|FINAL ANSWER|Answer|Conclusion|Final [Rr]esult|Result)"
            rf"[ \t]*:?[ \t]*(?:\*\*)?[ \t]*:?|{_WORDS}:)[ \t]*")
_FENCES_RE = re.compile(rf"(?:\n{_FENCE})*\s*")
# Every hedge word (HEDGE_WORD_RE) and every word that disowns a box (negated, supposed) holds one of these.
_HEDGED_OR_DISOWNED_RE = re.compile("|".join((*HEDGE_WORD_RE.cues, *_CUE_WORDS)))
_BOLD_WINDOW = STATEMENT_GAP + 100  # the policy reads bold lines this far before a statement


def _closing(remarked: str, alone: str) -> re.Pattern[str]:
    # (lazy: the closing line alone, the most common close, is tried first)
    return re.compile(rf"(?:(?:{_FENCE}\n)*{_HEADING}\n(?:{_FENCE}\n)*|(?:{_FENCE}\n)+)??"
                      rf"(?:(?P<remarked>{remarked})|(?P<bold>{_BOLD_LINE})|(?P<sentence>{alone}))"
                      rf"(?P<after>(?:\n[\s\S]*)?)")


# What each reading mode reads as a statement: flexible reading reads no "####" line, strict only those.
_CLOSINGS = {"strict": _closing(_ANSWER_LINE, "(?!)"), "flexible": _closing(_PHRASE_LINE, _BOX_SENTENCE),
             "auto": _closing(f"{_ANSWER_LINE}|{_PHRASE_LINE}", _BOX_SENTENCE)}
_SENTENCES = {mode: re.compile(rf"(?P<sentence>{_BOX_SENTENCE})(?P<after>{_FENCES_RE.pattern})")
              for mode in ("flexible", "auto")}


def closing_line(text: str, mode: str) -> str | None:
    """The closing line when ``text`` ends on its answer alone (see above), else ``None``.

    Example:
        >>> closing_line("9 * 2 = 18 dollars a day.\\n\\n**Final Answer**\\n\\\\[\\n\\\\boxed{18}\\n\\\\]\\n", "auto")
        '\\\\boxed{18}'
        >>> closing_line("She earns 9 * 2 = 18.\\n#### 18\\n\\nI hope this helps!", "auto")
        '#### 18'
        >>> closing_line("9 * 2 = 18. Therefore, she makes \\\\(\\\\boxed{18}\\\\) dollars a day.", "auto")
        ' Therefore, she makes \\\\(\\\\boxed{18}\\\\) dollars a day.'
        >>> closing_line("The answer is 20.\\n#### 18", "auto"), closing_line("So it is maybe \\\\boxed{18}.", "auto")
        (None, None)
    """
    closing = _CLOSINGS.get(mode)
    if closing is None or "<" in text or "`" in text:
        return None
    cues = completion_cues(text)
    if cues is None:
        return None
    # Where the first mark stands but bold: -1 % (end + 1) is end (a test for one character, far quicker
    # than for several, before each)
    first = cues.find("answer")
    end = first if first >= 0 else len(text)
    if "#" in text:
        end = text.find("####", 0, end) % (end + 1)
    if "\\" in text:
        end = text.find("\\boxed", 0, end) % (end + 1)
        end = text.find("\\fbox", 0, end) % (end + 1)
    if end == len(text):  # no mark but bold: only a bold number can close
        end = text.find("**") if "*" in text else -1
        if end < 0:
            return None
    start = text.rfind("\n", 0, end) + 1
    found = closing.fullmatch(text, start)
    if found is None and mode != "strict":  # a box closing the sentences of its line
        start = sentence_start(text, end)
        found = _SENTENCES[mode].fullmatch(text, start) if start > 0 and text[start - 1] != "\n" else None
    if found is None:
        return None
    after, groups = found.start("after"), found.groupdict()
    line = groups.get("remarked")
    if line is not None:  # a remark may follow a "####" line or an answer phrase
        if _FENCES_RE.fullmatch(text, after) is None and not _states_nothing(text, cues, after):
            return None
        statement = max(found.start("remarked"), cues.rfind("answer", 0, found.end("remarked")))
    elif _FENCES_RE.fullmatch(text, after) is None:
        return None
    elif groups.get("bold") is not None:  # the policy reads every bold number before a bold one
        return groups["bold"] if "*" not in text or text.find("**", 0, start) < 0 else None
    else:
        line = groups["sentence"]
        if _HEDGED_OR_DISOWNED_RE.search(cues, found.start("sentence"), found.end("sentence")) is not None:
            return None  # a hedged, negated or supposed box is the policy's to read
        statement = text.find("\\boxed", found.start("sentence"))
    return line if "*" not in text or not _bold_statement_before(text, statement) else None


def _bold_statement_before(text: str, start: int) -> bool:
    """Whether a bold line the policy reads as a statement stands right before the statement at ``start``."""
    window = max(0, start - _BOLD_WINDOW)
    if text.find("**", window, start) < 0:
        return False
    for bold in BOLD_LINE_RE.finditer(text[window:start]):  # (in a slice, as the policy reads it)
        if not is_label(bold.group(1)) and _span_answer(bold.group(1)) is not None:
            return True
    return False


def _states_nothing(text: str, cues: str, start: int) -> bool:
    """Whether the remark ``text[start:]`` after a closing ``####`` line or answer phrase states nothing."""
    return (cues.find("answer", start) < 0 and text.find("####", start) < 0 and text.find("**", start) < 0
            and text.find("\\", start) < 0 and not _statements_after(text[start:]) and not repeated_statement(text))
