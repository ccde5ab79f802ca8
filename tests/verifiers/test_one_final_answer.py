"""One final answer is paid, two different ones never are, for the maths and the GSM8K verifiers.

Property: take a completion a verifier pays (GSM8K-style work, then the gold stated the way
models state it: a box, "The answer is", a ``####`` line, bold, Minerva's final line), add a
second final answer with a different value in any of those forms, after the first or before
it, with no correction between: the completion is no longer paid.

Both verifiers hold it for every pair of forms, in both orders, on either join.
"""

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from referee.verifiers import gsm8k
from referee.verifiers import math as maths

WORK = (
    "She buys {a} packs of {b} pencils, so she has {a} * {b} = {ab} pencils.\n"
    "She gives away {c} of them, which leaves {ab} - {c} = {rest} pencils.",
    "The train covers {a} miles in the first hour and {b} miles in the second.\n"
    "In total it covers {a} + {b} = {sum} miles, and {c} more tomorrow.",
    "Step 1: {a} boxes hold {b} eggs each, {a} x {b} = {ab} eggs.\n\nStep 2: {c} eggs break.",
)

FORMS = {
    "box": "So the answer is $\\boxed{{{x}}}$.",
    "display box": "$$\\boxed{{{x}}}$$",
    "box with units": "The total is $\\boxed{{{x}}}$ pencils.",
    "answer phrase": "The answer is {x}.",
    "answer colon": "Answer: {x}",
    "final answer": "Final Answer: The final answer is ${x}$. I hope it is correct.",
    "####": "#### {x}",
    "bold": "**{x}**",
    "bold answer": "**Answer:** {x}",
}
JOINS = ("\n\n", "\n")


@st.composite
def completions_with_two_answers(draw, firsts=tuple(FORMS), seconds=tuple(FORMS), before=True):
    a, b, c = (draw(st.integers(2, 60)) for _ in range(3))
    work = draw(st.sampled_from(WORK)).format(a=a, b=b, c=c, ab=a * b, rest=a * b - c, sum=a + b)
    gold = draw(st.integers(0, 5000))
    other = draw(st.integers(0, 5000).filter(lambda value: value != gold))
    first, second = draw(st.sampled_from(firsts)), draw(st.sampled_from(seconds))
    join = draw(st.sampled_from(JOINS))
    stated, offered = FORMS[first].format(x=gold), FORMS[second].format(x=other)
    paid = f"{work}\n\n{stated}"
    if not before or draw(st.booleans()):
        hedged = f"{paid}{join}{offered}"
    else:
        hedged = f"{work}\n\n{offered}{join}{stated}"
    return paid, hedged, str(gold)


@settings(max_examples=400, deadline=None)
@given(case=completions_with_two_answers())
def test_gsm8k_a_second_different_final_answer_makes_a_paid_completion_unpaid(case):
    paid, hedged, gold = case
    assume(gsm8k.verify(paid, gold).correct)
    assert not gsm8k.verify(hedged, gold).correct, hedged


@settings(max_examples=400, deadline=None)
@given(case=completions_with_two_answers())
def test_maths_a_second_different_final_answer_makes_a_paid_completion_unpaid(case):
    paid, hedged, gold = case
    one, two = (verdict.correct for verdict in maths.verify_batch([paid, hedged], [gold, gold]))
    assume(one)
    assert not two, hedged


@pytest.mark.parametrize("first", list(FORMS))
@pytest.mark.parametrize("second", list(FORMS))
def test_every_pair_of_forms_in_both_orders(first, second):
    """The property's every case on one piece of work, for both verifiers: the paid completion is
    paid (a test of the reading), and the second answer after it or before it unpays it."""
    work = WORK[0].format(a=3, b=12, c=5, ab=36, rest=31, sum=15)
    stated, offered = FORMS[first].format(x=31), FORMS[second].format(x=47)
    paid = f"{work}\n\n{stated}"
    hedged = [f"{paid}{join}{offered}" for join in JOINS] + [f"{work}\n\n{offered}{join}{stated}" for join in JOINS]
    maths_verdicts = maths.verify_batch([paid, *hedged], ["31"] * 5)
    assert maths_verdicts[0].correct and gsm8k.verify(paid, "31").correct, paid
    assert [v.correct for v in maths_verdicts[1:]] == [False] * 4, [(h, v.reason) for h, v in zip(hedged, maths_verdicts[1:])]
    assert [gsm8k.verify(text, "31").correct for text in hedged] == [False] * 4, hedged
