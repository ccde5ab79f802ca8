"""The batch pipeline: read each answer and gold, decide what plain text can, send the rest to sympy workers.

``verify(completion, gold)`` reads the completion's final answer (see
:func:`referee.verifiers.math.extract.extract_answer`), reads the gold (bare LaTeX, a number
or a full solution with ``\\boxed{}``), and decides in three steps, cheapest first:

1. **text**: equal after normalisation (``\\dfrac`` = ``\\frac``, ``\\left(`` = ``(``, spacing,
   ``^\\circ``, ``\\text{}``), in this process;
2. **number**: both are plain numbers (decimals, fractions, percent, ``1.5\\times10^{3}``),
   compared exactly, in this process; a gold written in a base (``52_8``) wants those digits;
   a number against a list, a word or an expression in a variable is wrong (``kind``), and so
   are two simple expressions far apart in value (``2\\sqrt{5}`` against ``6``, ``x^2+1`` against
   ``x^2-1`` at a fixed point: ``value``);
3. **sympy**: math-verify's ``verify(gold, answer)`` (its asymmetry kept) in a worker process
   with a hard deadline enforced from outside (:mod:`referee.verifiers.deadline_pool`), so the
   timeout holds in any thread, in asyncio code and in any process. A worker that overruns is
   killed and replaced.

Whose fault: an answer that overruns the deadline, or is longer or deeper than the limits, is
``timeout`` (score 0); an unusable gold or a failed worker is ``error`` (reward ``None``).
"""

from __future__ import annotations

import functools
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from ..deadline_pool import NamedFunction, Outcome
from ..registry import moved_backend_keyword
from ..text.latex import brace_depth, strip_math_delimiters, top_level_parts  # noqa: F401 (an old flat-module name)
from ..text.prose import CUT_OFF_REASON, HEDGE, looks_cut_off
from ..text.vocabulary import TEXT_COMMAND
from ..verdict import UnusableGold, Verdict
from .exact import (
    ExactNumber,
    answer_words,
    base_number,
    canonical,
    congruence,
    counted,
    exact_elements,
    exact_matrix,
    exact_names,
    exact_number,
    for_sympy,
    has_decimals,
    is_sentence,
    labelled_values,
    may_be_labelled,
    named_choice,
    never_a_number,
    numbers_match,
    sentence_words,
    states_several_quantities,
    yes_or_no,
)
from .extract import Extraction, after_reasoning, extract_answer, is_bare_answer, is_word_answer
from .forms import comparable, listed_parts, named_option, union_of_alternatives
from .gold import gold_answer
from .hedges import review
from .options import CompareOptions, Percent
from .values import (
    closed_form_value,
    definition,
    element_shape,
    far_apart,
    ordered_values,
    rational_value,
    surely_parses,
    union_values,
    unordered_values,
    value_at_point,
)
from .workers import maths_pool

# The sympy side is imported only by the workers (see .workers): this process never parses with sympy.
_JUDGE = NamedFunction("referee.verifiers.math.sympy_worker:judge")
MAX_NESTING = 64  # deeper answers only exhaust the LaTeX parser's recursion
_SHOWN = 80  # characters of an answer quoted in a reason
# "or" between two answers inside one box or span: "x = 1 \text{ or } x = -2", "5 \quad \text{or} \quad 7"
_OR_WORD_RE = re.compile(  # starts only where a run of spaces starts: linear however many spaces
    rf"(?<!\s)\s*(?:\\q?quad\s*)*(?:{TEXT_COMMAND}\s*\{{\s*or\s*\}}|" r"(?<=\s)or(?=\s)|\\(?:lor|vee)(?![A-Za-z]))\s*(?:\\q?quad\s*)*")
_BRACKETS_RE = re.compile(r"[(\[][^()\[\]]*[)\]]")  # innermost brackets
_WORDS_ONLY_RE = re.compile(r"(?:\\text\s*\{[^{}0-9]*\}|[A-Za-z\s.,;:'])+")  # "\text{No solutions}", "all primes"


class _GoldChecks:
    """Thread-safe LRU of gold text -> ``None`` (sympy reads it) or why it cannot be used."""

    def __init__(self, size: int = 8192) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._known: OrderedDict[str, str | None] = OrderedDict()

    def get(self, gold: str) -> tuple[bool, str | None]:
        with self._lock:
            if gold not in self._known:
                return False, None
            self._known.move_to_end(gold)
            return True, self._known[gold]

    def put(self, gold: str, problem: str | None) -> None:
        with self._lock:
            self._known[gold] = problem
            if len(self._known) > self._size:
                self._known.popitem(last=False)

    def after_fork(self) -> None:
        """In a forked child: a lock another thread held at the fork would stay held forever."""
        self._lock = threading.Lock()


_GOLD_CHECKS = _GoldChecks()
os.register_at_fork(after_in_child=_GOLD_CHECKS.after_fork)


@dataclass(frozen=True)
class _Item:
    """A completion whose verdict depends on its gold being usable."""

    gold: str  # the gold as compared with this answer (see forms.comparable)
    gold_for_sympy: str
    gold_number: ExactNumber | None
    gold_value: complex | None  # its value (at the comparison point when it has variables)
    gold_vouched: bool  # certainly parses as maths: no sympy check needed
    answer: Extraction | None
    read: str  # what was read: the answer, or the group of answers when the gold has several
    compared: str  # the answer as compared with the gold
    early: Verdict | None  # no answer, or over the limits: the verdict once the gold is known usable
    others: tuple[str, ...] = ()  # further statements of the answer that must equal the gold too (hedges)
    others_rule: str = ""  # the hedge rule that made them count


def _short(text: str, limit: int = _SHOWN) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


@functools.lru_cache(maxsize=4096)
def _gold_facts(gold: str, options: CompareOptions) -> tuple[str, ExactNumber | None, complex | None, bool]:
    """What the fast paths need of a gold: its sympy text, exact number, value, and whether it surely parses."""
    number = exact_number(gold)
    value = float(number.value) if number is not None and not number.percent else _evaluator(options)(gold)
    vouched = number is not None or surely_parses(gold) or exact_elements(gold) is not None \
        or exact_matrix(gold) is not None or exact_names(gold) is not None or answer_words(gold) is not None \
        or congruence(gold) is not None or _sentence(gold) or yes_or_no(gold) is not None \
        or named_option(gold) is not None  # decided in this process
    return for_sympy(gold, options.percent), number, value, vouched


_MIXED_NUMBER_RE = re.compile(r"^(-?)([0-9]+)\s*\\frac\{([0-9]+)\}\{([0-9]+)\}$")


def _exact_value(text: str) -> Fraction | None:
    """``text`` as an exact number, mixed numbers (``15\\frac{39}{40}``) included, else ``None``."""
    mixed = _MIXED_NUMBER_RE.match(canonical(text))
    if mixed and int(mixed.group(4)):
        value = int(mixed.group(2)) + Fraction(int(mixed.group(3)), int(mixed.group(4)))
        return -value if mixed.group(1) else value
    number = exact_number(text)
    return None if number is None or number.percent else number.value


def _one_value(alternatives: list[str]) -> bool:
    """Whether answers offered as alternatives are one answer written several ways (``15\\frac{39}{40}``, ``\\frac{639}{40}``)."""
    if len({canonical(part) for part in alternatives}) == 1:
        return True
    values = [_exact_value(part) for part in alternatives]
    return None not in values and len(set(values)) == 1


def _read(completion: Any, gold: Any, options: CompareOptions, max_answer_chars: int, after_think: bool) -> _Item | Verdict:
    try:
        gold_text = _OR_WORD_RE.sub(", ", gold_answer(gold))  # a gold "1 \text{ or } 2" lists both
    except UnusableGold as exc:
        return Verdict("error", reason=str(exc))
    if not isinstance(completion, str):
        return Verdict("error", reason=f"completion must be a str, got {type(completion).__name__}")
    answer = extract_answer(completion, after_think=after_think)
    details = {"gold": _short(gold_text, 200)}
    policy = review((after_reasoning(completion) or "") if after_think else completion, answer)
    if policy.rule is not None:
        shown = policy.answer.text if policy.answer is not None else ""
        return _Item(gold_text, *_gold_facts(gold_text, options), policy.answer, shown, shown, Verdict(
            "wrong", 0.0, extracted=_short(shown, 200), details={**details, "method": "policy", "rule": policy.rule,
                                                          "source": policy.answer.source if policy.answer else None},
            reason=f"{policy.rule}: {policy.reason}"))
    answer = policy.answer
    if answer is None:
        if after_think and after_reasoning(completion) is None:
            reason = "cut off: the <think> block is never closed by </think>, so no final answer follows it"
        elif looks_cut_off(after_reasoning(completion) or "" if after_think else completion):
            reason = CUT_OFF_REASON
        else:
            where = "after </think>" if after_think else "in the completion"
            reason = f"no \\boxed{{}}, answer phrase, <answer> tag, bold answer, maths or number {where}"
        return _Item(gold_text, *_gold_facts(gold_text, options), None, "", "", Verdict(
            "no_answer", details=details, reason=reason))
    several = len(listed_parts(gold_text)) > 1
    read = answer.group if answer.group and several else answer.text
    if len(read) > max_answer_chars:  # before any rewriting: every step after this sees a bounded text
        return _Item(gold_text, *_gold_facts(gold_text, options), answer, read, read, Verdict(
            "timeout", extracted=_short(read, 200), details={**details, "source": answer.source, "limit": "max_answer_chars"},
            reason=f"the answer is {len(read)} characters long, over max_answer_chars={max_answer_chars}; treated as a timeout"))
    read = _OR_WORD_RE.sub(HEDGE, read)  # "\boxed{x = 1 \text{ or } x = -2}" offers two answers
    if HEDGE in read:  # "$x < 2$ or $x > 3$" read bare: each alternative without its delimiters
        read = HEDGE.join(strip_math_delimiters(part) for part in read.split(HEDGE))
    if several:  # "\boxed{f(x) = x} or \boxed{f(x) = 2 - x}" lists the solutions a gold of several asks for
        read = read.replace(HEDGE, ", ")
    elif HEDGE in read:  # "x < 2 or x > 3" is one union where the gold is one
        read = union_of_alternatives(read.split(HEDGE), gold_text) or read
    alternatives = [comparable(part, gold_text) for part in read.split(HEDGE)]
    compared, gold_text = alternatives[-1]
    item = functools.partial(_Item, gold_text, *_gold_facts(gold_text, options), answer, read, compared,
                             # a gold of several answers asks for them all: no statement of one is a hedge
                             others=() if several else policy.others, others_rule=policy.others_rule)
    details = {"gold": _short(gold_text, 200), "source": answer.source}
    if len(alternatives) > 1 and not _one_value([part for part, _ in alternatives]):
        return item(early=Verdict("wrong", 0.0, extracted=read, details={**details, "method": "hedge"},
                            reason=f"{_short(read)} ({answer.source}) offers different answers as alternatives: a hedge"))
    if len(compared) > max_answer_chars:
        return item(early=Verdict("timeout", extracted=_short(compared, 200), details={**details, "limit": "max_answer_chars"},
                            reason=f"the answer is {len(compared)} characters long, over max_answer_chars="
                                   f"{max_answer_chars}; treated as a timeout"))
    if brace_depth(compared) > MAX_NESTING:
        return item(early=Verdict("timeout", extracted=_short(compared, 200), details={**details, "limit": "nesting"},
                            reason=f"the answer nests brackets over {MAX_NESTING} deep; treated as a timeout"))
    return item(early=None)


def _evaluator(options: CompareOptions) -> Callable[[str], complex | None]:
    """Values at a point tell expressions in variables apart, unless variables are matched loosely."""
    return value_at_point if options.strict else closed_form_value


def _details(item: _Item, method: str) -> dict[str, Any]:
    assert item.answer is not None  # items without an answer carry an early verdict
    details = {"gold": _short(item.gold, 200), "source": item.answer.source, "method": method}
    if item.compared != item.read:
        details["compared"] = _short(item.compared, 200)
    return details


def _decided(item: _Item, correct: bool, method: str, reason: str) -> Verdict:
    return Verdict("correct" if correct else "wrong", 1.0 if correct else 0.0, extracted=item.read,
                   details=_details(item, method), reason=reason)


@dataclass
class _Pair:
    """What the fast checks read: the item, the options, and what more than one check needs."""

    item: _Item
    options: CompareOptions
    answer: str  # the answer as compared
    gold: str
    shown: str  # the answer as a reason quotes it, with the rule that read it

    @functools.cached_property
    def number(self) -> ExactNumber | None:
        """The answer as an exact number (read once, when a check first asks)."""
        return exact_number(self.answer)


def _qualified_gold(pair: _Pair) -> Verdict | None:
    """A gold with a qualifier: a congruence wants its residue (or the same class, modulus stated);
    a count of things is not paid for a count of other things (``3 pears`` against ``3 apples``)."""
    gold_class = congruence(pair.gold)
    if gold_class is not None:
        residue, modulus = gold_class
        stated = congruence(pair.answer)
        number = pair.number
        if stated is not None:
            right = stated[1] == modulus and (stated[0] - residue) % modulus == 0
        elif number is not None and not number.percent:
            right = number.value == residue
        else:
            return None
        return _decided(pair.item, right, "qualifier", f"{pair.shown} {'states' if right else 'does not state'} "
                                                        f"the gold's residue {_short(pair.gold)}")
    thing, answer_thing = counted(pair.gold), counted(pair.answer)
    if thing is not None and answer_thing is not None and answer_thing[1] != thing[1]:
        return _decided(pair.item, False, "qualifier", f"{pair.shown} counts {answer_thing[1]}s where the gold "
                                                        f"{_short(pair.gold)} counts {thing[1]}s")
    return None


_Element = tuple[str, str | None]  # a value as written and its label (None: none written)


def _sort_key(element: _Element) -> tuple[int, float, str]:
    value = closed_form_value(element[0])
    return (0, value.real, "") if value is not None else (1, 0.0, canonical(element[0]))


def _label_pairs(elements: tuple[_Element, ...], gold_elements: tuple[_Element, ...],
                 unordered: bool) -> list[tuple[_Element, _Element]] | None:
    """The answer's elements beside the gold's: by label where every element has one and the gold's are
    distinct (any order), sorted by value in a set, else in order; ``None`` when the labels differ."""
    labels, gold_labels = [label for _, label in elements], [label for _, label in gold_elements]
    if None not in labels + gold_labels and len(set(gold_labels)) == len(gold_labels):
        if sorted(labels) != sorted(gold_labels):  # type: ignore[type-var]
            return None
        by_label = {element[1]: element for element in elements}
        return [(by_label[element[1]], element) for element in gold_elements]
    if unordered:
        elements, gold_elements = tuple(sorted(elements, key=_sort_key)), tuple(sorted(gold_elements, key=_sort_key))
    return list(zip(elements, gold_elements))


def _same_value(answer: str, gold: str, options: CompareOptions) -> bool | None:
    """Whether two values of labelled lists are equal: exact numbers and rational closed forms exactly, any
    two closed forms unequal when far apart, the same text equal; ``None`` when only sympy could tell."""
    number, gold_number = exact_number(answer), exact_number(gold)
    if number is not None and gold_number is not None:
        return numbers_match(number, gold_number, options)
    if canonical(answer) == canonical(gold):
        return True
    value, gold_value = rational_value(answer), rational_value(gold)
    if value is not None and gold_value is not None:
        return value == gold_value
    value, gold_value = closed_form_value(answer), closed_form_value(gold)
    return False if value is not None and gold_value is not None and far_apart(value, gold_value, options) else None


def _labelled_lists(pair: _Pair) -> Verdict | None:
    """Lists whose values carry labels (``3 \\text{ apples}, 5 \\text{ pears}``), compared element by element
    with their labels: math-verify reads such a list as its first number. First values only sympy could
    tell apart (``\\frac{\\sqrt{12}}{2}`` against ``\\sqrt{3}``) leave the pair to it; other such values are not paid."""
    if not (may_be_labelled(pair.answer) or may_be_labelled(pair.gold)):
        return None
    answer, gold = labelled_values(pair.answer), labelled_values(pair.gold)
    if answer is None and gold is not None and len(gold[1]) == 1 and states_several_quantities(pair.answer) \
            or gold is None and answer is not None and len(answer[1]) == 1 and states_several_quantities(pair.gold):
        return _decided(pair.item, False, "elements", f"{pair.shown} and the gold {_short(pair.gold)} state different "
                                                       "numbers of quantities")
    if answer is None and gold is not None and len(gold[1]) > 1 and any(label for _, label in gold[1]):
        return _decided(pair.item, False, "elements", f"{pair.shown} is not a list of the labelled values the gold "
                                                       f"{_short(pair.gold)} lists")  # math-verify: the gold's first number
    if answer is None or gold is None:
        return None
    (kind, elements), (gold_kind, gold_elements) = answer, gold
    gold_labelled = any(label for _, label in gold_elements)
    if len(elements) == len(gold_elements) == 1:  # one value: the same value under the same label pays ("\\text{Cars: } 7")
        (value, label), (gold_value, gold_label) = elements[0], gold_elements[0]
        same = label is not None and label == gold_label and _same_value(value, gold_value, pair.options)
        return _decided(pair.item, True, "elements", f"{pair.shown} states the gold's {_short(pair.gold)}") if same else None
    if not (gold_labelled or any(label for _, label in elements)) or gold_kind == "tuple" and not gold_labelled:
        return None  # "(3, 5)" may be an interval
    paired = _label_pairs(elements, gold_elements, "set" in (kind, gold_kind)) if len(elements) == len(gold_elements) else None
    same = [] if paired is None else [
        _same_value(value, gold_value, pair.options) if None in (label, gold_label) or label == gold_label else False
        for (value, label), (gold_value, gold_label) in paired]
    if paired is not None and None in same and False not in same and all(same[1:]) \
            and paired[0] == (elements[0], gold_elements[0]):
        return None  # sympy reads each list as its first value: it may tell only those apart
    equal = paired is not None and all(same)
    return _decided(pair.item, equal, "elements", f"{pair.shown} {'has' if equal else 'does not have'} the labelled "
                                                   f"values of the gold {_short(pair.gold)}")


def _sentence(gold: str) -> bool:
    """Whether the gold is one the gold reader reads only as a sentence (no answer, no word answer in it)."""
    return is_sentence(gold) and not is_bare_answer(gold) and not is_word_answer(gold.strip().rstrip("."), gold=True)


def _sentence_gold(pair: _Pair) -> Verdict | None:
    """A gold said in words: yes or no against yes or no, a named choice (``Petya will receive the last
    token.`` against ``Petya``) or the same sentence; an answer with a number, or naming another, is wrong
    against the first two. Any other answer cannot be judged against a sentence: ``error``, with that reason (a word
    answer such as ``isosceles triangle`` is left to the next checks)."""
    gold_says, sentence = yes_or_no(pair.gold), _sentence(pair.gold)
    if gold_says is None and not sentence:
        return None
    says, name, words = yes_or_no(pair.answer), named_choice(pair.gold), sentence_words(pair.answer)
    if says is not None and gold_says is not None:
        right = says == gold_says
        return _decided(pair.item, right, "text", f"{pair.shown} says {'yes' if says else 'no'}, the gold "
                                                   f"{_short(pair.gold)} {'too' if right else 'does not'}")
    if words == sentence_words(pair.gold) or name is not None and words == (name,):
        return _decided(pair.item, True, "text", f"{pair.shown} says what the gold {_short(pair.gold)} says")
    another_name = name is not None and len(words) == 1 and named_choice(pair.answer) is not None
    if another_name or (name is not None or gold_says is not None) and re.search(r"[0-9]", pair.answer):
        return _decided(pair.item, False, "text", f"{pair.shown} does not say what the gold {_short(pair.gold)} says")
    if not sentence:
        return None
    return Verdict("error", extracted=pair.item.read, details={**_details(pair.item, "text"), "gold_kind": "sentence"},
                   reason=f"the gold {_short(pair.gold)} is a sentence: only yes or no, the choice it names or the same "
                          f"sentence compare with it, and {pair.shown} is none of these, so it is not judged")


def _same_text(pair: _Pair) -> Verdict | None:
    if canonical(pair.answer) == canonical(pair.gold):
        return _decided(pair.item, True, "text", f"{pair.shown} matches the gold {_short(pair.gold)} as written")
    return None


def _base_digits(pair: _Pair) -> Verdict | None:
    gold_base = base_number(pair.gold)
    if gold_base is None:
        return None
    # 52_8: the same digits (the base may be left out), nothing else
    digits = base_number(pair.answer) or (canonical(pair.answer).upper(), gold_base[1])
    equal = digits == gold_base
    return _decided(pair.item, equal, "base", f"{pair.shown} {'equals' if equal else 'differs from'} the gold {_short(pair.gold)}")


def _exact_numbers(pair: _Pair) -> Verdict | None:
    if pair.item.gold_number is None or pair.number is None:
        return None
    equal = numbers_match(pair.number, pair.item.gold_number, pair.options)
    return _decided(pair.item, equal, "number", f"{pair.shown} {'equals' if equal else 'differs from'} the gold {_short(pair.gold)}")


def _rational_values(pair: _Pair) -> Verdict | None:
    """Closed forms of rational steps (``4^{2006}``, ``6\\times3^{2007}``) decided by exact arithmetic: floats
    would call ``\\frac34+\\frac{1}{4\\cdot 3^{1000}}`` the gold ``\\frac{3-3^{-999}}{4}`` or ``\\frac34``. Equal
    values pay only where both sides are such forms (a plain number against one stays with sympy, which
    reads a gold such as ``1e-5`` its own way); where a decimal is written, unequal values are left to the
    rounding rules."""
    gold_number, number = pair.item.gold_number, pair.number
    gold = gold_number.value if gold_number is not None and not gold_number.percent else rational_value(pair.gold)
    value = number.value if number is not None and not number.percent else rational_value(pair.answer)
    if gold is None or value is None:
        return None
    equal = numbers_match(ExactNumber(value, False, 0), ExactNumber(gold, False, 0), pair.options)
    if equal and (gold_number is not None or number is not None) or not equal and has_decimals(pair.answer + pair.gold):
        return None
    return _decided(pair.item, equal, "number", f"{pair.shown} {'equals' if equal else 'differs from'} the gold "
                                                f"{_short(pair.gold)}, exactly")


def _exact_matrices(pair: _Pair) -> Verdict | None:
    matrix, gold_matrix = exact_matrix(pair.answer), exact_matrix(pair.gold)
    if matrix is None or gold_matrix is None or (matrix != gold_matrix and has_decimals(pair.answer + pair.gold)):
        return None
    equal = matrix == gold_matrix
    return _decided(pair.item, equal, "elements", f"{pair.shown} {'equals' if equal else 'differs from'} the gold {_short(pair.gold)}")


def _interval_values(pair: _Pair) -> Verdict | None:
    unions, gold_unions = union_values(pair.answer), union_values(pair.gold)
    if unions is not None and gold_unions is not None and (len(unions) != len(gold_unions) or any(
            far_apart(a, g, pair.options) for union, gold_union in zip(unions, gold_unions) for a, g in zip(union, gold_union))):
        return _decided(pair.item, False, "value", f"{pair.shown} and the gold {_short(pair.gold)} differ in some interval")
    return None


def _exact_elements(pair: _Pair) -> Verdict | None:
    elements, gold_elements = exact_elements(pair.answer), exact_elements(pair.gold)
    if elements is None or gold_elements is None or elements[0] != gold_elements[0]:
        return None
    if elements == gold_elements:
        return _decided(pair.item, True, "elements", f"{pair.shown} has the elements of the gold {_short(pair.gold)}")
    if not has_decimals(pair.answer) and not has_decimals(pair.gold):
        return _decided(pair.item, False, "elements", f"{pair.shown} and the gold {_short(pair.gold)} differ in some element")
    return None


def _exact_names(pair: _Pair) -> Verdict | None:
    names, gold_names = exact_names(pair.answer), exact_names(pair.gold)
    if gold_names is None or names is None:
        return None
    if names == gold_names:
        return _decided(pair.item, True, "elements", f"{pair.shown} names the gold's {_short(pair.gold)}")
    return _decided(pair.item, False, "elements", f"{pair.shown} does not name the gold's {_short(pair.gold)}")


def _same_words(pair: _Pair) -> Verdict | None:
    words = answer_words(pair.gold)
    if words is None:
        return None
    if answer_words(pair.answer) == words:
        return _decided(pair.item, True, "text", f"{pair.shown} says the gold's words {_short(pair.gold)}")
    return _decided(pair.item, False, "text", f"{pair.shown} does not say the gold's words {_short(pair.gold)}")


def _words_against_maths(pair: _Pair) -> Verdict | None:
    answer = pair.answer
    if _WORDS_ONLY_RE.fullmatch(answer) and len(re.findall(r"[A-Za-z]{2,}", answer.replace("\\text", ""))) >= 2 \
            and re.search(r"[0-9]", pair.gold):
        return _decided(pair.item, False, "kind", f"{pair.shown} is words, the gold {_short(pair.gold)} is maths")
    return None


def _never_a_number(text: str) -> bool:
    """:func:`never_a_number`, where math-verify reads the text as a collection that is no number: not a list
    of one value (``0, 0`` and ``[0, 0]`` are the set ``{0}``, which is 0), nor brackets latex2sympy reads
    otherwise (``(2, 0, 3]``)."""
    if not never_a_number(text):
        return False
    shape = element_shape(text)
    if shape is not None:
        return shape != (1, frozenset({0}))
    text = canonical(text)
    if union_values(text) is not None:
        return True
    if "," in text and ("\\{" in text or any(ordered_values(group) is None for group in _BRACKETS_RE.findall(text)
                                            if "," in group)):
        return False  # a set, or brackets latex2sympy may read as something else
    parts = top_level_parts(text)
    values = [closed_form_value(part) for part in parts]
    known = [value for value in values if value is not None]
    return len(parts) == 1 or any(never_a_number(part) for part in parts) \
        or any(far_apart(value, known[0], CompareOptions()) for value in known[1:])


def _number_against_never_a_number(pair: _Pair) -> Verdict | None:
    gold_is_number = pair.item.gold_number is not None or closed_form_value(pair.gold) is not None
    answer_is_number = pair.number is not None or closed_form_value(pair.answer) is not None
    if gold_is_number and _never_a_number(pair.answer) or answer_is_number and _never_a_number(pair.gold):
        return _decided(pair.item, False, "kind", f"{pair.shown} and the gold {_short(pair.gold)} are not the same kind: "
                                                   "one is a number, one never is")
    return None


def _defined_values(pair: _Pair) -> Verdict | None:
    defined, gold_defined = definition(pair.answer), definition(pair.gold)
    if defined is not None and gold_defined is not None and defined[0] == gold_defined[0]:
        value, gold_value = _evaluator(pair.options)(defined[1]), _evaluator(pair.options)(gold_defined[1])
        if value is not None and gold_value is not None and far_apart(value, gold_value, pair.options):
            return _decided(pair.item, False, "value", f"{pair.shown} and the gold {_short(pair.gold)} define different values")
    return None


def _values_at_a_point(pair: _Pair) -> Verdict | None:
    if pair.item.gold_value is None:
        return None
    number = pair.number
    value = float(number.value) if number is not None and not number.percent else _evaluator(pair.options)(pair.answer)
    if value is not None and far_apart(value, pair.item.gold_value, pair.options):
        return _decided(pair.item, False, "value", f"{pair.shown} and the gold {_short(pair.gold)} differ in value")
    return None


def _values_element_by_element(pair: _Pair) -> Verdict | None:
    for read in (ordered_values, unordered_values):  # tuples and intervals in order, sets and lists sorted
        gold_values, answer_values = read(pair.gold), read(pair.answer)
        if gold_values is not None and answer_values is not None and (
                len(gold_values) != len(answer_values)
                or any(far_apart(g, a, pair.options) for g, a in zip(gold_values, answer_values))):
            return _decided(pair.item, False, "value", f"{pair.shown} and the gold {_short(pair.gold)} differ in some element")
    return None


def _element_counts(pair: _Pair) -> Verdict | None:
    shape, gold_shape = element_shape(pair.answer), element_shape(pair.gold)
    if shape is None or gold_shape is None:
        return None
    (count, kinds), (gold_count, gold_kinds) = shape, gold_shape
    if count != gold_count:
        return _decided(pair.item, False, "elements", f"{pair.shown} has {count} element{'s' * (count != 1)}, the gold "
                                                       f"{_short(pair.gold)} {gold_count}")
    if kinds.isdisjoint(gold_kinds):  # numbers against tuples, pairs against triples
        return _decided(pair.item, False, "elements", f"no element of {pair.shown} is of a kind the gold {_short(pair.gold)} has")
    return None


# The checks that decide without sympy, in the order they run; the first that decides wins
# (``details["method"]`` says which kind of check: qualifier, text, base, number, elements, kind, value).
FAST_CHECKS: tuple[tuple[str, Callable[[_Pair], Verdict | None]], ...] = (
    ("qualified gold", _qualified_gold),  # "x = 3 (mod 7)", "3 apples": the qualifier counts
    ("same text", _same_text),
    ("sentence gold", _sentence_gold),  # "No, it is not possible.", "Petya will receive the last token."
    ("labelled lists", _labelled_lists),  # "3 \text{ apples}, 5 \text{ pears}": values with their labels
    ("same words", _same_words),  # "\text{the Isosceles triangle}" says "isosceles triangle"
    ("base digits", _base_digits),  # a gold in a base decides here, right or wrong
    ("exact numbers", _exact_numbers),
    ("rational values", _rational_values),  # 4^{2006} = 2^{4012}, exactly, however large or close
    ("exact matrices", _exact_matrices),
    ("interval values", _interval_values),
    ("exact elements", _exact_elements),
    ("exact names", _exact_names),  # "E_{1},E_{2}": names no maths parser reads as a list
    ("words against maths", _words_against_maths),
    ("number against never a number", _number_against_never_a_number),
    ("defined values", _defined_values),
    ("values at a point", _values_at_a_point),
    ("values element by element", _values_element_by_element),
    ("element counts", _element_counts),  # "-2,0,2" against "\{1\}", "(3,0),(-3,1)" against "(-3, 1)"
)


def _fast_verdict(item: _Item, options: CompareOptions) -> Verdict | None:
    """The verdict of the first of :data:`FAST_CHECKS` that decides (``details["check"]`` names it), or
    ``None`` when sympy must decide."""
    shown = f"{_short(item.read)} ({item.answer.source})"  # type: ignore[union-attr]
    pair = _Pair(item, options, item.compared, item.gold, shown)
    for name, check in FAST_CHECKS:
        verdict = check(pair)
        if verdict is not None:
            return replace(verdict, details={**verdict.details, "check": name})  # the check that decided
    return None


def _sympy_verdict(item: _Item, outcome: Outcome, timeout: float) -> Verdict:
    details = {**_details(item, "sympy"), "check": "sympy"}
    shown = f"{_short(item.read)} ({item.answer.source})"  # type: ignore[union-attr]
    if outcome.status == "ok":
        equal, parsed = outcome.value[1]
        if equal:
            return Verdict("correct", 1.0, extracted=item.read, details=details,
                           reason=f"{shown} is equivalent to the gold {_short(item.gold)}")
        how = "is not equivalent to" if parsed else "does not parse as maths and differs from"
        return Verdict("wrong", 0.0, extracted=item.read, details=details, reason=f"{shown} {how} the gold {_short(item.gold)}")
    if outcome.status == "timeout":
        return Verdict("timeout", extracted=item.read, details={**details, "seconds": round(outcome.seconds, 3)},
                       reason=f"checking {shown} against the gold took over {timeout} s")
    if outcome.status == "raised" and outcome.message.startswith(("MemoryError", "RecursionError")):
        return Verdict("timeout", extracted=item.read, details=details,
                       reason=f"checking {shown} hit the worker's limits ({_short(outcome.message)})")
    return Verdict("error", extracted=item.read, details=details,
                   reason=f"the maths checker failed on {shown}: {outcome.status}: {_short(outcome.message, 200)}")


@dataclass(frozen=True)
class _GoldCheck:
    """What checking a gold alone found: why it is unusable (``None``: usable), and whether that is final.

    A parse that succeeded or failed is final and cached; a timeout or a failed worker may
    pass on another try, so it decides this batch only.
    """

    problem: str | None
    final: bool


def _gold_check(gold: str, outcome: Outcome, timeout: float) -> _GoldCheck:
    if outcome.status == "ok":
        return _GoldCheck(f"{outcome.value[0]}: {_short(gold)}" if outcome.value[0] else None, final=True)
    if outcome.status == "timeout":
        return _GoldCheck(f"the gold {_short(gold)} took over {timeout} s to parse", final=False)
    return _GoldCheck(f"the gold {_short(gold)} could not be checked ({outcome.status}: {_short(outcome.message)})",
                      final=False)


@dataclass
class _Slot:
    """One completion of a batch on its way to a verdict."""

    item: _Item | Verdict  # a Verdict when reading alone decided it (an unusable gold, a bad completion)
    decided: Verdict | None = None  # by a fast path
    job: tuple[str, str] | None = None  # the (gold, answer) sympy job that decides it otherwise


def _option_problem(options: CompareOptions, timeout: Any, max_answer_chars: Any, workers: Any,
                    batch_timeout: Any, after_think: Any) -> str | None:
    def positive(value: Any, integer: bool = False) -> bool:
        kinds = int if integer else (int, float)
        return isinstance(value, kinds) and not isinstance(value, bool) and 0 < value < float("inf")

    if not positive(timeout):
        return f"timeout={timeout!r} must be a positive number of seconds"
    if not positive(max_answer_chars, integer=True):
        return f"max_answer_chars={max_answer_chars!r} must be a positive integer"
    if workers is not None and not positive(workers, integer=True):
        return f"workers={workers!r} must be a positive integer or None (the cores)"
    if batch_timeout is not None and not positive(batch_timeout):
        return f"batch_timeout={batch_timeout!r} must be a positive number of seconds or None"
    if not isinstance(after_think, bool):
        return f"after_think={after_think!r} must be True or False"
    return options.problem()


def _judge_golds(outcomes: dict[tuple[str, str | None], Outcome], pool: Any, options: CompareOptions,
                 timeout: float) -> dict[str, str | None]:
    """What the jobs' outcomes tell of their golds (``None``: usable), remembered where final.

    A job that timed out before its gold was vouched for is followed by a check of the gold
    alone, so that a gold that hangs is the gold's fault, not the completion's.
    """
    checks: dict[str, _GoldCheck] = {}
    for (gold, answer), outcome in outcomes.items():
        if outcome.status == "ok" or answer is None:
            checks[gold] = _gold_check(gold, outcome, timeout)
    unsure = sorted({gold for (gold, _), outcome in outcomes.items() if outcome.status == "timeout"} - set(checks))
    if unsure:
        for gold, outcome in zip(unsure, pool.run(_JUDGE, [(g, None, options) for g in unsure], timeout=timeout)):
            checks[gold] = _gold_check(gold, outcome, timeout)
    for gold, check in checks.items():
        if check.final:
            _GOLD_CHECKS.put(gold, check.problem)
    return {gold: check.problem for gold, check in checks.items()}


def verify_batch(
    completions: Sequence[Any],
    golds: Sequence[Any],
    *,
    timeout: float = 5.0,
    float_rounding: int = 6,
    abs_tol: float = 0.0,
    rel_tol: float = 0.0,
    percent: Percent = "either",
    strict: bool = True,
    max_answer_chars: int = 1000,
    after_think: bool = True,
    workers: int | None = None,
    batch_timeout: float | None = None,
    backend: str = "local",
) -> list[Verdict]:
    """``verify`` over paired lists, order kept, work spread over the worker processes
    (each answer that needs sympy starts on a worker as soon as it is read).

    Takes :func:`verify`'s options, plus ``batch_timeout``: seconds the whole call may take
    (``None``, the default: bounded by the per-item deadlines, at most about
    ``timeout * len / workers``); items unfinished by then are ``error``. Identical
    (gold, answer) pairs are checked once, and each distinct gold is parsed once per worker.
    ``backend="ray"`` (deprecated, kept for one release: use
    :func:`referee.verifiers.registry.verify_batch_on` or a reward's ``backend=``) checks the batch
    on the Ray verifier host of the caller's node (``workers`` is then the host's).

    Example:
        >>> golds = [r"\\frac{1}{2}"] * 3 + [None]
        >>> [v.status for v in verify_batch([r"\\boxed{0.5}", r"\\boxed{\\dfrac12}", "no idea", "4"], golds)]
        ['correct', 'correct', 'no_answer', 'error']
    """
    if len(completions) != len(golds):
        raise ValueError(f"verify_batch got {len(completions)} completions but {len(golds)} golds; "
                         "pass one gold per completion.")
    if backend != "local":
        return moved_backend_keyword("math", backend, completions, golds, locals())
    started = time.monotonic()
    options = CompareOptions(float_rounding, abs_tol, rel_tol, percent, strict)
    problem = _option_problem(options, timeout, max_answer_chars, workers, batch_timeout, after_think)
    if problem:
        return [Verdict("error", reason=problem) for _ in completions]

    def remaining() -> float | None:
        return None if batch_timeout is None else max(1e-3, batch_timeout - (time.monotonic() - started))

    pool = maths_pool(workers)
    pool.start()  # the workers' imports run while this process reads the batch
    # Each sympy job is sent as soon as it is read: the workers check while this process reads on.
    gold_problems: dict[str, str | None] = {}  # what is known of the golds sympy must vouch for
    unchecked: set[str] = set()
    jobs: dict[tuple[str, str | None], int] = {}  # distinct (gold, answer) jobs -> their index in the batch
    slots: list[_Slot] = []
    stated: list[list[_Slot]] = []  # each further statement of an answer (see hedges), judged as an answer of its own

    def to_sympy(slot: _Slot) -> None:
        """Decide the slot on a fast path, or add its sympy job to the batch (sent while reading goes on)."""
        item = slot.item
        if isinstance(item, Verdict):
            return
        if not item.gold_vouched:
            known, problem = _GOLD_CHECKS.get(item.gold_for_sympy)
            if known:
                gold_problems[item.gold_for_sympy] = problem
            else:
                unchecked.add(item.gold_for_sympy)
        if item.early is None and not gold_problems.get(item.gold_for_sympy):
            slot.decided = _fast_verdict(item, options)
            if slot.decided is None:
                slot.job = (item.gold_for_sympy, for_sympy(item.compared, options.percent))
                if slot.job not in jobs:
                    jobs[slot.job] = batch.add((*slot.job, options), send=False)  # sent by the poll below

    with pool.batch(_JUDGE, timeout=timeout, total_timeout=remaining()) as batch:
        for completion, gold in zip(completions, golds):
            slot = _Slot(_read(completion, gold, options, max_answer_chars, after_think))
            extras = [_Slot(_read(f"\\boxed{{{other}}}", gold, options, max_answer_chars, False))
                      for other in slot.item.others] if isinstance(slot.item, _Item) and slot.item.early is None else []
            for judged in (slot, *extras):
                to_sympy(judged)
            slots.append(slot)
            stated.append(extras)
            batch.poll()
        for gold in sorted(unchecked - {gold for gold, _ in jobs}):
            jobs[gold, None] = batch.add((gold, None, options), send=False)
        done = batch.outcomes()
    outcomes = {job: done[index] for job, index in jobs.items()}
    gold_problems.update(_judge_golds(outcomes, pool, options, timeout))
    return [_with_others(_final_verdict(slot, gold_problems, outcomes, timeout), slot,
                         [_final_verdict(extra, gold_problems, outcomes, timeout) for extra in extras])
            for slot, extras in zip(slots, stated)]


def _with_others(verdict: Verdict, slot: _Slot, others: list[Verdict]) -> Verdict:
    """A correct answer stays correct only when every further statement of it equals the gold too; a
    wrong one whose further statement is the gold is the policy's case (it names the rule)."""
    item = slot.item
    if not isinstance(item, _Item) or verdict.status not in ("correct", "wrong"):
        return verdict
    if not verdict.correct:  # the answer read is wrong; when another statement of it is the gold, that is the rule's case
        paid = next((other for other, judged in zip(item.others, others) if judged.correct), None)
        if paid is None:
            return verdict
        return Verdict("wrong", 0.0, extracted=verdict.extracted,
                       details={**verdict.details, "method": "policy", "rule": item.others_rule, "other": _short(paid)},
                       reason=f"{item.others_rule}: it states {_short(paid)}, the gold, and also {_short(item.read)} as "
                              "its answer; a completion is paid for one final answer")
    for other, judged in zip(item.others, others):
        if not judged.correct:
            return Verdict("wrong", 0.0, extracted=verdict.extracted,
                           details={**verdict.details, "method": "policy", "rule": item.others_rule, "other": _short(other)},
                           reason=f"{item.others_rule}: it also states {_short(other)} as its answer, which is not "
                                  f"the gold {_short(item.gold)}; a completion is paid for one final answer")
    return verdict


def _final_verdict(slot: _Slot, gold_problems: dict[str, str | None],
                   outcomes: dict[tuple[str, str | None], Outcome], timeout: float) -> Verdict:
    item = slot.item
    if isinstance(item, Verdict):
        return item
    problem = gold_problems.get(item.gold_for_sympy)
    if problem:
        return Verdict("error", reason=problem, details={"gold": _short(item.gold, 200)})
    if item.early is not None:
        return item.early
    if slot.decided is not None:
        return slot.decided
    assert slot.job is not None  # an item neither decided nor early went to sympy
    return _sympy_verdict(item, outcomes[slot.job], timeout)


def verify(
    completion: Any,
    gold: Any,
    *,
    timeout: float = 5.0,
    float_rounding: int = 6,
    abs_tol: float = 0.0,
    rel_tol: float = 0.0,
    percent: Percent = "either",
    strict: bool = True,
    max_answer_chars: int = 1000,
    after_think: bool = True,
    workers: int | None = None,
) -> Verdict:
    """Judge one completion's final maths answer against a gold answer.

    Args:
        completion: the model's text.
        gold: the answer as bare LaTeX (``\\frac{1}{2}``, ``x+1``, ``50\\%``, ``[-2, 7]``,
            ``\\text{Evelyn}``), a number, or a full solution ending in ``\\boxed{...}`` (MATH's
            ``solution`` column: its last boxed answer is used).
        timeout: seconds the sympy check of one answer may run (default 5); it is killed after.
        float_rounding: decimal places for answers written with a decimal point (default 6,
            math-verify's: ``0.333333`` equals ``1/3``, ``0.33`` does not).
        abs_tol: absolute tolerance for numeric answers (default 0: exact after rounding).
        rel_tol: relative tolerance for numeric answers (default 0: exact after rounding).
        percent: ``"either"`` (default: ``50\\%`` equals 50 and 0.5), ``"divide"`` (0.5 only)
            or ``"ignore"`` (50 only).
        strict: math-verify's strict mode (default ``True``: variable names matter, a set
            never equals a tuple).
        max_answer_chars: longer answers are not parsed and count as ``timeout`` (default 1000).
        after_think: grade only what follows the last ``</think>`` (default ``True``): a draft
            inside the think block never counts, and a think block left open is ``no_answer``
            (cut off). A completion without think tags is read whole. ``False`` keeps the earlier
            policy: the whole text is read, think block included.
        workers: size of the shared worker pool to use (default: the cores).

    Returns:
        A Verdict: ``correct``/``wrong`` with the answer read and how it was compared
        (``details["method"]``: ``qualifier``, ``text``, ``number``, ``base``, ``elements``, ``kind``, ``value`` or
        ``sympy``), ``no_answer``, ``timeout``
        (the answer's fault: score 0), or ``error`` (an unusable gold, a bad option, a failed
        worker: not the completion's fault).

    Example:
        >>> verify(r"so the answer is $\\boxed{\\dfrac{1}{2}}$.", "0.5").status
        'correct'
        >>> verify(r"The final answer is $\\left( 3, \\frac{\\pi}{2} \\right)$.", r"(3, \\frac{\\pi}{2})").details["method"]
        'text'
        >>> verify(r"\\boxed{2\\sqrt{2}}", r"\\sqrt{8}").details["method"]
        'sympy'
        >>> verify(r"\\boxed{\\frac{1}{3}}", "0.33").status
        'wrong'
        >>> verify(r"\\boxed{5}", r"\\frac{").status
        'error'
    """
    return verify_batch([completion], [gold], timeout=timeout, float_rounding=float_rounding, abs_tol=abs_tol,
                        rel_tol=rel_tol, percent=percent, strict=strict, max_answer_chars=max_answer_chars,
                        after_think=after_think, workers=workers)[0]
