"""The end of a short run: the summary compares what it can and says so; a one-point curve is visible."""

from pathlib import Path

import pytest

from referee.recipes.demo.reward_curve import RewardChange, plot_reward_curve
from referee.recipes.train.summary import run_summary


@pytest.mark.parametrize(("values", "line"), [
    ([0.1] * 3 + [0.5] * 94 + [0.9] * 3,
     "first tenth of the 100 logged steps 0.380, last tenth 0.620"),
    ([0.2, 0.4, 0.6, 0.8, 1.0], "first half of the 5 logged steps 0.300, last half 0.900"),
    ([0.41], "one logged step, 0.410: nothing to compare (log more often: logging_steps)"),
])
def test_the_summary_compares_tenths_halves_or_nothing(values, line):
    history = [{"step": step, "reward": value} for step, value in enumerate(values, 1)]
    summary = run_summary(history, len(values), 3.0, "runs/x", None).splitlines()
    assert summary[1] == f"reward (mean of the sampled completions): {line}"


def test_ten_steps_of_one_reward_never_read_as_a_change():
    change = RewardChange.of([0.41] * 10)
    assert (change.first, change.last, change.part) == (0.41, 0.41, "tenth")


def test_a_one_step_curve_has_a_marker_and_a_note(tmp_path: Path):
    svg = plot_reward_curve([{"step": 10, "reward": 0.41}], tmp_path / "curve.svg", window=1).read_text()
    assert "one logged step (0.410): log more often to see a curve" in svg
    assert 'id="m' in svg  # the point is drawn with a marker (matplotlib defines it once, then uses it)
    many = plot_reward_curve([{"step": s, "reward": s / 100} for s in range(1, 60)], tmp_path / "many.svg").read_text()
    assert "one logged step" not in many and 'id="m' not in many.split("<g id=\"line2d_", 1)[1].split("</g>")[0]


def test_a_short_run_s_curve_is_labelled_in_whole_steps(tmp_path: Path):
    """One logged step at step 10 drew an axis from 9.6 to 10.4: steps are whole numbers."""
    import re

    def ticks(history):
        svg = plot_reward_curve(history, tmp_path / "curve.svg", window=1).read_text()
        return re.findall(r'<g id="xtick_\d+">.*?<!-- (.*?) -->', svg, re.DOTALL)

    assert ticks([{"step": 10, "reward": 0.41}]) == ["9", "10", "11"]
    assert all(label.isdigit() for label in ticks([{"step": s, "reward": s / 10} for s in (1, 2, 3)]))
