import json
import subprocess
import sys

from referee.recipes.cli import main

ROWS = [
    {"completion": "9 * 2 = 18\n#### 18", "answer": "Janet...\n#### 18"},
    {"completion": "The answer is 17.", "answer": "18"},
    "not json at all",
    {"completion": [{"role": "assistant", "content": "So $\\boxed{5}$."}], "answer": 5},
    {"completion": "#### 3"},
    {"completion": "no number here", "answer": "7"},
    {"completion": "#### 4", "answer": "four"},
]


def _write(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")


def test_score_writes_one_verdict_per_line_in_order(tmp_path, capsys):
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write(source, ROWS)
    assert main(["score", "gsm8k", str(source), "-o", str(out), "--no-progress"]) == 0
    verdicts = [json.loads(line) for line in out.read_text().splitlines()]
    assert [v["line"] for v in verdicts] == list(range(1, 8))
    assert [v["status"] for v in verdicts] == ["correct", "wrong", "error", "correct", "error", "no_answer", "error"]
    assert "line 3" in verdicts[2]["reason"] and "JSON" in verdicts[2]["reason"]
    assert "line 5" in verdicts[4]["reason"] and "'answer'" in verdicts[4]["reason"]
    summary = capsys.readouterr().out
    assert "correct    2" in summary and "error      3" in summary and "accuracy   0.2857" in summary


def test_score_options_and_fields(tmp_path, capsys):
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write(source, [{"text": "The answer is 18.", "gold": 18}])
    assert main(["score", "gsm8k", str(source), "-o", str(out), "--completion-field", "text",
                 "--gold-field", "gold", "-O", "mode=strict", "--no-progress"]) == 0
    assert json.loads(out.read_text())["status"] == "no_answer"


def test_score_refuses_unknown_option_and_missing_file(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    _write(source, ROWS[:1])
    assert main(["score", "gsm8k", str(source), "-O", "colour=red"]) == 2
    assert "colour" in capsys.readouterr().err
    assert main(["score", "gsm8k", str(tmp_path / "missing.jsonl")]) == 2


def test_console_script_writes_verdicts_to_stdout(tmp_path):
    source = tmp_path / "in.jsonl"
    _write(source, ROWS[:2])
    result = subprocess.run([sys.executable, "-m", "referee.recipes.cli", "score", "gsm8k", str(source)],
                            capture_output=True, text=True, check=True)
    assert [json.loads(line)["status"] for line in result.stdout.splitlines()] == ["correct", "wrong"]
    assert "accuracy   0.5000" in result.stderr
