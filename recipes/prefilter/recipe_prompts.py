"""Prompts as a training recipe writes them, for ``referee prefilter --recipe R`` and ``referee eval --recipe R``.

A recipe turns its dataset's rows into chat prompts (its ``dataset_format``, ``system_prompt`` and
``columns``). A pre-filter or an evaluation given the same recipe reads its data through the same
loader, so it samples from exactly the prompts training sends, and takes the recipe's model,
correctness reward (its first reward), completion budget (``max_completion_length``), temperature
and chat template variables wherever the command line leaves them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..common.data import Rows


@dataclass(frozen=True)
class RecipePrompts:
    """What a pre-filter or an evaluation takes from a training recipe.

    Example:
        >>> prompts = read_recipe_prompts("gsm8k_qwen2.5-1.5b_lora")
        >>> prompts.model, prompts.reward, prompts.max_completion_length, prompts.dataset_format
        ('Qwen/Qwen2.5-1.5B-Instruct', 'gsm8k_accuracy', 512, 'gsm8k')
    """

    path: str
    dataset_format: str
    system_prompt: str | None
    columns: dict[str, str]
    model: str
    reward: str
    reward_options: dict[str, Any] = field(default_factory=dict)
    max_completion_length: int = 512
    temperature: float = 1.0
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)


def read_recipe_prompts(name_or_path: str) -> RecipePrompts:
    """The prompt settings of a shipped recipe (by name) or a recipe YAML file, resolved as ``referee train`` does.

    Raises ``ValueError`` (a :class:`~referee.recipes.errors.RecipeError` for a bad recipe) with one line.

    Example:
        >>> read_recipe_prompts("math_qwen2.5-1.5b_lora").reward
        'math_accuracy'
        >>> read_recipe_prompts("no_such_recipe")
        Traceback (most recent call last):
        ...
        ValueError: No recipe file 'no_such_recipe' and no shipped recipe of that name; see referee train --list.
    """
    from ..train.recipe import parse_recipe
    from ..train.shipped import recipe_path

    path = recipe_path(name_or_path)
    recipe = parse_recipe(str(path), without_gpu=True)
    first = recipe.script.reward_funcs[0] if recipe.script.reward_funcs else "gsm8k_accuracy"
    reward, options = (first.get("name"), dict(first.get("options") or {})) if isinstance(first, dict) else (first, {})
    return RecipePrompts(
        path=str(path), dataset_format=recipe.script.dataset_format, system_prompt=recipe.script.system_prompt,
        columns=dict(recipe.script.columns or {}), model=str(recipe.model.model_name_or_path), reward=str(reward),
        reward_options=options, max_completion_length=int(recipe.training.max_completion_length),
        temperature=float(recipe.training.temperature),
        chat_template_kwargs=dict(getattr(recipe.training, "chat_template_kwargs", None) or {}))


def recipe_rows(prompts: RecipePrompts, source: str, *, split: str, config_name: str | None, max_rows: int | None,
                keep: Sequence[str]) -> Rows:
    """The rows of ``source`` mapped by the recipe's loader: a chat ``prompt`` and the columns in ``keep``.

    Example:
        >>> import json, os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "gsm8k.jsonl")
        >>> _ = open(path, "w").write(json.dumps({"question": "2 + 3?", "answer": "2 + 3 = 5\\n#### 5"}) + "\\n")
        >>> rows = recipe_rows(read_recipe_prompts("gsm8k_qwen2.5-1.5b_lora"), path, split="train", config_name=None,
        ...                    max_rows=None, keep=["answer"])
        >>> row = rows.slice(0, 1)[0]
        >>> [message["role"] for message in row["prompt"]], row["answer"][-6:]
        (['system', 'user'], '#### 5')
    """
    from ..train.datasets import load_training_dataset

    dataset = load_training_dataset(source, prompts.dataset_format, split=split, config_name=config_name,
                                    system_prompt=prompts.system_prompt, max_rows=max_rows, columns=prompts.columns,
                                    keep=keep)
    return Rows(dataset.to_list())
