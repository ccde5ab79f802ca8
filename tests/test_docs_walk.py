"""A new user's walk through the README: every command of its ``bash`` blocks runs as written, in order,
from a folder laid out like a fresh clone; the figures the pages state land in their ranges; the demo
prints what docs/training.md shows, up to its figures.

Commands that cannot run here are listed with the reason (``NOT_WALKED``); a new README command that
is neither walked nor listed fails ``test_every_readme_command_is_walked_or_says_why_not``. The walk
itself is marked slow (it trains: the demo, the CPU recipe twice); it never runs ``make test``, which
runs it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.docs_figures import PAGES, STEPS, Ran, marked_figures, run_command, shown_block

ROOT = Path(__file__).resolve().parents[1]
# The README's make targets, walked as the command the Makefile runs for them ($(PY) -m referee.recipes.cli X).
MAKE_TARGETS = {"make demo": "referee demo"}
NOT_WALKED = {
    "make test": "the suite this walk belongs to (python -m benchmarks.docs_figures --make-test times it)",
    ". .venv/bin/activate": "the walk runs with the venv's bin first on PATH",
    "accelerate launch": "eight GPUs",
    "sh examples/prefilter.sh runs/demo/model my_data.jsonl": "my_data.jsonl is the reader's own file",
    "referee prefilter --model Qwen/": "a hub model and data set, vLLM on a GPU",
}


def readme_commands() -> list[str]:
    """The commands of the README's ``bash`` blocks in order, continuation lines joined, comments dropped."""
    commands, block = [], None
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if block is None:
            block = [] if line.strip() == "```bash" else None
        elif line.strip() == "```":
            joined = "\n".join(block).replace("\\\n", " ")
            commands += [re.sub(r"\s+", " ", re.sub(r"\s{2,}#.*$", "", command)).strip()
                         for command in joined.splitlines() if command.strip()]
            block = None
        else:
            block.append(line)
    return commands


def walked_as(command: str) -> str | None:
    """What the walk runs for a README command: itself, the command its make target runs, or None (not walked)."""
    if any(command.startswith(prefix) for prefix in NOT_WALKED):
        return None
    return MAKE_TARGETS.get(command, command)


def the_walk() -> list[str]:
    """Each command once, in README order, then the steps of the figures the README does not run itself."""
    walk = []
    for command in [walked_as(command) for command in readme_commands()] + [command for command, _ in STEPS.values()]:
        if command is not None and command not in walk:
            walk.append(command)
    return walk


def masked(line: str) -> str:
    """A printed line with its figures masked: a rate (``7.41it/s``, ``1.2s/it``) and every number, and its runs
    of blanks as one (a progress bar pads its rate to the rate's width)."""
    return re.sub(r" +", " ", re.sub(r"\d+", "N", re.sub(r"[\d.]+(?:\w+/s|s/\w+)", "RATE", line)))


def test_every_readme_command_is_walked_or_says_why_not():
    commands = readme_commands()
    assert "referee demo" in commands and STEPS["eval"][0] in commands and "sh examples/prefilter.sh" in commands
    assert [prefix for prefix in NOT_WALKED if not any(command.startswith(prefix) for command in commands)] == []
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target, command in MAKE_TARGETS.items():
        name = target.split()[1]
        assert f"\n{name}:" in makefile and f"$(PY) -m referee.recipes.cli {command.split(' ', 1)[1]}\n" in makefile
    assert [command for command, _ in STEPS.values() if command not in the_walk()] == []


@pytest.fixture(scope="module")
def walk(tmp_path_factory) -> dict[str, tuple[Ran, dict]]:
    """Every walked command as it ran in a folder holding the repository's examples, and its figures."""
    folder = tmp_path_factory.mktemp("fresh-clone")
    (folder / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    readers = dict(STEPS.values())
    ran = {}
    for command in the_walk():
        done = run_command(command, folder)
        figures = readers[command](folder, done) if command in readers and done.returncode == 0 else {}
        ran[command] = (done, figures)
    return ran


@pytest.mark.slow
@pytest.mark.parametrize("command", the_walk())
def test_the_command_runs_as_written(walk, command):
    done, _ = walk[command]
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.output[-3000:]}"


@pytest.mark.slow
def test_every_stated_figure_lands_in_its_range(walk):
    figures = {key: value for _, measured in walk.values() for key, value in measured.items()}
    drifted = [f"{path.relative_to(ROOT)}:{line}: {key} {figures[key]:.4g} outside {low:g}..{high:g}"
               for path, line, key, low, high, _ in marked_figures(PAGES)
               if key in figures and not low <= figures[key] <= high]
    assert not drifted, "\n".join(drifted)
    # --recipe examples/cpu_recipe.yaml is the README's eval command with its flags written out: the same run
    assert [figures[f"eval_recipe.{name}"] for name in ("pass@1", "pass@16", "maj@16")] == [
        figures[f"eval.{name}"] for name in ("pass@1", "pass@16", "maj@16")]


@pytest.mark.slow
def test_the_demo_and_eval_print_what_the_pages_show_up_to_their_figures(walk):
    printed = walk["referee demo"][0].output.splitlines()
    shown = shown_block(ROOT / "docs" / "training.md", "$ make demo")[2:]
    assert [masked(line) for line in printed] == [masked(line) for line in shown]
    printed = walk[STEPS["eval"][0]][0].output.splitlines()
    shown = shown_block(ROOT / "docs" / "cli.md", "prompts ")
    assert [masked(line) for line in printed[-len(shown):]] == [masked(line) for line in shown]
