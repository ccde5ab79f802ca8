"""``referee train CONFIG.yaml [--key value ...]``: run a YAML recipe with RefereeGRPOTrainer."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any


def add_parser(subparsers: Any) -> None:
    """Add ``train`` to the ``referee`` subcommands.

    Example:
        >>> import argparse
        >>> parser = argparse.ArgumentParser()
        >>> add_parser(parser.add_subparsers())
        >>> args = parser.parse_args(["train", "my.yaml", "--learning_rate", "1e-6"])
        >>> args.config, args.overrides
        ('my.yaml', ['--learning_rate', '1e-6'])
    """
    parser = subparsers.add_parser(
        "train",
        help="train with a YAML recipe (TRL keys, CLI overrides, accelerate launch for several GPUs)",
        description=(
            "Run the YAML recipe CONFIG with RefereeGRPOTrainer: TRL's GRPOConfig and ModelConfig keys plus "
            "referee's (dataset_format, system_prompt, reward_funcs, loss_aggregation, diagnostics). Any "
            "--key value after CONFIG overrides the file, as in TRL's scripts. For several GPUs or DeepSpeed/FSDP: "
            "accelerate launch --config_file ACCELERATE.yaml -m referee.recipes.cli train CONFIG.yaml. "
            "Shipped recipes live in referee/recipes/configs (see --list)."
        ),
    )
    parser.add_argument("--dry-run", action="store_true",
                        help="print the resolved recipe (every training field, rewards and weights) and exit; "
                        "may also follow CONFIG")
    parser.add_argument("--list", action="store_true", help="list the shipped recipes and exit")
    parser.add_argument("config", metavar="CONFIG.yaml", nargs="?",
                        help="the recipe: a path, or the name of a shipped recipe")
    parser.add_argument("overrides", metavar="--key value", nargs=argparse.REMAINDER,
                        help="overrides of the recipe's keys, e.g. --learning_rate 1e-6 --max_steps 10")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """List the recipes, print one resolved (``--dry-run``), or train; returns the exit status.

    Example:
        >>> run(argparse.Namespace(list=True, dry_run=False, config=None, overrides=[]))  # doctest: +ELLIPSIS
        recipe                               model ...  rewards (weight)
        code_qwen2.5-coder-1.5b_lora         Qwen/Qwen2.5-Coder-1.5B-Instruct, LoRA r=16 ...
        ...
        0
    """
    from referee.recipes.errors import RecipeError
    from referee.recipes.train.shipped import shipped_recipes

    overrides = [item for item in args.overrides if item != "--dry-run"]
    dry_run = args.dry_run or len(overrides) != len(args.overrides)
    if args.list:
        from referee.recipes.train.shipped import recipe_table

        print(recipe_table(shipped_recipes()))
        return 0
    if not args.config:
        print("referee train: give a recipe (CONFIG.yaml) or --list.", file=sys.stderr)
        return 2
    try:
        path = _recipe_file(args.config)
        if dry_run:
            return _dry_run(path, overrides)
        from referee.recipes.train.recipe import build_trainer, parse_recipe, train_and_save
        from referee.recipes.train.teardown import exit_process, holding_process_group, launched

        recipe = parse_recipe(path, overrides)
        trainer = build_trainer(recipe)
    except RecipeError as exc:  # the user's mistake: one line. Anything else (CUDA out of memory, a TRL bug)
        if getattr(args, "debug", False):  # goes to referee.recipes.cli, which keeps its traceback for --debug
            raise
        for line in str(exc).splitlines():  # one line per mistake
            print(f"referee train: {line}", file=sys.stderr)
        return 2
    started = time.monotonic()
    with holding_process_group():
        train_and_save(trainer, recipe)
        if trainer.accelerator.is_main_process:
            _summarise(trainer, recipe.training.output_dir, time.monotonic() - started)
        del trainer  # freed while the process group is still held (see referee.recipes.train.teardown)
    if launched():  # a rank's group outlives its destruction; interpreter exit could abort the rank
        exit_process(0)
    return 0


def _summarise(trainer: Any, output_dir: str, seconds: float) -> None:
    """Write the reward curve beside the outputs and print the run's summary."""
    from referee.recipes.train.summary import run_summary, write_reward_curve

    history = trainer.state.log_history
    print(run_summary(history, trainer.state.global_step, seconds, output_dir, write_reward_curve(history, output_dir)))


def _recipe_file(name_or_path: str) -> Any:
    """The recipe file ``name_or_path`` names; a name that is neither a file nor a shipped recipe is a RecipeError."""
    from referee.recipes.errors import RecipeError
    from referee.recipes.train.shipped import recipe_path

    try:
        return recipe_path(name_or_path)
    except ValueError as exc:
        raise RecipeError(str(exc)) from None


def _dry_run(path: Any, overrides: list[str]) -> int:
    import torch
    import yaml

    from referee.recipes.errors import RecipeError
    from referee.recipes.train.recipe import check_generation_backend, parse_recipe, recipe_summary
    from referee.recipes.train.trl_version import PINNED_TRL_VERSION

    without_gpu = not torch.cuda.is_available()
    recipe = parse_recipe(path, overrides, without_gpu=without_gpu)
    print(f"# {path} resolved with TRL {PINNED_TRL_VERSION}" + (" (no GPU here: bf16 device check skipped)" if without_gpu else ""))
    print(yaml.safe_dump(recipe_summary(recipe), sort_keys=False, default_flow_style=False, width=120), end="")
    try:  # the generation backend train would refuse here, said at the end (a comment: the output stays YAML)
        check_generation_backend(recipe.training)
    except RecipeError as exc:
        print(f"# will not start on this machine: {exc}")
    return 0
