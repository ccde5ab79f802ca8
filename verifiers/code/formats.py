"""The test formats datasets use, read from plain dicts and checked before anything runs.

* ``humaneval``: ``{"format": "humaneval", "test": "def check(candidate): ...", "entry_point": "f",
  "prompt": "..."}``; ``prompt`` (optional) is the dataset's trusted prompt, run on the trusted
  side first for the helpers the test uses (HumanEval/32's ``poly``). One test. A test that ends by
  calling its check itself (HumanEval-X's ``check(f)``, MultiPL-E's ``test_check()``) runs that
  call as the test, with ``f`` already bound to the program; ``entry_point`` may then be left out
  (the name its ``check(f)`` passes). With a
  ``language`` other than Python (HumanEval-X: ``cpp``, ``java``, ``javascript``, ``go``, ``rust``)
  the rows' ``declaration`` (or ``prompt``) and ``test`` are compiled with the program by
  :mod:`.humaneval_x`; ``entry_point`` may then be left out (the declaration's last function), and
  Go rows' ``test_setup`` gives the imports of the test code.
* ``asserts``: ``{"format": "asserts", "asserts": ["assert f(1) == 2", ...], "setup": "import math"}``
  (MBPP). One test per item; ``setup`` (optional) runs on the trusted side before each.
* ``call``: ``{"format": "call", "fn_name": "f", "inputs": [[1, 2], ...], "outputs": [3, ...]}``
  (APPS, TACO, LiveCodeBench). Each input is the list of positional arguments.
* ``stdio``: ``{"format": "stdio", "inputs": ["1 2\\n", ...], "outputs": ["3\\n", ...]}``, in any
  language: ``language`` (``cpp``, ``java``, ...), ``time_limit``, ``memory_limit`` and ``checker``
  are read by :mod:`.native` (see :mod:`.problem_limits`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

from .own_run import own_check_target

FORMATS: tuple[str, ...] = ("humaneval", "asserts", "call", "stdio")


class TestsError(ValueError):
    """The tests are unusable (a dataset problem, never the completion's fault).

    Example:
        >>> parse_tests({"format": "stdio", "inputs": ["1"], "outputs": []})
        Traceback (most recent call last):
        ...
        referee.verifiers.code.formats.TestsError: tests['outputs'] must be a non-empty list, got list.
    """


@dataclass(frozen=True)
class HumanEvalTests:
    """``check(candidate)`` test code, with the entry point bound to the program's function.

    Example:
        >>> parse_tests({"format": "humaneval", "test": "def check(candidate): ...", "entry_point": "f"}).entry_point
        'f'
    """

    test: str
    entry_point: str
    prompt: str = ""
    declaration: str = ""
    setup: str = ""


@dataclass(frozen=True)
class AssertTests:
    """Test statements (usually one assert each), each one test.

    Example:
        >>> parse_tests({"format": "asserts", "asserts": ["assert f(1) == 2"], "setup": "import math"}).setup
        'import math'
    """

    asserts: tuple[str, ...]
    setup: str = ""


@dataclass(frozen=True)
class CallTests:
    """Call ``fn_name(*inputs[i])`` and compare with ``outputs[i]``.

    Example:
        >>> parse_tests({"format": "call", "fn_name": "f", "inputs": [[1, 2]], "outputs": [3]}).inputs
        ([1, 2],)
    """

    fn_name: str
    inputs: tuple[Any, ...]
    outputs: tuple[Any, ...]


@dataclass(frozen=True)
class StdioTests:
    """Run the program on ``inputs[i]`` as stdin and compare its stdout with ``outputs[i]``.

    Example:
        >>> parse_tests({"format": "stdio", "inputs": ["1 2\\n"], "outputs": ["3\\n"]}).outputs
        ('3\\n',)
    """

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


TestSpec = Union[HumanEvalTests, AssertTests, CallTests, StdioTests]


def _text(tests: dict[str, Any], key: str, *, required: bool = True) -> str:
    value = tests.get(key, None if required else "")
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise TestsError(f"tests[{key!r}] must be a non-empty string of code, got {type(value).__name__}.")
    return value


def _list(tests: dict[str, Any], key: str) -> tuple[Any, ...]:
    value = tests.get(key)
    if not isinstance(value, (list, tuple)) or not value:
        raise TestsError(f"tests[{key!r}] must be a non-empty list, got {type(value).__name__}.")
    return tuple(value)


def _identifier(tests: dict[str, Any], key: str) -> str:
    value = tests.get(key)
    if not isinstance(value, str) or not value.isidentifier():
        raise TestsError(f"tests[{key!r}] must be a Python function name, got {value!r}.")
    return value


def _paired(inputs: tuple[Any, ...], outputs: tuple[Any, ...]) -> None:
    if len(inputs) != len(outputs):
        raise TestsError(f"tests have {len(inputs)} inputs but {len(outputs)} outputs; give one output per input.")


def parse_tests(tests: Any) -> TestSpec:
    """Read a tests dict; raises :class:`TestsError` (one sentence naming the bad value) if unusable.

    Example:
        >>> parse_tests({"format": "call", "fn_name": "add", "inputs": [[1, 2]], "outputs": [3]})
        CallTests(fn_name='add', inputs=([1, 2],), outputs=(3,))
        >>> parse_tests({"format": "mbpp"})
        Traceback (most recent call last):
        ...
        referee.verifiers.code.formats.TestsError: tests format 'mbpp' is not one of humaneval, asserts, call, stdio.
    """
    if not isinstance(tests, dict):
        raise TestsError(f"tests must be a dict with a 'format' key, got {type(tests).__name__}.")
    kind = tests.get("format")
    if kind == "humaneval":
        other_language = tests.get("language") not in (None, "python", "py", "python3")
        if tests.get("entry_point") is None and not other_language:  # the name its own check(f) passes, if any
            tests = {**tests, "entry_point": own_check_target(_text(tests, "test"))}
        entry = "" if other_language and tests.get("entry_point") is None else _identifier(tests, "entry_point")
        return HumanEvalTests(_text(tests, "test"), entry, _text(tests, "prompt", required=False),
                              _text(tests, "declaration", required=False), _text(tests, "test_setup", required=False))
    if kind == "asserts":
        asserts = _list(tests, "asserts")
        if not all(isinstance(item, str) and item.strip() for item in asserts):
            raise TestsError("tests['asserts'] must be a list of non-empty strings of Python.")
        return AssertTests(asserts, _text(tests, "setup", required=False))
    if kind == "call":
        inputs, outputs = _list(tests, "inputs"), _list(tests, "outputs")
        _paired(inputs, outputs)
        bad = next((i for i, args in enumerate(inputs) if not isinstance(args, (list, tuple))), None)
        if bad is not None:
            raise TestsError(f"tests['inputs'][{bad}] must be the list of arguments, got {type(inputs[bad]).__name__}.")
        return CallTests(_identifier(tests, "fn_name"), inputs, outputs)
    if kind == "stdio":
        inputs, outputs = _list(tests, "inputs"), _list(tests, "outputs")
        _paired(inputs, outputs)
        bad = next((i for i, text in enumerate(inputs + outputs) if not isinstance(text, str)), None)
        if bad is not None:
            raise TestsError("tests['inputs'] and tests['outputs'] must hold strings for the stdio format.")
        return StdioTests(inputs, outputs)
    raise TestsError(f"tests format {kind!r} is not one of {', '.join(FORMATS)}.")


def count_tests(spec: TestSpec) -> int:
    """How many tests ``spec`` holds (the denominator of the score).

    Example:
        >>> count_tests(parse_tests({"format": "asserts", "asserts": ["assert f(1) == 1", "assert f(2) == 4"]}))
        2
    """
    if isinstance(spec, HumanEvalTests):
        return 1
    if isinstance(spec, AssertTests):
        return len(spec.asserts)
    return len(spec.inputs)
