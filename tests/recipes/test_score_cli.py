import json
import subprocess
import sys
from pathlib import Path

import pytest

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
    # error lines (the input's fault) are counted apart and left out of the accuracy: 2 correct of 4 judged
    assert "correct    2" in summary and "error      3" in summary and "judged     4" in summary
    assert "accuracy   0.5000" in summary


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


def test_score_refuses_to_write_over_its_input(tmp_path, capsys):
    source = tmp_path / "a.jsonl"
    _write(source, ROWS[:2])
    before = source.read_bytes()
    for output in (str(source), str(tmp_path / "." / "a.jsonl")):
        assert main(["score", "gsm8k", str(source), "-o", output, "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "input" in err
        assert source.read_bytes() == before
    link = tmp_path / "link.jsonl"
    link.symlink_to(source)
    assert main(["score", "gsm8k", str(source), "-o", str(link), "--no-progress"]) == 2
    assert source.read_bytes() == before


def test_a_failed_score_run_leaves_the_previous_output_whole(tmp_path, monkeypatch, capsys):
    from referee.recipes.commands import score

    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write(source, ROWS[:2])
    out.write_text("previous verdicts\n")

    def broken(*args, **kwargs):
        raise RuntimeError("verifier crashed")

    monkeypatch.setattr(score, "_judge", broken)
    assert main(["score", "gsm8k", str(source), "-o", str(out), "--no-progress"]) == 2
    assert out.read_text() == "previous verdicts\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left behind
    assert "verifier crashed" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["folder", "missing_folder", "unwritable"])
def test_score_output_it_cannot_write_is_one_line_exit_2(tmp_path, capsys, where):
    source = tmp_path / "in.jsonl"
    _write(source, ROWS[:2])
    target = {"folder": tmp_path, "missing_folder": tmp_path / "no" / "out.jsonl",
              "unwritable": Path("/proc/referee-out.jsonl")}[where]
    assert main(["score", "gsm8k", str(source), "-o", str(target), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("referee score: ") and err.count("\n") == 1 and "Traceback" not in err
    assert str(target) in err


@pytest.mark.parametrize("kind", ["device", "fifo", "link_to_a_file", "dangling_link"])
def test_score_never_replaces_anything_but_a_regular_file(tmp_path, capsys, kind):
    import os
    import stat

    source, kept = tmp_path / "in.jsonl", tmp_path / "kept.jsonl"
    _write(source, ROWS[:2])
    kept.write_text("keep me\n")
    target = tmp_path / "out.jsonl"
    if kind == "device":  # a device node of our own: a regression must not replace the machine's /dev/null
        try:
            os.mknod(target, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("creating a device node needs root (CI runs as root)")
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(kept if kind == "link_to_a_file" else tmp_path / "nowhere")
    before = os.lstat(target).st_mode
    assert main(["score", "gsm8k", str(source), "-o", str(target), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a regular file" in err and str(target) in err
    assert os.lstat(target).st_mode == before and stat.S_IFMT(before) != stat.S_IFREG
    assert kept.read_text() == "keep me\n" and not (tmp_path / "nowhere").exists()


def test_score_replaces_a_regular_file_and_writes_a_new_path(tmp_path):
    source, old, new = tmp_path / "in.jsonl", tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    _write(source, ROWS[:2])
    old.write_text("previous run\n")
    assert main(["score", "gsm8k", str(source), "-o", str(old), "--no-progress"]) == 0
    assert main(["score", "gsm8k", str(source), "-o", str(new), "--no-progress"]) == 0
    assert old.read_text() == new.read_text() and len(new.read_text().splitlines()) == 2


def test_score_where_every_line_is_an_error_exits_1_with_the_reason(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    _write(source, [{"completion": "#### 3"}, {"completion": "#### 4"}])
    assert main(["score", "gsm8k", str(source), "--no-progress"]) == 1
    err = capsys.readouterr().err.splitlines()[-1]
    assert "every line" in err and "no field 'answer'" in err


@pytest.mark.parametrize("verifier, option, problem", [
    ("math", "timeout=-1", "timeout=-1"),
    ("gsm8k", "abs_tol=-0.5", "abs_tol=-0.5"),
    ("gsm8k", "mode=loose", "mode='loose'"),
    ("code", "timeout=Infinity", "timeout=inf"),
])
def test_score_checks_option_values_before_scoring(tmp_path, capsys, verifier, option, problem):
    source = tmp_path / "in.jsonl"
    _write(source, ROWS[:1])
    assert main(["score", verifier, str(source), "-O", option, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and problem in err


def test_debug_shows_the_traceback(tmp_path, monkeypatch):
    from referee.recipes.commands import score

    source = tmp_path / "in.jsonl"
    _write(source, ROWS[:1])
    monkeypatch.setattr(score, "_judge", lambda *a, **k: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        main(["--debug", "score", "gsm8k", str(source), "--no-progress"])
    with pytest.raises(ZeroDivisionError):
        main(["score", "--debug", "gsm8k", str(source), "--no-progress"])
    assert main(["score", "gsm8k", str(source), "--no-progress"]) == 2
