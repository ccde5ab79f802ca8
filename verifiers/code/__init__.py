"""Code-execution verifier: run a completion's program in an isolated sandbox and judge it with
unit tests on the trusted side.

``verify(completion, tests, **options)`` and ``verify_batch(completions, tests_list, **options)``
take tests in four formats (``humaneval``, ``asserts``, ``call``, ``stdio``; see
:mod:`.formats`). The program runs in a job forked from a warm sandbox worker (own pid, mount and
network namespaces, made by bubblewrap or by referee itself, an unprivileged uid, rlimits, a fresh
folder, no network, where available); the test code runs in a separate trusted judge process that
calls into the job through a proxy carrying only plain data, so nothing the program does (exit
codes, printed markers, always-equal objects, monkeypatching, reading memory) can fake a pass. ``referee doctor`` shows the isolation level.
The sandbox itself (isolation levels, the fork server, limits, cleanup, the channel) is a package
of its own, :mod:`referee.verifiers.sandbox`; this one is the judge standing on it.

Programs in C++, C, Java, JavaScript, Rust and Go (:mod:`.languages`) are judged with ``stdio``
tests by :mod:`.native`: compiled once in a job of their own, run once per test, judged on CPU
time against the problem's ``time_limit`` and ``memory_limit``, by tokens or by a checker; with
HumanEval-X ``humaneval`` tests (C++, Java, JavaScript, Go, Rust) by :mod:`.humaneval_x`; and
with ``call`` tests (JavaScript) by :mod:`.call_tests`.

:class:`PythonSession` (:mod:`referee.verifiers.sandbox.cell_session`) runs a model's tool calls as
notebook cells, keeping their variables, in the same sandbox; it is re-exported here, with the
isolation levels.

Example:
    >>> from referee.verifiers import code
    >>> code.verify("```python\\ndef f(x):\\n    return x + 1\\n```",
    ...             {"format": "asserts", "asserts": ["assert f(1) == 2"]}).status
    'correct'
"""

from ..sandbox import (LEVELS, CellLimits, CellResult, Isolation, PythonSession, available_isolation, exposures,
                       resolve_isolation)
from .doctor import sandbox_check
from .extract import extract_code
from .formats import FORMATS
from .grading import verify, verify_batch
from .languages import LANGUAGES, find_toolchain, language_of_tag
from .run import ProgramRun, run_program

# The face: judging (verify, verify_batch), running one program (run_program: Sandbox Fusion's
# /run_code), a stateful Python session for tools (PythonSession), and what referee doctor reports
# (isolation levels, the sandbox check, toolchains).
__all__ = ["FORMATS", "LANGUAGES", "LEVELS", "CellLimits", "CellResult", "Isolation", "ProgramRun", "PythonSession",
           "available_isolation", "exposures", "extract_code", "find_toolchain", "language_of_tag", "resolve_isolation",
           "run_program", "sandbox_check", "verify", "verify_batch"]
