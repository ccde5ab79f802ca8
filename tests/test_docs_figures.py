"""The times and results the README and docs state are what their commands printed when measured.

Each stated figure carries a marker, ``<!-- figure KEY LO..HI -->``, on its line:
``benchmarks/docs_figures.py`` measured it (``docs/measured_figures.json``, with the date, machine
and load average of each step), and a new run on another machine may land anywhere in ``LO..HI``.
These tests hold every marked line, and the demo's output block, to the recorded measurement;
``tests/test_docs_walk.py`` (marked slow) runs the commands again and holds a new run to the ranges.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.docs_figures import FORMATS, PAGES, RESULTS, STEPS, marked_figures, shown_block, written

ROOT = Path(__file__).resolve().parents[1]
MARKS = marked_figures(PAGES)
RECORDED = json.loads(RESULTS.read_text())


def where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def test_the_pages_mark_the_figures_of_the_readme_commands():
    keys = {key for _, _, key, _, _, _ in MARKS}
    assert {"demo.before", "demo.after", "demo.seconds", "eval.pass@1", "prefilter.kept", "prefilter.seconds",
            "train.seconds", "make_test.fresh_clone_minutes", "make_test.not_slow_minutes"} <= keys
    assert {path.name for path, *_ in MARKS} >= {"README.md", "training.md", "cpu_training.md"}


@pytest.mark.parametrize("key", sorted(RECORDED["figures"]))
def test_every_recorded_figure_has_its_date_machine_and_load(key):
    measured = RECORDED["measured"][key.split(".")[0]]
    assert measured["date"] and measured["machine"]
    # A figure timed by hand (make test, which runs this test) says so instead of giving the load.
    assert measured.get("source") or len(measured["load_average"]) == 2, f"{key}: the load before and after its step"


@pytest.mark.parametrize("path, line, key, low, high, text", MARKS, ids=[where(m[0], m[1]) for m in MARKS])
def test_a_marked_line_states_the_recorded_figure_inside_its_range(path, line, key, low, high, text):
    assert key in FORMATS, f"{where(path, line)}: {key} is no figure benchmarks/docs_figures.py measures"
    assert low < high, f"{where(path, line)}: the range {low}..{high} of {key} is empty"
    value = RECORDED["figures"].get(key)
    assert value is not None, f"{where(path, line)}: {key} was never measured; run python -m benchmarks.docs_figures"
    assert low <= value <= high, f"{where(path, line)}: the recorded {key} {value} lies outside {low}..{high}"
    assert written(key, value) in text, f"{where(path, line)}: the line does not state {written(key, value)!r}"


def test_the_demo_output_shown_is_what_the_demo_printed():
    shown = shown_block(ROOT / "docs" / "training.md", "$ make demo")
    assert shown[1] == ".venv/bin/python -m referee.recipes.cli demo"  # what make echoes first
    assert shown[2:] == RECORDED["figures"]["demo.output"]
    assert STEPS["demo"][0] == "referee demo"


def test_the_eval_table_shown_is_what_the_readmes_eval_printed():
    printed = RECORDED["figures"]["eval.output"]
    table = printed[[line.startswith("prompts ") for line in printed].index(True):]
    assert shown_block(ROOT / "docs" / "cli.md", "prompts ") == table
