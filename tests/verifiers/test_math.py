from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import I

from referee.verifiers import Verdict, get_verifier
from referee.verifiers import math as math_verifier
from referee.verifiers.math_answers import CompareOptions, canonical, exact_number, extract_answer, gold_answer, never_a_number
from referee.verifiers.math.values import rational_value
from referee.verifiers.math_values import closed_form_value, far_apart, value_at_point
from referee.verifiers.numeric import format_number

COT = "Let me work through this. First, we simplify the expression step by step.\n\n"

# (answer as the model boxed it, gold as a dataset holds it): each pair is equivalent.
EQUIVALENT = [
    ("0.5", r"\frac{1}{2}"),
    (r"\frac{3}{4}", "0.75"),
    (r"\dfrac{7}{2}", r"\frac72"),
    (r"\tfrac{1}{3}", r"\frac{1}{3}"),
    ("0.333333", r"\frac{1}{3}"),
    (r"-\frac{2}{3}", r"\frac{-2}{3}"),
    (r"\left( 3, \frac{\pi}{2} \right)", r"(3,\frac{\pi}{2})"),
    (r"(3, \pi/2)", r"\left( 3, \frac{\pi}{2} \right)"),
    ("[-2, 7]", "[-2,7]"),
    (r"x \in [-2, 7]", "[-2,7]"),
    (r"(-\infty, 3) \cup (5, \infty)", r"(-\infty,3)\cup(5,\infty)"),
    (r"\{2, 1\}", r"\{1,2\}"),
    ("3, 1, 2", "1, 2, 3"),
    (r"30^\circ", "30"),
    ("30", r"30^{\circ}"),
    (r"5 \text{ cm}", "5"),
    (r"864 \mbox{ inches}^2", "864"),
    (r"2\pi", r"2 \pi"),
    (r"\frac{\pi}{2}", r"\pi/2"),
    (r"2\sqrt{2}", r"\sqrt{8}"),
    (r"\frac{\sqrt{3}}{2}", r"\frac{\sqrt3}{2}"),
    (r"\frac{1}{\sqrt{2}}", r"\frac{\sqrt{2}}{2}"),
    (r"50\%", "50"),
    ("0.5", r"50\%"),
    (r"12.5\%", "12.5"),
    (r"1.5 \times 10^{3}", "1500"),
    ("1500", r"1.5\times10^3"),
    ("2.5e-3", "0.0025"),
    ("x = 5", "5"),
    ("1+x", "x+1"),
    (r"\text{Evelyn}", "Evelyn"),
    (r"\textbf{(C)}", r"\text{(C)}"),
    (r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", r"\begin{pmatrix}1\\2\end{pmatrix}"),
    ("10{,}000", "10000"),
    (r"11,\! 111,\! 111,\! 100", "11111111100"),
    (r"\$18.50", "18.5"),
    ("6 - 5i", "6-5i"),
    ("18.", "18"),
    ("4210_5", "4210_{5}"),
    ("5 cm", "5"),
    ("3 hours", "3"),
    ("(x+1)^2", "x^2 + 2x + 1"),
    ("52", "52_8"),
]

# Near misses: each must be wrong.
NOT_EQUIVALENT = [
    (r"\frac{1}{3}", r"\frac{1}{2}"),
    ("0.33", r"\frac13"),
    ("0.50001", r"\frac12"),
    ("(-2, 7]", "[-2,7]"),
    ("(2, 1)", "(1,2)"),
    ("x-1", "x+1"),
    ("y+1", "x+1"),
    (r"2\sqrt{3}", r"2\sqrt{2}"),
    (r"\sqrt{2}", "2"),
    ("-5", "5"),
    (r"5\%", "50"),
    (r"\pi", "3.14"),
    ("3.14", r"\pi"),
    (r"5\pi", "5"),
    (r"1.5\times10^{4}", "1500"),
    ("10", "1,000"),
    (r"\{1, 2\}", r"\{1,2,3\}"),
    (r"\text{Eve}", r"\text{Evelyn}"),
    (r"\begin{pmatrix} 2 \\ 1 \end{pmatrix}", r"\begin{pmatrix}1\\2\end{pmatrix}"),
    ("x^2 + 1", "x^2 - 1"),
    ("52_9", "52_8"),
    ("42", "52_8"),
    (".0000673", ".0000672"),
    ("0.5000001", "0.5"),
    ("3R^2", "600"),
    ("(1, 2)", "3"),
    (r"\text{Evelyn}", "5"),
    ("12", r"\text{(C)}"),
    ("12", r"(-\infty, 3) \cup (5, \infty)"),
]


@pytest.mark.parametrize(("answer", "gold"), EQUIVALENT)
def test_equivalent_answers_are_correct(answer, gold):
    verdict = math_verifier.verify(COT + f"So the answer is $\\boxed{{{answer}}}$.", gold)
    assert verdict.status == "correct", verdict.reason
    assert verdict.extracted == answer and verdict.score == 1.0


@pytest.mark.parametrize(("answer", "gold"), NOT_EQUIVALENT)
def test_near_misses_are_wrong(answer, gold):
    verdict = math_verifier.verify(COT + f"So the answer is $\\boxed{{{answer}}}$.", gold)
    assert verdict.status == "wrong", verdict.reason
    assert verdict.score == 0.0 and verdict.extracted == answer


def test_verify_batch_matches_verify_and_keeps_order():
    completions = [f"\\boxed{{{a}}}" for a, _ in EQUIVALENT + NOT_EQUIVALENT] + ["no answer here", None]
    golds = [g for _, g in EQUIVALENT + NOT_EQUIVALENT] + ["1", "1"]
    verdicts = math_verifier.verify_batch(completions, golds)
    expected = ["correct"] * len(EQUIVALENT) + ["wrong"] * len(NOT_EQUIVALENT) + ["no_answer", "error"]
    assert [v.status for v in verdicts] == expected


def test_fast_paths_decide_without_sympy():
    assert math_verifier.verify(r"\boxed{\left[ \dfrac{1}{2}, 3 \right)}", r"[\frac{1}{2},3)").details["method"] == "text"
    assert math_verifier.verify(r"\boxed{0.5}", r"\frac{1}{2}").details["method"] == "number"
    assert math_verifier.verify(r"\boxed{7}", "8").details["method"] == "number"
    assert math_verifier.verify(r"\boxed{2\sqrt{2}}", r"\sqrt{8}").details["method"] == "sympy"
    assert math_verifier.verify(r"\boxed{x^2 + 1}", "5").details["method"] == "kind"
    assert math_verifier.verify(r"\boxed{5}", "(1, 5)").details["method"] == "kind"
    assert math_verifier.verify(r"\boxed{\frac{\sqrt{2}}{2}}", r"\frac{\sqrt2}{2}").details["method"] == "text"


def test_math_verify_asymmetry_is_kept():
    # An assignment gold accepts its bare value, and an equation answer is read by its right side.
    assert math_verifier.verify(r"\boxed{5}", "x=5").correct
    assert math_verifier.verify(r"\boxed{x=5}", "5").correct
    # A relation gold compared with an interval answer: math-verify converts the gold only.
    assert math_verifier.verify(r"\boxed{(1, 2)}", "1 < x < 2").correct


# ---------------------------------------------------------------------------------------------
# Options


def test_percent_modes():
    assert math_verifier.verify(r"\boxed{50\%}", "0.5").correct
    assert math_verifier.verify(r"\boxed{50\%}", "50").correct
    assert math_verifier.verify(r"\boxed{50\%}", "0.5", percent="divide").correct
    assert math_verifier.verify(r"\boxed{50\%}", "50", percent="divide").status == "wrong"
    assert math_verifier.verify(r"\boxed{50\%}", "50", percent="ignore").correct
    assert math_verifier.verify(r"\boxed{50\%}", "0.5", percent="ignore").status == "wrong"
    assert math_verifier.verify(r"\boxed{\frac{x}{2}\%}", r"\frac{x}{200}", percent="divide").correct


def test_numeric_tolerance_and_rounding():
    assert math_verifier.verify(r"\boxed{3.1416}", r"\pi").status == "wrong"
    assert math_verifier.verify(r"\boxed{3.1416}", r"\pi", abs_tol=1e-3).correct
    assert math_verifier.verify(r"\boxed{101}", "100", rel_tol=0.01).correct
    assert math_verifier.verify(r"\boxed{102}", "100", rel_tol=0.01).status == "wrong"
    assert math_verifier.verify(r"\boxed{0.3333}", r"\frac{1}{3}", float_rounding=4).correct
    assert math_verifier.verify(r"\boxed{0.3333}", r"\frac{1}{3}").status == "wrong"


def test_strict_mode():
    assert math_verifier.verify(r"\boxed{y+1}", "x+1").status == "wrong"
    assert math_verifier.verify(r"\boxed{y+1}", "x+1", strict=False).correct


@pytest.mark.parametrize("options", [
    {"percent": "half"}, {"timeout": 0}, {"timeout": "5"}, {"abs_tol": -1}, {"float_rounding": -1},
    {"strict": "yes"}, {"max_answer_chars": 0}, {"workers": 0},
])
def test_bad_options_are_error_verdicts(options):
    verdict = math_verifier.verify(r"\boxed{1}", "1", **options)
    assert verdict.status == "error" and next(iter(options)) in verdict.reason


def test_bad_batch_timeout_and_length_mismatch():
    assert math_verifier.verify_batch([r"\boxed{1}"], ["1"], batch_timeout=-1)[0].status == "error"
    with pytest.raises(ValueError, match="2 completions but 1 golds"):
        math_verifier.verify_batch(["a", "b"], ["1"])


# ---------------------------------------------------------------------------------------------
# Extraction: what was read goes into the Verdict


@pytest.mark.parametrize(("completion", "answer", "source"), [
    (r"The area is $\boxed{\frac{\sqrt{3}}{4}}$ square units.", r"\frac{\sqrt{3}}{4}", "boxed"),
    (r"so \boxed{\left\{ \frac{1}{2}, \frac{3}{2} \right\}}", r"\left\{ \frac{1}{2}, \frac{3}{2} \right\}", "boxed"),
    ("The answer is \\boxed 5.", "5", "boxed"),
    (r"Thus $\fbox{12}$", "12", "boxed"),
    (r"The roots are $\boxed{1}$ and $\boxed{2}$.", "1, 2", "boxed"),
    (r"I first got \boxed{4}. Checking again, 2+3=5, so \boxed{5}", "5", "boxed"),
    (r"I first got \boxed{4}, but that is wrong. Final Answer: The final answer is $5$. I hope it is correct.",
     "5", "final answer"),
    ("**Final Answer:** 42", "42", "final answer"),
    (r"Answer: $\frac{1}{2}$", r"\frac{1}{2}", "final answer"),
    ("<think>3 * 4 = 12</think>\n<answer>12</answer>", "12", "answer tag"),
    (r"<think>...</think><answer>The value is $\boxed{7}$</answer>", "7", "answer tag"),
    (r"<answer>$\frac{2}{3}$</answer>", r"\frac{2}{3}", "answer tag"),
    (r"We find $x = 2$ and then $y = 3$.", "y = 3", "math span"),
    (r"So \( 4\sqrt{2} \) is the length.", r"4\sqrt{2}", "math span"),
    (r"So $17^{-1} \equiv \boxed{44}$. Check: $17 \cdot 44 = 748$, so our answer is correct.", "44", "boxed"),
    (r"Thus $\boxed{44}$. We may check our answer: $17\cdot 44 = 748 \equiv 1$.", "44", "boxed"),
    (r"$d = \boxed{15\frac{39}{40}},$ or $\boxed{\frac{639}{40}}$ inches.", r"15\frac{39}{40} ⟪or⟫ \frac{639}{40}",
     "boxed"),
    (r"The roots are $\boxed{1}$, $\boxed{2}$ and $\boxed{3}$.", "1, 2, 3", "boxed"),
    ("The answer is yes, since $x = 3$.", "x = 3", "math span"),
])
def test_extraction(completion, answer, source):
    found = extract_answer(completion)
    assert found is not None and (found.text, found.source) == (answer, source)


@pytest.mark.parametrize("completion, gold, check", [
    (r"\boxed{0.5}", r"\frac{1}{2}", "exact numbers"),
    (r"\boxed{2\sqrt{2}}", r"\sqrt{8}", "sympy"),
    (r"\boxed{\text{Evelyn}}", r"\text{Evelyn}", "same text"),
])
def test_a_verdict_names_the_check_that_decided_it(completion, gold, check):
    assert math_verifier.verify(completion, gold).details["check"] == check


def test_verdict_says_what_was_read_and_how():
    verdict = math_verifier.verify(COT + r"Hence the answer is $\boxed{\dfrac{14}{3}}$.", r"\frac{14}{3}")
    assert verdict == Verdict("correct", 1.0, extracted=r"\dfrac{14}{3}", reason=verdict.reason, details=verdict.details)
    assert verdict.details == {"gold": r"\frac{14}{3}", "source": "boxed", "method": "text", "check": "same text"}
    assert r"\dfrac{14}{3}" in verdict.reason and "boxed" in verdict.reason


@pytest.mark.parametrize("completion", ["I do not know.", "The value is unknown.", "", "   \n", r"\boxed{}"])
def test_no_answer(completion):
    assert math_verifier.verify(completion, "12").status == "no_answer"


# ---------------------------------------------------------------------------------------------
# Golds


@pytest.mark.parametrize("gold", [
    r"\frac{1}{2}", "0.5", 0.5, Fraction(1, 2), r"$\frac{1}{2}$", r"\(\frac12\)", r"\dfrac{1}{2}", "50\\%",
    r"We halve it: $1 \div 2 = \boxed{\frac{1}{2}}$.",
])
def test_gold_forms(gold):
    assert math_verifier.verify(r"\boxed{\frac{1}{2}}", gold).correct


def test_full_solution_gold_uses_its_last_boxed_answer():
    solution = r"First $\boxed{3}$ is a guess; the polar form is $\boxed{\left( 3, \frac{\pi}{2} \right)}.$"
    assert gold_answer(solution) == r"\left( 3, \frac{\pi}{2} \right)"
    assert math_verifier.verify(r"\boxed{(3, \frac{\pi}{2})}", solution).correct


@pytest.mark.parametrize("gold", [
    "", "   ", "$$", None, True, float("nan"), [1], {"answer": 1}, r"\frac{1}{2", "}{", r"\frac{}{}", r"\sqrt{}",
    "???", "x" * 20_000, r"A solution with no boxed answer \boxed{}",
])
def test_unusable_gold_is_error_never_wrong(gold):
    for completion in (r"\boxed{5}", r"\boxed{\frac{}{}}", "no answer"):
        verdict = math_verifier.verify(completion, gold)
        assert verdict.status == "error" and verdict.score == 0.0 and verdict.reason, (completion, verdict)


def test_registered_for_the_cli():
    assert get_verifier("math") is math_verifier


# ---------------------------------------------------------------------------------------------
# Bad completions always get a Verdict, quickly


@pytest.mark.parametrize("completion", [
    None, 12, b"\\boxed{1}", "{" * 5000, "\\boxed{" * 5000, "$" * 100_000, "\\(" * 50_000, "<answer>" * 20_000,
    "\\boxed " * 20_000, "The final answer is " * 10_000, "\x00\x01\xff" * 1000, "\ud800 broken surrogate",
])
def test_bad_completions_give_a_verdict(completion):
    verdict = math_verifier.verify(completion, "5", timeout=2)
    assert isinstance(verdict, Verdict)
    assert verdict.status in ("no_answer", "wrong", "timeout", "error")
    if not isinstance(completion, str):
        assert verdict.status == "error"


# ---------------------------------------------------------------------------------------------
# Properties of the text layer


@given(st.fractions(max_denominator=10**6).filter(lambda f: abs(f) < 10**12))
@settings(max_examples=200, deadline=None)
def test_exact_numbers_round_trip(value):
    assert exact_number(format_number(value)).value == value
    if value >= 0:
        assert exact_number(f"\\frac{{{value.numerator}}}{{{value.denominator}}}").value == value


@given(st.integers(-10**9, 10**9), st.integers(1, 10**6))
@settings(max_examples=200, deadline=None)
def test_fraction_and_decimal_agree_exactly(numerator, denominator):
    value = Fraction(numerator, denominator)
    completion = f"\\boxed{{\\frac{{{numerator}}}{{{denominator}}}}}"
    verdict = math_verifier.verify(completion, format_number(value))
    assert verdict.correct and verdict.details["method"] in ("text", "number")
    assert math_verifier.verify(completion, format_number(value + 1)).status == "wrong"


_LATEX_ATOMS = st.sampled_from(["x", "1", "23", r"\pi", r"\frac{1}{2}", r"\sqrt{3}", "+", "-", "(", ")", ",", "^2", " "])


@given(st.lists(_LATEX_ATOMS, min_size=1, max_size=12).map("".join).filter(lambda s: s.strip()))
@settings(max_examples=200, deadline=None)
def test_boxed_content_is_read_back_exactly(answer):
    text = COT + f"So we get $\\boxed{{{answer}}}$. Done."
    assert extract_answer(text).text == answer.strip()


@given(st.text(max_size=300))
@settings(max_examples=300, deadline=None)
def test_text_layer_never_raises(text):
    extract_answer(text)
    canonical(text)
    exact_number(text)


_EXPRESSIONS = st.lists(st.sampled_from(["x", "y", "2", "13", r"\pi", r"\sqrt{3}", "+", "-", "^2", r"\frac{1}{2}", "i",
                                         "0", "*", "/", "(", ")"]),
                       min_size=1, max_size=8).map("".join)


@pytest.mark.parametrize("expression", ["x-x", "x/x", r"\frac{y}{y}", "x0", "x00", "0*y", "x^0", r"\sin^2 x + \cos^2 x"])
def test_an_expression_whose_variable_may_cancel_or_vanish_may_be_a_number(expression):
    assert not never_a_number(expression)


@given(_EXPRESSIONS, st.integers(-50, 50))
@settings(max_examples=60, deadline=None)
def test_never_a_number_agrees_with_math_verify(expression, number):
    from referee.verifiers.math_sympy import equivalent  # the worker side, here in-process

    if never_a_number(expression):
        assert not equivalent(str(number), expression, CompareOptions())[0]


@given(st.lists(_LATEX_ATOMS, min_size=1, max_size=12).map("".join))
@settings(max_examples=200, deadline=None)
def test_canonical_is_idempotent(text):
    assert canonical(canonical(text)) == canonical(text)


# ---------------------------------------------------------------------------------------------
# The closed-form fast path agrees with sympy and math-verify

_CLOSED_FORMS = st.lists(
    st.tuples(st.sampled_from(["2", "3", "17", "0.5", r"\pi", r"\sqrt{2}", r"\sqrt{7}", r"\frac{3}{4}",
                               r"\frac{\sqrt{3}}{2}", "i", "(1+i)", "3^2", r"\sqrt[3]{5}"]),
              st.sampled_from(["+", "-", r"\cdot", "/", ""])),
    min_size=1, max_size=5,
).map(lambda parts: "".join(atom + op for atom, op in parts[:-1]) + parts[-1][0])


@given(_CLOSED_FORMS)
@settings(max_examples=60, deadline=None)
def test_closed_form_values_agree_with_sympy(expression):
    from referee.verifiers.math_sympy import _parse

    value = closed_form_value(expression)
    if value is not None:
        parsed = next(item for item in _parse(expression) if not isinstance(item, str))
        imaginary = {symbol: I for symbol in parsed.free_symbols if symbol.name == "i"}  # math-verify may read i as a symbol
        expected = complex(parsed.subs(imaginary).evalf())
        assert abs(value - expected) <= 1e-9 * max(1.0, abs(expected)), (value, expected)


@given(_CLOSED_FORMS, _CLOSED_FORMS)
@settings(max_examples=60, deadline=None)
def test_far_apart_closed_forms_are_never_equal_for_math_verify(gold, answer):
    from referee.verifiers.math_sympy import equivalent

    a, g = closed_form_value(answer), closed_form_value(gold)
    if a is not None and g is not None and far_apart(a, g, CompareOptions()):
        assert not equivalent(gold, answer, CompareOptions())[0]
        assert math_verifier.verify(f"\\boxed{{{answer}}}", gold).status == "wrong"


def test_value_fast_paths():
    assert math_verifier.verify(r"\boxed{2\sqrt{5}}", "6").details["method"] == "value"
    assert math_verifier.verify(r"\boxed{(15, -20)}", "(15,-29)").details["method"] == "elements"
    assert math_verifier.verify(r"\boxed{(15, \sqrt{2})}", r"(15,\sqrt{3})").details["method"] == "value"
    assert math_verifier.verify(r"\boxed{-2, 2}", "-2,1").details["method"] == "elements"
    assert math_verifier.verify(r"\boxed{1+3i}", "1+2i").details["method"] == "value"
    assert math_verifier.verify(r"\boxed{1, -2}", "-2,1").correct  # the same set
    assert math_verifier.verify(r"\boxed{[-2, \infty)}", r"[-2, \infty)").correct
    assert math_verifier.verify(r"\boxed{(-\infty, 5)}", r"(-\infty, 6)").details["method"] == "value"
    assert math_verifier.verify(r"\boxed{x^2 - 1}", "x^2 + 1").details["method"] == "value"
    assert math_verifier.verify(r"\boxed{y^2 - 1}", "x^2 - 1", strict=False).correct  # no point values then


_EXPRESSIONS_IN_VARIABLES = st.lists(
    st.tuples(st.sampled_from(["2", "x", "y", "x^2", "(x+1)", r"\frac{x}{2}", r"\sqrt{x}", "R", "r", "b^3",
                               r"\frac{1}{y}", "(2x-1)", " m", "ab"]),
              st.sampled_from(["+", "-", r"\cdot", "/", ""])),
    min_size=1, max_size=4,
).map(lambda parts: "".join(atom + op for atom, op in parts[:-1]) + parts[-1][0])


@given(_EXPRESSIONS_IN_VARIABLES, _EXPRESSIONS_IN_VARIABLES)
@settings(max_examples=60, deadline=None)
def test_expressions_far_apart_at_the_point_are_never_equal_for_math_verify(gold, answer):
    from referee.verifiers.math_sympy import equivalent

    a, g = value_at_point(answer), value_at_point(gold)
    if a is not None and g is not None and far_apart(a, g, CompareOptions()):
        assert not equivalent(gold, answer, CompareOptions())[0]


# ---------------------------------------------------------------------------------------------
# Factorials, binomials, large powers, logarithms, infinity and element counts, decided without sympy

# (gold, answer): each pair is unequal for math-verify (the real answers that used to go to sympy).
FAST_WRONG = [
    (r"\frac{100!}{2^{50}}", "50"),
    ("140", "20!"),
    ("1", r"\frac{1}{\binom{39}{36}}"),
    ("-14", r"-\frac{5}{2 \cdot 9! \cdot 8 \cdot 59!}"),
    ("2", "2^{625}"),
    (r"2,-\log _{10} 250", "2, -1"),
    ("3", r"\infty"),
    ("-2,0,2", r"\left\{ 1 \right\}"),
    ("(27,20,13), (18,20,22)", "(12, 20, 28)"),
    ("(3,0),(-3,1)", "(-3, 1)"),
]
# (gold, answer): each pair is equal, written another way: no fast check may call it wrong.
FAST_NEAR_MISSES = [
    ("120", "5!"), ("10", r"\binom{5}{2}"), ("1024", "2^{10}"), ("2", r"\log_{10} 100"), (r"\log_2 8", "3"),
    (r"\frac{100!}{98!}", "9900"), ("1", "21! + 1 - 21!"), (r"\infty", r"\infty"), ("1,2,3", "(1, 2, 3)"),
    ("1", r"\{1\}"), ("(1,2)", "1,2"), ("(1,2),(3,4)", "((1,2),(3,4))"), (r"\ln 2 + \ln 3", r"\ln(6)"),
    # one value for math-verify: {0}, [0, 0] = {0}, two empty intervals, and (2, 0, 3] read as 3
    ("0", "0, 0"), ("0", "[0, 0]"), ("(2, 1]", "(-1,-1]"), ("3", "(2, 0, 3]"),
]


def _fast_verdict(answer, gold, options=CompareOptions()):
    """What the fast checks decide for a boxed answer against a gold (``None``: sympy decides), without workers."""
    from referee.verifiers.math import pipeline

    item = pipeline._read(f"\\boxed{{{answer}}}", gold, options, 1000, True)
    return None if isinstance(item, Verdict) or item.early is not None else pipeline._fast_verdict(item, options)


@pytest.mark.parametrize("gold, answer", FAST_WRONG)
def test_closed_forms_and_element_counts_are_wrong_without_sympy(gold, answer):
    from referee.verifiers.math_sympy import judge

    verdict = math_verifier.verify(f"\\boxed{{{answer}}}", gold)
    assert verdict.status == "wrong" and verdict.details["check"] != "sympy", verdict
    assert judge(gold, answer, CompareOptions()) == (None, (False, True))  # what the worker says


@pytest.mark.parametrize("gold, answer", FAST_NEAR_MISSES)
def test_equal_values_written_otherwise_are_never_wrong_fast(gold, answer):
    fast = _fast_verdict(answer, gold)
    assert fast is None or fast.correct, fast
    assert math_verifier.verify(f"\\boxed{{{answer}}}", gold).correct


_NEW_ATOMS = st.sampled_from([
    "2", "3", "7", "10", "0.5", r"\pi", r"\sqrt{2}", r"\frac{3}{4}", "0!", "3!", "5!", "10!", "20!", "59!", "100!",
    r"\binom{5}{2}", r"\dbinom{39}{36}", r"\binom{10}{0}", r"\binom{3}{5}", r"\tbinom{40}{20}", "2^{625}", "10^{100}",
    "3^{-200}", "2^{100}", r"\log_{10} 250", r"\log_2 8", r"\log_2(8)", r"\log 100", r"\ln 2", r"\log_{\frac{1}{2}} 4",
    r"\log _{10} 2", r"\ln(3)", r"\log_{2}{8}", "(5!)^2", r"\sqrt{5!}", r"\frac{5!}{3!}",
])
_NEW_CLOSED_FORMS = st.lists(st.tuples(_NEW_ATOMS, st.sampled_from(["+", "-", r"\cdot", "/", "", r" \times "])),
                             min_size=1, max_size=4,
                             ).map(lambda parts: "".join(atom + op for atom, op in parts[:-1]) + parts[-1][0])


@given(_NEW_CLOSED_FORMS | st.sampled_from([r"\infty", r"-\infty"]),
       _NEW_CLOSED_FORMS | st.sampled_from([r"\infty", "120", "10", "3", "1024"]))
@settings(max_examples=150, deadline=None)
def test_factorials_binomials_powers_and_logs_wrong_fast_are_wrong_for_math_verify(gold, answer):
    from referee.verifiers.math_sympy import _parse, equivalent, gold_problem

    value = closed_form_value(gold)
    if value is not None and abs(value) != float("inf"):  # the value is sympy's, and the gold needs no sympy check
        parsed = next(item for item in _parse(gold) if not isinstance(item, str))
        expected = complex(parsed.doit().evalf(50))  # doit: evalf alone loses 2^{625} \cdot 2 - 2^{626} in cancellation
        assert abs(value - expected) <= 1e-9 * max(1.0, abs(expected)), (value, expected)
        assert gold_problem(gold) is None
    fast = _fast_verdict(answer, gold)
    if fast is not None and fast.details["check"] == "rational values":  # exact, also where math-verify's floats blur
        assert fast.correct == (rational_value(answer) == rational_value(gold)), fast
    elif fast is not None and not fast.correct:
        assert not equivalent(gold, answer, CompareOptions())[0], fast


@given(st.integers(0, 30), st.integers(0, 40), st.integers(0, 40), st.integers(1, 200), st.sampled_from([2, 3, 10]))
@settings(max_examples=60, deadline=None)
def test_a_factorial_binomial_power_or_log_against_its_value_is_never_wrong_fast(n, top, bottom, exponent, base):
    import math

    for gold, answer in [(f"{n}!", str(math.factorial(n))), (rf"\binom{{{top}}}{{{bottom}}}", str(math.comb(top, bottom))),
                         (f"{base}^{{{exponent}}}", str(base ** exponent) if exponent < 20 else f"{base}^{{{exponent}}}"),
                         (rf"\log_{{{base}}} {base ** (exponent % 30)}", str(exponent % 30))]:
        fast = _fast_verdict(answer, gold)
        assert fast is None or fast.correct, (gold, answer, fast)


_ENTRIES = st.lists(st.integers(-3, 3), min_size=1, max_size=3)
_COLLECTIONS = st.one_of(
    _ENTRIES.map(lambda xs: ", ".join(map(str, xs))),  # a bare list
    _ENTRIES.map(lambda xs: r"\{" + ", ".join(map(str, xs)) + r"\}"),  # a set
    _ENTRIES.map(lambda xs: "(" + ", ".join(map(str, xs)) + ")"),  # a tuple, an interval or a number
    _ENTRIES.map(lambda xs: "[" + ", ".join(map(str, xs)) + "]"),
    _ENTRIES.map(lambda xs: "(" + ", ".join(map(str, xs)) + "]"),
    st.lists(_ENTRIES.map(lambda xs: "(" + ", ".join(map(str, xs)) + ")"), min_size=1, max_size=3).map(", ".join),
    st.lists(_ENTRIES.map(lambda xs: "(" + ", ".join(map(str, xs)) + ")"), min_size=1, max_size=3).map(
        lambda ts: r"\left\{ " + ", ".join(ts) + r" \right\}"),
)


@given(_COLLECTIONS, _COLLECTIONS, st.booleans())
@settings(max_examples=200, deadline=None)
def test_element_counts_wrong_fast_are_wrong_for_math_verify(gold, answer, strict):
    from referee.verifiers.math_sympy import equivalent

    options = CompareOptions(strict=strict)
    fast = _fast_verdict(answer, gold, options)
    if fast is not None and not fast.correct:
        assert not equivalent(gold, answer, options)[0], fast


@pytest.mark.parametrize("text", ["1000!", r"\binom{100000}{3}", "2^{2^{100}}", "3^{10^{6}}", r"\log_2 -8", "171!",
                                  r"\log_{1} 5", r"\binom{-1}{2}", "5!!", "3!^2", "2^3!", r"\ln x", "(1+10^{-60})^{4096}"])
def test_outside_the_grammar_stays_outside(text):
    assert closed_form_value(text) is None


@pytest.mark.parametrize("answer", [r"0 < x < " + " " * 5000 + r"36, x \ne 9", "1" + " " * 5000 + "or 2", "7" * 5000])
def test_an_answer_over_max_answer_chars_is_a_timeout_before_any_rewriting(answer):
    verdict = math_verifier.verify(rf"So the answer is $\boxed{{{answer}}}$.", r"(0,9) \cup (9,36)", max_answer_chars=1000)
    assert verdict.status == "timeout" and verdict.details["limit"] == "max_answer_chars", verdict.reason
