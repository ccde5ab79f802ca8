"""Load a tokenizer from a local folder or the hub the way it was saved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

# Classes that mean "the tokenizer.json is the whole tokenizer". transformers 5 ignores them
# when the folder also has a config.json and picks the model type's tokenizer instead (for
# qwen2 a byte-level one that drops the spaces of a character vocabulary).
_GENERIC_TOKENIZER_CLASSES = ("TokenizersBackend", "PreTrainedTokenizerFast")


def load_tokenizer(name_or_path: str | Path, **kwargs: Any) -> PreTrainedTokenizerBase:
    """The tokenizer of a model folder or hub name, as it was saved.

    A local folder whose ``tokenizer_config.json`` names a generic fast tokenizer is loaded as
    exactly that; everything else goes through ``AutoTokenizer``.

    Example:
        >>> import tempfile
        >>> from referee.recipes.common.tiny_model import save_tiny_model
        >>> tokenizer = load_tokenizer(save_tiny_model(tempfile.mkdtemp()))
        >>> tokenizer.decode(tokenizer("1 + 2\\n")["input_ids"])
        '1 + 2\\n'
    """
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    config_file = Path(name_or_path) / "tokenizer_config.json"
    if config_file.is_file():
        tokenizer_class = json.loads(config_file.read_text(encoding="utf-8")).get("tokenizer_class")
        if tokenizer_class in _GENERIC_TOKENIZER_CLASSES:
            return PreTrainedTokenizerFast.from_pretrained(str(name_or_path), **kwargs)
    return AutoTokenizer.from_pretrained(str(name_or_path), **kwargs)
