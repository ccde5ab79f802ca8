"""Greedy accuracy of a model on chat prompts, scored by a referee reward function.

Generation goes through the pre-filter's transformers backend and prompt renderer, so
prompts are rendered the way TRL renders them for training.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase


def greedy_completions(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    prompts: Sequence[list[dict[str, str]]],
    *,
    max_new_tokens: int,
    batch_size: int = 256,
) -> list[str]:
    """The greedy reply to each conversational prompt (special tokens dropped); the model's
    training mode is left as it was.

    Example:
        >>> from referee.recipes.common.tiny_model import build_char_tokenizer, build_tiny_model
        >>> tokenizer = build_char_tokenizer()
        >>> model = build_tiny_model(tokenizer, hidden_size=32, num_layers=1, intermediate_size=64)
        >>> replies = greedy_completions(model, tokenizer, [[{"role": "user", "content": "1+1"}]], max_new_tokens=4)
        >>> len(replies), len(replies[0]) <= 4, model.training
        (1, True, True)
    """
    from ..common.generation import SamplingOptions
    from ..common.prompts import PromptRenderer
    from ..common.transformers_backend import TransformersBackend

    was_training = model.training
    try:
        backend = TransformersBackend(model, tokenizer, batch_size=batch_size)
        renderer = PromptRenderer(tokenizer, max_tokens=max_new_tokens, context_length=backend.context_length)
        prompt_ids = [renderer.render({"prompt": prompt}).token_ids for prompt in prompts]
        groups = backend.generate(prompt_ids, 1, SamplingOptions(temperature=0.0, max_tokens=max_new_tokens), seed=0)
    finally:
        model.train(was_training)
    return [group[0].text for group in groups]


def reward_accuracy(reward: Callable[..., list[float | None]], completions: Sequence[str], **columns: Sequence[Any]) -> float:
    """Share of completions the reward scores 1.0 (a ``None`` reward counts as not correct).

    Example:
        >>> from referee.rewards import get_reward
        >>> reward_accuracy(get_reward("gsm8k_accuracy"), ["#### 5", "#### 6"], answer=["5", "5"])
        0.5
    """
    scores = reward(completions=list(completions), **{name: list(values) for name, values in columns.items()})
    return sum(score == 1.0 for score in scores) / len(scores) if scores else 0.0
