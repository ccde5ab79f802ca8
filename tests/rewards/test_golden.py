import json
from pathlib import Path

import pytest

from referee.recipes.cli import main
from referee.rewards import get_reward
from referee.rewards.golden import GoldenCase, check_golden, load_golden
from referee.rewards.testing import assert_golden, golden_params

GOLDEN = Path(__file__).parent / "golden" / "gsm8k.jsonl"


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("case", golden_params(GOLDEN))
def test_gsm8k_accuracy_golden_file(case):
    assert_golden("gsm8k_accuracy", case)


def test_check_exits_0_on_a_correct_golden_file(capsys):
    assert main(["check", "gsm8k_accuracy", str(GOLDEN)]) == 0
    assert "10 of 10 golden cases match" in capsys.readouterr().out


def test_check_exits_1_and_lists_a_wrong_expectation(tmp_path, capsys):
    rows = [json.loads(line) for line in GOLDEN.read_text().splitlines()]
    rows[5]["expected"] = 1  # "48 * 2 = 96 ... #### 144" is wrong; claim it is right
    golden = write_jsonl(tmp_path / "bad.jsonl", rows)
    assert main(["check", "gsm8k_accuracy", str(golden)]) == 1
    out = capsys.readouterr().out
    assert "She sold 48 * 2 = 96" in out and "144 (####) differs from the gold 72" in out
    assert out.splitlines()[1].split()[:3] == ["6", "1", "0"]
    assert "9 of 10 golden cases match, 1 do not" in out


def test_check_json_for_machines(tmp_path, capsys):
    golden = write_jsonl(tmp_path / "g.jsonl", [
        {"completion": "#### 18", "answer": "18", "expected": 1},
        {"completion": "#### 18", "answer": "18", "expected": 0.5},
        {"completion": "#### 18", "answer": "oops", "expected": 0},
    ])
    assert main(["check", "gsm8k_accuracy", str(golden), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["cases"] == 3 and report["ok"] is False
    assert [(m["line"], m["expected"], m["got"]) for m in report["mismatches"]] == [(2, 0.5, 1.0), (3, 0.0, None)]
    assert "oops" in report["mismatches"][1]["reason"]


def test_check_weighted_sums_options_and_module_paths(tmp_path):
    weighted = write_jsonl(tmp_path / "sum.jsonl", [
        {"completion": "<think>48 + 24 = 72</think>\n#### 72", "answer": "72", "expected": 1.25},
        {"completion": "<think>48 + 24 = 70</think>\n#### 70", "answer": "72", "expected": 0.25},
        {"completion": "#### 72", "answer": "72", "expected": 1.0},
    ])
    assert main(["check", "gsm8k_accuracy + 0.25*think_format", str(weighted)]) == 0
    assert main(["check", "gsm8k_accuracy + 0.5*think_format", str(weighted)]) == 1
    other_column = write_jsonl(tmp_path / "final.jsonl", [{"completion": "The answer is 72.", "final": "72", "expected": 1}])
    assert main(["check", "gsm8k_accuracy", str(other_column)]) == 2  # the column the reward reads is missing: named, exit 2
    assert main(["check", "gsm8k_accuracy", str(other_column), "-O", "gold_column=final"]) == 0
    ids = write_jsonl(tmp_path / "ids.jsonl", [
        {"completion": "x", "completion_ids": [1] * 9, "expected": -0.8},
        {"completion": "x", "completion_ids": [1] * 2, "expected": 0},
    ])
    assert main(["check", "referee.rewards:SoftOverlong", str(ids), "-O", "max_length=10", "-O", "buffer=5"]) == 0


@pytest.mark.parametrize(("reward", "rows", "message"), [
    ("no_such_reward", [{"completion": "x", "expected": 0}], "Unknown reward"),
    ("gsm8k_accuracy", [{"completion": "x"}], "line 1 has no 'expected'"),
    ("gsm8k_accuracy", [{"completion": "x", "expected": "yes"}], "not a number or null"),
    ("gsm8k_accuracy", [], "holds no golden cases"),
    ("gsm8k_accuracy", [[1, 2]], "line 1: a JSON object is needed, got list"),
])
def test_check_exits_2_on_unusable_input(tmp_path, capsys, reward, rows, message):
    golden = write_jsonl(tmp_path / "g.jsonl", rows)
    assert main(["check", reward, str(golden)]) == 2
    assert message in capsys.readouterr().err


def test_invalid_json_line_is_named(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text('{"completion": "x", "expected": 0}\n\n{oops\n', encoding="utf-8")
    with pytest.raises(ValueError, match="line 3: not valid JSON"):
        load_golden(path)


def test_a_reward_that_raises_fails_every_case_even_expected_none():
    def broken(completions, **kwargs):
        raise RuntimeError("bug")

    results = check_golden(broken, [GoldenCase("x", None), GoldenCase("y", 1.0)])
    assert [r.ok() for r in results] == [False, False]
    assert "RuntimeError: bug" in results[0].reason


def test_assertion_message_is_readable():
    case = GoldenCase("She sold 96 clips.\n#### 96", 1.0, {"answer": "72"}, source="golden/gsm8k.jsonl", line=7)
    with pytest.raises(AssertionError) as failure:
        assert_golden(get_reward("gsm8k_accuracy"), case)
    assert str(failure.value).splitlines() == [
        "golden/gsm8k.jsonl line 7: gsm8k_accuracy gave 0.0, expected 1.0",
        "  completion: She sold 96 clips.\\n#### 96",
        "  reason:     96 (####) differs from the gold 72",
    ]


def test_prompt_and_extra_fields_reach_the_reward():
    seen = {}

    def spy(prompts=None, completions=None, completion_ids=None, **kwargs):
        seen.update(prompts=prompts, **kwargs)
        return [1.0] * len(completions)

    check_golden(spy, [GoldenCase("x", 1.0, {"answer": "1", "level": 3}, prompt="Q?"), GoldenCase("y", 1.0, {"answer": "2"})])
    assert seen == {"prompts": ["Q?", None], "answer": ["1", "2"], "level": [3, None]}


def test_module_paths_are_found_in_the_current_directory(tmp_path, monkeypatch):
    import sys

    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "golden_demo_rewards.py").write_text(
        "from referee.rewards import VerifierReward\n"
        "accuracy = VerifierReward('accuracy', 'gsm8k', gold_column='final', mode='strict')\n", encoding="utf-8")
    golden = write_jsonl(tmp_path / "g.jsonl", [
        {"completion": "48 + 24 = 72\n#### 72", "final": "72", "expected": 1},
        {"completion": "The answer is 72.", "final": "72", "expected": 0},
    ])
    assert main(["check", "golden_demo_rewards:accuracy", str(golden)]) == 0
    assert main(["check", "golden_demo_rewards:missing", str(golden)]) == 2
    assert main(["check", "no_such_module_here:accuracy", str(golden)]) == 2


@pytest.mark.parametrize("tolerance", ["nan", "-1", "inf"])
def test_check_refuses_a_tolerance_that_is_not_a_finite_non_negative_number(tolerance, capsys):
    # nan used to report every match as a mismatch (exit 1)
    assert main(["check", "gsm8k_accuracy", str(GOLDEN), "--tolerance", tolerance]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--tolerance {float(tolerance)}" in err


def test_check_refuses_bad_option_values_with_exit_2(capsys):
    # math's timeout=-1 used to turn every case into an error verdict, and the run into "mismatch" (exit 1)
    assert main(["check", "math_accuracy", str(GOLDEN), "-O", "timeout=-1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "timeout=-1" in err


def test_check_a_module_that_raises_at_import_is_exit_2_with_its_error(tmp_path, monkeypatch, capsys):
    (tmp_path / "raising_golden_rewards.py").write_text("import json\nraise RuntimeError('broken on purpose')\n")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "raising_golden_rewards:accuracy", str(GOLDEN)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "RuntimeError: broken on purpose" in err and "No module named" not in err


def test_check_a_golden_folder_is_exit_2(tmp_path, capsys):
    assert main(["check", "gsm8k_accuracy", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_check_a_golden_file_without_the_rewards_column_is_exit_2_naming_it(tmp_path, monkeypatch, capsys):
    # a user's reward with a column argument used to raise TypeError on every case, reported as mismatches (exit 1)
    (tmp_path / "final_rewards.py").write_text(
        "def acc(completions, final, **kwargs):\n    return [float(c.endswith(f)) for c, f in zip(completions, final)]\n")
    monkeypatch.chdir(tmp_path)
    golden = write_jsonl(tmp_path / "g.jsonl", [{"completion": "#### 18", "answer": "18", "expected": 1}])
    assert main(["check", "final_rewards:acc", str(golden)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 1 has no column 'final', which the reward acc reads (the case has: answer)" in err
    assert main(["check", "gsm8k_accuracy", str(golden), "-O", "gold_column=final"]) == 2
    assert "no column 'final', which the reward gsm8k_accuracy reads" in capsys.readouterr().err
    assert main(["check", "gsm8k_accuracy", str(golden)]) == 0


def test_check_a_module_not_on_the_path_says_where_it_looked(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    golden = write_jsonl(tmp_path / "g.jsonl", [{"completion": "#### 18", "answer": "18", "expected": 1}])
    assert main(["check", "somewhere_else_rewards:acc", str(golden)]) == 2
    err = capsys.readouterr().err
    assert f"no module 'somewhere_else_rewards' in the current folder ({tmp_path}) or on PYTHONPATH" in err
    assert "run from the folder that holds somewhere_else_rewards.py, or add that folder to PYTHONPATH" in err
    # a module in a package: the folder that holds the package, not the module's own folder
    assert main(["check", "project.rewards:acc", str(golden)]) == 2
    assert "no module 'project' in the current folder" in (err := capsys.readouterr().err)
    assert "run from the folder that holds project/rewards.py, or add that folder to PYTHONPATH" in err


def test_check_a_module_whose_import_is_missing_names_the_import_not_the_module(tmp_path, monkeypatch, capsys):
    # acme2 imports a module whose name begins its own: that import is what is missing, not acme2
    (tmp_path / "acme2.py").write_text("import acme\n")
    monkeypatch.chdir(tmp_path)
    golden = write_jsonl(tmp_path / "g.jsonl", [{"completion": "#### 18", "answer": "18", "expected": 1}])
    assert main(["check", "acme2:acc", str(golden)]) == 2
    err = capsys.readouterr().err
    assert "Cannot load reward 'acme2:acc': its module imports 'acme', which is not installed" in err


def test_assert_golden_on_a_case_without_the_rewards_column_names_the_column():
    from referee.rewards.golden import GoldenCase
    from referee.rewards.testing import assert_golden

    def acc(completions, final, **kwargs):
        return [1.0] * len(completions)

    with pytest.raises(AssertionError) as failure:
        assert_golden(acc, GoldenCase("#### 18", 1.0, {"answer": "18"}, source="g.jsonl", line=3))
    assert str(failure.value) == ("g.jsonl line 3 has no column 'final', which the reward acc reads (the case has: "
                                  "answer); add it to every golden case.")


def test_an_assert_golden_failure_shows_the_case_not_the_librarys_source(tmp_path):
    import subprocess
    import sys

    (tmp_path / "test_mine.py").write_text(
        "from referee.rewards.golden import GoldenCase\n"
        "from referee.rewards.testing import assert_golden\n\n"
        "def test_case():\n"
        "    assert_golden('gsm8k_accuracy', GoldenCase('#### 17', 1.0, {'answer': '18'}, source='g.jsonl', line=4))\n")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_mine.py")],
                            capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 1
    assert "g.jsonl line 4: gsm8k_accuracy gave 0.0, expected 1.0" in result.stdout
    assert "check_golden(function, [case])" not in result.stdout and "raise AssertionError(" not in result.stdout
