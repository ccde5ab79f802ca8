"""The loss-aggregation layer is exact: gradients equal each rule's formula, computed here.

Every rule is checked on the same batches against ``reference_loss``, written from the
formulas alone (no TRL, no referee code): gradient accumulation 1 and 2, ``num_iterations=2``
(old log-probabilities differ from the current ones, so clipping fires on both sides),
truncated completions masked, ``beta=0`` and ``beta=0.04``. One more test runs TRL's own
generation, scoring, masking and buffering to build the batch.
"""

from __future__ import annotations

import itertools

import pytest
import torch
from datasets import Dataset
from trl import GRPOTrainer

from referee.recipes.common.loading import load_tokenizer
from referee.recipes.common.tiny_model import build_char_tokenizer, build_tiny_model
from referee.recipes.train import loss as loss_rules
from referee.recipes.train.config import build_grpo_config
from referee.recipes.train.loss import AggregationContext, register_aggregation
from referee.recipes.train.trainer import RefereeGRPOTrainer

torch.set_num_threads(1)

EPSILON_LOW, EPSILON_HIGH = 0.2, 0.28
BATCH, PROMPT_LENGTH, MAX_COMPLETION = 4, 3, 6
MODES = ("token", "token-local", "sequence", "constant", "sequence-sum")
# Completion lengths per micro-batch: 0 is a truncated completion that
# mask_truncated_completions removed from the loss.
LENGTHS = ([6, 3, 0, 1], [2, 6, 5, 0])


# --- the formulas, independently ------------------------------------------------------------

def completion_logps(model, batch):
    """Per-token log-probabilities of the completion tokens under ``model``: (B, T)."""
    input_ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
    attention_mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
    logits = logits[:, batch["prompt_ids"].size(1) - 1 : -1]
    return torch.log_softmax(logits.float(), dim=-1).gather(-1, batch["completion_ids"].unsqueeze(-1)).squeeze(-1)


def token_losses(model, batch, beta):
    """The GRPO per-token loss with DAPO clip-higher and the k3 KL term, masked: (B, T).

    The KL term carries the importance ratio (TRL's default ``use_bias_correction_kl=True``,
    the DeepSeek-V3.2 unbiased estimator).
    """
    logps = completion_logps(model, batch)
    ratio = torch.exp(logps - batch["old_per_token_logps"])
    advantages = batch["advantages"].unsqueeze(1)
    clipped = torch.clamp(ratio, 1 - EPSILON_LOW, 1 + EPSILON_HIGH)
    per_token = -torch.min(ratio * advantages, clipped * advantages)
    if beta:
        delta = batch["ref_per_token_logps"] - logps
        per_token = per_token + beta * ratio * (torch.exp(delta) - delta - 1)
    return per_token * batch["completion_mask"]


def reference_loss(model, micro_batches, mode, beta):
    """The loss of one optimizer step over ``micro_batches`` (one process), from the formula."""
    losses = [token_losses(model, batch, beta) for batch in micro_batches]
    masks = [batch["completion_mask"] for batch in micro_batches]
    steps, width = len(micro_batches), MAX_COMPLETION
    completions = sum(mask.size(0) for mask in masks)
    if mode == "token":
        return sum(loss.sum() for loss in losses) / sum(mask.sum() for mask in masks)
    if mode == "token-local":
        return sum(loss.sum() / mask.sum() for loss, mask in zip(losses, masks)) / steps
    if mode == "sequence":
        return sum((loss.sum(1) / mask.sum(1).clamp(min=1)).sum() for loss, mask in zip(losses, masks)) / completions
    if mode == "constant":
        return sum(loss.sum() for loss in losses) / (completions * width)
    if mode == "sequence-sum":
        return sum(loss.sum(1).sum() for loss in losses) / completions
    if mode == "sqrt-length":
        return sum((loss.sum(1) / mask.sum(1).clamp(min=1).sqrt()).sum() for loss, mask in zip(losses, masks)) / completions
    raise AssertionError(mode)


# --- batches and trainers -------------------------------------------------------------------

@pytest.fixture(scope="module")
def loss_model_dir(tmp_path_factory):
    """A model smaller than the session's ``model_dir`` (one layer, 32 wide, 32 positions), saved to
    disk: with beta > 0 TRL loads the reference model from its path."""
    folder = tmp_path_factory.mktemp("tiny")
    tokenizer = build_char_tokenizer()
    build_tiny_model(tokenizer, hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1,
                     intermediate_size=64, max_positions=32, seed=0).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def digit_count(completions, **kwargs):
    return [float(sum(ch.isdigit() for ch in c)) for c in completions]


def make_trainer(tmp_path, loss_model_dir, *, mode=None, loss_type="dapo", steps=1, beta=0.0,
                 trainer_class=RefereeGRPOTrainer, reward=digit_count, prompts=("12+3=", "7+8=", "40+2=", "9+9="),
                 **overrides):
    tokenizer = load_tokenizer(loss_model_dir)
    settings = dict(loss_type=loss_type, beta=beta, per_device_train_batch_size=BATCH, num_generations=BATCH,
                    gradient_accumulation_steps=steps, num_iterations=2, max_completion_length=MAX_COMPLETION,
                    epsilon=EPSILON_LOW, epsilon_high=EPSILON_HIGH, report_to="none", logging_steps=1, seed=0)
    if mode is not None:
        settings["loss_aggregation"] = mode
    args = build_grpo_config(str(tmp_path), profile="cpu", **{**settings, **overrides})
    trainer = trainer_class(
        model=loss_model_dir, args=args, processing_class=tokenizer,
        reward_funcs=reward,
        train_dataset=Dataset.from_dict({"prompt": list(prompts) * 4}),
    )
    trainer.model.train()
    trainer.current_gradient_accumulation_steps = steps
    return trainer


def crafted_batches(model, steps, seed=0):
    """``steps`` micro-batches shaped like TRL's buffered inputs, old and reference log-probs perturbed."""
    generator = torch.Generator().manual_seed(seed)
    vocab = model.config.vocab_size
    batches = []
    for lengths in LENGTHS[:steps]:
        prompt_ids = torch.randint(4, vocab, (BATCH, PROMPT_LENGTH), generator=generator)
        prompt_mask = torch.ones(BATCH, PROMPT_LENGTH, dtype=torch.long)
        prompt_mask[0, 0] = 0  # left padding
        completion_ids = torch.randint(4, vocab, (BATCH, MAX_COMPLETION), generator=generator)
        completion_mask = (torch.arange(MAX_COMPLETION) < torch.tensor(lengths).unsqueeze(1)).long()
        batch = {
            "prompt_ids": prompt_ids, "prompt_mask": prompt_mask,
            "completion_ids": completion_ids, "completion_mask": completion_mask,
            "advantages": torch.randn(BATCH, generator=generator),
        }
        with torch.no_grad():
            current = completion_logps(model, batch)
        batch["old_per_token_logps"] = current + 0.4 * torch.randn(current.shape, generator=generator)
        batch["ref_per_token_logps"] = current + 0.3 * torch.randn(current.shape, generator=generator)
        batches.append(batch)
    total = sum(int(batch["completion_mask"].sum()) for batch in batches)
    for batch in batches:
        batch["num_items_in_batch"] = torch.tensor(total)
    return batches


def gradient(model, loss_fn):
    model.zero_grad(set_to_none=True)
    loss_fn().backward()
    return torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])


def trainer_gradient(trainer, batches):
    def accumulated():
        return sum(trainer.compute_loss(trainer.model, batch) for batch in batches)
    return gradient(trainer.model, accumulated)


def assert_same(got, want):
    # float32 rounding: relative to the whole gradient, not to each of its near-zero entries.
    assert torch.isfinite(got).all()
    assert (got - want).norm() <= 1e-5 * want.norm(), float((got - want).norm() / want.norm())


# --- tests ----------------------------------------------------------------------------------

@pytest.mark.parametrize("beta", [0.0, 0.04])
@pytest.mark.parametrize("steps", [1, 2])
@pytest.mark.parametrize("mode", MODES)
def test_gradient_equals_formula(tmp_path, loss_model_dir, mode, steps, beta):
    trainer = make_trainer(tmp_path, loss_model_dir, mode=mode, steps=steps, beta=beta)
    batches = crafted_batches(trainer.model, steps)
    got = trainer_gradient(trainer, batches)
    want = gradient(trainer.model, lambda: reference_loss(trainer.model, batches, mode, beta))
    assert got.abs().sum() > 0
    assert_same(got, want)


def test_batch_tells_the_modes_apart(tmp_path, loss_model_dir):
    # The exactness test can fail: on its batch every formula gives a different gradient.
    trainer = make_trainer(tmp_path, loss_model_dir, steps=2, beta=0.04)
    batches = crafted_batches(trainer.model, 2)
    grads = {mode: gradient(trainer.model, lambda m=mode: reference_loss(trainer.model, batches, m, 0.04))
             for mode in MODES}
    for first, second in itertools.combinations(MODES, 2):
        assert not torch.allclose(grads[first], grads[second], rtol=1e-3), (first, second)


def test_clipping_fires_on_both_sides(tmp_path, loss_model_dir):
    trainer = make_trainer(tmp_path, loss_model_dir, mode="token", steps=2)
    for batch in crafted_batches(trainer.model, 2):
        trainer.compute_loss(trainer.model, batch)
    metrics = trainer._metrics["train"]
    assert max(metrics["clip_ratio/low_mean"]) > 0 and max(metrics["clip_ratio/high_mean"]) > 0


TRL_EQUIVALENT = {"token": "dapo", "token-local": "bnpo", "sequence": "grpo", "constant": "dr_grpo",
                  "sequence-sum": "luspo"}


@pytest.mark.parametrize("mode", MODES)
def test_loss_and_metrics_are_trls(tmp_path, loss_model_dir, mode):
    trl_trainer = make_trainer(tmp_path / "trl", loss_model_dir, loss_type=TRL_EQUIVALENT[mode], steps=2, beta=0.04,
                               trainer_class=GRPOTrainer)
    referee_trainer = make_trainer(tmp_path / "referee", loss_model_dir, mode=mode, steps=2, beta=0.04)
    batches = crafted_batches(trl_trainer.model, 2)
    for batch in batches:
        want = trl_trainer.compute_loss(trl_trainer.model, batch)
        got = referee_trainer.compute_loss(referee_trainer.model, batch)
        torch.testing.assert_close(got, want, rtol=2e-5, atol=1e-8)
    trl_metrics, referee_metrics = trl_trainer._metrics["train"], referee_trainer._metrics["train"]
    assert sorted(referee_metrics) == sorted(trl_metrics)
    for name in trl_metrics:
        assert referee_metrics[name] == pytest.approx(trl_metrics[name], rel=1e-6, abs=1e-9), name


def sqrt_length(context: AggregationContext) -> torch.Tensor:
    lengths = context.mask.sum(-1, keepdim=True).clamp(min=1.0)
    return 1.0 / (lengths.sqrt() * context.batch_size * context.accumulation_steps)


def half_token(context: AggregationContext) -> torch.Tensor:
    return 0.5 / context.window_tokens.clamp(min=1.0)


@pytest.mark.parametrize("steps", [1, 2])
def test_registered_rule_is_exact(tmp_path, loss_model_dir, steps):
    register_aggregation("sqrt-length", sqrt_length)
    trainer = make_trainer(tmp_path, loss_model_dir, mode="sqrt-length", steps=steps)
    batches = crafted_batches(trainer.model, steps)
    got = trainer_gradient(trainer, batches)
    want = gradient(trainer.model, lambda: reference_loss(trainer.model, batches, "sqrt-length", 0.0))
    assert_same(got, want)


def test_rule_from_import_path_with_kl_is_exact_when_one_weight_per_batch(tmp_path, loss_model_dir):
    trainer = make_trainer(tmp_path, loss_model_dir, mode=f"{__name__}:half_token", steps=2, beta=0.04)
    batches = crafted_batches(trainer.model, 2)
    got = trainer_gradient(trainer, batches)
    want = gradient(trainer.model, lambda: 0.5 * reference_loss(trainer.model, batches, "token", 0.04))
    assert_same(got, want)


def test_per_completion_rule_with_kl_is_refused(tmp_path, loss_model_dir):
    register_aggregation("sqrt-length", sqrt_length)
    trainer = make_trainer(tmp_path, loss_model_dir, mode="sqrt-length", steps=1, beta=0.04)
    with pytest.raises(ValueError, match="cannot be exact with the KL term; set beta=0"):
        trainer.compute_loss(trainer.model, crafted_batches(trainer.model, 1)[0])


def test_non_positive_weights_are_refused(tmp_path, loss_model_dir):
    register_aggregation("zero-for-short", lambda c: (c.mask.sum(-1, keepdim=True) > 2).float())
    trainer = make_trainer(tmp_path, loss_model_dir, mode="zero-for-short", steps=1)
    with pytest.raises(ValueError, match="not finite and positive on a loss token"):
        trainer.compute_loss(trainer.model, crafted_batches(trainer.model, 1)[0])


def test_buffered_inputs_are_not_changed(tmp_path, loss_model_dir):
    trainer = make_trainer(tmp_path, loss_model_dir, mode="sequence-sum", steps=1)
    batch = crafted_batches(trainer.model, 1)[0]
    advantages = batch["advantages"].clone()
    trainer.compute_loss(trainer.model, batch)
    assert torch.equal(batch["advantages"], advantages)


@pytest.mark.parametrize("mode", ["token", "sequence"])
def test_evaluation_loss_has_no_accumulation(tmp_path, loss_model_dir, mode):
    trainer = make_trainer(tmp_path, loss_model_dir, mode=mode, steps=2, beta=0.04)
    batch = crafted_batches(trainer.model, 1)[0]
    trainer.model.eval()
    with torch.no_grad():
        got = trainer.compute_loss(trainer.model, batch)
        want = reference_loss(trainer.model, [batch], mode, 0.04)
    torch.testing.assert_close(got, want, rtol=2e-5, atol=1e-8)


def test_trl_pipeline_batch(tmp_path, loss_model_dir):
    """TRL generates, scores, masks truncated completions and buffers; the gradient is still the formula's."""
    trainer = make_trainer(tmp_path, loss_model_dir, mode="token", steps=2, beta=0.04, mask_truncated_completions=True)
    # Stop on any digit as well as <eos>, so some completions end and others are truncated.
    tokenizer = trainer.processing_class
    trainer.eos_token_ids = [tokenizer.eos_token_id, *tokenizer.convert_tokens_to_ids(list("0123456789"))]
    trainer.generation_config.eos_token_id = trainer.eos_token_ids
    torch.manual_seed(0)
    trainer._prepare_inputs(next(iter(trainer.get_train_dataloader())))
    batches = trainer._buffered_inputs
    masks = torch.cat([batch["completion_mask"] for batch in batches])
    assert (masks.sum(1) == 0).any() and (masks.sum(1) > 0).any()
    with torch.no_grad():  # the first of the num_iterations=2 updates moved the policy
        for parameter in trainer.model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    for mode in MODES:
        trainer.aggregation = loss_rules.get_aggregation(mode)
        trainer.loss_type = trainer.aggregation.base_loss_type
        got = trainer_gradient(trainer, batches)
        want = gradient(trainer.model, lambda: reference_loss(trainer.model, batches, mode, 0.04))
        assert_same(got, want)


def constant_for_sevens(prompts, completions, **kwargs):
    """The digit count, except that prompts starting with 7 always score 0: their groups are constant."""
    return [0.0 if prompt.startswith("7") else float(sum(ch.isdigit() for ch in completion))
            for prompt, completion in zip(prompts, completions)]


@pytest.mark.parametrize("beta", [0.0, 0.04])
@pytest.mark.parametrize("steps", [1, 2])
def test_dynamic_sampling_batch_gradient_equals_formula_on_the_kept_completions(tmp_path, loss_model_dir, steps, beta):
    """Groups dropped and refilled by dynamic sampling leave every rule exact: the gradient is the
    formula's over the kept completions alone (their tokens, their count), with accumulation and KL."""
    trainer = make_trainer(tmp_path, loss_model_dir, mode="token", steps=steps, beta=beta,
                           mask_truncated_completions=True, reward=constant_for_sevens,
                           prompts=("7+8=", "12+3=", "7+1=", "70+2="),
                           dynamic_sampling={"max_rounds": 8, "on_shortfall": "repeat"})
    tokenizer = trainer.processing_class  # stop on any digit too, so some completions end and others are truncated
    trainer.eos_token_ids = [tokenizer.eos_token_id, *tokenizer.convert_tokens_to_ids(list("0123456789"))]
    trainer.generation_config.eos_token_id = trainer.eos_token_ids
    torch.manual_seed(0)
    trainer._prepare_inputs(next(iter(trainer.get_train_dataloader())))
    batches = trainer._buffered_inputs
    prompts = trainer.processing_class.batch_decode(torch.cat([b["prompt_ids"] for b in batches]),
                                                    skip_special_tokens=True)
    assert not any(prompt.strip().startswith("7") for prompt in prompts)  # the constant groups were dropped
    assert trainer._metrics["train"]["dynamic_sampling/kept_share"][-1] < 1.0  # and there were some to drop
    total = sum(int(batch["completion_mask"].sum()) for batch in batches)
    assert total > 0 and all(int(batch["num_items_in_batch"]) == total for batch in batches)
    with torch.no_grad():  # num_iterations=2: the first update moved the policy
        for parameter in trainer.model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    for mode in MODES:
        trainer.aggregation = loss_rules.get_aggregation(mode)
        trainer.loss_type = trainer.aggregation.base_loss_type
        got = trainer_gradient(trainer, batches)
        want = gradient(trainer.model, lambda: reference_loss(trainer.model, batches, mode, beta))
        assert_same(got, want)
    # The check can fail: a normaliser that still counted the dropped groups' tokens is caught.
    trainer.aggregation, trainer.loss_type = loss_rules.get_aggregation("token"), "dr_grpo"
    stale = [{**batch, "num_items_in_batch": batch["num_items_in_batch"] + 8} for batch in batches]
    with pytest.raises(AssertionError):
        assert_same(trainer_gradient(trainer, stale),
                    gradient(trainer.model, lambda: reference_loss(trainer.model, batches, "token", beta)))
    register_aggregation("sqrt-length", sqrt_length)
    if beta == 0.0:  # a registered per-completion rule, exact without KL
        trainer.aggregation = loss_rules.get_aggregation("sqrt-length")
        trainer.loss_type, trainer._check_rule = trainer.aggregation.base_loss_type, True
        assert_same(trainer_gradient(trainer, batches),
                    gradient(trainer.model, lambda: reference_loss(trainer.model, batches, "sqrt-length", 0.0)))
