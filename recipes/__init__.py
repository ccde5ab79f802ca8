"""referee.recipes: the GRPO recipe layer and the ``referee`` command line.

Subpackages by capability: ``train`` (config, trainer, loss, recipes, datasets, teardown),
``plan`` (memory and token arithmetic before a run), ``diagnostics`` (the training callback
and its monitor), ``demo`` (``referee demo``), ``prefilter`` (the pass-rate pre-filter),
``commands`` (one module per ``referee`` subcommand; ``cli`` assembles them) and ``common``
(rows, prompts, generation backends and models that the others share).

Importing this package never imports torch or TRL; the names below load on first use.
"""

from importlib import import_module
from typing import Any

from referee.verifiers.moved_modules import install_moved_modules

# Public names, imported on first access so `import referee.recipes` stays light.
_LAZY_EXPORTS = {
    "RefereeGRPOConfig": "referee.recipes.train.config",
    "build_grpo_config": "referee.recipes.train.config",
    "RefereeGRPOTrainer": "referee.recipes.train.trainer",
    "register_aggregation": "referee.recipes.train.loss",
    "get_aggregation": "referee.recipes.train.loss",
    "parse_recipe": "referee.recipes.train.recipe",
    "build_trainer": "referee.recipes.train.recipe",
    "train_and_save": "referee.recipes.train.recipe",
    "run_recipe": "referee.recipes.train.recipe",
    "holding_process_group": "referee.recipes.train.teardown",
    "recipe_path": "referee.recipes.train.shipped",
    "load_tokenizer": "referee.recipes.common.loading",
    "DiagnosticsCallback": "referee.recipes.diagnostics.callback",
    "RecipeError": "referee.recipes.errors",
}

__all__ = sorted(_LAZY_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _LAZY_EXPORTS:
        return getattr(import_module(_LAZY_EXPORTS[name]), name)
    raise AttributeError(f"module 'referee.recipes' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_EXPORTS))


# Modules that moved when recipes/ was split by capability: old name -> new name, both inside
# this package. Code, docs and pickles that name a module by its old path keep working.
MOVED_MODULES = {
    "config": "train.config", "trainer": "train.trainer", "loss": "train.loss", "recipe": "train.recipe",
    "datasets": "train.datasets", "shipped": "train.shipped", "teardown": "train.teardown",
    "trl_version": "train.trl_version",
    "plan_inputs": "plan.inputs", "model_params": "plan.model_params", "sharding": "plan.sharding",
    "diagnostics_monitor": "diagnostics.monitor",
    "arithmetic": "demo.arithmetic", "warm_start": "demo.warm_start", "evaluation": "demo.evaluation",
    "reward_curve": "demo.reward_curve",
    "loading": "common.loading", "tiny_model": "common.tiny_model",
    "prefilter.data": "common.data", "prefilter.prompts": "common.prompts", "prefilter.generation": "common.generation",
    "prefilter.transformers_backend": "common.transformers_backend", "prefilter.vllm_backend": "common.vllm_backend",
}


install_moved_modules(__name__, MOVED_MODULES)
