"""The hedge and override policy: which statements of a completion are its answer, and when it has none.

A completion is paid for one final answer. This stage runs after :mod:`.extract` has read that
answer from the text that counts (after the last ``</think>``) and applies the rules of
docs/verifiers.md, "Hedges, overrides and disowned answers":

* ``disowned``: a box the completion disowns is not its answer: inside an HTML comment or a code
  block, negated (``the answer is not \\boxed{7}``), hypothetical (``if it were \\boxed{7}``) or
  quoted (``"the answer is \\boxed{7}"``). The answer is read again without those boxes; a
  completion whose every box is disowned and that states no other final answer is ``wrong``.
  So is an answer read from prose or a tag that the text negates (``The answer is not 24.``).
* ``empty box``: a final box with nothing in it (``\\boxed{}``, ``\\boxed{\\ }``) after the last
  real one is a blank final answer: ``wrong``.
* ``false equation``: a boxed equation between numbers that is false (``\\boxed{2 + 3 = 6}``).
* ``hedged``: the sentence of the final box hedges it (``probably``, ``maybe``, ``might``), so does
  such a word between a final-answer phrase and its value (``The answer is probably 24.``), and a
  cue right before the answer offers it beside another number (``..., but it could be 24.``).
* ``several answers``: an earlier box offered as an alternative to the final one (``alternatively``,
  ``otherwise``, ``candidate``, ranked guesses, ``/`` or ``or`` between them) is an answer too, and
  so is every earlier ``<answer>`` tag (``<answer>25</answer><answer>24</answer>``), and a number
  offered right after a final plain number (``\\boxed{24}, or 25.``, ``The answer is 24. Or maybe 25.``).
* ``override``: a later ``The answer is X``, ``Answer: X``, bold ``**X**``, a closing
  ``Therefore, X.`` or a ``#### X`` line after the final statement, or a final statement right
  before it (an answer phrase, a box, a ``####`` line, a bold answer on its own line, with only a
  few words between), is an answer too; a statement that calls itself the *final* answer makes an
  earlier box that no phrase states an intermediate result (a box on a line of its own, or in a
  line that says "answer", is stated).

A label line (``**Final Answer**``, ``### Answer``, ``**Step 3: Final answer**``:
:mod:`referee.verifiers.text.labels`) is never a statement: it introduces the one below it.

The last two name *other statements* (:attr:`Review.others`): the completion is paid only when
each of them equals the gold as well, so restatements of one value (``\\boxed{\\frac12}``, then
``Answer: 0.5``) stay paid and two different values never are. A correction between two
answers (``wait``, ``actually``, ``mistake``, ``instead``) keeps the later one alone.
"""

from __future__ import annotations

import re

from ..text.hedging import (BOLD_LINE_RE, CHECK_RE, CORRECTION_RE, HEDGE_WORD_RE, MINERVA_TAIL_RE, Review,
                            alternatives_before, answer_tags, blanked, closing_statement, disowned_answer,
                            disowned_boxes, is_blank_box, offered_after, only_words_between, same_statement, sentence_end,
                            repeated_statement, sentence_start, statement_hedge,
                            tags_standing_beside_the_last)
from ..text.labels import is_label, opens_line
from ..text.latex import boxed_spans, top_level_parts
from ..text.numbers import parse_number
from .extract import (_BOLD_RE, Extraction, _last_bold, _last_phrase, answer_under_heading, extract_answer,
                      is_bare_answer)
from .values import closed_form_value

_HASH_LINE_RE = re.compile(r"^[ \t]*####[ \t]*(?P<value>[^\n]+?)[ \t]*$", re.MULTILINE)  # GSM8K's answer line
_FINAL_RE = re.compile(r"\bfinal\s+answer\b", re.IGNORECASE)
_ANSWER_WORD_RE = re.compile(r"\banswer\b|答案|答\s*[:：]", re.IGNORECASE)
_CHAIN_END_RE = re.compile(r"[0-9}][^=\n]{0,40}=[\s$]*$")  # "1+6=" right before a box: the result of a working
_NUMBER_RE = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_PLAIN_NUMBER_RE = re.compile(r"[-\u2212]?(?:[0-9]+(?:\.[0-9]+)?|\\[dt]?frac\{[0-9]+\}\{[0-9]+\})")  # 24, -0.5, \frac{3}{4}


def _false_equation(content: str) -> bool:
    sides = [side for side in content.split("=") if side.strip()]
    if len(sides) < 2 or "\\neq" in content or "<" in content or ">" in content:
        return False
    values = [closed_form_value(side) for side in sides]
    if None in values:
        return False
    return any(abs(value - values[0]) > 1e-9 * max(1.0, abs(values[0])) for value in values[1:])


def _hash_lines(text: str, start: int = 0) -> list[re.Match[str]]:
    """The ``#### X`` lines of ``text`` from ``start`` on that state something (``#### Final Answer`` labels)."""
    return [line for line in _HASH_LINE_RE.finditer(text, start) if not is_label(line.group("value"))]


def _states_something(value: str) -> bool:
    return re.sub(r"[\s$\\()\[\]{}.,;:]", "", value) != ""


def _statements_after(after: str) -> list[str]:
    """Answers stated after the final box: an answer phrase, a bold answer, a closing ``Therefore, X.``,
    a ``####`` line, an answer heading's value."""
    found = []
    check = CHECK_RE.search(after)
    after = after[:check.start()] if check else after
    phrase = _last_phrase(after)
    if phrase is not None:
        found.append(phrase[1])
    bold = _last_bold(after)
    if bold is not None:
        found.append(bold)
    closing = closing_statement(after)
    if closing:
        value = closing.group("value").strip().strip("$").strip()
        if value and is_bare_answer(value):
            found.append(value)
    hashes = _hash_lines(after)
    if hashes and not CORRECTION_RE.search(after[:hashes[-1].start()]):
        found.append(hashes[-1].group("value"))
    heading = answer_under_heading(after)
    if heading is not None and not CORRECTION_RE.search(after[:heading[0]]):
        found.append(heading[1])
    return found


def _worked_from(text: str, box: int, value: str) -> bool:
    """Whether the box at ``box`` closes a working in its own sentence that starts from ``value``, an
    earlier statement (``**Final Answer**: The fraction is $\\frac{1}{6}$. ... $m=1$ and $n=6$, thus
    $m+n=1+6=\\boxed{7}$``): every number of ``value`` is used in that working, so it is a step, not
    a second answer. ``The answer is 15. So $3+9=\\boxed{12}$`` is two answers."""
    sentence = text[sentence_start(text, box):box]
    numbers = _NUMBER_RE.findall(value)
    return bool(numbers) and _CHAIN_END_RE.search(sentence) is not None and all(
        re.search(rf"(?<![0-9.]){re.escape(number)}(?![0-9.])", sentence) for number in numbers)


def _stated_box(text: str, start: int) -> bool:
    """Whether the box at ``start`` is stated as an answer: on a line of its own (a display box, under
    ``**Answer**`` or not) or in a line that says so (``The answer is \\boxed{3}``)."""
    line_start = max(text.rfind("\n", 0, start) + 1, start - 200)  # "The final answer is: $\boxed{3}$"
    return opens_line(text, start) or _ANSWER_WORD_RE.search(text, line_start, start) is not None


def _statements_before(text: str, start: int) -> list[str]:
    """Final statements right before the one that starts at ``start`` (:func:`only_words_between`):
    an answer phrase, a box, a ``####`` line or a bold answer on a line of its own
    (``The answer is 15.`` then ``So the answer is \\boxed{12}``; ``**15**`` then ``Answer: 12``).
    A statement that calls itself the *final* answer makes an earlier box that no phrase states
    an intermediate result (``We get \\boxed{3}. So the final answer is \\boxed{6}.``)."""
    head = text[:start]
    final = _FINAL_RE.search(text, start, sentence_end(text, start + 1)) is not None
    window = max(0, start - 400)  # a statement right before ``start`` ends within its last characters
    found: list[tuple[int, str]] = []  # (where the statement ends, what it states)
    phrase = _last_phrase(head)
    if phrase is not None:
        stated = head.find(phrase[1], phrase[0])
        end = sentence_end(text, stated + len(phrase[1]) if stated >= 0 else phrase[0] + 1)
        # "The final answer is $\boxed{X}$": the box states it (below); "our answer is $7+(-2)+0=" runs on
        # into the statement at ``start``: it is that statement's own phrase
        if "\\boxed" not in head[phrase[0]:end] and end < start:
            found.append((end, phrase[1]))
    heading = answer_under_heading(head)
    if heading is not None and head.find(heading[1], heading[0]) >= 0:  # "# Answer" over a value
        found.append((head.find(heading[1], heading[0]) + len(heading[1]), heading[1]))
    boxes = [span for span in boxed_spans(head[window:]) if not is_blank_box(span[2])]
    if boxes and (not final or _stated_box(head, window + boxes[-1][0])):
        found.append((window + boxes[-1][1], boxes[-1][2].strip()))
    for pattern in (_HASH_LINE_RE, BOLD_LINE_RE):
        lines = [line for line in pattern.finditer(head, window) if not is_label(line.group("value"))]
        if lines:
            found.append((lines[-1].end(), lines[-1].group("value")))
    return [value for end, value in found if only_words_between(head, end, start)]


def _statements_after_phrase(text: str, answer: Extraction) -> tuple[int, list[str]]:
    """Where the final answer phrase read starts, and the answers stated after it: a bold answer
    (``故答案为：3`` then ``**5**``) or a ``####`` line; ``(-1, [])`` when the phrase is not found."""
    phrase = _last_phrase(text)
    if phrase is None:
        return -1, []
    after = text[phrase[0]:]
    stated = after.find(answer.text)
    after = after[stated + len(answer.text):] if stated >= 0 else ""
    if CORRECTION_RE.search(MINERVA_TAIL_RE.sub("", after)):
        return phrase[0], []
    found = [bold for bold in [_last_bold(after)] if bold is not None]
    hashes = _hash_lines(after)
    return phrase[0], found + ([hashes[-1].group("value")] if hashes else [])


def _bold_start(text: str, answer: Extraction) -> int:
    """Where the bold statement read as ``answer`` starts (the last bold holding it), else -1."""
    for bold in reversed(list(_BOLD_RE.finditer(text))):
        if answer.text in bold.group(0):
            return bold.start()
    return -1


def _review_answer_tags(text: str, answer: Extraction) -> Review:
    """Every answer tag after the last correction is an answer (``<answer>25</answer><answer>24</answer>``),
    and so is a final statement right before the last tag (``The answer is 25. <answer>24</answer>``) or
    after it (``<answer>24</answer> **Answer** \\boxed{25}``)."""
    tags = answer_tags(text)
    if not tags:
        return Review(answer)
    stated = []
    for _, _, content in tags_standing_beside_the_last(text, tags):
        earlier = extract_answer(content)
        stated += [earlier.text] if earlier is not None else []
    stated += _statements_before(blanked(text, [(start, end) for start, end, _ in tags[:-1]]), tags[-1][0])
    after = text[tags[-1][1]:]  # what follows the last tag: a box or any other final statement
    boxes = [content.strip() for _, _, content in boxed_spans(after) if not is_blank_box(content)]
    stated += boxes[-1:] + _statements_after(after)
    others = [value for value in stated if _states_something(value) and not same_statement(value, answer.text)]
    return Review(answer, others=tuple(dict.fromkeys(others)), others_rule="several answers") if others else Review(answer)


def _override(answer: Extraction, stated: list[str], read: str) -> Review:
    """``answer`` with ``stated`` as further statements of it, those that state something other than ``read``."""
    stated = [value for value in stated if _states_something(value) and not same_statement(value, read)]
    return Review(answer, others=tuple(dict.fromkeys(stated)), others_rule="override") if stated else Review(answer)


def _offered_after(text: str, end: int, answer: Extraction) -> Review | None:
    """``answer``, a plain number (``24``, ``-0.5``, ``\\frac{3}{4}``), with a number offered right after its
    statement, which ends at ``end`` (:func:`~referee.verifiers.text.hedging.offered_after`: ``\\boxed{24}, or 25.``),
    as another answer; ``None`` when none is, or when the answer is no plain number (``\\sqrt{2}, or 1.414``
    approximates it).

    Example:
        >>> text = r"So \\boxed{24}? Or maybe 25."
        >>> _offered_after(text, 14, extract_answer(text)).others
        ('25',)
        >>> _offered_after(r"So \\boxed{\\sqrt{2}}, or 1.41.", 21, Extraction(r"\\sqrt{2}", "boxed")) is None
        True
    """
    plain = answer.text.replace("$", "").strip()
    if _PLAIN_NUMBER_RE.fullmatch(plain) is None:
        return None
    offered = offered_after(text, end, parse_number(plain.replace("\u2212", "-")), words=False)
    return Review(answer, others=(offered.group("value"),), others_rule="several answers") if offered else None


def _hedged_statement(text: str, start: int, answer: Extraction, phrase: int | None = None) -> Review | None:
    """``answer``, read as the last value or from the final-answer phrase starting at ``phrase``, stated at
    ``start`` (-1: not found), as ``hedged`` when it is offered rather than stated
    (:func:`~referee.verifiers.text.hedging.statement_hedge`: ``..., but it could be 24.``, ``The answer is
    probably 24.``); else ``None``.

    Example:
        >>> text = "I think the answer is 25, but it could be 24."
        >>> _hedged_statement(text, 42, Extraction("24", "last number")).rule
        'hedged'
    """
    why = statement_hedge(text, start, start + len(answer.text), phrase=phrase) if start >= 0 else None
    return Review(answer, "hedged", why) if why is not None else None


def review(text: str, answer: Extraction | None) -> Review:
    """Apply the hedge and override policy to ``answer``, read from ``text`` (the part that counts).

    Example:
        >>> text = r"So \\boxed{12}. Alternatively, \\boxed{15}."
        >>> review(text, extract_answer(text)).others
        ('12',)
        >>> text = r"The answer is not \\boxed{7}."
        >>> review(text, extract_answer(text)).rule
        'disowned'
        >>> text = r"\\boxed{2 + 3 = 6}"
        >>> review(text, extract_answer(text)).rule
        'false equation'
    """
    if answer is None or answer.source == "bare":
        return Review(answer)
    repeated = repeated_statement(text)  # "Answer: 73 or Answer: 72", "[[73]]" then "[[72]]", in any format
    if repeated and any(same_statement(value, answer.text) for value in repeated):
        others = tuple(value for value in repeated if not same_statement(value, answer.text))
        return Review(answer, others=others, others_rule="several answers")
    if answer.source in ("answer tag", "last number", "math span", "bold"):
        disowned = disowned_answer(text)
        if disowned is not None and same_statement(disowned, answer.text):
            return Review(answer, "disowned", f"it says {disowned} is not its answer, or only supposes it: "
                                              "no answer is stated as final")
    if answer.source == "answer tag":
        return _review_answer_tags(text, answer)
    spans = boxed_spans(text)
    disowned = disowned_boxes(text, spans)
    if disowned:
        text = blanked(text, [(start, end) for start, end, _ in disowned])
        answer = extract_answer(text)
        if answer is None or answer.source in ("last number", "math span"):
            kinds = ", ".join(sorted({why for _, _, why in disowned}))
            return Review(answer, "disowned", f"its only boxed answer is disowned ({kinds}): no answer is stated as final")
        spans = boxed_spans(text)
    boxes = [span for span in spans if not is_blank_box(span[2])]
    real = set(boxes)
    if boxes and any(span[0] > boxes[-1][0] for span in spans if span not in real) and answer.source == "boxed":
        return Review(answer, "empty box", "its final box is empty: the final answer is blank")
    several = len(top_level_parts(answer.text)) > 1  # several answers read as one (boxes joined): no other is sought
    if answer.source == "bold" and not several:
        start = _bold_start(text, answer)
        if start < 0:
            return Review(answer)
        hashes = _hash_lines(text, start)
        later = [hashes[-1].group("value")] if hashes and not CORRECTION_RE.search(text[start:hashes[-1].start()]) else []
        return _override(answer, later + _statements_before(text, sentence_start(text, start)), answer.text)
    if answer.source in ("last number", "math span"):  # a number on GSM8K's final ``####`` line, say
        hedged = _hedged_statement(text, text.rfind(answer.text), answer)  # "..., but it could be 24."
        if hedged is not None:
            return hedged
        hashes = _hash_lines(text)
        if hashes and same_statement(hashes[-1].group("value"), answer.text) and not text[hashes[-1].end():].strip():
            return _override(answer, _statements_before(text, hashes[-1].start()), answer.text)
        return Review(answer)
    if not boxes and answer.source == "final answer":
        heading = answer_under_heading(text)
        if heading is not None and heading[1] == answer.text:  # "# Answer" over the answer: what stands before it
            return _override(answer, _statements_before(text, heading[0]), answer.text)
        start, stated = _statements_after_phrase(text, answer)
        value_at = text.find(answer.text, start) if start >= 0 else -1
        offered = _offered_after(text, value_at + len(answer.text), answer) if value_at >= 0 else None
        if offered is not None:
            return offered
        hedged = _hedged_statement(text, value_at, answer, start) if not several else None  # "The answer is probably 24."
        if hedged is not None:
            return hedged
        before = _statements_before(text, sentence_start(text, start)) if start >= 0 and not several else []
        return _override(answer, stated + before, answer.text)
    if not boxes or answer.source not in ("boxed", "final answer", "answer tag"):
        return Review(answer)
    last = boxes[-1]
    if answer.source == "boxed" and _false_equation(last[2]):
        return Review(answer, "false equation", f"its boxed equation {last[2].strip()} is false")
    if answer.source == "boxed":
        sentence = text[sentence_start(text, last[0]):sentence_end(text, last[1])]
        if HEDGE_WORD_RE.search(sentence.replace(last[2], "")):
            return Review(answer, "hedged", "the sentence of its final box hedges it (maybe, probably, might)")
        offered = _offered_after(text, last[1], answer)
        if offered is not None:
            return offered
    others = [] if several else alternatives_before(text, boxes)
    if others:
        return Review(answer, others=tuple(others), others_rule="several answers")
    if answer.source == "final answer":  # a final answer phrase after the last box: the box is an answer too
        return Review(answer, others=(last[2].strip(),), others_rule="override") if not same_statement(last[2], answer.text) \
            and not CORRECTION_RE.search(MINERVA_TAIL_RE.sub("", text[last[1]:])) else Review(answer)
    if answer.source != "boxed":
        return Review(answer)
    stated = _statements_after(text[last[1]:])
    if not several:
        stated += [value for value in _statements_before(text, sentence_start(text, last[0]))
                   if not _worked_from(text, last[0], value)]
    return _override(answer, stated, last[2])
