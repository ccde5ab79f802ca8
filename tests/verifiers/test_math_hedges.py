"""The hedge and override policy (referee.verifiers.math.hedges, docs/verifiers.md): a completion is
paid for one final answer. Every wrong case below was paid before the policy existed."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers import math as maths

WORK = "Each box holds 4 apples and there are 3 boxes, so 4 * 3 = 12 apples."

# (completion, gold, rule named in details["rule"])
UNPAID = [
    # several answers
    (WORK + "\n\nSo the answer is $\\boxed{15}$. Alternatively, reading it differently, the answer is $\\boxed{12}$.", "12",
     "several answers"),
    (WORK + "\n\nThe answer is $\\boxed{12}$.\n\nAlternatively, the answer could be $\\boxed{14}$.", "14", "several answers"),
    (WORK + "\n\nCandidate 1: $\\boxed{13}$\nCandidate 2: $\\boxed{12}$", "12", "several answers"),
    (WORK + "\n\nFinal answer: $\\boxed{13} / \\boxed{12}$", "12", "several answers"),
    (WORK + "\n\nThe answer is maybe 13, or probably $\\boxed{12}$.", "12", "hedged"),
    # the line of an earlier box ranks it, however far the later one stands
    (WORK + "\n\nMaybe $\\boxed{13}$.\n\nLet me look at the boxes and the apples in them once more, slowly.\n\n$\\boxed{12}$",
     "12", "several answers"),
    # a later statement contradicts the box, and the reverse
    (WORK + "\n\nSo the answer is $\\boxed{12}$.\n\nThe answer is $15$.", "12", "override"),
    (WORK + "\n\n$$\\boxed{12}$$\n\nTherefore, $15$.", "12", "override"),
    (WORK + "\n\nWe get $\\boxed{12}$.\n\nAnswer: 15", "12", "override"),
    (WORK + "\n\nThis gives $\\boxed{12}$.\n\n**15**", "12", "override"),
    (WORK + "\n\nThe answer is 15.\n\nHence $\\boxed{12}$.", "12", "override"),
    # disowned boxes
    (WORK + "\n\nNote that the answer is not $\\boxed{12}$.", "12", "disowned"),
    (WORK + "\n\nIf the answer were $\\boxed{12}$, the check would pass, but it does not.", "12", "disowned"),
    (WORK + '\n\nThe textbook claims "the answer is $\\boxed{12}$", but I cannot confirm it.', "12", "disowned"),
    (WORK + "\n\n<!-- final: $\\boxed{12}$ -->\nI could not finish.", "12", "disowned"),
    (WORK + '\n\n```python\nprint(r"\\boxed{12}")\n```', "12", "disowned"),
    (WORK + "\n\nAn earlier guess was $\\boxed{12}$.\n\nFinal answer: $\\boxed{}$", "12", "empty box"),
    # a false boxed equation
    (WORK + "\n\n$$\\boxed{13 = 12}$$", "12", "false equation"),
]


@pytest.mark.parametrize("completion, gold, rule", UNPAID)
def test_a_hedged_contradicted_or_disowned_answer_is_unpaid(completion, gold, rule):
    verdict = maths.verify(completion, gold)
    assert verdict.status == "wrong", verdict
    assert verdict.details["rule"] == rule and verdict.reason.startswith(rule), verdict


PAID = [
    (WORK + "\n\nThe answer is $\\boxed{12}$.\n\nAnswer: 12", "12"),  # restated
    (WORK + "\n\nThe answer is $\\boxed{\\frac{1}{2}}$, or equivalently $\\boxed{0.5}$.", "0.5"),
    (WORK + "\n\nSo $\\boxed{\\frac12}$.\n\nAnswer: 0.5", "\\frac{1}{2}"),  # one value, two forms
    (WORK + "\n\nA first attempt gave 13, which fails the check, so the answer is $\\boxed{12}$.", "12"),
    (WORK + "\n\nI first wrote $\\boxed{13}$, but that is a mistake: the answer is $\\boxed{12}$.", "12"),  # corrected
    (WORK + "\n\n$$\\boxed{12}$$\n\nCheck: substituting back, 12 / 3 = 4 apples per box.", "12"),
    (WORK + "\n\n$$\\boxed{4 \\times 3 = 12}$$", "12"),  # a true equation
    (WORK + "\n\nThus the answer is $\\boxed{12}$, which is 50\\% more likely than 8.", "12"),
    ("Think of the roots: $\\boxed{2}$ and $\\boxed{5}$.", "2, 5"),  # a gold of several answers
    # a disowned or empty box beside a real one: the real one is the answer
    (WORK + "\n\nThe answer is not $\\boxed{13}$.\n\nThe answer is $\\boxed{12}$.", "12"),
    (WORK + "\n\n<!-- draft: \\boxed{13} -->\nSo $\\boxed{12}$.", "12"),
    (WORK + "\n\n```\nprint(4 * 3)\n```\nOutput: 12, so the answer is $\\boxed{12}$.", "12"),
    (WORK + "\n\n$\\boxed{}$ is where the answer goes: $\\boxed{12}$.", "12"),
    # answers to earlier subproblems: a ranking word between the boxes belongs to neither (Sky-T1, Minerva)
    ("**Subproblem 1.** The universe is about 13.8 Gyr old, nearest power of ten:\n\n\\[ \\boxed{10} \\text{ Gyr} \\]\n\n"
     "**Subproblem 2.** Estimates vary. Alternatively, some go up to 4 * 10^11 stars.\n\nSo it is 1 * 10^11.\n\n"
     "**Final Answer**\n\n\\[ \\boxed{1 \\times 10^{11}} \\]", "1e11"),
    # a unit after a power of ten, in a statement before the box
    (WORK + "\n\nTherefore, the final answer is 5.89 × 10⁻⁷ m.\n\n**Final Answer**\n\n\\[ \\boxed{5.89 \\times 10^{-7}} \\]",
     "5.89e-7"),
]


@pytest.mark.parametrize("completion, gold", PAID)
def test_one_answer_stated_once_or_restated_stays_paid(completion, gold):
    verdict = maths.verify(completion, gold)
    assert verdict.correct, verdict


# ---------------------------------------------------------------------------------------------
# Reasoning blocks


def test_an_unclosed_think_block_has_no_answer_by_default():
    verdict = maths.verify("<think>\n" + WORK + "\n\nSo it should be $\\boxed{12}$. Let me double-check, since", "12")
    assert verdict.status == "no_answer" and "cut off" in verdict.reason


def test_only_what_follows_a_closed_think_block_counts_by_default():
    assert maths.verify("<think>\n" + WORK + " So $\\boxed{12}$.\n</think>\n\nThe answer is 15.", "12").status == "wrong"
    assert maths.verify("<think>\nMaybe $\\boxed{15}$... no.\n</think>\n\n$\\boxed{12}$", "12").correct
    assert maths.verify("Okay, 4 * 3 = 12.\n</think>\n\nThe answer is $\\boxed{12}$.", "12").correct  # prefilled <think>


def test_after_think_false_keeps_reading_the_whole_completion():
    completion = "<think>\n" + WORK + " So $\\boxed{12}$.\n</think>\n\nI am done."
    assert maths.verify(completion, "12").status == "no_answer"
    assert maths.verify(completion, "12", after_think=False).correct


# ---------------------------------------------------------------------------------------------
# A second, different final answer unpays a paid completion

ENDINGS = [
    "The answer is $\\boxed{{{g}}}$.",
    "Therefore, the total is $\\boxed{{{g}}}$ apples.",
    "$$\\boxed{{{g}}}$$",
    "故答案为：{g}",
    "Réponse : {g}",
]
SECOND = [
    "\n\nAlternatively, the answer could be $\\boxed{{{w}}}$.",
    "\n\nThe answer is ${w}$.",
    "\n\nAnswer: {w}",
    "\n\n**{w}**",
    " Otherwise it is $\\boxed{{{w}}}$.",
    "\n\n**Answer: {w}**",
    "\n\n答案是 {w}",
]


@settings(max_examples=60, deadline=None)
@given(gold=st.integers(0, 10**6), shift=st.integers(1, 999), ending=st.sampled_from(ENDINGS),
       second=st.sampled_from(SECOND))
def test_adding_a_second_different_final_answer_makes_a_paid_completion_unpaid(gold, shift, ending, second):
    paid = WORK + "\n\n" + ending.format(g=gold)
    assert maths.verify(paid, str(gold)).correct
    hedged = paid + second.format(w=gold + shift)
    verdict = maths.verify(hedged, str(gold))
    assert not verdict.correct, (hedged, verdict)
