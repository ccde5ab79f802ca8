"""The hedge and override policy: which statements of a completion are its answer, and when it has none.

A completion is paid for one final answer. This stage runs after :mod:`.extract` has read that
answer from the text that counts (after the last ``</think>``) and applies the rules of
docs/verifiers.md, "Hedges, overrides and disowned answers":

* ``disowned``: a box the completion disowns is not its answer: inside an HTML comment or a code
  block, negated (``the answer is not \\boxed{7}``), hypothetical (``if it were \\boxed{7}``) or
  quoted (``"the answer is \\boxed{7}"``). The answer is read again without those boxes; a
  completion whose every box is disowned and that states no other final answer is ``wrong``.
* ``empty box``: a final box with nothing in it (``\\boxed{}``, ``\\boxed{\\ }``) after the last
  real one is a blank final answer: ``wrong``.
* ``false equation``: a boxed equation between numbers that is false (``\\boxed{2 + 3 = 6}``).
* ``hedged``: the sentence of the final box hedges it (``probably``, ``maybe``, ``might``).
* ``several answers``: an earlier box offered as an alternative to the final one (``alternatively``,
  ``otherwise``, ``candidate``, ranked guesses, ``/`` or ``or`` between them) is an answer too.
* ``override``: a later ``The answer is X``, ``Answer: X``, bold ``**X**`` or a closing
  ``Therefore, X.`` after the final box, or an answer phrase just before it, is an answer too;
  so is a bold answer after the final answer phrase of a completion with no box.

The last two name *other statements* (:attr:`Review.others`): the completion is paid only when
each of them equals the gold as well, so restatements of one value (``\\boxed{\\frac12}``, then
``Answer: 0.5``) stay paid and two different values never are. A correction between two
answers (``wait``, ``actually``, ``mistake``, ``instead``) keeps the later one alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text.hedging import (CHECK_RE, CLOSING_RE, CORRECTION_RE, HEDGE_WORD_RE, alternatives_before, blanked,
                            disowned_boxes, is_blank_box, same_statement, sentence_end, sentence_start)
from ..text.latex import boxed_spans
from .extract import Extraction, _last_bold, _last_phrase, extract_answer, is_bare_answer
from .values import closed_form_value

_REVERSE_GAP = 80  # characters between an answer phrase and the box that follows it


@dataclass(frozen=True)
class Review:
    """What the policy makes of a completion's answer.

    ``answer``: the answer to compare (read again when a disowned box was dropped); ``rule`` and
    ``reason``: a rule that makes the completion ``wrong`` whatever the gold, else ``None``;
    ``others``: further statements of the answer, each of which must equal the gold too, with
    ``others_rule`` naming why they count.

    Example:
        >>> Review(Extraction("5", "boxed")).rule is None
        True
    """

    answer: Extraction | None
    rule: str | None = None
    reason: str = ""
    others: tuple[str, ...] = ()
    others_rule: str = ""


def _false_equation(content: str) -> bool:
    sides = [side for side in content.split("=") if side.strip()]
    if len(sides) < 2 or "\\neq" in content or "<" in content or ">" in content:
        return False
    values = [closed_form_value(side) for side in sides]
    if None in values:
        return False
    return any(abs(value - values[0]) > 1e-9 * max(1.0, abs(values[0])) for value in values[1:])


def _states_something(value: str) -> bool:
    return re.sub(r"[\s$\\()\[\]{}.,;:]", "", value) != ""


def _statements_after(after: str) -> list[str]:
    """Answers stated after the final box: an answer phrase, a bold answer, a closing ``Therefore, X.``"""
    found = []
    check = CHECK_RE.search(after)
    after = after[:check.start()] if check else after
    phrase = _last_phrase(after)
    if phrase is not None and not CORRECTION_RE.search(after[:phrase[0]]):
        found.append(phrase[1])
    bold = _last_bold(after)
    if bold is not None:
        found.append(bold)
    closing = CLOSING_RE.search(after)
    if closing:
        value = closing.group("value").strip().strip("$").strip()
        if value and is_bare_answer(value):
            found.append(value)
    return found


def _phrase_before(text: str, box_start: int) -> str | None:
    """An answer phrase just before the final box, with nothing but words between (``The answer is 15. Hence \\boxed{12}``)."""
    head = text[:box_start]
    phrase = _last_phrase(head)
    if phrase is None:
        return None
    end = sentence_end(head, phrase[0] + 1)
    gap = head[end:]
    if end >= box_start or len(gap) > _REVERSE_GAP or re.search(r"[0-9]", gap) or CORRECTION_RE.search(gap):
        return None
    return phrase[1]


def _bold_after_phrase(text: str, answer: Extraction) -> Review:
    """A bold answer after the final answer phrase (``故答案为：3`` then ``**5**``) is an answer too."""
    phrase = _last_phrase(text)
    if phrase is None:
        return Review(answer)
    after = text[phrase[0]:]
    stated = after.find(answer.text)
    after = after[stated + len(answer.text):] if stated >= 0 else ""
    bold = _last_bold(after)
    if bold is None or not _states_something(bold) or same_statement(bold, answer.text) or CORRECTION_RE.search(after):
        return Review(answer)
    return Review(answer, others=(bold,), others_rule="override")


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
    disowned = disowned_boxes(text)
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
    if not boxes and answer.source == "final answer":
        return _bold_after_phrase(text, answer)
    if not boxes or answer.source not in ("boxed", "final answer", "answer tag"):
        return Review(answer)
    last = boxes[-1]
    if answer.source == "boxed" and _false_equation(last[2]):
        return Review(answer, "false equation", f"its boxed equation {last[2].strip()} is false")
    if answer.source == "boxed":
        sentence = text[sentence_start(text, last[0]):sentence_end(text, last[1])]
        if HEDGE_WORD_RE.search(sentence.replace(last[2], "")):
            return Review(answer, "hedged", "the sentence of its final box hedges it (maybe, probably, might)")
    others = [] if "," in answer.text else alternatives_before(text, boxes)
    if others:
        return Review(answer, others=tuple(others), others_rule="several answers")
    if answer.source == "final answer":  # a final answer phrase after the last box: the box is an answer too
        return Review(answer, others=(last[2].strip(),), others_rule="override") if not same_statement(last[2], answer.text) \
            and not CORRECTION_RE.search(text[last[1]:]) else Review(answer)
    if answer.source != "boxed":
        return Review(answer)
    stated = _statements_after(text[last[1]:])
    before = _phrase_before(text, last[0])
    if before is not None:
        stated.append(before)
    stated = [value for value in stated if _states_something(value) and not same_statement(value, last[2])]
    return Review(answer, others=tuple(dict.fromkeys(stated)), others_rule="override") if stated else Review(answer)
