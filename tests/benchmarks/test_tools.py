"""benchmarks.tools at 2 rollouts: every arm's cold and warm rows in the JSON; outputs that disagree stop the run."""

from __future__ import annotations

import json
import sys

import pytest

from benchmarks import tools as bench
from referee.verifiers.code import resolve_isolation


def test_a_small_run_writes_each_arms_rows(tmp_path, monkeypatch, capsys):
    try:
        resolve_isolation()
    except ValueError:  # no level here holds untrusted code away from us: PythonTool runs nothing
        pytest.skip("no isolation level here guards the caller")
    out = tmp_path / "tools.json"
    monkeypatch.setattr(sys, "argv", ["tools", "--rollouts", "2", "--rounds", "1", "--workloads", "cheap",
                                      "--json", str(out)])
    bench.main()
    result = json.loads(out.read_text())
    assert result["benchmark"] == "tools" and result["settings"]["rollouts"] == 2
    assert result["workloads"] == {"cheap": bench.WORKLOADS["cheap"]} and set(result["cell_cpu_ms"]) == {"cheap"}
    rows = {(r["start"], r["arm"]): r for r in result["rows"]}
    assert set(rows) == {(start, arm) for start in ("cold", "warm") for arm in bench.ARMS}
    for r in result["rows"]:
        assert r["workload"] == "cheap" and r["rollouts"] == 2 and len(r["runs"]) == 1
        assert r["seconds"] > 0 and r["calls_per_s"] == pytest.approx(2 / r["seconds"])
    assert rows["warm", bench.ANCHOR]["x_trl_serial"] == pytest.approx(1.0)
    assert rows["warm", "bare subprocess"]["reset_seconds"] is None
    assert rows["warm", "referee concurrent"]["reset_seconds"] is not None
    assert "| cheap | warm | referee concurrent |" in capsys.readouterr().out


def test_outputs_that_differ_stop_the_run():
    assert bench.check_outputs("cheap", "TRL serial", ["499500", "499500"], None) == "499500"
    with pytest.raises(SystemExit, match="differ"):
        bench.check_outputs("cheap", "TRL serial", ["499500", "NameError"], None)
    with pytest.raises(SystemExit, match="differ"):
        bench.check_outputs("cheap", "bare subprocess", ["1", "1"], "499500")
