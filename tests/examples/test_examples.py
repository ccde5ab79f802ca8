"""Every example in examples/ runs as its README says: the reward check and audit through the CLI
(their output as README.md shows it), the pytest file, the CPU recipe and the run_recipe script for
two steps, and the pre-filter script on a handful of rows (the session's tiny model stands in for
the one `referee demo` writes)."""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from referee.recipes.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
README = REPO / "README.md"
CPU_RECIPE = EXAMPLES / "cpu_recipe.yaml"
# Small enough for a test: 2 prompts x G=4 per step, two steps.
TWO_STEPS = ["--max_steps", "2", "--per_device_train_batch_size", "8", "--num_generations", "4",
             "--logging_steps", "1", "--diagnostics", "false", "--disable_tqdm", "true"]


def readme_output(command: str) -> list[str]:
    """The lines README.md shows under ``$ command``, up to the next command or the block's end."""
    lines = README.read_text(encoding="utf-8").splitlines()
    start = next(index for index, line in enumerate(lines) if line.split("#")[0].strip() == f"$ {command}")
    shown = []
    for line in lines[start + 1:]:
        if line.startswith(("$ ", "```")):
            return shown
        shown.append(line)
    return shown


@pytest.fixture
def in_examples(monkeypatch):
    monkeypatch.chdir(EXAMPLES)


@pytest.mark.parametrize("command, status", [
    ("referee check my_rewards:accuracy golden/accuracy.jsonl", 0),
    ("referee check my_rewards:accuracy golden/wrong.jsonl", 1),
])
def test_check_prints_what_the_readme_shows(in_examples, capsys, command, status):
    assert main(command.split()[1:]) == status
    assert [line.rstrip() for line in capsys.readouterr().out.splitlines()] == readme_output(command)


def test_every_golden_file_holds_except_the_deliberately_wrong_one(in_examples, capsys):
    assert main(["check", "my_rewards:shows_work", "golden/shows_work.jsonl"]) == 0
    assert capsys.readouterr().out == "shows_work: 5 of 5 golden cases match\n"
    assert sorted(path.name for path in (EXAMPLES / "golden").glob("*.jsonl")) == [
        "accuracy.jsonl", "json_answer.jsonl", "shows_work.jsonl", "wrong.jsonl"]
    assert main(["check", "json_rewards:json_answer", "golden/json_answer.jsonl"]) == 0
    assert capsys.readouterr().out == "json_answer: 6 of 6 golden cases match\n"


def test_audit_finds_the_format_reward_that_pays_like_right(in_examples, capsys):
    command = 'referee audit "my_rewards:accuracy + think_format" data.jsonl'
    assert main(["audit", "my_rewards:accuracy + think_format", "data.jsonl"]) == 1
    out = capsys.readouterr().out.splitlines()
    shown = readme_output(command)
    assert out[0] == shown[0]  # three rows, all probed
    table = [line for line in shown if line.split(" ")[0] in ("probe", "empty", "tags_around_wrong", "two_boxed")]
    assert table and all(line in out for line in table)
    example = next(line for line in shown if line.startswith("tags_around_wrong: "))
    assert example.split("Example: ")[1].rstrip("…") in "\n".join(out)  # the wrong answer is 73: the right one is 72
    # A small shaping weight only earns over a wrong answer: WARN, and the command passes.
    assert main(["audit", "my_rewards:accuracy + 0.2*think_format", "data.jsonl"]) == 0
    warned = [line.split()[0] for line in capsys.readouterr().out.splitlines() if "WARN" in line.split()]
    assert warned == ["tags_around_wrong", "format_only"]


def test_the_pytest_example_runs_one_test_per_golden_case():
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_rewards.py"],
                          cwd=EXAMPLES, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "16 passed" in done.stdout
    # From the repository root too: the golden files and reward modules are found beside the test file.
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "examples/test_my_rewards.py"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "16 passed" in done.stdout


def test_cpu_recipe_sets_what_a_cpu_run_needs_and_reads_the_demo_model():
    from referee.recipes.demo import run_demo

    keys = yaml.safe_load(CPU_RECIPE.read_text(encoding="utf-8"))
    assert (keys["use_cpu"], keys["bf16"], keys["use_vllm"], keys["activation_checkpointing"]) == (True, False, False,
                                                                                                    False)
    demo_output = inspect.signature(run_demo).parameters["output_dir"].default
    assert Path(keys["model_name_or_path"]) == Path(demo_output) / "model"
    assert (REPO / keys["dataset_name"]).is_file() and keys["dataset_format"] == "gsm8k"


@pytest.mark.slow
def test_cpu_recipe_trains_two_steps(model_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)  # the recipe's paths are relative to the repository root
    out = tmp_path / "out"
    assert main(["train", str(CPU_RECIPE.relative_to(REPO)), "--model_name_or_path", model_dir,
                 "--output_dir", str(out), *TWO_STEPS]) == 0
    state = json.loads((out / "trainer_state.json").read_text())
    assert state["global_step"] == 2
    assert {"rewards/gsm8k_accuracy/mean", "rewards/gsm8k_format/mean"} <= set(state["log_history"][0])
    assert (out / "model.safetensors").is_file() and (out / "tokenizer.json").is_file()


@pytest.mark.slow
def test_run_recipe_script_trains_two_steps(model_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    spec = importlib.util.spec_from_file_location("run_recipe_example", EXAMPLES / "run_recipe.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out = tmp_path / "out"
    assert script.main([str(CPU_RECIPE), "--model_name_or_path", model_dir, "--output_dir", str(out),
                        *TWO_STEPS]) == 0
    assert "trained 2 steps in " in capsys.readouterr().out
    assert (out / "reward_curve.png").is_file()
    assert json.loads((out / "trainer_state.json").read_text())["global_step"] == 2


@pytest.mark.slow
def test_prefilter_script_on_a_handful_of_rows(model_dir, tmp_path):
    rows = (EXAMPLES / "sums.jsonl").read_text(encoding="utf-8").splitlines()[:4]
    data = tmp_path / "sums.jsonl"
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "prefilter"
    env = {**os.environ, "REFEREE": str(Path(sys.executable).with_name("referee")), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(["sh", str(EXAMPLES / "prefilter.sh"), model_dir, str(data), str(out), "--no-progress"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((out / "report.json").read_text())
    assert (report["rows"], report["rows_scored"], report["num_generations"]) == (4, 4, 8)
    scored = [json.loads(line) for line in (out / "all.jsonl").read_text().splitlines()]
    assert [row["num_samples"] for row in scored] == [8] * 4
    assert all(0.0 <= row["pass_rate"] <= 1.0 for row in scored)


def test_run_recipe_script_takes_overrides_without_a_recipe(monkeypatch):
    spec = importlib.util.spec_from_file_location("run_recipe_example", EXAMPLES / "run_recipe.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    seen = []

    def parse(config, overrides):
        seen.append((config, overrides))
        raise SystemExit(0)

    monkeypatch.setattr(script, "parse_recipe", parse)
    for argv in ([], ["--max_steps", "20"], ["examples/cpu_recipe.yaml", "--max_steps", "20"]):
        with pytest.raises(SystemExit):
            script.main(argv)
    assert seen == [("examples/cpu_recipe.yaml", []), ("examples/cpu_recipe.yaml", ["--max_steps", "20"]),
                    ("examples/cpu_recipe.yaml", ["--max_steps", "20"])]
