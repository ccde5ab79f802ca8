"""HumanEval-X function tests in C++, Java, JavaScript, Go and Rust: the dataset's test code is
compiled with the program, and a trusted harness in the same binary decides what the run reports.

Test and program share one process, so the exit status and anything printed are the program's to
forge. The judge therefore makes a fresh random key for every run and gives it on the run's stdin;
the harness (one module per language here) runs the test code first, and only when it returns
without a failed check reads the key and prints it. A run counts as passed when it ended cleanly
and its stdout holds the key on a line of its own. Exiting early, crashing, printing a success
marker, or replacing the test's assertions within the language (macros, overloads, monkeypatched
globals, shadowed classes, always-equal objects, symbols the test would link to) never prints the
key: each language's module says what it closes and how. What this cannot rule out is a program
written against this harness (reading the key from stdin itself, or rewriting the test in memory):
nothing in one process is hidden from the rest of it. Where that matters, judge with ``stdio``
tests, or with the ``call`` format where the language has one, in which the program never shares
a process with the judge.
"""

from __future__ import annotations

import dataclasses
import secrets
from typing import Any

from ..builds import build, outcome, run_built
from ..formats import HumanEvalTests
from ..languages import Language, Toolchain
from ..problem_limits import ProblemLimits
from ...sandbox.sandbox import Sandbox
from . import cpp, go, java, javascript, rust
from .base import Assembly, ProgramRefused

ASSEMBLERS = {"cpp": cpp.assemble, "java": java.assemble, "javascript": javascript.assemble, "go": go.assemble,
              "rust": rust.assemble}


def assembly_language(language: Language, assembly: Assembly) -> Language:
    """``language`` building and running ``assembly`` instead of one plain source file.

    Example:
        >>> from referee.verifiers.code.languages import LANGUAGES
        >>> built = Assembly({"main.js": "x"}, "main.js", None, ("{node}", "main.js"), ("main.js",))
        >>> assembly_language(LANGUAGES["javascript"], built).files(None, "x")
        {'source': 'main.js'}
    """
    names = {"source": assembly.main, **dict(assembly.names)}
    return dataclasses.replace(language, compile=assembly.compile, run=assembly.run, artifacts=assembly.artifacts,
                               files=lambda _language, _code: names)


def judge_function_tests(sandbox: Sandbox, task: dict[str, Any], spec: HumanEvalTests, language: Language,
                         toolchain: Toolchain, limits: ProblemLimits) -> list[dict[str, Any]]:
    """Build the program with its test and run it once with a fresh key: one outcome.

    Raises :class:`~referee.verifiers.code.formats.TestsError` for a declaration or test the
    harness cannot use (the dataset's fault).

    Example (a program refused before anything is built; programs that run are judged in
    ``tests/verifiers/test_code_humaneval_x.py``):
        >>> from referee.verifiers.sandbox.isolation import isolation_of
        >>> from referee.verifiers.code.languages import LANGUAGES
        >>> spec = HumanEvalTests("public class Main { public static void main(String[] a) { Arrays.asList(1); } }", "",
        ...                       declaration="class Solution {\\n    public int f() {\\n")
        >>> program = "class Arrays { }\\nclass Solution { public int f() { return 1; } }"
        >>> judge_function_tests(Sandbox(isolation_of("basic"), uid=None), {"code": program}, spec,
        ...                      LANGUAGES["java"], None, ProblemLimits(3.0, 256))[0]["reason"]
        'refused: the program declares a type named Arrays, a name the test code uses for its own'
    """
    try:
        assembly = ASSEMBLERS[language.name](task["code"], spec)
    except ProgramRefused as exc:
        task["build"] = "none"
        return [outcome("WA", f"refused: {exc}")]
    task["assembled"] = assembly.details
    built_language = assembly_language(language, assembly)
    program = build(sandbox, built_language, toolchain, assembly.main_text, assembly.others)
    task["build"] = "cached" if program.cached else "compiled" if assembly.compile is not None else "none"
    if not program.ok:
        return [outcome("CE", f"compile error: {program.message}")]
    assert program.files is not None
    refusal = assembly.inspect(program.files) if assembly.inspect is not None else None
    if refusal is not None:
        return [outcome("WA", f"refused: {refusal}")]
    needed = {name: data for name, data in program.files.items() if not name.endswith(".o")}  # objects: inspect only
    key = secrets.token_hex(16)
    run = run_built(sandbox, built_language, toolchain, assembly.main_text, dataclasses.replace(program, files=needed),
                    key + "\n", limits, output_bytes=int(task.get("output_bytes", 4 << 20)))
    reached_end = key in (line.strip() for line in run.stdout.splitlines())
    if run.verdict == "OK" and reached_end:
        return [outcome("OK", "passed", run.cpu_seconds)]
    if run.verdict in ("TLE", "MLE", "OLE"):
        return [outcome(run.verdict, run.reason, run.cpu_seconds)]
    if run.verdict == "RE":
        return [outcome("WA", f"a check of the test failed, or the program crashed: the run {run.reason}",
                         run.cpu_seconds)]
    return [outcome("WA", "the test code did not run to its end (the run ended without printing the judge's key: "
                           "the program stopped it early)", run.cpu_seconds)]


__all__ = ["ASSEMBLERS", "Assembly", "ProgramRefused", "assembly_language", "judge_function_tests"]
