"""Generation with vLLM: n samples per prompt in one request, prefix caching, tensor parallel.

vLLM is imported only when this backend is built, so the rest of the pre-filter runs without
it. Data parallelism is not vLLM's business here: ``EngineOptions.data_parallel_size`` starts
one worker process per GPU group (see :mod:`referee.recipes.prefilter.parallel`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .generation import EngineOptions, Sample, SamplingOptions, decode_sample, eos_token_ids
from .vllm_device import CPU_DTYPE, apply_cpu_defaults, vllm_build

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


def _generation_config(model: str) -> Any:
    """The model's ``generation_config.json`` (its end-of-sequence ids), or ``None``."""
    from transformers import GenerationConfig

    try:
        return GenerationConfig.from_pretrained(model)
    except OSError:
        return None


class VLLMBackend:
    """Samples with a ``vllm.LLM``: prompts go in as token ids, each with its own seed
    (``seed + position``), so a chunk of prompts always gets the same samples.

    Completions stop at the tokenizer's and the generation config's end-of-sequence tokens and
    are decoded with referee's tokenizer (special tokens skipped, as TRL does); ``truncated``
    is vLLM's ``finish_reason == "length"``.

    Example:
        >>> from types import SimpleNamespace
        >>> from referee.recipes.common.tiny_model import build_char_tokenizer
        >>> tokenizer = build_char_tokenizer()
        >>> class FakeLLM:  # stands in for vllm.LLM: answers "7" then end-of-sequence
        ...     def generate(self, prompts, params, use_tqdm=False):
        ...         out = SimpleNamespace(token_ids=[tokenizer.convert_tokens_to_ids("7"), 3], finish_reason="stop")
        ...         return [SimpleNamespace(outputs=[out] * p.n) for p in params]
        >>> backend = VLLMBackend(FakeLLM(), tokenizer, context_length=256,
        ...                       sampling_params=lambda **kw: SimpleNamespace(**kw))
        >>> backend.generate([[5, 6]], 2, SamplingOptions(), seed=0)[0][0].text
        '7'
    """

    def __init__(
        self, llm: Any, tokenizer: PreTrainedTokenizerBase, *, context_length: int | None, sampling_params: Any = None,
        generation_config: Any = None,
    ) -> None:
        self.llm = llm
        self.tokenizer = tokenizer
        self.eos_ids = eos_token_ids(tokenizer, generation_config)
        self.context_length = context_length
        if sampling_params is None:
            from vllm import SamplingParams

            sampling_params = SamplingParams
        self._sampling_params = sampling_params

    @classmethod
    def from_options(cls, model: str, tokenizer: PreTrainedTokenizerBase, engine: EngineOptions) -> VLLMBackend:
        """Start ``vllm.LLM`` on ``model`` with the tensor parallel, memory, context length and
        prefix caching settings of ``engine``."""
        try:
            from vllm import LLM
        except ImportError:
            raise ValueError(
                "The vllm backend needs vLLM; install it with pip install 'referee[vllm]' or pass --backend transformers."
            ) from None
        on_cpu = vllm_build() == "cpu"
        apply_cpu_defaults()  # the CPU build's KV cache from VLLM_CPU_KVCACHE_SPACE, not a share of the RAM
        llm = LLM(
            model=model,
            tensor_parallel_size=engine.tensor_parallel_size,
            gpu_memory_utilization=engine.gpu_memory_utilization,
            max_model_len=engine.max_model_len,
            enable_prefix_caching=engine.enable_prefix_caching,
            dtype=CPU_DTYPE if on_cpu and engine.dtype == "auto" else engine.dtype,
        )
        return cls(llm, tokenizer, context_length=llm.llm_engine.model_config.max_model_len,
                   generation_config=_generation_config(model))

    def generate(
        self, prompt_ids: Sequence[Sequence[int]], num_generations: int, sampling: SamplingOptions, seed: int
    ) -> list[list[Sample]]:
        """``num_generations`` samples per prompt, prompts in order (see the class example)."""
        params = [
            self._sampling_params(
                n=num_generations, temperature=sampling.temperature, top_p=sampling.top_p, top_k=sampling.top_k,
                min_p=sampling.min_p, max_tokens=sampling.max_tokens, seed=seed + position,
                stop_token_ids=sorted(self.eos_ids),
            )
            for position in range(len(prompt_ids))
        ]
        requests = [{"prompt_token_ids": list(ids)} for ids in prompt_ids]
        outputs = self.llm.generate(requests, params, use_tqdm=False)
        return [
            [
                dataclasses.replace(
                    decode_sample(self.tokenizer, completion.token_ids, self.eos_ids, sampling.max_tokens),
                    truncated=completion.finish_reason == "length",
                )
                for completion in output.outputs
            ]
            for output in outputs
        ]
