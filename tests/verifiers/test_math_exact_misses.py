"""The misses of issue 32, decided exactly: labelled lists, closed forms with huge exponents, set-builder
sets, answers in prose, and golds written as sentences.

Every shape is our own, written in the shapes real outputs take. Each group has right answers that
must pay, wrong ones (adversarial among them) that must not, and property tests on the readers.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers import math as maths
from referee.verifiers.math.exact import is_sentence, labelled_values, named_choice, yes_or_no
from referee.verifiers.math.extract import extract_answer
from referee.verifiers.math.values import closed_form_value, rational_value

COT = "We count carefully and check each case.\n\n"


def _statuses(cases: list[tuple[str, str, str]]) -> list[str]:
    return [verdict.status for verdict in maths.verify_batch([c for c, _, _ in cases], [g for _, g, _ in cases])]


def _assert_cases(cases: list[tuple[str, str, str]]) -> None:
    got = _statuses(cases)
    wrong = [(completion, gold, expected, status) for (completion, gold, expected), status in zip(cases, got)
             if status != expected]
    assert not wrong, wrong


# ---------------------------------------------------------------------------------------------
# 1. Labelled lists: element by element, with their labels

APPLES = r"3 \text{ apples}, 5 \text{ pears}"
LABELLED = [
    (rf"\boxed{{{APPLES}}}", APPLES, "correct"),
    (r"\boxed{5 \text{ pears}, 3 \text{ apples}}", APPLES, "correct"),  # labels pair the values: any order
    (r"\boxed{(3 \text{ apples}, 5 \text{ pears})}", APPLES, "correct"),
    (r"\boxed{3 \text{ apples and } 5 \text{ pears}}", APPLES, "correct"),
    (r"\boxed{3 \text{ Apple}, 5 \text{ pear}}", APPLES, "correct"),
    (r"\boxed{3, 5}", APPLES, "correct"),  # in the gold's order
    (r"\boxed{3 \text{ apples}, 7 \text{ pears}}", r"3, 7", "correct"),
    (r"\boxed{15 \text{ cm}}", "15", "correct"),  # one number with a unit stays a number
    (r"\boxed{1,000 \text{ apples}}", "1000", "correct"),
    # never paid
    (r"\boxed{3 \text{ apples}, 7 \text{ pears}}", APPLES, "wrong"),  # math-verify reads both as 3
    (r"\boxed{3 \text{ pears}, 5 \text{ apples}}", APPLES, "wrong"),  # the values under the other labels
    (r"\boxed{5, 3}", APPLES, "wrong"),  # unlabelled, in another order
    (r"\boxed{3}", APPLES, "wrong"),
    (r"\boxed{3 \text{ apples}}", APPLES, "wrong"),
    (r"\boxed{3 \text{ apples}, 5 \text{ pears}, 1 \text{ plum}}", APPLES, "wrong"),
    (r"\boxed{3 \text{ apples}, 7 \text{ pears}}", "3", "wrong"),  # a list is no single number
    (r"\boxed{3 \text{ cm}, 7 \text{ cm}}", "3", "wrong"),
    (r"\boxed{x = 3 \text{ cm}, y = 7 \text{ cm}}", "3", "wrong"),
    (r"\boxed{3 \text{ apples and } 7 \text{ pears}}", "3", "wrong"),
    (r"\boxed{3 \text{ apples}, 5 \text{ plums}}", APPLES, "wrong"),
    # several quantities in one answer are never read as their first number
    (r"\boxed{3 \text{ apples}; 7 \text{ pears}}", "3", "wrong"),
    (r"\boxed{3 \text{ apples}\quad 7 \text{ pears}}", "3", "wrong"),
    (r"\boxed{3 \text{ hours } 7 \text{ minutes}}", "3", "wrong"),
    (r"\boxed{3 \text{ cm} \times 7 \text{ cm}}", "3", "wrong"),
    (r"\boxed{2 \text{ apples} + 1}", "2", "wrong"),
    (r"\boxed{3}", r"3 \text{ hours } 7 \text{ minutes}", "wrong"),
    (r"\boxed{3 \text{ hours } 7 \text{ minutes}}", r"3 \text{ hours } 7 \text{ minutes}", "correct"),
    (r"\boxed{3 \text{ cm}^2}", "3", "correct"),  # a unit's power is no second quantity
    (r"\boxed{\text{3 apples and 5 pears}}", APPLES, "correct"),
    (r"\boxed{5 pears \text{ and } 3 apples}", APPLES, "correct"),
    (r"\boxed{\text{Apples: } 3}", r"3 \text{ apples}", "correct"),
    (r"\boxed{27 cm}", r"27 \text{ cm}, 35 \text{ minutes}", "wrong"),  # math-verify reads the gold as 27
    # closed forms: exactly where rational, far apart otherwise; only a first value is left to sympy
    (r"\boxed{2^{10} \text{ apples}, 7 \text{ pears}}", r"1024 \text{ apples}, 7 \text{ pears}", "correct"),
    (r"\boxed{\frac{\sqrt{12}}{2} \text{ cm}, 5 \text{ cm}}", r"\sqrt{3} \text{ cm}, 5 \text{ cm}", "correct"),
    (r"\boxed{\sqrt{3} \text{ cm}, 7 \text{ cm}}", r"\sqrt{3} \text{ cm}, 5 \text{ cm}", "wrong"),
    (r"\boxed{\sqrt{3}}", r"\sqrt{3} \text{ cm}, 5 \text{ cm}", "wrong"),
    (r"\boxed{5 \text{ cm}, \sqrt{3}+10^{-20} \text{ cm}}", r"5 \text{ cm}, \sqrt{3} \text{ cm}", "wrong"),
    (r"\boxed{27 \text{ cm}, 35 \text{ hours}}", r"27 \text{ cm}, 35 \text{ minutes}", "wrong"),
    (r"\boxed{3\;\text{cm}}", "3", "correct"),
]


def test_labelled_lists_are_compared_element_by_element_with_their_labels() -> None:
    _assert_cases(LABELLED)


_NOUNS = ["apples", "pears", "plums", "boys", "girls", "cars", "books", "coins"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=2, max_size=5), st.randoms(use_true_random=False), st.data())
def test_labelled_lists_pay_any_order_and_refuse_any_changed_value(values: list[int], rng, data) -> None:
    nouns = _NOUNS[:len(values)]
    gold = ", ".join(rf"{value} \text{{ {noun}}}" for value, noun in zip(values, nouns))
    shuffled = list(zip(values, nouns))
    rng.shuffle(shuffled)
    same = ", ".join(rf"{value} \text{{ {noun}}}" for value, noun in shuffled)
    at = data.draw(st.integers(0, len(values) - 1))
    changed = list(zip(values, nouns))
    changed[at] = (changed[at][0] + data.draw(st.integers(1, 9)), changed[at][1])
    other = ", ".join(rf"{value} \text{{ {noun}}}" for value, noun in changed)
    first_only = rf"{values[0]} \text{{ {nouns[0]}}}"
    verdicts = maths.verify_batch([rf"\boxed{{{same}}}", rf"\boxed{{{other}}}", rf"\boxed{{{first_only}}}"], [gold] * 3)
    assert [v.status for v in verdicts] == ["correct", "wrong", "wrong"], (gold, [v.reason for v in verdicts])


_STYLES = [r"{v} \text{{ {n}}}", "{v} {n}", r"\text{{{N}: }} {v}", r"{v}\,\mathrm{{{n}}}"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 99), st.sampled_from(_NOUNS + ["cm", "hours", "red balls"])), min_size=2,
                max_size=4, unique_by=lambda pair: pair[1]),
       st.sampled_from(_STYLES), st.sampled_from([", ", "; ", r" \text{ and } ", r"\quad ", " and "]), st.integers(0, 2),
       st.randoms(use_true_random=False))
def test_a_labelled_list_in_any_style_pays_only_with_every_value_and_label(elements, style, separator, change, rng):
    gold = ", ".join(rf"{v} \text{{ {n}}}" for v, n in elements)
    written = list(elements)
    if change == 1:
        written[0] = (written[0][0] + 1, written[0][1])  # another value
    elif change == 2:
        written = written[:-1]  # one element left out
    rng.shuffle(written)
    answer = separator.join(style.format(v=v, n=n, N=n.capitalize()) for v, n in written)
    verdict = maths.verify(rf"So the result is $\boxed{{{answer}}}$.", gold)
    assert verdict.correct == (change == 0), (answer, gold, verdict.reason)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0123456789 ,.{}\\textapplesandcm:$()", max_size=60))
def test_the_labelled_list_reader_never_raises_and_reads_every_element(text: str) -> None:
    read = labelled_values(text)
    if read is not None:
        kind, elements = read
        assert kind in ("list", "set", "tuple") and elements
        assert all(value.strip() and (label is None or label.islower()) for value, label in elements)


def test_labels_never_come_from_products_or_expressions() -> None:
    assert labelled_values("2x, 3y") is None
    assert labelled_values(r"3 ab, 5") is None
    assert labelled_values(r"x \text{ cm}, 1") is None
    assert labelled_values(r"\sqrt{2} \text{ cm}, 1") == ("list", ((r"\sqrt{2}", "cm"), ("1", None)))  # closed forms are values


# ---------------------------------------------------------------------------------------------
# 2. Closed forms with huge exponents: exact rational arithmetic, bounded

HUGE = [
    (r"\boxed{4^{2006}}", "2^{4012}", "correct"),
    (r"\boxed{6\times3^{2007}}", r"2\cdot3^{2008}", "correct"),
    (r"\boxed{\frac34-\frac{1}{4\cdot 3^{999}}}", r"\frac{3-3^{-999}}{4}", "correct"),
    (r"\boxed{8^{1000}}", r"2^{3000}", "correct"),
    (r"\boxed{\frac{2^{2000}}{2^{1999}}}", "2", "correct"),
    # never paid: differences far below any float's precision
    (r"\boxed{\frac34+\frac{1}{4\cdot 3^{1000}}}", r"\frac{3-3^{-999}}{4}", "wrong"),
    (r"\boxed{\frac34+\frac{1}{4\cdot 3^{1000}}}", r"\frac{3}{4}", "wrong"),
    (r"\boxed{\frac{3}{4}}", r"\frac34+3^{-500}", "wrong"),
    (r"\boxed{2^{4012}+1}", "4^{2006}", "wrong"),
    (r"\boxed{4^{2006}}", "2^{4013}", "wrong"),
    (r"\boxed{1 - 2^{-200}}", "1", "wrong"),
]


def test_closed_forms_with_huge_exponents_are_decided_exactly() -> None:
    _assert_cases(HUGE)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 9), st.integers(1, 400), st.integers(2, 5))
def test_equal_powers_are_equal_and_a_nudge_is_not(base: int, exponent: int, power: int) -> None:
    gold = f"{base}^{{{power * exponent}}}"
    same = f"\\boxed{{{base ** power}^{{{exponent}}}}}"
    nudged = f"\\boxed{{{base ** power}^{{{exponent}}} + {base}^{{-{exponent}}}}}"
    assert [v.status for v in maths.verify_batch([same, nudged], [gold, gold])] == ["correct", "wrong"]


@settings(max_examples=100, deadline=None)
@given(st.integers(-50, 50), st.integers(1, 50), st.integers(0, 3000))
def test_rational_value_is_exact(numerator: int, denominator: int, exponent: int) -> None:
    value = rational_value(rf"\frac{{{numerator}}}{{{denominator}}} + 3^{{-{exponent}}}")
    assert value == Fraction(numerator, denominator) + Fraction(1, 3 ** exponent)


_TERMS = st.tuples(st.integers(1, 60), st.integers(2, 9), st.integers(-300, 300), st.sampled_from(["+", "-"]))


@settings(max_examples=150, deadline=None)
@given(st.lists(_TERMS, min_size=1, max_size=5))
def test_rational_value_agrees_with_python_fractions(terms: list[tuple[int, int, int, str]]) -> None:
    latex, value = "", None
    for coefficient, base, exponent, operator in terms:
        term = Fraction(coefficient) * Fraction(base) ** exponent
        written = rf"\frac{{{coefficient}}}{{{base}^{{{-exponent}}}}}" if exponent < 0 else f"{coefficient}\\times{base}^{{{exponent}}}"
        if value is None:
            latex, value = written, term
        else:
            latex += f" {operator} {written}"
            value = value + term if operator == "+" else value - term
    assert rational_value(latex) == value, latex


@pytest.mark.parametrize("hostile", [
    "10^{10^{10}}", "2^{2^{2^{2^{2}}}}", "9^{9^{9}}", "(2^{16000})^{16000}", "2^{17000} - 2^{17000} + 1",
    "+".join(rf"\frac{{1}}{{{p}^{{3000}}}}" for p in (3, 5, 7, 11, 13, 17, 19, 23) * 5),
    "*".join(["3^{10000}"] * 60),
])
def test_exact_arithmetic_is_bounded(hostile: str) -> None:
    # each power is refused before it is built, each value past the bound as soon as it is made
    assert rational_value(hostile) is None and closed_form_value(hostile) is None


def test_a_hostile_exponent_is_never_paid() -> None:
    verdict = maths.verify(r"\boxed{10^{10^{10}}}", "10^{10^{10}}+1", timeout=5)
    assert verdict.status in ("wrong", "timeout")


# ---------------------------------------------------------------------------------------------
# 3. Set-builder notation against an interval

INTERVAL = r"(2,\infty)"
SET_BUILDER = [
    (r"\boxed{\{x \mid x > 2\}}", INTERVAL, "correct"),
    (r"\boxed{\{x : x>2\}}", INTERVAL, "correct"),
    (r"\boxed{\left\{ x \,\middle|\, x > 2 \right\}}", INTERVAL, "correct"),
    (r"\boxed{\{x \in \mathbb{R} \mid x > 2\}}", INTERVAL, "correct"),
    (r"\boxed{x \in (2, \infty)}", INTERVAL, "correct"),
    (r"\boxed{\{x \mid 2 < x\}}", INTERVAL, "correct"),
    (r"\boxed{(2, \infty)}", r"\{x \mid x > 2\}", "correct"),
    # wrong bounds, wrong openness, another variable's condition
    (r"\boxed{\{x \mid x \ge 2\}}", INTERVAL, "wrong"),
    (r"\boxed{\{x \mid x > 3\}}", INTERVAL, "wrong"),
    (r"\boxed{\{x \mid x < 2\}}", INTERVAL, "wrong"),
    (r"\boxed{x \in [2, \infty)}", INTERVAL, "wrong"),
    (r"\boxed{\{x \mid y > 2\}}", INTERVAL, "wrong"),
    (r"\boxed{\{x \mid -1 < x < 2\}}", INTERVAL, "wrong"),
]


def test_set_builder_sets_are_the_interval_they_describe() -> None:
    _assert_cases(SET_BUILDER)


@settings(max_examples=40, deadline=None)
@given(st.integers(-20, 20), st.integers(-20, 20), st.sampled_from([">", r"\ge", "<", r"\le"]),
       st.sampled_from([r"\mid", ":", "|"]))
def test_set_builder_pays_only_its_own_interval(bound: int, gold_bound: int, relation: str, bar: str) -> None:
    interval = {">": f"({bound}, \\infty)", r"\ge": f"[{bound}, \\infty)",
                "<": f"(-\\infty, {bound})", r"\le": f"(-\\infty, {bound}]"}[relation]
    gold = {">": f"({gold_bound}, \\infty)", r"\ge": f"({gold_bound}, \\infty)",
            "<": f"(-\\infty, {gold_bound})", r"\le": f"(-\\infty, {gold_bound})"}[relation]
    verdict = maths.verify(f"\\boxed{{\\{{x {bar} x {relation} {bound}\\}}}}", gold)
    assert verdict.correct == (interval == gold), (interval, gold, verdict.reason)


# ---------------------------------------------------------------------------------------------
# 4. Answers in prose

PROSE = [
    ("Therefore, there are **1680 distinct** arrangements of the beads, counting the 2 mirror images apart.", "1680",
     "correct"),
    ("Hence there are **1680 distinct** ways in total when we fix 2 beads.", "1680", "correct"),
    ("The answer is **1680 distinct** arrangements of the 2 letters.", "1680", "correct"),
    ("So the answer is 9. This means 2007 can be written as a sum of nine cubes.", "9", "correct"),
    ("Hence the answer is 9, which means 2007 works.", "9", "correct"),
    ("**The answer is 9.** This means 2007 works.", "9", "correct"),
    ("The answer is 9. Note that 2007 = 3^2 * 223.", "9", "correct"),
    # never paid: the bold or the answer states another number
    ("There are **2 distinct** arrangements, not 1680.", "1680", "wrong"),
    ("Therefore, there are **1679 distinct** arrangements of the 1680 beads.", "1680", "wrong"),
    ("Therefore, there are **1680 distinct** arrangements of the 2 letters. Actually, it is 1679.", "1680", "wrong"),
    ("If there are **1680 distinct** ways, then we get 12.", "1680", "wrong"),
    ("**The answer is 2007.** This means 9 works.", "9", "wrong"),
    ("Hence the answer is 2007, which means 9 works.", "9", "wrong"),
    ("The answer is 9, which means the answer is actually 10.", "9", "wrong"),  # a correction, not commentary
    ("The answer is **5** or **7**.", "5", "wrong"),  # bold alternatives stay a hedge
    ("So the answer is **5** or maybe **7**.", "5", "wrong"),
    ("**The answer is 5** or 7.", "5", "wrong"),
]


def test_prose_answers_are_read_from_their_statement() -> None:
    _assert_cases([(COT + completion, gold, expected) for completion, gold, expected in PROSE])


def test_a_bold_count_is_read_only_where_it_concludes() -> None:
    for text in ("We have **3 colours** to place.\n\nSo the number of ways is 12.",  # an earlier paragraph
                 "We paint **3 colours** first, which leaves 12."):  # no concluding word before it
        found = extract_answer(text)
        assert found is not None and found.text == "12", text


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 10**6), st.sampled_from(["distinct", "different ways", "arrangements"]))
def test_a_bold_count_is_read_before_a_later_number_of_its_sentence(answer: int, other: int, words: str) -> None:
    found = extract_answer(f"Therefore, there are **{answer} {words}** in total, counting the {other} pairs.")
    assert found is not None and found.text == str(answer)


# ---------------------------------------------------------------------------------------------
# 5. Golds written as sentences

PETYA = "Petya will receive the last token."
SENTENCES = [
    (r"\boxed{\text{Petya}}", PETYA, "correct"),
    (r"\boxed{\text{Petya will receive the last token}}", PETYA, "correct"),
    (r"\boxed{\text{Yes}}", "Yes", "correct"),
    (r"\boxed{\text{Yes, it is possible}}", "Yes", "correct"),
    (r"\boxed{\text{No}}", "No, it is not possible.", "correct"),
    (r"\boxed{\textbf{No}}", "No, it is not possible.", "correct"),
    (r"\boxed{\text{Yes}}", "Yes, it can be done.", "correct"),
    # never paid
    (r"\boxed{\text{Vasya}}", PETYA, "wrong"),
    (r"\boxed{5}", PETYA, "wrong"),
    (r"\boxed{\text{No}}", "Yes", "wrong"),
    (r"\boxed{\text{Yes}}", "No, it is not possible.", "wrong"),
    (r"\boxed{5}", "No, it is not possible.", "wrong"),
    (r"\boxed{\text{Yes and no}}", "No, it is not possible.", "error"),
    # not comparable: a verdict that says so (error: not the completion's fault)
    (r"\boxed{\text{Petya}}", "Petya will not receive the last token.", "error"),
    (r"\boxed{\text{impossible}}", "No, it is not possible.", "error"),
    (r"\boxed{\text{Petya gets it}}", PETYA, "error"),
]


def test_sentence_golds_are_compared_where_safe() -> None:
    _assert_cases(SENTENCES)


NAMED_OPTIONS = [
    (r"\boxed{C}", r"\text{(C) Parabola}", "correct"),
    (r"\boxed{\text{(C)}}", "(C) Parabola", "correct"),
    (r"\boxed{\text{parabola}}", "(C) Parabola", "correct"),
    (r"\boxed{C}", "Option C", "correct"),
    (r"\boxed{B}", r"\textbf{(B) }12", "correct"),
    (r"\boxed{12}", r"\textbf{(B) }12", "correct"),
    (r"\boxed{\frac{24}{2}}", "(B) 12", "correct"),
    # never paid
    (r"\boxed{D}", "(C) Parabola", "wrong"),
    (r"\boxed{\text{Hyperbola}}", "(C) Parabola", "wrong"),
    (r"\boxed{B}", "Option C", "wrong"),
    (r"\boxed{13}", "(B) 12", "wrong"),
    (r"\boxed{\textbf{(B) }13}", r"\textbf{(B) }12", "wrong"),  # the right letter with another value
    (r"\boxed{\textbf{(D) }12}", r"\textbf{(B) }12", "wrong"),  # another letter
    (r"\boxed{\text{(A) and (B)}}", "(B) 12", "wrong"),
]


def test_named_options_pay_their_letter_or_what_they_name() -> None:
    _assert_cases(NAMED_OPTIONS)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from("ABCDE"), st.sampled_from("ABCDE"), st.integers(-99, 99), st.sampled_from(
    [r"\textbf{{({letter}) }}{value}", "({letter}) {value}", "{letter}. {value}", r"\mathrm{{({letter})}}\ {value}"]))
def test_a_named_option_pays_only_its_own_letter(letter: str, other: str, value: int, form: str) -> None:
    gold = form.format(letter=letter, value=value)
    verdicts = maths.verify_batch([rf"\boxed{{{other}}}", rf"\boxed{{{value}}}", rf"\boxed{{{value + 1}}}"], [gold] * 3)
    assert [v.correct for v in verdicts] == [other == letter, True, False], (gold, [v.reason for v in verdicts])


def test_a_yes_or_no_after_an_answer_phrase_is_read() -> None:
    gold = "No, it is not possible."
    _assert_cases([(COT + "The answer is no.", gold, "correct"),
                   (COT + "Final answer: No, it is impossible.", gold, "correct"),
                   (COT + "Final answer: Yes.", gold, "wrong"),
                   (COT + "The answer is no longer 5. The answer is 6.", "6", "correct")])
    found = extract_answer("The answer is yes, since $x = 3$.")
    assert found is not None and found.text == "x = 3"  # a yes that leads to maths is no answer of its own


def test_a_sentence_gold_that_cannot_be_compared_says_so() -> None:
    verdict = maths.verify(r"\boxed{\text{impossible}}", "No, it is not possible.")
    assert verdict.status == "error" and verdict.details["gold_kind"] == "sentence"
    assert "is a sentence" in verdict.reason and "not judged" in verdict.reason


def test_word_golds_keep_their_words_check() -> None:
    _assert_cases([(r"\boxed{x+1}", "Tuesday", "wrong"), (r"\boxed{\text{Wednesday}}", "Tuesday", "wrong"),
                   (r"\boxed{\text{the isosceles triangle}}", "isosceles triangle", "correct")])


def test_named_choices_need_one_name_said_plainly() -> None:
    assert named_choice(PETYA) == "petya"
    for gold in ("Petya will not win.", "Petya wins if n is odd.", "The first player wins.", "Petya or Vasya wins.",
                 "Petya beats Vasya.", "It is 5."):
        assert named_choice(gold) is None, gold


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["Yes", "No", "yes", "no", "YES"]), st.sampled_from(["", ".", ",", "!"]),
       st.sampled_from(["", " it is possible", " there is such a number", " it cannot be done"]))
def test_yes_or_no_reads_the_opening_word(word: str, mark: str, rest: str) -> None:
    text = f"{word}{mark}{rest}"
    assert yes_or_no(text) is (word.lower() == "yes")
    assert yes_or_no(rf"\text{{{text}}}") is (word.lower() == "yes")
    assert yes_or_no(f"{text}, or {'no' if word.lower() == 'yes' else 'yes'}") is None  # both said: neither


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_the_sentence_readers_never_raise(text: str) -> None:
    is_sentence(text)
    yes_or_no(text)
    named_choice(text)
