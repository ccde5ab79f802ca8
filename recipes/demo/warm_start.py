"""A short supervised phase before GRPO: teach a fresh model the answer format.

GRPO learns from the differences between a group's samples; a model that never produces a
scorable answer gives every sample the same reward and no gradient. A few hundred steps of
next-token training on (prompt, reply) pairs gives it the format and some skill to sharpen.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

Example = tuple[list[dict[str, str]], str]  # (chat messages, the assistant's reply)


def encode_example(tokenizer: PreTrainedTokenizerBase, messages: list[dict[str, str]], reply: str) -> tuple[list[int], list[int]]:
    """(prompt ids with the generation prompt, reply ids ending with ``<eos>``).

    Example:
        >>> from referee.recipes.common.tiny_model import build_char_tokenizer
        >>> tokenizer = build_char_tokenizer()
        >>> prompt, reply = encode_example(tokenizer, [{"role": "user", "content": "1+1"}], "#### 2")
        >>> tokenizer.decode(prompt), tokenizer.decode(reply)
        ('u:1+1\\na:', '#### 2<eos>')
    """
    prompt_text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    prompt_ids = tokenizer(prompt_text, add_special_tokens=False)["input_ids"]
    reply_ids = tokenizer(reply, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    return prompt_ids, reply_ids


def collate(encoded: Sequence[tuple[list[int], list[int]]], pad_token_id: int) -> dict[str, torch.Tensor]:
    """Right-padded ``input_ids``, ``attention_mask`` and ``labels`` (-100 on prompt and padding).

    Example:
        >>> batch = collate([([5, 6], [7, 3]), ([5], [3])], pad_token_id=0)
        >>> batch["input_ids"].tolist(), batch["labels"].tolist()
        ([[5, 6, 7, 3], [5, 3, 0, 0]], [[-100, -100, 7, 3], [-100, 3, -100, -100]])
    """
    import torch

    width = max(len(prompt) + len(reply) for prompt, reply in encoded)
    input_ids = torch.full((len(encoded), width), pad_token_id, dtype=torch.long)
    labels = torch.full((len(encoded), width), -100, dtype=torch.long)
    attention_mask = torch.zeros((len(encoded), width), dtype=torch.long)
    for row, (prompt, reply) in enumerate(encoded):
        sequence = prompt + reply
        input_ids[row, : len(sequence)] = torch.tensor(sequence)
        labels[row, len(prompt) : len(sequence)] = torch.tensor(reply)
        attention_mask[row, : len(sequence)] = 1
    return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}


def warm_start(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    examples: Sequence[Example],
    *,
    steps: int,
    batch_size: int = 64,
    learning_rate: float = 1e-3,
    warmup_steps: int = 20,
    seed: int = 0,
    progress: bool = True,
) -> list[float]:
    """Train ``model`` on the replies of ``examples`` (batches drawn with replacement); return the losses.

    AdamW with a linear warm-up; the loss is on reply tokens only.

    Example:
        >>> from referee.recipes.common.tiny_model import build_char_tokenizer, build_tiny_model
        >>> tokenizer = build_char_tokenizer()
        >>> model = build_tiny_model(tokenizer, hidden_size=32, num_layers=1, intermediate_size=64)
        >>> losses = warm_start(model, tokenizer, [([{"role": "user", "content": "1+1"}], "#### 2")],
        ...                     steps=10, batch_size=2, learning_rate=1e-2, warmup_steps=1, progress=False)
        >>> losses[-1] < losses[0] / 2
        True
    """
    import torch
    from tqdm import tqdm

    if steps < 1 or not examples:
        raise ValueError(f"warm_start needs steps >= 1 and at least one example (got steps={steps}, {len(examples)} examples).")
    encoded = [encode_example(tokenizer, messages, reply) for messages, reply in examples]
    rng = random.Random(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / max(warmup_steps, 1)))
    model.train()
    losses: list[float] = []
    with tqdm(range(steps), desc="warm start", unit="step", disable=not progress) as bar:
        for _ in bar:
            batch = collate([encoded[rng.randrange(len(encoded))] for _ in range(batch_size)], tokenizer.pad_token_id)
            loss = model(**batch).loss
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            losses.append(float(loss.detach()))
            bar.set_postfix(loss=f"{losses[-1]:.3f}")
    return losses
