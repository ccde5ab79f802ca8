"""Train with a YAML recipe from Python: what ``referee train`` does, in your own script.

``parse_recipe`` reads the YAML the TRL way (with ``--key value`` overrides on top),
``run_recipe`` builds the ``RefereeGRPOTrainer``, trains and saves the model, its tokenizer and
``trainer_state.json`` to ``output_dir``; the script then writes the reward curve there and prints
the summary ``referee train`` ends with. ``holding_process_group`` ends a distributed run cleanly
(under ``torchrun`` or ``accelerate launch``; without a process group it does nothing).

From the repository root, after ``referee demo`` has written ``runs/demo/model``::

    python examples/run_recipe.py                                   # examples/cpu_recipe.yaml
    python examples/run_recipe.py examples/cpu_recipe.yaml --max_steps 20
    python examples/run_recipe.py --max_steps 20                    # the same recipe
    torchrun --nproc_per_node 2 examples/run_recipe.py examples/cpu_recipe.yaml
"""

from __future__ import annotations

import sys
import time

from referee.recipes.train.recipe import parse_recipe, run_recipe
from referee.recipes.train.summary import run_summary, write_reward_curve
from referee.recipes.train.teardown import holding_process_group

DEFAULT_RECIPE = "examples/cpu_recipe.yaml"


def main(argv: list[str]) -> int:
    """Train the recipe ``argv[0]`` with the rest as overrides; with no recipe first (nothing, or
    ``--key value`` pairs only), ``examples/cpu_recipe.yaml``."""
    config, *overrides = argv if argv and not argv[0].startswith("--") else [DEFAULT_RECIPE, *argv]
    recipe = parse_recipe(config, overrides)
    started = time.monotonic()
    with holding_process_group():
        trainer = run_recipe(recipe)
        if trainer.accelerator.is_main_process:  # what referee train ends with: the curve and a summary
            history, output_dir = trainer.state.log_history, recipe.training.output_dir
            print(run_summary(history, trainer.state.global_step, time.monotonic() - started, output_dir,
                              write_reward_curve(history, output_dir)))
        del trainer  # freed while the process group is still held (see referee.recipes.train.teardown)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
