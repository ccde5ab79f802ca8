"""A real TRL GRPOTrainer run on CPU with a tiny local model and several weighted referee rewards."""

import math

import pytest

from referee.rewards import compose_rewards, get_reward
from referee.verifiers import format as format_checks

torch = pytest.importorskip("torch")
datasets = pytest.importorskip("datasets")
trl = pytest.importorskip("trl")


def broken_check(completion, **options):
    raise RuntimeError("format service unavailable")


@pytest.fixture
def tiny_model_dir(tmp_path):
    from referee.recipes.common.tiny_model import save_tiny_model

    return save_tiny_model(tmp_path / "model")


@pytest.mark.slow
def test_grpo_trainer_runs_with_weighted_referee_rewards(tmp_path, tiny_model_dir, monkeypatch):
    from transformers import AutoModelForCausalLM

    from referee.recipes.common.loading import load_tokenizer

    torch.set_num_threads(1)
    monkeypatch.setitem(format_checks.CHECKS, "regex", broken_check)  # an internal error inside one reward
    reward_funcs, reward_weights = compose_rewards([
        ("gsm8k_accuracy", 1.0),
        ("gsm8k_format", 0.2),
        {"name": "soft_overlong", "weight": 0.5, "options": {"max_length": 16, "buffer": 4}},
        {"name": "regex_format", "weight": 0.1, "options": {"pattern": "#", "name": "broken_format"}},
    ])
    rows = [
        {"prompt": [{"role": "user", "content": "12 + 7 ="}], "answer": "19"},
        {"prompt": [{"role": "user", "content": "3 + 4 ="}], "answer": "#### 7"},
        {"prompt": [{"role": "user", "content": "5 + 5 ="}], "answer": "ten"},  # unusable gold: reward None
        {"prompt": [{"role": "user", "content": "20 + 1 ="}], "answer": "21"},
    ]
    args = trl.GRPOConfig(
        output_dir=str(tmp_path / "run"), use_cpu=True, bf16=False, gradient_checkpointing=False,
        max_steps=2, per_device_train_batch_size=8, num_generations=2, max_completion_length=16,
        learning_rate=1e-4, report_to="none", logging_steps=1, save_strategy="no", seed=0,
        reward_weights=reward_weights,
    )
    trainer = trl.GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(tiny_model_dir),
        processing_class=load_tokenizer(tiny_model_dir),
        reward_funcs=reward_funcs,
        args=args,
        train_dataset=datasets.Dataset.from_list(rows),
    )
    trainer.train()

    logs = [entry for entry in trainer.state.log_history if "reward" in entry]
    assert len(logs) == 2
    for entry in logs:
        for name in ("gsm8k_accuracy", "gsm8k_format", "soft_overlong"):
            assert math.isfinite(entry[f"rewards/{name}/mean"])
        for status in ("no_answer", "timeout", "error"):
            assert 0.0 <= entry[f"rewards/gsm8k_accuracy/{status}"] <= 1.0
        assert entry["rewards/broken_format/error"] == 1.0  # every call failed, training went on
        assert math.isfinite(entry["loss"]) and math.isfinite(entry["reward"])
    # Each batch holds the four prompts twice; the "ten" row's accuracy reward is None, counted as an error.
    assert [entry["rewards/gsm8k_accuracy/error"] for entry in logs] == [0.25, 0.25]
    statuses = list(trainer._logs["extra"]["gsm8k_accuracy/status"])
    assert "error" in statuses and len(statuses) == len(trainer._logs["extra"]["gsm8k_accuracy/extracted"])


@pytest.mark.slow
def test_a_run_whose_golds_are_all_unusable_stops_instead_of_training_on_shaping_alone(tmp_path, tiny_model_dir):
    """Issue 34: with every gold unusable, TRL ran all its steps on the shaping reward alone
    (rewards/gsm8k_accuracy/error = 1.0); the correctness reward's breaker stops it."""
    from transformers import AutoModelForCausalLM

    from referee.recipes.common.loading import load_tokenizer
    from referee.rewards.trainers.adapters import ErrorRateExceeded

    torch.set_num_threads(1)
    reward_funcs, reward_weights = compose_rewards([
        {"name": "gsm8k_accuracy", "weight": 1.0, "options": {"error_window": 16}},  # trips past 0 errors of 16
        ("gsm8k_format", 0.2)])
    rows = [{"prompt": [{"role": "user", "content": f"{n} + 1 ="}], "answer": "n/a"} for n in range(4)]
    args = trl.GRPOConfig(
        output_dir=str(tmp_path / "run"), use_cpu=True, bf16=False, gradient_checkpointing=False,
        max_steps=4, per_device_train_batch_size=8, num_generations=2, max_completion_length=8,
        learning_rate=1e-4, report_to="none", logging_steps=1, save_strategy="no", seed=0,
        reward_weights=reward_weights,
    )
    trainer = trl.GRPOTrainer(model=AutoModelForCausalLM.from_pretrained(tiny_model_dir),
                              processing_class=load_tokenizer(tiny_model_dir), reward_funcs=reward_funcs, args=args,
                              train_dataset=datasets.Dataset.from_list(rows))
    with pytest.raises(ErrorRateExceeded, match=r"samples were referee errors.*reward gsm8k_accuracy: gold 'n/a'"):
        trainer.train()
    assert trainer.state.global_step == 0  # stopped at the first batch, not after four steps of shaping
