"""Format checks as Verdicts: think blocks, answer tags, tag counts, answer lines, code fences, regexes.

Every check takes the completion text and keyword-only options and returns a
:class:`Verdict`: ``correct`` (score 1.0) when the format holds, ``wrong`` with a reason
(and a partial score for :func:`check_tag_counts`) when it does not, ``error`` when the
completion is not text or an option is unusable. No check reads or judges the answer itself.

Chat templates that pre-fill ``<think>`` (Qwen3, DeepSeek-R1 distills) hand the model a
completion that starts *inside* the think block, so it holds ``</think>`` but no opener.
``prefilled=None`` (the default) accepts both shapes; ``True`` or ``False`` pins one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from .gsm8k import extract_answer
from .verdict import Verdict

_FENCE_RE = re.compile(r"^[ \t]*```[ \t]*(?P<lang>[\w+#.-]*)[^\n]*\n(?P<code>.*?)^[ \t]*```", re.DOTALL | re.MULTILINE)


def _not_text(completion: Any) -> Verdict | None:
    if isinstance(completion, str):
        return None
    return Verdict("error", reason=f"completion must be a str, got {type(completion).__name__}")


def _bad_tag(tag: Any) -> Verdict | None:
    if isinstance(tag, str) and re.fullmatch(r"[A-Za-z_][\w.-]*", tag):
        return None
    return Verdict("error", reason=f"tag {tag!r} is not a tag name such as 'think'")


def _bad_prefilled(prefilled: Any) -> Verdict | None:
    if prefilled is None or isinstance(prefilled, bool):
        return None
    return Verdict("error", reason=f"prefilled={prefilled!r} must be None (either shape), True or False")


def _block(text: str, tag: str) -> tuple[str | None, str]:
    """The content of the one ``<tag>...</tag>`` block in ``text``, or ``None`` and why not."""
    opener, closer = f"<{tag}>", f"</{tag}>"
    opens, closes = text.count(opener), text.count(closer)
    if opens != 1 or closes != 1:
        return None, f"{opener} appears {opens} times and {closer} {closes} times; write each exactly once"
    start, end = text.index(opener), text.index(closer)
    if end < start:
        return None, f"{closer} comes before {opener}"
    content = text[start + len(opener):end]
    if not content.strip():
        return None, f"the {opener} block is empty"
    return content, ""


def check_think(
    completion: Any,
    *,
    tag: str = "think",
    prefilled: bool | None = None,
    answer_tag: str | None = None,
) -> Verdict:
    """A closed, non-empty reasoning block followed by a non-empty answer.

    Args:
        completion: the model's text.
        tag: the reasoning tag name (``think`` for ``<think>...</think>``).
        prefilled: ``None`` accepts a completion that opens the block itself and one that
            starts inside it (the template wrote ``<think>``); ``True`` requires the latter,
            ``False`` the former.
        answer_tag: when set (e.g. ``"answer"``), everything after the reasoning block must
            be exactly one ``<answer>...</answer>`` block.

    Example:
        >>> check_think("<think>9 * 2 = 18</think>\\n#### 18").status
        'correct'
        >>> check_think("9 * 2 = 18</think>\\n#### 18").details["prefilled"]  # template pre-filled <think>
        True
        >>> check_think("<think>9 * 2 = 18\\n#### 18").reason
        '</think> never appears: the reasoning block is not closed'
        >>> check_think("<think>x</think><answer>18</answer>", answer_tag="answer").correct
        True
    """
    problem = _not_text(completion) or _bad_tag(tag) or _bad_prefilled(prefilled)
    if answer_tag is not None:
        problem = problem or _bad_tag(answer_tag)
    if problem:
        return problem
    opener, closer = f"<{tag}>", f"</{tag}>"
    opens, closes = completion.count(opener), completion.count(closer)
    if closes == 0:
        return Verdict("wrong", reason=f"{closer} never appears: the reasoning block is not closed")
    if closes > 1 or opens > 1:
        return Verdict("wrong", reason=f"{opener} appears {opens} times and {closer} {closes} times; open and close once")
    is_prefilled = opens == 0
    if prefilled is not None and prefilled != is_prefilled:
        expected = "must not open it again (the template wrote it)" if prefilled else f"must start with {opener}"
        return Verdict("wrong", reason=f"the completion {expected}")
    close_at = completion.index(closer)
    if is_prefilled:
        reasoning = completion[:close_at]
    else:
        if completion.lstrip().find(opener) != 0:
            return Verdict("wrong", reason=f"text comes before {opener}; the completion must start with it")
        reasoning = completion[completion.index(opener) + len(opener):close_at]
    if not reasoning.strip():
        return Verdict("wrong", reason=f"the {opener} block is empty")
    if answer_tag is not None and (f"<{answer_tag}>" in reasoning or f"</{answer_tag}>" in reasoning):
        return Verdict("wrong", reason=f"an <{answer_tag}> tag stands inside the {opener} block; answer once, after {closer}")
    after = completion[close_at + len(closer):]
    if not after.strip():
        return Verdict("wrong", reason=f"nothing follows {closer}: the answer is missing")
    details = {"prefilled": is_prefilled, "reasoning_chars": len(reasoning.strip())}
    if answer_tag is None:
        return Verdict("correct", 1.0, reason=f"a closed {opener} block, then an answer", details=details)
    answer, why = _block(after, answer_tag)
    if answer is None:
        return Verdict("wrong", reason=f"after {closer}: {why}", details=details)
    if after.strip() != f"<{answer_tag}>{answer}</{answer_tag}>":
        return Verdict("wrong", reason=f"only the <{answer_tag}> block may follow {closer}", details=details)
    return Verdict("correct", 1.0, extracted=answer.strip(),
                   reason=f"a closed {opener} block, then one <{answer_tag}> block", details=details)


def check_answer_tags(completion: Any, *, tag: str = "answer", last: bool = False) -> Verdict:
    """Exactly one non-empty ``<answer>...</answer>`` block, opened before it is closed.

    Args:
        completion: the model's text.
        tag: the tag name.
        last: also require that only whitespace follows the closing tag.

    Example:
        >>> check_answer_tags("so <answer> 18 </answer>").extracted
        '18'
        >>> check_answer_tags("<answer>17</answer> or <answer>18</answer>").reason
        '<answer> appears 2 times and </answer> 2 times; write each exactly once'
        >>> check_answer_tags("</answer>18<answer>").status
        'wrong'
    """
    problem = _not_text(completion) or _bad_tag(tag)
    if problem:
        return problem
    answer, why = _block(completion, tag)
    if answer is None:
        return Verdict("wrong", reason=why)
    closer = f"</{tag}>"
    if last and completion[completion.index(closer) + len(closer):].strip():
        return Verdict("wrong", extracted=answer.strip(), reason=f"text follows </{tag}>; the answer block must come last")
    return Verdict("correct", 1.0, extracted=answer.strip(), reason=f"one <{tag}> block")


def check_tag_counts(
    completion: Any,
    *,
    tags: Sequence[str] = ("think", "answer"),
    prefilled: bool | None = None,
) -> Verdict:
    """Partial credit: each opening and closing tag that appears exactly once, in order.

    Each of the ``2 * len(tags)`` markers is worth an equal share. A pair whose closing tag
    comes before its opening tag earns nothing. The first tag may have its opener pre-filled
    by the chat template (see ``prefilled``): with ``None`` a missing first opener counts as
    present when its closer is there; with ``True`` the first opener must not appear.

    Example:
        >>> check_tag_counts("<think>a</think><answer>18</answer>").score
        1.0
        >>> check_tag_counts("a</think><answer>18</answer>").score  # <think> pre-filled
        1.0
        >>> check_tag_counts("<think>a</think>18").score
        0.5
        >>> check_tag_counts("</think>a<think><answer>18</answer>").score
        0.5
    """
    problem = _not_text(completion) or _bad_prefilled(prefilled)
    if isinstance(tags, str) or not tags:
        problem = problem or Verdict("error", reason=f"tags={tags!r} must be a non-empty list of tag names")
    for tag in () if problem else tags:
        problem = problem or _bad_tag(tag)
    if problem:
        return problem
    earned, missing = 0, []
    for position, tag in enumerate(tags):
        opener, closer = f"<{tag}>", f"</{tag}>"
        opens, closes = completion.count(opener), completion.count(closer)
        written_by_template = opens == 0 and closes == 1
        if position == 0 and prefilled is True:
            opener_ok = written_by_template
        elif position == 0 and prefilled is None:
            opener_ok = opens == 1 or written_by_template
        else:
            opener_ok = opens == 1
        closer_ok = closes == 1
        if opens == 1 and closes == 1 and completion.index(closer) < completion.index(opener):
            opener_ok = closer_ok = False
        earned += opener_ok + closer_ok
        missing += [marker for marker, ok in ((opener, opener_ok), (closer, closer_ok)) if not ok]
    score = earned / (2 * len(tags))
    if not missing:
        return Verdict("correct", 1.0, reason=f"each of {len(tags) * 2} tags appears once, in order")
    return Verdict("wrong", score, reason=f"{', '.join(missing)} not exactly once in order",
                   details={"missing": missing})


def check_answer_line(completion: Any) -> Verdict:
    """Exactly one GSM8K answer line, ``#### N`` (N a number; ``#### Step 1`` headings do not count).

    Example:
        >>> check_answer_line("9 * 2 = 18\\n#### 18").extracted
        '18'
        >>> check_answer_line("The answer is 18.").reason
        "no '#### N' answer line"
        >>> check_answer_line("#### 17\\n#### 18").reason
        "2 '#### N' answer lines; write one"
    """
    problem = _not_text(completion)
    if problem:
        return problem
    answers = [found for line in completion.splitlines() if "####" in line
               for found in [extract_answer(line, mode="strict")] if found is not None]
    if not answers:
        return Verdict("wrong", reason="no '#### N' answer line")
    if len(answers) > 1:
        return Verdict("wrong", reason=f"{len(answers)} '#### N' answer lines; write one")
    return Verdict("correct", 1.0, extracted=answers[0].number.text, reason="one '#### N' answer line")


def check_code_block(completion: Any, *, language: str | None = None) -> Verdict:
    """At least one closed, non-empty fenced code block (optionally in ``language``).

    Example:
        >>> check_code_block("Here:\\n```python\\ndef f():\\n    return 1\\n```").status
        'correct'
        >>> check_code_block("```python\\ndef f(): ...").reason
        'no closed, non-empty ``` code block'
        >>> check_code_block("```js\\nf()\\n```", language="python").status
        'wrong'
    """
    problem = _not_text(completion)
    if language is not None and not (isinstance(language, str) and language.strip()):
        problem = problem or Verdict("error", reason=f"language={language!r} must be a language name such as 'python'")
    if problem:
        return problem
    blocks = [m for m in _FENCE_RE.finditer(completion) if m.group("code").strip()]
    if language is not None:
        blocks = [m for m in blocks if m.group("lang").lower() == language.strip().lower()]
    if not blocks:
        what = f"{language} code block" if language else "code block"
        return Verdict("wrong", reason=f"no closed, non-empty ``` {what}")
    return Verdict("correct", 1.0, reason=f"{len(blocks)} fenced code block(s)",
                   details={"blocks": len(blocks), "language": blocks[-1].group("lang")})


def check_regex(completion: Any, *, pattern: str | re.Pattern[str], fullmatch: bool = False) -> Verdict:
    """The completion matches a user pattern (``re.search``, or the whole text with ``fullmatch``).

    Write flags inline (``(?s)``, ``(?m)``, ``(?i)``). The matched text is the ``extracted``.

    Example:
        >>> check_regex("Final: 18", pattern=r"Final: (\\d+)").extracted
        'Final: 18'
        >>> check_regex("Final: 18 and more", pattern=r"Final: \\d+", fullmatch=True).status
        'wrong'
        >>> check_regex("x", pattern="(").status
        'error'
    """
    problem = _not_text(completion)
    if problem:
        return problem
    try:
        compiled = re.compile(pattern)
    except (re.error, TypeError) as exc:
        return Verdict("error", reason=f"pattern {pattern!r} is not a valid regular expression ({exc})")
    match = compiled.fullmatch(completion) if fullmatch else compiled.search(completion)
    if match is None:
        how = "match the whole completion" if fullmatch else "occur in the completion"
        return Verdict("wrong", reason=f"pattern {compiled.pattern!r} does not {how}")
    return Verdict("correct", 1.0, extracted=match.group(0), reason=f"matches {compiled.pattern!r}")


CHECKS: dict[str, Callable[..., Verdict]] = {
    "think": check_think,
    "answer_tags": check_answer_tags,
    "tag_counts": check_tag_counts,
    "answer_line": check_answer_line,
    "code_block": check_code_block,
    "regex": check_regex,
}


def get_check(name: str) -> Callable[..., Verdict]:
    """The format check called ``name`` (a key of :data:`CHECKS`).

    Example:
        >>> get_check("answer_line")("#### 18").correct
        True
    """
    try:
        return CHECKS[name]
    except KeyError:
        raise ValueError(f"Unknown format check {name!r}; choose one of {', '.join(CHECKS)}.") from None
