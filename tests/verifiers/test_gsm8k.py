import re
import sys
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from referee.verifiers import Verdict, gsm8k
from referee.verifiers.math_answers import UnusableGold
from referee.verifiers.numeric import format_number

GOLD_SOLUTION = (
    "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\n"
    "She makes 9 * 2 = $<<9*2=18>>18 every day at the farmer's market.\n#### 18"
)

# (completion, gold, expected status, expected source) in shapes real models produce.
GOLDEN = [
    ("Janet has 16 - 3 - 4 = 9 eggs.\n9 * 2 = 18\n#### 18", GOLD_SOLUTION, "correct", "####"),
    ("Total: 1000 cookies.\n#### 1,000", "1000", "correct", "####"),
    ("She spends 18 dollars.\n#### $18", "18", "correct", "####"),
    ("#### 18.", "18", "correct", "####"),
    ("#### 18.00", "18", "correct", "####"),
    ("The temperature drops by 3.\n#### -3", "-3", "correct", "####"),
    ("#### **18**", "18", "correct", "####"),
    ("#### \\boxed{18}", "18", "correct", "####"),
    ("So the total cost is 1234 dollars. The answer is $1,234.", "1234", "correct", "answer phrase"),
    ("She makes 9 * 2 = 18 dollars a day, so the answer is $\\boxed{18}$.", "18", "correct", "boxed"),
    ("Step 1: 16 - 3 - 4 = 9\nStep 2: 9 * 2 = 18\n\n**18**", "18", "correct", "bold"),
    ("She makes 9 * 2 = 18 dollars", "18", "correct", "last number"),
    ("The discount is 50%", "50", "correct", "last number"),
    ("The answer is 18.\n\nNote: she eats 3 eggs and bakes with 4, leaving 9 to sell at $2.",
     "18", "correct", "answer phrase"),
    ("The answer is 20. Wait, I made a mistake: 9 * 2 = 18. The answer is 18.", "18", "correct", "answer phrase"),
    ("I first got \\boxed{20}, but rechecking, 9*2 = 18, so the final answer is 18.", "18", "correct",
     "answer phrase"),
    ("Final Answer: The final answer is $18$. I hope it is correct.", "18", "correct", "answer phrase"),
    ("**Answer:** 18 dollars", "18", "correct", "answer phrase"),
    ("Answer: 16 - 3 - 4 = 9 eggs, and 9 * 2 = 18", "18", "correct", "answer phrase"),
    ("#### Step 1\nShe keeps 3 eggs.\n#### Step 2\nThe answer is 18", "18", "correct", "answer phrase"),
    ("**Step 3:** add 2 and 16 to get 18", "18", "correct", "last number"),
    ("The answer is \\boxed 18", "18", "correct", "boxed"),
    ("The answer is $\\boxed{\\$18.00}$.", "18", "correct", "boxed"),
    ("It costs 0.5 dollars, the answer is \\frac{1}{2}", "0.5", "correct", "answer phrase"),
    ("The answer is \u221218", "-18", "correct", "answer phrase"),
    # Unboxed endings: a closing remark, a bold closing sentence, a completion cut off
    ("She makes 9 * 2 = 18 dollars. Check: 16 - 3 - 4 = 9 and 9 * 2 = 18, plus her 4 muffins.", "18", "correct",
     "last number"),
    ("So she has 5 sandwiches left. (Cody ate 4 and Trevor ate 3.)", "5", "correct", "last number"),
    ("She keeps **9** eggs.\n\n**She makes 18 dollars every day.**", "18", "correct", "bold"),
    ("She keeps 16 - 3 - 4 = 9 eggs and sells them for 9 * 2 = 18", "18", "correct", "last number"),
    ("Step 3: 60 - 24 = 36.\n\nSo, Davos paid $36 for the 2 shirts.", "36", "correct", "last number"),
    ("Step 3: 60 - 24 = 36.\n\nSo, Davos paid $34 for the 2 shirts.", "36", "wrong", "last number"),
    ("90 + 125 = 215 minutes.\n\nIt takes Max 215 minutes, or 3 hours and 35 minutes, to watch them.", "215", "correct",
     "last number"),
    ("The answer is 17.", "18", "wrong", "answer phrase"),
    ("#### 180", "18", "wrong", "####"),
    ("The answer is 1.8", "18", "wrong", "answer phrase"),
]


@pytest.mark.parametrize(("completion", "gold", "status", "source"), GOLDEN)
def test_golden_shapes(completion, gold, status, source):
    verdict = gsm8k.verify(completion, gold)
    assert verdict.status == status, verdict.reason
    assert verdict.details["source"] == source, verdict.reason


@pytest.mark.parametrize(
    "completion",
    [
        "$\\boxed{73}$ or $\\boxed{72}$",
        "\\boxed{72}, \\boxed{73}",
        "The answer is 71, 72 or 73.",
        "The answer is either 72 or 73",
        "So 9 * 8 = 72 or 73.\n#### 72 or 73",
        "Answer: 16 - 3 = 72 or 73",
    ],
)
def test_a_hedge_is_never_correct(completion):
    verdict = gsm8k.verify(completion, 72)
    assert verdict.status == "wrong" and "hedge" in verdict.reason, verdict.reason


@pytest.mark.parametrize(
    "completion",
    [
        "I first wrote $\\boxed{73}$. Wait, 9 * 8 = 72, so $\\boxed{72}$",
        "$\\boxed{73}$ is wrong.\nRedoing it: $\\boxed{72}$",
        "The answer is 72 (or 72.00 dollars).",
        "The answer is 72 eggs, sold at $3 each on 2 days.",
        "\\boxed{72} or, in words, \\boxed{72}",
    ],
)
def test_corrections_and_restatements_are_not_hedges(completion):
    assert gsm8k.verify(completion, 72).correct


def test_verdict_says_what_and_why():
    verdict = gsm8k.verify("9 * 2 = 18\n#### $18", GOLD_SOLUTION)
    assert verdict == Verdict("correct", 1.0, extracted="$18", reason=verdict.reason, details=verdict.details)
    assert "18" in verdict.reason and "####" in verdict.reason
    assert verdict.details == {"mode": "auto", "source": "####", "value": "18", "gold": "18"}


def test_no_clipping_of_long_completions():
    reasoning = "Let me think step by step about the 7 eggs. " * 5000  # ~220 KB of other numbers
    assert gsm8k.verify("The answer is 18. " + reasoning[:10] + "\n" + reasoning + "\n#### 18", 18).correct
    assert gsm8k.verify(reasoning + "\nThe answer is 18.", 18).correct
    assert gsm8k.verify("The answer is 18.\n" + reasoning, 18).correct


def test_strict_mode_reads_only_the_answer_line():
    assert gsm8k.verify("The answer is 18.", 18, mode="strict").status == "no_answer"
    assert gsm8k.verify("work...\n#### 18", 18, mode="strict").correct
    assert gsm8k.verify("#### Step 1\n#### 18", 18, mode="strict").correct
    assert gsm8k.verify("#### 18\nnotes: 7", 18, mode="flexible").details["source"] == "last number"


# GSM8K's answer line as a regex: the definition that strict mode's line scan must agree with.
ANSWER_LINE = re.compile(r"^[ \t>]*####[ \t]*([^\n]*)$", re.MULTILINE)


# Lines built from the pieces that decide whether a line is an answer line.
answer_like_lines = st.lists(
    st.tuples(st.sampled_from(["", " ", "\t", ">", "> ", "x", "#"]), st.sampled_from(["####", "#####", "###", "# ###", ""]),
              st.sampled_from(["", " ", "\t"]), st.sampled_from(["1", "7.5", "$12", "-3", "a", "Step 2", "", "1 #### 7"]))
    .map("".join),
    max_size=6,
).map("\n".join)


@settings(max_examples=500, deadline=None)
@given(text=st.one_of(answer_like_lines, st.text(alphabet="#> \t\n17a.$-", max_size=80)))
def test_strict_reads_the_last_answer_line_that_the_regex_defines(text):
    expected = None
    for content in reversed(ANSWER_LINE.findall(text)):
        expected = gsm8k.extract_answer("#### " + content, mode="strict")
        if expected is not None:
            break
    found = gsm8k.extract_answer(text, mode="strict")
    assert (found and found.number.value) == (expected and expected.number.value), text


# Text around the word "answer": the pieces that make or break a phrase, parentheticals included.
phrase_texts = st.lists(
    st.sampled_from(["answer", "answers", "the ", " is ", ": ", "=", " (", ")", "(the answer is 3)", "x" * 20, " ",
                     "\n", "*", "_", "7", "not ", "final answer", "(", "was", " would be "]),
    max_size=25,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(text=phrase_texts)
@example(text="answer (answer is 5) is 7")
def test_phrases_found_from_the_end_are_finditers_matches_reversed(text):
    expected = [m.span() for m in reversed(list(gsm8k.extract._PHRASE_RE.finditer(text)))]
    assert [m.span() for m in gsm8k.extract._phrases_from_the_end(text)] == expected


def test_auto_prefers_the_answer_line():
    verdict = gsm8k.verify("Maybe it is 17, but 9 * 2 = 18, so the answer is **18**.\n#### 18.00", 18)
    assert verdict.correct and verdict.details["source"] == "####"
    # an answer phrase just before it that states another value is a second final answer (docs/verifiers.md)
    assert gsm8k.verify("The answer is 17.\n#### 18", 18).details["check"] == "override"


def test_exact_comparison_and_tolerance():
    assert gsm8k.verify("#### 0.3", Fraction(3, 10)).correct
    assert gsm8k.verify("#### 0.3", 0.1 + 0.2).status == "wrong"  # 0.30000000000000004 is not 0.3
    assert gsm8k.verify("#### 0.3", 0.1 + 0.2, abs_tol=1e-9).correct
    assert gsm8k.verify("#### 100", 101, rel_tol=0.01).correct
    assert gsm8k.verify("#### 100", 102, rel_tol=0.01).status == "wrong"
    assert gsm8k.verify("#### 18", 18, abs_tol=-1).status == "error"


@pytest.mark.parametrize(
    "gold",
    [18, 18.0, "18", " 18 ", "$18.00", "18 dollars", Fraction(18), "x\n#### 18", Decimal("18.00"), np.int64(18),
     np.float64(18.0), np.float32(18)],
)
def test_gold_forms(gold):
    assert gsm8k.verify("#### 18", gold).correct


@pytest.mark.parametrize("gold", [0.1, np.float32(0.1), np.float64(0.1), Decimal("0.1")])
def test_float_golds_are_read_as_the_decimal_they_print_as(gold):
    assert gsm8k.verify("#### 0.1", gold).correct


def test_tolerances_may_be_any_real_number():
    assert gsm8k.verify("#### 100", 101, rel_tol=Fraction(1, 100)).correct
    assert gsm8k.verify("#### 100", 101, abs_tol=np.float64(1.5)).correct
    for bad in ("1", float("nan"), -1, None):
        assert gsm8k.verify("#### 100", 101, abs_tol=bad).status == "error"


@pytest.mark.parametrize("gold", ["eighteen", "", "3 or 4", None, True, float("nan"), [18], "solution\n#### none",
                                  np.float64("inf"), Decimal("NaN"), Decimal("sNaN"), np.bool_(True)])
def test_unusable_gold_is_error_never_wrong(gold):
    verdict = gsm8k.verify("#### 18", gold)
    assert verdict.status == "error" and verdict.score == 0.0 and verdict.reason


@pytest.mark.parametrize(
    "completion",
    [None, 18, b"#### 18", "", "   \n\n", "no digits at all", "\x00\x01\xff" * 1000, "\ud800 broken surrogate",
     "{" * 5000, "\\boxed{" * 5000, "#" * 100_000, "9" * 100_000, "1," * 100_000, "x" * 1_000_000],
)
def test_bad_completions_give_a_verdict(completion):
    verdict = gsm8k.verify(completion, 18)
    assert isinstance(verdict, Verdict)
    assert verdict.status in ("no_answer", "wrong", "error")
    if not isinstance(completion, str):
        assert verdict.status == "error"


@pytest.mark.parametrize(
    "completion",
    ["\\boxed{" * 5000, "\\boxed{1" * 20000, "\\boxed{1}, " * 20000, "The answer is " * 30000, "#### \n" * 50000,
     "**1** " * 50000, "1 or " * 50000],
)
def test_adversarial_shapes_stay_linear(completion):
    # A quadratic extractor takes minutes on these (it did: 78 s for 160 KB of unclosed boxes).
    # Work is counted, not timed: the Python steps (calls, lines) the verifier takes on a quarter of
    # the text and on all of it; linear work grows 4x, quadratic 16x. What a single regex does
    # inside C is not counted here: `python -m benchmarks.gsm8k_adversarial` times the growth.
    quarter = completion[: len(completion) // 4]
    assert isinstance(gsm8k.verify(completion, 1), Verdict)
    small, large = python_steps(gsm8k.verify, quarter, 1), python_steps(gsm8k.verify, completion, 1)
    assert large <= 6 * max(small, 50), (small, large)


def python_steps(function, *args):
    """How many Python-level trace events (calls, lines, returns) ``function(*args)`` takes."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        count += 1
        return tracer

    sys.settrace(tracer)
    try:
        function(*args)
    finally:
        sys.settrace(None)
    return count


def test_the_step_count_tells_linear_from_quadratic_work():
    def quadratic(text):
        return sum(1 for i in range(len(text)) for _ in range(i))

    def linear(text):
        return sum(1 for _ in text)

    assert python_steps(quadratic, "x" * 400) > 6 * python_steps(quadratic, "x" * 100)
    assert python_steps(linear, "x" * 400) <= 6 * python_steps(linear, "x" * 100)


def test_unknown_mode_is_an_error_verdict():
    assert gsm8k.verify("#### 18", 18, mode="loose").status == "error"


def test_verify_batch_keeps_order_and_survives_bad_items():
    verdicts = gsm8k.verify_batch(["#### 1", None, "#### 3", "nothing"], [1, 2, 4, 4])
    assert [v.status for v in verdicts] == ["correct", "error", "wrong", "no_answer"]
    with pytest.raises(ValueError, match="one gold per completion"):
        gsm8k.verify_batch(["#### 1"], [1, 2])


# --- property tests: any number in any supported style is read back exactly -------------

numbers = st.one_of(
    st.integers(min_value=-10**12, max_value=10**12).map(Fraction),
    st.decimals(min_value=-10**6, max_value=10**6, places=2, allow_nan=False, allow_infinity=False).map(Fraction),
)


def _with_commas(value: Fraction) -> str:
    text = format_number(abs(value))
    whole, _, frac = text.partition(".")
    grouped = f"{int(whole):,}" + (f".{frac}" if frac else "")
    return ("-" if value < 0 else "") + grouped


STYLES = [
    lambda v: f"#### {format_number(v)}",
    lambda v: f"#### {_with_commas(v)}",
    lambda v: f"Some work first: 3 + 4 = 7.\n#### {format_number(v)}",
    lambda v: f"The answer is {_with_commas(v)}.",
    lambda v: f"So the final answer is $\\boxed{{{format_number(v)}}}$.",
    lambda v: f"Therefore, she has **{format_number(v)}** left",
    lambda v: f"After 2 steps we get {format_number(v)} dollars",
    lambda v: f"The answer is {format_number(v)}.\n\nNote: this used 3 numbers and 12 steps.",
    lambda v: f"Answer: {format_number(v)}",
]


@settings(max_examples=300, deadline=None)
@given(value=numbers, style=st.sampled_from(range(len(STYLES))))
def test_any_number_in_any_style_is_correct_against_itself(value, style):
    completion = STYLES[style](value)
    assert gsm8k.verify(completion, format_number(value)).correct, completion
    assert gsm8k.verify(completion, value).correct, completion


@settings(max_examples=300, deadline=None)
@given(value=numbers, other=numbers, style=st.sampled_from(range(len(STYLES))))
def test_any_number_in_any_style_is_wrong_against_another(value, other, style):
    if value == other:
        other = value + 1
    completion = STYLES[style](value)
    assert gsm8k.verify(completion, other).status == "wrong", completion


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=400))
def test_arbitrary_text_never_raises(text):
    verdict = gsm8k.verify(text, 18)
    assert verdict.status in ("correct", "wrong", "no_answer")


def test_public_values_are_fractions_so_division_stays_exact():
    assert gsm8k.gold_value("#### 7") / 2 == Fraction(7, 2)
    found = gsm8k.extract_answer("The answer is 18 or 20.")
    assert [type(n.value) for n in (found.number, *found.alternatives)] == [Fraction, Fraction]
    assert found.number.value / 4 == Fraction(9, 2)


@pytest.mark.parametrize("gold", ["eighteen", None, True, float("nan"), Decimal("inf"), "Some work.\n#### 2C#", [18]])
def test_an_unusable_gold_raises_the_maths_verifiers_unusable_gold(gold):
    # a str is also a valid gold, so the problem is an exception of its own type, never a returned message
    with pytest.raises(UnusableGold) as raised:
        gsm8k.gold_value(gold)
    assert "gold" in str(raised.value)
    assert gsm8k.verify("#### 18", gold) == Verdict("error", reason=str(raised.value))


def test_a_gold_that_is_a_string_gives_its_value():
    assert gsm8k.gold_value("18") == Fraction(18) and type(gsm8k.gold_value("1,000")) is Fraction


@pytest.mark.parametrize("completion", ["#### 2C#", "#### 2c", "#### 0x2", "#### 1+1=2C#", "So 2.\n#### 2C#",
                                        "#### 2\n#### 2C#"])
def test_a_number_glued_to_letters_on_the_answer_line_is_no_answer(completion):
    # the last answer line decides: its glued "number" is none, and no earlier number stands in for it
    assert gsm8k.verify(completion, 2).status == "no_answer"
    assert gsm8k.verify(completion, 2, mode="strict").status == "no_answer"
    assert gsm8k.verify("#### 2 C", 2).status == "correct" and gsm8k.verify("#### 2 cakes", 2).status == "correct"


def test_a_gold_whose_answer_line_is_glued_to_letters_is_unusable():
    assert gsm8k.verify("#### 2", "Some work.\n#### 2C#").status == "error"


@pytest.mark.parametrize("options", [{"abs_tol": float("inf")}, {"rel_tol": float("inf")}, {"abs_tol": float("nan")},
                                     {"abs_tol": -1}, {"rel_tol": True}])
def test_tolerances_must_be_finite_non_negative_numbers(options):
    verdict = gsm8k.verify("#### 3", 1, **options)  # inf used to raise OverflowError
    assert verdict.status == "error" and "tolerances" in verdict.reason


@pytest.mark.parametrize("completion", ["She keeps 16 - 3 - 4 = 9 eggs, so she makes 9 * 2 =", "She sells them for \\(9 \\times 2",
                                        "She keeps 9 eggs. Therefore, the"])
def test_a_completion_cut_off_before_its_answer_has_none(completion):
    verdict = gsm8k.verify(completion, "9")
    assert verdict.status == "no_answer" and "cut off" in verdict.reason, verdict


# ---------------------------------------------------------------------------------------------
# A box states its number, or it states none: qualified boxes and two-number endings are unpaid

BAGS = "She has 3 bags with 2 apples each, so 3 * 2 = 6 apples.\n\n"


@pytest.mark.parametrize("box", [r"6^2", r"x \neq 6", r"\text{not } 6", r"\cancel{6}", r"6 \pm 1", r"6 + 10^{-9}",
                                 r"< 6", r"6 \text{ or } 7", r"\approx 6", r"6 \text{ and } 8", r"{6}^2", r"6k^2",
                                 r"6x^{2}", r"6 \text{ cm}^2 + 1"])
def test_a_box_that_qualifies_its_number_is_not_that_number(box):
    verdict = gsm8k.verify(BAGS + f"The answer is $\\boxed{{{box}}}$.", "6")
    assert verdict.status == "wrong", verdict
    assert "qualifies" in verdict.reason or "hedge" in verdict.reason, verdict


@pytest.mark.parametrize("box", [r"6", r"\$6", r"6 \text{ apples}", r"x = 6", r"6.00", r"3 \times 2 = 6", r"\frac{12}{2}",
                                 r"\textbf{6}", r"6 \text{ apples in total}", r"6\%",
                                 # units with their powers and slashes, degrees (Sky-T1 and ProcessBench outputs)
                                 r"6^\circ", r"6^{\circ}", "6°", r"6 \, \text{cm}^2", r"6 \text{ rad/s}", r"6 \text{ g/mol}",
                                 r"6 \text{ Å}", r"6 \text{ kcal m}^{-2} \text{yr}^{-1}", "6 \\text{ kcal m⁻² yr⁻¹}", r"6 m^2"])
def test_a_box_that_dresses_its_number_still_states_it(box):
    assert gsm8k.verify(BAGS + f"The answer is $\\boxed{{{box}}}$.", "6").correct


@pytest.mark.parametrize("ending", ["<answer>5 or 6</answer>", "**Either 5 or 6.**", "Either 5 or 6.", "$5 or $6"])
def test_two_numbers_offered_on_the_last_line_are_a_hedge(ending):
    verdict = gsm8k.verify(BAGS + ending, "6")
    assert verdict.status == "wrong" and "hedge" in verdict.reason, verdict


def test_a_restated_last_line_is_not_a_hedge():
    assert gsm8k.verify(BAGS + "6 or 6.0", "6").correct
    assert gsm8k.verify(BAGS + "#### 6\n5 or 6", "6").correct  # the #### line is the answer
