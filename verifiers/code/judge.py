"""The trusted judge: runs the dataset's test code against one program at a time, driving its
own sandbox worker.

It runs in a worker process of a :class:`~referee.verifiers.deadline_pool.DeadlinePool` (not in
the trainer's process): test code from a dataset is only semi-trusted, it can hang or crash,
so the pool enforces each task's deadline from outside and replaces a worker that misses it.
"""

from __future__ import annotations

import ast
import time
from typing import Any

from ..sandbox.isolation import isolation_of
from ..sandbox.limits import DEFAULT_TMP_MB
from ..sandbox.sandbox import KilledFromOutside, Sandbox, SandboxBroken, restart
from ..sandbox.uids import UidLease, lease_uid
from .formats import CallTests, HumanEvalTests, TestsError, count_tests, parse_tests
from .languages import toolchain_folders
from .native import judge_native, judged_natively, run_native
from .runners import run_tests
from .session import Outcome, ProgramSession


def _defines(code: str, name: str) -> bool:
    try:
        body = ast.parse(code).body
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name for node in body)


def continuing_prompt(code: str, spec: HumanEvalTests) -> str:
    """The Python program to judge: ``code`` itself when it defines the entry point, else the
    dataset's prompt followed by ``code`` when that does (a completion that writes only the body,
    as HumanEval's own evaluation puts prompt and completion together).

    Example:
        >>> spec = HumanEvalTests("check(inc)", "inc", prompt="def inc(x):\\n    'x + 1'\\n")
        >>> continuing_prompt("    return x + 1\\n", spec)
        "def inc(x):\\n    'x + 1'\\n    return x + 1\\n"
        >>> continuing_prompt("def inc(x):\\n    return x + 1\\n", spec)
        'def inc(x):\\n    return x + 1\\n'
    """
    if not spec.prompt or _defines(code, spec.entry_point) or not _defines(spec.prompt + code, spec.entry_point):
        return code
    return spec.prompt + code


def judge_program(sandbox: Sandbox, task: dict[str, Any]) -> dict[str, Any]:
    """Judge ``task`` (``code``, ``tests`` and the options) with ``sandbox``.

    Returns ``{"outcomes": [...], "jobs": n}``, or ``{"error": reason}`` when the result would
    not be the program's doing (unusable tests, a sandbox that fails, a judge bug).

    Example:
        >>> from referee.verifiers.sandbox.isolation import available_isolation
        >>> sandbox = Sandbox(available_isolation("basic"), uid=None)
        >>> task = {"code": "def f(x):\\n    return x + 1", "timeout": 2.0,
        ...         "tests": {"format": "call", "fn_name": "f", "inputs": [[1], [2]], "outputs": [2, 4]}}
        >>> [o["kind"] for o in judge_program(sandbox, task)["outcomes"]]
        ['passed', 'wrong']
        >>> judge_program(sandbox, {**task, "tests": {"format": "call"}})["error"]
        "tests['inputs'] must be a non-empty list, got NoneType."
        >>> sandbox.close()
    """
    try:
        spec = parse_tests(task["tests"])
    except TestsError as exc:
        return {"error": str(exc)}
    if judged_natively(task["tests"], task.get("language", "python")):  # another language, or a checker
        return judge_native(sandbox, task)
    program = continuing_prompt(task["code"], spec) if isinstance(spec, HumanEvalTests) else task["code"]
    options = {"timeout": float(task["timeout"]), "abs_tol": float(task.get("abs_tol", 0.0)),
               "rel_tol": float(task.get("rel_tol", 0.0))}
    retried = False
    while True:
        session = ProgramSession(sandbox, program, timeout=options["timeout"], tests=count_tests(spec),
                                 memory_mb=int(task.get("memory_mb", 1024)),
                                 output_bytes=int(task.get("output_bytes", 4 << 20)),
                                 standard_imports=isinstance(spec, CallTests), tmp_mb=sandbox.tmp_mb)
        try:
            outcomes = run_tests(session, spec, **options)
            if session.killed_from_outside is not None:
                return {"error": str(session.killed_from_outside)}
            return {"outcomes": [outcome.to_dict() for outcome in outcomes], "jobs": session.jobs}
        except TestsError as exc:
            return {"error": str(exc)}
        except SandboxBroken as exc:
            cannot_restart = restart(sandbox, exc)
            if cannot_restart:
                return {"error": cannot_restart}
            if not retried:
                retried = True
                continue  # a fresh worker, and the whole program once more
            if sandbox.isolation.own_uid:  # jobs cannot touch the worker: it failed by itself
                return {"error": f"the sandbox worker failed twice on this program: {exc}"}
            failed = Outcome(False, "crashed", "the sandbox worker died twice while running this program "
                                               "(without an own uid, the program can kill it)")
            return {"outcomes": [failed.to_dict()] * count_tests(spec), "jobs": session.jobs}
        except KilledFromOutside as exc:  # the OOM killer or an operator: not the program's fault
            return {"error": str(exc)}
        except Exception as exc:  # a bug here: not the program's fault
            return {"error": f"the judge failed: {type(exc).__name__}: {exc}"}
        except BaseException as exc:  # test code that raises SystemExit and the like
            return {"error": f"the test code raised {type(exc).__name__}; fix the dataset row"}


def run_in_sandbox(sandbox: Sandbox, task: dict[str, Any]) -> dict[str, Any]:
    """Run ``task["code"]`` once on ``task["stdin"]`` with ``sandbox``, judging nothing (in
    ``task["language"]`` when it names one besides Python: :func:`~.native.run_native`).

    Returns ``{"run": {...}}`` (see :meth:`ProgramSession.run_program`), or ``{"error": reason}``
    when the sandbox failed or something outside killed the job.

    Example:
        >>> from referee.verifiers.sandbox.isolation import available_isolation
        >>> sandbox = Sandbox(available_isolation("basic"), uid=None)
        >>> run = run_in_sandbox(sandbox, {"code": "print(int(input()) * 2)", "stdin": "21\\n", "timeout": 2.0})["run"]
        >>> run["ended"], run["exit_code"], run["stdout"]
        ('finished', 0, '42\\n')
        >>> sandbox.close()
    """
    if task.get("language", "python") != "python":
        return run_native(sandbox, task)
    failures = 0
    while True:  # a worker found broken (by an earlier job) is restarted, and the program run once more
        session = ProgramSession(sandbox, task["code"], timeout=float(task["timeout"]), tests=1,
                                 memory_mb=int(task.get("memory_mb", 1024)),
                                 output_bytes=int(task.get("output_bytes", 4 << 20)), tmp_mb=sandbox.tmp_mb)
        try:
            return {"run": session.run_program(str(task["stdin"]), time.monotonic() + float(task["timeout"]))}
        except SandboxBroken as exc:
            failures += 1
            cannot_restart = restart(sandbox, exc)
            if cannot_restart or failures == 2:
                return {"error": cannot_restart or f"the sandbox worker failed twice while running this program: {exc}"}
        except KilledFromOutside as exc:
            return {"error": str(exc)}
        except Exception as exc:  # a bug here: not the program's fault
            return {"error": f"the judge failed: {type(exc).__name__}: {exc}"}
        finally:
            session.close()


_SANDBOXES: dict[tuple[str, str | None], Sandbox] = {}
_LEASES: dict[str, UidLease] = {}


def judge_task(task: dict[str, Any]) -> dict[str, Any]:
    """Judge one task in this judge worker, with this worker's sandbox for ``task["isolation"]``
    (a task with ``stdin`` and no tests is only run: :func:`run_in_sandbox`).

    The sandbox (and, when jobs get their own uid, the uid lease) is made on the first task
    and kept for the worker's life; the pool kills the worker when a task overruns its budget,
    and the sandbox dies with it.

    Example:
        >>> task = {"code": "def f():\\n    return 1", "timeout": 2.0, "isolation": "basic",
        ...         "tests": {"format": "call", "fn_name": "f", "inputs": [[]], "outputs": [1]}}
        >>> judge_task(task)["outcomes"][0]["kind"]
        'passed'
        >>> close_sandboxes()
    """
    level, tmp_mb = task["isolation"], int(task.get("tmp_mb", DEFAULT_TMP_MB))
    key = (level, task.get("sandbox"))  # the level, and what makes its namespaces (bubblewrap or referee's own)
    sandbox = _SANDBOXES.get(key)
    if sandbox is not None and sandbox.tmp_mb != tmp_mb:  # its private /tmp has another size: a new worker
        sandbox.close()
        del _SANDBOXES[key]
        sandbox = None
    if sandbox is None:
        isolation = isolation_of(level, task.get("sandbox"))
        if isolation.own_uid and level not in _LEASES:
            try:
                _LEASES[level] = lease_uid()
            except RuntimeError as exc:
                return {"error": f"the code sandbox cannot start: {exc}"}
        sandbox = Sandbox(isolation, uid=_LEASES[level].uid if level in _LEASES else None, tmp_mb=tmp_mb,
                          read_only=toolchain_folders())  # the compilers' folders outside the system's
        try:
            sandbox.start()
        except SandboxBroken as exc:
            return {"error": f"the code sandbox cannot start: {exc}"}
        _SANDBOXES[key] = sandbox
    return run_in_sandbox(sandbox, task) if "stdin" in task else judge_program(sandbox, task)


def close_sandboxes() -> None:
    """Stop this process's sandboxes and give their uids back (a worker's exit does it too).

    Example:
        >>> close_sandboxes(); _SANDBOXES
        {}
    """
    for sandbox in _SANDBOXES.values():
        sandbox.close()
    _SANDBOXES.clear()
    for lease in _LEASES.values():
        lease.release()
    _LEASES.clear()
