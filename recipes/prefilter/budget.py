"""The new-token budget of a pre-filter or evaluation run when the command line names none.

TRL's trainers and vLLM take up to the completion budget per sample; a budget the model's context
cannot hold beside the prompts fails every row. So the default is 512 new tokens (``DEFAULT_MAX_TOKENS``,
or a recipe's ``max_completion_length``), lowered to the model's context less the longest prompt
of the run when that is less. The context is read from the model's ``config.json`` (or
``--max-model-len``) without loading weights; prompts are only tokenised when the context could
bind (a model of 32k tokens and short prompts costs no pass over the data).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..common.data import BadRow, Row, Rows
from ..common.prompts import PromptError, PromptRenderer, is_conversation
from .config import PrefilterConfig

DEFAULT_MAX_TOKENS = 512
# A prompt of C characters rendered through a chat template takes at most 4 tokens a character
# (byte-level tokens, 4 UTF-8 bytes at most) plus what the template adds (system lines, role tags).
_TOKENS_PER_CHAR = 4
_TEMPLATE_TOKENS = 1024


@dataclass(frozen=True)
class TokenBudget:
    """The budget chosen and why, in one line for the run's output.

    Example:
        >>> TokenBudget(208, 256, 48).reason
        "max tokens 208: the model's context of 256 tokens less the longest prompt's 48 (give --max-tokens to choose)"
    """

    max_tokens: int
    context_length: int | None = None
    longest_prompt: int | None = None

    @property
    def reason(self) -> str:
        """Why the run samples ``max_tokens`` new tokens."""
        if self.longest_prompt is None:
            return f"max tokens {self.max_tokens}"
        return (f"max tokens {self.max_tokens}: the model's context of {self.context_length} tokens less the longest "
                f"prompt's {self.longest_prompt} (give --max-tokens to choose)")


def model_context_length(model: str, max_model_len: int | None = None) -> int | None:
    """The most tokens ``model`` takes (prompt and completion), from ``max_model_len`` or its config; ``None`` if unknown.

    Example:
        >>> import tempfile
        >>> from referee.recipes.common.tiny_model import save_tiny_model
        >>> model = str(save_tiny_model(tempfile.mkdtemp()))
        >>> model_context_length(model), model_context_length(model, 128)
        (256, 128)
    """
    if max_model_len is not None:
        return max_model_len
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(model)
    except (OSError, ValueError):  # no config to read: the backend finds out when it loads the model
        return None
    length = getattr(config, "max_position_embeddings", None)
    return length if isinstance(length, int) and length > 0 else None


def token_budget(config: PrefilterConfig, rows: Rows, tokenizer: Any, context_length: int | None,
                 wanted: int = DEFAULT_MAX_TOKENS) -> TokenBudget:
    """``wanted`` new tokens, or fewer when the model's context less the run's longest prompt is less.

    A row whose prompt cannot be rendered is left out here (the run reports it), but no row that can
    (a prompt column the data lacks) is a ``ValueError`` naming why; when no prompt leaves a token of
    room, the budget stays ``wanted`` and the run refuses each row with its reason.

    Example:
        >>> from referee.recipes.common.tiny_model import build_char_tokenizer
        >>> config = PrefilterConfig(model="m", data="d", rewards=("gsm8k_accuracy",), out="o")
        >>> rows = Rows([{"prompt": "1 + 1 = "}, {"prompt": "12 + 30 = "}, BadRow("line 3: not JSON")])
        >>> token_budget(config, rows, build_char_tokenizer(), 256).max_tokens  # 256 less the 10 tokens of row 2
        246
        >>> token_budget(config, rows, build_char_tokenizer(), 32_768)
        TokenBudget(max_tokens=512, context_length=None, longest_prompt=None)
    """
    if context_length is None or context_length >= wanted + _TOKENS_PER_CHAR * _longest_chars(config, rows) + (
            _TEMPLATE_TOKENS):
        return TokenBudget(wanted)
    renderer = PromptRenderer(tokenizer, max_tokens=1, prompt_column=config.prompt_column,
                              chat_template=config.chat_template,  # type: ignore[arg-type]
                              system_prompt=config.system_prompt, chat_template_kwargs=dict(config.chat_template_kwargs))
    longest, refusal = 0, None
    for row in _each_row(rows):
        if isinstance(row, BadRow):
            continue
        try:
            longest = max(longest, len(renderer.render(row).token_ids))
        except PromptError as exc:
            refusal = refusal or str(exc)
    if not longest and refusal:
        raise ValueError(f"no row of --data has a prompt to generate from: {refusal}.")
    room = context_length - longest
    if room >= wanted or room < 1:
        return TokenBudget(wanted)
    return TokenBudget(room, context_length, longest)


def fitted_budget(config: PrefilterConfig, wanted: int = DEFAULT_MAX_TOKENS) -> TokenBudget:
    """:func:`token_budget` for the run ``config`` describes: its rows, its model's tokenizer and context.

    Example:
        >>> import json, tempfile
        >>> from referee.recipes.common.tiny_model import save_tiny_model
        >>> folder = tempfile.mkdtemp()
        >>> _ = open(f"{folder}/rows.jsonl", "w").write(json.dumps({"prompt": "1 + 1 = ", "answer": 2}))
        >>> config = PrefilterConfig(model=str(save_tiny_model(f"{folder}/model")), data=f"{folder}/rows.jsonl",
        ...                          rewards=("gsm8k_accuracy",), out=f"{folder}/out")
        >>> fitted_budget(config).max_tokens  # the tiny model's context of 256 less the prompt's 8 tokens
        248
    """
    from ..common.loading import load_tokenizer
    from ..common.sources import check_source
    from .run import read_rows
    from .scoring import Scorer

    check_source(config.model, "model", "--model")
    context_length = model_context_length(config.model, config.engine.max_model_len)
    if context_length is None:
        return TokenBudget(wanted)
    rows = read_rows(config, Scorer(config.rewards, reward_options=config.reward_options))
    if config.max_rows is not None and config.max_rows < len(rows):
        rows = Rows(rows.slice(0, config.max_rows))
    return token_budget(config, rows, load_tokenizer(config.model), context_length, wanted)


def _each_row(rows: Rows, block: int = 1024) -> Iterator[Row]:
    for start in range(0, len(rows), block):
        yield from rows.slice(start, min(start + block, len(rows)))


def _longest_chars(config: PrefilterConfig, rows: Rows) -> int:
    """An upper bound in characters of the run's longest prompt (all its messages, the system prompt)."""
    longest = 0
    for row in _each_row(rows):
        prompt = None if isinstance(row, BadRow) else row.get(config.prompt_column)
        if is_conversation(prompt):
            longest = max(longest, sum(len(str(message["content"])) for message in prompt))
        elif isinstance(prompt, str):
            longest = max(longest, len(prompt))
    return longest + len(config.system_prompt or "")
