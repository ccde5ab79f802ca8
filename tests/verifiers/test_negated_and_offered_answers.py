"""Answers a completion disowns or offers beside another are never paid; answers it only contrasts stay paid.

Shapes a reward's audit writes in the answer format a prompt asks for (a Minerva line, ``<final>``
tags, a label) and that models write: a final line that says its answer is *not* the gold, a tag or
label that opens on "not", two tagged values offered with "or", a last number offered beside
another. Each is checked with both verifiers, against a gold it states and one it does not.
"""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.verifiers import gsm8k
from referee.verifiers import math as maths
from referee.verifiers.text import hedging
from referee.verifiers.text.hedging import offered_after

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


def _assert_refused_whichever_is_the_gold(closing: str) -> None:
    for gold in (72, 73):
        assert _verdicts(WORK + closing, gold) == {"gsm8k": "wrong", "maths": "wrong"}, (closing, gold)


# A number offered as another answer right after the one stated: a hedge, refused whichever of the two is the gold.
OFFERED_AFTER = [
    "So \\boxed{72}, or 73.",
    "So \\boxed{72}? Or 73.",
    "So \\boxed{72} or 73",
    "The answer is 72. Or maybe 73.",
    "\\boxed{72}\n\nHmm, or is it 73?",
    "The final answer is 72.\n\nBut it could also be 73.",
    "**Final Answer**\n\\[\n\\boxed{72}\n\\]\n\nOr possibly 73.",
    "So \\boxed{72} pencils, unless it is 73.",
]
# The GSM8K verifier's other statements (the maths verifier reads the last number of these)
OFFERED_AFTER_GSM8K = ["#### 72\nOr 73.", "The answer is 72 (alternatively 73).", "The answer is 72.\nAlternatively, 73.",
                       "**72**, or 73"]
# Restatements of the one answer, and numbers after it that offer no answer: paid
NOT_OFFERED = [
    "So \\boxed{72}, or 72.0.",
    "So \\boxed{72}. Check: 8 * 9 = 72, or 9 * 8 = 72.",
    "So \\boxed{72}. Or 8 * 9 + 0.",
    "The answer is 72.\n\nAlternatively, count 9 pencils in each of the 8 packs.",
    "So \\boxed{72}. Possibly 3 more packs next week.",
    "So \\boxed{72} pencils, or 6 dozen.",
]


@pytest.mark.parametrize("closing", OFFERED_AFTER)
def test_a_number_offered_after_the_answer_unpays_it(closing: str) -> None:
    _assert_refused_whichever_is_the_gold(closing)
    assert gsm8k.verify(WORK + closing, 72).details["check"] == "several answers"
    assert maths.verify(WORK + closing, "72").details["rule"] == "several answers"


@pytest.mark.parametrize("closing", OFFERED_AFTER_GSM8K)
def test_a_number_offered_after_any_statement_unpays_it_in_gsm8k(closing: str) -> None:
    assert [gsm8k.verify(WORK + closing, gold).status for gold in (72, 73)] == ["wrong", "wrong"]


def test_one_quantity_in_two_units_or_a_rounding_of_it_is_one_answer() -> None:
    assert gsm8k.verify(r"It takes \boxed{2} hours, or 120 minutes.", 2).status == "correct"
    assert gsm8k.verify(r"It takes \boxed{2} hours, or 150 minutes.", 2).status == "wrong"
    assert maths.verify(r"So \boxed{72.4}, or 72.", "72.4").status == "correct"
    assert maths.verify(r"So \boxed{\sqrt{2}}, or 1.41.", r"\sqrt{2}").status == "correct"
    assert maths.verify(r"So \boxed{0.1476}, or 14.76\%.", "0.1476").status == "correct"


@given(st.integers(-10**6, 10**6), st.integers(-10**6, 10**6), st.sampled_from([", or ", "? Or ", ". Or maybe ", " (or ", ", or possibly "]),
       st.sampled_from([".", "", "?", ")"]))
def test_offered_after_finds_a_different_number_and_never_the_same(value: int, other: int, cue: str, end: str) -> None:
    text = f"So \\boxed{{{value}}}{cue}{other}{end}"
    found = offered_after(text, text.index("}") + 1, Fraction(value))
    assert (found is not None) == (other != value)
    if found is not None:
        assert int(found.group("value")) == other
    assert offered_after(f"So \\boxed{{{value}}}{cue}{other} + 1{end}", text.index("}") + 1, Fraction(value)) is None


# An answer offered as a possibility rather than stated: a hedge word in its sentence, or a cue right before it.
HEDGED_STATEMENTS = [
    "The answer is probably 72.",
    "The answer is maybe 72.",
    "Answer: perhaps 72",
    "I think the answer is 73, but it could be 72.",
    "I think the answer is 72, but it could be 73.",
    "So it's 73 — or 72.",
]
# A hedge word outside the answer's sentence, a number that is not offered: paid
STATED = [
    "The answer is 72. Maybe check it with a calculator.",
    "The answer is 72, which is more than 70.",
    "So it is 72 or 72.",
    "So she has 144/2, or 72.",
    "So she has 72.0, or 72.",
    "The answer is 72 pencils, or 72.",
    "The answer is 72, or possibly 72.0 if rounded.",
    "The answer is 72, maybe more next week.",
    "So she has 72 pencils. (Or, the count could be 72.)",
]


@pytest.mark.parametrize("closing", HEDGED_STATEMENTS)
def test_an_answer_offered_as_a_possibility_is_not_paid(closing: str) -> None:
    _assert_refused_whichever_is_the_gold(closing)


@pytest.mark.parametrize("closing", NOT_OFFERED + STATED)
def test_a_restatement_or_a_number_beside_a_hedge_word_stays_paid(closing: str) -> None:
    assert _verdicts(WORK + closing, 72) == {"gsm8k": "correct", "maths": "correct"}


def test_a_value_restated_in_another_form_stays_paid() -> None:
    assert _verdicts("It takes 2 hours, or 120 minutes.", 120) == {"gsm8k": "correct", "maths": "correct"}
    assert _verdicts("She makes $18 a day, or 1800 cents.", 1800) == {"gsm8k": "correct", "maths": "correct"}
    assert _verdicts("She makes $\\boxed{18}$, or 1800 cents.", 18) == {"gsm8k": "correct", "maths": "correct"}
    assert gsm8k.verify("#### 18\nOr 1800 cents.", 18).status == "correct"
    assert _verdicts("It costs 25 dollars, or 24 dollars.", 24) == {"gsm8k": "wrong", "maths": "wrong"}
    assert maths.verify("The share is $\\frac{1}{2}$, or 0.5.", "1/2").status == "correct"
    assert maths.verify("The share is $\\frac{1}{2}$, or 0.6.", "0.6").details["rule"] == "hedged"


def test_a_hedged_statement_names_its_rule() -> None:
    assert gsm8k.verify("The answer is probably 72.", 72).details["rule"] == "hedged"
    assert maths.verify("I think the answer is 73, but it could be 72.", "72").details["rule"] == "hedged"
    assert "could be" in maths.verify("I think the answer is 73, but it could be 72.", "72").reason


_PIECES = ["or", "Or", "OR", " ", "          ", "\t", "\n", ", ", ",,,", ": ", "could", "also", "be", "it", "is", "it's",
           "unless", "alternatively", "maybe", "perhaps", "possibly", "probably", "even", "$", "\\(", "\\boxed{", "**",
           "for", "more", "72", "7", "the", "answer", ".", "poſſibly"]


@given(st.lists(st.sampled_from(_PIECES), max_size=16))
def test_the_quick_cue_test_never_hides_a_cue(pieces: list[str]) -> None:
    """The few string tests before an offering cue's search pass wherever the search finds one."""
    text = "".join(pieces) + "73"
    position = len(text) - 2
    lo = max(0, position - 48)
    if hedging._OFFERING_CUE_RE.search(text, lo, position) is not None:
        assert hedging._ends_on_cue(text, lo, position)


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
