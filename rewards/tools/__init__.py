"""Training with tools: :class:`PythonTool`, a sandboxed Python interpreter as a TRL environment, and
:class:`ToolUseReward` (``tool_use``), a shaping reward for calling it paid only beside a right answer.

The sandbox is imported when :class:`PythonTool` is first used, so rewards load without it.

Example:
    >>> from referee.rewards.tools import PythonTool
    >>> PythonTool(isolation="basic", allow_weak_isolation=True).python("sum(range(10))")
    '45'
"""

from typing import Any

from .tool_use import ToolUseReward, tool_calls

__all__ = ["DEFAULT_MAX_CALLS", "PythonTool", "ToolUseReward", "tool_calls"]


def __getattr__(name: str) -> Any:
    if name in ("PythonTool", "DEFAULT_MAX_CALLS"):
        from . import python_tool

        return getattr(python_tool, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
