from pathlib import Path

import pytest

from referee.recipes.cli import main
from referee.rewards import compose_rewards, get_reward
from referee.rewards.testing import assert_golden, golden_params

GOLDEN = Path(__file__).parent / "golden" / "code.jsonl"
ADD_TESTS = {"format": "asserts", "asserts": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add(2, 2) == 4"]}


@pytest.mark.parametrize("case", golden_params(GOLDEN))
def test_code_pass_rate_golden_file(case):
    assert_golden("code_pass_rate", case)


def test_referee_check_on_the_code_golden_file():
    assert main(["check", "code_pass_rate", str(GOLDEN)]) == 0


def test_all_pass_gives_no_partial_credit():
    completions = ["```python\ndef add(a, b):\n    return a + b\n```", "```python\ndef add(a, b):\n    return 3\n```"]
    assert get_reward("code_pass_rate")(completions=completions, tests=[ADD_TESTS] * 2) == [1.0, pytest.approx(1 / 3)]
    assert get_reward("code_all_pass")(completions=completions, tests=[ADD_TESTS] * 2) == [1.0, 0.0]


def test_a_hanging_program_is_its_own_fault():
    logged = {}
    reward = get_reward("code_all_pass", timeout=1.0, name="code_fast")
    hanging = "```python\ndef add(a, b):\n    while True:\n        pass\n```"
    tests = {"format": "asserts", "asserts": ["assert add(1, 2) == 3"]}
    assert reward(completions=[hanging], tests=[tests], log_metric=logged.__setitem__) == [0.0]
    assert logged["rewards/code_fast/timeout"] == 1.0 and logged["rewards/code_fast/error"] == 0.0


def test_code_rewards_compose_with_a_code_block_format():
    funcs, weights = compose_rewards([("code_pass_rate", 1.0), ("code_format", 0.2)])
    assert [f.__name__ for f in funcs] == ["code_pass_rate", "code_format"] and weights == [1.0, 0.2]


def test_a_language_column_names_the_language_of_tests_that_name_none():
    from referee.rewards.verdict_rewards import VerifierReward
    from referee.verifiers.code import find_toolchain
    if find_toolchain("c") is None:
        pytest.skip("no gcc here")
    reward = VerifierReward("code_pass_rate", "code", gold_column="tests")
    tests = {"format": "stdio", "inputs": ["2 3\n"], "outputs": ["5\n"]}
    program = "```\n#include <stdio.h>\nint main(void) { int a, b; scanf(\"%d %d\", &a, &b); printf(\"%d\\n\", a + b); }\n```"
    assert reward(completions=[program, program], tests=[tests, {**tests, "language": "python"}],
                  language=["c", "c"]) == [1.0, 0.0]  # the tests dict's own language wins
    assert reward(completions=[program], tests=[tests]) == [0.0]  # without it: Python


def test_referee_check_judges_code_golds_in_other_languages():
    """C++ stdio and HumanEval-X golds, a dataset's language column, JavaScript call tests."""
    from referee.verifiers.code import find_toolchain
    if find_toolchain("cpp") is None or find_toolchain("javascript") is None:
        pytest.skip("needs g++ and node")
    assert main(["check", "code_pass_rate", str(GOLDEN.parent / "code_languages.jsonl")]) == 0
