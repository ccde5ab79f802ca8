"""Generation with transformers ``generate``: batched, on CPU or GPU."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .generation import EngineOptions, Sample, SamplingOptions, decode_sample, eos_token_ids

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase


def _resolve_device_and_dtype(device: str, dtype: str) -> tuple[str, Any]:
    import torch

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if dtype == "auto":
        return device, torch.bfloat16 if device.startswith("cuda") else torch.float32
    resolved = getattr(torch, dtype, None)
    if not isinstance(resolved, torch.dtype):
        raise ValueError(f"Unknown dtype {dtype!r}; use auto, float32, bfloat16 or float16.")
    return device, resolved


class TransformersBackend:
    """Samples with ``model.generate``, ``batch_size`` prompts (times G samples) per call.

    Prompts of similar length are batched together and left-padded; each call is seeded from
    ``seed``, so the same prompts give the same samples. ``context_length`` is the model's
    ``max_position_embeddings``.

    Example:
        >>> from referee.recipes.common.tiny_model import build_char_tokenizer, build_tiny_model
        >>> tokenizer = build_char_tokenizer()
        >>> backend = TransformersBackend(build_tiny_model(tokenizer), tokenizer, batch_size=2)
        >>> prompts = [tokenizer("1 + 1 = ")["input_ids"], tokenizer("2 + 2 = ")["input_ids"]]
        >>> samples = backend.generate(prompts, 3, SamplingOptions(max_tokens=2), seed=0)
        >>> [len(group) for group in samples], len(samples[0][0].token_ids) <= 2
        ([3, 3], True)
        >>> samples == backend.generate(prompts, 3, SamplingOptions(max_tokens=2), seed=0)
        True
    """

    def __init__(self, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, *, batch_size: int = 8) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.eos_ids = eos_token_ids(tokenizer, model.generation_config)
        if not self.eos_ids:
            raise ValueError("The tokenizer and the model's generation config name no end-of-sequence token; set one.")
        pad = tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else min(self.eos_ids)
        self.context_length: int | None = getattr(model.config, "max_position_embeddings", None)

    @classmethod
    def from_pretrained(
        cls, model: str, tokenizer: PreTrainedTokenizerBase, engine: EngineOptions
    ) -> TransformersBackend:
        """Load ``model`` (folder or hub name) on ``engine.device`` in ``engine.dtype``."""
        from transformers import AutoModelForCausalLM

        device, dtype = _resolve_device_and_dtype(engine.device, engine.dtype)
        loaded = AutoModelForCausalLM.from_pretrained(model, dtype=dtype).to(device)
        return cls(loaded, tokenizer, batch_size=engine.batch_size)

    def generate(
        self, prompt_ids: Sequence[Sequence[int]], num_generations: int, sampling: SamplingOptions, seed: int
    ) -> list[list[Sample]]:
        """``num_generations`` samples per prompt, prompts in order (see the class example)."""
        import torch

        torch.manual_seed(seed)
        # Batch prompts of similar length together: less left padding to compute through.
        order = sorted(range(len(prompt_ids)), key=lambda index: len(prompt_ids[index]))
        results: list[list[Sample]] = [[] for _ in prompt_ids]
        for start in range(0, len(order), self.batch_size):
            batch = order[start:start + self.batch_size]
            groups = self._generate_batch([prompt_ids[index] for index in batch], num_generations, sampling)
            for index, group in zip(batch, groups):
                results[index] = group
        return results

    def _generate_batch(
        self, prompt_ids: Sequence[Sequence[int]], num_generations: int, sampling: SamplingOptions
    ) -> list[list[Sample]]:
        import torch

        width = max(len(ids) for ids in prompt_ids)
        input_ids = torch.full((len(prompt_ids), width), self.pad_id, dtype=torch.long)
        attention_mask = torch.zeros((len(prompt_ids), width), dtype=torch.long)
        for row, ids in enumerate(prompt_ids):
            if ids:
                input_ids[row, width - len(ids):] = torch.tensor(list(ids), dtype=torch.long)
                attention_mask[row, width - len(ids):] = 1
        # Greedy decoding gives every sample the same text, and generate() refuses
        # num_return_sequences > 1 without sampling: decode once and repeat it.
        greedy = sampling.temperature == 0
        per_prompt = 1 if greedy else num_generations
        options: dict[str, Any] = {"max_new_tokens": sampling.max_tokens, "num_return_sequences": per_prompt}
        if greedy:
            options.update(do_sample=False)
        else:
            options.update(do_sample=True, temperature=sampling.temperature, top_p=sampling.top_p,
                           top_k=sampling.top_k or None, min_p=sampling.min_p or None)
        device = self.model.device
        with torch.inference_mode():
            output = self.model.generate(
                input_ids=input_ids.to(device), attention_mask=attention_mask.to(device),
                pad_token_id=self.pad_id, eos_token_id=sorted(self.eos_ids), **options,
            )
        completions = output[:, width:].tolist()
        samples = [decode_sample(self.tokenizer, ids, self.eos_ids, sampling.max_tokens) for ids in completions]
        if greedy:
            return [[sample] * num_generations for sample in samples]
        return [samples[i * num_generations:(i + 1) * num_generations] for i in range(len(prompt_ids))]
