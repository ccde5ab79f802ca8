"""``referee doctor``: which isolation the code sandbox gets on this machine, and why."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from referee.verifiers.code import LEVELS, resolve_isolation
from referee.verifiers.code.isolation import Isolation

_CHECK_PROGRAM = "import os\ndef whoami():\n    return os.getuid()"
_CHECK_TESTS = {"format": "asserts", "asserts": ["assert isinstance(whoami(), int)"]}


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="show the code sandbox's isolation level and why",
        description=(
            "Print the isolation level the code verifier runs with here (full, namespaces, uid or "
            "basic), each layer on or off with the reason, then judge a small program in the sandbox "
            "to prove it works. Exits 0 when the sandbox works, 1 when it cannot judge, 2 when the "
            "asked-for level is not available."
        ),
    )
    parser.add_argument("--isolation", default="auto", choices=("auto", *LEVELS),
                        help="the level to check (default: the best available)")
    parser.add_argument("--no-check", action="store_true", help="only print the layers; judge nothing")
    parser.set_defaults(run=run)


def report_lines(isolation: Isolation) -> list[str]:
    """The printed report: the level, then one line per layer.

    Example:
        >>> print("\\n".join(report_lines(resolve_isolation("basic"))[:2]))
        code sandbox isolation: basic
          off  bubblewrap: not used at the 'basic' level
    """
    lines = [f"code sandbox isolation: {isolation.level}"]
    for layer in isolation.layers:
        lines.append(f"  {'on ' if layer.on else 'off'}  {layer.name}: {layer.why}")
    return lines


def run(args: argparse.Namespace) -> int:
    try:
        isolation = resolve_isolation(args.isolation)
    except ValueError as exc:
        print(f"referee doctor: {exc}", file=sys.stderr)
        return 2
    print("\n".join(report_lines(isolation)))
    if args.no_check:
        return 0
    from referee.verifiers.code import verify

    started = time.monotonic()
    verdict = verify(_CHECK_PROGRAM, _CHECK_TESTS, isolation=isolation.level, workers=1, timeout=10.0)
    seconds = time.monotonic() - started
    if verdict.correct:
        print(f"check: a test program was judged in the sandbox in {seconds:.2f} s (including the worker's start)")
        return 0
    print(f"check: the sandbox could not judge a test program: {verdict.reason}")
    return 1
