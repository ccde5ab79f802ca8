"""``referee demo``: GRPO that visibly learns, on a CPU, in a few minutes, with nothing downloaded.

``run`` runs it (:func:`run_demo`, :class:`DemoSettings`); ``arithmetic`` makes the sums it
trains on, ``warm_start`` teaches the answer format first, ``evaluation`` measures greedy
accuracy and ``reward_curve`` plots the result. ``run_demo`` and ``DemoSettings`` load on first
use, so ``referee.recipes.demo.arithmetic`` never imports transformers.
"""

from importlib import import_module
from typing import Any

_LAZY_EXPORTS = {name: "referee.recipes.demo.run" for name in ("DEMO_REWARDS", "DemoSettings", "run_demo")}

__all__ = sorted(_LAZY_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _LAZY_EXPORTS:
        return getattr(import_module(_LAZY_EXPORTS[name]), name)
    raise AttributeError(f"module 'referee.recipes.demo' has no attribute {name!r}")
