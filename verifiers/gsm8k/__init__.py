"""GSM8K answer checking: read the final number the way models write it, judge it by one policy, compare exactly.

Three stages:

* :mod:`.extract` reads the final number (``strict``: the last ``#### N`` line; ``flexible``: the
  later of the last box and the last answer phrase, else a bold number, else the last number;
  ``auto``, the default: ``strict`` when the completion has an answer line, else ``flexible``);
* :mod:`.hedges` applies the hedge and override policy (several different final answers, a
  later statement contradicting the box, a disowned, empty or false box, a hedged one: ``wrong``
  with the rule named); with ``after_think`` (default) only the text after the last
  ``</think>`` counts and a think block left open is ``no_answer``;
* numbers compare exactly as fractions (``18 == 18.00``, ``1,000 == 1000``), optionally with a
  tolerance.

Nothing is clipped: the whole completion is read.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import Any

from ..registry import moved_backend_keyword
from ..text.hedging import Review, after_reasoning
from ..text.numbers import Exact, exact, format_number, parse_number
from ..text.prose import CUT_OFF_REASON, looks_cut_off
from ..verdict import UnusableGold, Verdict
from .closing import closing_answer
from .extract import MODES, Extraction, Mode, _extractor, _line_reader, _strict, extract_answer, qualifies_its_number
from .hedges import one_quantity, review

__all__ = ["MODES", "Extraction", "Mode", "Verdict", "extract_answer", "gold_value", "verify", "verify_batch"]


def _parse_gold(gold: Any) -> tuple[Exact, str]:
    """(exact value, canonical text) of a gold; raises :class:`UnusableGold` naming what is wrong."""
    if isinstance(gold, bool) or gold is None:
        raise UnusableGold(f"gold {gold!r} is not a number")
    if isinstance(gold, numbers.Integral):  # int and numpy integers
        value = int(gold)
    elif isinstance(gold, Fraction):
        value = exact(gold)
    elif isinstance(gold, Decimal):
        if not gold.is_finite():
            raise UnusableGold(f"gold {gold!r} is not a finite number")
        value = exact(Fraction(gold))
    elif isinstance(gold, numbers.Real):  # float and numpy floats, read as the decimal they print as
        if not math.isfinite(gold):
            raise UnusableGold(f"gold {gold!r} is not a finite number")
        try:
            value = exact(Fraction(str(float(gold)) if isinstance(gold, float) else str(gold)))
        except ValueError:  # a type that prints otherwise: its binary value
            value = exact(Fraction(float(gold)))
    elif not isinstance(gold, str):
        raise UnusableGold(f"gold of type {type(gold).__name__} is not a number or a string")
    elif "####" in gold:
        answer = _strict(gold)
        if answer is None:
            raise UnusableGold(f"gold solution's #### line holds no number: {gold[-80:]!r}")
        value = answer.number.value
    else:
        parsed = parse_number(gold, whole_as_int=True)
        if parsed is None:
            raise UnusableGold(f"gold {gold[:80]!r} is not a single number")
        if qualifies_its_number(gold):  # "\sqrt{6}" is not 6, "3 (mod 7)" not 3: never read down to a bare number
            raise UnusableGold(f"gold {gold[:80]!r} qualifies its number (a root, power, relation or second number); "
                               "give the bare number, or use the maths verifier")
        value = parsed
    return value, format_number(value)


# typed: True == 1 must not share. An unusable gold raises, so it is not cached (it is rare and cheap to re-read).
_parse_gold_cached = lru_cache(maxsize=8192, typed=True)(_parse_gold)


def _gold(gold: Any) -> tuple[Exact, str]:
    try:
        return _parse_gold_cached(gold)
    except TypeError:  # unhashable gold: parse without the cache
        return _parse_gold(gold)


def gold_value(gold: Any) -> Fraction:
    """Parse a gold answer (number, string, or a full GSM8K solution ending in ``#### N``).

    Returns the exact value; raises :class:`~referee.verifiers.verdict.UnusableGold` (a
    ``ValueError``, the maths verifier's) with a one-line message when the gold is unusable.

    Example:
        >>> gold_value("Janet sells 16 - 3 - 4 = 9 eggs.\\n#### 18"), gold_value(0.5)
        (Fraction(18, 1), Fraction(1, 2))
        >>> gold_value("eighteen")
        Traceback (most recent call last):
        ...
        referee.verifiers.verdict.UnusableGold: gold 'eighteen' is not a single number
    """
    return Fraction(_gold(gold)[0])


def _close(a: Exact, b: Exact, abs_tol: float, rel_tol: float) -> bool:
    return abs(a - b) <= max(Fraction(abs_tol), Fraction(rel_tol) * max(abs(a), abs(b)))


def verify(
    completion: Any,
    gold: Any,
    *,
    mode: Mode = "auto",
    abs_tol: float = 0.0,
    rel_tol: float = 0.0,
    after_think: bool = True,
) -> Verdict:
    """Judge one completion's final numeric answer against a GSM8K gold.

    Args:
        completion: the model's text.
        gold: a number, a numeric string (``"1,000"``, ``"$18"``), or a whole GSM8K solution
            ending in ``#### N`` (the dataset's ``answer`` column as it is).
        mode: ``"strict"`` (``####`` line only), ``"flexible"`` (boxed, answer phrases, bold,
            last number) or ``"auto"`` (strict when an answer line exists, else flexible).
        abs_tol: absolute tolerance; 0 (default) compares exactly.
        rel_tol: relative tolerance; 0 (default) compares exactly.
        after_think: grade only what follows the last ``</think>`` (default ``True``): a draft
            inside the think block never counts, and a think block left open is ``no_answer``
            (cut off). A completion without think tags is read whole; ``False`` reads the whole
            text, think block included.

    Returns:
        A Verdict: ``correct``/``wrong`` with what was extracted and from where, ``no_answer``
        when the completion states no number (or leaves its think block open), ``error`` when
        the gold or the call is unusable. A verdict of the hedge and override policy is
        ``wrong`` with ``details["check"]`` naming its rule, whatever the gold.

    Example:
        >>> verify("9 * 2 = 18\\n#### 18.00", "#### 18").status
        'correct'
        >>> verify("The answer is $1,234.", 1234).extracted
        '$1,234'
        >>> verify("I think it is 17.", "18").status
        'wrong'
        >>> verify("The answer is 18", "eighteen").status
        'error'
        >>> verify("So \\\\boxed{18}.\\n\\nThe answer is 20.", 20).details["check"]
        'override'
    """
    extract = _extractor(mode)
    if extract is None:
        return Verdict("error", reason=f"mode={mode!r} is not one of {', '.join(MODES)}")
    if (abs_tol != 0 or rel_tol != 0) and not (  # exact comparison (the default) needs no checks
        isinstance(abs_tol, numbers.Real) and isinstance(rel_tol, numbers.Real) and not isinstance(abs_tol, bool)
        and not isinstance(rel_tol, bool) and 0 <= abs_tol < math.inf and 0 <= rel_tol < math.inf
    ):
        return Verdict("error", reason=f"tolerances must be finite non-negative numbers, got abs_tol={abs_tol!r}, "
                                       f"rel_tol={rel_tol!r}")
    try:
        gold_number, gold_text = _gold(gold)
    except UnusableGold as exc:
        return Verdict("error", reason=str(exc))
    if not isinstance(completion, str):
        return Verdict("error", reason=f"completion must be a str, got {type(completion).__name__}")
    if not isinstance(after_think, bool):
        return Verdict("error", reason=f"after_think={after_think!r} must be True or False")
    text = after_reasoning(completion) if after_think else completion
    if text is None:
        return Verdict("no_answer", reason="cut off: the <think> block is never closed by </think>, so no final answer "
                       "follows it", details={"mode": mode, "gold": gold_text, "method": "policy",
                                              "rule": "unfinished reasoning", "check": "unfinished reasoning"})
    line = None if mode == "strict" else closing_answer(text, mode)  # (strict mode reads "####" lines alone)
    if line is not None:  # the answer alone at the close: read there, and the policy has nothing to read
        policy = Review(_line_reader(mode)(line))
    else:
        policy = review(text, extract(text), extract)
    found = policy.answer
    if found is None:
        if mode == "strict":
            reason = "no '#### N' answer line in the completion"
        elif looks_cut_off(text):
            reason = CUT_OFF_REASON
        else:
            reason = "no number after </think>" if text is not completion else "no number in the completion"
        return Verdict("no_answer", reason=reason, details={"mode": mode, "gold": gold_text})
    value = found.number.value
    equal = value == gold_number
    value_text = gold_text if equal else format_number(value)
    details = {"mode": mode, "source": found.source, "value": value_text, "gold": gold_text}
    if policy.rule is not None:
        return _policy_verdict(policy.rule, f"{policy.rule}: {policy.reason}", found.number.text, details)
    if found.qualified:
        return _policy_verdict("qualified box", f"qualified box: the box {found.qualified[:80]!r} qualifies its number "
                               "rather than stating it (a power, relation, sign, term, negation or second number)",
                               found.qualified, details)
    paid = equal or _matches(value, gold_number, abs_tol, rel_tol)  # others within the tolerance of a paid value restate it
    restated = ""
    if found.alternatives or policy.others:
        others = policy.others
        if found.alternatives and _restated_in_units(text, found):  # "\boxed{2} hours, or \boxed{120} minutes"
            one = {n.value for n in found.alternatives}
            paid = paid or any(_matches(n, gold_number, abs_tol, rel_tol) for n in one)
            found, others = found._replace(alternatives=()), tuple(n for n in others if n.value not in one)
            restated = f", restated in other units as {', '.join(format_number(n) for n in sorted(one))}"
        alternatives = found.alternatives or tuple(n for n in others
                                                   if not (paid and _matches(n.value, gold_number, abs_tol, rel_tol)))
        if alternatives:
            rule = policy.others_rule if not found.alternatives else "several answers"
            offered = ", ".join(dict.fromkeys([value_text, *(format_number(n.value) for n in alternatives)]))
            details["alternatives"] = [format_number(n.value) for n in alternatives]
            what = "a hedge is not an answer" if rule == "several answers" else "a later or earlier statement contradicts it"
            return _policy_verdict(rule, f"{rule}: offers several different answers ({offered}, {found.source}): {what}",
                                   found.number.text, details)
    if paid:
        return Verdict("correct", 1.0, found.number.text,
                       f"{value_text} ({found.source}{restated}) equals the gold {gold_text}", details)
    return Verdict("wrong", 0.0, found.number.text, f"{value_text} ({found.source}) differs from the gold {gold_text}",
                   details)


def _restated_in_units(text: str, found: Extraction) -> bool:
    """Whether the values a statement offers together are one quantity in several units, on its line."""
    if found.start < 0:
        return False
    end = text.find("\n", found.start)
    line = text[text.rfind("\n", 0, found.start) + 1:end if end >= 0 else len(text)]
    return one_quantity(line, [found.number.value, *(n.value for n in found.alternatives)])


def _matches(value: Exact, gold: Exact, abs_tol: float, rel_tol: float) -> bool:
    return value == gold or bool((abs_tol or rel_tol) and _close(value, gold, abs_tol, rel_tol))


def _policy_verdict(rule: str, reason: str, extracted: str, details: dict[str, Any]) -> Verdict:
    """A ``wrong`` verdict of the hedge and override policy: ``details["check"]`` and ``["rule"]`` name its rule."""
    return Verdict("wrong", 0.0, extracted=extracted, reason=reason,
                   details={**details, "method": "policy", "rule": rule, "check": rule})


def verify_batch(completions: Sequence[Any], golds: Sequence[Any], *, batch_timeout: float | None = None,
                 backend: str = "local", **options: Any) -> list[Verdict]:
    """``verify`` over paired lists, order kept; bad items get their own Verdict.

    ``batch_timeout``: seconds the whole call may take (items not reached by then are
    ``error``); ``backend="ray"`` (deprecated, kept for one release: use
    :func:`referee.verifiers.registry.verify_batch_on`) checks the batch on the Ray verifier host
    of the caller's node.

    Example:
        >>> [v.status for v in verify_batch(["#### 3", "no idea", None], [3, 3, 3])]
        ['correct', 'no_answer', 'error']
    """
    if len(completions) != len(golds):
        raise ValueError(f"verify_batch got {len(completions)} completions but {len(golds)} golds; pass one gold per completion.")
    if backend != "local":
        return moved_backend_keyword("gsm8k", backend, completions, golds, {**options, "batch_timeout": batch_timeout})
    if batch_timeout is None:
        return [verify(completion, gold, **options) for completion, gold in zip(completions, golds)]
    if isinstance(batch_timeout, bool) or not isinstance(batch_timeout, (int, float)) or not batch_timeout > 0:
        return [Verdict("error", reason=f"batch_timeout={batch_timeout!r} must be a positive number of seconds")] * len(golds)
    ends = time.monotonic() + batch_timeout
    return [verify(completion, gold, **options) if time.monotonic() < ends else
            Verdict("error", reason=f"the batch deadline of {batch_timeout} s passed before this item was checked")
            for completion, gold in zip(completions, golds)]
