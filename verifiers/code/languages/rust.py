"""Rust with rustc (``-O``, edition 2021). rustup's ``rustc`` in ``~/.cargo/bin`` is a proxy that
needs the user's home: the real compiler is the toolchain's, found once through the proxy, and its
folder is mounted read-only for the sandbox (``/root`` is hidden there). It links with the system's
C compiler, named by its real path (``/usr/bin/cc`` is an ``/etc/alternatives`` link). The crates the
judge is given (:mod:`..libraries`), built with this rustc, are mounted read-only beside it."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess

from ..libraries import crates_folder
from .base import Language, Toolchain, outside_system, search_path, version_line, which


def _sysroot(rustc: str) -> str | None:
    """The toolchain folder behind ``rustc`` (a rustup proxy asks rustup, which reads the home)."""
    try:
        home = pwd.getpwuid(os.getuid()).pw_dir
        done = subprocess.run([rustc, "--print", "sysroot"], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL, env={**os.environ, "HOME": home})  # a worker's HOME is its /tmp
    except (OSError, KeyError, subprocess.SubprocessError):
        return None
    root = done.stdout.strip()
    return root if done.returncode == 0 and os.path.isfile(os.path.join(root, "bin", "rustc")) else None


def _find(language: Language) -> Toolchain | None:
    """The real rustc of the default toolchain, and a C compiler to link with."""
    proxy = shutil.which("rustc", path=os.pathsep.join(search_path()))  # not resolved: rustup reads its argv[0]
    linker = which("cc") or which("gcc")
    if proxy is None or linker is None:
        return None
    root = _sysroot(proxy)
    if root is None:
        return None
    rustc = os.path.join(root, "bin", "rustc")
    version = version_line([rustc, "--version"])
    if not version:
        return None
    crates = crates_folder(version)  # the libraries the judge is given, built with this rustc, if any
    return Toolchain(language.name, {"rustc": rustc, "cc": linker}, version,
                     outside_system([root, linker, *([str(crates)] if crates.is_dir() else [])]))


LANGUAGE = Language(
    name="rust", title="Rust", tags=("rust", "rs"), source="main.rs", tools=("rustc", "cc"),
    compile=("{rustc}", "--edition", "2021", "-O", "-C", "linker={cc}", "-C", "debuginfo=0", "-C", "strip=symbols",
             "-C", "codegen-units=4", "-o", "main", "{source}"),  # stripped: 0.3 MB instead of 4, copied into every run
    run=("./main",), memory_markers=("memory allocation of",), find=_find,
)
