"""LaTeX structure shared by the answer extractors: boxed answers, read in linear time."""

from __future__ import annotations

import re

BOXED_RE = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])\s*")  # a box opens here, readable or not
_BRACE_RE = re.compile(r"(?<!\\)[{}]")
_TOKEN_RE = re.compile(r"[^\s$]+")


def closing_braces(text: str, start: int = 0) -> dict[int, int]:
    """Position of each unescaped ``{`` (from ``start`` on) -> its matching ``}``, in one pass.

    Example:
        >>> closing_braces("a{b{c}d}")
        {3: 5, 1: 7}
    """
    stack: list[int] = []
    pairs: dict[int, int] = {}
    for match in _BRACE_RE.finditer(text, start):
        position = match.start()
        if match.group() == "{":
            stack.append(position)
        elif stack:
            pairs[stack.pop()] = position
    return pairs


def boxed_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of every readable ``\\boxed{...}``, ``\\fbox{...}`` and ``\\boxed 5``.

    Braces nest; an unclosed box is skipped. Linear in the length of ``text`` however many
    boxes it opens.

    Example:
        >>> boxed_spans(r"so $\\boxed{\\frac{1}{2}}$ or \\boxed 5.")
        [(4, 23, '\\\\frac{1}{2}'), (28, 37, '5')]
        >>> boxed_spans(r"\\boxed{" * 3)
        []
    """
    found = list(BOXED_RE.finditer(text))
    if not found:
        return []
    pairs = closing_braces(text, found[0].start())
    spans = []
    for boxed in found:
        after = boxed.end()
        if text.startswith("{", after):
            close = pairs.get(after)
            if close is not None:
                spans.append((boxed.start(), close + 1, text[after + 1:close]))
        elif boxed.group() != boxed.group().rstrip():  # "\boxed 5": a space, then one token
            word = _TOKEN_RE.match(text, after)
            if word:
                spans.append((boxed.start(), word.end(), word.group().rstrip(".,;")))
    return spans
