"""Find a verifier module by its short name (used by the CLI and the reward functions)."""

from __future__ import annotations

import importlib
from types import ModuleType

# name -> (module path, the dataset column that usually holds its gold).
# Each module exposes verify() and verify_batch().
_VERIFIERS: dict[str, tuple[str, str]] = {
    "gsm8k": ("referee.verifiers.gsm8k", "answer"),
    "math": ("referee.verifiers.math", "answer"),
    "code": ("referee.verifiers.code", "tests"),
}

VERIFIER_NAMES: tuple[str, ...] = tuple(_VERIFIERS)


def get_verifier(name: str) -> ModuleType:
    """The verifier module called ``name``.

    Example:
        >>> get_verifier("gsm8k").verify("#### 18", 18).status
        'correct'
    """
    try:
        return importlib.import_module(_VERIFIERS[name][0])
    except KeyError:
        raise ValueError(f"Unknown verifier {name!r}; choose one of {', '.join(_VERIFIERS)}.") from None


def default_gold_field(name: str) -> str:
    """The dataset column that usually holds ``name``'s gold.

    Example:
        >>> default_gold_field("gsm8k")
        'answer'
    """
    return _VERIFIERS[name][1]
