"""Pinned GRPO defaults, the CPU profile, loss_aggregation resolution and the TRL version check."""

from __future__ import annotations

import pytest

from referee.recipes.train import trl_version
from referee.recipes.train.config import CPU_PROFILE, PINNED_DEFAULTS, TRL_LOSS_AGGREGATIONS, RefereeGRPOConfig, build_grpo_config

# The seeds' recommended set-up, as the issue lists it.
SEEDS_SETUP = {
    "use_vllm": True, "vllm_mode": "colocate", "loss_type": "dapo", "beta": 0.0, "scale_rewards": "group",
    "mask_truncated_completions": True, "epsilon": 0.2, "epsilon_high": 0.28, "num_generations": 8,
    "num_iterations": 1, "temperature": 1.0,
}


def cpu_config(tmp_path, **overrides):
    return RefereeGRPOConfig(output_dir=str(tmp_path), use_cpu=True, bf16=False, report_to="none", **overrides)


def test_pinned_defaults_are_the_seeds_setup():
    assert {key: PINNED_DEFAULTS[key] for key in SEEDS_SETUP} == SEEDS_SETUP


def test_cpu_profile_keeps_the_pinned_choices(tmp_path):
    config = build_grpo_config(str(tmp_path), profile="cpu")
    for key, value in PINNED_DEFAULTS.items():
        assert getattr(config, key) == CPU_PROFILE.get(key, value), key
    assert (config.use_cpu, config.bf16, config.use_vllm) == (True, False, False)
    assert config.gradient_checkpointing is False and config.activation_checkpointing is False
    assert config.loss_aggregation == "token"


def test_overrides_win_and_typos_are_refused(tmp_path):
    config = build_grpo_config(str(tmp_path), profile="cpu", beta=0.04, num_generations=4,
                               per_device_train_batch_size=4)
    assert (config.beta, config.num_generations) == (0.04, 4)
    with pytest.raises(ValueError, match="Unknown GRPO config field.*epsilon_hi\\b"):
        build_grpo_config(str(tmp_path), profile="cpu", epsilon_hi=0.3)
    with pytest.raises(ValueError, match="Unknown profile 'tpu'"):
        build_grpo_config(str(tmp_path), profile="tpu")


@pytest.mark.parametrize("loss_type, aggregation", sorted(TRL_LOSS_AGGREGATIONS.items()))
def test_unset_aggregation_follows_loss_type(tmp_path, loss_type, aggregation):
    assert cpu_config(tmp_path, loss_type=loss_type).loss_aggregation == aggregation


def test_loss_types_without_a_rule_stay_trl(tmp_path):
    assert cpu_config(tmp_path, loss_type="cispo").loss_aggregation is None


def test_aggregation_needs_a_clipped_surrogate_loss(tmp_path):
    with pytest.raises(ValueError, match="loss_type='sapo' is not one"):
        cpu_config(tmp_path, loss_type="sapo", loss_aggregation="token")


def test_unknown_aggregation_is_refused(tmp_path):
    with pytest.raises(ValueError, match="Unknown loss aggregation 'tokens'; choose one of token, token-local"):
        cpu_config(tmp_path, loss_aggregation="tokens")
    with pytest.raises(ValueError, match="Cannot load loss aggregation 'nowhere.module:rule'"):
        cpu_config(tmp_path, loss_aggregation="nowhere.module:rule")


def test_set_aggregation_decides_over_loss_type(tmp_path):
    config = cpu_config(tmp_path, loss_type="grpo", loss_aggregation="token")
    assert (config.loss_type, config.loss_aggregation) == ("grpo", "token")


@pytest.mark.parametrize("installed", ["1.15.2", "1.17.0rc1", "1.16.0.dev0"])
def test_another_trl_is_refused_by_name(installed):
    with pytest.raises(RuntimeError, match=f"pinned to TRL 1.16.0 but TRL {installed} is installed.*pip install 'trl==1.16.0'"):
        trl_version.check_trl_version(installed)


def test_missing_trl_is_said_so(monkeypatch):
    def not_installed(name):
        raise trl_version.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(trl_version.metadata, "version", not_installed)
    with pytest.raises(RuntimeError, match="pinned to TRL 1.16.0 but TRL is not installed"):
        trl_version.check_trl_version()


def test_builder_and_trainer_check_the_version(tmp_path, monkeypatch):
    from referee.recipes.train.trainer import RefereeGRPOTrainer

    monkeypatch.setattr(trl_version, "installed_trl_version", lambda: "1.12.0")
    with pytest.raises(RuntimeError, match="TRL 1.12.0 is installed"):
        build_grpo_config(str(tmp_path), profile="cpu")
    with pytest.raises(RuntimeError, match="TRL 1.12.0 is installed"):
        RefereeGRPOTrainer(model="unused", reward_funcs=[], args=None)


def test_the_pinned_trls_generation_prints_no_future_warning_once_a_config_is_built(tmp_path, model_dir):
    """TRL 1.16 reads transformers' deprecated ``is_gradient_checkpointing`` around every generation; its
    FutureWarning used to land in each training progress bar."""
    import warnings

    from accelerate import Accelerator
    from transformers import AutoModelForCausalLM
    from trl.models.utils import _unwrap_model_for_generation

    model = AutoModelForCausalLM.from_pretrained(model_dir)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build_grpo_config(str(tmp_path), profile="cpu")
        with _unwrap_model_for_generation(model, Accelerator(cpu=True)):
            pass
        warnings.warn("`is_gradient_checkpointing` is deprecated, says another package", DeprecationWarning)
    assert [str(w.message) for w in caught if "is_gradient_checkpointing" in str(w.message)] == [
        "`is_gradient_checkpointing` is deprecated, says another package"]  # only TRL's FutureWarning is filtered
