"""What ``referee plan`` reads from a recipe: the GRPO settings that decide memory and tokens.

A recipe is the YAML file ``referee train`` takes, with TRL's key names
(``per_device_train_batch_size``, ``num_generations``, ``use_peft``, ``deepspeed``, ...).
Keys it does not need are ignored; keys it needs but the recipe leaves out take the values
``referee train`` gives them (TRL 1.16's ``GRPOConfig`` / ``ModelConfig`` defaults), and
the plan lists them as assumed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

# What `referee train` uses for the keys the plan reads when a recipe leaves them out: the
# defaults of TRL 1.16's GRPOConfig and ModelConfig, which it parses recipes into. A test
# checks them against `referee train`'s parser, so a change there fails loudly.
RECIPE_DEFAULTS: dict[str, Any] = {
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 1,
    "num_generations": 8,
    "max_completion_length": 512,
    "beta": 0.0,
    "num_iterations": 1,
    "steps_per_generation": None,
    "generation_batch_size": None,
    "use_vllm": False,
    "vllm_mode": "colocate",
    "vllm_gpu_memory_utilization": 0.3,
    "vllm_enable_sleep_mode": False,
    "use_peft": False,
    "lora_r": 16,
    "lora_target_modules": None,
    "lora_modules_to_save": None,
    "use_dora": False,
    "load_in_4bit": False,
    "load_in_8bit": False,
    "deepspeed": None,
    "fsdp": None,
    "fsdp_config": None,
    "model_name_or_path": None,
    "dtype": "float32",
    "max_tool_calling_iterations": None,
}
# Not a GRPOConfig field in TRL 1.16; recipes may still set it for their dataset loader.
_EXTRA_KEYS = ("max_prompt_length", "dynamic_sampling", "python_tool")
_BOOL_KEYS = {"use_vllm", "vllm_enable_sleep_mode", "use_peft", "use_dora", "load_in_4bit", "load_in_8bit"}
# Off unless a recipe turns them on: not worth listing as assumed.
_OPT_IN_FLAGS = {"vllm_enable_sleep_mode", "use_dora", "load_in_4bit", "load_in_8bit"}
_FLOAT_KEYS = {"beta", "vllm_gpu_memory_utilization"}
_COUNT_KEYS = {"per_device_train_batch_size", "gradient_accumulation_steps", "num_generations",
               "max_completion_length", "num_iterations", "steps_per_generation", "generation_batch_size",
               "lora_r", "max_prompt_length", "max_tool_calling_iterations"}


@dataclass(frozen=True)
class RecipeSettings:
    """The recipe values a plan needs, with ``referee train``'s defaults for those a recipe leaves out.

    Example:
        >>> settings = RecipeSettings.from_dict({"num_generations": 4, "learning_rate": 1e-6})
        >>> settings.num_generations, settings.per_device_train_batch_size, settings.assumed[:2]
        (4, 8, ('per_device_train_batch_size', 'gradient_accumulation_steps'))
    """

    per_device_train_batch_size: int
    gradient_accumulation_steps: int
    num_generations: int
    max_completion_length: int
    beta: float
    num_iterations: int
    steps_per_generation: int | None
    generation_batch_size: int | None
    use_vllm: bool
    vllm_mode: str
    vllm_gpu_memory_utilization: float
    vllm_enable_sleep_mode: bool
    use_peft: bool
    lora_r: int
    lora_target_modules: str | list[str] | None
    lora_modules_to_save: list[str] | None
    use_dora: bool
    load_in_4bit: bool
    load_in_8bit: bool
    deepspeed: str | dict[str, Any] | None
    fsdp: bool | str | list[str] | None
    fsdp_config: str | dict[str, Any] | None
    model_name_or_path: str | None
    dtype: str
    max_tool_calling_iterations: int | None
    max_prompt_length: int | None = None
    dynamic_sampling: dict[str, Any] | None = None
    python_tool: dict[str, Any] | None = None
    assumed: tuple[str, ...] = field(default=(), compare=False)
    base_dir: Path = field(default=Path("."), compare=False)

    @classmethod
    def from_dict(cls, recipe: dict[str, Any], *, base_dir: str | Path = ".") -> RecipeSettings:
        """Settings from a recipe dict; ``base_dir`` is where relative config paths start.

        Example:
            >>> RecipeSettings.from_dict({"beta": 0.04}).beta
            0.04
        """
        values: dict[str, Any] = {}
        assumed = []
        for key, default in RECIPE_DEFAULTS.items():
            if key in recipe and recipe[key] is not None:
                values[key] = _checked(key, recipe[key])
            else:
                values[key] = default
                if default is not None and key not in _OPT_IN_FLAGS:
                    assumed.append(key)
        for key in _EXTRA_KEYS:
            values[key] = _checked(key, recipe[key]) if recipe.get(key) is not None else None
        return cls(**values, assumed=tuple(assumed), base_dir=Path(base_dir))

    @classmethod
    def from_yaml(cls, path: str | Path, overrides: dict[str, Any] | None = None) -> RecipeSettings:
        """Settings from a recipe YAML file, with ``overrides`` on top.

        Example:
            >>> import tempfile
            >>> from pathlib import Path
            >>> recipe = Path(tempfile.mkdtemp()) / "r.yaml"
            >>> _ = recipe.write_text("num_generations: 16\\nuse_vllm: true\\n")
            >>> RecipeSettings.from_yaml(recipe, {"num_generations": 4}).num_generations
            4
        """
        path = Path(path)
        try:
            recipe = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise ValueError(f"cannot read the recipe {str(path)!r} ({exc}); give a readable YAML file.") from None
        if recipe is None:
            recipe = {}
        if not isinstance(recipe, dict):
            raise ValueError(f"the recipe {str(path)!r} is not a mapping of keys to values; write it as 'key: value' lines.")
        return cls.from_dict({**recipe, **(overrides or {})}, base_dir=path.parent)


def _checked(key: str, value: Any) -> Any:
    """``value`` if it suits ``key``, else a clear error."""
    if key in _BOOL_KEYS and not isinstance(value, bool):
        raise ValueError(f"recipe key {key}={value!r} is not true or false; write it like {key}: true.")
    if key in _COUNT_KEYS and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"recipe key {key}={value!r} is not a positive integer; write it like {key}: 8.")
    if key in _FLOAT_KEYS and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
        raise ValueError(f"recipe key {key}={value!r} is not a non-negative number; write it like {key}: 0.04.")
    if key == "vllm_gpu_memory_utilization" and not 0 < value <= 1:
        raise ValueError(f"vllm_gpu_memory_utilization={value} is not a share of the card; use a number in (0, 1].")
    if key == "dtype" and value not in ("auto", "bfloat16", "float16", "float32"):
        raise ValueError(f"dtype={value!r} is not one of auto, bfloat16, float16, float32 (TRL's ModelConfig choices).")
    if key == "dynamic_sampling":
        value = {} if value is True else value
        rounds = value.get("max_rounds", 3) if isinstance(value, dict) else None
        if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1:
            raise ValueError(f"dynamic_sampling={value!r} is not a mapping with max_rounds >= 1; write it like "
                             "dynamic_sampling: {max_rounds: 3}.")
    if key == "python_tool":
        from ..train.python_tool_settings import python_tool_settings

        value = {} if value is True else json.loads(value) if isinstance(value, str) else value
        python_tool_settings(value)  # one line on a bad key or limit
    if key == "vllm_mode" and value not in ("colocate", "server"):
        raise ValueError(f"vllm_mode={value!r} is not 'colocate' or 'server'; pick one of them.")
    return value


def settings_field_names() -> tuple[str, ...]:
    """The recipe keys a plan reads (the rest of a recipe is ignored).

    Example:
        >>> "num_generations" in settings_field_names()
        True
    """
    return tuple(f.name for f in fields(RecipeSettings) if f.name not in ("assumed", "base_dir"))
