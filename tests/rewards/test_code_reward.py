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
