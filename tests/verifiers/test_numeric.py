from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from referee.verifiers.numeric import first_number, format_number, iter_numbers, last_number, parse_number

exact = st.fractions(max_denominator=10**6).filter(lambda f: abs(f) < 10**15)
decimals = st.decimals(min_value=-10**9, max_value=10**9, places=4, allow_nan=False, allow_infinity=False)


@given(exact)
def test_format_then_parse_is_exact(value):
    assert parse_number(format_number(value)) == value


@given(decimals)
def test_decimal_text_reads_back_exactly(value):
    text = format(value, "f")
    assert parse_number(text) == Fraction(value)
    assert parse_number(f"{value:,f}") == Fraction(value)


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("16 - 3 - 4 = 9", [16, 3, 4, 9]),
        ("16-3", [16, 3]),
        ("x = -3 and (-4)", [-3, -4]),
        ("\u22125 and \u20136", [-5, -6]),
        ("$1,234.50 and 1,2,3", [Fraction(246900, 200), 1, 2, 3]),
        ("costs -$3", [-3]),
        ("\\$18 or \\frac{3}{4} or -\\dfrac{1}{2}", [18, Fraction(3, 4), Fraction(-1, 2)]),
        ("50% and 12 \\%", [50, 12]),
        ("3/4 of 12", [Fraction(3, 4), 12]),
        ("1/0 is no number", []),
        ("version2 x3 abc.5", []),
        ("18. Then .5", [18, Fraction(1, 2)]),
    ],
)
def test_numbers_in_text(text, values):
    assert [m.value for m in iter_numbers(text)] == values


def test_first_last_and_percent_flag():
    assert first_number("nothing") is None and last_number("") is None
    found = last_number("a 20% tip on $30")
    assert found.value == 30 and not found.percent
    assert first_number("a 20% tip").percent


def test_absurd_digit_runs_are_skipped_not_fatal():
    assert first_number("9" * 5000) is None
    assert last_number("9" * 5000 + " then 7").value == 7


@pytest.mark.parametrize("text", ["", "abc", "3 or 4", "1/0"])
def test_parse_number_needs_exactly_one_number(text):
    assert parse_number(text) is None


# Pieces of long texts: numbers in every shape, what may sit inside or between them, and
# letters (some of them those of "\frac"); long fillers push the answer past the tail window.
text_pieces = st.sampled_from(
    ["18", "1,234.5", "3 / 4", "-7", " - ", "$", "\\$ 5", "\\frac{ 1 }{ 2 }", "\\dfrac", "50 %", "0/0", "9" * 1200,
     ".", ",", " ", "\n", "x", "frac", "c", "=", "(", ")", "**", "the answer is ", "a" * 300, " " * 300, "1" * 300,
     "12 " * 100, "é"]
)


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(text_pieces, max_size=30))
@example(pieces=[" " * 300, "\\frac{ 1 }{ 2 }"])  # the tail starts inside a LaTeX fraction
@example(pieces=[" " * 300, "$", " ", "7", " %"])
@example(pieces=["1" * 300, "x" * 300])  # no number in the tail
def test_last_number_is_the_last_of_all_numbers(pieces):
    text = "".join(pieces)
    every = list(iter_numbers(text))
    assert last_number(text) == (every[-1] if every else None), text


@pytest.mark.parametrize("text, value", [("18", 18), ("18.00", 18), ("36/2", 18), ("\\frac{4}{2}", 2), ("-3", -3),
                                         ("0.5", Fraction(1, 2)), ("3/4", Fraction(3, 4)), ("1,234.50", Fraction(2469, 2))])
def test_values_are_fractions_and_whole_ones_ints_on_request(text, value):
    read, fast = first_number(text).value, first_number(text, whole_as_int=True).value
    assert read == fast == value
    assert type(read) is Fraction and type(fast) is type(value)
    assert read / 4 == Fraction(value) / 4  # exact division by default
