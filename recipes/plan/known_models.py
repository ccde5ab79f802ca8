"""The ``config.json`` sizes of the models the shipped recipes train, so ``referee plan`` works
without the weights, the hub cache or a network.

Only the keys :func:`referee.recipes.plan.model_params.model_shape` reads, copied from each
model's published ``config.json`` (a released model's configuration does not change).
"""

from __future__ import annotations

from typing import Any

_QWEN2_1_5B = {"model_type": "qwen2", "vocab_size": 151936, "hidden_size": 1536, "num_hidden_layers": 28,
               "num_attention_heads": 12, "num_key_value_heads": 2, "intermediate_size": 8960}

KNOWN_CONFIGS: dict[str, dict[str, Any]] = {
    "Qwen/Qwen2.5-1.5B-Instruct": {**_QWEN2_1_5B, "tie_word_embeddings": True, "max_position_embeddings": 32768},
    "Qwen/Qwen2.5-Coder-1.5B-Instruct": {**_QWEN2_1_5B, "tie_word_embeddings": True, "max_position_embeddings": 32768},
    # Built on Qwen2.5-Math-1.5B, with an output head of its own (1.78B parameters in all).
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B": {**_QWEN2_1_5B, "tie_word_embeddings": False,
                                                  "max_position_embeddings": 131072},
}


def known_config(name: str) -> dict[str, Any] | None:
    """The sizes of a shipped recipe's model by its hub name, else ``None``.

    Example:
        >>> known_config("Qwen/Qwen2.5-1.5B-Instruct")["hidden_size"], known_config("my/model") is None
        (1536, True)
    """
    config = KNOWN_CONFIGS.get(name)
    return dict(config) if config is not None else None
