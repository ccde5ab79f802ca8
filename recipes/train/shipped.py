"""The YAML recipes and accelerate configs shipped in ``referee/recipes/configs``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs"
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
        >>> [path.name for path in accelerate_configs()]  # doctest: +NORMALIZE_WHITESPACE
        ['accelerate_ddp.yaml', 'accelerate_fsdp2.yaml', 'accelerate_zero2.yaml', 'accelerate_zero2_offload.yaml',
         'accelerate_zero3.yaml']
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


@dataclass(frozen=True)
class RecipeSummary:
    """What a recipe trains, in the words of ``referee train --list``: its name, model, data and rewards.

    Example:
        >>> summary = summarize_recipe(recipe_path("gsm8k_qwen2.5-1.5b_lora"))
        >>> summary.name, summary.model, summary.data
        ('gsm8k_qwen2.5-1.5b_lora', 'Qwen/Qwen2.5-1.5B-Instruct, LoRA r=16', 'openai/gsm8k (main)')
        >>> summary.rewards
        'gsm8k_accuracy (1), gsm8k_format (0.1)'
    """

    name: str
    model: str
    data: str
    rewards: str


def summarize_recipe(path: str | Path) -> RecipeSummary:
    """The :class:`RecipeSummary` of the recipe file at ``path``, read as the file writes it (no TRL import).

    The model is ``model_name_or_path`` with ``full`` or ``LoRA r=N``; the data is ``dataset_name``
    with its ``dataset_config``; each reward is named as TRL logs it (an entry's ``options.name``
    when it sets one) with its weight (``reward_weights``, an entry's ``weight``, else 1).

    Example:
        >>> import tempfile
        >>> recipe = Path(tempfile.mkdtemp()) / "mine.yaml"
        >>> _ = recipe.write_text("model_name_or_path: runs/demo/model\\ndataset_name: sums.jsonl\\n"
        ...                       "reward_funcs:\\n  - {name: regex_format, weight: 0.2, options: {name: boxed}}\\n")
        >>> summarize_recipe(recipe)
        RecipeSummary(name='mine', model='runs/demo/model, full', data='sums.jsonl', rewards='boxed (0.2)')
    """
    import yaml

    path = Path(path)
    keys = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    model = f"{keys.get('model_name_or_path')}, " + (f"LoRA r={keys.get('lora_r', 16)}" if keys.get("use_peft") else "full")
    data = str(keys.get("dataset_name")) + (f" ({keys['dataset_config']})" if keys.get("dataset_config") else "")
    entries = keys.get("reward_funcs") or ["gsm8k_accuracy"]  # RecipeArguments' default
    weights = keys.get("reward_weights") or [_entry_weight(entry) for entry in entries]
    rewards = ", ".join(f"{_entry_name(entry)} ({weight:g})" for entry, weight in zip(entries, weights))
    return RecipeSummary(path.stem, model, data, rewards)


def _entry_name(entry: Any) -> str:
    if isinstance(entry, dict):
        return str((entry.get("options") or {}).get("name") or entry.get("name"))
    return str(entry)


def _entry_weight(entry: Any) -> float:
    return float(entry.get("weight", 1.0)) if isinstance(entry, dict) else 1.0


def recipe_table(paths: list[Path] | None = None) -> str:
    """The table ``referee train --list`` prints: one line per recipe (default: the shipped ones).

    Example:
        >>> print(recipe_table([recipe_path("gsm8k_qwen2.5-1.5b_full"), recipe_path("math_qwen2.5-1.5b_lora")]))
        ... # doctest: +ELLIPSIS
        recipe                   model                                  data                                rewards (weight)
        gsm8k_qwen2.5-1.5b_full  Qwen/Qwen2.5-1.5B-Instruct, full       openai/gsm8k (main)                 gsm8k_accuracy (1), gsm8k_format (0.1)
        math_qwen2.5-1.5b_lora   Qwen/Qwen2.5-1.5B-Instruct, LoRA r=16  DigitalLearningGmbH/MATH-lighteval  math_accuracy (1), boxed_format (0.1)
        referee train NAME --dry-run prints a recipe resolved in full; the files are in .../configs
    """
    rows = [("recipe", "model", "data", "rewards (weight)")]
    rows += [(s.name, s.model, s.data, s.rewards) for s in map(summarize_recipe, shipped_recipes() if paths is None else paths)]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[3] for row in rows]
    return "\n".join(lines + [f"referee train NAME --dry-run prints a recipe resolved in full; the files are in {CONFIG_DIR}"])
