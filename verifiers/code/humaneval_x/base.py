"""What one language's HumanEval-X harness is: the files to compile (the program, the dataset's test
code, the trusted harness around it), how to build and run them, and a check of what was built.

The harness is the trusted side inside the shared binary: it runs the test code, and only when the
test code returns does it read the run's key from stdin and print it. See :mod:`.` for the judge.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..formats import HumanEvalTests, TestsError


class ProgramRefused(Exception):
    """The program does something the harness cannot judge it with (it defines what the test code
    would call to compare, exports symbols by name, ...): the program's fault, score 0.

    Example:
        >>> str(ProgramRefused("the program overrides equals(Object)"))
        'the program overrides equals(Object)'
    """


@dataclass(frozen=True)
class Assembly:
    """One program with its test, ready to build: ``sources`` (file name -> text; ``main`` names the
    one the language's file hook reports as the source), the compile and run argument templates
    (as :class:`~referee.verifiers.code.languages.base.Language` fills them), the artefacts the runs
    need, ``inspect``, a check of the compiled files that returns why the program is refused, and
    ``details`` for the verdict (what the assembly changed in the program: Go's dropped imports).

    Example:
        >>> Assembly({"main.js": "1"}, "main.js", None, ("{node}", "main.js"), ("main.js",)).main_text
        '1'
    """

    sources: dict[str, str]
    main: str
    compile: tuple[str, ...] | None
    run: tuple[str, ...]
    artifacts: tuple[str, ...]
    inspect: Callable[[dict[str, bytes]], str | None] | None = field(default=None, compare=False)
    names: tuple[tuple[str, str], ...] = ()  # more names for the templates than ``{source}`` (Java's ``{main}``)
    details: dict[str, object] = field(default_factory=dict, compare=False)  # for the verdict: what was changed

    @property
    def main_text(self) -> str:
        """The text of the main source file."""
        return self.sources[self.main]

    @property
    def others(self) -> dict[str, str]:
        """The sources besides the main one."""
        return {name: text for name, text in self.sources.items() if name != self.main}


def declaration_of(spec: HumanEvalTests) -> str:
    """The dataset's declaration of the function (``declaration``, else ``prompt``); a dataset
    problem when neither is given.

    Example:
        >>> declaration_of(HumanEvalTests("t", "f", prompt="int f(){"))
        'int f(){'
    """
    text = spec.declaration or spec.prompt
    if not text.strip():
        raise TestsError("tests['declaration'] (or tests['prompt']) must give the function's declaration, "
                         "as HumanEval-X rows do.")
    return text


def last_name(pattern: re.Pattern[str], text: str, what: str) -> str:
    """The name the last match of ``pattern`` (group ``name``) finds in ``text``.

    Example:
        >>> last_name(re.compile(r"fn (?P<name>\\w+)"), "fn a() {}\\nfn b(", "Rust")
        'b'
    """
    found = list(pattern.finditer(text))
    if not found:
        raise TestsError(f"tests['declaration'] declares no {what} function I can find; give tests['entry_point'].")
    return found[-1].group("name")


def cut_entry(declaration: str, start: re.Pattern[str]) -> tuple[str, str]:
    """``declaration`` split where the entry point's unfinished definition starts (the last match of
    ``start``): (what comes before it, the definition's head).

    Example:
        >>> cut_entry("int g() { return 1; }\\nint f(int x){\\n", re.compile(r"int f\\("))
        ('int g() { return 1; }\\n', 'int f(int x){\\n')
    """
    found = list(start.finditer(declaration))
    if not found:
        raise TestsError("tests['declaration'] does not declare the entry point it names.")
    at = found[-1].start()
    line_start = declaration.rfind("\n", 0, at) + 1
    return declaration[:line_start], declaration[line_start:]


def with_declaration(program: str, declaration: str, defines: re.Pattern[str]) -> str:
    """The program as the harness compiles it: the model's text when it defines the entry point
    (it wrote the whole function), else ``declaration`` (the row's prompt where the language's
    evaluation uses it) followed by the text (it wrote the body, continuing the prompt, as
    HumanEval-X's own evaluation assembles it).

    Example:
        >>> with_declaration("    return 1;\\n}", "int f(){\\n", re.compile(r"\\bf\\s*\\("))
        'int f(){\\n    return 1;\\n}'
    """
    return program if defines.search(program) else declaration + program


def split_parameters(params: str) -> list[str]:
    """A parameter list split at its top-level commas (not those inside ``<>``, ``()`` or ``[]``).

    Example:
        >>> split_parameters("map<string, int> m, vector<pair<int, int>> v, ")
        ['map<string, int> m', 'vector<pair<int, int>> v']
    """
    depth, start, parts = 0, 0, []
    for at, char in enumerate(params):
        if char in "<([":
            depth += 1
        elif char in ">)]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(params[start:at])
            start = at + 1
    parts.append(params[start:])
    return [part.strip() for part in parts if part.strip()]
