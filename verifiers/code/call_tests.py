"""The ``call`` format in languages beyond Python: JSON arguments into the job, a JSON result back
to the trusted side, which compares it with the expected output (as for Python's ``call`` tests).

Only JavaScript takes it (node reads and writes JSON natively; typed languages would need a
declared signature to convert to). Each input is a job of its own: a trusted runner reads the
request (the arguments and a framing key) from stdin before any of the program runs, so the
program finds stdin empty; it compiles the program apart (:func:`vm.compileFunction` of its text
as a string), calls the function, awaits a promise, and prints the key and ``JSON.stringify`` of
the result. The program never sees the expected output, and nothing it prints or returns is
trusted but as data: the result is parsed with :func:`json.loads` into plain values and compared
here.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from ..sandbox.sandbox import Sandbox
from .builds import build, outcome, run_built
from .formats import CallTests
from .languages import Language, Toolchain
from .outputs import call_output_matches, short_repr
from .problem_limits import ProblemLimits

_JAVASCRIPT = """\
const refereeFs = require('fs');
const refereeWrite = refereeFs.writeSync;
const refereeRequest = JSON.parse(refereeFs.readFileSync(0, 'utf8'));
(async () => {
  const module = { exports: {} };
  const body = PROGRAM + "\\n;return typeof NAME === 'undefined' ? (module.exports.NAME || module.exports) : NAME;";
  const candidate = require('vm').compileFunction(body, ['require', 'module', 'exports'],
                                                  { filename: 'solution.js' })(require, module, module.exports);
  if (typeof candidate !== 'function') throw new TypeError('the program defines no function NAME');
  let result = candidate(...refereeRequest.args);
  if (result !== null && typeof result === 'object' && typeof result.then === 'function') result = await result;
  const text = JSON.stringify(result === undefined ? null : result);
  refereeWrite(1, '\\n' + refereeRequest.key + ' ' + (text === undefined ? 'null' : text) + '\\n');
})().catch((error) => { process.stderr.write(String(error) + '\\n'); process.exit(1); });
"""
CALL_RUNNERS = {"javascript": _JAVASCRIPT}


def runner_source(language: str, program: str, fn_name: str) -> str:
    """The trusted runner of ``language`` with ``program`` embedded as a string.

    Example:
        >>> source = runner_source("javascript", "const f = (x) => x + 1;", "f")
        >>> '"const f = (x) => x + 1;"' in source, "typeof f === 'undefined'" in source
        (True, True)
    """
    return CALL_RUNNERS[language].replace("NAME", fn_name).replace("PROGRAM", json.dumps(program))


def read_result(stdout: str, key: str) -> tuple[bool, Any]:
    """(found, value): the result the runner printed after ``key`` on the last such line.

    Example:
        >>> read_result("debug\\nk1 [1, 2]\\n", "k1"), read_result("k2 [1]", "k1")
        ((True, [1, 2]), (False, None))
    """
    for line in reversed(stdout.splitlines()):
        if line.startswith(key + " "):
            try:
                return True, json.loads(line[len(key) + 1:])
            except (ValueError, RecursionError):
                return False, None
    return False, None


def judge_calls(sandbox: Sandbox, task: dict[str, Any], spec: CallTests, language: Language, toolchain: Toolchain,
                limits: ProblemLimits) -> tuple[list[dict[str, Any]], int]:
    """Each input as a job of its own, its result compared on the trusted side: (outcomes, jobs).

    Judged programs are in ``tests/verifiers/test_code_humaneval_x.py``; the runner's side is
    :func:`runner_source` and :func:`read_result`.
    """
    source = runner_source(language.name, task["code"], spec.fn_name)
    program = build(sandbox, language, toolchain, source)
    task["build"] = "cached" if program.cached else "compiled"
    if not program.ok:
        return [outcome("CE", f"compile error: {program.message}")] * len(spec.inputs), 1
    abs_tol, rel_tol = float(task.get("abs_tol", 0.0)), float(task.get("rel_tol", 0.0))
    outcomes = []
    for args, expected in zip(spec.inputs, spec.outputs):
        key = secrets.token_hex(16)
        run = run_built(sandbox, language, toolchain, source, program, json.dumps({"key": key, "args": list(args)}),
                        limits, output_bytes=int(task.get("output_bytes", 4 << 20)))
        call = f"{spec.fn_name}({short_repr(list(args))[1:-1]})"
        if run.verdict != "OK":
            outcomes.append(outcome(run.verdict, f"{run.reason} in {call}", run.cpu_seconds))
            continue
        found, got = read_result(run.stdout, key)
        if not found:
            outcomes.append(outcome("WA", f"{call} returned nothing the judge could read", run.cpu_seconds))
        elif call_output_matches(got, expected, abs_tol=abs_tol, rel_tol=rel_tol):
            outcomes.append(outcome("OK", "passed", run.cpu_seconds))
        else:
            outcomes.append(outcome("WA", f"{call} returned {short_repr(got)}, expected {short_repr(expected)}",
                                     run.cpu_seconds))
    return outcomes, 1 + len(spec.inputs)
