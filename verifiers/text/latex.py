"""LaTeX structure every answer reader shares: boxes, maths delimiters, bracket depth, top-level splits; linear time."""

from __future__ import annotations

import re

BOXED_RE = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])\s*")  # a box opens here, readable or not
_BRACE_RE = re.compile(r"(?<!\\)[{}]")
_TOKEN_RE = re.compile(r"[^\s$]+")
_DELIMITER_RE = re.compile(r"(?<!\\)\$\$|(?<!\\)\$|\\\(|\\\)|\\\[|\\\]")
_CLOSERS = {"$$": "$$", "$": "$", "\\(": "\\)", "\\[": "\\]"}
_INLINE = ("$", "\\(")  # inline maths never spans a line (as in Markdown and math-verify)


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
    global _last_boxed_spans
    last = _last_boxed_spans
    if last[0] is text:  # the same text again (its answer read, then reviewed): its boxes are known
        return list(last[1])
    found = list(BOXED_RE.finditer(text))
    if not found:
        return []
    pairs = None
    spans = []
    for boxed in found:
        after = boxed.end()
        if text.startswith("{", after):
            close = _flat_close(text, after)
            if close is None:
                if pairs is None:
                    pairs = closing_braces(text, found[0].start())
                close = pairs.get(after)
            if close is not None:
                spans.append((boxed.start(), close + 1, text[after + 1:close]))
        elif boxed.group() != boxed.group().rstrip():  # "\boxed 5": a space, then one token
            word = _TOKEN_RE.match(text, after)
            if word:
                spans.append((boxed.start(), word.end(), word.group().rstrip(".,;")))
    _last_boxed_spans = (text, tuple(spans))  # one assignment: safe under threads
    return spans


_last_boxed_spans: tuple[str | None, tuple[tuple[int, int, str], ...]] = (None, ())


def _flat_close(text: str, opening: int) -> int | None:
    """The ``}`` closing the ``{`` at ``opening`` when no brace stands between them (``\\boxed{18}``), else
    ``None`` (ask :func:`closing_braces`): the first brace after it, when a ``}`` not escaped, closes it."""
    close = text.find("}", opening + 1)
    if close < 0 or text[close - 1] == "\\" or text.find("{", opening + 1, close) >= 0:
        return None
    return close


def math_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of every ``$...$``, ``$$...$$``, ``\\(...\\)`` and ``\\[...\\]``, in order.

    Inline spans (``$``, ``\\(``) end at a line break: a ``$`` left open there was a price.

    Example:
        >>> [content for _, _, content in math_spans(r"so $x=1$ and \\[y = 2\\] cost $5\\n then")]
        ['x=1', 'y = 2']
    """
    spans = []
    opener: tuple[str, int] | None = None
    for match in _DELIMITER_RE.finditer(text):
        token = match.group()
        if opener is not None and opener[0] in _INLINE and "\n" in text[opener[1]:match.start()]:
            opener = None
        if opener is None:
            if token in _CLOSERS:
                opener = (token, match.end())
        elif token == _CLOSERS[opener[0]]:
            spans.append((opener[1] - len(opener[0]), match.end(), text[opener[1]:match.start()]))
            opener = None
    return spans


def strip_math_delimiters(text: str) -> str:
    """``text`` without one pair of enclosing maths delimiters.

    Example:
        >>> strip_math_delimiters(r" \\( x+1 \\) "), strip_math_delimiters("$a$ and $b$")
        ('x+1', '$a$ and $b$')
    """
    text = text.strip()
    for opener, closer in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if text.startswith(opener) and text.endswith(closer) and len(text) >= len(opener) + len(closer):
            inner = text[len(opener):len(text) - len(closer)]
            if opener != "$" or "$" not in inner:
                return inner.strip()
    return text


def bracket_depths(text: str) -> list[int]:
    """Bracket depth before each character (``()``, ``[]``, ``{}`` counted alike, never negative)."""
    depths, depth = [], 0
    for char in text:
        if char in ")]}":
            depth = max(0, depth - 1)
        depths.append(depth)
        if char in "([{":
            depth += 1
    return depths


def balanced(text: str, opening: str = "([{", closing: str = ")]}") -> bool:
    """Whether every bracket of ``opening`` / ``closing`` in ``text`` (not escaped: ``\\{`` is
    a brace to print) closes one opened before it, and all are closed.

    Example:
        >>> balanced("(1, 2))"), balanced(r"\\frac{1}{2}", "{", "}"), balanced(r"\\{1\\}}", "{", "}")
        (False, True, False)
    """
    depth = 0
    for index, char in enumerate(text):
        if (char in opening or char in closing) and index and text[index - 1] == "\\":
            continue
        depth += (char in opening) - (char in closing)
        if depth < 0:
            return False
    return depth == 0


def top_level_parts(text: str) -> list[str]:
    """``text`` split at the commas outside brackets.

    Example:
        >>> top_level_parts(r"(1, 2), \\frac{1}{2}, [0, 1)")
        ['(1, 2)', '\\\\frac{1}{2}', '[0, 1)']
    """
    parts, start = [], 0
    for index, (char, depth) in enumerate(zip(text, bracket_depths(text))):
        if char == "," and depth == 0:
            parts.append(text[start:index].strip())
            start = index + 1
    parts.append(text[start:].strip())
    return parts


def brace_depth(text: str) -> int:
    """The deepest nesting of ``{}``, ``()`` and ``[]`` in ``text``.

    Example:
        >>> brace_depth(r"\\frac{1}{(2+3)}")
        2
    """
    depth = deepest = 0
    for char in re.findall(r"[{}()\[\]]", text):
        depth = depth + 1 if char in "{([" else max(0, depth - 1)
        deepest = max(deepest, depth)
    return deepest


# A value written in LaTeX in prose, outside any maths delimiters: "\frac{2}{5}", "2\sqrt{3}", "-\dfrac{1}{2}", "3\pi".
_PLAIN_LATEX_VALUE_RE = re.compile(
    r"(?<![\\A-Za-z0-9{}^_.])[-\u2212]?(?:[0-9]+(?:\.[0-9]+)?\s?)?\\(?:[dt]?frac\s*\{[^{}$\n]{1,40}\}\s*\{[^{}$\n]{1,40}\}"
    r"|sqrt(?:\[[0-9]+\])?\s*\{[^{}$\n]{1,40}\}|pi(?![A-Za-z]))(?:\s?\\pi(?![A-Za-z]))?")


def last_plain_latex_value(text: str, start: int = 0) -> tuple[int, int, str] | None:
    r"""Start, end and text of the last value written in LaTeX in ``text[start:]`` without maths
    delimiters (a fraction, a root or a multiple of ``\pi``), else ``None``.

    Example:
        >>> last_plain_latex_value(r"So each part is \frac{2}{5} tons.")
        (16, 27, '\\frac{2}{5}')
        >>> last_plain_latex_value(r"The side is 2\sqrt{3} cm."), last_plain_latex_value("no maths here") is None
        ((12, 21, '2\\sqrt{3}'), True)
    """
    found = None
    for found in _PLAIN_LATEX_VALUE_RE.finditer(text, start):
        pass
    return (found.start(), found.end(), found.group()) if found else None
