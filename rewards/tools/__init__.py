"""Tools a model calls mid-solution, as TRL environments: :class:`PythonTool`, a sandboxed Python interpreter.

Example:
    >>> from referee.rewards.tools import PythonTool
    >>> PythonTool(isolation="basic", allow_weak_isolation=True).python("sum(range(10))")
    '45'
"""

from .python_tool import DEFAULT_MAX_CALLS, PythonTool

__all__ = ["DEFAULT_MAX_CALLS", "PythonTool"]
