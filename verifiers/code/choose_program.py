"""Find the program in a completion and its language: the fences' tags against the language the tests name."""

from __future__ import annotations

from .extract import _FENCE_RE, extract_code
from .languages import LANGUAGES, language_of_tag


def extract_program(completion: str, language: str | None = None) -> tuple[str, str, str | None]:
    """``(code, language, mismatch)``: the program to run and its language (a name of
    :data:`~referee.verifiers.code.languages.LANGUAGES`), and, when the completion answers in
    another language than ``language`` (the one the tests dict names), a sentence saying so (the
    program's fault: score 0).

    With no ``language`` named the fences decide: a Python block as :func:`extract_code` finds it,
    else the last block tagged with a language we run, else Python. A named language takes the
    last block tagged with it, else the last untagged block, else the whole text (when the
    completion has no fenced block of another language).

    Example:
        >>> extract_program("```cpp\\nint main() {}\\n```")
        ('int main() {}\\n', 'cpp', None)
        >>> extract_program("```python\\nprint(1)\\n```\\n```java\\nclass Main {}\\n```")
        ('print(1)\\n', 'python', None)
        >>> extract_program("```\\nint main() {}\\n```", "cpp")
        ('int main() {}\\n', 'cpp', None)
        >>> extract_program("```python\\nprint(1)\\n```", "cpp")[2]
        'the tests ask for C++, but the completion answers in Python'
        >>> extract_program("def f(): return 2")
        ('def f(): return 2', 'python', None)
    """
    tagged: dict[str, str] = {}
    last_tagged: str | None = None
    untagged: str | None = None
    for block in _FENCE_RE.finditer(completion):
        name = language_of_tag(block.group("lang")) if block.group("lang") else None
        if name is not None:
            tagged[name], last_tagged = block.group("body"), name
        elif not block.group("lang"):
            untagged = block.group("body")
    if language is None:
        if "python" in tagged or last_tagged is None:
            return extract_code(completion), "python", None
        return tagged[last_tagged], last_tagged, None
    if language in tagged:
        return tagged[language], language, None
    if last_tagged is not None:
        return "", language, (f"the tests ask for {LANGUAGES[language].title}, but the completion answers in "
                              f"{LANGUAGES[last_tagged].title}")
    if language == "python":
        return extract_code(completion), language, None
    return (untagged if untagged is not None else completion), language, None
