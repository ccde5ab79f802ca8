"""Built-in rewards by name, and rewards named by ``module:attr`` paths (the CLI and YAML recipes)."""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType
from typing import Any

from .protocol import RewardFunction
from .soft_overlong import SoftOverlong
from .tools.tool_use import ToolUseReward
from .verdict_rewards import FormatReward, VerifierReward


# name -> (class, default options). Options given to get_reward() override the defaults.
_REWARDS: dict[str, tuple[type, dict[str, Any]]] = {
    "gsm8k_accuracy": (VerifierReward, {"verifier": "gsm8k", "gold_column": "answer"}),
    "math_accuracy": (VerifierReward, {"verifier": "math", "gold_column": ("answer", "solution")}),
    "code_pass_rate": (VerifierReward, {"verifier": "code", "gold_column": "tests"}),
    "code_all_pass": (VerifierReward, {"verifier": "code", "gold_column": "tests", "all_or_nothing": True}),
    "think_format": (FormatReward, {"check": "think"}),
    "answer_format": (FormatReward, {"check": "answer_tags"}),
    "tag_count": (FormatReward, {"check": "tag_counts"}),
    "gsm8k_format": (FormatReward, {"check": "answer_line"}),
    "code_format": (FormatReward, {"check": "code_block"}),
    "regex_format": (FormatReward, {"check": "regex"}),
    "soft_overlong": (SoftOverlong, {}),
    "tool_use": (ToolUseReward, {}),
}

REWARD_NAMES: tuple[str, ...] = tuple(_REWARDS)


def get_reward(name: str, /, **options: Any) -> RewardFunction:
    """A built-in reward function, its options set (``name=`` renames it for TRL's metrics).

    ``gsm8k_accuracy``, ``math_accuracy`` (gold in ``answer``, else ``solution``),
    ``code_pass_rate`` (share of tests passed) and ``code_all_pass`` (gold in ``tests``) check
    correctness; ``think_format``, ``answer_format``, ``tag_count``, ``gsm8k_format`` (one
    ``#### N`` line), ``code_format``, ``regex_format`` (needs ``pattern=``) and
    ``soft_overlong`` (needs ``max_length=``) shape; ``tool_use`` pays a right answer found with the
    Python tool (:class:`referee.rewards.tools.ToolUseReward`).

    Example:
        >>> get_reward("gsm8k_accuracy")(completions=["#### 18"], answer=["18"])
        [1.0]
        >>> get_reward("gsm8k_accuracy", mode="strict", name="gsm8k_strict").__name__
        'gsm8k_strict'
        >>> get_reward("soft_overlong", max_length=512)
        SoftOverlong(max_length=512, buffer=102, name='soft_overlong')
    """
    try:
        cls, defaults = _REWARDS[name]
    except KeyError:
        raise ValueError(f"Unknown reward {name!r}; choose one of {', '.join(_REWARDS)} or give a module:attr path.") from None
    settings = {**defaults, **options}
    settings.setdefault("name", name)
    try:
        return cls(**settings)
    except TypeError as exc:
        raise ValueError(f"Bad option for reward {name!r} ({exc}).") from None


def resolve_reward(spec: str, /, **options: Any) -> RewardFunction:
    """A reward from a built-in name or a ``module:attr`` path (an attribute that is a reward function).

    With options, a ``module:attr`` attribute is called with them to build the reward. A
    module not found on ``sys.path`` is looked for in the current directory too (as
    ``python -m`` does), so ``my_rewards:accuracy`` works from a project folder.

    Example:
        >>> resolve_reward("gsm8k_format").__name__
        'gsm8k_format'
        >>> resolve_reward("referee.rewards:SoftOverlong", max_length=64, name="overlong_64").__name__
        'overlong_64'
    """
    if ":" not in spec:
        return get_reward(spec, **options)
    module_name, _, attr = spec.partition(":")
    try:
        module = _import_from_here(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name + ".").startswith(exc.name + "."):  # the reward's own module, not an import of it
            raise ValueError(f"Cannot load reward {spec!r}: no module {exc.name!r} in the current folder "
                             f"({os.getcwd()}) or on PYTHONPATH; run from the folder that holds "
                             f"{module_name.replace('.', '/')}.py, or add that folder to PYTHONPATH.") from None
        raise ValueError(f"Cannot load reward {spec!r}: its module imports {exc.name!r}, which is not installed "
                         f"({exc}).") from None
    except ImportError as exc:
        raise ValueError(f"Cannot load reward {spec!r} ({exc}).") from None
    if not hasattr(module, attr):
        raise ValueError(f"Cannot load reward {spec!r}: module {module_name!r} has no attribute {attr!r}; write it as "
                         "module:attribute, the attribute being the reward function.")
    target = getattr(module, attr)
    if options:
        target = target(**options)
    if not callable(target):
        raise ValueError(f"{spec!r} is a {type(target).__name__}, not a reward function.")
    return target


def _import_from_here(module_name: str) -> ModuleType:
    """Import ``module_name``; if its top package is not found, retry with the current directory on ``sys.path``."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        here = os.getcwd()
        if exc.name != module_name.split(".")[0] or here in sys.path:
            raise
        sys.path.insert(0, here)
        return importlib.import_module(module_name)
