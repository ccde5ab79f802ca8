"""The worker's check that two expressions in variables differ as functions (values far apart at
two points) decides only pairs math-verify would also find unequal, and leaves every equal pair
(however it is written) to math-verify."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from math_verify import verify
from sympy import expand, factor, latex, sympify, together

from referee.verifiers.math import sympy_worker
from referee.verifiers.math.options import CompareOptions

LEAVES = st.sampled_from(["x", "n", "k", "1", "2", "3", "7", "1/2", "pi", "sqrt(2)"])


def _tree(children):
    return st.one_of(
        st.tuples(st.sampled_from(["+", "-", "*"]), children, children).map(lambda t: f"({t[1]} {t[0]} {t[2]})"),
        st.tuples(children, st.sampled_from(["2", "3"])).map(lambda t: f"({t[0]})**{t[1]}"),
        children.map(lambda c: f"floor({c})"), children.map(lambda c: f"sin({c})"), children.map(lambda c: f"log({c} + 3)"),
        LEAVES.map(lambda leaf: f"factorial({leaf})"), st.tuples(children, children).map(lambda t: f"({t[0]})/({t[1]} + 5)"))


EXPRESSIONS = st.recursive(LEAVES, _tree, max_leaves=6).map(sympify)


def _decides_unequal(gold: str, answer: str) -> bool:
    return sympy_worker._differ_as_functions(sympy_worker._parse(gold), sympy_worker._parse(answer))


def _math_verify_equal(gold: str, answer: str) -> bool:
    return verify(sympy_worker._parse(gold), sympy_worker._parse(answer), timeout_seconds=None)


@settings(max_examples=60)
@given(EXPRESSIONS, EXPRESSIONS)
def test_a_pair_it_decides_is_a_pair_math_verify_finds_unequal(first, second):
    gold, answer = latex(first), latex(second)
    if _decides_unequal(gold, answer):
        assert not _math_verify_equal(gold, answer), (gold, answer)


@settings(max_examples=60)
@given(EXPRESSIONS)
def test_an_expression_written_another_way_is_never_decided(expression):
    for rewritten in (expand(expression), factor(expression), together(expression)):
        assert not _decides_unequal(latex(expression), latex(rewritten)), (expression, rewritten)


@pytest.mark.parametrize("gold, answer", [
    ("3 n", "3(n-1)n^2"),  # equal at the golden ratio: n^2 - n - 1 = 0 there
    (r"\lfloor\frac{2 n-1}{5}\rfloor", "n - 2"),
    ("x-1", r"\sin(\pi x) - 1"),
    ("508", r"\frac{r_{1}}{\sqrt[3]{r_{2}}} + \frac{r_{2}}{\sqrt[3]{r_{1}}}"),
    (r"\frac{d !}{2 k(d-k) !}", r"\frac{(d-1)!}{(d-k)!}"),
])
def test_expressions_real_answers_give_are_decided_unequal_as_math_verify_decides(gold, answer):
    assert _decides_unequal(gold, answer)
    assert not _math_verify_equal(gold, answer)
    assert sympy_worker.equivalent(gold, answer, CompareOptions()) == (False, True)


@pytest.mark.parametrize("gold, answer", [
    ("x+1", "1+x"), (r"\frac{x^2-1}{x-1}", "x+1"), (r"\frac{n(n+1)}{2}", r"\frac{n^2+n}{2}"),
    (r"\sin^2 x + \cos^2 x", "1"),  # equal, one side has no variables left
    ("f(x)", "x"), ("y = 2x", "2x"), (r"\{x, 1\}", "x"), ("x", "y"), (r"\sum_{k=1}^{n} k", "n"),
    (r"x \cdot 50\%", "x"), (r"\lfloor x \rfloor", r"\lfloor x \rfloor + 10^{-9}"),  # close at both points
])
def test_equal_pairs_and_shapes_it_does_not_judge_are_left_to_math_verify(gold, answer):
    assert not _decides_unequal(gold, answer)


def test_variables_are_matched_loosely_only_by_math_verify():
    """Without strict comparison math-verify renames variables (x + 1 equals y + 1): the check stays out."""
    loose = CompareOptions(strict=False)
    assert sympy_worker.equivalent("x+1", "y+1", loose) == (True, True)
    assert sympy_worker.equivalent("x+1", "y+1", CompareOptions()) == (False, True)


@pytest.mark.parametrize("gold, answer, equal", [
    ("0", "2^{626}-2^{626}", True),  # cancels exactly: 30 digits of each power cannot tell
    ("5", "2^{626}-2^{626}", False),
    ("n", r"n + 2^{200} - 2^{200}", None),  # whatever math-verify finds, never decided by values alone
])
def test_values_that_cancel_beyond_the_working_precision_are_left_to_math_verify(gold, answer, equal):
    expected = _math_verify_equal(gold, answer) if equal is None else equal
    assert sympy_worker.equivalent(gold, answer, CompareOptions())[0] == expected
