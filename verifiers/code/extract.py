"""Find the program in a completion: the last fenced Python block, or the whole text."""

from __future__ import annotations

import re

# A fence opens a line with three or more backticks (or tildes) and an optional language tag;
# it closes at a line holding the same fence, or runs to the end of a truncated completion.
_FENCE_RE = re.compile(
    r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+#.-]*)[^\n]*\n(?P<body>.*?)(?:^[ \t]*(?P=fence)[ \t]*$|\Z)",
    re.MULTILINE | re.DOTALL,
)
_PYTHON_TAGS = frozenset({"python", "python3", "py", "py3"})


def extract_code(completion: str) -> str:
    """The code to run: the last fenced block tagged Python, else the last untagged one, else the whole text.

    A tagged block wins over a later untagged one, which is often sample output.

    Example:
        >>> extract_code("Here it is:\\n```python\\ndef f(x):\\n    return x + 1\\n```\\nDone.")
        'def f(x):\\n    return x + 1\\n'
        >>> extract_code("```bash\\npip install x\\n```\\n```py\\nprint(1)\\n```")
        'print(1)\\n'
        >>> extract_code("```python\\nprint(sum([1, 2]))\\n```\\nOutput:\\n```\\n3\\n```")
        'print(sum([1, 2]))\\n'
        >>> extract_code("def f():\\n    return 2")
        'def f():\\n    return 2'
        >>> extract_code("Truncated:\\n```python\\ndef f():\\n    return")
        'def f():\\n    return'
    """
    tagged = untagged = None
    for block in _FENCE_RE.finditer(completion):
        lang = block.group("lang").lower()
        if lang in _PYTHON_TAGS:
            tagged = block
        elif not lang:
            untagged = block
    chosen = tagged or untagged
    return completion if chosen is None else chosen.group("body")
