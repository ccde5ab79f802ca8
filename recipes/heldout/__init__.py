"""Held-out evaluation: pass@k (unbiased), maj@k with answers grouped by the verifier's equivalence,
``referee eval`` and the ``EvalCallback`` that evaluates during training.

Example:
    >>> from referee.recipes.heldout import pass_at_k
    >>> pass_at_k(4, 1, 2)
    0.5
"""

from .config import EvalConfig
from .metrics import bootstrap_interval, majority_at_k, pass_at_k
from .run import merge_evals, run_eval

__all__ = ["EvalConfig", "bootstrap_interval", "majority_at_k", "merge_evals", "pass_at_k", "run_eval"]
