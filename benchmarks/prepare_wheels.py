"""Wheels to carry to a GPU machine with no network, for ``benchmarks/gpu_check_device.sh``.

The lent H200 machine has Python 3.12 with PyTorch, transformers, peft, accelerate, pandas,
pyarrow, pytest, sympy and PyYAML, but not TRL, datasets or math-verify. This downloads the
pinned TRL and what referee needs that the machine lacks, plus transformers and peft, at the
versions installed here (the ones the tests ran with), as wheels for that Python, without
dependencies, and checks that they and the working tree fit in what a call may carry (64 MiB).

    python -m benchmarks.prepare_wheels                  # into runs/wheels/, for CPython 3.12 on x86-64 Linux
    python -m benchmarks.prepare_wheels --add pyarrow==24.0.0   # one more, if the machine's is too old

Exits 1, naming the largest wheels, when the total is over the budget.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIB = 1024 * 1024
BUDGET_MIB = 64
# What the machine lacks (its package list: /work/.library/device/KINDS.md at the time of
# writing): TRL and datasets' own needs that are not there, math-verify and its parser.
MISSING = ("trl", "datasets", "dill", "multiprocess", "math-verify", "latex2sympy2_extended",
           "antlr4-python3-runtime")
# There, but carried at the versions tested here: the machine's transformers (5.17 when last
# seen) may predate what the recipes use (`activation_checkpointing`), and peft goes with it.
MATCHED = ("transformers", "peft")
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux1_x86_64")


def pinned(names: tuple[str, ...] = MISSING + MATCHED) -> list[str]:
    """``name==version`` for each package, at the version installed here (TRL at referee's pin).

    Example:
        >>> pinned(("trl", "dill"))[0]
        'trl==1.16.0'
    """
    from referee.recipes.train.trl_version import PINNED_TRL_VERSION

    requirements = []
    for name in names:
        version = PINNED_TRL_VERSION if name == "trl" else metadata.version(name)
        requirements.append(f"{name}=={version}")
    return requirements


def download_command(requirements: list[str], dest: Path, python_version: str = "3.12") -> list[str]:
    """The ``pip download`` command for ``requirements``: binary wheels only, no dependencies,
    for CPython ``python_version`` on x86-64 Linux.

    Example:
        >>> command = download_command(["trl==1.16.0"], Path(".whl"))
        >>> command[3:6], command[-1]
        (['download', '--no-deps', '--only-binary=:all:'], 'trl==1.16.0')
    """
    platforms = [argument for platform in PLATFORMS for argument in ("--platform", platform)]
    return [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "--python-version", python_version, "--implementation", "cp", *platforms,
            "--dest", str(dest), *requirements]


def tree_bytes(root: Path = ROOT) -> int:
    """Bytes of the files git tracks under ``root`` (what travels besides carried paths).

    Example:
        >>> tree_bytes() > 0
        True
    """
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    return sum((root / name).stat().st_size for name in listed.decode().split("\0")
               if name and (root / name).is_file())


def budget_problem(wheels: list[Path], tree: int, budget_mib: float = BUDGET_MIB) -> str | None:
    """None when ``wheels`` and a ``tree`` of that many bytes fit in ``budget_mib``; else why not.

    Example:
        >>> import tempfile
        >>> wheel = Path(tempfile.mkdtemp()) / "big-1.0-py3-none-any.whl"
        >>> _ = wheel.write_bytes(b"0" * 3 * MIB)
        >>> budget_problem([wheel], tree=MIB, budget_mib=8) is None
        True
        >>> print(budget_problem([wheel], tree=MIB, budget_mib=3))
        wheels 3.0 MiB + working tree 1.0 MiB = 4.0 MiB, over the 3 MiB a call carries; largest: big-1.0-py3-none-any.whl 3.0 MiB
    """
    sizes = sorted(((path.stat().st_size, path.name) for path in wheels), reverse=True)
    total = sum(size for size, _ in sizes)
    if total + tree <= budget_mib * MIB:
        return None
    largest = ", ".join(f"{name} {size / MIB:.1f} MiB" for size, name in sizes[:3])
    return (f"wheels {total / MIB:.1f} MiB + working tree {tree / MIB:.1f} MiB = {(total + tree) / MIB:.1f} MiB, "
            f"over the {budget_mib:g} MiB a call carries; largest: {largest}")


def main(argv: list[str] | None = None) -> int:
    """Download the wheels, then check the budget; 0 when they fit."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", default=str(ROOT / "runs" / "wheels"),
                        help="folder for the wheels (default runs/wheels, which git ignores)")
    parser.add_argument("--python-version", default="3.12", help="the machine's Python (default 3.12)")
    parser.add_argument("--add", action="append", default=[], metavar="NAME==VERSION",
                        help="one more wheel to carry (repeatable)")
    parser.add_argument("--budget-mib", type=float, default=BUDGET_MIB, help=f"what a call carries (default {BUDGET_MIB})")
    args = parser.parse_args(argv)
    dest = Path(args.dest)
    dest.mkdir(parents=True, exist_ok=True)
    requirements = pinned() + args.add
    subprocess.run(download_command(requirements, dest, args.python_version), check=True)
    wheels = sorted(dest.glob("*.whl"))
    problem = budget_problem(wheels, tree_bytes())
    if problem:
        print(f"prepare_wheels: {problem}; carry fewer (--add only what the machine lacks).", file=sys.stderr)
        return 1
    total = sum(path.stat().st_size for path in wheels) / MIB
    print(f"{len(wheels)} wheels, {total:.1f} MiB, in {dest}: name it in carry and run benchmarks/gpu_check_device.sh")
    return 0


if __name__ == "__main__":
    sys.exit(main())
