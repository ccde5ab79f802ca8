"""Routing a trainer's sample to a verifier: the data_source table, explicit names, code test shapes."""

import json

import pytest

from referee.rewards.trainers.routing import (
    DATA_SOURCES,
    RefereeStop,
    UnknownDataSource,
    code_tests,
    route,
    verifier_for_source,
)


@pytest.mark.parametrize("source, verifier", [
    ("openai/gsm8k", "gsm8k"),
    ("lighteval/MATH", "math"),
    ("DigitalLearningGmbH/MATH-lighteval", "math"),
    ("HuggingFaceH4/MATH-500", "math"),
    ("math_dapo", "math"),
    ("aime2024", "math"),        # a prefix family, as verl scores it
    ("aime_2025", "math"),
    ("numina_olympiads", "math"),
    ("codecontests", "code"),
    ("apps", "code"),
    ("taco", "code"),
    ("livecodebench/v5", "code"),
])
def test_known_sources(source, verifier):
    assert verifier_for_source(source) == verifier


def test_every_table_entry_names_a_real_verifier():
    from referee.verifiers import VERIFIER_NAMES

    assert set(DATA_SOURCES.values()) <= set(VERIFIER_NAMES)


def test_an_exact_name_wins_over_a_prefix():
    assert verifier_for_source("math") == "math" and verifier_for_source("mathematics") is None


def test_an_explicit_verifier_wins_over_the_data_source():
    chosen = route("openai/gsm8k", "\\frac12", {"verifier": "math"})
    assert (chosen.verifier, chosen.decided_by) == ("math", "extra_info['verifier']")


def test_a_label_dict_names_its_verifier_and_gold():
    chosen = route(None, {"verifier": "gsm8k", "answer": "18"})
    assert (chosen.verifier, chosen.gold, chosen.problem) == ("gsm8k", "18", None)


def test_the_default_verifier_is_the_last_resort_for_samples_without_a_source():
    assert route(None, "18", default_verifier="gsm8k").decided_by == "the default_verifier option"
    assert route("", "18", default_verifier="gsm8k").decided_by == "the default_verifier option"
    assert route("lighteval/MATH", "1", default_verifier="gsm8k").verifier == "math"


def test_a_typod_data_source_is_refused_even_with_a_default_verifier():
    """Issue 34: a typo'd data_source went silently to the default verifier."""
    with pytest.raises(UnknownDataSource) as caught:
        route("lighteval/MAHT", "1/2", default_verifier="gsm8k")
    assert "did you mean 'lighteval/MATH'" in str(caught.value) and "data_sources" in str(caught.value)


def test_the_data_sources_option_names_sources_and_a_catch_all():
    assert route("my/data", "18", data_sources={"my/data": "gsm8k"}).verifier == "gsm8k"
    assert route("lighteval/MATH", "1", data_sources={"lighteval/MATH": "gsm8k"}).verifier == "gsm8k"  # the user's word wins
    chosen = route("anything/else", "1/2", data_sources={"*": "math"})
    assert (chosen.verifier, chosen.decided_by) == ("math", "the data_sources option ('*')")
    assert route("openai/gsm8k", "18", data_sources={"*": "math"}).verifier == "gsm8k"  # '*' only for unknown names
    with pytest.raises(UnknownDataSource, match="'maths'"):
        route("my/data", "18", data_sources={"my/data": "maths"})


@pytest.mark.parametrize("source", ["my/dataset", None, 17])
def test_an_unknown_source_names_the_key_to_set(source):
    with pytest.raises(UnknownDataSource) as caught:
        route(source, "18")
    option = "default_verifier" if source is None else "data_sources"  # the default judges unnamed sources only
    assert "extra_info['verifier']" in str(caught.value) and option in str(caught.value)
    assert not isinstance(caught.value, Exception) and isinstance(caught.value, RefereeStop)


def test_a_misspelt_verifier_name_is_refused():
    with pytest.raises(UnknownDataSource, match="'gms8k'"):
        route("x", "18", {"verifier": "gms8k"})


def test_verl_stdio_tests_from_ground_truth_json():
    stored = json.dumps({"inputs": ["1 2\n"], "outputs": ["3\n"]})
    assert route("codecontests", stored).gold == {"format": "stdio", "inputs": ["1 2\n"], "outputs": ["3\n"]}


def test_verl_call_tests_from_extra_info():
    tests = {"fn_name": "add", "inputs": [[1, 2]], "outputs": [3]}
    chosen = route("apps", None, {"tests": tests})
    assert chosen.gold == {"format": "call", "fn_name": "add", "inputs": [[1, 2]], "outputs": [3]}


def test_referee_tests_pass_through_unchanged():
    tests = {"format": "asserts", "asserts": ["assert f(1) == 2"]}
    assert route("taco", tests).gold == tests
    assert route(None, {"verifier": "code", "tests": tests}).gold == tests


def test_stdin_given_as_lines_is_one_text():
    assert code_tests({"inputs": [["1", "2"]], "outputs": ["3\n"]})["inputs"] == ["1\n2"]


@pytest.mark.parametrize("ground_truth, extra", [(None, {}), ("", None), ("#### 18", {"tests": "not json"})])
def test_missing_code_tests_are_a_problem_not_a_crash(ground_truth, extra):
    chosen = route("codecontests", ground_truth, extra)
    assert chosen.verifier == "code" and chosen.gold is None
    assert "ground_truth or extra_info['tests']" in chosen.problem


def test_a_missing_gold_answer_is_a_problem():
    assert route("openai/gsm8k", None).problem == "no gold answer for this sample (ground_truth is None)"


def test_a_codecontests_row_keeps_its_language_and_limits():
    """CodeContests and Codeforces rows in C++ or Java: the language (in the stored tests, or in
    verl's extra_info) and the problem's limits reach the code verifier, which otherwise would
    judge the program as Python with the default limits."""
    stored = json.dumps({"inputs": ["1 2\n"], "outputs": ["3\n"], "time_limit": {"seconds": 2, "nanos": 0},
                         "memory_limit_bytes": 268435456})
    gold = route("codecontests", stored, {"language": "cpp"}).gold
    assert gold == {"format": "stdio", "inputs": ["1 2\n"], "outputs": ["3\n"], "time_limit": {"seconds": 2, "nanos": 0},
                    "memory_limit_bytes": 268435456, "language": "cpp"}
    assert route("taco", json.dumps({"inputs": ["1\n"], "outputs": ["1\n"], "language": "java"}),
                 {"language": "cpp"}).gold["language"] == "java"  # the tests' own word wins
    assert route("codeforces", {"verifier": "code", "language": "go",
                                "tests": {"format": "stdio", "inputs": ["1"], "outputs": ["1"]}}).gold["language"] == "go"
