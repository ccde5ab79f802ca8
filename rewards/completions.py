"""Turn any completion shape TRL passes (standard or conversational) into plain text."""

from __future__ import annotations

from typing import Any


def completion_text(completion: Any) -> str | None:
    """The text of a completion: a ``str`` as it is, or the content of a conversational one.

    A conversational completion is a list of ``{"role": ..., "content": ...}`` messages; its
    text is the last assistant message's content (content given as a list of typed parts is
    joined). Anything else gives ``None``.

    Example:
        >>> completion_text("#### 18")
        '#### 18'
        >>> completion_text([{"role": "assistant", "content": "#### 18"}])
        '#### 18'
        >>> completion_text([{"role": "assistant", "content": [{"type": "text", "text": "#### 18"}]}])
        '#### 18'
        >>> completion_text(42) is None
        True
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if not isinstance(completion, (list, tuple)) or not completion:
        return None
    messages = [m for m in completion if isinstance(m, dict)]
    assistant = [m for m in messages if m.get("role", "assistant") == "assistant"]
    if not assistant:
        return None
    return _content_text(assistant[-1].get("content"))


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(parts) if parts else None
    return None


def prompt_text(prompt: Any) -> str | None:
    """The text of a prompt: a ``str`` as it is, or a conversation's message contents, one per line.

    Example:
        >>> prompt_text("What is 9 * 2?")
        'What is 9 * 2?'
        >>> prompt_text([{"role": "system", "content": "Answer as #### N."}, {"role": "user", "content": "9 * 2?"}])
        'Answer as #### N.\\n9 * 2?'
        >>> prompt_text(None) is None
        True
    """
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, dict):
        prompt = [prompt]
    if not isinstance(prompt, (list, tuple)):
        return None
    texts = [_content_text(m.get("content")) for m in prompt if isinstance(m, dict)]
    texts = [text for text in texts if text is not None]
    return "\n".join(texts) if texts else None
