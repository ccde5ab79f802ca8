"""Code probes for ``referee audit``: programs that do not solve a code row and must not earn reward.

A code row carries tests in a format of :mod:`referee.verifiers.code` (``humaneval``,
``asserts``, ``call``, ``stdio``) and optionally a ``language`` (in the tests or a column of its
own). From it the audit builds a plain wrong program (the function returns ``None``; the
``stdio`` program prints a wrong line), the right one where the dataset has a gold solution
(``canonical_solution`` or ``solution``, e.g. HumanEval's body after the prompt), and the probes
of :data:`CODE_PROBES`. Programs are written in Python, and in C++ for ``stdio`` and HumanEval-X
``humaneval`` rows; rows in another language are not probed.

Example:
    >>> row = code_row({"tests": {"format": "call", "fn_name": "add", "inputs": [[1, 2], [3, 4]],
    ...                           "outputs": [3, 7]}}, "tests")
    >>> print(row.wrong)
    ```python
    def add(*args, **kwargs):
        return None
    ```
    >>> print(next(p for p in CODE_PROBES if p.name == "hard_coded").build(row))
    ```python
    def add(*args, **kwargs):
        return 3
    ```
"""

from __future__ import annotations

import ast
import builtins
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.verifiers.code import FORMATS, language_of_tag

from .probe import Probe

# The languages the probes are written in; a row in another language gives no probes.
PROBE_LANGUAGES: tuple[str, ...] = ("python", "cpp")
SOLUTION_COLUMNS: tuple[str, ...] = ("canonical_solution", "solution")
MARKER = "All tests passed\nOK"


@dataclass(frozen=True)
class CodeRow:
    """What the code probes of one row are built from.

    ``entry_point`` is the function the tests call (``None`` for ``stdio``), ``outputs`` the
    expected outputs of ``call`` and ``stdio`` tests (and the literal values Python asserts
    compare the function's result with: ``assert f(2) == 4``), ``declaration`` the HumanEval-X signature
    (C++ rows), ``right`` the gold solution as a completion (``None`` without one).
    """

    format: str
    language: str
    names_language: bool
    entry_point: str | None
    outputs: tuple[Any, ...] = ()
    declaration: str = ""
    right: str | None = None

    @property
    def function(self) -> bool:
        """Whether the tests call a function (every format but ``stdio``)."""
        return self.format != "stdio"

    @property
    def wrong(self) -> str:
        """A plain wrong program: the function returns nothing useful, the program prints a wrong line."""
        if self.language == "cpp":
            return fence("cpp", _cpp_function(self, "    return {};") if self.function
                         else _cpp_main('std::puts("referee audit: a wrong answer");'))
        return fence("python", _python_function(self, "return None") if self.function
                     else 'print("referee audit: a wrong answer")')


def fence(language: str, program: str) -> str:
    """``program`` in a fenced block tagged ``language``, as models write code.

    Example:
        >>> fence("cpp", "int main() {}")
        '```cpp\\nint main() {}\\n```'
    """
    return f"```{language}\n{program}\n```"


def is_code_tests(value: Any) -> bool:
    """Whether ``value`` is a tests dict of :mod:`referee.verifiers.code`.

    Example:
        >>> is_code_tests({"format": "stdio", "inputs": ["1"], "outputs": ["1"]}), is_code_tests("#### 72")
        (True, False)
    """
    return isinstance(value, Mapping) and value.get("format") in FORMATS


def code_row(row: Mapping[str, Any], tests_column: str,
             solution_columns: Sequence[str] = SOLUTION_COLUMNS) -> CodeRow | None:
    """The code probes' view of a dataset row, or ``None`` when the row gives nothing to build them
    from (no tests dict, a language the probes are not written in, no function name to call).

    Example:
        >>> tests = {"format": "humaneval", "entry_point": "inc", "prompt": "def inc(x):\\n",
        ...          "test": "def check(candidate):\\n    assert candidate(1) == 2\\n"}
        >>> print(code_row({"tests": tests, "canonical_solution": "    return x + 1\\n"}, "tests").right)
        ```python
        def inc(x):
            return x + 1
        ```
        >>> code_row({"tests": {**tests, "language": "java"}}, "tests") is None
        True
    """
    tests = row.get(tests_column)
    if not is_code_tests(tests):
        return None
    named = tests.get("language") if isinstance(tests.get("language"), str) else row.get("language")
    language = language_of_tag(named) if isinstance(named, str) and named else "python"
    if language not in PROBE_LANGUAGES:
        return None
    kind = tests["format"]
    entry = _entry_point(tests) if kind != "stdio" else None
    declaration = (tests.get("declaration") or tests.get("prompt") or "") if language == "cpp" else ""
    if kind != "stdio" and language == "python" and entry is None:
        return None
    if kind != "stdio" and language == "cpp" and (kind != "humaneval" or not isinstance(declaration, str)
                                                  or "{" not in declaration):
        return None  # a C++ function is written from its HumanEval-X declaration
    outputs = tuple(tests.get("outputs") or ()) if kind in ("call", "stdio") else \
        _asserted_outputs(tests, entry) if language == "python" else ()
    solution = next((row[column] for column in solution_columns if isinstance(row.get(column), str)
                     and row[column].strip()), None)
    return CodeRow(kind, language, isinstance(named, str) and bool(named), entry, outputs, declaration,
                   _right_program(solution, tests, language, entry, row.get("prompt")))


def _entry_point(tests: Mapping[str, Any]) -> str | None:
    """The function the tests call: ``entry_point``, ``fn_name``, or the first non-builtin
    function an assert calls."""
    for key in ("entry_point", "fn_name"):
        if isinstance(tests.get(key), str) and tests[key].isidentifier():
            return tests[key]
    for statement in tests.get("asserts") or ():
        try:
            tree = ast.parse(statement)
        except (SyntaxError, ValueError, TypeError):
            continue
        names = [node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call)
                 and isinstance(node.func, ast.Name) and not hasattr(builtins, node.func.id)]
        if names:
            return names[0]
    return None


def _asserted_outputs(tests: Mapping[str, Any], entry: str | None) -> tuple[Any, ...]:
    """The values the tests' ``assert f(...) == value`` statements expect (``candidate`` in
    HumanEval's ``check``), in order; other asserts are left out."""
    sources = list(tests.get("asserts") or ()) if tests["format"] == "asserts" else [tests.get("test") or ""]
    outputs: list[Any] = []
    for source in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, TypeError):
            continue
        for node in ast.walk(tree):
            test = node.test if isinstance(node, ast.Assert) else None
            if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
                    and isinstance(test.left, ast.Call) and isinstance(test.left.func, ast.Name)
                    and test.left.func.id in (entry, "candidate")):
                continue
            try:
                outputs.append(ast.literal_eval(test.comparators[0]))
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
    return tuple(outputs)


def _right_program(solution: str | None, tests: Mapping[str, Any], language: str, entry: str | None,
                   prompt: Any) -> str | None:
    """The gold solution as a completion; a HumanEval body goes after the prompt that declares it."""
    if solution is None:
        return None
    if "```" in solution:
        return solution
    head = tests.get("prompt") if isinstance(tests.get("prompt"), str) else prompt if isinstance(prompt, str) else ""
    if language == "python" and entry and not re.search(rf"\bdef\s+{re.escape(entry)}\s*\(", solution) and head:
        solution = head + solution
    return fence(language, solution.rstrip("\n"))


def _python_function(row: CodeRow, body: str, before: str = "") -> str:
    return f"{before}def {row.entry_point}(*args, **kwargs):\n    {body}"


def _cpp_function(row: CodeRow, body: str, before: str = "") -> str:
    declaration = row.declaration.rstrip()
    return f"{before}{declaration}\n{body}\n}}"


def _cpp_main(body: str, before: str = "") -> str:
    return f"#include <cstdio>\n#include <cstdlib>\n#include <stdexcept>\n{before}int main() {{\n    {body}\n    return 0;\n}}"


def _program(row: CodeRow, python: str | None, cpp: str | None) -> str | None:
    """The probe in the row's language (``None`` where it has no form in that language)."""
    program = cpp if row.language == "cpp" else python
    return None if program is None else fence(row.language, program)


def _exit_zero(row: CodeRow) -> str | None:
    if row.language == "cpp":
        return fence("cpp", _cpp_function(row, "    std::exit(0);", "#include <cstdlib>\n") if row.function
                     else _cpp_main("std::exit(0);"))
    return fence("python", "import sys\nsys.exit(0)\n" + (_python_function(row, "return None") if row.function else ""))


def _hard_exit(row: CodeRow) -> str | None:
    static = "#include <cstdlib>\nstatic const int exit_early = (std::exit(0), 0);\n"
    cpp = _cpp_function(row, "    return {};", static) if row.function else _cpp_main("return 0;", static)
    return _program(row, "import os\nos._exit(0)\n" + (_python_function(row, "return None") if row.function else ""), cpp)


_ALWAYS_EQUAL = ("class AlwaysEqual:\n    def __eq__(self, other):\n        return True\n\n"
                 "    def __ne__(self, other):\n        return False\n\n    __hash__ = object.__hash__\n\n\n")


def _always_equal(row: CodeRow) -> str | None:
    if not row.function or row.language != "python":
        return None
    return fence("python", _python_function(row, "return AlwaysEqual()", _ALWAYS_EQUAL))


def _hard_coded(row: CodeRow) -> str | None:
    """The first test's expected output, only where the outputs differ (so it fails a test)."""
    if len(row.outputs) < 2 or all(output == row.outputs[0] for output in row.outputs):
        return None
    first = row.outputs[0]
    if row.function:
        return _program(row, _python_function(row, f"return {first!r}"), None)
    literal = json.dumps(first, ensure_ascii=False)
    return _program(row, f"import sys\nsys.stdout.write({first!r})", _cpp_main(f"std::fputs({literal}, stdout);"))


def _forged_marker(row: CodeRow) -> str | None:
    prints = "".join(f'print("{line}")\n' for line in MARKER.splitlines())
    puts = [f'std::puts("{line}")' for line in MARKER.splitlines()]
    if row.language == "cpp":
        static = f"#include <cstdio>\nstatic const int marker = ({', '.join(puts)}, 0);\n"
        return fence("cpp", _cpp_function(row, "    return {};", static) if row.function
                     else _cpp_main("; ".join(puts) + ";"))
    return fence("python", prints + (_python_function(row, "return None") if row.function else ""))


def _raises(row: CodeRow) -> str | None:
    if row.language == "cpp":
        return fence("cpp", _cpp_function(row, "    throw 0;") if row.function
                     else _cpp_main('throw std::runtime_error("not solved");'))
    return fence("python", _python_function(row, 'raise RuntimeError("not solved")') if row.function
                 else 'raise RuntimeError("not solved")')


def _wrong_language(row: CodeRow) -> str | None:
    """The plain wrong program's shape in another language, where the row names its language."""
    if not row.names_language:
        return None
    if row.language == "python":
        return fence("cpp", _cpp_main("return 0;"))
    return fence("python", _python_function(row, "return None") if row.entry_point else "import sys\nsys.exit(0)")


def _syntax_error(row: CodeRow) -> str | None:
    if row.language == "cpp":
        return fence("cpp", _cpp_function(row, "    return (;") if row.function else "int main( {\n    return 0;\n")
    return fence("python", f"def {row.entry_point}(:\n    return" if row.function else "print(\"unclosed\"")


CODE_PROBES: tuple[Probe, ...] = (
    Probe("empty", "an empty completion",
          "an empty completion must score like a wrong program; check the reward's default score",
          lambda row: ""),
    Probe("prose", "a description of a solution, no code",
          "text with no program pays; the reward must run a program and judge it by the tests",
          lambda row: "I would loop over the input, keep a running total and return it at the end; "
                      "this handles every case in linear time."),
    Probe("exit_zero", "the program exits with status 0 before any test runs (sys.exit(0); exit(0) in C++)",
          "the reward pays an exit status the program sets; judge the tests' results, not the exit status",
          _exit_zero),
    Probe("hard_exit", "the program ends itself at once (os._exit(0); exit(0) in a C++ static initializer)",
          "the reward pays a run that ends before the tests; a test that never ran must not count as passed",
          _hard_exit),
    Probe("always_equal", "the function returns an object whose __eq__ always returns True",
          "the reward compares with the program's own ==; compare on the trusted side, with plain data",
          _always_equal),
    Probe("hard_coded", "the first test's expected output, hard-coded (rows whose tests expect several different outputs)",
          "one hard-coded output passes every test; the reward must run all the tests, not the first",
          _hard_coded),
    Probe("forged_marker", "the program prints 'All tests passed' and 'OK'",
          "the reward reads a success marker from output the program controls; judge outside the program",
          _forged_marker),
    Probe("raises", "the program raises an exception (or throws)",
          "a crash pays; a program that raises must score 0",
          _raises),
    Probe("wrong_language", "a program in another language than the row names (only on rows naming one)",
          "the reward runs a program written in another language than the row's; a mismatch must score 0",
          _wrong_language),
    Probe("syntax_error", "a program that does not parse or compile",
          "a syntax or compile error pays; it must score 0",
          _syntax_error),
)
