"""A release beside this tree: its checkout is imported as referee in a fresh process, and a bad folder is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import baseline, gsm8k


def test_a_checkout_is_imported_as_referee_in_a_fresh_process(tmp_path: Path) -> None:
    """Here the 'release' is this tree itself: the process reports the verifiers folder it imported."""
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"completion": "#### 18", "gold": "#### 18"}, {"completion": "It is 7.", "gold": "7"},
                                 {"completion": "So 3 + 4 = 7.\nThe answer is 7.", "gold": "7"}]))
    seconds = json.loads(baseline.run_module("benchmarks.gsm8k", ["--measure", str(cases), "--stages"], baseline.ROOT))
    assert set(seconds) == {"auto", "strict", "auto_warm", "closing", "reading", "review", "read_alone"}
    assert all(value >= 0 for value in seconds.values())
    assert seconds["read_alone"] == pytest.approx(1 / 3)  # the answer phrase alone on the last line
    with baseline.importing(baseline.ROOT) as env:
        folder = Path(env["PYTHONPATH"].split(":")[0])
        assert (folder / "referee" / "verifiers").resolve() == (baseline.ROOT / "verifiers").resolve()


def test_a_folder_without_the_package_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no verifiers/__init__.py"):
        baseline.check_source(str(tmp_path))


def test_the_gsm8k_timing_reads_what_verify_reads(tmp_path: Path) -> None:
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"completion": "So \\boxed{18}.", "gold": "18"}]))
    assert set(gsm8k.measure(str(cases), stages=False)) == {"auto", "strict"}
