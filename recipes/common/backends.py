"""Build the generation backend an :class:`EngineOptions` asks for (transformers or vLLM).

The backends import the shared types of :mod:`referee.recipes.common.generation`; this module
sits above both, so neither imports the other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .generation import EngineOptions, GenerationBackend, resolve_backend

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


def build_backend(model: str, tokenizer: PreTrainedTokenizerBase, engine: EngineOptions) -> GenerationBackend:
    """The backend ``engine`` asks for, loaded with ``model`` (a folder or hub name).

    Example:
        >>> import tempfile
        >>> from referee.recipes.common.loading import load_tokenizer
        >>> from referee.recipes.common.tiny_model import save_tiny_model
        >>> folder = save_tiny_model(tempfile.mkdtemp())
        >>> backend = build_backend(str(folder), load_tokenizer(folder), EngineOptions(backend="transformers"))
        >>> backend.context_length
        256
    """
    if resolve_backend(engine.backend) == "vllm":
        from .vllm_backend import VLLMBackend

        return VLLMBackend.from_options(model, tokenizer, engine)
    from .transformers_backend import TransformersBackend

    return TransformersBackend.from_pretrained(model, tokenizer, engine)
