"""The hedge and override policy for GSM8K answers: which statement is the answer, and when there is none.

The same written policy as the maths verifier's (docs/verifiers.md, "Hedges, overrides and
disowned answers"), applied to the number :mod:`.extract` read from the text that counts (after
the last ``</think>``):

* ``disowned``: a box in an HTML comment or a code block, negated, hypothetical or quoted is not
  an answer; the answer is read again without it, and a completion left with nothing but a
  number of its reasoning states none;
* ``empty box``: a blank box after the box read is a blank final answer;
* ``false equation``: a boxed equation between numbers that is false (``\\boxed{75 = 70}``);
* ``hedged``: the sentence of the box read hedges it (``maybe``, ``probably``, ``might``), so does
  such a word between an answer phrase and its value (``The answer is probably 24.``), and a cue
  right before the answer offers it beside another number (``..., but it could be 24.``);
* ``several answers``: earlier boxes offered as alternatives (``alternatively``, ``candidate``,
  ranked guesses, ``or`` / ``/`` between them), and a number offered right after the statement read
  (``\\boxed{24}, or 25.``, ``The answer is 24. Or maybe 25.``);
* ``override``: another final statement (an answer phrase, a bold number, a closing
  ``Therefore, 40.``, a box) after the one read, or an answer phrase just before the box read
  with nothing but words between.

The first four are ``wrong`` whatever the gold. The last two name *other statements*
(:attr:`Review.others`), each of which must equal the gold too: a restatement of one value stays
paid, two different values never are. A correction between two statements (``wait``,
``actually``, ``No,``) keeps the later one alone, and a check after the answer states nothing.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from fractions import Fraction

from ..text.hedging import (ANSWER_HEADING_RE, BOLD_LINE_RE, CHECK_RE, CORRECTION_RE, HEDGE_WORD_RE, STATEMENT_GAP, Review,
                            alternatives_before, answer_tags, blanked, closing_statement, completion_cues, cue_text,
                            disowned_answer, disowned_boxes, is_blank_box, offered_after, only_words_between, sentence_end,
                            repeated_statement, sentence_start, statement_hedge,
                            tags_standing_beside_the_last)
from ..text.labels import is_label
from ..text.latex import boxed_spans
from ..text.numbers import NumberMatch, first_number, parse_number
from .extract import _BOLD_RE, Extraction, _last_answer_line, _last_bold, _last_boxed, _last_phrase, _span_answer

_ARITHMETIC_RE = re.compile(r"^[0-9+\-*/(). ]+$")
_LATEX_ARITHMETIC = ((re.compile(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}"), r"((\1)/(\2))"),
                     (re.compile(r"\\times|\\cdot|×|\u00b7"), "*"), (re.compile(r"\\div|÷"), "/"),
                     (re.compile(r"\\left|\\right|\\[$,;:! ]|\$|(?<=[0-9]),(?=[0-9]{3})"), ""),
                     (re.compile(r"[{\[]"), "("), (re.compile(r"[}\]]"), ")"), (re.compile(r"\u2212"), "-"))
_DIGIT_RE = re.compile(r"[0-9]")
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


# One quantity in several units: (dimension, size in the dimension's smallest unit here).
_UNITS: dict[str, tuple[str, Fraction]] = {
    **dict.fromkeys(("second", "seconds", "sec", "secs"), ("time", Fraction(1))),
    **dict.fromkeys(("minute", "minutes", "min", "mins"), ("time", Fraction(60))),
    **dict.fromkeys(("hour", "hours", "hr", "hrs"), ("time", Fraction(3600))),
    **dict.fromkeys(("day", "days"), ("time", Fraction(86400))),
    **dict.fromkeys(("week", "weeks"), ("time", Fraction(604800))),
    **dict.fromkeys(("cent", "cents"), ("money", Fraction(1))),
    **dict.fromkeys(("dollar", "dollars"), ("money", Fraction(100))),
    **dict.fromkeys(("inch", "inches"), ("length", Fraction(1))),
    **dict.fromkeys(("foot", "feet"), ("length", Fraction(12))),
    **dict.fromkeys(("yard", "yards"), ("length", Fraction(36))),
    **dict.fromkeys(("mile", "miles"), ("length", Fraction(63360))),
    **dict.fromkeys(("mm", "millimeter", "millimeters"), ("metric length", Fraction(1))),
    **dict.fromkeys(("cm", "centimeter", "centimeters"), ("metric length", Fraction(10))),
    **dict.fromkeys(("m", "meter", "meters", "metre", "metres"), ("metric length", Fraction(1000))),
    **dict.fromkeys(("km", "kilometer", "kilometers"), ("metric length", Fraction(1000000))),
    **dict.fromkeys(("g", "gram", "grams"), ("mass", Fraction(1))),
    **dict.fromkeys(("kg", "kilogram", "kilograms"), ("mass", Fraction(1000))),
    **dict.fromkeys(("ounce", "ounces", "oz"), ("weight", Fraction(1))),
    **dict.fromkeys(("pound", "pounds", "lb", "lbs"), ("weight", Fraction(16))),
    **dict.fromkeys(("ml", "milliliter", "milliliters"), ("volume", Fraction(1))),
    **dict.fromkeys(("l", "liter", "liters", "litre", "litres"), ("volume", Fraction(1000))),
}
_QUANTITY_RE = re.compile(r"(?<![0-9.,])(?P<number>[0-9][0-9,]*(?:\.[0-9]+)?)\s*\}?\s*\$?\s*(?:\\(?:text|mathrm)\{\s*)?"
                          r"(?P<unit>[A-Za-z]+)\b")


def one_quantity(text: str, values: list[Fraction | int]) -> bool:
    """Whether ``values`` are one quantity written in units of one kind in ``text`` (``2 hours, or 120 minutes``).

    Each value must stand in ``text`` before a unit word, and all must convert to one size.

    Example:
        >>> one_quantity(r"It takes $\\boxed{2}$ hours, or $\\boxed{120}$ minutes.", [120, 2])
        True
        >>> one_quantity(r"It takes $\\boxed{2}$ hours, or $\\boxed{150}$ minutes.", [150, 2])
        False
        >>> one_quantity("5 apples or 6 pears", [6, 5])
        False
    """
    sizes: dict[Fraction, set[tuple[str, Fraction]]] = {}
    for match in _QUANTITY_RE.finditer(text):
        unit = _UNITS.get(match.group("unit").lower())
        number = parse_number(match.group("number"))
        if unit is not None and number is not None:
            sizes.setdefault(Fraction(number), set()).add((unit[0], Fraction(number) * unit[1]))
    measured = [sizes.get(Fraction(value)) for value in values]
    if any(not found for found in measured):
        return False
    return any(all(any(candidate == size for candidate in found) for found in measured) for size in measured[0])


def arithmetic_value(text: str) -> Fraction | None:
    """The exact value of a side of a boxed equation made of numbers and ``+ - * /`` (LaTeX allowed), else ``None``.

    Example:
        >>> arithmetic_value(r"3 \\times (16.50 + 22.50)"), arithmetic_value(r"\\frac{3}{4}"), arithmetic_value("x + 1")
        (Fraction(117, 1), Fraction(3, 4), None)
    """
    for pattern, replacement in _LATEX_ARITHMETIC:
        text = pattern.sub(replacement, text)
    if len(text) > 200 or not _ARITHMETIC_RE.match(text):
        return None
    try:
        return _evaluate(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ZeroDivisionError, ValueError):
        return None


def _evaluate(node: ast.expr) -> Fraction | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return Fraction(str(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _evaluate(node.operand)
        return None if value is None else (-value if isinstance(node.op, ast.USub) else value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _evaluate(node.left), _evaluate(node.right)
        return None if left is None or right is None else _OPERATORS[type(node.op)](left, right)
    return None


def _false_equation(content: str) -> bool:
    if "=" not in content:
        return False
    values = [arithmetic_value(side) for side in content.split("=") if side.strip()]
    known = [value for value in values if value is not None]
    return len(known) >= 2 and any(value != known[0] for value in known[1:])


def _bare_number(value: str) -> NumberMatch | None:
    """The number a closing ``Therefore, X.`` states when X is only a number (with ``$`` and units words at most)."""
    value = value.strip().strip("$").strip()
    answer = _span_answer(value)
    if answer is None or parse_number(value.split(" ")[0].strip("$")) is None:
        return None
    return answer[0]


def _statements_after(after: str) -> list[NumberMatch]:
    """Answers stated after the statement read: a box, an answer phrase, a bold number, a closing ``Therefore, X.``"""
    if _DIGIT_RE.search(after) is None:  # each of them states a number
        return []
    cues = cue_text(after)  # lower-cased once for every cued pattern and the phrases (a slice keeps every index)
    check = CHECK_RE.search_cued(after, cues)
    if check is not None:
        after, cues = after[:check.start()], None if cues is None else cues[:check.start()]
        if _DIGIT_RE.search(after) is None:
            return []
    found = []
    boxed = _last_boxed(after)
    if boxed is not None and not _corrected_before(after, cues, boxed[0]):
        found.append(boxed[1].number)
    phrase = _last_phrase(after, cues)
    if phrase is not None and not _corrected_before(after, cues, phrase[0]):
        found.append(phrase[1].number)
    bold = _last_bold(after)
    if bold is not None and not _corrected_before(after, cues, len(after)):
        found.append(bold)
    closing = closing_statement(after)
    number = _bare_number(closing.group("value")) if closing else None
    if number is not None and not _corrected_before(after, cues, closing.start()):
        found.append(number)
    return found


def _corrected_before(text: str, cues: str | None, end: int) -> bool:
    """Whether ``text[:end]`` holds a correction (``cues``: the :func:`cue_text` of ``text``)."""
    return CORRECTION_RE.search_cued(text[:end], None if cues is None else cues[:end]) is not None


def _has_box(text: str, end: int) -> bool:
    return text.find("\\", 0, end) >= 0 and (text.find("\\boxed", 0, end) >= 0 or text.find("\\fbox", 0, end) >= 0)


def _last_box(text: str, end: int) -> tuple[int, int, NumberMatch] | None:
    """``(start, end, number)`` of the last box stating a number in ``text[:end]``."""
    if not _has_box(text, end):
        return None
    head = text[:end]
    spans = boxed_spans(head)
    boxed = _last_boxed(head, spans)
    if boxed is None:
        return None
    return boxed[0], next(close for begin, close, _ in spans if begin == boxed[0]), boxed[1].number


def _no_mark_before(text: str, start: int) -> bool:
    """Whether ``text[:start]`` holds none of the marks :func:`_statement_before` reads a statement by (an
    answer phrase's "answer", a ``####`` line, a bold line in its last characters, a box): then it finds none."""
    cues = completion_cues(text)  # (the reading has lower-cased the text already, unless it read a "####" line)
    if cues is None or cues.find("answer", 0, start) >= 0:
        return False
    head = text[:start]
    # "\\": no box either; one character is looked for before several (a far quicker scan)
    return not ("\\" in head or ("#" in head and "####" in head)
                or ("*" in head and "**" in head[-STATEMENT_GAP - 100:]))


def _statement_before(text: str, start: int, box: tuple[int, int, NumberMatch] | None) -> NumberMatch | None:
    """A final statement just before the one read at ``start``, with nothing but a few words between.

    An answer phrase, a ``####`` line, a box or a bold number on a line of its own, followed by at
    most 80 characters of words (no digit, no correction; Minerva's "I hope it is correct." is none): ``The answer is 20. Hence \\boxed{15}``,
    ``#### 20`` then ``#### 15``, ``**20**`` then ``The answer is 15.``
    Each kind is only looked for where the mark it is read by stands ("answer", ``####``, ``**``);
    ``box``: the last box before ``start`` (:func:`_last_box`).
    """
    whole = completion_cues(text)
    tail = max(0, start - STATEMENT_GAP - 100)  # a bold line right before ``start`` stands in the last characters
    # Where the first mark of each kind stands (-1: none; one character is looked for before several, a far
    # quicker scan): a statement of that kind states its number after it.
    phrase_mark = whole.find("answer", 0, start) if whole is not None else 0
    line_mark = text.find("####", 0, start) if text.find("#", 0, start) >= 0 else -1
    bold_mark = text.find("**", tail, start) if text.find("*", tail, start) >= 0 else -1
    phrases, lines, bolds = phrase_mark >= 0, line_mark >= 0, bold_mark >= 0
    if box is None:
        first = min(phrase_mark if phrases else start, line_mark if lines else start, bold_mark if bolds else start)
        if _DIGIT_RE.search(text, first, start) is None:
            return None  # no mark, or no digit after the first: no statement of a number
    head = text[:start]
    lowered = whole[:start] if whole is not None else None
    found: list[tuple[int, NumberMatch]] = []  # (where the statement ends, its number)
    phrase = _last_phrase(head, lowered) if phrases else None
    if phrase is not None:
        stated = head.find(phrase[1].number.text, phrase[0])  # the sentence ends after the number it states
        found.append((sentence_end(head, stated + len(phrase[1].number.text)), phrase[1].number))
    line = _last_answer_line(head) if lines else None
    if line is not None and line.start >= 0:
        found.append((_line_end(head, line.start), line.number))
    if box is not None:
        found.append((box[1], box[2]))
    for bold in BOLD_LINE_RE.finditer(head[tail:]) if bolds else ():  # in a slice: its first line counts as a line
        number = None if is_label(bold.group(1)) else _span_answer(bold.group(1))
        if number is not None:
            found.append((tail + bold.end(), number[0]))
    for end, number in found:
        if end < start and only_words_between(head, end, start):
            return number
    return None


def _box_before(text: str, phrase_start: int, box: tuple[int, int, NumberMatch] | None) -> NumberMatch | None:
    """The last box before an answer phrase (``box``), with no correction between (``\\boxed{12}. The answer is 15.``)."""
    if box is None:
        return None
    between = text[box[0]:phrase_start]
    cues = cue_text(between)
    return None if CORRECTION_RE.search_cued(between, cues) or CHECK_RE.search_cued(between, cues) else box[2]


def _line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end < 0 else end


_NO_ANSWER: Review = Review(None)


def review(text: str, answer: Extraction | None, read: Callable[[str], Extraction | None]) -> Review:
    """Apply the hedge and override policy to ``answer``, read from ``text`` by ``read``.

    Example:
        >>> from .extract import extract_answer
        >>> text = r"So \\boxed{12}. Alternatively, \\boxed{15}."
        >>> [n.text for n in review(text, extract_answer(text), extract_answer).others]
        ['12']
        >>> text = r"The answer is not \\boxed{7}."
        >>> review(text, extract_answer(text), extract_answer).rule
        'disowned'
        >>> text = "9 * 2 = 18\\n#### 18\\nThe answer is 20."
        >>> review(text, extract_answer(text), extract_answer).others_rule
        'override'
    """
    if answer is None:
        return _NO_ANSWER
    # "Answer: 73 or Answer: 72", "[[73]]" then "[[72]]", in any format (a #### line's own review reads these)
    repeated = repeated_statement(text) if answer.source != "####" else ()
    if repeated:
        offered = [number for number in (first_number(value, whole_as_int=True) for value in repeated) if number]
        if any(number.value == answer.number.value for number in offered):
            others = tuple(number for number in offered if number.value != answer.number.value)
            return Review(answer, others=others, others_rule="several answers")
    if answer.source in ("last number", "bold") or answer.source == "####" and _negates_on_its_line(text, answer.start):
        # "The answer is not 24.", "If the answer were 24, ...", in a tag too; "#### not 24"
        disowned = disowned_answer(text)
        if disowned is not None and parse_number(disowned) == answer.number.value:
            return Review(answer, "disowned", f"it says {disowned} is not its answer, or only supposes it: "
                                              "no answer is stated as final")
    if "<" in text:  # (answer tags hold one; a test for one character is the quickest)
        several = _several_tagged(text, answer, read)
        if several is not None:
            return several
    if answer.source in ("answer phrase", "last number") and not answer.alternatives:
        hedged = _hedged_statement(text, answer)  # "The answer is probably 24.", "..., but it could be 24."
        if hedged is not None:
            return hedged
    if answer.source != "boxed":
        return _review_read(text, answer, [])
    spans = boxed_spans(text)
    disowned = disowned_boxes(text, spans)
    if disowned:
        text = blanked(text, [(start, end) for start, end, _ in disowned])
        spans = boxed_spans(text)
        answer = read(text)
        if answer is None or answer.source == "last number":
            kinds = ", ".join(sorted({why for _, _, why in disowned}))
            return Review(answer, "disowned", f"its only boxed answer is disowned ({kinds}): no answer is stated as final")
    return _review_read(text, answer, spans)


def _hedged_statement(text: str, answer: Extraction) -> Review | None:
    """``answer``, read from an answer phrase or as the last number, as ``hedged`` when it is offered
    rather than stated (:func:`~referee.verifiers.text.hedging.statement_hedge`: ``..., but it could be
    24.``, ``The answer is probably 24.``); else ``None``.

    Example:
        >>> from .extract import extract_answer
        >>> text = "The answer is probably 24."
        >>> _hedged_statement(text, extract_answer(text)).rule
        'hedged'
    """
    written = answer.number.text
    start = _number_end(text, answer) - len(written) if answer.source == "answer phrase" else text.rfind(written)
    why = statement_hedge(text, start, start + len(written), phrase=answer.start if answer.source == "answer phrase"
                          else None) if start >= 0 else None
    return Review(answer, "hedged", why) if why is not None else None


def _negates_on_its_line(text: str, start: int) -> bool:
    """Whether the line starting at ``start`` holds a negation ("not", "never") in any case."""
    end = text.find("\n", start)
    line = text[start:end if end >= 0 else len(text)].lower()
    return "not" in line or "never" in line


def _review_read(text: str, answer: Extraction, spans: list[tuple[int, int, str]]) -> Review:
    """The review of the statement ``answer`` was read from, by its kind (``spans``: the boxes of ``text``)."""
    source = answer.source
    if source == "bold":  # nothing is read after the last bold number: only a statement just before it
        return _review_bold(text, answer)
    if answer.start < 0:  # a last line or a last number: nothing is read after them, only an answer heading before
        before = _heading_answer_before(text, answer) if source == "last number" and "#" in text else None
        return _override(answer, [before]) if before is not None else Review(answer)
    if source == "####":
        return _review_line(text, answer)
    if source == "boxed":
        return _review_box(text, answer, spans)
    return _review_phrase(text, answer)


def _heading_answer_before(text: str, answer: Extraction) -> NumberMatch | None:
    """When ``answer`` is all that stands under the last answer heading, the number under the heading
    before it, if only words stand between them (``# Answer`` / ``73`` then ``# Answer`` / ``72``).

    Example:
        >>> from .extract import extract_answer
        >>> text = "So 73.\\n\\n# Answer\\n\\n73\\n\\n# Answer\\n\\n72"
        >>> _heading_answer_before(text, extract_answer(text)).text
        '73'
    """
    headings = list(ANSWER_HEADING_RE.finditer(text))
    under = _bare_number(text[headings[-1].end():]) if len(headings) >= 2 else None
    if under is None or under.value != answer.number.value:
        return None
    below = text[headings[-2].end():headings[-1].start()].strip().split("\n\n")[0]
    number = _bare_number(below)
    end = text.find(below, headings[-2].end()) + len(below)
    return number if number is not None and only_words_between(text, end, headings[-1].start()) else None


def _several_tagged(text: str, answer: Extraction, read: Callable[[str], Extraction | None]) -> Review | None:
    """``<answer>25</answer><answer>24</answer>``: each tag after the last correction is an answer."""
    tags = answer_tags(text)
    if len(tags) < 2:
        return None
    others = [found.number for _, _, content in tags_standing_beside_the_last(text, tags)
              for found in [read(content)] if found is not None and found.number.value != answer.number.value]
    return Review(answer, others=tuple(others), others_rule="several answers") if others else None


def _review_line(text: str, answer: Extraction) -> Review:
    """A ``####`` line: overridden by a statement after it or by a different one just before it."""
    offered = _offered_after(text, answer, _number_end(text, answer))
    if offered is not None:
        return offered
    others = _statements_after_line(text, answer.start)
    if _no_mark_before(text, answer.start):
        return _override(answer, others) if others else Review(answer)
    before = _other_statement_before(text, answer.start, answer.number.value)
    return _override(answer, others + [before] if before is not None else others)


def _review_phrase(text: str, answer: Extraction) -> Review:
    """An answer phrase: overridden by a statement after it, or by a box or a statement just before it."""
    offered = _offered_after(text, answer, _number_end(text, answer))
    if offered is not None:
        return offered
    others = _statements_after_line(text, answer.start)
    if _no_mark_before(text, answer.start):  # no box either
        return _override(answer, others) if others else Review(answer)
    box = _last_box(text, answer.start)
    others += [found for found in (_box_before(text, answer.start, box), _statement_before(text, answer.start, box))
               if found]
    return _override(answer, others)


def _statements_after_line(text: str, start: int) -> list[NumberMatch]:
    """The statements after the line of the statement at ``start`` (:func:`_statements_after`)."""
    line_end = text.find("\n", start)
    return _statements_after(text[line_end:]) if line_end >= 0 else []


_BOLD_ALTERNATIVE_RE = re.compile(r"\s*(?:,|/|or|either)?\s*(?:or\s*)?", re.IGNORECASE)  # "**73** or **72**"
_RESTATEMENTS = 3  # restatements of the answer looked past for an earlier, different one


def _other_statement_before(text: str, start: int, value: Fraction) -> NumberMatch | None:
    """The final statement just before ``start`` (:func:`_statement_before`), looking past lines that
    restate ``value``: ``The answer is 73.`` / ``#### 73`` / ``The answer is 72.`` / ``#### 72``
    states 73 as well, however often 72 is said between."""
    for _ in range(_RESTATEMENTS + 1):
        before = _statement_before(text, start, _last_box(text, start))
        if before is None or before.value != value:
            return before
        start = text[:start].rstrip().rfind("\n") + 1  # the line of the restatement
        if start == 0:
            return None
    return None


def _review_bold(text: str, answer: Extraction) -> Review:
    """A bold answer: one of several offered together (``**73** or **72**``), or overridden by a
    final statement just before it."""
    bolds = list(_BOLD_RE.finditer(text))
    offered = _offered_after(text, answer, bolds[-1].end()) if bolds else None
    if offered is not None:
        return offered
    if len(bolds) > 1 and _BOLD_ALTERNATIVE_RE.fullmatch(text, bolds[-2].end(), bolds[-1].start()):
        offered = _span_answer(bolds[-2].group(1))
        if offered is not None and offered[0].value != answer.number.value:
            return Review(answer, others=(offered[0],), others_rule="several answers")
    before = _statement_before(text, bolds[-1].start(), _last_box(text, bolds[-1].start())) if bolds else None
    return Review(answer, others=(before,), others_rule="override") \
        if before is not None and before.value != answer.number.value else Review(answer)


def _review_box(text: str, answer: Extraction, spans: list[tuple[int, int, str]]) -> Review:
    """A boxed answer (``spans``: the boxes of ``text``): empty, false, hedged, one of several, overridden."""
    index = [start for start, _, _ in spans].index(answer.start)
    read_box = spans[index]
    if index + 1 < len(spans) and any(is_blank_box(content) for _, _, content in spans[index + 1:]):  # boxes in order
        return Review(answer, "empty box", "its final box is empty: the final answer is blank")
    if _false_equation(read_box[2]):
        return Review(answer, "false equation", f"its boxed equation {read_box[2].strip()} is false")
    if box_hedged(text, read_box):
        return Review(answer, "hedged", "the sentence of its final box hedges it (maybe, probably, might)")
    offered = _offered_after(text, answer, read_box[1])
    if offered is not None:
        return offered
    if len(spans) > 1:
        boxes = [span for span in spans if span[0] <= read_box[0] and _span_answer(span[2]) is not None]
        alternatives = [_span_answer(content) for content in alternatives_before(text, boxes)]
        others = [found[0] for found in alternatives if found is not None]
        if others:
            return Review(answer, others=tuple(others), others_rule="several answers")
    others = _statements_after(text[read_box[1]:])
    before = _statement_before(text, read_box[0], _last_box(text, read_box[0]))
    return _override(answer, others + [before] if before is not None else others)


def _number_end(text: str, answer: Extraction) -> int:
    """Where the number of the statement ``answer`` was read from (a phrase, a ``####`` line) ends in ``text``."""
    stated = text.find(answer.number.text, answer.start)
    return stated + len(answer.number.text) if stated >= 0 else answer.start


def _offered_after(text: str, answer: Extraction, end: int) -> Review | None:
    """``answer`` with the number offered right after its statement, which ends at ``end``
    (:func:`~referee.verifiers.text.hedging.offered_after`), as another answer, unless the two are
    one quantity in two units (``\\boxed{2} hours, or 120 minutes``); ``None`` when none is offered.

    Example:
        >>> from .extract import extract_answer
        >>> text = r"So \\boxed{24}, or maybe 25."
        >>> [n.text for n in _offered_after(text, extract_answer(text), 14).others]
        ['25']
        >>> text = r"It takes \\boxed{2} hours, or 120 minutes."
        >>> _offered_after(text, extract_answer(text), 20) is None
        True
    """
    offered = offered_after(text, end, answer.number.value)
    number = first_number(offered.group("value"), whole_as_int=True) if offered is not None else None
    if number is None or offered.group("words") and (
            one_quantity(text[max(0, answer.start):end + offered.end()], [answer.number.value, number.value])
            or _in_other_units(answer.number.value, number.value, offered.group("words"))):
        return None
    return Review(answer, others=(number,), others_rule="several answers")


def _in_other_units(value: Fraction | int, offered: Fraction | int, words: str) -> bool:
    """Whether ``offered``, followed by the unit ``words`` start with, is ``value`` written in that unit
    while ``value`` was written in another unit of its kind, unnamed (``\\boxed{18}, or 1800 cents``).

    Example:
        >>> _in_other_units(18, 1800, " cents"), _in_other_units(2, 120, " minutes"), _in_other_units(18, 19, " cents")
        (True, True, False)
    """
    unit = _UNITS.get(words.split()[0].lower())
    return unit is not None and any(
        Fraction(value) * size == Fraction(offered) * unit[1] for kind, size in _UNITS.values() if kind == unit[0])


def box_hedged(text: str, box: tuple[int, int, str]) -> bool:
    """Whether the sentence of ``box`` (``(start, end, content)``) hedges it (``maybe``, ``probably``, ``might``).

    Example:
        >>> text = r"So it is maybe \\boxed{18}."
        >>> box_hedged(text, boxed_spans(text)[0]), box_hedged(r"So it is \\boxed{18}.", (9, 19, "18"))
        (True, False)
    """
    sentence = text[sentence_start(text, box[0]):sentence_end(text, box[1])]
    return HEDGE_WORD_RE.search(sentence.replace(box[2], "")) is not None


def _override(answer: Extraction, stated: list[NumberMatch]) -> Review:
    """``answer`` with the statements of ``stated`` whose value differs from it as further answers."""
    if not stated:
        return Review(answer)
    others = tuple(number for number in stated if number.value != answer.number.value)
    return Review(answer, others=others, others_rule="override") if others else Review(answer)
