"""What every generation backend takes and returns, and how one is chosen."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

from .config_flags import flag

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

BackendName = Literal["auto", "vllm", "transformers"]
BACKENDS: tuple[str, ...] = get_args(BackendName)


@dataclass(frozen=True)
class SamplingOptions:
    """How completions are sampled. Defaults are TRL 1.16 ``GRPOConfig``'s, so pass rates
    measured here are the ones the trainer will see.

    ``temperature=0`` means greedy decoding (all G samples then agree); ``top_k=0`` and
    ``min_p=0`` switch those filters off.

    Example:
        >>> SamplingOptions(temperature=0.7, max_tokens=64).top_p
        1.0
    """

    temperature: float = flag(1.0, cli_default=None, help="0 means greedy (default 1.0, or a --recipe's)")
    top_p: float = flag(1.0)
    top_k: int = flag(0, help="0 switches it off")
    min_p: float = flag(0.0, help="0 switches it off")
    max_tokens: int = flag(512, cli_default=None,
                           help="new tokens per sample (default 512, or a --recipe's max_completion_length, lowered "
                                "to the model's context less the longest prompt when that is less)")
    seed: int = flag(0)

    def __post_init__(self) -> None:
        if not 0 <= self.temperature < math.inf:
            raise ValueError(f"temperature {self.temperature} is not a number >= 0; use 0 for greedy or a positive "
                             "value.")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p {self.top_p} is outside (0, 1]; use 1.0 to switch it off.")
        if self.top_k < 0:
            raise ValueError(f"top_k {self.top_k} is negative; use 0 to switch it off.")
        if not 0 <= self.min_p < 1:
            raise ValueError(f"min_p {self.min_p} is outside [0, 1); use 0 to switch it off.")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens {self.max_tokens} must be at least 1.")


@dataclass(frozen=True)
class EngineOptions:
    """Which backend generates and how it is set up.

    ``backend="auto"`` takes vLLM when CUDA and vLLM are both available, else transformers.
    ``device``, ``dtype`` and ``batch_size`` (prompts per ``generate`` call) are for the
    transformers backend; ``tensor_parallel_size``, ``gpu_memory_utilization``,
    ``max_model_len`` and ``enable_prefix_caching`` for vLLM. ``data_parallel_size`` starts
    that many worker processes (one per group of ``tensor_parallel_size`` GPUs) with either
    backend. ``dtype="auto"`` is bfloat16 on GPU and float32 on CPU.

    Example:
        >>> EngineOptions(backend="transformers", batch_size=4).device
        'auto'
    """

    backend: BackendName = flag("auto", help="auto: vLLM when CUDA and vLLM are available, else transformers")
    device: str = flag("auto", help="transformers: auto, cpu, cuda, cuda:1, ...")
    dtype: str = flag("auto", help="auto (bfloat16 on GPU, float32 on CPU), float16, ...")
    batch_size: int = flag(8, help="transformers: prompts per generate call (each times G samples)")
    tensor_parallel_size: int = flag(1, help="vLLM: GPUs per engine")
    data_parallel_size: int = flag(1, help="worker processes, each on its own group of --tensor-parallel-size GPUs")
    gpu_memory_utilization: float = flag(0.9, help="vLLM")
    max_model_len: int | None = flag(None, help="vLLM: context length")
    enable_prefix_caching: bool = flag(True, flags=("--no-prefix-caching",), help="vLLM: switch prefix caching off")

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"Unknown backend {self.backend!r}; choose one of {', '.join(BACKENDS)}.")
        for name in ("batch_size", "tensor_parallel_size", "data_parallel_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} {getattr(self, name)} must be at least 1.")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise ValueError(f"gpu_memory_utilization {self.gpu_memory_utilization} is outside (0, 1].")


@dataclass(frozen=True)
class Sample:
    """One generated completion: its text (special tokens dropped), its token ids (up to the
    end-of-sequence token), and whether it stopped at the token limit instead.

    Example:
        >>> Sample("#### 4", (19, 19, 19, 19, 31, 8, 3), truncated=False).text
        '#### 4'
    """

    text: str
    token_ids: tuple[int, ...]
    truncated: bool


class GenerationBackend(Protocol):
    """Generates ``num_generations`` samples for each tokenised prompt.

    ``context_length`` is the most tokens (prompt plus completion) the model takes, or
    ``None`` when unknown. ``generate`` returns one list of samples per prompt, in order, and
    gives the same samples for the same prompts, options and ``seed``.

    Example:
        >>> class Constant:  # every sample is "42"
        ...     context_length = None
        ...     def generate(self, prompt_ids, num_generations, sampling, seed):
        ...         return [[Sample("42", (), False)] * num_generations for _ in prompt_ids]
        >>> backend: GenerationBackend = Constant()
        >>> [[s.text for s in group] for group in backend.generate([[1], [2]], 2, SamplingOptions(), seed=0)]
        [['42', '42'], ['42', '42']]
    """

    context_length: int | None

    def generate(
        self, prompt_ids: Sequence[Sequence[int]], num_generations: int, sampling: SamplingOptions, seed: int
    ) -> list[list[Sample]]: ...


def cuda_available() -> bool:
    """Whether torch sees a CUDA GPU (``False`` when torch is not installed).

    Example:
        >>> isinstance(cuda_available(), bool)
        True
    """
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return torch.cuda.is_available()


def resolve_backend(name: str) -> str:
    """The backend ``name`` stands for: ``auto`` is vLLM when CUDA and vLLM are available.

    Example:
        >>> resolve_backend("transformers")
        'transformers'
        >>> resolve_backend("auto") in ("vllm", "transformers")
        True
    """
    if name not in BACKENDS:
        raise ValueError(f"Unknown backend {name!r}; choose one of {', '.join(BACKENDS)}.")
    if name != "auto":
        return name
    return "vllm" if importlib.util.find_spec("vllm") is not None and cuda_available() else "transformers"


def eos_token_ids(tokenizer: PreTrainedTokenizerBase, generation_config: Any = None) -> frozenset[int]:
    """Every token id that ends a completion: the tokenizer's and the generation config's.

    Example:
        >>> from referee.recipes.common.tiny_model import build_char_tokenizer
        >>> sorted(eos_token_ids(build_char_tokenizer()))
        [3]
    """
    ids: set[int] = set()
    for value in (tokenizer.eos_token_id, getattr(generation_config, "eos_token_id", None)):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple)):
            ids.update(v for v in value if isinstance(v, int))
    return frozenset(ids)


def decode_sample(
    tokenizer: PreTrainedTokenizerBase, token_ids: Sequence[int], eos_ids: frozenset[int], max_tokens: int
) -> Sample:
    """A :class:`Sample` from generated ids: cut after the first end-of-sequence token (what
    follows it is padding) and decoded with special tokens skipped, as TRL decodes completions.

    Example:
        >>> from referee.recipes.common.tiny_model import build_char_tokenizer
        >>> tokenizer = build_char_tokenizer()
        >>> ids = tokenizer("#### 4")["input_ids"] + [tokenizer.eos_token_id, tokenizer.pad_token_id]
        >>> sample = decode_sample(tokenizer, ids, frozenset({3}), max_tokens=8)
        >>> sample.text, len(sample.token_ids), sample.truncated
        ('#### 4', 7, False)
        >>> decode_sample(tokenizer, tokenizer("12")["input_ids"], frozenset({3}), max_tokens=2).truncated
        True
    """
    kept: list[int] = []
    stopped = False
    for token in token_ids:
        kept.append(int(token))
        if token in eos_ids:
            stopped = True
            break
    text = tokenizer.decode(kept, skip_special_tokens=True)
    return Sample(text=text, token_ids=tuple(kept), truncated=not stopped and len(kept) >= max_tokens)
