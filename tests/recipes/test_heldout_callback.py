"""EvalCallback during a CPU GRPO run, and the diagnostics that read its metrics."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
import torch
from transformers import TrainerControl, TrainerState, TrainingArguments

from referee.recipes.common.transformers_backend import TransformersBackend
from referee.recipes.diagnostics import DiagnosticsCallback
from referee.recipes.errors import RecipeError
from referee.recipes.heldout.callback import EvalCallback
from referee.recipes.train.recipe import build_trainer, parse_recipe, write_recipe


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def sums(path, count):
    path.write_text("".join(json.dumps({"question": f"{a}+1", "answer": f"#### {a + 1}"}) + "\n" for a in range(count)))
    return path


def recipe(tmp_path, model_dir, **keys):
    return write_recipe(
        tmp_path / "r.yaml", model_name_or_path=str(model_dir), dataset_name=str(sums(tmp_path / "train.jsonl", 8)),
        dataset_format="gsm8k", system_prompt="", reward_funcs=["gsm8k_accuracy", "gsm8k_format"],
        reward_weights=[1.0, 0.1], output_dir=str(tmp_path / "out"), use_cpu=True, bf16=False, use_vllm=False,
        activation_checkpointing=False, per_device_train_batch_size=4, num_generations=4, max_completion_length=4,
        max_steps=4, logging_steps=1, report_to="none", disable_tqdm=True, save_strategy="no", **keys)


def test_eval_runs_at_step_zero_and_every_n_steps_on_the_trained_weights(tmp_path, model_dir, monkeypatch):
    heldout = sums(tmp_path / "heldout.jsonl", 5)
    path = recipe(tmp_path, model_dir, eval={"data": str(heldout), "every_steps": 2, "num_samples": 3, "max_prompts": 3})
    trainer = build_trainer(parse_recipe(str(path)))
    sampled_with = []
    init = TransformersBackend.__init__

    def recording(self, model, *args, **kwargs):
        sampled_with.append(model)
        init(self, model, *args, **kwargs)

    monkeypatch.setattr(TransformersBackend, "__init__", recording)
    with contextlib.redirect_stdout(io.StringIO()):
        trainer.train()
    evals = [entry for entry in trainer.state.log_history if "eval/pass@1" in entry]
    assert [entry["step"] for entry in evals] == [0, 2, 4]
    assert all({"eval/pass@2", "eval/pass@3", "eval/maj@3", "eval/mean_length", "eval/truncated_share",
                "eval/prompts"} <= set(entry) for entry in evals)
    assert evals[0]["eval/prompts"] == 3
    assert "eval/train_reward" not in evals[0] and "eval/train_reward" in evals[1]  # no training reward before step 1
    trained = [entry["step"] for entry in trainer.state.log_history if "reward" in entry]
    assert trained == [1, 2, 3, 4]  # an evaluation never swallows the training log of its step
    assert sampled_with and all(model is trainer.model for model in sampled_with)  # no second copy of the weights
    assert trainer.model.training  # evaluation hands the model back in training mode
    rows = (tmp_path / "out" / "eval" / "step-000002.jsonl").read_text().splitlines()
    assert [json.loads(row)["row_index"] for row in rows] == [0, 1, 2]
    callback = next(c for c in trainer.callback_handler.callbacks if isinstance(c, EvalCallback))
    assert [entry["step"] for entry in callback.history] == [0, 2, 4]
    assert [r.__name__ for r in callback.rewards] == ["gsm8k_accuracy"]  # correctness only, never the format reward


@pytest.mark.parametrize("block, message", [
    ({"data": "h.jsonl", "every_step": 5}, "eval has no key 'every_step'; did you mean 'every_steps'?"),
    ({"data": "h.jsonl", "num_samples": 0}, "eval.num_samples is 0; it must be a whole number >= 1."),
    ({"every_steps": 5}, "eval needs data: the held-out rows"),
    ({"data": "h.jsonl", "temperature": -1}, "temperature -1 is not a number >= 0"),
])
def test_a_bad_eval_block_is_refused_before_anything_loads(tmp_path, model_dir, block, message):
    with pytest.raises(RecipeError) as error:
        parse_recipe(str(recipe(tmp_path, model_dir, eval=block)))
    assert message in str(error.value)


def feed(callback, logs_by_step):
    args, state = TrainingArguments(output_dir="/tmp/run", report_to="none"), TrainerState()
    for step, logs in logs_by_step:
        state.global_step = step
        callback.on_log(args, state, TrainerControl(), logs=dict(logs))
    return [finding.cause for finding in callback.monitor.reported]


def evaluations(train_rewards, passes):
    return [(step * 10, {"eval/train_reward": r, "eval/pass@1": p})
            for step, (r, p) in enumerate(zip(train_rewards, passes))]


def test_the_alarm_rings_when_the_training_reward_rises_and_held_out_accuracy_does_not():
    found = feed(DiagnosticsCallback(), evaluations([0.2, 0.3, 0.5, 0.7], [0.10, 0.11, 0.10, 0.09]))
    assert found == ["reward_eval_divergence"]


@pytest.mark.parametrize("train_rewards, passes", [
    ([0.2, 0.3, 0.5, 0.7], [0.10, 0.15, 0.25, 0.35]),  # held-out accuracy follows the reward: learning
    ([0.2, 0.2, 0.21, 0.2], [0.10, 0.10, 0.10, 0.10]),  # nothing moves: no divergence to speak of
    ([0.2, 0.7], [0.1, 0.1]),  # too few evaluations to speak of a trend
])
def test_the_alarm_stays_quiet_on_a_run_that_learns(train_rewards, passes):
    assert feed(DiagnosticsCallback(), evaluations(train_rewards, passes)) == []


def test_format_learnt_without_correctness_is_flagged():
    callback = DiagnosticsCallback()
    callback.monitor = type(callback.monitor)(callback.config, correctness=["acc"], formats=["fmt"])
    logs = [(step, {"reward": 0.1, "rewards/acc/mean": 0.05, "rewards/fmt/mean": 0.1 * step}) for step in range(1, 9)]
    assert feed(callback, logs) == ["format_without_correctness"]
    callback = DiagnosticsCallback()
    callback.monitor = type(callback.monitor)(callback.config, correctness=["acc"], formats=["fmt"])
    learning = [(step, {"reward": 0.1, "rewards/acc/mean": 0.05 * step, "rewards/fmt/mean": 0.1 * step})
                for step in range(1, 9)]
    assert feed(callback, learning) == []


def test_attach_reads_which_rewards_are_correctness_and_which_format(tmp_path, model_dir):
    trainer = build_trainer(parse_recipe(str(recipe(tmp_path, model_dir))))
    callback = next(c for c in trainer.callback_handler.callbacks if isinstance(c, DiagnosticsCallback))
    assert callback.monitor.correctness == ("rewards/gsm8k_accuracy/mean",)
    assert callback.monitor.formats == ("rewards/gsm8k_format/mean",)


def test_an_eval_block_that_is_not_a_mapping_is_one_line():
    from referee.recipes.heldout.callback import EvalSettings

    with pytest.raises(ValueError, match=r"^eval must be a mapping of settings \(data, every_steps,"):
        EvalSettings.from_dict("heldout.jsonl")
