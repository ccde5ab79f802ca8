"""The hedge stage's fast paths against the full reading they stand for.

The hedge and override stage skips work it can prove useless: a word pattern is not searched in
a text that holds none of its words, a statement before the answer is only looked for where a
gap of words could still separate it, a text with no digit states nothing. Each shortcut here is
held against the reading it replaces (written out plainly below, as the stage read before it had
shortcuts): on random compositions of answer shapes, cue words and markup, every verdict of both
verifiers' hedge stage is the same with and without them.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers import gsm8k
from referee.verifiers import math as math_module
from referee.verifiers.gsm8k import extract as gsm8k_extract
from referee.verifiers.gsm8k import hedges as gsm8k_hedges
from referee.verifiers.math import extract as math_extract
from referee.verifiers.math import hedges as math_hedges
from referee.verifiers.text import hedging, labels
from referee.verifiers.text import prose as prose_module
from referee.verifiers.text.latex import boxed_spans

# --- the full readings ------------------------------------------------------------------------

_CUED = ("HEDGE_WORD_RE", "CHECK_RE", "CORRECTION_RE", "_RANKED_RE")
_PATTERNS = {name: getattr(hedging, name).pattern for name in _CUED}


class _Uncued:
    """A word pattern searched everywhere, whatever cue text a caller hands it."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text)

    def search_cued(self, text: str, cues: str | None) -> re.Match[str] | None:
        return self.pattern.search(text)


_SENTENCE_START_AS_WRITTEN = re.compile(r"(?:[.!?:](?=\s)|\n|</?think>)")


def full_sentence_start(text: str, position: int) -> int:
    window = max(0, position - hedging._SENTENCE_WINDOW)
    starts = [match.end() for match in _SENTENCE_START_AS_WRITTEN.finditer(text, window, position)]
    return starts[-1] if starts else window


def full_undressed(text: str) -> str:
    return labels._DRESS_RE.sub("", text)


def full_answer_tags(text: str) -> list[tuple[int, int, str]]:
    return [(tag.start(), tag.end(), tag.group("content")) for tag in hedging._ANSWER_TAG_RE.finditer(text)]


def full_tags_standing_beside_the_last(text: str, tags: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    return [tag for tag in tags[:-1] if not _PATTERNS["CORRECTION_RE"].search(text[tag[1]:tags[-1][0]])]


def full_disowned_answer(text: str) -> str | None:
    found = max((match for pattern in hedging._DISOWNING_PATTERNS
                 for match in pattern.finditer(text)), key=lambda match: match.start(), default=None)
    if found is None or found.group("value").lower() in ("a", "an", "the"):
        return None
    return None if re.search(r"[0-9]", hedging._NEGATION_RE.sub("", text[found.end():])) else found.group("value")


def full_disowned_boxes(text: str, boxes: list[tuple[int, int, str]] | None = None) -> list[tuple[int, int, str]]:
    import bisect

    boxes = boxed_spans(text)
    if not boxes:
        return []
    fenced = [match.span() for match in hedging._FENCED_RE.finditer(text)]
    fence_starts = [fence_start for fence_start, _ in fenced]
    found = []
    for start, end, _ in boxes:
        fence = bisect.bisect_right(fence_starts, start) - 1
        before = text[full_sentence_start(text, start):start]
        if fence >= 0 and start < fenced[fence][1]:
            found.append((start, end, "in a comment or code block"))
        elif hedging._NEGATED_RE.search(before[-hedging._CUE_CHARS:]):
            found.append((start, end, "negated"))
        elif hedging._HYPOTHETICAL_TAIL_RE.search(before[-hedging._CUE_CHARS:]) and hedging._HYPOTHETICAL_RE.search(before):
            found.append((start, end, "hypothetical"))
        elif hedging._quoted(text, start, end):
            found.append((start, end, "quoted"))
    return found


def full_statements_after(after: str) -> list:
    check = _PATTERNS["CHECK_RE"].search(after)  # the full reading of each word pattern and of the closing
    after = after[:check.start()] if check else after
    correction = _PATTERNS["CORRECTION_RE"]
    found = []
    boxed = gsm8k_extract._last_boxed(after)
    if boxed is not None and not correction.search(after[:boxed[0]]):
        found.append(boxed[1].number)
    phrase = gsm8k_extract._last_phrase(after, None)  # the case-blind pattern over the whole text
    if phrase is not None and not correction.search(after[:phrase[0]]):
        found.append(phrase[1].number)
    bold = gsm8k_extract._last_bold(after)
    if bold is not None and not correction.search(after):
        found.append(bold)
    closing = hedging.CLOSING_RE.search(after)
    if closing and not correction.search(after[:closing.start()]):
        number = gsm8k_hedges._bare_number(closing.group("value"))
        if number is not None:
            found.append(number)
    return found


def full_statement_before(text: str, start: int, box: object = None):
    head = text[:start]
    found = []
    phrase = gsm8k_extract._last_phrase(head, None)
    if phrase is not None:
        stated = head.find(phrase[1].number.text, phrase[0])
        found.append((hedging.sentence_end(head, stated + len(phrase[1].number.text)), phrase[1].number))
    line = gsm8k_extract._last_answer_line(head)
    if line is not None and line.start >= 0:
        found.append((gsm8k_hedges._line_end(head, line.start), line.number))
    boxed = gsm8k_extract._last_boxed(head)
    if boxed is not None:
        found.append((next(end for begin, end, _ in boxed_spans(head) if begin == boxed[0]), boxed[1].number))
    for bold in hedging.BOLD_LINE_RE.finditer(head[-hedging.STATEMENT_GAP - 100:]):
        number = None if labels.is_label(bold.group(1)) else gsm8k_extract._span_answer(bold.group(1))
        if number is not None:
            found.append((len(head) - len(head[-hedging.STATEMENT_GAP - 100:]) + bold.end(), number[0]))
    for end, number in found:
        if end < start and hedging.only_words_between(head, end, start):
            return number
    return None




@contextlib.contextmanager
def full_reading() -> Iterator[None]:
    """Every shortcut of the hedge stage replaced by the full reading it stands for."""
    patches = [(hedging, "sentence_start", full_sentence_start), (labels, "_undressed", full_undressed),
               (hedging, "answer_tags", full_answer_tags), (hedging, "disowned_answer", full_disowned_answer),
               (hedging, "disowned_boxes", full_disowned_boxes),
               (gsm8k_hedges, "_statement_before", full_statement_before),
               (gsm8k_hedges, "_statements_after", full_statements_after),
               (gsm8k_hedges, "_no_mark_before", lambda text, start: False),
               (gsm8k, "closing_answer", lambda text, mode: None)]
    for module in (gsm8k_hedges, math_hedges):
        patches.append((module, "closing_statement", hedging.CLOSING_RE.search))
        for name in ("sentence_start", "answer_tags", "tags_standing_beside_the_last", "disowned_answer", "disowned_boxes"):
            if hasattr(module, name):
                patches.append((module, name, globals()["full_" + name]))
    for module in (hedging, gsm8k_hedges, math_hedges):
        for name in _CUED:
            if hasattr(module, name):
                patches.append((module, name, _Uncued(_PATTERNS[name])))
    saved = [(module, name, getattr(module, name)) for module, name, _ in patches]
    try:
        for module, name, value in patches:
            setattr(module, name, value)
        yield
    finally:
        for module, name, value in reversed(saved):
            setattr(module, name, value)


# --- random compositions -----------------------------------------------------------------------

_PIECES = [
    "Janet sells 16 - 3 - 4 = 9 eggs.", "She makes 9 * 2 = $18.", "So the total is 18 dollars.", "\n", "\n\n", " ",
    "#### 18", "#### 20", "#### Step 1", "The answer is 18.", "The answer is 20.", "Answer: 18", "answer is not 18.",
    "The final answer is $\\boxed{18}$.", "\\boxed{20}", "\\boxed{}", "\\boxed{18 = 20}", "\\boxed{5 or 6}", "**18**",
    "**Final Answer**", "**Step 3: Final answer**", "### Answer", "Therefore, 18.", "So 20.", "Thus, $20.",
    "Maybe", "maybe", "probably", "I guess", "not sure", "Alternatively,", "Candidate 2:", "or", "/",
    "Wait,", "Actually", "No,", "no.", "Check:", "verify", "Let me recheck.", "instead", "sorry", "simplify",
    "it is not", "if it were", "would be", '"', "“", "”", "<!--", "-->", "```", "<answer>18</answer>",
    "<answer>20</answer>", "<answer>wait, 20</answer>", "</answer>", "<ANSWER>", "not 18", "(not 20", "[[not 18]]",
    "#### not 18", '"not 20"', "{not", "NOT 18", "never 20", "Result:", "Result: 18", "ANS(18)", "ANS(20)", "[[20]]", "</think>", "I hope it is correct.", "ſ", "ı", "İ", "K", "MAYBE", "ANSWER:",
    "WAIT", "hours", "120 minutes", "2 hours, or", "$", ":", ".", "(", ")", "x = 18",
]


@st.composite
def compositions(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=14))
    glue = draw(st.lists(st.sampled_from([" ", "\n", "", ". ", "\n\n"]), min_size=len(pieces), max_size=len(pieces)))
    return "".join(piece + sep for piece, sep in zip(pieces, glue))


@settings(max_examples=600, deadline=None)
@given(text=compositions(), mode=st.sampled_from(["auto", "flexible", "strict"]))
def test_gsm8k_verdicts_match_the_full_reading(text: str, mode: str) -> None:
    fast = gsm8k.verify(text, 18, mode=mode)
    with full_reading():
        full = gsm8k.verify(text, 18, mode=mode)
    assert fast == full, text


@settings(max_examples=400, deadline=None)
@given(text=compositions())
def test_maths_reviews_match_the_full_reading(text: str) -> None:
    answer = math_extract.extract_answer(text)
    fast = math_hedges.review(text, answer)
    with full_reading():
        full = math_hedges.review(text, answer)
    assert fast == full, text


@settings(max_examples=300, deadline=None)
@given(text=compositions(), data=st.data())
def test_statement_before_matches_the_full_reading(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    box = gsm8k_hedges._last_box(text, start)
    assert gsm8k_hedges._statement_before(text, start, box) == full_statement_before(text, start)


@settings(max_examples=500, deadline=None)
@given(text=compositions(), data=st.data())
def test_sentence_start_matches_the_full_reading(text: str, data: st.DataObject) -> None:
    position = data.draw(st.integers(0, len(text)))
    assert hedging.sentence_start(text, position) == full_sentence_start(text, position)


@settings(max_examples=500, deadline=None)
@given(text=st.text(alphabet=" \t\n\xa0\u3000#>*_:：.-—–aZ3ſ", max_size=12) | compositions())
def test_undressed_matches_the_regex(text: str) -> None:
    assert labels._undressed(text) == full_undressed(text)


@settings(max_examples=500, deadline=None)
@given(text=compositions() | st.lists(st.sampled_from(["so", "So", "thus", "Hence", "therefore", " ", "\n", ".", ",", "!",
                                                       "5", "$", "\u2003", "x" * 70, "abc"]), max_size=14).map("".join))
def test_closing_statement_matches_the_regex(text: str) -> None:
    fast, full = hedging.closing_statement(text), hedging.CLOSING_RE.search(text)
    assert (fast and (fast.span(), fast.group("value"))) == (full and (full.span(), full.group("value")))


@pytest.mark.parametrize("name", _CUED)
@settings(max_examples=300, deadline=None)
@given(text=compositions())
def test_cued_patterns_match_their_regex(name: str, text: str) -> None:
    cued = getattr(hedging, name)
    fast, full = cued.search(text), cued.pattern.search(text)
    assert (fast and fast.span()) == (full and full.span())


@pytest.mark.parametrize("text", ["It is maybe ſo.", "PERHAPS 5", "Waıt, 5", "no , 5", "İ guess 5", "perhapſ 5"])
def test_cued_patterns_read_case_folded_letters(text: str) -> None:
    for name in _CUED:
        cued = getattr(hedging, name)
        assert (cued.search(text) is None) == (cued.pattern.search(text) is None), (name, text)


def test_the_full_reading_can_disagree() -> None:
    """The comparison can fail: a reading that skips the statement before always misses this override."""
    text = "The answer is 20.\n\n#### 18"
    with full_reading():
        full = gsm8k.verify(text, 18)
    saved = gsm8k_hedges._statement_before
    gsm8k_hedges._statement_before = lambda text, start, box: None
    try:
        skipped = gsm8k.verify(text, 18)
    finally:
        gsm8k_hedges._statement_before = saved
    assert full.details.get("check") == "override" and skipped.correct


# --- closing lines read alone ----------------------------------------------------------------------

_REASONING = ["Janet sells 16 - 3 - 4 = 9 eggs.", "She makes 9 * 2 = $18 every day.", "It takes 2 hours, or 120 minutes.",
              "So 20 is too many.", "It is not 18 apples.", "If the total were 18, she would have 2 left.", "Let me check: 9 + 9 = 18.",
              "Wait, 3 + 4 = 7.", "(5 arms and 3 legs)", "Step 2: 18 / 2 = 9", "x = 18", "\\(9 \\times 2 = 18\\)", "$9 + 9$",
              "Maybe 20.", "Either 18 or 20.", "\\frac{1}{2}", "# Step 1", "### Plan", "*", "a * b", "Answers vary.", "The ANSWER",
              "**Step 3: add**", "\\boxed{20}", "<b>", "```", "“18”", '"18"', "ſ", "#### 20", "Therefore, 20.", "So 20",
              "**18**", "**Total:** 18", "Long reasoning goes on here. " * 8, "### Step 2: **add**"]
_HEADINGS = ["", "So the total is:", "The answer is:", "It is not:", "Maybe:", "**Total:** 18", "4. **Total:**", "**18**\n", "**Final Answer**", "**Final Answer:**", "### Final Answer", "## Answer:", "**Conclusion:**", "Final answer",
             "**Answer**", "**Step 3: Final answer**", "**Final Answer**: 20", "---", "***", "\\[", "$$"]
_CLOSINGS = ["#### 18", "#### $18", "#### 1,000", "#### -3", "#### 18.00", "#### not 18", "#### 18 or 20", "#### 18 = 20",
             "The answer is 18.", "The answer is $18.", "the final answer is 20", "So the answer is: 18", "**Answer:** 18",
             "Answer: **18**", "Final Answer: The final answer is $18$. I hope it is correct.", "The answer is not 18.",
             "The answer is 18 or 20.", "The answer is 18 eggs.", "\\boxed{18}", "$\\boxed{18}$", "\\[\\boxed{18}\\]",
             "So the final answer is $\\boxed{18}$.", "\\boxed{}", "\\boxed{18 = 20}", "\\boxed{6^2}", "\\boxed{maybe 18}",
             "**18**", "**20**.", "**18 or 20**", "**-3**", "\\fbox{18}", "Answer: 18", "#### 2C#",
             "Therefore, Janet makes \\(\\boxed{18}\\) dollars a day.", "Thus it is maybe \\boxed{18}.", "It is not \\boxed{18}.",
             "If the total were \\boxed{18}, she would be done.", "He says “\\boxed{18}”.", "So \\boxed{18} or \\boxed{20}.",
             "\\boxed{18} is the answer.", "The answer is \\boxed{18}, not 20.", "So $x = \\boxed{\\$18}$.", "Hence \\boxed{18} (not sure).",
             "I guess \\boxed{18}.", "\\boxed{18} probably", "Alternatively, \\boxed{18}.", "Wait, \\boxed{18}.", "It can't be \\boxed{18}."]
_AFTER = ["", "\n", "\n\\]", "\n$$\n", "\n---", "\n\nI hope this helps!", "\n\nI hope this helps! Ask me about 2 more.",
          "\nTherefore, 20.", "\nCheck: 9 + 9 = 18.", "\nNote: 20 is wrong.", "\nThe answer is 20.", "\n**20**", "\n\\boxed{20}",
          "\n#### 20", "\nResult: 18\nResult: 20", "\nWait, it is 20.", "\nMaybe.", "\n<answer>20</answer>", "\n18 or 20"]


def _without_answer_lines(pieces: list[str]) -> list[str]:
    """The pieces with no "####" line, tag or code fence (texts the fast path may take)."""
    return [piece for piece in pieces if not any(mark in piece for mark in ("####", "<", "`"))]


@st.composite
def closings(draw: st.DrawFn) -> str:
    choose = (lambda pieces: pieces) if draw(st.booleans()) else _without_answer_lines
    reasoning = draw(st.lists(st.sampled_from(choose(_REASONING)), max_size=5))
    glue = draw(st.sampled_from(["\n", " ", "\n\n"]))
    heading = draw(st.sampled_from(_HEADINGS))
    fences = draw(st.sampled_from(["", "\\[\n", "$$\n", "\n"]))
    closing = draw(st.sampled_from(choose(_CLOSINGS)))
    glue = draw(st.sampled_from([glue, ". ", " "])) if not heading and not fences else glue  # a closing sentence
    return (glue.join(reasoning) + glue + (heading + "\n" if heading else "") + fences + closing
            + draw(st.sampled_from(["", " ", "\t"])) + draw(st.sampled_from(choose(_AFTER))))


@settings(max_examples=1500, deadline=None)
@given(text=closings(), mode=st.sampled_from(["auto", "flexible", "strict"]), gold=st.sampled_from([18, 20, 1000, -3]))
def test_closing_answers_read_alone_match_the_full_reading(text: str, mode: str, gold: int) -> None:
    fast = gsm8k.verify(text, gold, mode=mode)
    with full_reading():
        full = gsm8k.verify(text, gold, mode=mode)
    assert fast == full, text


@pytest.mark.parametrize("text", [
    "9 * 2 = 18.\nThe answer is $18.", "9 * 2 = 18.\n\n**Final Answer**\n\\[\n\\boxed{18}\n\\]",
    "9 * 2 = 18.\nSo the final answer is $\\boxed{18}$.", "9 * 2 = 18.\n\n**18**", "9 * 2 = 18.\n\n**Answer:** 18",
    "9 * 2 = 18.\nFinal Answer: The final answer is $18$. I hope it is correct.",
    "**Step 1:** 9 * 2 = 18." + " She counts again." * 12 + "\n\nTherefore, Janet makes \\(\\boxed{18}\\) dollars a day.",
    "4. **Total:**\n   \\[\n   9 + 9 = 18\n   \\]\n\nTherefore, Janet makes \\(\\boxed{18}\\) dollars a day.",
    "So 9 + 9 = 18. So, the total is \\(\\boxed{18}\\).", "Thus, the total is:\n\\[ \\boxed{18} \\]",
])
def test_common_closings_are_read_alone(text: str) -> None:
    """The closings the fast path is for take it (the comparison above is not vacuous), and pay the same."""
    assert gsm8k.closing_answer(text, "auto") is not None
    with full_reading():
        assert gsm8k.verify(text, 18).correct
    assert gsm8k.verify(text, 18).correct


@pytest.mark.parametrize("text", [
    "The answer is 20.\n#### 18", "It is \\boxed{20}.\n#### 18", "**20**\n\n**18**", "#### 18\nThe answer is 20.",
    "The answer is 18.\nResult: 18\nResult: 20", "#### 18\nTherefore, 20.", "<answer>20</answer>\n#### 18", "#### not 18",
    "```\n\\boxed{20}\n```\n\\boxed{18}", "The answer is 18 or 20.", "\\boxed{18}\nWait, it is 20.",
    "**20**\n\nSo Janet makes \\(\\boxed{18}\\) dollars.", "It is maybe \\boxed{18}.", "It is not \\boxed{18}.",
    "**20**" + " She counts again." * 12 + "\n\n**18**", "**20**\nTherefore, it is \\(\\boxed{18}\\).",
    "The answer is 20. Therefore, it is \\(\\boxed{18}\\).",
])
def test_closings_with_another_statement_are_reviewed(text: str) -> None:
    assert gsm8k.closing_answer(text, "auto") is None


@pytest.mark.parametrize("mode", ["auto", "flexible", "strict"])
def test_answer_lines_are_left_to_the_full_reading(mode: str) -> None:
    """A "####" line is read first and its policy is quick; strict mode reads nothing else."""
    assert gsm8k.closing_answer("She makes 9 * 2 = $18.\n#### 18", mode) is None
    assert gsm8k.closing_answer("#### Plan\nShe makes 9 * 2 = $18.\nThe answer is 18.", mode) is None
    assert (gsm8k.closing_answer("She makes 9 * 2 = $18.\nThe answer is 18.", mode) is None) == (mode == "strict")


# --- prose readers: each pattern is run only where its cue stands ------------------------------------

_PROSE_PIECES = _PIECES + [
    "\\(", "\\)", "\\[", "\\]", "$$", "$$x", "{", "}", "(", "[", "60 + 3", "12 \\times 5", "= 63", "since", "Since $f(5) = 7$",
    "because", "BECAUSE", "and indeed", "no matter", "which agrees", "note that", ", or about 33.3%", "≈ 37.7", "4 × 2.5 ≈ 10",
    "Check: 9 + 9 = 18.", "Let's verify", "This makes sense", "this checks out", "As a quick check", "(5 arms and 3 legs)",
    "227 minutes, or 3 hours and 47 minutes", "18 dollars", "for the 2 shirts", "10 years from now", "١٢", "１８", "⁻²", "ſince",
    "İ", "ſ", "Kheck", "theref", "the", "=",
]


@st.composite
def prose(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.sampled_from(_PROSE_PIECES), min_size=1, max_size=16))
    glue = draw(st.lists(st.sampled_from([" ", "\n", "", ". ", "\n\n", ", "]), min_size=len(pieces), max_size=len(pieces)))
    return "".join(piece + sep for piece, sep in zip(pieces, glue))


def full_looks_cut_off(text: str) -> bool:
    tail = text[-prose_module._CUT_OFF_WINDOW:].rstrip()
    if tail[-1:] in ("-", "*", "_", "="):
        tail = prose_module._RULE_LINE_RE.sub("", tail).rstrip()
    line = tail[tail.rfind("\n") + 1:]
    paragraph = tail[tail.rfind("\n\n") + 1:]
    opened_display = paragraph.count("$$") % 2 and prose_module._OPENS_MATHS_RE.match(paragraph, paragraph.rfind("$$") + 2)
    if len(prose_module._OPEN_INLINE_RE.findall(line)) > len(prose_module._CLOSE_INLINE_RE.findall(line)) or opened_display \
            or len(prose_module._OPEN_DISPLAY_RE.findall(paragraph)) > len(prose_module._CLOSE_DISPLAY_RE.findall(paragraph)):
        return True
    dollars = line.replace("\\$", "").replace("$$", "") if "$" in line else ""
    if dollars.count("$") % 2 and prose_module._OPEN_DOLLAR_RE.search(dollars):
        return True
    if prose_module._opens_more_than_closes(paragraph, "{", "}") or prose_module._opens_more_than_closes(line, "([", ")]") \
            or prose_module._OPEN_OPERATION_RE.search(tail[-120:]):
        return True
    last_word = tail[-40:].rsplit(None, 1)[-1] if tail.strip() else ""
    if (tail[-1:] in prose_module._DANGLING_SIGNS and tail[-2:-1] not in ("-", "=", "*", "_")) \
            or last_word.endswith(prose_module._DANGLING_COMMANDS) or last_word.lower().lstrip("(") in prose_module._DANGLING_WORDS:
        return True
    window = tail[-400:]
    sentence = window[max(window.rfind(". "), window.rfind("! "), window.rfind("? "), window.rfind("\n")) + 1:]
    return bool(prose_module._LEADING_CLAUSE_RE.match(sentence))


@settings(max_examples=800, deadline=None)
@given(text=prose())
def test_looks_cut_off_matches_the_full_reading(text: str) -> None:
    assert prose_module.looks_cut_off(text) == full_looks_cut_off(text), text


@settings(max_examples=800, deadline=None)
@given(text=prose())
def test_closing_remark_patterns_run_where_they_can_match(text: str) -> None:
    """Every match of the check and clause patterns holds one of their cue words, so skipping them elsewhere loses none."""
    cues = hedging.cue_text(text)
    for pattern, words in ((prose_module._CHECK_SENTENCE_RE, prose_module._CHECK_CUES),
                           (prose_module._CLAUSE_MARKER_RE, prose_module._CLAUSE_CUES)):
        if pattern.search(text) is not None:
            assert prose_module._holds_any(cues, words), (pattern.pattern[:40], text)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=20) | prose())
def test_ascii_digits_matches_the_full_reading(text: str) -> None:
    import unicodedata

    full = "".join(str(unicodedata.decimal(char)) if not char.isascii() and char.isdecimal() else char for char in text)
    assert prose_module.ascii_digits(text) == full


# --- boxes: a flat box is closed by its first brace; the last text's boxes are kept ------------------

def full_boxed_spans(text: str) -> list[tuple[int, int, str]]:
    from referee.verifiers.text import latex

    found = list(latex.BOXED_RE.finditer(text))
    pairs = latex.closing_braces(text, found[0].start()) if found else {}
    spans = []
    for boxed in found:
        after = boxed.end()
        if text.startswith("{", after):
            close = pairs.get(after)
            if close is not None:
                spans.append((boxed.start(), close + 1, text[after + 1:close]))
        elif boxed.group() != boxed.group().rstrip():
            word = latex._TOKEN_RE.match(text, after)
            if word:
                spans.append((boxed.start(), word.end(), word.group().rstrip(".,;")))
    return spans


_BRACED = st.lists(st.sampled_from(["\\boxed{", "\\boxed ", "\\fbox{", "\\boxed", "{", "}", "\\{", "\\}", "\\\\", "18", "x",
                                    " ", "\n", "\\frac{1}{2}", "$", "}}", "{{"]), max_size=14).map("".join)


@settings(max_examples=1000, deadline=None)
@given(text=_BRACED | compositions())
def test_boxed_spans_match_the_full_reading(text: str) -> None:
    first = boxed_spans(text)
    assert first == full_boxed_spans(text), text
    first.append((0, 0, "changed by a caller"))
    assert boxed_spans(text) == full_boxed_spans(text) == boxed_spans(text[:]), text  # the kept boxes are the text's own


@settings(max_examples=500, deadline=None)
@given(text=compositions(), data=st.data())
def test_no_mark_before_means_no_statement_before(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    if gsm8k_hedges._no_mark_before(text, start):
        assert full_statement_before(text, start) is None, (text, start)


def full_after_reasoning(completion: str) -> str | None:
    close = completion.rfind(hedging.THINK_CLOSE)
    if close >= 0:
        return completion[close + len(hedging.THINK_CLOSE):]
    return None if hedging.THINK_OPEN in completion else completion


@settings(max_examples=500, deadline=None)
@given(text=compositions() | st.lists(st.sampled_from(["<think>", "</think>", "<", ">", "think", "5", " "]), max_size=8).map("".join))
def test_after_reasoning_matches_the_full_reading(text: str) -> None:
    assert hedging.after_reasoning(text) == full_after_reasoning(text)


# --- patterns that match their first character before their lookbehinds, and the readers that use them ---------

_SENTENCE_END_AS_WRITTEN = re.compile(r"(?<!\bi\.e)(?<!\be\.g)(?<!\betc)[.!?]\s+|\n")  # lookbehinds first: a slow scan
_SPAN_END_AS_WRITTEN = re.compile(r"\n|(?<=[^\s.])\.(?=\s|$)|;")  # where an answer's span ends (gsm8k extract)
_OTHER_DIGIT_AS_WRITTEN = re.compile(r"(?![0-9])\d")
_ENDINGS = st.lists(st.sampled_from(["i.e. ", "e.g.", "etc. ", "etc!", "xi.e.", "Ie.", " ", "\n", "\t", ".", "!", "?", "a", "5", ";", "..",
                                     ":", "<think>", "</think>", "<", "/think>", "<thin",
                                     "٣", "１", "²"]), max_size=14).map("".join)


@settings(max_examples=1000, deadline=None)
@given(text=_ENDINGS | prose(), data=st.data())
def test_sentence_ends_match_the_pattern_as_written(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    spans = [match.span() for match in prose_module._SENTENCE_END_RE.finditer(text, start)]
    assert spans == [match.span() for match in _SENTENCE_END_AS_WRITTEN.finditer(text, start)], text
    for window in (text, text[start:start + 5]):
        spans = [match.span() for match in gsm8k_extract._SENTENCE_END_RE.finditer(window)]
        assert spans == [match.span() for match in _SPAN_END_AS_WRITTEN.finditer(window)], window
    spans = [match.span() for match in hedging._SENTENCE_START_RE.finditer(text, start)]
    assert spans == [match.span() for match in _SENTENCE_START_AS_WRITTEN.finditer(text, start)], text


@settings(max_examples=500, deadline=None)
@given(text=_ENDINGS | st.text(max_size=12))
def test_other_digits_match_the_pattern_as_written(text: str) -> None:
    assert [m.span() for m in prose_module._OTHER_DIGIT_RE.finditer(text)] == \
        [m.span() for m in _OTHER_DIGIT_AS_WRITTEN.finditer(text)]


_MODIFIER_PIECES = st.lists(st.sampled_from(["for", "FOR", "in", "begin", "within", "the", "The", "hiſ", "his", "its", "every",
                                             "By", "of", " ", "  ", "\n", "\t", "\xa0", "$", "\\$", "\\\\$", "x", "36", "ſ", "K",
                                             "each", "during", "to", "after", "é", "."]), max_size=8).map("".join)


@settings(max_examples=1000, deadline=None)
@given(text=_MODIFIER_PIECES | prose(), data=st.data())
def test_ends_on_modifier_matches_its_pattern(text: str, data: st.DataObject) -> None:
    end = data.draw(st.integers(0, len(text)))
    start = data.draw(st.integers(0, end))
    full = prose_module._MODIFIER_BEFORE_RE.search(text, start, end) is not None
    assert prose_module._ends_on_modifier(text, start, end) == full, (text, start, end)


def full_before_modifier(text: str, start: int) -> tuple[int, str] | None:
    text = prose_module.ascii_digits(text)
    found = next(prose_module._PROSE_NUMBER_RE.finditer(text, start), None)
    if found is None or found.start("number") != start:
        return None
    sentence = max(text.rfind(". ", 0, start), text.rfind("\n", 0, start)) + 1
    modifier = prose_module._MODIFIER_BEFORE_RE
    if not (modifier.search(text, sentence, found.start()) or prose_module._MODIFIER_AFTER_RE.match(text, found.end())):
        return None
    for candidate in reversed(list(prose_module._PROSE_NUMBER_RE.finditer(text, sentence, found.start()))):
        if prose_module._OPERAND_RE.match(text, candidate.end()) or modifier.search(text, sentence, candidate.start()):
            continue
        return candidate.start("number"), prose_module.prose_number(candidate)
    return None


_MODIFIED = st.lists(st.sampled_from(["She paid $36", "36", "8 apples", "for the 2 shirts", "FOR 2", "for his \\$ 2", "in 13 years",
                                      "of all  3", "per\n4", "10 years from now", "5 years ago", "5 + 3 = 8", "7 x", "within ſ 5",
                                      "in ١٢ days", "begin 9", ".", "\n", "="]), max_size=6).map(" ".join)


@settings(max_examples=800, deadline=None)
@given(text=prose() | _MODIFIED, data=st.data())
def test_before_modifier_matches_the_full_reading(text: str, data: st.DataObject) -> None:
    numbers = [match.start("number") for match in prose_module._PROSE_NUMBER_RE.finditer(text)]
    start = data.draw(st.sampled_from(numbers) if numbers else st.integers(0, len(text)))
    assert prose_module.before_modifier(text, start) == full_before_modifier(text, start), (text, start)


_ANY_SCRIPT = st.lists(st.sampled_from(_PIECES + ["é", "’", "—", "答案", "Kelvin K", "ſ", "Σ", "ΑΣ", "ΑΣΑ", "ß", "answer (is 5) is 7",
                                                  "The ANSWER is 5.", "reanswer is 3", "answers: 4"]),
                       min_size=1, max_size=12).map(" ".join)


@settings(max_examples=800, deadline=None)
@given(text=_ANY_SCRIPT)
def test_phrases_read_on_the_lower_cased_copy_match_the_case_blind_pattern(text: str) -> None:
    """Lower-casing keeps every index wherever cue_text gives a copy, in any script: phrases are found there."""
    lowered = hedging.cue_text(text)
    if lowered is not None:
        assert len(lowered) == len(text)
        assert gsm8k_extract._last_phrase(text, lowered) == gsm8k_extract._last_phrase(text, None), text


def full_is_label(text: str) -> bool:
    content = labels._DRESS_RE.sub("", text)
    if not content or len(content) > 80:
        return False
    step = labels._STEP_RE.match(content)
    if step is not None:
        return re.search(r"[0-9=$\\]", content[step.end():]) is None
    return labels._LABEL_RE.fullmatch(content) is not None or labels._CHINESE_LABEL_RE.fullmatch(content) is not None


_LABELS = st.lists(st.sampled_from(["**", "#", "### ", ">", "_", " ", "\xa0", ":", "：", ".", "-", "Final", "final", "ANSWER", "Answer",
                                    "answers", "Step 3", "ſtep 2", "part (b)", "Case", "Kase", "Conclusion", "réponse", "最终答案",
                                    "【", "】", "解析", "步骤 2", "第3步", "18", "=", "$", "(", ". Wait", "and", "the", "Résultat",
                                    "Σ", "ß", "é", "’"]), max_size=8).map("".join)


@settings(max_examples=1500, deadline=None)
@given(text=_LABELS | compositions())
def test_is_label_matches_the_full_reading(text: str) -> None:
    assert labels.is_label(text) == full_is_label(text), text


def full_only_words_between(text: str, end: int, start: int) -> bool:
    if end > start:
        return False
    gap = "\n".join(line for line in text[end:start].split("\n") if not labels.is_label(line))
    if len(gap) > hedging.STATEMENT_GAP or re.search(r"[0-9]", gap) is not None:
        return False
    return _PATTERNS["CORRECTION_RE"].search(hedging.MINERVA_TAIL_RE.sub("", gap)) is None


@settings(max_examples=1000, deadline=None)
@given(text=compositions() | _LABELS, data=st.data())
def test_only_words_between_matches_the_full_reading(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(0, len(text)))
    assert hedging.only_words_between(text, end, start) == full_only_words_between(text, end, start), (text, end, start)


@pytest.mark.parametrize("name", _CUED)
@settings(max_examples=300, deadline=None)
@given(text=_ANY_SCRIPT | compositions(), data=st.data())
def test_cued_patterns_read_a_slice_of_a_longer_texts_cues(name: str, text: str, data: st.DataObject) -> None:
    """A slice of a text's lower-cased copy holds the same ASCII cue words as the slice lower-cased (``Σ`` may end a word in one)."""
    end = data.draw(st.integers(0, len(text)))
    start = data.draw(st.integers(0, end))
    whole = hedging.cue_text(text)
    cued = getattr(hedging, name)
    fast = cued.search_cued(text[start:end], None if whole is None else whole[start:end])
    full = cued.pattern.search(text[start:end])
    assert (fast and fast.span()) == (full and full.span()), (text, start, end)


def full_flexible_statement(text: str) -> gsm8k_extract.Extraction | None:
    """The later of the last box and the last answer phrase, both read (None: neither states a number)."""
    boxed = gsm8k_extract._last_boxed(text)
    phrase = gsm8k_extract._last_phrase(text, None)
    if boxed and (phrase is None or boxed[0] >= phrase[0]):
        return boxed[1]
    return gsm8k_extract._phrase_at(phrase) if phrase else None


@settings(max_examples=1000, deadline=None)
@given(text=_ANY_SCRIPT | compositions())
def test_the_box_or_phrase_read_first_is_the_later_of_both(text: str) -> None:
    found = gsm8k_extract._flexible(text)
    full = full_flexible_statement(text)
    if full is not None:
        assert found == full, text
    else:
        assert found is None or found.source not in ("boxed", "answer phrase"), text


_NUMBERED = st.lists(st.sampled_from(["18", "1,234.5", "3/4", "3/0", "-2", "$5", "\\$7", "\\frac{1}{2}", "\\frac{1}{0}", "50%",
                                      ".5", " ", "x", "2C", "dollars", ", ", ".", "\n", "=", "+", "/", "(", ")", "abc def ghi"]),
                     max_size=40).map("".join)


@settings(max_examples=1000, deadline=None)
@given(text=_NUMBERED | prose(), whole_as_int=st.booleans())
def test_last_number_matches_a_scan_of_the_whole_text(text: str, whole_as_int: bool) -> None:
    from referee.verifiers.text import numbers

    full = numbers._last_valid(numbers._NUMBER_RE.finditer(text), whole_as_int)
    assert numbers.last_number(text, whole_as_int=whole_as_int) == full, text


@settings(max_examples=600, deadline=None)
@given(text=compositions())
def test_tags_beside_the_last_match_a_search_after_each_tag(text: str) -> None:
    tags = hedging.answer_tags(text)
    assert hedging.tags_standing_beside_the_last(text, tags) == full_tags_standing_beside_the_last(text, tags), text


class _CountingCorrections:
    """``CORRECTION_RE`` counting the characters each search is handed, in any of its forms."""

    def __init__(self, cued: hedging.CuedPattern) -> None:
        self.cued, self.pattern, self.read = cued, self, 0

    def search(self, text: str, pos: int = 0, endpos: int = 2**63 - 1) -> re.Match[str] | None:
        self.read += min(endpos, len(text)) - pos
        return self.cued.pattern.search(text, pos, min(endpos, len(text)))

    def search_cued(self, text: str, cues: str | None) -> re.Match[str] | None:
        self.read += len(text)
        return self.cued.search_cued(text, cues)


@pytest.mark.parametrize("verify", [gsm8k.verify, lambda text, gold: math_module.verify(text, str(gold))])
def test_many_answer_tags_are_read_in_linear_time(verify, monkeypatch: pytest.MonkeyPatch) -> None:
    """Thousands of answer tags (a hostile completion) cost one search of the text between each two,
    not one of the whole rest of the text per tag: counted in characters searched, not in seconds."""
    counting = _CountingCorrections(hedging.CORRECTION_RE)
    for module in (hedging, gsm8k_hedges, math_hedges):
        monkeypatch.setattr(module, "CORRECTION_RE", counting)
    text = "<answer>5</answer> " * 2000 + "<answer>18</answer>"
    verdict = verify(text, 18)
    assert verdict.status == "wrong" and "several answers" in verdict.reason
    assert counting.read <= 3 * len(text)


@settings(max_examples=800, deadline=None)
@given(text=compositions())
def test_negated_values_match_the_pattern_as_written(text: str) -> None:
    lowered = hedging.cue_text(text)
    if lowered is not None:
        fast = [match.span() for match in hedging._negated_values(text, lowered)]
        assert fast == [match.span() for match in hedging._NEGATED_VALUE_RE.finditer(text)], text
