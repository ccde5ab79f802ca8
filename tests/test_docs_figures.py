"""The times and results the README and docs state are what their commands print.

Each stated figure carries a marker, ``<!-- figure KEY LO..HI -->``, on its line:
``benchmarks/docs_figures.py`` measured it (``docs/measured_figures.json``, with the
date and machine), and a new run on another machine may land anywhere in ``LO..HI``. The fast
tests hold every marked line to the recorded measurement; the slow one walks the commands again,
as a fresh clone runs them, and fails when a figure drifts out of its stated range.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.docs_figures import FORMATS, RESULTS, marked_figures, measure, written

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "examples" / "README.md"]
MARKS = marked_figures(PAGES)
RECORDED = json.loads(RESULTS.read_text())


def where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def test_the_pages_mark_the_figures_of_the_readme_commands():
    keys = {key for _, _, key, _, _, _ in MARKS}
    assert {"demo.before", "demo.after", "demo.seconds", "eval.pass@1", "prefilter.kept", "train.seconds",
            "make_test.minutes", "make_test.not_slow_minutes"} <= keys
    assert {path.name for path, *_ in MARKS} >= {"README.md", "training.md"}
    assert RECORDED["machine"]["date"] and RECORDED["machine"]["cpus"]


@pytest.mark.parametrize("path, line, key, low, high, text", MARKS, ids=[where(m[0], m[1]) for m in MARKS])
def test_a_marked_line_states_the_recorded_figure_inside_its_range(path, line, key, low, high, text):
    assert key in FORMATS, f"{where(path, line)}: {key} is no figure benchmarks/docs_figures.py measures"
    assert low < high, f"{where(path, line)}: the range {low}..{high} of {key} is empty"
    value = RECORDED["figures"].get(key)
    assert value is not None, f"{where(path, line)}: {key} was never measured; run python -m benchmarks.docs_figures"
    assert low <= value <= high, f"{where(path, line)}: the recorded {key} {value} lies outside {low}..{high}"
    assert written(key, value) in text, f"{where(path, line)}: the line does not state {written(key, value)!r}"


@pytest.mark.slow
def test_the_commands_run_again_land_every_figure_in_its_range(tmp_path):
    figures = measure(["demo", "eval", "eval_recipe", "prefilter", "train"], tmp_path)
    drifted = [f"{where(path, line)}: {key} {figures[key]:.4g} outside {low:g}..{high:g}"
               for path, line, key, low, high, _ in MARKS if key in figures and not low <= figures[key] <= high]
    assert not drifted, "\n".join(drifted)
    # --recipe examples/cpu_recipe.yaml is the README's eval command with its flags written out: the same run
    assert [figures[f"eval_recipe.{name}"] for name in ("pass@1", "pass@16", "maj@16")] == [
        figures[f"eval.{name}"] for name in ("pass@1", "pass@16", "maj@16")]
