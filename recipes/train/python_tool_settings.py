"""The ``python_tool`` block of a recipe: give the model a sandboxed Python interpreter while it trains.

``python_tool: {timeout: 5, max_calls: 8}`` makes ``referee train`` pass
``environment_factory=PythonTool.factory(...)`` to the trainer (:mod:`referee.rewards.tools`): one
interpreter per rollout, one tool (``python(code)``), each tool turn's cells run at once
(:mod:`referee.recipes.train.tool_calls`). TRL's ``max_tool_calling_iterations`` caps the tool turns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from referee.rewards.tools import DEFAULT_MAX_CALLS, PythonTool
from referee.verifiers.sandbox import CellLimits

from ..common.mappings import from_mapping


@dataclass(frozen=True)
class PythonToolSettings:
    """Each cell's limits (:class:`referee.verifiers.sandbox.CellLimits`), the rollout's call budget
    and the sandbox level (``auto``: the strongest this machine has).

    Example:
        >>> settings = python_tool_settings({"timeout": 3, "max_calls": 4})
        >>> settings.limits().timeout, settings.max_calls, settings.isolation
        (3, 4, 'auto')
        >>> python_tool_settings({"timout": 3})
        Traceback (most recent call last):
        ...
        ValueError: python_tool has no key 'timout'; did you mean 'timeout'? Its keys: timeout, cpu_seconds, memory_mb, output_chars, processes, max_calls, isolation.
    """

    timeout: float = 5.0
    cpu_seconds: float = 5.0
    memory_mb: int = 1024
    output_chars: int = 4000
    processes: int = 16
    max_calls: int = DEFAULT_MAX_CALLS
    isolation: str = "auto"

    def limits(self) -> CellLimits:
        """The cells' limits (a ``ValueError`` names a bad one)."""
        return CellLimits(timeout=self.timeout, cpu_seconds=self.cpu_seconds, memory_mb=self.memory_mb,
                          output_chars=self.output_chars, processes=self.processes)

    def factory(self) -> Callable[[], PythonTool]:
        """The trainer's ``environment_factory``: checks the limits and the sandbox level now, not mid-run."""
        PythonTool(self.limits(), isolation=self.isolation, max_calls=self.max_calls)._close()
        return PythonTool.factory(self.limits(), isolation=self.isolation, max_calls=self.max_calls)


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
    settings = from_mapping(PythonToolSettings, values, "python_tool")
    try:
        settings.limits()
    except ValueError as exc:
        raise ValueError(f"python_tool: {exc}") from None
    if isinstance(settings.max_calls, bool) or not isinstance(settings.max_calls, int) or settings.max_calls < 1:
        raise ValueError(f"python_tool: max_calls={settings.max_calls!r} must be a whole number >= 1")
    return settings
