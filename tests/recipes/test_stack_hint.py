"""A command that fails to import its stack says which installed pair is known not to work, in one line each."""

from __future__ import annotations

import argparse

from referee.recipes import cli
from referee.recipes.common import stack


def plan_raising(monkeypatch, error: Exception, versions: dict[str, str]) -> None:
    """``referee plan`` made to raise ``error`` with ``versions`` installed."""
    def run(args: argparse.Namespace) -> int:
        raise error

    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    parser._subparsers._group_actions[0].choices["plan"].set_defaults(run=run)
    monkeypatch.setattr(stack, "installed_versions", lambda: versions)


def test_a_failed_import_names_the_pair_known_not_to_work(monkeypatch, capsys):
    plan_raising(monkeypatch, RuntimeError("Failed to import trl.trainer.grpo_config because of the following error"),
                 {"torch": "2.13.0+cpu", "torchvision": "0.28.0", "transformers": "5.17.0"})
    assert cli.main(["plan"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("referee plan: RuntimeError: Failed to import trl.trainer.grpo_config")
    assert lines[1].startswith("referee plan: known not to work here: torchvision 0.28.0 is PyPI's CUDA build next to "
                               "torch 2.13.0+cpu")
    assert len(lines) == 2


def test_other_errors_stay_one_line(monkeypatch, capsys):
    plan_raising(monkeypatch, RuntimeError("CUDA out of memory"), {"torch": "2.13.0+cpu", "torchvision": "0.28.0"})
    assert cli.main(["plan"]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1
