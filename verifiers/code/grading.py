"""``verify`` and ``verify_batch``: grade completions' programs against unit tests, in the sandbox."""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from typing import Any

from ..deadline_pool import DeadlinePool, Outcome, shared_pool
from ..registry import moved_backend_keyword
from ..verdict import Verdict
from ..sandbox.confine import LAYER_NAME as CONFINEMENT
from ..sandbox.isolation import LEVELS, Isolation, below, confined, isolation_of, resolve_isolation
from ..sandbox.limits import DEFAULT_TMP_MB
from .choose_program import extract_program
from .formats import TestsError, count_tests, parse_tests
from .judge import judge_task
from .native import judged_natively, native_budget, tests_language

# Seconds a judge worker may need, on its first task, to start its sandbox (namespaces, imports).
_SANDBOX_START_SECONDS = 30.0
# The longest timeout a test may have: past ~1e9 s the kernel's and Python's clocks overflow.
MAX_TIMEOUT = 86400.0


def judge_pool(workers: int | None = None) -> DeadlinePool:
    """The shared pool of judge workers (each drives one sandbox worker), created on first use.

    Example:
        >>> judge_pool(1) is judge_pool(1)
        True
    """
    return shared_pool(workers, preload=("referee.verifiers.code.judge",), memory_limit_mb=None)


@functools.lru_cache(maxsize=8)
def _isolation(requested: str, allow_weak: bool) -> Isolation:
    return resolve_isolation(requested, allow_weak=allow_weak)


def run_judges(tasks: list[dict[str, Any]], budget: float, workers: int | None,
               batch_timeout: float | None = None) -> list[Outcome]:
    """Each task through :func:`judge_task` in the judge pool, ``budget`` seconds each (plus a
    sandbox's start); the tasks of a judge worker that died are tried once more on its replacement.

    Example:
        >>> task = {"code": "print(1)", "stdin": "", "timeout": 2.0, "isolation": "basic"}
        >>> run_judges([task], judge_budget(2.0, 1), workers=1)[0].value["run"]["stdout"]
        '1\\n'
    """
    pool, budget = judge_pool(workers), budget + _SANDBOX_START_SECONDS
    ends = None if batch_timeout is None else time.monotonic() + batch_timeout
    outcomes = pool.run(judge_task, [(task,) for task in tasks], timeout=budget, total_timeout=batch_timeout)
    crashed = [i for i, outcome in enumerate(outcomes) if outcome.status == "crashed"]
    if crashed and (ends is None or time.monotonic() < ends):
        left = None if ends is None else max(1e-3, ends - time.monotonic())
        for i, outcome in zip(crashed, pool.run(judge_task, [(tasks[i],) for i in crashed], timeout=budget,
                                                total_timeout=left)):
            outcomes[i] = outcome
    return outcomes


def check_options(timeout: Any, memory_mb: Any, max_output_bytes: Any, tmp_mb: Any, workers: Any,
                  isolation: str, abs_tol: Any = 0.0, rel_tol: Any = 0.0, *, allow_weak_isolation: bool = False,
                  min_isolation: str | None = None) -> tuple[str | None, str]:
    """(what is wrong with these options or ``None``, the isolation level they resolve to).

    Example:
        >>> check_options(3.0, 1024, 1 << 20, 64, None, "basic", allow_weak_isolation=True)
        (None, 'basic')
        >>> check_options(3.0, 1024, 1 << 20, 64, None, "basic", allow_weak_isolation=True, min_isolation="uid")[0]
        "isolation 'basic' is below min_isolation='uid'; ..."
        >>> check_options(0, 1024, 1 << 20, 64, None, "full")[0]
        'timeout=0 must be a finite number of seconds above 0'
        >>> check_options(1e10, 1024, 1 << 20, 64, None, "full")[0]
        "timeout=10000000000.0 is over a day (86400 s), more than the sandbox's clocks are meant to hold; give the seconds one test may run, e.g. 3"
    """
    problem = _bad_options(timeout, memory_mb, max_output_bytes, abs_tol, rel_tol, workers, tmp_mb)
    if problem is None and min_isolation is not None and min_isolation not in LEVELS:
        problem = f"min_isolation={min_isolation!r} is not a level; use one of {', '.join(LEVELS)} (or None)"
    if problem is not None:
        return problem, isolation
    try:
        level = _isolation(isolation, bool(allow_weak_isolation)).level
    except ValueError as exc:
        return str(exc), isolation
    if below(level, min_isolation):
        return (f"isolation {level!r} is below min_isolation={min_isolation!r}; run as root where namespaces can "
                "be made (bubblewrap, or user namespaces allowed) for 'full' (referee doctor says what is missing)"), level
    return None, level


def sandbox_mechanism(isolation: str, allow_weak_isolation: bool) -> str:
    """What makes the namespaces of the level ``isolation`` resolves to (``"bubblewrap"``,
    ``"own namespaces"``, or ``""``), for the judge workers to start the same sandbox; call it
    once :func:`check_options` accepted the options.

    Example:
        >>> sandbox_mechanism("basic", True)
        ''
    """
    return _isolation(isolation, bool(allow_weak_isolation)).mechanism


def judge_budget(timeout: float, tests: int) -> float:
    """Seconds the pool waits for a judge before replacing it: every test timing out and
    reloading the program, twice (a worker restart), plus cleanups and a margin.

    Example:
        >>> judge_budget(3.0, 1)
        32.0
    """
    return 2 * (timeout * (2 * tests + 1) + 1.0 * (tests + 1)) + 10.0


def _bad_options(timeout: Any, memory_mb: Any, max_output_bytes: Any, abs_tol: Any, rel_tol: Any,
                 workers: Any, tmp_mb: Any = DEFAULT_TMP_MB) -> str | None:
    numbers = {"timeout": timeout, "abs_tol": abs_tol, "rel_tol": rel_tol}
    for name, value in numbers.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != value:
            return f"{name}={value!r} must be a non-negative number"
    if timeout <= 0 or timeout == float("inf"):
        return f"timeout={timeout!r} must be a finite number of seconds above 0"
    if timeout > MAX_TIMEOUT:
        return (f"timeout={timeout!r} is over a day ({MAX_TIMEOUT:g} s), more than the sandbox's clocks are "
                "meant to hold; give the seconds one test may run, e.g. 3")
    integers = {"memory_mb": memory_mb, "max_output_bytes": max_output_bytes, "tmp_mb": tmp_mb}
    if workers is not None:
        integers["workers"] = workers
    for name, value in integers.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return f"{name}={value!r} must be a positive integer"
    return None


@functools.lru_cache(maxsize=None)
def _confinement_of(level: str) -> str | None:
    """The confinement layer jobs at ``level`` take here, named as verdicts say it (``None``: none)."""
    return CONFINEMENT if confined(isolation_of(level)) else None


def _verdict(code: str, result: dict[str, Any], level: str) -> Verdict:
    if "error" in result:
        return Verdict("error", 0.0, extracted=code, reason=result["error"], details={"isolation": level})
    outcomes = result["outcomes"]
    passed, total = sum(1 for o in outcomes if o["passed"]), len(outcomes)
    details = {"passed": passed, "total": total, "tests": outcomes, "isolation": level,
               "confinement": _confinement_of(level), "jobs": result["jobs"],
               **result.get("details", {})}
    if passed == total:
        return Verdict("correct", 1.0, extracted=code, details=details,
                       reason="the test passed" if total == 1 else f"all {total} tests passed")
    first = next(i for i, o in enumerate(outcomes) if not o["passed"])
    failure = outcomes[first]["reason"]
    reason = f"the test failed: {failure}" if total == 1 else \
        f"{passed} of {total} tests passed; test {first + 1}: {failure}"
    if passed == 0 and all(o["kind"] == "timeout" for o in outcomes):
        return Verdict("timeout", 0.0, extracted=code, reason=reason, details=details)
    score = result.get("score", passed / total)  # IOI subtasks: the share of points won
    return Verdict("wrong", score, extracted=code, reason=reason, details=details)


def verify_batch(
    completions: Sequence[Any],
    tests_list: Sequence[Any],
    *,
    timeout: float = 3.0,
    memory_mb: int = 1024,
    max_output_bytes: int = 4 << 20,
    tmp_mb: int = DEFAULT_TMP_MB,
    abs_tol: float = 0.0,
    rel_tol: float = 0.0,
    workers: int | None = None,
    isolation: str = "auto",
    allow_weak_isolation: bool = False,
    min_isolation: str | None = None,
    batch_timeout: float | None = None,
    backend: str = "local",
) -> list[Verdict]:
    """Judge each completion's program against its tests, ``workers`` programs at a time; order kept.

    Args:
        completions: the models' texts; the program is the last fenced Python block (a fence
            may be glued to tags, ``<answer>```python``), or the whole text when it is code;
            prose without code is ``no_answer``.
        tests_list: one tests dict per completion (see :mod:`referee.verifiers.code.formats`).
            For ``call`` tests the program runs after the standard imports APPS and
            LiveCodeBench give it (``from typing import *``, ``from collections import *``,
            ``heapq``, ...: :data:`referee.verifiers.sandbox.job.STANDARD_IMPORTS`).
        timeout: wall-clock seconds for each test (and for loading the program), at most a day.
        memory_mb: address-space limit of the program.
        max_output_bytes: the most the program may print, or return from one call.
        tmp_mb: the most the program may keep in files at once (its folder, ``/tmp``,
            ``/dev/shm``), in MiB: the size of each worker's private in-memory ``/tmp``
            (namespaces or root), else measured every 50 ms while the job runs. Past it writes
            fail (``No space left on device``) or the job is killed: the program's fault.
        abs_tol, rel_tol: tolerance for numbers in ``call`` outputs and ``stdio`` tokens (0: exact).
        workers: parallel judge and sandbox workers (default: one per core, the node's cores
            divided by ``LOCAL_WORLD_SIZE`` under ``torchrun`` / ``accelerate launch``).
        isolation: ``"auto"`` (the best this machine gives) or a level: ``full``,
            ``namespaces``, ``uid``, ``basic`` (see ``referee doctor``). It fails closed: a level
            where a job could signal your processes or read your home (``basic``; ``uid`` with a
            home others can enter) is an ``error`` for every completion, ``auto`` included, unless
            named with ``allow_weak_isolation=True``.
        allow_weak_isolation: accept such a level when it is named (a warning, once per process).
        min_isolation: the weakest level accepted (``full``, ``namespaces``, ``uid``, ``basic``);
            a weaker one is an ``error`` for every completion.
        batch_timeout: seconds the whole call may take (``None``: bounded by the per-test
            deadlines); programs unfinished by then are ``error``.
        backend: ``"local"`` (this process's pools) or ``"ray"`` (deprecated, kept for one
            release: use :func:`referee.verifiers.registry.verify_batch_on` or a reward's
            ``backend=``): the batch is judged by the Ray verifier host of the caller's node
            (``workers`` is then the host's).

    Returns:
        One Verdict per completion: ``score`` is the share of tests passed, ``correct`` means
        all; ``details["tests"]`` says how each test went and why. ``no_answer`` when there is
        no code, ``error`` (never the program's fault) for unusable tests or a failed sandbox.

    Example:
        >>> tests = {"format": "asserts", "asserts": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]}
        >>> [v.score for v in verify_batch(["```python\\ndef add(a, b):\\n    return a + b\\n```",
        ...                                 "def add(a, b):\\n    return 3", ""], [tests] * 3)]
        [1.0, 0.5, 0.0]
    """
    if len(completions) != len(tests_list):
        raise ValueError(f"verify_batch got {len(completions)} completions but {len(tests_list)} tests; "
                         "pass one tests dict per completion.")
    if backend != "local":
        return moved_backend_keyword("code", backend, completions, tests_list, locals())
    verdicts: list[Verdict | None] = [None] * len(completions)
    problem, level = check_options(timeout, memory_mb, max_output_bytes, tmp_mb, workers, isolation, abs_tol, rel_tol,
                                   allow_weak_isolation=allow_weak_isolation, min_isolation=min_isolation)
    if problem is None and batch_timeout is not None and not (
            isinstance(batch_timeout, (int, float)) and not isinstance(batch_timeout, bool) and batch_timeout > 0):
        problem = f"batch_timeout={batch_timeout!r} must be a positive number of seconds"
    if problem is not None:
        return [Verdict("error", 0.0, reason=problem, details={"isolation": level}) for _ in completions]
    tasks, budgets, where, codes = [], [], [], []
    sandbox = sandbox_mechanism(isolation, allow_weak_isolation)
    for index, (completion, tests) in enumerate(zip(completions, tests_list)):
        if not isinstance(completion, str):
            verdicts[index] = Verdict("error", reason=f"completion must be a str, got {type(completion).__name__}",
                                      details={"isolation": level})
            continue
        try:
            spec = parse_tests(tests)
            code, language, mismatch = extract_program(completion, tests_language(tests))
            native = judged_natively(tests, language)
            budget = native_budget(tests, float(timeout), memory_mb) if native else 0.0
        except TestsError as exc:
            verdicts[index] = Verdict("error", reason=str(exc), details={"isolation": level})
            continue
        if mismatch is not None:
            verdicts[index] = Verdict("wrong", 0.0, reason=mismatch, details={"language": language, "isolation": level})
            continue
        if not code.strip():
            verdicts[index] = Verdict("no_answer", reason="the completion holds no code", details={"isolation": level})
            continue
        tasks.append({"code": code, "tests": tests, "timeout": float(timeout), "memory_mb": memory_mb,
                      "output_bytes": max_output_bytes, "tmp_mb": tmp_mb, "abs_tol": float(abs_tol),
                      "rel_tol": float(rel_tol), "language": language,
                      "isolation": level, "sandbox": sandbox})
        budgets.append(max(budget, judge_budget(float(timeout), count_tests(spec))))
        where.append(index)
        codes.append(code)
    if tasks:
        outcomes = run_judges(tasks, max(budgets), workers, batch_timeout)
        for index, code, outcome in zip(where, codes, outcomes):
            if outcome.status == "ok":
                result = outcome.value
            elif outcome.status == "cancelled":
                result = {"error": f"the batch deadline of {batch_timeout} s passed before this program was judged"}
            elif outcome.status == "timeout":
                result = {"error": f"the test code did not finish within {outcome.seconds:.0f} s (its judge was replaced)"}
            else:
                result = {"error": f"the judge worker failed: {outcome.message}"}
            verdicts[index] = _verdict(code, result, level)
    return verdicts  # type: ignore[return-value]


def verify(
    completion: Any,
    tests: Any,
    *,
    timeout: float = 3.0,
    memory_mb: int = 1024,
    max_output_bytes: int = 4 << 20,
    tmp_mb: int = DEFAULT_TMP_MB,
    abs_tol: float = 0.0,
    rel_tol: float = 0.0,
    workers: int | None = None,
    isolation: str = "auto",
    allow_weak_isolation: bool = False,
    min_isolation: str | None = None,
) -> Verdict:
    """Judge one completion's program against ``tests``; the options are :func:`verify_batch`'s.

    Example:
        >>> tests = {"format": "call", "fn_name": "square", "inputs": [[2], [3]], "outputs": [4, 9]}
        >>> verify("def square(x):\\n    return x * x", tests).status
        'correct'
        >>> verify("import os\\ndef square(x):\\n    os._exit(0)", tests).reason
        '0 of 2 tests passed; test 1: exited (code 0) in square(2)'
    """
    return verify_batch([completion], [tests], timeout=timeout, memory_mb=memory_mb, max_output_bytes=max_output_bytes,
                        tmp_mb=tmp_mb, abs_tol=abs_tol, rel_tol=rel_tol, workers=workers, isolation=isolation,
                        allow_weak_isolation=allow_weak_isolation, min_isolation=min_isolation)[0]
