"""Finding the program in a completion, in the shapes models write."""

import subprocess
import sys

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
    ("oops(", "oops("),  # no fence, broken code: still the program (it fails as its own)
    ("```json\n{}\n```", ""),  # only other languages: no code
    ("", ""),
    # fences glued to the text around them (issue 12)
    (f"<answer>```python\n{CODE}```</answer>", CODE),
    (f"<answer>\n```python\n{CODE}```</answer>", CODE),
    (f"Solution:```python\n{CODE}```", CODE),
    (f"```python\n{CODE.rstrip()}```</answer>", CODE.rstrip()),
    ("```python\nprint('```')\n```", "print('```')\n"),  # a fence inside a line of code does not close
]

PROSE = ["I don't know how to solve this.", "The answer is 42.", "Let me think.\n\nWe need a loop over the list, "
         "for each element we add it.", "Yes", "", "   \n"]


@pytest.mark.parametrize("completion", PROSE)
def test_prose_holds_no_code(completion):
    assert extract_code(completion) == ""


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


def test_a_megabyte_of_fence_like_text_does_not_hang_extraction():
    # Each of these took hours before (backtracking over a run of backticks, or over a tag with
    # no newline after it); now all run in well under a second. The bound only catches a hang.
    script = (
        "from referee.verifiers.code.extract import extract_code\n"
        "N = 1_000_000\n"
        "for text in ['`' * N, '~' * N, '```' + 'word' * (N // 4), '```' + ' ' * (N // 2) + 'a' * (N // 2),\n"
        "             '`' * 1000 + '\\n' + ('`' * 999 + '\\n') * 1000, '```python\\n' + 'x = 1\\n' * (N // 6)]:\n"
        "    extract_code(text)\n"
        "print(extract_code('```python\\nprint(1)\\n```'))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout == "print(1)\n\n", done.stderr
