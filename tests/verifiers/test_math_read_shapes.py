"""Answer and gold shapes real models and datasets write, read as the answer they state.

Our own examples, in the styles of GSM8K, MATH and Chinese exam (Gaokao) solutions: answer
sentences inside ``<answer>`` tags, Chinese and other languages' answer markers, units with
superscripts and degree signs, prose multiple choice, LaTeX outside maths delimiters, number
words, full-width digits, plain-text and qualified golds, traces cut off mid-expression.
Each of them was misread before the rules of docs/verifiers.md ("What it reads") covered it.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers import math as math_verifier
from referee.verifiers.math.gold import gold_answer

WORK = "Each crate holds 12 oranges and the shop has 5 crates, so 12 \\times 5 = 60 oranges.\n\n"
ZH_WORK = "解：由题意，设所求为 x，列方程 3x + 4 = 10，解得 x = 2。\n"

# (completion, gold, status, rule that reads the answer)
SHAPES = [
    # A sentence inside <answer>: the number it states, not one of its qualifying phrases
    ("<think>31 and 37 are prime.</think>\n<answer>There are 2 primes between 30 and 40.</answer>", "2", "correct",
     "answer tag"),
    ("<think>24 - 9 = 15</think><answer>So Mia has 15 stickers left after giving 9 to her brother.</answer>", "15",
     "correct", "answer tag"),
    ("<think>...</think><answer>Lena packs 42 cookies in 6 bags.</answer>", "42", "correct", "answer tag"),
    ("<think>...</think><answer>There are 3 primes between 30 and 40.</answer>", "2", "wrong", "answer tag"),
    # Chinese answer markers, and plain LaTeX after them read whole
    ("【答案】3\n【解析】由题意得 x + 4 = 7，所以 x = 3，共有 5 种情况。", "3", "correct", "final answer"),
    ("【答案】B\n【解析】A 项错误，C 项错误，D 项错误。", "B", "correct", "final answer"),
    (ZH_WORK + "由余弦定理得边长。\n故答案为：2\\sqrt{3}", "2\\sqrt{3}", "correct", "final answer"),
    (ZH_WORK + "联立两直线方程求交点。\n答案是 (1,3)", "(1,3)", "correct", "final answer"),
    (ZH_WORK + "联立两直线方程求交点。\n答案是 (1,3)", "1.3", "wrong", "final answer"),
    ("解：设小明有 x 个苹果。\n答：小明有 15 个苹果，比小红多 3 个。", "15", "correct", "final answer"),
    (ZH_WORK + "故答案为 \\frac{1}{2}。", "\\frac{1}{2}", "correct", "final answer"),
    # Chinese and English list golds are lists: one element alone is not paid
    (ZH_WORK + "方程的根为 1 和 3。\n答案是 3", "1 和 3", "wrong", "final answer"),
    (ZH_WORK + "故答案为：1 和 3", "1 和 3", "correct", "final answer"),
    (ZH_WORK + "方程的两根分别为 \\boxed{1} 和 \\boxed{3}。", "1 和 3", "correct", "boxed"),
    ("The smaller root is \\boxed{1}, the larger root is \\boxed{3}.", "1 and 3", "correct", "boxed"),
    # Answer phrases in other languages
    ("Réponse : 42\n\nExplication : on a 6 sacs de 7 billes.", "42", "correct", "final answer"),
    ("Réponse : 42 pommes, soit 6 paquets de 7.", "42", "correct", "final answer"),
    ("Antwort: Es sind 42 Äpfel in 6 Kisten.", "42", "correct", "final answer"),
    ("Respuesta: 42 manzanas en 6 cajas.", "42", "correct", "final answer"),
    # Units with superscripts or a degree sign, and bold headings, are never the answer
    (WORK + "So the net primary productivity is 1200 kcal m⁻² yr⁻¹.", "1200", "correct", "last number"),
    (WORK + "**Answer:** 1200 kcal m⁻² yr⁻¹", "1200", "correct", "final answer"),
    (WORK + "**Answer:** 700°C", "700", "correct", "final answer"),
    (WORK + "The furnace must reach \\boxed{700 ^\\circ \\text{C}}.", "700", "correct", "boxed"),
    # Units raised to powers in a box (Minerva's physics answers): the number, never the unit's exponent
    (WORK + "\\boxed{15000 \\text{ kcal m}^{-2} \\text{yr}^{-1}}", "15000", "correct", "boxed"),
    (WORK + "\\boxed{6 \\times 10^{-3} \\text{ m/s}^2}", "0.006", "correct", "boxed"),
    (WORK + "\\boxed{6 \\times 10^{-3} \\text{ m/s²}}", "0.006", "correct", "boxed"),
    (WORK + "\\boxed{3 \\text{ m s}^{-1}}", "-1", "wrong", "boxed"),
    (WORK + "\\boxed{7 \\times 10^{-3} \\text{ m/s}^2}", "0.006", "wrong", "boxed"),
    (WORK + "\\boxed{3 \\times 10^{8} m/s}", "3e8", "correct", "boxed"),  # a bare unit after a power of ten
    (WORK + "\\boxed{5.89 \\times 10^{-7} \\text{ m}}", "5.89e-7", "correct", "boxed"),
    (WORK + "\\boxed{2 \\times 10^{3} x}", "2000", "wrong", "boxed"),  # a variable is no unit
    # A power in superscripts right after a number is a power; after a letter, a unit's
    (WORK + "The answer is 5².", "25", "correct", "final answer"),
    (WORK + "The answer is 5².", "5", "wrong", "final answer"),
    (WORK + "The answer is $3 \\times 10⁻²$.", "0.03", "correct", "final answer"),
    (WORK + "**Calculation**:\nThe oranges left are 60 - 36 = 24.", "24", "correct", "last number"),
    # LaTeX outside maths delimiters
    (WORK + "So each part is \\frac{2}{5} tons.", "\\frac{2}{5}", "correct", "math span"),
    (WORK + "Therefore, the side length is 2\\sqrt{3} cm.", "2\\sqrt{3}", "correct", "math span"),
    (WORK + "So each part is \\frac{3}{5} tons.", "\\frac{2}{5}", "wrong", "math span"),
    # Number words and full-width digits
    (WORK + "The answer is six.", "6", "correct", "final answer"),
    (WORK + "The answer is forty-two oranges.", "42", "correct", "final answer"),
    (WORK + "The answer is seven.", "6", "wrong", "final answer"),
    (WORK + "\\boxed{４２}", "42", "correct", "boxed"),
    ("４２", "42", "correct", "bare"),
    # A prose qualifier inside a box
    (WORK + "\\boxed{(a,1) \\text{ for any positive integer } a}", "(a,1)", "correct", "boxed"),
    (WORK + "\\boxed{x = 2 \\text{ where } x > 0}", "2", "correct", "boxed"),
    # Multiple choice stated in prose
    (WORK + "The answer is B.", "B", "correct", "final answer"),
    (WORK + "The answer is B.", "\\text{(B)}", "correct", "final answer"),
    (WORK + "I think the answer is C because the slope is negative.", "C", "correct", "final answer"),
    (WORK + "The answer is A.", "B", "wrong", "final answer"),
    (WORK + "The answer is B) 60.", "B", "correct", "final answer"),
    # A word or a phrase as the gold and as the answer
    (WORK + "The answer is Tuesday.", "Tuesday", "correct", "final answer"),
    (WORK + "\\boxed{\\text{the isosceles triangle}}", "isosceles triangle", "correct", "boxed"),
    (WORK + "\\boxed{\\text{right triangle}}", "isosceles triangle", "wrong", "boxed"),
    # Plain-text golds
    ("\\boxed{\\frac{\\pi}{2}}", "pi/2", "correct", "boxed"),
    ("\\boxed{14 - i}", "14.0 + -1.0i", "correct", "boxed"),
    ("\\boxed{14 + i}", "14.0 + -1.0i", "wrong", "boxed"),
    ("\\boxed{E_1, E_2}", "E_{1},E_{2}", "correct", "boxed"),
    ("\\boxed{E_2, E_3}", "E_{1},E_{2}", "wrong", "boxed"),
    ("\\boxed{-\\frac{3}{2}}", "-3./2", "correct", "boxed"),
    ("\\boxed{\\frac{N_1}{N}}", "\\frac{\\mathrm{N}_{1}}{\\mathrm{~N}}", "correct", "boxed"),
    # Qualifiers on golds stay qualifiers: a congruence wants its residue (or its class, with the same
    # modulus), a count of things is not paid for a count of other things
    ("\\boxed{3}", "x = 3 (mod 7)", "correct", "boxed"),
    ("\\boxed{x \\equiv 3 \\pmod{7}}", "x = 3 (mod 7)", "correct", "boxed"),
    ("\\boxed{x \\equiv 10 \\pmod{7}}", "x = 3 (mod 7)", "correct", "boxed"),
    ("\\boxed{3 \\pmod{5}}", "x = 3 (mod 7)", "wrong", "boxed"),
    ("\\boxed{7}", "x = 3 (mod 7)", "wrong", "boxed"),
    ("\\boxed{3}", "3 apples", "correct", "boxed"),
    ("So she picked \\boxed{3 \\text{ apples}}.", "3 apples", "correct", "boxed"),
    ("So she picked \\boxed{3 \\text{ pears}}.", "3 apples", "wrong", "boxed"),
    # An abbreviation's period in a remark after the answer does not end the answer's sentence
    ("So we get twelve.\nThe final answer is 12 (e.g. a dozen).", "12", "correct", "final answer"),
    ("So we get twelve.\nThe final answer is 12 (i.e. a dozen).", "12", "correct", "final answer"),
]


@pytest.mark.parametrize(("completion", "gold", "status", "source"), SHAPES)
def test_real_shapes_are_read_as_the_answer_they_state(completion, gold, status, source):
    verdict = math_verifier.verify(completion, gold)
    assert (verdict.status, verdict.details.get("source")) == (status, source), verdict


@pytest.mark.parametrize("completion", [
    WORK + "Then we add the 3 loose oranges: 60 + 3",
    WORK + "The share is \\frac{1}{2} + \\frac{1}{3} = \\frac{5",
    WORK + "Thus f(3) = 2(3",
    WORK + "So the answer should be 4\\sqrt{",
    WORK + "Now 60 + 3 = 63, and taking away the 7 bad ones gives 63 - 7",
    WORK + "The roots are x = \\frac{-4 \\pm 2}{2",
])
def test_a_plain_text_trace_cut_off_mid_expression_has_no_answer(completion):
    verdict = math_verifier.verify(completion, "56")
    assert verdict.status == "no_answer" and "cut off" in verdict.reason, verdict


@pytest.mark.parametrize("completion", [
    WORK + "So 60 + 3 = 63.",
    WORK + "The remainder is 0, since 54 = 6 \\times 9",
    WORK + "The roots are 1) and 2) as listed.",
    WORK + "So the solution set is (2, 63]",
])
def test_a_finished_expression_is_not_cut_off(completion):
    assert math_verifier.verify(completion, "63").status != "no_answer"


def test_a_box_then_a_later_answer_label_reads_the_label_and_holds_the_box_to_the_same_gold():
    completion = WORK + "So \\boxed{B}.\n\n**Answer: D**"
    for gold in ("B", "D"):
        verdict = math_verifier.verify(completion, gold)
        assert (verdict.status, verdict.extracted, verdict.details.get("source")) == ("wrong", "D", "final answer")
    assert math_verifier.verify(completion, "D").details["rule"] == "override"
    corrected = WORK + "So \\boxed{B}. Wait, I misread option B; it is the other one.\n\n**Answer: D**"
    assert math_verifier.verify(corrected, "D").correct
    restated = WORK + "So \\boxed{\\frac{1}{2}}.\n\nAnswer: 0.5"
    assert math_verifier.verify(restated, "0.5").correct


@pytest.mark.parametrize(("gold", "read"), [
    ("pi/2", "pi/2"), ("isosceles triangle", "isosceles triangle"), ("3 apples", "3 \\text{ apples}"),
    ("x = 3 (mod 7)", "x = 3 (mod 7)"), ("1 和 3", "1 和 3"), ("４２", "４２"),
])
def test_golds_keep_what_they_state(gold, read):
    assert gold_answer(gold) == read


_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def _in_words(number: int) -> str:
    hundreds, rest = divmod(number, 100)
    tens, units = divmod(rest, 10)
    words = f"{_UNITS[hundreds]} hundred" if hundreds else ""
    if rest or not hundreds:
        tail = _UNITS[rest] if rest < 20 else _TENS[tens] + (f"-{_UNITS[units]}" if units else "")
        words = f"{words} and {tail}" if words else tail
    return words


@given(st.integers(0, 999), st.sampled_from(["", " oranges", " in all"]))
@settings(max_examples=150, deadline=None)
def test_a_number_in_words_after_an_answer_phrase_is_read_exactly(number, tail):
    completion = WORK + f"The answer is {_in_words(number)}{tail}."
    verdict = math_verifier.verify(completion, str(number))
    assert verdict.correct, verdict
    assert math_verifier.verify(completion, str(number + 1)).status == "wrong"


@given(st.integers(0, 999), st.integers(0, 999), st.integers(0, 999),
       st.sampled_from(["between {a} and {b}", "after giving {a} to Ann", "in {a} boxes", "out of {a}"]))
@settings(max_examples=150, deadline=None)
def test_a_qualifying_phrase_in_an_answer_tag_never_replaces_the_answer(answer, a, b, phrase):
    completion = f"<think>...</think><answer>She has {answer} cards {phrase.format(a=a, b=b)}.</answer>"
    assert math_verifier.verify(completion, str(answer)).correct


@pytest.mark.parametrize("completion", [
    "答案是" * 50_000, "【答案】" * 30_000, "Réponse : " * 30_000, "\\frac{1}{" * 30_000, "1 + " * 100_000,
    "<answer>There are 2 between 3 and " * 10_000 + "</answer>", "**Calculation**:" * 30_000, "700°C " * 100_000,
    "The answer is six " * 30_000, "(" * 200_000, "m⁻² " * 100_000, "\\text{ for any } a" * 20_000,
])
def test_long_completions_in_the_new_shapes_give_a_verdict(completion):
    verdict = math_verifier.verify(completion, "5", timeout=2)
    assert verdict.status in ("no_answer", "wrong", "timeout")
