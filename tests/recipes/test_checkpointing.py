"""``activation_checkpointing`` means the same on every transformers referee admits: where the installed
release lacks it (before 5.23, as vLLM 0.31's pin gives), it is handed to ``gradient_checkpointing``."""

from __future__ import annotations

import pytest

from referee.recipes.train import checkpointing
from referee.recipes.train.config import RefereeGRPOConfig, build_grpo_config


@pytest.mark.parametrize("value", [True, False])
def test_the_older_spelling_gets_the_new_keys_value(value):
    config = checkpointing._NewSpelling(output_dir="/tmp/x", use_cpu=True, bf16=False, activation_checkpointing=value,
                                        activation_checkpointing_kwargs={"use_reentrant": False})
    assert config.gradient_checkpointing is value and config.activation_checkpointing is value
    assert config.gradient_checkpointing_kwargs == {"use_reentrant": False}


def test_unset_keeps_trls_default():
    config = checkpointing._NewSpelling(output_dir="/tmp/x", use_cpu=True, bf16=False)
    assert config.gradient_checkpointing is True and config.activation_checkpointing is True  # TRL's default


def test_referee_config_takes_the_key_on_this_release():
    assert "activation_checkpointing" in RefereeGRPOConfig.__dataclass_fields__
    assert RefereeGRPOConfig(output_dir="/tmp/x", use_cpu=True, bf16=False,
                             activation_checkpointing=False).gradient_checkpointing is False
    assert build_grpo_config("/tmp/x", profile="cpu").gradient_checkpointing is False
