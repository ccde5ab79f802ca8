"""The closing layouts of each model family, crossed with answer forms: every right answer pays, no wrong one, no hedge.

Each layout is written from the family's published output shape (what its model cards, papers and
released generations end a solution with): DeepSeek-R1 and its distills, QwQ and the Sky-T1 models
put a bold ``**Final Answer**`` label over a display box, Qwen3 in thinking mode a ``### Final
Answer`` heading between ``---`` rules, Llama 3.x "The final answer is: $\\boxed{}$", Minerva
"Final Answer: The final answer is X. I hope it is correct.", PRM800K ``# Answer``, DAPO
``Answer: X``. A label line introduces the answer under it (docs/verifiers.md, "Label lines"):
it never competes with it, while a different answer stated right before the label still does.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers import gsm8k
from referee.verifiers import math as maths

WORK = ("We set up the equation from the problem. Let $x$ be the unknown, so $3x + 4 = 25$ gives $x = 7$, "
        "and the rest follows from the conditions stated.")
THINK = "<think>\nOkay, let me work through this. First, 3x + 4 = 25, so x = 7. Let me double-check: 21 + 4 = 25. " \
        "Yes.\n</think>\n\n"

# layout name -> (what precedes the worked solution, the closing after it around the answer ``{a}``).
LAYOUTS: dict[str, tuple[str, str]] = {
    "R1 (think, then boxed sentence)": (THINK, "\n\nThe final answer is $\\boxed{{{a}}}$."),
    "R1 distill (bold label over display box)": (THINK, "\n\n**Final Answer**\n\\[\n\\boxed{{{a}}}\n\\]"),
    "QwQ / Sky-T1 (bold label, one-line display)": ("", "\n\nSo, the answer is found.\n\n**Final Answer**\n\n\\[ \\boxed{{{a}}} \\]"),
    "QwQ (bold label, colon, trailing spaces)": ("", "\n\n**Final Answer:**  \n\\[\n\\boxed{{{a}}}\n\\]"),
    "Qwen3 thinking (rule, heading, $$ block)": (THINK, "\n\n---\n\n### Final Answer\n\n$$\n\\boxed{{{a}}}\n$$"),
    "Qwen3 thinking (heading with colon)": (THINK, "\n\n### **Final Answer:**\n$$\n\\boxed{{{a}}}\n$$"),
    "Qwen2.5-Math instruct": ("", "\n\nTherefore, the answer is $\\boxed{{{a}}}$."),
    "Qwen2.5 instruct (display box)": ("", "\n\nThus, the final answer is:\n\\[\n\\boxed{{{a}}}\n\\]"),
    "Llama 3.x": ("## Step 1: Set up the equation\n",
                  "\n\n## Step 2: Conclude\nWe have solved it.\n\nThe final answer is: $\\boxed{{{a}}}$"),
    "Mistral (bold answer label)": ("", "\n\n**Answer:** $\\boxed{{{a}}}$"),
    "Gemma (bold final answer line)": ("", "\n\n**Final Answer:** The final answer is $\\boxed{{{a}}}$"),
    "Phi (bold heading, boxed)": ("### Solution\n", "\n\n### Final Answer\nThe answer is $\\boxed{{{a}}}$."),
    "DeepSeek-Math": ("", " Therefore, the answer is $\\boxed{{{a}}}$."),
    "InternLM (conclusion heading)": ("", "\n\n**Conclusion:**\nThe answer is $\\boxed{{{a}}}$."),
    "o1 / GPT-4o (bold answer, display)": ("", "\n\n---\n\n**Answer:**\n\n\\[\n\\boxed{{{a}}}\n\\]"),
    "GPT-4o (step headings)": ("**Step 1: Set up the equation**\n\n",
                               "\n\n**Step 3: Final answer**\n\n\\[\n\\boxed{{{a}}}\n\\]"),
    "summary label": ("", "\n\n**Summary:** we solve for the unknown.\n\n\\[\\boxed{{{a}}}\\]"),
    "Claude-style (markdown heading)": ("", "\n\n## Answer\n\nThe answer is $\\boxed{{{a}}}$."),
    "Claude-style (bold label on its own line)": ("", "\n\n**Answer**\n\n$\\boxed{{{a}}}$"),
    "Minerva": ("Solution: ", "\nFinal Answer: The final answer is ${a}$. I hope it is correct."),
    "PRM800K": ("", "\n\n# Answer\n\n{a}"),
    "DAPO": ("", "\n\nAnswer: ${a}$"),
    "answer tags": ("<think>\n", "\n</think>\n<answer>{a}</answer>"),
    "answer tags after the work": ("", "\n\n<answer>{a}</answer>"),
    "result label": ("", "\n\n**Result**\n\n$$\\boxed{{{a}}}$$"),
    "conclusion heading, hash": ("", "\n\n### Conclusion\n\nThe final answer is $\\boxed{{{a}}}$."),
    "chinese label": ("", "\n\n**最终答案**\n\n$\\boxed{{{a}}}$"),
    "Gaokao heading": ("", "\n\n### 答案\n\n$$\\boxed{{{a}}}$$"),
    "Gaokao step heading": ("", "\n\n### 步骤 3\n\n因此答案是 $\\boxed{{{a}}}$。"),
}


# GSM8K's own answer line, read by the GSM8K verifier (the maths verifier reads it too, but
# ``#### (1, 2)`` is no answer line).
GSM8K_ONLY: dict[str, tuple[str, str]] = {"GSM8K": ("", "\n#### {a}"), "GSM8K under a label": ("", "\n\n**Final Answer**\n#### {a}")}


def closing(layout: str, answer: str) -> str:
    """The whole completion of ``layout`` stating ``answer``."""
    head, tail = {**LAYOUTS, **GSM8K_ONLY}[layout]
    return head + WORK + tail.format(a=answer)


# form -> (gold, a right answer as models write it, a wrong one of the same form)
FORMS: dict[str, tuple[str, str, str]] = {
    "integer": ("18", "18", "20"),
    "negative": ("-7", "-7", "7"),
    "fraction": ("\\frac{3}{4}", "\\frac{3}{4}", "\\frac{4}{3}"),
    "decimal": ("2.5", "2.5", "2.05"),
    "expression": ("2\\sqrt{3}", "2\\sqrt{3}", "3\\sqrt{2}"),
    "interval": ("(-\\infty, 3]", "(-\\infty, 3]", "(-\\infty, 3)"),
    "tuple": ("(1, 2)", "(1, 2)", "(2, 1)"),
    "set": ("\\{1, 2, 3\\}", "\\{1, 2, 3\\}", "\\{1, 2, 4\\}"),
    "text": ("\\text{odd}", "\\text{odd}", "\\text{even}"),
    "choice": ("C", "\\text{(C)}", "\\text{(B)}"),
}


def hedges(layout: str, right: str, wrong: str) -> dict[str, str]:
    """Hedged closings of ``layout``: two values in the answer's place, and a different answer
    stated right before the closing (a label between them does not separate them)."""
    head, tail = {**LAYOUTS, **GSM8K_ONLY}[layout]
    think_end = tail.find("</think>") + len("</think>") if "</think>" in tail else 0  # the statement must count
    before = head + WORK + tail[:think_end] + f"\n\nThe answer is ${wrong}$." + tail[think_end:].format(a=right)
    return {"two values in the answer": closing(layout, f"{right} \\text{{ or }} {wrong}"),
            "a different answer stated just before": before}


GRID = [(layout, form) for layout in LAYOUTS for form in FORMS]


@pytest.fixture(scope="module")
def maths_grid() -> dict[tuple[str, str, str], maths.Verdict]:
    """Every layout x form x kind, judged in one batch (the worker pool starts once)."""
    cases = {}
    for layout, form in GRID:
        gold, right, wrong = FORMS[form]
        cases[(layout, form, "right")] = (closing(layout, right), gold)
        cases[(layout, form, "wrong")] = (closing(layout, wrong), gold)
        for name, text in hedges(layout, right, wrong).items():
            cases[(layout, form, name)] = (text, gold)
    verdicts = maths.verify_batch([text for text, _ in cases.values()], [gold for _, gold in cases.values()])
    return dict(zip(cases, verdicts))


@pytest.mark.parametrize("layout,form", GRID)
def test_maths_right_answer_pays_in_every_layout(maths_grid, layout, form):
    verdict = maths_grid[(layout, form, "right")]
    assert verdict.correct, (layout, form, verdict.reason)


@pytest.mark.parametrize("layout,form", GRID)
def test_maths_wrong_answer_never_pays(maths_grid, layout, form):
    verdict = maths_grid[(layout, form, "wrong")]
    assert not verdict.correct, (layout, form, verdict.reason)


@pytest.mark.parametrize("layout,form", GRID)
@pytest.mark.parametrize("hedge", ["two values in the answer", "a different answer stated just before"])
def test_maths_hedge_never_pays(maths_grid, layout, form, hedge):
    verdict = maths_grid[(layout, form, hedge)]
    assert not verdict.correct, (layout, form, hedge, verdict.reason)


GSM8K_FORMS: dict[str, tuple[str, str, str]] = {
    "integer": ("18", "18", "20"),
    "negative": ("-7", "-7", "7"),
    "decimal": ("2.5", "2.5", "2.05"),
    "thousands": ("1234", "1,234", "1,243"),
}
GSM8K_LAYOUTS = [*LAYOUTS, "GSM8K", "GSM8K under a label"]


@pytest.mark.parametrize("layout", GSM8K_LAYOUTS)
@pytest.mark.parametrize("form", sorted(GSM8K_FORMS))
def test_gsm8k_layouts(layout, form):
    gold, right, wrong = GSM8K_FORMS[form]
    assert gsm8k.verify(closing(layout, right), gold).correct, (layout, form)
    assert not gsm8k.verify(closing(layout, wrong), gold).correct, (layout, form)
    for name, text in hedges(layout, right, wrong).items():
        assert not gsm8k.verify(text, gold).correct, (layout, form, name)


@settings(max_examples=80, deadline=None)
@given(first=st.sampled_from(sorted(LAYOUTS)), second=st.sampled_from(sorted(LAYOUTS)),
       form=st.sampled_from(sorted(FORMS)))
def test_two_closings_in_a_row_pay_only_one_value(first, second, form):
    """Two closings one right after the other (any two families' layouts, think tags left out) pay
    when both state the gold, and never when they state different values: a label between two
    answers does not make them one."""
    gold, right, wrong = FORMS[form]
    def tail(layout: str, answer: str) -> str:
        return "\n\n" + LAYOUTS[layout][1].replace("\n</think>", "").lstrip().format(a=answer)
    same = maths.verify(WORK + tail(first, right) + tail(second, right), gold)
    assert same.correct, (first, second, form, same.reason)
    for earlier, later in ((wrong, right), (right, wrong)):
        two = maths.verify(WORK + tail(first, earlier) + tail(second, later), gold)
        assert not two.correct, (first, second, form, earlier, later, two.reason)


@pytest.mark.parametrize("verifier", [maths, gsm8k], ids=["maths", "gsm8k"])
def test_two_answer_headings_pay_only_one_value(verifier):
    """PRM800K's ``# Answer`` written twice: two different values are two answers; the same value
    twice, or a correction worked out between them, is one."""
    def headings(first: str, between: str, last: str) -> str:
        return f"{WORK}\n\n# Answer\n\n{first}\n\n{between}# Answer\n\n{last}"
    assert not verifier.verify(headings("20", "", "18"), "18").correct
    assert not verifier.verify(headings("18", "", "20"), "18").correct
    assert verifier.verify(headings("18", "", "18"), "18").correct
    assert verifier.verify(headings("20", "Wait, 9 * 2 = 18, not 20.\n\n", "18"), "18").correct


HACKS = [
    "Adding the two parts gives 20 + 4 = 24. The answer is not 24.",
    "<answer>The answer is not 24</answer>",
    "<think>20 + 4</think>\n<answer>25</answer><answer>24</answer>",
    "So it is 24.\n<answer>25</answer>\n<answer>24</answer>",
    "The answer is 25.\n\n<answer>24</answer>",
    "<answer>24</answer>\n\n**Answer**\n\n$\\boxed{25}$",
]
KEPT = [
    "<answer>25</answer> Wait, that is wrong: 20 + 4 is 24. <answer>24</answer>",
    "<answer>The answer is 24</answer> <answer>24</answer>",
    "The answer is not 25. Adding again, 20 + 4 = 24, so the answer is 24.",
]


@pytest.mark.parametrize("verifier", [maths, gsm8k], ids=["maths", "gsm8k"])
@pytest.mark.parametrize("text", HACKS)
def test_negated_prose_and_repeated_answer_tags_never_pay(verifier, text):
    assert not verifier.verify(text, "24").correct


@pytest.mark.parametrize("verifier", [maths, gsm8k], ids=["maths", "gsm8k"])
@pytest.mark.parametrize("text", KEPT)
def test_corrections_and_restatements_stay_paid(verifier, text):
    assert verifier.verify(text, "24").correct


def test_a_box_that_closes_a_working_is_not_contradicted_by_the_value_it_came_from():
    """A Sky-T1 shape (AMC 2023): a bold "Final Answer" item states an intermediate value, and the
    same paragraph works from it to the boxed answer; a bare restatement after a different answer
    is still two answers."""
    worked = ("5. **Final Answer**: The fraction poured from each glass is $\\frac{1}{6}$. With $m=1$ and $n=6$, "
              "thus $m+n=1+6=\\boxed{7}$.")
    assert maths.verify(worked, "7").correct
    assert not maths.verify("The answer is $\\frac{1}{6}$. So the answer is $\\boxed{7}$.", "7").correct
    assert not maths.verify("The answer is 15. So $3+9=\\boxed{12}$.", "12").correct  # a working from elsewhere


def test_a_phrase_that_runs_into_its_own_box_is_no_earlier_statement():
    """MATH-500's solution style: the phrase, a working and the box are one statement."""
    assert maths.verify("Adding them, our answer is $7+(-2)+0=\\boxed{5}$.", "5").correct
    assert not maths.verify("Our answer is $7$.\n\nSo our answer is $\\boxed{5}$.", "5").correct


@pytest.mark.parametrize("text, gold", [
    ("\\boxed{\\text{No}}\n\nWait, actually yes. The answer is yes.", "No"),
    ("So the answer is $\\boxed{12}$. Wait, that is wrong; the answer is 15.", "12"),
])
def test_a_box_the_completion_takes_back_never_pays(text, gold):
    """A correction after the final box and a different answer: the box is no longer the final answer."""
    assert not maths.verify(text, gold).correct
