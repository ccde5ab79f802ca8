"""Finding the program in a completion, in the shapes models write."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers.code import extract_code

CODE = "def add(a, b):\n    return a + b\n"

GOLDEN = [
    (f"```python\n{CODE}```", CODE),
    (f"Here is my solution:\n\n```python\n{CODE}```\n\nIt adds the numbers.", CODE),
    (f"```py\n{CODE}```", CODE),
    (f"```Python3\n{CODE}```", CODE),
    (f"```\n{CODE}```", CODE),
    (f"  ```python\n{CODE}  ```", CODE),  # indented fences, as in list items
    (f"~~~python\n{CODE}~~~", CODE),
    (f"````python\n{CODE}```\n````", f"{CODE}```\n"),  # a longer fence closes only at its own length
    (f"First try:\n```python\ndef add(a, b):\n    return a - b\n```\nFixed:\n```python\n{CODE}```", CODE),
    (f"```python\n{CODE}```\nExample:\n```\n>>> add(1, 2)\n3\n```", CODE),  # untagged output after the code
    (f"```bash\npip install nothing\n```\n```python\n{CODE}```\n```text\ndone\n```", CODE),
    (f"<think>I will write it.</think>\n```python\n{CODE}```", CODE),
    (f"```python\n{CODE}", CODE),  # truncated: no closing fence
    (CODE, CODE),  # no fence: the whole text
    ("```json\n{}\n```", "```json\n{}\n```"),  # only other languages: the whole text
    ("", ""),
]


@pytest.mark.parametrize(("completion", "expected"), GOLDEN)
def test_golden_shapes(completion, expected):
    assert extract_code(completion) == expected


@settings(max_examples=300, deadline=None)
@given(body=st.text(alphabet=st.characters(blacklist_characters="`~"), max_size=200),
       before=st.text(max_size=50), after=st.text(alphabet=st.characters(blacklist_characters="`~"), max_size=50))
def test_a_fenced_python_block_is_read_back_exactly(body, before, after):
    body = body if body.endswith("\n") or not body else body + "\n"
    before = before.replace("`", "").replace("~", "")
    completion = f"{before}\n```python\n{body}```\n{after}"
    assert extract_code(completion) == body


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=300))
def test_arbitrary_text_never_raises_and_gives_part_of_it(text):
    code = extract_code(text)
    assert code in text
