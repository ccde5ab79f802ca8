"""A sandboxed Python interpreter as a TRL environment: ``GRPOTrainer(environment_factory=PythonTool)``.

TRL 1.16's ``environment_factory`` makes one environment per rollout (pooled and reused across
batches), calls ``reset(**row)`` before each generation, and offers every public method of the
environment to the model as a tool. :class:`PythonTool` has exactly one such method,
:meth:`PythonTool.python`, which runs a cell in a :class:`referee.verifiers.sandbox.PythonSession`:
referee's code sandbox at its isolation level, variables kept between the rollout's cells like a
notebook, per-cell wall-clock, CPU and memory limits, an output cap with a visible marker and a
per-rollout call budget. Whatever a cell does comes back as text for the model (the traceback's
last lines, why it was stopped); nothing raises into TRL, and nothing survives ``reset``.

The tool's output never decides a reward: referee's rewards read the last assistant message only
(:func:`referee.rewards.completion_text`), so an answer that only a cell printed earns nothing.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable
from typing import Any

from referee.verifiers.sandbox import CellLimits, CellResult, PythonSession

DEFAULT_MAX_CALLS = 8


class PythonTool:
    """One rollout's Python interpreter, for TRL's ``environment_factory``.

    Args:
        limits: each cell's limits (:class:`referee.verifiers.sandbox.CellLimits`: wall clock, CPU,
            memory, output characters, processes, files).
        isolation: the sandbox level (``"auto"``: the strongest this machine has), as for
            :class:`referee.verifiers.sandbox.PythonSession`; a level where code could reach the
            trainer is refused unless ``allow_weak_isolation=True`` names it.
        allow_weak_isolation: accept such a level when it is named.
        max_calls: cells a rollout may run; past it each call answers that the budget is spent.

    The sandbox worker starts on the rollout's first cell and is kept (not its variables) across
    ``reset``. :meth:`factory` gives a picklable ``environment_factory`` with these settings.
    ``results`` holds this rollout's :class:`referee.verifiers.sandbox.CellResult` in call order
    (read by :mod:`referee.recipes` for its ``tools/*`` metrics).

    Example:
        >>> tool = PythonTool(isolation="basic", allow_weak_isolation=True)
        >>> tool.reset(prompt="What is 2**100 mod 7?")
        >>> tool.python("x = 2 ** 100")
        '(no output)'
        >>> tool.python("x % 7")
        '2'
        >>> tool.reset(prompt="next rollout")
        >>> tool.python("x").splitlines()[-1]
        "NameError: name 'x' is not defined"
    """

    def __init__(self, limits: CellLimits | None = None, *, isolation: str = "auto",
                 allow_weak_isolation: bool = False, max_calls: int | None = DEFAULT_MAX_CALLS) -> None:
        self._settings: dict[str, Any] = {"limits": limits, "isolation": isolation,
                                          "allow_weak_isolation": allow_weak_isolation, "max_calls": max_calls}
        self._session = PythonSession(limits, isolation=isolation, allow_weak_isolation=allow_weak_isolation,
                                      max_calls=max_calls)
        self.results: list[CellResult] = []
        self._ready: deque[tuple[str, CellResult]] = deque()  # cells run ahead by the trainer, in call order

    @classmethod
    def factory(cls, limits: CellLimits | None = None, *, isolation: str = "auto", allow_weak_isolation: bool = False,
                max_calls: int | None = DEFAULT_MAX_CALLS) -> Callable[[], PythonTool]:
        """An ``environment_factory`` making tools with these settings (a picklable ``functools.partial``).

        Example:
            >>> make = PythonTool.factory(CellLimits(timeout=2.0), isolation="basic", allow_weak_isolation=True)
            >>> make().python("print('hi')")
            'hi'
        """
        return functools.partial(cls, limits, isolation=isolation, allow_weak_isolation=allow_weak_isolation,
                                 max_calls=max_calls)

    def reset(self, **row: Any) -> None:
        """Start the rollout of ``row`` with a fresh namespace and call budget (the row is not read).

        Example:
            >>> tool = PythonTool(isolation="basic", allow_weak_isolation=True, max_calls=1)
            >>> tool.python("1"), tool.python("2")[:26]
            ('1', '[the call budget of 1 call')
            >>> tool.reset(); tool.python("2")
            '2'
        """
        self._session.reset()
        self.results = []
        self._ready.clear()

    def python(self, code: str) -> str:
        """Run Python code in a persistent interpreter and return its output.

        Variables, functions and imports persist between calls, like cells of a notebook. The
        value of a final expression is shown, as in a notebook; errors come back as the last lines
        of the traceback. There is no network, and each call has a time limit.

        Args:
            code: The Python source to run.

        Returns:
            What the code printed, the value of its final expression, or the error.
        """
        result = self._take_ready(code)
        if result is None:
            result = self._session.run(code)
        self.results.append(result)
        return result.text

    def _run_ahead(self, codes: list[str]) -> None:
        """Run ``codes`` now, in order, for :meth:`python` to hand out when TRL calls it with the same code.

        The trainer calls this from a worker thread for all rollouts of a tool turn at once; TRL's own
        loop then calls :meth:`python` one rollout after another and gets these results, so the
        session sees the same cells in the same order as without it.
        """
        for code in codes:
            self._ready.append((code, self._session.run(code)))

    def _take_ready(self, code: str) -> CellResult | None:
        if not self._ready:
            return None
        expected, result = self._ready.popleft()
        if expected != code:  # never expected (the trainer runs ahead the calls TRL makes): stay exact
            raise RuntimeError("PythonTool: a call ran ahead was not the call TRL made; report this as a bug")
        return result

    def _close(self) -> None:
        """End the sandbox worker (also done at interpreter exit)."""
        self._session.close()

    def __getstate__(self) -> dict[str, Any]:
        return {"settings": self._settings}  # a session's process does not travel: a copy starts its own

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state["settings"])  # type: ignore[misc]
