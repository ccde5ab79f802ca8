"""``run_program``: run a program once in the sandbox and report how it ended, judging nothing.

For callers that judge the output themselves, such as verl's Sandbox Fusion path through
``referee serve``'s ``POST /run_code``. The program gets the same isolation, limits and
cleanup as a judged one; its exit code and stderr are reported, never trusted for anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..sandbox.limits import DEFAULT_TMP_MB
from .grading import check_options, judge_budget, run_judges, sandbox_mechanism
from .languages import LANGUAGES, language_of_tag
from .builds import COMPILE_SECONDS

Ended = Literal["finished", "timeout", "memory", "output", "crashed", "exited", "compile_error", "error"]


@dataclass(frozen=True)
class ProgramRun:
    """How one run ended: ``finished`` (with its ``exit_code``), ``timeout``, ``memory``,
    ``output`` (printed or stored too much), ``crashed`` (a signal), ``compile_error`` (the
    compiler's first lines in ``stderr``), or ``error`` when the run
    says nothing about the program (a sandbox that failed, a kill from outside, bad options).

    Example:
        >>> ProgramRun("finished", 0, "42\\n", "", 0.01, "exited with code 0").ok
        True
    """

    ended: Ended
    exit_code: int | None
    stdout: str
    stderr: str
    seconds: float
    reason: str

    @property
    def ok(self) -> bool:
        """Finished with exit code 0."""
        return self.ended == "finished" and self.exit_code == 0


def run_program(
    code: str,
    *,
    stdin: str = "",
    timeout: float = 10.0,
    memory_mb: int = 1024,
    max_output_bytes: int = 4 << 20,
    tmp_mb: int = DEFAULT_TMP_MB,
    workers: int | None = None,
    isolation: str = "auto",
    allow_weak_isolation: bool = False,
    min_isolation: str | None = None,
    language: str = "python",
) -> ProgramRun:
    """Run ``code`` as ``__main__`` on ``stdin`` in the code verifier's sandbox pool.

    The options mean what they mean for :func:`referee.verifiers.code.verify_batch`
    (``timeout`` is wall-clock seconds for the whole run). ``language`` is any language of
    :mod:`.languages` (or a fence tag of one: ``c++``, ``nodejs``): a compiled program is built
    first (a ``compile_error`` when it does not build) and its run's ``timeout`` is CPU seconds
    (at most 60), with a wall-clock guard, as for judged programs.

    Example:
        >>> run = run_program("import sys\\nprint(int(input()) * 2)\\nsys.exit(3)", stdin="21\\n")
        >>> run.ended, run.exit_code, run.stdout
        ('finished', 3, '42\\n')
        >>> run_program("while True:\\n    pass", timeout=0.5).ended
        'timeout'
    """
    if not isinstance(code, str) or not isinstance(stdin, str):
        return _error(f"code and stdin must be str, got {type(code).__name__} and {type(stdin).__name__}")
    problem, level = check_options(timeout, memory_mb, max_output_bytes, tmp_mb, workers, isolation,
                                   allow_weak_isolation=allow_weak_isolation, min_isolation=min_isolation)
    if problem is not None:
        return _error(problem)
    name = language_of_tag(language) if isinstance(language, str) else None
    if name is None:
        return _error(f"language {language!r} is not one I run; use one of {', '.join(LANGUAGES)}")
    task: dict[str, Any] = {"code": code, "stdin": stdin, "timeout": float(timeout), "memory_mb": memory_mb,
                            "output_bytes": max_output_bytes, "tmp_mb": tmp_mb, "isolation": level,
                            "sandbox": sandbox_mechanism(isolation, allow_weak_isolation), "language": name}
    budget = judge_budget(float(timeout), 1) if name == "python" else 2 * (COMPILE_SECONDS + 3 * min(timeout, 60.0) + 2) + 10
    [outcome] = run_judges([task], budget, workers)
    if outcome.status != "ok":
        return _error(f"the sandbox's worker failed: {outcome.status}: {outcome.message}")
    if "error" in outcome.value:
        return _error(outcome.value["error"])
    run = outcome.value["run"]
    return ProgramRun(run["ended"], run["exit_code"], run["stdout"], run["stderr"], run["seconds"], run["reason"])


def _error(reason: str) -> ProgramRun:
    return ProgramRun("error", None, "", "", 0.0, reason)
