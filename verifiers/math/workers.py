"""The maths worker pool: what its processes preload and warm up, and the pool every batch shares.

It imports neither the sympy side (the workers do) nor the caller's reading pipeline, so that
:func:`referee.verifiers.math.verify_batch` can start the pool before it loads the pipeline: the
template's imports then overlap the caller's.
"""

from __future__ import annotations

from typing import Any

from ..deadline_pool import DeadlinePool, shared_pool

# The template switches the LaTeX parser to two-stage parsing and gives it the shipped prediction
# tables before it forks a worker, then warms up step by step while idle.
PRELOAD = ("referee.verifiers.math.sympy_worker:prepare", "referee.verifiers.math.parser_tables:install")
WARM_UP = "referee.verifiers.math.sympy_worker:warm_up_steps"


def maths_pool(workers: int | None) -> DeadlinePool:
    """The shared pool of ``workers`` maths workers (``None``: one per core).

    Example:
        >>> maths_pool(1) is maths_pool(1)
        True
    """
    return shared_pool(workers, preload=PRELOAD, warm_up=WARM_UP)


def start_early(workers: Any) -> None:
    """Start the pool's template in the background, when ``workers`` is a count the pool takes.

    Anything else is left to the caller's own checks, which turn it into a clear verdict.

    Example:
        >>> start_early("two")  # not a count: nothing starts, nothing raises
    """
    if workers is None or isinstance(workers, int) and not isinstance(workers, bool) and workers > 0:
        maths_pool(workers).start()
