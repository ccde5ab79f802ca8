"""Fixtures shared by the tests: one tiny local model for the whole session (recipes, examples)."""

import pytest

from referee.recipes.common.loading import load_tokenizer
from referee.recipes.common.tiny_model import save_tiny_model


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory):
    """A saved tiny Qwen2 model with its character tokenizer (read only: tests must not write here)."""
    return str(save_tiny_model(tmp_path_factory.mktemp("tiny")))


@pytest.fixture(scope="session")
def tokenizer(model_dir):
    return load_tokenizer(model_dir)
