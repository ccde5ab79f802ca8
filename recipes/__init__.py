"""referee.recipes: the GRPO recipe layer and the ``referee`` command line.

Importing this package never imports torch or TRL; the training pieces load on first use.
"""

from importlib import import_module
from typing import Any

# Public training classes, imported on first access so `import referee.recipes` stays light.
_LAZY_EXPORTS = {
    "RefereeGRPOConfig": "referee.recipes.config",
    "RefereeGRPOTrainer": "referee.recipes.trainer",
    "DiagnosticsCallback": "referee.recipes.diagnostics",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY_EXPORTS:
        return getattr(import_module(_LAZY_EXPORTS[name]), name)
    raise AttributeError(f"module 'referee.recipes' has no attribute {name!r}")
