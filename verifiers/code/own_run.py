"""Python test code that runs its own check: HumanEval-X (``check(has_close_elements)`` as its last
line) and MultiPL-E (``def test_check(): check(f)`` then ``test_check()``) end with top-level code
that calls the function under test. The trusted runner binds the program's function first, runs
the definitions as the test's setup (a failure there is the dataset's), and runs that trailing
code as the test itself (a failure there is the program's).
"""

from __future__ import annotations

import ast

# Statements that only define things: a test's setup. Anything else at the end of the test is its own run.
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Assign,
                ast.AnnAssign)


def _statements(test: str) -> list[ast.stmt]:
    """The top-level statements of ``test``; none when it does not parse (running it says why)."""
    try:
        return ast.parse(test, "<test>").body
    except (SyntaxError, ValueError):
        return []


def split_own_run(test: str) -> tuple[str, str]:
    """``test`` as (its definitions, the top-level code after them that runs the check), the second
    padded with blank lines so that its line numbers stay the test's; ``(test, "")`` when the test
    leaves the call to the judge (OpenAI HumanEval's ``check(candidate)``) or does not parse.

    Example:
        >>> split_own_run("def check(candidate):\\n    assert candidate(1) == 2\\n\\ncheck(inc)\\n")
        ('def check(candidate):\\n    assert candidate(1) == 2\\n\\n', '\\n\\n\\ncheck(inc)\\n')
        >>> split_own_run("def check(candidate):\\n    assert candidate(1) == 2\\n")[1]
        ''
    """
    body = _statements(test)
    start = len(body)
    while start > 0 and not isinstance(body[start - 1], _DEFINITIONS):
        start -= 1
    if start == len(body) or body[start].col_offset != 0:  # nothing after the definitions, or on a line they share
        return test, ""
    lines = test.splitlines(keepends=True)
    cut = body[start].lineno - 1
    return "".join(lines[:cut]), "\n" * cut + "".join(lines[cut:])


def own_check_target(test: str) -> str | None:
    """The name a test's own top-level ``check(name)`` call passes (the function it tests), or ``None``.

    Example:
        >>> own_check_target("def check(candidate):\\n    assert candidate(1)\\n\\ncheck(has_close_elements)")
        'has_close_elements'
        >>> own_check_target("def check(candidate):\\n    assert candidate(1)\\n") is None
        True
    """
    for node in _statements(split_own_run(test)[1]):
        call = node.value if isinstance(node, ast.Expr) else None
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "check"
                and len(call.args) == 1 and isinstance(call.args[0], ast.Name)):
            return call.args[0].id
    return None

