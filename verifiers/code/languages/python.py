"""Python, run as a plain process: for checkers and ``run_program``-style runs. Programs judged
in Python go through the warm fork server instead (:mod:`referee.verifiers.sandbox.job`)."""

from __future__ import annotations

import os
import sys

from .base import Language, Toolchain, version_line


def _find(language: Language) -> Toolchain | None:
    """This interpreter: the sandbox mounts it already."""
    python = os.path.realpath(sys.executable)
    return Toolchain(language.name, {"python": python}, version_line([python, "--version"]) or sys.version.split()[0])


LANGUAGE = Language(
    name="python", title="Python", tags=("python", "python3", "py", "py3"), source="main.py", tools=("python",),
    compile=None, run=("{python}", "-I", "-B", "{source}"), artifacts=("main.py",), memory_markers=("MemoryError",),
    find=_find,
)
