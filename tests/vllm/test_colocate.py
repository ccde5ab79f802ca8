"""`referee train` with ``use_vllm: true, vllm_mode: colocate`` through a real vLLM engine on the CPU.

Each run is `referee train` in a child process (tests/vllm/colocate_check.py) with a check after
every optimizer step: the engine, synced as the trainer syncs it, gives the trainer's log-probs of
a fixed completion within float32's tolerance, while the trainer's own log-probs moved by far
more than that (a sync that did nothing would show). At the end the same check is shown to fail
on an engine that was not synced and on one reloaded without the tied head's re-pack.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.recipes.train.recipe import write_recipe

pytestmark = pytest.mark.slow

# float32 end to end: the engine and the trainer agree to rounding (measured: under 1e-6).
TOLERANCE = 1e-4
CHECK = Path(__file__).with_name("colocate_check.py")
# About half of a random model's completions hold a digit: a reward with a spread, so there is a gradient.
DIGIT_REWARD = {"name": "regex_format", "weight": 0.5, "options": {"pattern": "[0-9]"}}


def colocate_recipe(tmp_path: Path, model_dir: str, data: Path, **keys) -> Path:
    settings = dict(
        model_name_or_path=model_dir, dataset_name=str(data), dataset_format="gsm8k", system_prompt="",
        reward_funcs=["gsm8k_accuracy", DIGIT_REWARD], output_dir=str(tmp_path / "out"),
        use_cpu=True, bf16=False, use_vllm=True, vllm_mode="colocate", vllm_max_model_length=128,
        activation_checkpointing=False, per_device_train_batch_size=4, num_generations=4, max_completion_length=8,
        learning_rate=3e-4, lr_scheduler_type="constant", max_steps=3, logging_steps=1, save_strategy="no",
        report_to="none", seed=0, disable_tqdm=True,
    )
    return write_recipe(tmp_path / "recipe.yaml", **{**settings, **keys})


def checked_run(tmp_path: Path, recipe: Path, run_python) -> dict:
    result = tmp_path / "check.json"
    done = run_python(str(CHECK), str(recipe), str(result))
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Traceback" not in done.stderr, done.stderr[-4000:]  # the exit is clean (no 'Invalid process group')
    return {**json.loads(result.read_text()), "stderr": done.stderr}


def log_history(output_dir: Path) -> list[dict]:
    return json.loads((output_dir / "trainer_state.json").read_text())["log_history"]


def assert_synced_after_every_step(check: dict, steps: int) -> None:
    assert check["sync"] == "cpu-reload" and check["dtype"] == "torch.float32"
    assert [entry["step"] for entry in check["steps"]] == list(range(1, steps + 1))
    for entry in check["steps"]:
        assert entry["gap"] < TOLERANCE, entry
        assert entry["moved"] > 100 * TOLERANCE, entry  # the weights changed: an engine left behind would show


def test_full_model_with_accumulation_two_iterations_and_eval(tmp_path, model_dir, sums_jsonl, run_python):
    recipe = colocate_recipe(
        tmp_path, model_dir, sums_jsonl, gradient_accumulation_steps=2, num_iterations=2,
        eval={"data": str(sums_jsonl), "every_steps": 2, "num_samples": 2, "max_prompts": 4})
    check = checked_run(tmp_path, recipe, run_python)
    assert_synced_after_every_step(check, steps=3)
    controls = check["controls"]
    assert controls["before_sync"] > 100 * TOLERANCE  # not synced: the check fails
    assert controls["reload_without_repack"] > 100 * TOLERANCE  # vLLM's reload alone: the tied head is stale
    assert controls["full_sync"] < TOLERANCE
    history = log_history(tmp_path / "out")
    train = [entry for entry in history if "loss" in entry]
    assert len(train) == 3
    # TRL's own comparison of the sampled tokens' log-probs (engine against trainer) agrees, at the steps that
    # generate (num_iterations 2: every other step).
    sampled = [entry["sampling/sampling_logp_difference/max"] for entry in train
               if "sampling/sampling_logp_difference/max" in entry]
    assert len(sampled) == 2 and all(gap < TOLERANCE for gap in sampled)
    # The eval callback sampled through the engine at step 0 and step 2: 4 prompts x 2 samples each.
    for step in (0, 2):
        rows = [json.loads(line) for line in (tmp_path / "out" / "eval" / f"step-{step:06d}.jsonl").read_text().splitlines()]
        assert len(rows) == 4 and all(len(row["samples"]) == 2 for row in rows)
    assert [entry["step"] for entry in history if "eval/pass@1" in entry] == [0, 2]


def test_lora_with_dynamic_sampling_and_curriculum(tmp_path, model_dir, sums_jsonl, run_python):
    state = tmp_path / "curriculum.json"
    recipe = colocate_recipe(
        tmp_path, model_dir, sums_jsonl, use_peft=True, lora_r=8, lora_alpha=16, lora_dropout=0.0, learning_rate=3e-3,
        per_device_train_batch_size=8, dynamic_sampling={"reward": "regex_format", "max_rounds": 3},
        curriculum={"sampler": "band", "state": str(state), "half_life": None})
    check = checked_run(tmp_path, recipe, run_python)
    assert_synced_after_every_step(check, steps=3)
    assert check["controls"]["before_sync"] > 100 * TOLERANCE and check["controls"]["full_sync"] < TOLERANCE
    history = [entry for entry in log_history(tmp_path / "out") if "loss" in entry]
    # TRL's own comparison of every sampled token, every round (no dropout: TRL scores in train mode).
    assert all(entry["sampling/sampling_logp_difference/max"] < TOLERANCE for entry in history)
    rounds = [entry["dynamic_sampling/rounds"] for entry in history]
    generated = [entry["dynamic_sampling/generated_completions"] for entry in history]
    assert len(rounds) == 3 and all(1 <= r <= 3 for r in rounds)
    assert generated == [r * 2 * 4 for r in rounds]  # each round: 2 prompts x G=4 through the engine
    # The curriculum learned from every completion the engine generated (Beta(1, 1) prior on 16 prompts; no forgetting).
    posterior = json.loads(state.read_text())
    assert posterior["rows"] == 16
    assert sum(posterior["alpha"]) + sum(posterior["beta"]) - 2 * 16 == sum(generated)
