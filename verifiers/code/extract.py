"""Find the program in a completion: the last fenced Python block, or the whole text when it is code."""

from __future__ import annotations

import ast
import re

# A fence is three or more backticks (or tildes) and an optional language tag, then a newline; it
# may be glued to text before it (``<answer>```python``). The block closes at the same fence that
# starts a line or ends one (``return x```</answer>``, ``````</answer>``), or runs to the end of a
# truncated completion. A fence inside a line of code (``s = "```"``) does not close it.
_FENCE_RE = re.compile(
    r"(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+#.-]*)[^\n`]*\n(?P<body>.*?)"
    r"(?:^[ \t]*(?P=fence)(?![`~])|(?P=fence)(?![`~])(?=[ \t]*(?:<|$))|\Z)",
    re.MULTILINE | re.DOTALL,
)
_PYTHON_TAGS = frozenset({"python", "python3", "py", "py3"})
# Lines only code starts like this: a definition, an import, a block header, a return, a call or
# an assignment at the start of a line.
_CODE_LINE_RE = re.compile(
    r"^[ \t]*(?:(?:async[ \t]+)?def[ \t]+\w+[ \t]*\(|class[ \t]+\w+[ \t]*[(:]|import[ \t]+\w|from[ \t]+[\w.]+[ \t]+import\b"
    r"|(?:for|while|if|elif|with|try|except|else|finally)\b[^\n]*:[ \t]*(?:#[^\n]*)?$|return\b|[A-Za-z_][\w.]*\("
    r"|[A-Za-z_][\w.]*(?:\[[^\]\n]*\])?(?:[ \t]*,[ \t]*[A-Za-z_]\w*)*[ \t]*(?:[-+*/%|&^]|//|\*\*)?=(?!=))",
    re.MULTILINE,
)


def looks_like_code(text: str) -> bool:
    """Whether unfenced ``text`` is a program (perhaps a broken one) rather than prose: a line
    starts the way only code does, or the whole text is Python beyond a bare word or number.

    Example:
        >>> looks_like_code("def f(x):\\n    return x +"), looks_like_code("n = int(input())")
        (True, True)
        >>> looks_like_code("I don't know how to solve this."), looks_like_code("The answer is 42.")
        (False, False)
    """
    if _CODE_LINE_RE.search(text):
        return True
    try:
        tree = compile(text, "<completion>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return any(not (isinstance(node, ast.Expr) and isinstance(node.value, (ast.Name, ast.Constant)))
               for node in tree.body)


def extract_code(completion: str) -> str:
    """The code to run: the last fenced block tagged Python, else the last untagged one, else the
    whole text when it is code; ``""`` when the completion holds no code (prose: ``no_answer``).

    A tagged block wins over a later untagged one, which is often sample output.

    Example:
        >>> extract_code("Here it is:\\n```python\\ndef f(x):\\n    return x + 1\\n```\\nDone.")
        'def f(x):\\n    return x + 1\\n'
        >>> extract_code("```bash\\npip install x\\n```\\n```py\\nprint(1)\\n```")
        'print(1)\\n'
        >>> extract_code("```python\\nprint(sum([1, 2]))\\n```\\nOutput:\\n```\\n3\\n```")
        'print(sum([1, 2]))\\n'
        >>> extract_code("<answer>```python\\nprint(2)```</answer>")
        'print(2)'
        >>> extract_code("def f():\\n    return 2")
        'def f():\\n    return 2'
        >>> extract_code("Truncated:\\n```python\\ndef f():\\n    return")
        'def f():\\n    return'
        >>> extract_code("Sorry, I cannot solve this one.")
        ''
    """
    tagged = untagged = None
    for block in _FENCE_RE.finditer(completion):
        lang = block.group("lang").lower()
        if lang in _PYTHON_TAGS:
            tagged = block
        elif not lang:
            untagged = block
    chosen = tagged or untagged
    if chosen is not None:
        return chosen.group("body")
    return completion if looks_like_code(completion) else ""
