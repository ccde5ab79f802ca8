"""HumanEval-X's own harness, each toolchain called directly (no referee, no sandbox): the reference a
verdict of referee's judge is compared with in ``benchmarks.code --humaneval-x``.

A row's program is put together as CodeGeeX's ``codegeex/benchmark/humaneval-x`` evaluation puts it
together (``process_humaneval_test``) and run as its ``execution.py`` runs it: Python ``exec``s the
import helper, the prompt, the program and the test; C++ is built with ``g++ -std=c++11`` (OpenSSL
linked) and run; Java with ``javac`` and ``java -ea``; JavaScript with ``node`` (anything on stderr is a
failure, as ``console.assert`` only prints; the npm packages the judge is given on ``NODE_PATH``); Go with
``go test`` against testify (Debian's
golang-github-stretchr-testify-dev, in GOPATH mode); Rust with ``rustc --test`` and the crates the judge
is given, then the test binary. Passed means the run ended with status 0 within the time limit.

Only the dataset's programs and mutants of them run here (trusted code, as in ``--languages``' plain
toolchain baseline); a model's programs belong in referee's sandbox.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

from referee.verifiers.code.builds import first_error_lines
from referee.verifiers.code.humaneval_x import cpp, go
from referee.verifiers.code.languages import find_toolchain
from referee.verifiers.code.libraries import crates_folder, node_modules, rust_extern_args

# codegeex/benchmark/utils.py: IMPORT_HELPER
PYTHON_IMPORTS = ("import math", "import re", "import sys", "import copy", "import datetime", "import itertools",
                  "import collections", "import heapq", "import statistics", "import functools", "import hashlib",
                  "import string", "from typing import *", "from collections import *")
GO_PATH = "/usr/share/gocode"  # Debian's Go sources (testify)


def harness_sources(row: dict, language: str, body: str) -> dict[str, str]:
    """The files HumanEval-X's evaluation writes for ``body`` (the code after the row's prompt; Rust: after
    its declaration).

    Example:
        >>> row = {"prompt": "const inc = (x) => {\\n", "test": "console.assert(inc(1) === 2)\\n"}
        >>> harness_sources(row, "javascript", "  return x + 1\\n}\\n")
        {'main.js': 'const inc = (x) => {\\n  return x + 1\\n}\\n\\nconsole.assert(inc(1) === 2)\\n'}
    """
    prompt, test = row["prompt"], row["test"]
    if language == "python":
        kept = []
        for line in body.split("\n"):  # the evaluation keeps the body's indented lines only
            if line.strip() and line[0] not in " \t":
                break
            kept.append(line)
        return {"main.py": "\n".join(PYTHON_IMPORTS) + "\n" + prompt + "\n".join(kept) + "\n" + test + "\n"}
    if language == "cpp":
        setup = "".join(line + "\n" for line in ("using namespace std;", *cpp.IMPORT_HELPER) if line not in prompt)
        return {"main.cpp": setup + "\n" + prompt + body + "\n" + test}
    if language == "java":
        return {"Main.java": prompt + body + "\n" + test}
    if language == "javascript":
        return {"main.js": prompt + body + "\n" + test}
    if language == "go":
        others = [f'"{name}"' for name in go.IMPORT_HELPER  # the packages the body names, as text (so "operand." is rand)
                  if name not in row["test_setup"] and name.rsplit("/", 1)[-1] + "." in body]
        imports = "import (\n" + "    ".join(name + "\n" for name in others) + ")" if others else ""
        return {"main_test.go": row["test_setup"] + "\n" + imports + "\n" + prompt.replace(row["import"], "") + body
                + "\n" + test}
    if language == "rust":
        return {"main.rs": "\nfn main(){ \n } \n" + row["declaration"] + prompt + body + test}
    raise ValueError(f"language {language!r} has no HumanEval-X harness here")


def _commands(language: str) -> list[list[str]]:
    toolchain = find_toolchain(language)
    assert toolchain is not None, language
    tools = toolchain.tools
    if language == "python":
        return [[tools["python"], "main.py"]]
    if language == "cpp":
        return [[tools["g++"], "-std=c++11", "main.cpp", "-o", "main", "-lcrypto", "-lssl"], ["./main"]]
    if language == "java":
        return [[tools["javac"], "Main.java"], [tools["java"], "-ea", "Main"]]
    if language == "javascript":
        return [[tools["node"], "main.js"]]
    if language == "go":
        return [[tools["go"], "test", "-c", "-o", "tests", "main_test.go"], ["./tests"]]
    externs = rust_extern_args(crates_folder(toolchain.version))
    return [[tools["rustc"], "--edition", "2021", "--test", "-C", f"linker={tools['cc']}", *externs, "-o", "tests",
             "main.rs"], ["./tests"]]


def harness_passes(row: dict, language: str, body: str, timeout: float) -> tuple[bool, str]:
    """Whether ``body`` passes the row's test in HumanEval-X's own harness, and how it ended (a failure's
    first line).

    Example:
        >>> row = {"prompt": "def inc(x):\\n", "test": "def check(inc):\\n    assert inc(1) == 2\\ncheck(inc)"}
        >>> harness_passes(row, "python", "    return x + 1\\n", 10.0)
        (True, 'passed')
        >>> harness_passes(row, "python", "    return x\\n", 10.0)[0]
        False
    """
    environment = {**os.environ, "GO111MODULE": "off", "GOPATH": GO_PATH, "GOFLAGS": "",
                   "NODE_PATH": str(node_modules() or "")}
    with tempfile.TemporaryDirectory(prefix="referee-harness-") as folder:
        for name, text in harness_sources(row, language, body).items():
            Path(folder, name).write_text(text)
        for step, command in enumerate(_commands(language)):
            built = step == 0 and len(_commands(language)) > 1
            try:
                done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=environment,
                                      timeout=300 if built else timeout)
            except subprocess.TimeoutExpired:
                return False, "timed out"
            said = done.stderr.strip() if language == "javascript" else ""
            if done.returncode != 0 or said:
                output = first_error_lines(done.stderr) if built else (done.stderr or done.stdout)
                lines = [line for line in output.strip().splitlines() if line.strip()]
                return False, ("does not build: " if built else f"exit {done.returncode}: ") + (lines[0][:160] if lines else "")
    return True, "passed"


# Each a change of behaviour a wrong answer makes: the first place one applies is changed.
MUTATIONS = ((r"<=", "<"), (r">=", ">"), (r"(?<![<>=!&|-])<(?![<=])(?=\s*[\w(])", "<="), (r"\+ 1\b", "+ 2"),
             (r"- 1\b", "- 2"), (r"==", "!="), (r" \+ ", " - "), (r" - ", " + "), (r"\btrue\b", "false"),
             (r"\bTrue\b", "False"), (r"\bfalse\b", "true"), (r"\bFalse\b", "True"), (r"\breturn 0\b", "return 1"),
             (r"\b1\b", "2"), (r"\b0\b", "1"))


def mutants(body: str, count: int) -> list[str]:
    """Up to ``count`` distinct bodies that each change one thing of ``body`` (the first match of each of
    :data:`MUTATIONS` in turn).

    Example:
        >>> mutants("    return a <= b + 1\\n", 2)
        ['    return a < b + 1\\n', '    return a <= b + 2\\n']
    """
    found: list[str] = []
    for pattern, replacement in MUTATIONS:
        changed = re.sub(pattern, replacement, body, count=1)
        if changed != body and changed not in found:
            found.append(changed)
        if len(found) == count:
            break
    return found
