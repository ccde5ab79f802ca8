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

from typing import Any

from ..verdict import Verdict
from .exact import exact_number
from .gold import gold_answer
from .options import CompareOptions
from .pipeline import verify, verify_batch

__all__ = ["CompareOptions", "Verdict", "exact_number", "gold_answer", "verify", "verify_batch"]


def __getattr__(name: str) -> Any:
    # The names the flat module referee.verifiers.math had before it became this package, for one release.
    if not name.startswith("__"):
        from . import pipeline

        if hasattr(pipeline, name):
            return getattr(pipeline, name)
    raise AttributeError(f"module 'referee.verifiers.math' has no attribute {name!r}")
