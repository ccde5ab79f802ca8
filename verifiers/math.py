"""Maths answer checking: math-verify and sympy equivalence with hard timeouts, fast.

``verify(completion, gold)`` reads the completion's final answer (see
:func:`referee.verifiers.math_answers.extract_answer`), reads the gold (bare LaTeX, a number
or a full solution with ``\\boxed{}``), and decides in three steps, cheapest first:

1. **text**: equal after normalisation (``\\dfrac`` = ``\\frac``, ``\\left(`` = ``(``, spacing,
   ``^\\circ``, ``\\text{}``), in this process;
2. **number**: both are plain numbers (decimals, fractions, percent, ``1.5\\times10^{3}``),
   compared exactly, in this process;
3. **sympy**: math-verify's ``verify(gold, answer)`` (its asymmetry kept) in a worker process
   with a hard deadline enforced from outside (:mod:`referee.verifiers.deadline_pool`), so the
   timeout holds in any thread, in asyncio code and in any process. A worker that overruns is
   killed and replaced.

Whose fault: an answer that overruns the deadline, or is longer or deeper than the limits, is
``timeout`` (score 0); an unusable gold or a failed worker is ``error`` (reward ``None``).
"""

from __future__ import annotations

import functools
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .deadline_pool import NamedFunction, Outcome, shared_pool
from .math_answers import (
    CompareOptions,
    ExactNumber,
    Extraction,
    Percent,
    UnusableGold,
    assignment_value,
    brace_depth,
    canonical,
    exact_number,
    extract_answer,
    for_sympy,
    gold_answer,
    numbers_match,
)
from .verdict import Verdict

# The sympy side is imported only by the workers: this process never parses with sympy.
_WORKER_MODULES = ("referee.verifiers.math_sympy",)
_GOLD_PROBLEM = NamedFunction("referee.verifiers.math_sympy:gold_problem")
_EQUIVALENT = NamedFunction("referee.verifiers.math_sympy:equivalent")
MAX_NESTING = 64  # deeper answers only exhaust the LaTeX parser's recursion
_SHOWN = 80  # characters of an answer quoted in a reason


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


_GOLD_CHECKS = _GoldChecks()


@dataclass(frozen=True)
class _Item:
    """A completion whose verdict depends on its gold being usable."""

    gold: str
    gold_for_sympy: str
    gold_number: ExactNumber | None
    answer: Extraction | None
    early: Verdict | None  # no answer, or over the limits: the verdict once the gold is known usable


def _short(text: str, limit: int = _SHOWN) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _read(completion: Any, gold: Any, options: CompareOptions, max_answer_chars: int) -> _Item | Verdict:
    try:
        gold_text = gold_answer(gold)
    except UnusableGold as exc:
        return Verdict("error", reason=str(exc))
    if not isinstance(completion, str):
        return Verdict("error", reason=f"completion must be a str, got {type(completion).__name__}")
    item = functools.partial(_Item, gold_text, for_sympy(gold_text, options.percent), exact_number(gold_text))
    answer = extract_answer(completion)
    details = {"gold": _short(gold_text, 200)}
    if answer is None:
        return item(None, Verdict("no_answer", details=details,
                                  reason="no \\boxed{}, final-answer phrase, <answer> tag or $...$ in the completion"))
    details["source"] = answer.source
    if len(answer.text) > max_answer_chars:
        return item(answer, Verdict("timeout", extracted=_short(answer.text, 200), details={**details, "limit": "max_answer_chars"},
                                    reason=f"the answer is {len(answer.text)} characters long, over max_answer_chars="
                                           f"{max_answer_chars}; treated as a timeout"))
    if brace_depth(answer.text) > MAX_NESTING:
        return item(answer, Verdict("timeout", extracted=_short(answer.text, 200), details={**details, "limit": "nesting"},
                                    reason=f"the answer nests brackets over {MAX_NESTING} deep; treated as a timeout"))
    return item(answer, None)


def _fast_verdict(item: _Item, options: CompareOptions) -> Verdict | None:
    """The verdict from text or exact-number comparison, or ``None`` when sympy must decide."""
    answer, gold = item.answer, item.gold
    assert answer is not None  # items without an answer carry an early verdict
    details = {"gold": _short(gold, 200), "source": answer.source}
    shown = f"{_short(answer.text)} ({answer.source})"
    candidates = [answer.text]
    if "=" not in gold:
        value = assignment_value(answer.text)
        if value is not None:
            candidates.append(value)
    gold_canonical = canonical(gold)
    for candidate in candidates:
        if canonical(candidate) == gold_canonical:
            return Verdict("correct", 1.0, extracted=answer.text, details={**details, "method": "text"},
                           reason=f"{shown} matches the gold {_short(gold)} as written")
    if item.gold_number is None:
        return None
    for candidate in candidates:
        number = exact_number(candidate)
        if number is not None:
            status, verb = ("correct", "equals") if numbers_match(number, item.gold_number, options) else ("wrong", "differs from")
            return Verdict(status, 1.0 if status == "correct" else 0.0, extracted=answer.text,
                           details={**details, "method": "number"}, reason=f"{shown} {verb} the gold {_short(gold)}")
    return None


def _sympy_verdict(item: _Item, outcome: Outcome, timeout: float) -> Verdict:
    answer = item.answer
    assert answer is not None  # items without an answer carry an early verdict
    details = {"gold": _short(item.gold, 200), "source": answer.source, "method": "sympy"}
    shown = f"{_short(answer.text)} ({answer.source})"
    if outcome.status == "ok":
        equal, parsed = outcome.value
        if equal:
            return Verdict("correct", 1.0, extracted=answer.text, details=details,
                           reason=f"{shown} is equivalent to the gold {_short(item.gold)}")
        how = "is not equivalent to" if parsed else "does not parse as maths and differs from"
        return Verdict("wrong", 0.0, extracted=answer.text, details=details, reason=f"{shown} {how} the gold {_short(item.gold)}")
    if outcome.status == "timeout":
        return Verdict("timeout", extracted=answer.text, details={**details, "seconds": round(outcome.seconds, 3)},
                       reason=f"checking {shown} against the gold took over {timeout} s")
    if outcome.status == "raised" and outcome.message.startswith(("MemoryError", "RecursionError")):
        return Verdict("timeout", extracted=answer.text, details=details,
                       reason=f"checking {shown} hit the worker's limits ({_short(outcome.message)})")
    return Verdict("error", extracted=answer.text, details=details,
                   reason=f"the maths checker failed on {shown}: {outcome.status}: {_short(outcome.message, 200)}")


def _option_problem(options: CompareOptions, timeout: Any, max_answer_chars: Any, workers: Any,
                    batch_timeout: Any) -> str | None:
    def positive(value: Any, integer: bool = False) -> bool:
        kinds = int if integer else (int, float)
        return isinstance(value, kinds) and not isinstance(value, bool) and value > 0

    if not positive(timeout):
        return f"timeout={timeout!r} must be a positive number of seconds"
    if not positive(max_answer_chars, integer=True):
        return f"max_answer_chars={max_answer_chars!r} must be a positive integer"
    if workers is not None and not positive(workers, integer=True):
        return f"workers={workers!r} must be a positive integer or None (the cores)"
    if batch_timeout is not None and not positive(batch_timeout):
        return f"batch_timeout={batch_timeout!r} must be a positive number of seconds or None"
    return options.problem()


def _check_golds(items: list[_Item | Verdict], pool: Any, timeout: float,
                 remaining: float | None) -> dict[str, str | None]:
    """Gold text -> problem (``None`` when usable) for every gold that sympy must vouch for."""
    problems: dict[str, str | None] = {}
    unknown = []
    for item in items:
        if not isinstance(item, _Item) or item.gold_number is not None or item.gold_for_sympy in problems:
            continue
        known, problem = _GOLD_CHECKS.get(item.gold_for_sympy)
        problems[item.gold_for_sympy] = problem
        if not known:
            unknown.append(item.gold_for_sympy)
    for gold, outcome in zip(unknown, pool.run(_GOLD_PROBLEM, [(g,) for g in unknown], timeout=timeout,
                                               total_timeout=remaining) if unknown else []):
        if outcome.status == "ok":
            problems[gold] = f"{outcome.value}: {_short(gold)}" if outcome.value else None
            _GOLD_CHECKS.put(gold, problems[gold])
        elif outcome.status == "timeout":
            problems[gold] = f"the gold {_short(gold)} took over {timeout} s to parse"
        else:
            problems[gold] = f"the gold {_short(gold)} could not be checked ({outcome.status}: {_short(outcome.message)})"
    return problems


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
    workers: int | None = None,
    batch_timeout: float | None = None,
) -> list[Verdict]:
    """``verify`` over paired lists, order kept, work spread over the worker processes.

    Takes :func:`verify`'s options, plus ``batch_timeout``: seconds the whole call may take
    (``None``, the default: bounded by the per-item deadlines, at most about
    ``timeout * len / workers``); items unfinished by then are ``error``. Identical
    (gold, answer) pairs are checked once, and each distinct gold is parsed once per worker.

    Example:
        >>> golds = [r"\\frac{1}{2}"] * 3 + [None]
        >>> [v.status for v in verify_batch([r"\\boxed{0.5}", r"\\boxed{\\dfrac12}", "no idea", "4"], golds)]
        ['correct', 'correct', 'no_answer', 'error']
    """
    if len(completions) != len(golds):
        raise ValueError(f"verify_batch got {len(completions)} completions but {len(golds)} golds; "
                         "pass one gold per completion.")
    started = time.monotonic()
    options = CompareOptions(float_rounding, abs_tol, rel_tol, percent, strict)
    problem = _option_problem(options, timeout, max_answer_chars, workers, batch_timeout)
    if problem:
        return [Verdict("error", reason=problem) for _ in completions]

    def remaining() -> float | None:
        return None if batch_timeout is None else max(1e-3, batch_timeout - (time.monotonic() - started))

    items = [_read(c, g, options, max_answer_chars) for c, g in zip(completions, golds)]
    pool = shared_pool(workers, preload=_WORKER_MODULES)
    gold_problems = _check_golds(items, pool, timeout, remaining())
    verdicts: list[Verdict | None] = [None] * len(items)
    jobs: dict[tuple[str, str], list[int]] = {}
    for index, item in enumerate(items):
        if isinstance(item, Verdict):
            verdicts[index] = item
        elif gold_problems.get(item.gold_for_sympy):
            verdicts[index] = Verdict("error", reason=gold_problems[item.gold_for_sympy] or "",
                                      details={"gold": _short(item.gold, 200)})
        elif item.early is not None:
            verdicts[index] = item.early
        else:
            verdicts[index] = _fast_verdict(item, options)
            if verdicts[index] is None:
                key = (item.gold_for_sympy, for_sympy(item.answer.text, options.percent))  # type: ignore[union-attr]
                jobs.setdefault(key, []).append(index)
    if jobs:
        outcomes = pool.run(_EQUIVALENT, [(gold, answer, options) for gold, answer in jobs],
                            timeout=timeout, total_timeout=remaining())
        for indices, outcome in zip(jobs.values(), outcomes):
            for index in indices:
                verdicts[index] = _sympy_verdict(items[index], outcome, timeout)  # type: ignore[arg-type]
    return verdicts  # type: ignore[return-value]


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
        workers: size of the shared worker pool to use (default: the cores).

    Returns:
        A Verdict: ``correct``/``wrong`` with the answer read and how it was compared
        (``details["method"]``: ``text``, ``number`` or ``sympy``), ``no_answer``, ``timeout``
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
                        workers=workers)[0]
