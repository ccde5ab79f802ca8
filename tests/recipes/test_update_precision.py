"""Weights a learning rate cannot move: the prediction against a real AdamW step, and the warning."""

import math
import warnings
from types import SimpleNamespace

import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from referee.recipes.train.precision import lost_update_share, warn_on_lost_updates


def _unchanged_after_one_adamw_step(weights: torch.Tensor, learning_rate: float) -> float:
    parameter = torch.nn.Parameter(weights.clone())
    parameter.grad = torch.randn(weights.shape, generator=torch.Generator().manual_seed(0)).to(weights.dtype)
    torch.optim.AdamW([parameter], lr=learning_rate, weight_decay=0.0).step()
    return (parameter.detach() == weights).float().mean().item()


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([torch.bfloat16, torch.float16]), st.floats(-9, -1), st.floats(-7, 0))
def test_the_predicted_share_is_what_one_adamw_step_leaves_unchanged(dtype, log_learning_rate, log_scale):
    """Adam's first step moves every weight by the learning rate: rounding decides the rest.

    Within a percent or two of a power of two the learning rate sits on the half spacing of a
    whole binade, where AdamW's own half-precision arithmetic (its moments, their ratio) decides
    which side each weight falls on; the prediction is held to the step away from those edges."""
    learning_rate, scale = 10.0 ** log_learning_rate, 10.0 ** log_scale
    assume(abs(math.log2(learning_rate) - round(math.log2(learning_rate))) > 0.03)
    weights = (torch.randn(4096, generator=torch.Generator().manual_seed(1)) * scale).to(dtype)
    weights = weights[weights != 0]
    predicted = lost_update_share([torch.nn.Parameter(weights)], learning_rate)
    assert predicted == pytest.approx(_unchanged_after_one_adamw_step(weights, learning_rate), abs=0.01)


def test_fp32_weights_and_frozen_weights_never_count_as_lost():
    fp32 = torch.nn.Parameter(torch.full((100,), 0.5))
    frozen = torch.nn.Parameter(torch.full((100,), 0.5, dtype=torch.bfloat16), requires_grad=False)
    assert lost_update_share([fp32, frozen], 1e-9) == 0.0
    assert lost_update_share([], 1e-6) == 0.0


def _trainer(model, learning_rate, args=None, **engine):
    return SimpleNamespace(model=model, args=SimpleNamespace(learning_rate=learning_rate, **(args or {})),
                           **{"is_deepspeed_enabled": False, "is_fsdp_enabled": False, **engine})


def test_a_bf16_model_at_grpo_learning_rates_is_warned_about():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.Linear(256, 8)).to(torch.bfloat16)
    with pytest.warns(RuntimeWarning, match=r"9\d% of the trainable weights are bf16 .* learning_rate=1e-06"):
        message = warn_on_lost_updates(_trainer(model, 1e-6))
    assert "dtype: float32" in message and "DeepSpeed" in message


@pytest.mark.parametrize("model_dtype, learning_rate, engine", [
    (torch.float32, 1e-6, {}),                                  # fp32 weights: every step lands
    (torch.bfloat16, 1e-2, {}),                                 # a step bigger than bf16's spacing
    (torch.bfloat16, 1e-6, {"is_deepspeed_enabled": True}),     # fp32 master weights
    (torch.bfloat16, 1e-6, {"is_fsdp_enabled": True}),          # upcast to fp32 by accelerate
])
def test_no_warning_where_updates_land(model_dtype, learning_rate, engine):
    model = torch.nn.Linear(256, 256).to(model_dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_on_lost_updates(_trainer(model, learning_rate, **engine)) is None


def test_continuous_batching_casts_fp32_weights_and_is_warned_about():
    """TRL 1.16's continuous-batching generation runs model.to(bfloat16) in place under bf16."""
    torch.manual_seed(0)
    model = torch.nn.Linear(256, 256)  # fp32: fine on its own
    cast = {"use_transformers_continuous_batching": True, "bf16": True, "fp16": False}
    with pytest.warns(RuntimeWarning, match=r"casts the model to bfloat16 in place .* 9\d% of the trainable weights"):
        assert "use_transformers_continuous_batching: false" in warn_on_lost_updates(_trainer(model, 1e-6, cast))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_on_lost_updates(_trainer(model, 1e-6, {**cast, "bf16": False})) is None  # no cast without bf16
        assert warn_on_lost_updates(_trainer(model, 1e-6, cast, is_deepspeed_enabled=True)) is None


def test_a_share_computed_as_if_cast_matches_the_cast_weights():
    weights = torch.randn(4096, generator=torch.Generator().manual_seed(2)) * 0.05
    as_cast = lost_update_share([torch.nn.Parameter(weights)], 1e-5, as_dtype="bfloat16")
    assert as_cast == pytest.approx(lost_update_share([torch.nn.Parameter(weights.to(torch.bfloat16))], 1e-5), abs=0.01)
