"""The ``referee`` command line: one subcommand per module in ``referee.recipes.commands``."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Subcommand modules, in the order `referee --help` lists them. Each must import quickly
# (no torch at module level) because `--help` imports them all.
_COMMANDS: tuple[str, ...] = ("score", "plan", "check", "audit", "prefilter", "eval", "doctor", "train", "demo", "serve")


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
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error (before or after COMMAND)")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in _COMMANDS:
        importlib.import_module(f"referee.recipes.commands.{name}").add_parser(subparsers)
    for subparser in subparsers.choices.values():  # `referee score --debug ...` works too
        subparser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``referee`` with ``argv`` (default: ``sys.argv[1:]``) and return the exit status.

    An error a command does not report itself is printed as one line on standard error and
    exits 2 (``--debug`` shows the traceback instead); Ctrl-C exits 130.

    Example:
        >>> main(["score", "gsm8k", "no/such/file.jsonl"])
        2
    """
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        if args.debug:
            raise
        print(f"referee {args.command}: interrupted.", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        print(f"referee {args.command}: {_one_line(exc)} (rerun with --debug for the traceback)", file=sys.stderr)
        for problem in _stack_problems(exc):
            print(f"referee {args.command}: known not to work here: {problem}", file=sys.stderr)
        return 2


def _stack_problems(exc: BaseException) -> list[str]:
    """For a failed import (transformers and TRL wrap theirs in ``RuntimeError``), the training stack's
    pairs known not to work, which usually explain it (a CUDA torchvision beside a CPU torch, say).

    Example:
        >>> _stack_problems(ValueError("not an import"))
        []
    """
    if not isinstance(exc, (ImportError, RuntimeError)) or "import" not in str(exc).lower():
        return []
    from referee.recipes.common.stack import installed_versions, known_problems, requirement_problems

    installed = installed_versions()
    return requirement_problems(installed) + known_problems(installed)


def _one_line(exc: BaseException) -> str:
    """An exception as one line: an OSError's own message names the path; others keep their type.

    Example:
        >>> _one_line(PermissionError(13, "Permission denied", "/proc/x"))
        "Permission denied: '/proc/x'"
        >>> _one_line(RuntimeError("boom\\nsecond line"))
        'RuntimeError: boom second line'
    """
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.strerror}: {exc.filename!r}" if exc.filename else exc.strerror
    elif isinstance(exc, (OSError, ValueError)) and str(exc):
        text = str(exc)
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(main())
