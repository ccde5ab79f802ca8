"""Reading test formats from dataset dicts, and comparing outputs on the trusted side."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers.code import formats
from referee.verifiers.code.outputs import call_output_matches, first_difference, stdout_matches, values_match


@pytest.mark.parametrize(("tests", "message"), [
    (None, "must be a dict"),
    ('{"format": "call"}', "must be a dict"),
    ({}, "format None is not one of"),
    ({"format": "humaneval", "entry_point": "f"}, "tests\\['test'\\] must be a non-empty string"),
    ({"format": "humaneval", "test": "def check(c): pass", "entry_point": "not a name"}, "Python function name"),
    ({"format": "asserts", "asserts": []}, "non-empty list"),
    ({"format": "asserts", "asserts": "assert f(1) == 2"}, "non-empty list"),
    ({"format": "asserts", "asserts": ["assert f(1) == 2", 3]}, "list of non-empty strings"),
    ({"format": "asserts", "asserts": ["assert f(1) == 2"], "setup": 3}, "tests\\['setup'\\]"),
    ({"format": "call", "fn_name": "f", "inputs": [[1]], "outputs": [1, 2]}, "1 inputs but 2 outputs"),
    ({"format": "call", "fn_name": "f", "inputs": [1], "outputs": [1]}, "must be the list of arguments"),
    ({"format": "call", "fn_name": "", "inputs": [[1]], "outputs": [1]}, "Python function name"),
    ({"format": "stdio", "inputs": ["1"], "outputs": [1]}, "must hold strings"),
    ({"format": "stdio", "inputs": ["1", "2"], "outputs": ["1"]}, "2 inputs but 1 outputs"),
])
def test_unusable_tests_are_named_in_one_sentence(tests, message):
    with pytest.raises(formats.TestsError, match=message):
        formats.parse_tests(tests)


def test_each_format_counts_its_tests():
    assert formats.count_tests(formats.parse_tests({"format": "humaneval", "test": "x", "entry_point": "f"})) == 1
    assert formats.count_tests(formats.parse_tests({"format": "asserts", "asserts": ["a", "b"]})) == 2
    assert formats.count_tests(formats.parse_tests(
        {"format": "call", "fn_name": "f", "inputs": [[1], [2], [3]], "outputs": [1, 2, 3]})) == 3
    assert formats.count_tests(formats.parse_tests({"format": "stdio", "inputs": ["1"], "outputs": ["1"]})) == 1


def test_extra_dataset_columns_are_ignored():
    spec = formats.parse_tests({"format": "asserts", "asserts": ["assert True"], "task_id": 7, "setup": None})
    assert spec == formats.AssertTests(("assert True",), "")


@pytest.mark.parametrize(("got", "expected", "tolerances", "same"), [
    ([1, 2], (1, 2), {}, True),
    ({"a": (1, [2])}, {"a": [1, (2,)]}, {}, True),
    (0.1 + 0.2, 0.3, {}, False),
    (0.1 + 0.2, 0.3, {"abs_tol": 1e-9}, True),
    (100.0, 101, {"rel_tol": 0.02}, True),
    (True, 1, {}, True),  # Python's own equality, as every harness compares
    ("1", 1, {}, False),
    ([1, 2], [1, 2, 3], {}, False),
    (float("nan"), float("nan"), {"abs_tol": 1.0}, False),
    ({"a": 1}, {"b": 1}, {}, False),
])
def test_values_match(got, expected, tolerances, same):
    assert values_match(got, expected, **tolerances) is same


def test_call_outputs_may_be_wrapped_in_a_list_as_apps_stores_them():
    assert call_output_matches(3, [3]) and call_output_matches([1, 2], [[1, 2]])
    assert not call_output_matches(3, [3, 3]) and not call_output_matches([3], 3)


@pytest.mark.parametrize(("got", "expected", "tolerances", "same"), [
    ("3\n", "3", {}, True),
    ("3 4\n5\n", "3  4\r\n5\n\n\n", {}, True),
    ("\n\n3\n", "3\n", {}, True),
    ("3 4", "3\n4", {}, False),
    ("34", "3 4", {}, False),
    ("0.3333333", "0.33333333", {}, False),
    ("0.3333333", "0.33333333", {"abs_tol": 1e-6}, True),
    ("1e-9", "0", {"abs_tol": 1e-6}, True),
    ("YES", "yes", {}, False),
    ("nan", "nan", {"abs_tol": 1.0}, True),  # identical tokens match as text
    ("inf", "1e999", {"abs_tol": 1.0}, False),  # "inf" is not a decimal token
])
def test_stdout_matches(got, expected, tolerances, same):
    assert stdout_matches(got, expected, **tolerances) is same


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.lists(st.text(alphabet="abc019.-", min_size=1, max_size=5), min_size=1, max_size=4),
                      max_size=5),
       spaces=st.sampled_from([" ", "  ", "\t", " \t "]), newline=st.sampled_from(["\n", "\r\n", "\n\n"]))
def test_spacing_never_matters_but_tokens_do(lines, spaces, newline):
    canonical = "\n".join(" ".join(tokens) for tokens in lines)
    respaced = newline.join(spaces.join(tokens) + spaces for tokens in lines) + newline
    assert stdout_matches(respaced, canonical)
    if lines:
        changed = [list(tokens) for tokens in lines]
        changed[-1][-1] += "x"
        assert not stdout_matches("\n".join(" ".join(t) for t in changed), canonical)
        assert "line" in first_difference("\n".join(" ".join(t) for t in changed), canonical)
