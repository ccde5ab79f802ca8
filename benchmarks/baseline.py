"""An earlier release beside this tree: run a benchmark's timing in a fresh process importing either one.

A benchmark that takes ``--baseline-src DIR`` (``benchmarks.gsm8k``, ``benchmarks.math``) times this
tree and the release checked out in ``DIR`` (for example ``git worktree add ../before 6b9d912^``)
in fresh processes, runs interleaved so that load from elsewhere hits both alike. Each process
imports ``referee`` from one source folder (its ``verifiers``, ``rewards`` and ``recipes`` folders,
as the installed package maps them) and the benchmark code from this tree.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_PACKAGES = ("verifiers", "rewards", "recipes")


def check_source(src: str) -> Path:
    """``src`` as a source folder of referee; raises ``SystemExit`` with one line when it is not one."""
    path = Path(src).resolve()
    if not (path / "verifiers" / "__init__.py").is_file():
        raise SystemExit(f"--baseline-src {src}: no verifiers/__init__.py there; give a checkout of a referee release")
    return path


def describe(src: Path) -> str:
    """The commit checked out in ``src`` (short hash and subject), or its folder name when it is no git checkout."""
    try:
        return subprocess.run(["git", "-C", str(src), "log", "-1", "--format=%h %s"], capture_output=True, text=True,
                              check=True).stdout.strip()[:90]
    except (OSError, subprocess.CalledProcessError):
        return src.name


@contextlib.contextmanager
def importing(src: Path) -> Iterator[dict[str, str]]:
    """The environment of a process whose ``referee`` is the one in ``src``, and whose ``benchmarks`` is this tree's."""
    with tempfile.TemporaryDirectory(prefix="referee-baseline-") as folder:
        package = Path(folder) / "referee"
        package.mkdir()
        for name in _PACKAGES:
            if (src / name).is_dir():
                (package / name).symlink_to(src / name, target_is_directory=True)
        yield {**os.environ, "PYTHONPATH": os.pathsep.join([folder, str(ROOT)])}


def run_module(module: str, args: list[str], src: Path) -> str:
    """The standard output of ``python -m module args`` in a fresh process importing referee from ``src``."""
    with importing(src) as env:
        return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, check=True,
                              env=env, cwd=ROOT).stdout


def measure_started(batch_path: str, workers: int, settle: float) -> float:
    """Seconds this process's referee takes for a maths batch once its pool is started (one sympy
    check) and has stood idle ``settle`` seconds; works on any release (it asks nothing of the pool)."""
    import json
    import logging
    import time

    from referee.verifiers import math as referee_math

    logging.disable(logging.WARNING)
    batch = json.loads(Path(batch_path).read_text())
    referee_math.verify(r"\boxed{x+1}", "1+x", workers=workers)
    time.sleep(settle)
    started = time.perf_counter()
    referee_math.verify_batch([c["completion"] for c in batch], [c["gold"] for c in batch], workers=workers)
    return time.perf_counter() - started


def main() -> None:
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--measure-started", metavar="BATCH", required=True, help="JSON list of {completion, gold}")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--settle", type=float, default=2.0, help="seconds the started pool stands idle first")
    args = parser.parse_args()
    print(json.dumps(measure_started(args.measure_started, args.workers, args.settle)))


if __name__ == "__main__":
    main()
