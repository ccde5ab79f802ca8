"""A tiny Qwen2-style causal LM and a character tokenizer, built locally (no hub).

Used by ``referee demo`` and by tests: a ~0.6M-parameter model trains in minutes on a CPU,
and a character vocabulary keeps every digit a token of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerFast

DEFAULT_CHARSET = (
    "0123456789+-*/=#?:.,$%()<>_ \n"
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)
SPECIAL_TOKENS = ("<pad>", "<unk>", "<bos>", "<eos>")

# A minimal chat template: "u:" / "s:" / "a:" role prefixes, one message per line.
CHAT_TEMPLATE = (
    "{% for message in messages %}{{ message['role'][0] }}:{{ message['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}a:{% endif %}"
)


def build_char_tokenizer(charset: str = DEFAULT_CHARSET) -> PreTrainedTokenizerFast:
    """A tokenizer with one token per character of ``charset`` (others map to ``<unk>``).

    It has pad/unk/bos/eos tokens and a small chat template, decodes without adding spaces,
    and saves and reloads with ``AutoTokenizer`` like any transformers tokenizer.

    Example:
        >>> tokenizer = build_char_tokenizer()
        >>> ids = tokenizer("12 + 3 = 15\\n#### 15")["input_ids"]
        >>> len(ids), tokenizer.decode(ids)
        (19, '12 + 3 = 15\\n#### 15')
        >>> tokenizer.apply_chat_template([{"role": "user", "content": "1+1"}], tokenize=False,
        ...                               add_generation_prompt=True)
        'u:1+1\\na:'
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    if len(set(charset)) != len(charset):
        raise ValueError("charset repeats a character; give each character once.")
    vocab = {token: index for index, token in enumerate([*SPECIAL_TOKENS, *charset])}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    backend.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", unk_token="<unk>", bos_token="<bos>", eos_token="<eos>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


# The same layout with tool calls and tool turns ("t:" lines), for training with a tool
# (referee.rewards.tools); TOOL_RESPONSE_TEMPLATE tells TRL's parser where a reply's tool calls are.
TOOL_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'assistant' %}a:{{ message['content'] or '' }}"
    "{% for call in message.get('tool_calls') or [] %}<tool_call>"
    '{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}}'
    "</tool_call>{% endfor %}<eos>\n"
    "{% else %}{{ message['role'][0] }}:{{ message['content'] }}\n{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}a:{% endif %}"
)
TOOL_RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "a:",
    "fields": {
        "tool_calls": {"open": "<tool_call>", "close_pattern": r"</tool_call>\s*", "repeats": True, "content": "json",
                       "transform": {"type": "function", "function": "{content}"}},
        "content": {"close_pattern": r"<eos>\s*", "content": "text"},
    },
}
TOOL_CHARSET = "".join(c for c in map(chr, range(32, 127))) + "\n"


def build_tool_tokenizer() -> PreTrainedTokenizerFast:
    """A character tokenizer over printable ASCII whose chat template renders tool calls and tool
    turns, and whose replies TRL parses (``tools=`` / ``environment_factory=`` in ``GRPOTrainer``).

    Example:
        >>> tokenizer = build_tool_tokenizer()
        >>> call = {"type": "function", "function": {"name": "python", "arguments": {"code": "print(2+2)"}}}
        >>> print(tokenizer.apply_chat_template([{"role": "user", "content": "2+2"},
        ...     {"role": "assistant", "content": "", "tool_calls": [call]}, {"role": "tool", "content": "4"}],
        ...     tokenize=False, add_generation_prompt=True))
        u:2+2
        a:<tool_call>{"name": "python", "arguments": {"code": "print(2+2)"}}</tool_call><eos>
        t:4
        a:
        >>> ids = tokenizer.encode('<tool_call>{"name": "python", "arguments": {"code": "1"}}</tool_call><eos>')
        >>> tokenizer.parse_response(ids, prefix=tokenizer.encode("u:x\\na:"))["tool_calls"][0]["function"]
        {'name': 'python', 'arguments': {'code': '1'}}
    """
    tokenizer = build_char_tokenizer(TOOL_CHARSET)
    tokenizer.chat_template = TOOL_CHAT_TEMPLATE
    tokenizer.add_tokens(["<tool_call>", "</tool_call>"])
    tokenizer.response_template = TOOL_RESPONSE_TEMPLATE
    return tokenizer


def build_tiny_model(
    tokenizer: PreTrainedTokenizerFast,
    *,
    hidden_size: int = 128,
    num_layers: int = 4,
    num_heads: int = 4,
    num_kv_heads: int = 2,
    intermediate_size: int = 256,
    max_positions: int = 256,
    seed: int = 0,
) -> PreTrainedModel:
    """A freshly initialised Qwen2 causal LM sized for ``tokenizer`` (tied embeddings).

    Example:
        >>> model = build_tiny_model(build_char_tokenizer())
        >>> sum(p.numel() for p in model.parameters())
        602880
    """
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=intermediate_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_kv_heads,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(seed)
    return Qwen2ForCausalLM(config)


def save_tiny_model(path: str | Path, *, seed: int = 0) -> Path:
    """Build a tiny model and its tokenizer and save both to ``path`` (a transformers folder).

    Example:
        >>> import tempfile
        >>> from transformers import AutoModelForCausalLM
        >>> folder = save_tiny_model(tempfile.mkdtemp())
        >>> AutoModelForCausalLM.from_pretrained(folder).config.model_type
        'qwen2'
    """
    path = Path(path)
    tokenizer = build_char_tokenizer()
    build_tiny_model(tokenizer, seed=seed).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
