"""The maths answer domain: ``verify``, ``verify_batch`` and their options type :class:`CompareOptions`,
with ``gold_answer`` and ``exact_number`` for callers that write answers in the gold's form (the audit).

That face is all that other domains, ``referee.rewards`` and ``referee.recipes`` import. Inside,
one module per job, cheapest first (see ``docs/architecture.md``):

* ``extract``: what the completion states as its final answer, rules in precedence order;
* ``gold``: the gold as answer text; ``options``: :class:`CompareOptions`;
* ``forms``: rewrites of an (answer, gold) pair that keep the value;
* ``exact``: decisions without sympy (normalised text, exact numbers, lists, matrices);
* ``values``: values at a point of simple closed forms, without sympy;
* ``pipeline``: the batch pipeline (``verify``, ``verify_batch``);
* ``workers``: the worker pool (what its processes preload), started by ``verify_batch`` first;
* ``sympy_worker``: the only module that imports sympy and math-verify, run in worker processes;
* ``parser_tables``: the LaTeX parser's prediction tables the workers start with.

Plain-text reading shared with other domains (LaTeX structure, numbers, how a text ends) lives
in :mod:`referee.verifiers.text`.

Example:
    >>> from referee.verifiers import math as maths
    >>> maths.verify(r"so \\boxed{\\frac{1}{2}}", "0.5").status
    'correct'
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from ..verdict import Verdict
from .options import Percent

# The rest of the face is imported on first use, so that a worker process, which imports only
# ``sympy_worker`` and ``options``, does not import the reading pipeline it never runs.
_FACE = {"CompareOptions": "options", "exact_number": "exact", "gold_answer": "gold", "verify": "pipeline"}
_MODULES = frozenset({"antlr_closure", "exact", "extract", "forms", "gold", "hedges", "options", "parser_tables",
                      "pipeline", "sympy_worker", "values", "workers"})
__all__ = ["CompareOptions", "Verdict", "exact_number", "gold_answer", "verify", "verify_batch"]


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
    (:func:`referee.verifiers.math.pipeline.verify_batch`: the same options and verdicts).

    The worker pool starts before the reading pipeline is imported, so that the template's
    imports overlap the caller's on a process's first batch.

    Example:
        >>> [v.status for v in verify_batch([r"\\boxed{0.5}", "no idea"], [r"\\frac{1}{2}", "1"])]
        ['correct', 'no_answer']
    """
    if backend == "local":
        from .workers import start_early

        start_early(workers)
    from . import pipeline

    return pipeline.verify_batch(completions, golds, timeout=timeout, float_rounding=float_rounding, abs_tol=abs_tol,
                                 rel_tol=rel_tol, percent=percent, strict=strict, max_answer_chars=max_answer_chars,
                                 after_think=after_think, workers=workers, batch_timeout=batch_timeout, backend=backend)


def __getattr__(name: str) -> Any:
    if name in _FACE:
        value = getattr(importlib.import_module(f"{__name__}.{_FACE[name]}"), name)
        globals()[name] = value
        return value
    if name.startswith("__") or name in _MODULES:  # a module not imported yet: the import system loads it
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # The names the flat module referee.verifiers.math had before it became this package, for one release.
    for module in ("pipeline", "workers"):
        found = importlib.import_module(f"{__name__}.{module}")
        if hasattr(found, name):
            return getattr(found, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
