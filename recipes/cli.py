"""The ``referee`` command line: one subcommand per module in ``referee.recipes.commands``."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Subcommand modules, in the order `referee --help` lists them. Each must import quickly
# (no torch at module level) because `--help` imports them all.
_COMMANDS: tuple[str, ...] = ("score", "plan", "check", "audit", "prefilter", "doctor", "train", "demo")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, every subcommand included.

    Example:
        >>> build_parser().parse_args(["score", "gsm8k", "in.jsonl"]).command
        'score'
    """
    parser = argparse.ArgumentParser(
        prog="referee",
        description="Verifiable rewards for GRPO: score completions, check rewards, train, pre-filter.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in _COMMANDS:
        importlib.import_module(f"referee.recipes.commands.{name}").add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``referee`` with ``argv`` (default: ``sys.argv[1:]``) and return the exit status."""
    args = build_parser().parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
