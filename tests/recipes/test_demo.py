"""`referee demo` and its parts: the sums, the warm start, greedy evaluation, the reward curve, the outputs."""

from __future__ import annotations

import json

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from transformers import AutoModelForCausalLM

from referee.recipes.cli import main
from referee.recipes.common.loading import load_tokenizer
from referee.recipes.common.tiny_model import build_char_tokenizer, build_tiny_model
from referee.recipes.demo import DemoSettings, run_demo
from referee.recipes.demo.arithmetic import Sum, grpo_rows, split_sums
from referee.recipes.demo.evaluation import greedy_completions, reward_accuracy
from referee.recipes.demo.reward_curve import logged_series, moving_average, plot_reward_curve
from referee.recipes.demo.warm_start import collate, encode_example, warm_start
from referee.rewards import get_reward

torch.set_num_threads(1)

TINY = DemoSettings(held_out=4, warm_start_steps=3, warm_start_batch_size=4, grpo_steps=2, grpo_batch_size=4,
                    num_generations=2)


def test_held_out_sums_are_never_trained_on():
    train, held_out = split_sums(0, 19, 80, seed=3)
    assert len(train) == 320 and len(held_out) == 80 and not set(train) & set(held_out)
    assert split_sums(0, 19, 80, seed=3) == (train, held_out)
    assert split_sums(0, 19, 80, seed=4)[1] != held_out
    with pytest.raises(ValueError, match="held_out=100 must be between 1 and 99"):
        split_sums(0, 9, 100)


def test_gold_rows_are_scored_by_the_gsm8k_reward():
    problems = [Sum(a, b) for a in range(0, 20, 3) for b in range(0, 20, 7)]
    rows = grpo_rows(problems)
    reward = get_reward("gsm8k_accuracy")
    assert reward(completions=[p.completion for p in problems], answer=[r["answer"] for r in rows]) == [1.0] * len(rows)
    wrong = [f"#### {p.answer + 1}" for p in problems]
    assert reward(completions=wrong, answer=[r["answer"] for r in rows]) == [0.0] * len(rows)


def test_loss_is_on_the_reply_only():
    tokenizer = build_char_tokenizer()
    prompt, reply = encode_example(tokenizer, Sum(12, 7).prompt, Sum(12, 7).completion)
    batch = collate([(prompt, reply)], tokenizer.pad_token_id)
    labels = batch["labels"][0]
    assert (labels[: len(prompt)] == -100).all()
    assert tokenizer.decode(labels[len(prompt):]) == "#### 19<eos>"


@pytest.mark.slow
def test_warm_start_teaches_the_format():
    tokenizer = build_char_tokenizer()
    model = build_tiny_model(tokenizer, hidden_size=64, num_layers=2, intermediate_size=128, seed=0)
    problems = [Sum(a, b) for a in range(10) for b in range(10)]
    losses = warm_start(model, tokenizer, [(p.prompt, p.completion) for p in problems], steps=60, batch_size=32,
                        learning_rate=3e-3, warmup_steps=5, progress=False)
    assert losses[-1] < losses[0] / 3
    replies = greedy_completions(model, tokenizer, [p.prompt for p in problems[:20]], max_new_tokens=8)
    assert all(reply.startswith("#### ") for reply in replies), replies


def test_greedy_completions_are_deterministic_and_keep_the_mode():
    tokenizer = build_char_tokenizer()
    model = build_tiny_model(tokenizer, hidden_size=32, num_layers=1, intermediate_size=64).train()
    prompts = [Sum(1, 2).prompt, Sum(13, 4).prompt, Sum(0, 0).prompt]
    first = greedy_completions(model, tokenizer, prompts, max_new_tokens=6, batch_size=2)
    assert first == greedy_completions(model, tokenizer, prompts, max_new_tokens=6)
    assert len(first) == 3 and model.training and tokenizer.padding_side == "right"


def test_accuracy_counts_only_full_credit():
    reward = get_reward("gsm8k_accuracy")
    assert reward_accuracy(reward, ["#### 5", "5", "#### 6", "no idea"], answer=["5"] * 4) == 0.5
    assert reward_accuracy(reward, [], answer=[]) == 0.0


@given(st.lists(st.floats(-10, 10), min_size=1, max_size=40), st.integers(1, 10))
def test_moving_average_is_the_mean_of_its_window(values, window):
    averages = moving_average(values, window)
    for index, average in enumerate(averages):
        span = values[max(0, index - window + 1): index + 1]
        assert average == pytest.approx(sum(span) / len(span), abs=1e-9)


def test_reward_curve_needs_the_key(tmp_path):
    history = [{"step": 1, "reward": 0.1, "loss": 0.0}, {"step": 2, "train_runtime": 3.0}, {"step": 2, "reward": 0.3}]
    assert logged_series(history, "reward") == ([1, 2], [0.1, 0.3])
    assert plot_reward_curve(history, tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ValueError, match="No 'rewards/x/mean' in the log history"):
        plot_reward_curve(history, tmp_path / "d.png", keys=("rewards/x/mean",))


@pytest.mark.slow
def test_demo_writes_a_model_a_curve_and_metrics(tmp_path):
    lines = []
    metrics = run_demo(tmp_path, TINY, log=lines.append)
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved == metrics
    for key in ("greedy_accuracy_before", "greedy_accuracy_after"):
        assert 0.0 <= saved[key] <= 1.0
    assert saved["seconds"] >= saved["grpo_seconds"] > 0 and saved["settings"]["grpo_steps"] == 2
    assert (tmp_path / "reward_curve.png").read_bytes()[:4] == b"\x89PNG"
    tokenizer = load_tokenizer(tmp_path / "model")
    assert tokenizer.decode(tokenizer("#### 19")["input_ids"]) == "#### 19"
    assert AutoModelForCausalLM.from_pretrained(tmp_path / "model").config.model_type == "qwen2"
    assert any("after the warm start" in line for line in lines) and any("points)" in line for line in lines)
    # two GRPO steps are compared as halves and say so, not as "the first and last tenth of the steps"
    assert any(line.startswith("sampled reward: first half of the 2 logged steps ") for line in lines)
    assert not any("tenth" in line for line in lines)


def test_demo_command_takes_its_options(tmp_path, monkeypatch):
    seen = {}
    monkeypatch.setattr("referee.recipes.demo.run_demo", lambda out, settings: seen.update(out=out, settings=settings))
    assert main(["demo", "--output-dir", str(tmp_path), "--grpo-steps", "5", "--seed", "2"]) == 0
    assert seen["out"] == str(tmp_path)
    assert (seen["settings"].grpo_steps, seen["settings"].seed, seen["settings"].threads) == (5, 2, 1)
