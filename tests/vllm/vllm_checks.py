"""What the vLLM suite compares: a fixed completion's token log-probs, from a transformers model."""

from __future__ import annotations

from typing import Any

import torch

PROMPT, COMPLETION = "u:7+5\na:", "7 + 5 = 12\n#### 12"


def fixed_ids(tokenizer: Any) -> tuple[list[int], int]:
    """The fixed prompt and completion as token ids, and where the completion starts."""
    prompt = tokenizer(PROMPT, add_special_tokens=False)["input_ids"]
    return prompt + tokenizer(COMPLETION, add_special_tokens=False)["input_ids"], len(prompt)


def model_logprobs(model: Any, ids: list[int], prompt_length: int) -> torch.Tensor:
    """``model``'s log-probs of ``ids[prompt_length:]`` (adapters on, dropout off, no grad)."""
    training = model.training
    model.eval()
    try:
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids], device=model.device)).logits[0].float()
    finally:
        model.train(training)
    logprobs = logits.log_softmax(-1)
    return torch.stack([logprobs[i - 1, ids[i]] for i in range(prompt_length, len(ids))]).cpu()
