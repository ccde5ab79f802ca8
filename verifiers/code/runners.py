"""The trusted-side test runners, one per format: test code runs here, never in the job.

The program's functions are bound to :class:`Candidate` proxies that send only the arguments
to the job and return the plain-data reply, so asserts, ``check(candidate)`` and expected
values all stay on this side. Test code that fails to run (a dataset problem) raises
:class:`~referee.verifiers.code.formats.TestsError`.
"""

from __future__ import annotations

import ast
import builtins
import copy
import functools
import importlib
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType
from typing import Any

from ..sandbox.wire import WireError
from .formats import AssertTests, CallTests, HumanEvalTests, StdioTests, TestsError, TestSpec, count_tests
from .outputs import call_output_matches, first_difference, short_repr, stdout_matches
from .own_run import own_check_target, split_own_run
from .session import CandidateFailure, Outcome, ProgramSession

PASSED = Outcome(True, "passed", "passed")


@dataclass
class _Clock:
    deadline: float = 0.0


class Candidate:
    """Stands for one of the program's functions on the trusted side.

    Calling it sends the arguments (plain data only) to the job and returns its plain-data
    result; the program's exceptions come back as built-in exceptions of the same name.

    Example:
        >>> from referee.verifiers.sandbox.isolation import available_isolation
        >>> from referee.verifiers.sandbox.sandbox import Sandbox
        >>> sandbox = Sandbox(available_isolation("basic"), uid=None)
        >>> session = ProgramSession(sandbox, "def half(x):\\n    return x // 2", timeout=2.0, tests=1)
        >>> session.describe(["half"])
        {'half': ('callable',)}
        >>> half = Candidate(session, "half", _Clock(time.monotonic() + 2))
        >>> half(10), half
        (5, <the program's half>)
        >>> session.close(); sandbox.close()
    """

    def __init__(self, session: ProgramSession, name: str, clock: _Clock) -> None:
        self.__name__ = name
        self._session = session
        self._clock = clock

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._session.call(self.__name__, args, kwargs, self._clock.deadline)

    def __repr__(self) -> str:
        return f"<the program's {self.__name__}>"


@functools.lru_cache(maxsize=512)
def _compile(source: str, filename: str) -> CodeType:
    try:
        return compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        raise TestsError(f"the test code in {filename} does not compile ({exc}); fix the dataset row.") from None


def _exec_trusted(source: str, filename: str, namespace: dict[str, Any]) -> None:
    if not source:
        return
    try:
        exec(_compile(source, filename), namespace)
    except Exception as exc:
        raise TestsError(f"the test code in {filename} raised {type(exc).__name__}: {exc}; fix the dataset row.") from None


def _failed_line(exc: BaseException, sources: dict[str, str]) -> str:
    """The test source line where ``exc`` was raised, if it came from test code."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        source = sources.get(frame.filename)
        if source is not None and frame.lineno:
            lines = source.splitlines()
            if 0 < frame.lineno <= len(lines):
                return lines[frame.lineno - 1].strip()
    return ""


def _run_one(session: ProgramSession, test: Callable[[], Any], sources: dict[str, str]) -> tuple[Outcome, Any]:
    """How ``test()`` went, and what it returned."""
    failed_before = len(session.failures)
    try:
        value = test()
    except CandidateFailure as failure:
        return failure.outcome, None
    except WireError as exc:
        raise TestsError(f"the test passes the program an argument that is not plain data ({exc}).") from None
    except Exception as exc:
        message = short_repr(str(exc), 200)[1:-1] if str(exc) else ""
        program_type = getattr(exc, "program_exception", None)
        if program_type is not None:
            kind = "memory" if program_type == "MemoryError" else "exception"
            return Outcome(False, kind, f"the program raised {program_type}{': ' + message if message else ''}"), None
        line = _failed_line(exc, sources)
        where = f" at {short_repr(line, 160)[1:-1]}" if line else ""
        what = "assertion failed" if isinstance(exc, AssertionError) else f"the test raised {type(exc).__name__}"
        return Outcome(False, "wrong", f"{what}{where}{': ' + message if message else ''}"), None
    if len(session.failures) > failed_before:  # test code with a bare except swallowed a timeout or crash
        return session.failures[failed_before].outcome, None
    return PASSED, value


def _load_failure(session: ProgramSession, names: list[str], tests: int) -> tuple[dict[str, Any], list[Outcome]]:
    try:
        return session.describe(names), []
    except CandidateFailure as failure:
        return {}, [failure.outcome] * tests


def _free_names(source: str, filename: str) -> set[str]:
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as exc:
        raise TestsError(f"the test {source[:60]!r} does not compile ({exc.msg}); fix the dataset row.") from None
    loaded, bound = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return loaded - bound


def _binding(session: ProgramSession, name: str, description: tuple[Any, ...], clock: _Clock) -> Any:
    """What a test sees for the program's ``name``; ``None`` to leave it unbound (a NameError)."""
    kind = description[0] if description else "missing"
    if kind == "callable":
        return Candidate(session, name, clock)
    if kind == "value":
        return description[1]
    if kind == "module" and description[1] == name and name in sys.stdlib_module_names:
        # the test itself names this module (the program only imported it): never import a name
        # the program chose (``import antigravity as math`` would open a browser here)
        return importlib.import_module(name)
    return None


def _humaneval(session: ProgramSession, spec: HumanEvalTests, timeout: float) -> list[Outcome]:
    described, failed = _load_failure(session, [spec.entry_point], 1)
    if failed:
        return failed
    if described.get(spec.entry_point) != ("callable",):
        return [Outcome(False, "load", f"the program defines no function {spec.entry_point}")]
    namespace: dict[str, Any] = {"__name__": "__test__", "__builtins__": builtins}
    _exec_trusted(spec.prompt, "<prompt>", namespace)
    clock = _Clock()
    candidate = Candidate(session, spec.entry_point, clock)
    namespace[spec.entry_point] = candidate  # before any code of the test runs: the prompt's stub is never called
    definitions, own_run = split_own_run(spec.test)
    _exec_trusted(definitions, "<test>", namespace)
    if own_run:  # HumanEval-X, MultiPL-E: the test ends by calling its check itself
        target = own_check_target(spec.test)
        if target is not None and namespace.get(target) is not candidate:
            raise TestsError(f"tests['test'] ends with check({target}), which is not the entry point "
                             f"{spec.entry_point}; fix the dataset row.")
        unbound = sorted(_free_names(own_run, "<test>") - set(namespace) - set(dir(builtins)))
        if unbound:
            raise TestsError(f"tests['test'] ends with code that uses {', '.join(unbound)}, which it never defines; "
                             "fix the dataset row.")
        test = functools.partial(exec, _compile(own_run, "<test>"), namespace)
    else:
        check = namespace.get("check")
        if not callable(check):
            raise TestsError("tests['test'] defines no check(candidate) function; fix the dataset row.")
        test = functools.partial(check, candidate)
    clock.deadline = time.monotonic() + timeout
    return [_run_one(session, test, {"<test>": spec.test, "<prompt>": spec.prompt})[0]]


def _asserts(session: ProgramSession, spec: AssertTests, timeout: float) -> list[Outcome]:
    setup: dict[str, Any] = {"__name__": "__test__", "__builtins__": builtins}
    _exec_trusted(spec.setup, "<setup>", setup)
    filenames = [f"<assert {i + 1}>" for i in range(len(spec.asserts))]
    wanted: set[str] = set()
    for source, filename in zip(spec.asserts, filenames):
        wanted |= _free_names(source, filename)
    names = sorted(wanted - set(setup))
    described, failed = _load_failure(session, names, len(spec.asserts))
    if failed:
        return failed
    defined = [name for name in names if described.get(name, ("missing",))[0] != "missing"]
    if any(not hasattr(builtins, name) for name in defined):
        # The program never replaces a built-in the tests use (its own len() or set() would
        # judge itself), unless it is the only thing the tests call: then the function under
        # test has a built-in's name (MBPP 126 tests a sum(a, b)).
        defined = [name for name in defined if not hasattr(builtins, name)]
    clock = _Clock()
    bindings = {name: _binding(session, name, described[name], clock) for name in defined}
    outcomes = []
    for source, filename in zip(spec.asserts, filenames):
        code = _compile(source, filename)
        namespace = dict(setup)
        for name, value in bindings.items():
            if value is not None:  # a plain value is copied so that one test cannot change the next
                namespace[name] = value if described[name][0] != "value" else copy.deepcopy(value)
        clock.deadline = time.monotonic() + timeout
        outcomes.append(_run_one(session, functools.partial(exec, code, namespace), {filename: source})[0])
    return outcomes


def _calls(session: ProgramSession, spec: CallTests, timeout: float, abs_tol: float, rel_tol: float) -> list[Outcome]:
    described, failed = _load_failure(session, [spec.fn_name], len(spec.inputs))
    if failed:
        return failed
    if described.get(spec.fn_name) != ("callable",):
        return [Outcome(False, "load", f"the program defines no function {spec.fn_name}")] * len(spec.inputs)
    outcomes = []
    for args, expected in zip(spec.inputs, spec.outputs):
        shown = f"{spec.fn_name}({short_repr(list(args), 60)[1:-1]})"
        call = functools.partial(session.call, spec.fn_name, tuple(args), {}, time.monotonic() + timeout)
        outcome, got = _run_one(session, call, {})
        if outcome.passed and not call_output_matches(got, expected, abs_tol=abs_tol, rel_tol=rel_tol):
            outcome = Outcome(False, "wrong", f"{shown} returned {short_repr(got)}, expected {short_repr(expected)}")
        outcomes.append(outcome)
    return outcomes


def _stdio(session: ProgramSession, spec: StdioTests, timeout: float, abs_tol: float, rel_tol: float) -> list[Outcome]:
    outcomes = []
    for stdin, expected in zip(spec.inputs, spec.outputs):
        try:
            got = session.run_stdio(stdin, time.monotonic() + timeout)
        except CandidateFailure as failure:
            outcomes.append(failure.outcome)
            continue
        if stdout_matches(got, expected, abs_tol=abs_tol, rel_tol=rel_tol):
            outcomes.append(PASSED)
        else:
            outcomes.append(Outcome(False, "wrong", f"wrong output, {first_difference(got, expected)}"))
    return outcomes


def run_tests(session: ProgramSession, spec: TestSpec, *, timeout: float, abs_tol: float = 0.0,
              rel_tol: float = 0.0) -> list[Outcome]:
    """Run every test of ``spec`` against the program in ``session``; one :class:`Outcome` per test.

    Example:
        >>> from referee.verifiers.code.formats import parse_tests
        >>> from referee.verifiers.sandbox.isolation import available_isolation
        >>> from referee.verifiers.sandbox.sandbox import Sandbox
        >>> sandbox = Sandbox(available_isolation("basic"), uid=None)
        >>> spec = parse_tests({"format": "asserts", "asserts": ["assert f(2) == 4", "assert f(3) == 9"]})
        >>> session = ProgramSession(sandbox, "def f(x):\\n    return x * 2", timeout=2.0, tests=2)
        >>> [o.kind for o in run_tests(session, spec, timeout=2.0)]
        ['passed', 'wrong']
        >>> session.close(); sandbox.close()
    """
    try:
        if isinstance(spec, HumanEvalTests):
            outcomes = _humaneval(session, spec, timeout)
        elif isinstance(spec, AssertTests):
            outcomes = _asserts(session, spec, timeout)
        elif isinstance(spec, CallTests):
            outcomes = _calls(session, spec, timeout, abs_tol, rel_tol)
        else:
            outcomes = _stdio(session, spec, timeout, abs_tol, rel_tol)
    finally:
        session.close()
    assert len(outcomes) == count_tests(spec)
    return outcomes
