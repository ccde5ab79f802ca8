"""The ``python_tool`` block of a recipe: give the model a sandboxed Python interpreter while it trains.

``python_tool: {timeout: 5, max_calls: 8}`` makes ``referee train`` pass
``environment_factory=PythonTool.factory(...)`` to the trainer (:mod:`referee.rewards.tools`): one
interpreter per rollout, one tool (``python(code)``), each tool turn's cells run at once
(:mod:`referee.recipes.train.tool_calls`). TRL's ``max_tool_calling_iterations`` caps the tool turns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from referee.rewards.tools import DEFAULT_MAX_CALLS, PythonTool
from referee.verifiers.sandbox import CellLimits

from ..common.mappings import refuse_unknown_keys

TOOL_KEYS = ("max_calls", "isolation")


@dataclass(frozen=True)
class PythonToolSettings:
    """Each cell's limits (:class:`referee.verifiers.sandbox.CellLimits`: its keys are the block's
    too), the rollout's call budget and the sandbox level (``auto``: the strongest this machine has).

    Example:
        >>> settings = python_tool_settings({"timeout": 3, "max_calls": 4})
        >>> settings.limits.timeout, settings.max_calls, settings.isolation
        (3, 4, 'auto')
        >>> python_tool_settings({"timout": 3})
        Traceback (most recent call last):
        ...
        ValueError: python_tool has no key 'timout'; did you mean 'timeout'? Its keys: timeout, cpu_seconds, memory_mb, output_chars, processes, tmp_mb, max_calls, isolation.
    """

    limits: CellLimits = field(default_factory=CellLimits)
    max_calls: int = DEFAULT_MAX_CALLS
    isolation: str = "auto"

    def factory(self) -> Callable[[], PythonTool]:
        """The trainer's ``environment_factory``: checks the sandbox level now, not mid-run."""
        PythonTool(self.limits, isolation=self.isolation, max_calls=self.max_calls)._close()
        return PythonTool.factory(self.limits, isolation=self.isolation, max_calls=self.max_calls)


def python_tool_settings(values: Any) -> PythonToolSettings:
    """The settings of a recipe's ``python_tool`` mapping (``{}``: the defaults); unknown keys and bad
    limits are refused in one line.

    Example:
        >>> python_tool_settings({}).max_calls
        8
        >>> python_tool_settings({"memory_mb": 0})
        Traceback (most recent call last):
        ...
        ValueError: python_tool: CellLimits(memory_mb=0) must be a positive integer
    """
    limit_keys = [item.name for item in fields(CellLimits)]
    refuse_unknown_keys(values, [*limit_keys, *TOOL_KEYS], "python_tool")
    try:
        limits = CellLimits(**{key: values[key] for key in limit_keys if key in values})
    except ValueError as exc:
        raise ValueError(f"python_tool: {exc}") from None
    max_calls = values.get("max_calls", DEFAULT_MAX_CALLS)
    if isinstance(max_calls, bool) or not isinstance(max_calls, int) or max_calls < 1:
        raise ValueError(f"python_tool: max_calls={max_calls!r} must be a whole number >= 1")
    return PythonToolSettings(limits, max_calls, values.get("isolation", "auto"))
