"""The verdict comparison finds a changed verdict, and passes two runs of the same code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchmarks.compare_verdicts", *args], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)


def test_two_runs_agree_and_a_changed_verdict_is_found(tmp_path):
    rows = [{"completion": "So the answer is \\boxed{18}.", "gold": "18", "label": True},
            {"completion": "#### 7", "gold": "The sum is 3 + 5.\n#### 8", "label": False}]
    data = tmp_path / "tiny_gsm8k.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    assert _run("dump", "--out", str(before), "--labelled", str(data)).returncode == 0
    assert _run("dump", "--out", str(after), "--cases-from", str(before)).returncode == 0
    same = _run("compare", str(before), str(after))
    assert same.returncode == 0 and "2 of 2 identical, 0 differ" in same.stdout, same.stdout + same.stderr

    dumped = json.loads(after.read_text())
    assert [v["status"] for v in dumped["tiny_gsm8k.jsonl"]["verdicts"]["gsm8k"]] == ["correct", "wrong"]
    dumped["tiny_gsm8k.jsonl"]["verdicts"]["math"][1]["reason"] += " (changed)"
    after.write_text(json.dumps(dumped))
    changed = _run("compare", str(before), str(after))
    assert changed.returncode == 1 and "1 differ" in changed.stdout and "case 1" in changed.stdout

    dumped["tiny_gsm8k.jsonl"]["cases"][0]["gold"] = "19"
    after.write_text(json.dumps(dumped))
    assert _run("compare", str(before), str(after)).returncode == 2
