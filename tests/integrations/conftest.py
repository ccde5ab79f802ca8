"""Shared by the tests that run trainers' own code (``make test-integrations``).

* ``REFEREE_REQUIRE_INTEGRATIONS=1`` (set by ``make test-integrations``): a test or a module that
  skips fails the run instead, so a trainer that did not install (or a wrong PYTHONPATH) cannot
  pass as green. Without it, the modules skip where their trainer is missing (``make test``).
* ``documented``: the code blocks of docs/integrations.md, for the tests that run them as written
  (shell blocks in bash, the trainers' launchers and ``referee serve`` recorded for the test to run).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "integrations.md"
REQUIRE_ENV = "REFEREE_REQUIRE_INTEGRATIONS"
_FENCE = re.compile(r"^```(\w*)\s*$")
_skipped: list[str] = []


def prime_verifiers(version: str):
    """Prime Intellect's ``verifiers`` at ``version``, not this repository's own ``verifiers/`` folder
    (installed as ``referee.verifiers``), which ``python -m pytest`` puts first on ``sys.path`` with the
    repository root; the calling module is skipped where that release is not installed."""
    saved = sys.path[:]
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != ROOT]
    try:
        module = pytest.importorskip("verifiers")
    finally:
        sys.path[:] = saved
    if Path(module.__file__).resolve().parent == ROOT / "verifiers":
        pytest.skip("Prime Intellect's verifiers is not installed (only the repository's verifiers/ folder is found)",
                    allow_module_level=True)
    if getattr(module, "__version__", None) != version:
        pytest.skip(f"verifiers {version} is not installed (found {getattr(module, '__version__', None)})",
                    allow_module_level=True)
    return module


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language, code) of each fenced block of a Markdown page, in order."""
    blocks, language, lines = [], None, []
    for line in text.splitlines():
        fence = _FENCE.match(line.strip())
        if language is None and fence:
            language, lines = fence.group(1), []
        elif language is not None and line.strip() == "```":
            blocks.append((language, "\n".join(lines) + "\n"))
            language = None
        elif language is not None:
            lines.append(line)
    return blocks


# A documented shell block runs in bash as written, with the programs that would start a run or a server
# recorded instead of run: `python -m MODULE ARGS` (a trainer's launcher), `referee ARGS` (`referee serve`).
# Everything else runs: `export`, `$(openssl rand -hex 32)`, `$(python -c '...')` (this interpreter).
_RECORDER = r"""
record() {
  "$REFEREE_DOC_PYTHON" -c 'import json, os, sys
env = {k: v for k, v in os.environ.items() if k.startswith("REFEREE_") and not k.startswith("REFEREE_DOC_")}
print(json.dumps({"program": sys.argv[1], "argv": sys.argv[2:], "env": env}))' "$@" >> "$REFEREE_DOC_CALLS"
}
python() { if [ "${1:-}" = "-m" ]; then record "$2" "${@:3}"; else "$REFEREE_DOC_PYTHON" "$@"; fi; }
referee() { record referee "$@"; }
"""


@dataclass
class Call:
    """A command of a documented block that was recorded, not run: the program (``referee``, or the
    module after ``python -m``), its arguments as the shell passed them, and the ``REFEREE_*`` variables
    it would have seen."""

    program: str
    argv: list[str]
    env: dict[str, str]

    def option(self, name: str) -> str:
        """The value after ``name`` in ``argv``."""
        return self.argv[self.argv.index(name) + 1]


class Documented:
    """The code blocks of docs/integrations.md: ``find(needle)`` is the one block that contains ``needle``."""

    def __init__(self) -> None:
        self.blocks = code_blocks(DOC.read_text(encoding="utf-8"))

    def find(self, needle: str) -> str:
        found = [code for _, code in self.blocks if needle in code]
        assert len(found) == 1, f"{len(found)} code blocks of docs/integrations.md contain {needle!r} (one expected)"
        return found[0]

    def run(self, needle: str, tmp_path: Path) -> list[Call]:
        """Run the shell block that contains ``needle`` in bash (``set -euo pipefail``), the launchers recorded."""
        calls = tmp_path / "calls.jsonl"
        calls.unlink(missing_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("REFEREE_")}
        env.update(REFEREE_DOC_PYTHON=sys.executable, REFEREE_DOC_CALLS=str(calls))
        done = subprocess.run(["bash", "-c", "set -euo pipefail\n" + _RECORDER + self.find(needle)], env=env,
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"the documented block failed ({done.returncode}): {done.stderr}"
        return [Call(**json.loads(line)) for line in calls.read_text().splitlines()] if calls.exists() else []


@pytest.fixture(scope="session")
def documented() -> Documented:
    return Documented()


def _required() -> bool:
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


def pytest_collectreport(report):
    if _required() and report.skipped:
        _skipped.append(f"{report.nodeid}: {report.longrepr}")


def pytest_runtest_logreport(report):
    if _required() and report.skipped:
        _skipped.append(f"{report.nodeid}: {report.longrepr}")


def pytest_sessionfinish(session, exitstatus):
    if _skipped:
        print(f"\n{REQUIRE_ENV}=1: these skipped where the trainer must run:\n  " + "\n  ".join(_skipped))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
