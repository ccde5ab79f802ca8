"""Turn a dataset row's prompt into the token ids the model sees, the way TRL does.

A conversational prompt (a list of ``{"role", "content"}`` messages) goes through the
tokenizer's chat template with the generation prompt added; a plain string is tokenised as
it is (TRL's rule), unless ``chat_template="always"`` wraps it as one user message first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

ChatTemplateMode = Literal["auto", "always"]
CHAT_TEMPLATE_MODES: tuple[str, ...] = ("auto", "always")

# A prompt longer than this many characters per token of room is measured on a prefix first
# (then on prefixes 4x longer), so a huge row is refused without tokenising all of it.
_PREFIX_CHARS_PER_TOKEN = 8
_PREFIX_GROWTH = 4
_BOUNDARY_TOKENS = 8  # a prefix cut inside a word may take a few tokens more than in the whole


class PromptError(ValueError):
    """A row whose prompt cannot be generated from; the message says why in one line.

    Example:
        >>> str(PromptError("prompt is empty"))
        'prompt is empty'
    """


@dataclass(frozen=True)
class RenderedPrompt:
    """The prompt as reward functions receive it, its token ids, and whether it is a chat.

    Example:
        >>> RenderedPrompt(prompt="1 + 1 = ", token_ids=[5, 32, 15, 32, 5, 32, 17, 32], conversational=False).prompt
        '1 + 1 = '
    """

    prompt: Any
    token_ids: list[int]
    conversational: bool


def is_conversation(value: Any) -> bool:
    """Whether ``value`` is a list of chat messages (dicts with ``role`` and ``content``).

    Example:
        >>> is_conversation([{"role": "user", "content": "hi"}]), is_conversation("hi")
        (True, False)
    """
    return (
        isinstance(value, list) and bool(value)
        and all(isinstance(m, dict) and "role" in m and "content" in m for m in value)
    )


@dataclass(frozen=True)
class PromptRenderer:
    """Renders and tokenises one row's prompt, checking it fits the model's context.

    A prompt whose tokens plus ``max_tokens`` exceed ``context_length`` raises
    :class:`PromptError` (as do a missing or empty prompt and a chat without a template); a
    prompt far longer than could fit is refused from a prefix, without tokenising all of it.
    ``max_tokens`` that leave no room for any prompt raise ``ValueError`` at once.

    Example:
        >>> from referee.recipes.common.tiny_model import build_char_tokenizer
        >>> renderer = PromptRenderer(build_char_tokenizer(), max_tokens=8, context_length=16)
        >>> rendered = renderer.render({"prompt": [{"role": "user", "content": "1+1"}]})
        >>> renderer.tokenizer.decode(rendered.token_ids), rendered.conversational
        ('u:1+1\\na:', True)
        >>> len(renderer.render({"prompt": "1 + 3 = "}).token_ids)
        8
        >>> renderer.render({"prompt": "1" * 9})
        Traceback (most recent call last):
        ...
        referee.recipes.common.prompts.PromptError: prompt is 9 tokens; with 8 new tokens that exceeds the model's context of 16 tokens (shorten the prompt or lower --max-tokens)
        >>> renderer.render({"prompt": "1 " * 10_000_000})  # refused from its first 63 characters
        Traceback (most recent call last):
        ...
        referee.recipes.common.prompts.PromptError: prompt is 20,000,000 characters and its first 63 alone are 63 tokens; with 8 new tokens that exceeds the model's context of 16 tokens (shorten the prompt or lower --max-tokens)
    """

    tokenizer: PreTrainedTokenizerBase
    max_tokens: int
    context_length: int | None = None
    prompt_column: str = "prompt"
    chat_template: ChatTemplateMode = "auto"
    system_prompt: str | None = None
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.chat_template not in CHAT_TEMPLATE_MODES:
            raise ValueError(f"Unknown chat template mode {self.chat_template!r}; choose auto or always.")
        if self.context_length is not None and self.max_tokens >= self.context_length:
            raise ValueError(f"--max-tokens {self.max_tokens} leaves no room for a prompt in the model's context of "
                             f"{self.context_length} tokens; lower --max-tokens below {self.context_length}.")

    def render(self, row: dict[str, Any]) -> RenderedPrompt:
        """The rendered prompt of ``row`` (raises :class:`PromptError` for a bad one)."""
        if self.prompt_column not in row:
            raise PromptError(f"row has no {self.prompt_column!r} column (choose the prompt column with --prompt-column)")
        prompt = row[self.prompt_column]
        if isinstance(prompt, str) and self.chat_template == "always":
            system = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
            prompt = [*system, {"role": "user", "content": prompt}]
        if is_conversation(prompt):
            token_ids = self._chat_ids(prompt)
        elif isinstance(prompt, str):
            if not prompt.strip():
                raise PromptError("prompt is empty")
            self._check_prefix(prompt, special_tokens=True)
            token_ids = list(self.tokenizer(prompt)["input_ids"])
        else:
            raise PromptError(f"prompt is a {type(prompt).__name__}, not text or a list of chat messages")
        if not token_ids:
            raise PromptError("prompt has no tokens")
        if self.context_length is not None and len(token_ids) + self.max_tokens > self.context_length:
            raise PromptError(
                f"prompt is {len(token_ids)} tokens; with {self.max_tokens} new tokens that exceeds the model's "
                f"context of {self.context_length} tokens (shorten the prompt or lower --max-tokens)"
            )
        return RenderedPrompt(prompt=prompt, token_ids=token_ids, conversational=is_conversation(prompt))

    @property
    def room(self) -> int | None:
        """Tokens a prompt may take: the context less ``max_tokens`` (``None``: no known context).

        Example:
            >>> from referee.recipes.common.tiny_model import build_char_tokenizer
            >>> PromptRenderer(build_char_tokenizer(), max_tokens=8, context_length=16).room
            8
        """
        return None if self.context_length is None else self.context_length - self.max_tokens

    def _check_prefix(self, text: str, *, special_tokens: bool) -> None:
        """Refuse ``text`` when a prefix of it alone takes more tokens than there is room for.

        A prompt far longer than could fit (more than 8 characters per token of room) is
        tokenised a prefix at a time (cut at a space, growing 4x), so one huge row costs about
        as much as a prompt that fits, not minutes and gigabytes.
        """
        room = self.room
        if room is None or len(text) <= room * _PREFIX_CHARS_PER_TOKEN:
            return
        limit = max(room, 1) * _PREFIX_CHARS_PER_TOKEN
        while limit < len(text):
            cut = max(text.rfind(" ", limit // 2, limit), text.rfind("\n", limit // 2, limit))
            prefix = text[:cut if cut > 0 else limit]
            count = len(self.tokenizer(prefix, add_special_tokens=special_tokens)["input_ids"])
            if count > room + _BOUNDARY_TOKENS:
                raise PromptError(
                    f"prompt is {len(text):,} characters and its first {len(prefix):,} alone are {count:,} tokens; with "
                    f"{self.max_tokens} new tokens that exceeds the model's context of {self.context_length} tokens "
                    "(shorten the prompt or lower --max-tokens)"
                )
            limit *= _PREFIX_GROWTH

    def _chat_ids(self, messages: list[dict[str, Any]]) -> list[int]:
        if not getattr(self.tokenizer, "chat_template", None):
            raise PromptError("prompt is a chat but the tokenizer has no chat template (use a chat model or text prompts)")
        room = self.room
        if room is not None and sum(len(m["content"]) for m in messages if isinstance(m.get("content"), str)) > (
                room * _PREFIX_CHARS_PER_TOKEN):
            try:
                text = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False,
                                                          **self.chat_template_kwargs)
            except Exception as exc:  # a template can raise anything (jinja errors, bad roles)
                raise PromptError(f"the chat template failed on this prompt ({type(exc).__name__}: {exc})") from None
            if isinstance(text, str):
                self._check_prefix(text, special_tokens=False)
        try:
            encoded = self.tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=True, return_dict=True, **self.chat_template_kwargs
            )
        except Exception as exc:  # a template can raise anything (jinja errors, bad roles)
            raise PromptError(f"the chat template failed on this prompt ({type(exc).__name__}: {exc})") from None
        return list(encoded["input_ids"])
