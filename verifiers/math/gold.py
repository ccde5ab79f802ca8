"""The gold as answer text: bare LaTeX, a number or a full solution read into the answer it states."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from ..text.latex import BOXED_RE, balanced, strip_math_delimiters
from ..text.numbers import format_number
from ..verdict import UnusableGold
from .exact import congruence, counted, is_sentence
from .extract import extract_answer, is_bare_answer, is_word_answer, last_boxed
from .forms import named_option, number_words_only

MAX_GOLD_CHARS = 10_000
_COUNT_RE = re.compile(r"^(-?[0-9][0-9.]*)\s+([A-Za-z][A-Za-z ]*)$")  # "3 apples" as "3 \text{ apples}"


def _read_as(text: str) -> str:
    found = extract_answer(text)
    return found.text if found is not None else ""


def gold_answer(gold: Any) -> str:
    """The gold as answer text: bare LaTeX, a number, or a full solution (its last ``\\boxed{}``).

    A gold with no box is read whole when it is only an answer, else with the completion's
    extraction rules (``Answer is 5.``), else whole when it is a word or a short phrase
    (``isosceles triangle``); a number in words (``forty two``) is unusable. A qualifier stays
    with its value: ``3 apples`` (as ``3 \\text{ apples}``), ``x = 3 (mod 7)``.

    Raises:
        UnusableGold: for an empty, non-text, unbalanced or over-long gold.

    Example:
        >>> gold_answer(r"so the area is $\\boxed{\\frac{1}{2}}$.")
        '\\\\frac{1}{2}'
        >>> gold_answer("$50\\\\%$"), gold_answer(0.25), gold_answer(Fraction(1, 3))
        ('50\\\\%', '0.25', '1/3')
        >>> gold_answer("$ $")
        Traceback (most recent call last):
        ...
        referee.verifiers.verdict.UnusableGold: gold '$ $' is empty; pass the answer text, ...
    """
    if isinstance(gold, bool) or gold is None:
        raise UnusableGold(f"gold {gold!r} is not an answer; pass the answer text, e.g. '\\frac{{1}}{{2}}'")
    if isinstance(gold, (int, Fraction)):
        return format_number(Fraction(gold))
    if isinstance(gold, float):
        if gold != gold or gold in (float("inf"), float("-inf")):
            raise UnusableGold(f"gold {gold!r} is not a finite number; pass the answer text instead")
        return repr(gold)
    if not isinstance(gold, str):
        raise UnusableGold(f"gold of type {type(gold).__name__} is not text or a number; pass the answer as a string")
    if len(gold) > MAX_GOLD_CHARS:
        raise UnusableGold(f"gold is {len(gold)} characters long (over {MAX_GOLD_CHARS}); pass only the final answer")
    if BOXED_RE.search(gold):
        boxed = last_boxed(gold)
        if boxed is None:
            raise UnusableGold(f"gold {gold[-80:]!r} has no readable \\boxed{{}} answer; fix its braces or pass the answer")
        text = boxed[1]
    else:
        text = strip_math_delimiters(gold)
        if not text:
            raise UnusableGold(f"gold {gold[:80]!r} is empty; pass the answer text, e.g. '\\frac{{1}}{{2}}'")
        thing = counted(text)
        if thing is not None or congruence(text) is not None:  # "3 apples", "x = 3 (mod 7)": qualifiers kept
            return _COUNT_RE.sub(r"\1 \\text{ \2}", text.strip().rstrip(".")) if thing is not None else text.strip()
        if number_words_only(text) or not re.search(r"[0-9]", text) and re.fullmatch(r"[0-9]+", _read_as(text)):
            raise UnusableGold(f"gold {gold[:80]!r} is a number in words, which no maths parser reads; pass it in digits")
        if is_bare_answer(text):
            text = text if "\\$" in text else text.replace("$", "")  # "$-1$,$2$" is the list -1, 2
        else:
            found = extract_answer(gold)
            if found is None and is_word_answer(text.strip().rstrip("."), gold=True):
                return text.strip().rstrip(".")  # a word or a phrase: "isosceles triangle", "the empty set"
            if found is None and named_option(text) is not None:
                return text.strip()  # "(C) Parabola": the choice and what it names
            if found is None and is_sentence(text):
                return text.strip()  # "Petya will receive the last token.", "No, it is not possible.": judged as a sentence
            if found is None:
                raise UnusableGold(f"gold {gold[:80]!r} states no answer; pass the answer text, e.g. '\\frac{{1}}{{2}}'")
            text = found.group or found.text
    text = text.strip()
    if not text:
        raise UnusableGold(f"gold {gold[:80]!r} is empty; pass the answer text, e.g. '\\frac{{1}}{{2}}'")
    if not balanced(text, "{", "}"):
        raise UnusableGold(f"gold {text[:80]!r} has unbalanced braces; fix the gold's LaTeX")
    return text
