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
* ``sympy_worker``: the only module that imports sympy and math-verify, run in worker processes.

Plain-text reading shared with other domains (LaTeX structure, numbers, how a text ends) lives
in :mod:`referee.verifiers.text`.

Example:
    >>> from referee.verifiers import math as maths
    >>> maths.verify(r"so \\boxed{\\frac{1}{2}}", "0.5").status
    'correct'
"""

import importlib
from typing import Any

# The face is imported on first use, so that a worker process, which imports only
# ``sympy_worker`` and ``options``, does not import the reading pipeline it never runs.
_FACE = {"CompareOptions": "options", "Verdict": "pipeline", "exact_number": "exact", "gold_answer": "gold",
         "verify": "pipeline", "verify_batch": "pipeline"}
_MODULES = frozenset({"exact", "extract", "forms", "gold", "hedges", "options", "parser_tables", "pipeline",
                      "sympy_worker", "values"})
__all__ = sorted(_FACE)


def __getattr__(name: str) -> Any:
    if name in _FACE:
        value = getattr(importlib.import_module(f"{__name__}.{_FACE[name]}"), name)
        globals()[name] = value
        return value
    if name.startswith("__") or name in _MODULES:  # a module not imported yet: the import system loads it
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # The names the flat module referee.verifiers.math had before it became this package, for one release.
    pipeline = importlib.import_module(f"{__name__}.pipeline")
    if hasattr(pipeline, name):
        return getattr(pipeline, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
