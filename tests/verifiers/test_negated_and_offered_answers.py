"""Answers a completion disowns or offers beside another are never paid; answers it only contrasts stay paid.

Shapes a reward's audit writes in the answer format a prompt asks for (a Minerva line, ``<final>``
tags, a label) and that models write: a final line that says its answer is *not* the gold, a tag or
label that opens on "not", two tagged values offered with "or", a last number offered beside
another. Each is checked with both verifiers, against a gold it states and one it does not.
"""

import pytest

from referee.verifiers import gsm8k
from referee.verifiers import math as maths

WORK = "She buys 8 packs of 9 pencils, so she has 8 * 9 = 72 pencils.\n"

REFUSED = [
    "Final Answer: The final answer is not 72. I hope it is correct.",
    "The answer is: not 72.",
    "<final>not 72</final>",
    "Result: not 72",
    "<final>73</final> or <final>72</final>",
    "So it is 73 or 72.",
    "It is either 73 or 72",
    '{"answer": "73"} or {"answer": "72"}',
]

PAID = [
    "The answer is 72, not 73.",
    "The answer is 72 (not 73).",
    "**Final Answer:** 72, not 70",
    "It is not 73 but 72.",
    "Final Answer: The final answer is $72$. I hope it is correct.",
    "<final>72</final>",
    "So it is 72 or 72.",
]


def _verdicts(completion: str, gold: int) -> dict[str, str]:
    return {"gsm8k": gsm8k.verify(completion, gold).status, "maths": maths.verify(completion, str(gold)).status}


@pytest.mark.parametrize("closing", REFUSED)
@pytest.mark.parametrize("work", ["", WORK])
def test_a_disowned_or_offered_answer_is_not_paid(work: str, closing: str) -> None:
    assert _verdicts(work + closing, 72) == {"gsm8k": "wrong", "maths": "wrong"}


@pytest.mark.parametrize("closing", PAID)
@pytest.mark.parametrize("work", ["", WORK])
def test_an_answer_it_only_contrasts_with_another_stays_paid(work: str, closing: str) -> None:
    assert _verdicts(work + closing, 72) == {"gsm8k": "correct", "maths": "correct"}
    assert _verdicts(work + closing, 70 if "73" in closing else 73) == {"gsm8k": "wrong", "maths": "wrong"}


def test_the_refusal_names_its_rule() -> None:
    assert gsm8k.verify("<final>not 72</final>", 72).details["check"] == "disowned"
    assert gsm8k.verify("So it is 73 or 72.", 72).details["check"] == "several answers"
    assert "disowned" in maths.verify("Final Answer: The final answer is not 72. I hope it is correct.", "72").reason


def test_an_answer_in_scientific_notation_is_read_whole() -> None:
    """``5.89 × 10⁻⁷ meters`` is one statement, not the number 10 (which it read before)."""
    verdict = maths.verify("So the answer is 5.89 × 10⁻⁷ meters.", "5.89e-7")
    assert verdict.extracted == "5.89 × 10⁻⁷ meters"
    assert maths.verify("The answer is 5.89 × 10⁻⁷.", "5.89e-7").status == "correct"


# Answer formats a prompt may ask for, the known ones and others: every one pays its right answer alone and
# nothing else (a wrong one, two offered with "or", two on consecutive lines, a negated one, one a phrase contradicts).
LAYOUTS = {
    "final tag": "<final>{x}</final>", "json": '{{"answer": "{x}"}}', "json number": '{{"answer": {x}}}',
    "ANSWER:": "ANSWER: {x}", "Result:": "Result: {x}", "command": "\\answer{{{x}}}", "double brackets": "[[{x}]]",
    "call": "ANS({x})", "arrow": "RESULT -> {x}", "#ANSWER:": "#ANSWER: {x}", "bold label": "**Answer:** {x}",
    "answer tag": "<answer>{x}</answer>", "box": "\\boxed{{{x}}}", "bold": "**{x}**", "####": "#### {x}",
    "Answer:": "Answer: {x}", "phrase": "The answer is {x}.",
}
SHAPES = {
    "right": ("{72}", True), "wrong": ("{73}", False), "offered with or": ("{73} or {72}", False),
    "two lines": ("{73}\n{72}", False), "negated": ("{not}", False), "contradicted": ("{72}\n\nThe answer is 73.", False),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_layout_pays_one_right_answer_and_nothing_else(layout: str, shape: str) -> None:
    written, paid = SHAPES[shape]
    write = LAYOUTS[layout].format
    closing = written.replace("{72}", write(x=72)).replace("{73}", write(x=73)).replace("{not}", write(x="not 72"))
    want = "correct" if paid else "wrong"
    assert _verdicts(WORK + "\n" + closing, 72) == {"gsm8k": want, "maths": want}, closing
