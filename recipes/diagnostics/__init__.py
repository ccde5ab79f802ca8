"""Watch a GRPO run: ``monitor`` decides from logged metrics which failure causes show (pure
Python), ``callback`` feeds it from a TRL trainer (``DiagnosticsCallback``).

The callback's names load on first use, so ``referee.recipes.diagnostics.monitor`` never
imports transformers. Warnings go to the logger ``referee.recipes.diagnostics``.
"""

from importlib import import_module
from typing import Any

_LAZY_EXPORTS = {name: "referee.recipes.diagnostics.callback" for name in ("DiagnosticsCallback", "SAMPLES_FILE",
                                                                           "sample_rows")}

__all__ = sorted(_LAZY_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _LAZY_EXPORTS:
        return getattr(import_module(_LAZY_EXPORTS[name]), name)
    raise AttributeError(f"module 'referee.recipes.diagnostics' has no attribute {name!r}")
