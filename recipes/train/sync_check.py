"""Is the vLLM engine's copy of the weights the trainer's? Compare the log-probs of one fixed completion.

A weight sync that silently drops a tensor (a re-packed layer, a tied head, a LoRA merge) still
lets training run; only the samples come from another policy. The check that shows it: the
engine's log-probability of each token of a fixed completion, against the trainer's own, after
a sync. In float32 they agree to rounding (under 1e-6 on the test model); a stale tensor moves
them by the size of one optimizer step. ``make test-vllm`` and the GPU check's vLLM arm use it.
"""

from __future__ import annotations

from typing import Any

import torch

#: A prompt in the chat format of the demo's tokenizer, and a completion in GSM8K's answer format.
PROMPT, COMPLETION = "u:7+5\na:", "7 + 5 = 12\n#### 12"


def completion_ids(tokenizer: Any, prompt: str = PROMPT, completion: str = COMPLETION) -> tuple[list[int], int]:
    """The prompt and completion as one list of token ids, and where the completion starts.

    Example:
        >>> from referee.recipes.common.tiny_model import build_char_tokenizer
        >>> ids, start = completion_ids(build_char_tokenizer(), "1+1=", "2")
        >>> len(ids), start
        (5, 4)
    """
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    return prompt_ids + tokenizer(completion, add_special_tokens=False)["input_ids"], len(prompt_ids)


def model_logprobs(model: Any, ids: list[int], prompt_length: int) -> torch.Tensor:
    """A transformers model's log-probs of ``ids[prompt_length:]`` (adapters on, dropout off, no grad).

    Example:
        >>> from referee.recipes.common.tiny_model import build_char_tokenizer, build_tiny_model
        >>> tokenizer = build_char_tokenizer()
        >>> model = build_tiny_model(tokenizer, hidden_size=32, num_layers=1, intermediate_size=64)
        >>> ids, start = completion_ids(tokenizer, "1+1=", "2")
        >>> logprobs = model_logprobs(model, ids, start)
        >>> logprobs.shape, bool((logprobs < 0).all()), model.training
        (torch.Size([1]), True, True)
    """
    training = model.training
    model.eval()
    try:
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids], device=model.device)).logits[0].float()
    finally:
        model.train(training)
    logprobs = logits.log_softmax(-1)
    return torch.stack([logprobs[i - 1, ids[i]] for i in range(prompt_length, len(ids))]).cpu()


def engine_logprobs(llm: Any, ids: list[int], prompt_length: int, sampling_params: Any = None) -> torch.Tensor:
    """A ``vllm.LLM``'s log-probs of the same tokens (its prompt log-probs, temperature 1);
    ``sampling_params`` stands in for ``vllm.SamplingParams`` (imported when ``None``).

    Example:
        >>> from types import SimpleNamespace
        >>> entry = lambda token: {token: SimpleNamespace(logprob=-0.5)}
        >>> llm = SimpleNamespace(generate=lambda prompts, params, use_tqdm: [SimpleNamespace(
        ...     prompt_logprobs=[None] + [entry(t) for t in prompts[0]["prompt_token_ids"][1:]])])
        >>> engine_logprobs(llm, [5, 6, 7], 1, sampling_params=dict).tolist()
        [-0.5, -0.5]
    """
    if sampling_params is None:
        from vllm import SamplingParams as sampling_params
    params = sampling_params(max_tokens=1, prompt_logprobs=0, temperature=1.0)
    output = llm.generate([{"prompt_token_ids": ids}], params, use_tqdm=False)[0]
    return torch.tensor([output.prompt_logprobs[i][ids[i]].logprob for i in range(prompt_length, len(ids))])


def sync_gap(trainer: Any, ids: list[int], prompt_length: int, sampling_params: Any = None) -> float:
    """The largest log-prob gap between a colocated engine (``trainer.vllm_generation.llm``) and the trainer
    on ``ids`` as the engine stands now (sync first to check the sync).

    Example:
        >>> from types import SimpleNamespace
        >>> from referee.recipes.common.tiny_model import build_char_tokenizer, build_tiny_model
        >>> tokenizer = build_char_tokenizer()
        >>> model = build_tiny_model(tokenizer, hidden_size=32, num_layers=1, intermediate_size=64)
        >>> ids, start = completion_ids(tokenizer, "1+1=", "2")
        >>> exact = model_logprobs(model, ids, start).item()
        >>> llm = SimpleNamespace(generate=lambda prompts, params, use_tqdm: [SimpleNamespace(
        ...     prompt_logprobs=[None] * 4 + [{ids[4]: SimpleNamespace(logprob=exact + 0.25)}])])
        >>> trainer = SimpleNamespace(model=model, vllm_generation=SimpleNamespace(llm=llm))
        >>> round(sync_gap(trainer, ids, start, sampling_params=dict), 4)
        0.25
    """
    engine = engine_logprobs(trainer.vllm_generation.llm, ids, prompt_length, sampling_params)
    return float((engine - model_logprobs(trainer.model, ids, prompt_length)).abs().max())
