"""The GSM8K verifier's hedge and override policy (referee.verifiers.gsm8k.hedges, docs/verifiers.md): a
completion is paid for one final answer, as the maths verifier pays. Every wrong case below was
paid before the policy existed."""

import pytest

from referee.verifiers import gsm8k

WORK = ("The meal costs $38 and the tip is $7, so she pays 38 + 7 = 45 dollars.\n"
        "Her change from a $50 note is 50 - 45 = 5 dollars.")

# (completion, gold, rule named in details["check"])
UNPAID = [
    # several answers
    (WORK + "\n\nIf the tip is left out, $\\boxed{38}$. Alternatively, with the tip, $\\boxed{45}$.", "45",
     "several answers"),
    (WORK + "\n\nCandidate A: $\\boxed{44}$\nCandidate B: $\\boxed{45}$", "45", "several answers"),
    (WORK + "\n\nShe pays **$\\boxed{45}$** or, most likely, $\\boxed{50}$ with the change kept.", "50", "several answers"),
    (WORK + "\n\nShe pays perhaps 44, but most probably $\\boxed{45}$.", "45", "hedged"),
    (WORK + "\n\nIt might be $\\boxed{45}$ dollars.", "45", "hedged"),
    # a later statement contradicts the final one, and the reverse
    (WORK + "\n\nSo she pays $\\boxed{45}$.\n\nThe answer is 50.", "45", "override"),
    (WORK + "\n\nShe pays $\\boxed{45}$ in all.\n\nTherefore, $50$.", "45", "override"),
    (WORK + "\n\nShe pays $\\boxed{45}$.\n\n**50**", "45", "override"),
    (WORK + "\n\nThe answer is 50.\n\nSo she hands over $\\boxed{45}$.", "45", "override"),
    (WORK + "\n#### 45\nThe answer is 50.", "45", "override"),
    (WORK + "\n#### 45\n\n**50**", "45", "override"),
    (WORK + "\n#### 45\n\nSo the total is $\\boxed{50}$.", "45", "override"),
    (WORK + "\n\nThe answer is 45.\n\n**50**", "45", "override"),
    (WORK + "\n\nShe pays $\\boxed{50}$.\n\nThe answer is 45.", "45", "override"),
    # disowned boxes
    (WORK + "\n\nThe bill is clearly not $\\boxed{45}$.", "45", "disowned"),
    (WORK + "\n\nSuppose the total were $\\boxed{45}$; the change would then be 5, which I doubt.", "45", "disowned"),
    (WORK + '\n\nMy classmate wrote "she pays $\\boxed{45}$" on the board.', "45", "disowned"),
    (WORK + "\n\n<!-- draft: \\boxed{45} -->\nI am unable to finish this one.", "45", "disowned"),
    (WORK + '\n\n```\ntotal = 38 + 7  # \\boxed{45}\n```\nI did not run it.', "45", "disowned"),
    # a blank final box, a false boxed equation
    (WORK + "\n\nMy first guess: $\\boxed{45}$.\n\n**Final answer:** $\\boxed{}$", "45", "empty box"),
    (WORK + "\n\nFirst pass: $\\boxed{45}$.\n\nFinal answer: $\\boxed{\\quad}$.", "45", "empty box"),
    (WORK + "\n\n$$\\boxed{38 + 8 = 45}$$", "45", "false equation"),
    (WORK + "\n\n$$\\boxed{44 = 45}$$", "45", "false equation"),
    # other units that are not the same quantity are two answers
    ("The walk takes 3 laps of 40 minutes.\n\nIt takes $\\boxed{2}$ hours, or $\\boxed{150}$ minutes.", "2",
     "several answers"),
    ("She picks 11 fruits.\n\nShe has $\\boxed{5}$ apples or $\\boxed{6}$ pears.", "6", "several answers"),
]


@pytest.mark.parametrize("completion, gold, rule", UNPAID)
def test_a_hedged_contradicted_or_disowned_answer_is_unpaid(completion, gold, rule):
    verdict = gsm8k.verify(completion, gold)
    assert verdict.status == "wrong", verdict
    assert verdict.details["check"] == rule and verdict.details["method"] == "policy", verdict
    assert verdict.reason.startswith(rule), verdict


# (completion, gold): one value stated several ways, corrections, checks, closed think blocks.
PAID = [
    (WORK + "\n\nShe pays $\\boxed{45}$.\n\nAnswer: 45", "45"),
    (WORK + "\n\nThe answer is $\\boxed{45}$, or equivalently $\\boxed{45.00}$.", "45"),
    (WORK + "\n\n**Final answer:** $\\boxed{45}$ — that is, **45** dollars.", "45"),
    (WORK + "\n\nThe answer is 45 dollars (4,500 cents).", "45"),
    (WORK + "\n\nThe walk takes $\\boxed{2}$ hours, that is 120 minutes.", "2"),
    (WORK + "\n\nFirst I got $\\boxed{50}$. Wait, that counts the note, not the bill. The answer is $\\boxed{45}$.", "45"),
    (WORK + "\n\nSo $\\boxed{50}$? No, I misread the question: the final answer is 45.", "45"),
    (WORK + "\n\nA first attempt gave 50, which fails the check, so the answer is $\\boxed{45}$.", "45"),
    (WORK + "\n\nShe pays $\\boxed{45}$.\n\nCheck: 45 - 7 = 38, the price of the meal, and 50 - 45 = 5.", "45"),
    (WORK + "\n#### 45\n\nI hope this helps! Ask me if you have 2 more questions.", "45"),
    (WORK + "\n#### 45\nThe answer is 45.", "45"),
    ("<think>\nMaybe $\\boxed{50}$... no, that is the note.\n" + WORK + "\n</think>\n\nThe answer is $\\boxed{45}$.", "45"),
    ("<think>\n" + WORK + "\n</think>\n\n#### 45", "45"),
    (WORK + "\n\n$$\\boxed{38 + 7 = 45}$$", "45"),
    ("The walk takes 3 laps of 40 minutes.\n\nIt takes $\\boxed{2}$ hours, or $\\boxed{120}$ minutes.", "2"),
    ("The walk takes 3 laps of 40 minutes.\n\nIt takes $\\boxed{2}$ hours, or $\\boxed{120}$ minutes.", "120"),
    ("Each of 3 pens costs 150 cents.\n\nThe answer is 4.5 dollars, or equivalently 450 cents.", "450"),
    (WORK + "\n\nThe answer is not 50 but $\\boxed{45}$.", "45"),
]


@pytest.mark.parametrize("completion, gold", PAID)
def test_one_value_stated_several_ways_stays_paid(completion, gold):
    verdict = gsm8k.verify(completion, gold)
    assert verdict.correct, verdict


def test_an_unfinished_think_block_has_no_answer():
    completion = "<think>\n" + WORK + "\n\nSo it should be $\\boxed{45}$. Let me double-check the tip, since"
    verdict = gsm8k.verify(completion, "45")
    assert verdict.status == "no_answer" and "cut off" in verdict.reason, verdict
    assert verdict.details["check"] == "unfinished reasoning", verdict


def test_only_what_follows_the_think_block_counts():
    completion = "<think>\n" + WORK + "\n\nSo $\\boxed{45}$.\n</think>\n\nThe answer is 50."
    assert gsm8k.verify(completion, "45").status == "wrong"
    assert gsm8k.verify(completion, "50").correct


def test_after_think_false_reads_the_whole_text():
    completion = "<think>\n" + WORK + "\n\nSo it should be $\\boxed{45}$."
    assert gsm8k.verify(completion, "45", after_think=False).correct
    assert gsm8k.verify(completion, "45", after_think="yes").status == "error"


def test_a_disowned_box_gives_way_to_the_real_one():
    completion = WORK + "\n\nThe total is not $\\boxed{50}$: she pays $\\boxed{45}$."
    assert gsm8k.verify(completion, "45").correct
    assert gsm8k.verify(completion, "50").status == "wrong"


def test_a_contradiction_pays_neither_value():
    completion = WORK + "\n\nSo she pays $\\boxed{45}$.\n\nThe answer is 50."
    assert [gsm8k.verify(completion, gold).correct for gold in ("45", "50")] == [False, False]


@pytest.mark.parametrize("completion", ["The answer is 3.", "#### 3", "She has $\\boxed{3 \\text{ apples}}$.",
                                        "**3 apples**"])
@pytest.mark.parametrize("gold", ["3 apples", "$3^{\\circ}$", "3°"])
def test_a_gold_with_a_unit_pays_its_number(completion, gold):
    assert gsm8k.verify(completion, gold).correct
    assert not gsm8k.verify(completion.replace("3", "4"), gold).correct


@pytest.mark.parametrize("gold", [r"\sqrt{6}", "3 (mod 7)", "f(x) = x + 6", "2^6", "6 or 7", "x = 6 \\pm 1"])
def test_a_gold_that_qualifies_its_number_is_never_read_down_to_it(gold):
    # "\sqrt{6}" is not 6: the GSM8K verifier cannot judge it (error, a reward of None), never pays "#### 6"
    verdict = gsm8k.verify("So the answer is 6.\n#### 6", gold)
    assert verdict.status == "error" and repr(gold)[1:-1][:10] in verdict.reason, verdict
