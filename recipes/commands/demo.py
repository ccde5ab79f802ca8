"""``referee demo``: train a tiny local model with GRPO on a CPU and show that it learned."""

from __future__ import annotations

import argparse
from typing import Any

from referee.recipes.common.config_flags import whole_number


def add_parser(subparsers: Any) -> None:
    """Add ``demo`` to the ``referee`` subcommands.

    Example:
        >>> import argparse
        >>> parser = argparse.ArgumentParser()
        >>> add_parser(parser.add_subparsers())
        >>> parser.parse_args(["demo", "--grpo-steps", "50"]).grpo_steps
        50
    """
    parser = subparsers.add_parser(
        "demo",
        help="train a tiny local model with GRPO on a CPU (about two minutes, nothing downloaded)",
        description=(
            "Build a ~0.6M-parameter Qwen2 model and a character tokenizer locally, warm-start it on sums "
            "answered as '#### N', train it with RefereeGRPOTrainer and referee's gsm8k_accuracy and "
            "gsm8k_format rewards, and print greedy accuracy on held-out sums before and after. Writes "
            "OUT/model (a transformers folder), OUT/reward_curve.png and OUT/metrics.json."
        ),
    )
    parser.add_argument("--output-dir", default="runs/demo", metavar="OUT", help="where to write (default: runs/demo)")
    parser.add_argument("--grpo-steps", type=whole_number(1), default=None, metavar="N", help="GRPO steps (default: 600)")
    parser.add_argument("--threads", type=whole_number(1), default=None, metavar="N",
                        help="torch threads (default: 1, the fastest on a shared 2-core machine)")
    parser.add_argument("--seed", type=whole_number(0), default=None, metavar="S",
                        help="seed of data, model and training (default: 0)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo with the options given (others keep ``DemoSettings``' defaults); returns 0.

    Example:
        >>> from unittest import mock
        >>> with mock.patch("referee.recipes.demo.run_demo") as demo:
        ...     run(argparse.Namespace(output_dir="runs/x", grpo_steps=None, threads=2, seed=None))
        ...     demo.call_args.args[1].threads, demo.call_args.args[1].grpo_steps
        0
        (2, 600)
    """
    from dataclasses import replace

    from referee.recipes.demo import DemoSettings, run_demo

    overrides = {"grpo_steps": args.grpo_steps, "threads": args.threads, "seed": args.seed}
    settings = replace(DemoSettings(), **{key: value for key, value in overrides.items() if value is not None})
    run_demo(args.output_dir, settings)
    return 0
