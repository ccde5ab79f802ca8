"""The YAML recipes and accelerate configs shipped in ``referee/recipes/configs``."""

from __future__ import annotations

from pathlib import Path

CONFIG_DIR = Path(__file__).resolve().parent / "configs"
_ACCELERATE_PREFIX = "accelerate_"


def shipped_recipes() -> list[Path]:
    """Every shipped training recipe (the accelerate configs left out), sorted.

    Example:
        >>> [path.name for path in shipped_recipes()][:2]
        ['code_qwen2.5-coder-1.5b_lora.yaml', 'gsm8k_qwen2.5-1.5b_full.yaml']
    """
    return sorted(path for path in CONFIG_DIR.glob("*.yaml") if not path.name.startswith(_ACCELERATE_PREFIX))


def accelerate_configs() -> list[Path]:
    """The shipped ``accelerate launch --config_file`` files (DDP, DeepSpeed ZeRO, FSDP).

    Example:
        >>> [path.name for path in accelerate_configs()]
        ['accelerate_ddp.yaml', 'accelerate_fsdp2.yaml', 'accelerate_zero2.yaml', 'accelerate_zero3.yaml']
    """
    return sorted(CONFIG_DIR.glob(f"{_ACCELERATE_PREFIX}*.yaml"))


def recipe_path(name_or_path: str) -> Path:
    """``name_or_path`` itself when it is a file, else the shipped recipe of that name (``.yaml`` optional).

    Example:
        >>> recipe_path("gsm8k_qwen2.5-1.5b_lora").name
        'gsm8k_qwen2.5-1.5b_lora.yaml'
        >>> recipe_path("nope")
        Traceback (most recent call last):
        ...
        ValueError: No recipe file 'nope' and no shipped recipe of that name; see referee train --list.
    """
    path = Path(name_or_path)
    if path.is_file():
        return path
    for candidate in (CONFIG_DIR / name_or_path, CONFIG_DIR / f"{name_or_path}.yaml"):
        if candidate.is_file() and not candidate.name.startswith(_ACCELERATE_PREFIX):
            return candidate
    raise ValueError(f"No recipe file {name_or_path!r} and no shipped recipe of that name; see referee train --list.")
