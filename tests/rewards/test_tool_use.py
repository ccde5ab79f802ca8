"""tool_use: paid for calling the Python tool only beside a right final answer."""

import pytest

from referee.rewards import get_reward, parse_reward_sum
from referee.rewards.audit import audit_reward
from referee.rewards.tool_probes import tool_conversation
from referee.rewards.tools import ToolUseReward, tool_calls


def boxed(answer):
    return f"So the answer is $\\boxed{{{answer}}}$."


def test_only_a_right_answer_found_with_the_tool_is_paid():
    reward = get_reward("tool_use")
    completions = [tool_conversation("print(1234 * 5678)", "7006652", boxed(7006652)),
                   tool_conversation("print(1234 * 5678)", "7006652", boxed(7006653)),
                   [{"role": "assistant", "content": boxed(7006652)}],
                   boxed(7006652),
                   tool_conversation("print(1)", "1", "I am not sure.")]
    assert reward(completions=completions, answer=["7006652"] * 5) == [1.0, 0.0, 0.0, 0.0, 0.0]


def test_calls_of_another_tool_or_too_few_do_not_count():
    search = tool_conversation("x", "y", boxed(42))
    search[0]["tool_calls"][0]["function"]["name"] = "search"
    assert tool_calls(search, "python") == 0
    twice = tool_conversation("a = 6 * 7", "", "") [:2] + tool_conversation("print(a)", "42", boxed(42))
    assert tool_calls(twice, "python") == 2
    assert ToolUseReward(min_calls=2)(completions=[twice, tool_conversation("print(42)", "42", boxed(42))],
                                      answer=["42", "42"]) == [1.0, 0.0]


def test_an_unusable_gold_is_none_not_a_zero():
    assert get_reward("tool_use")(completions=[tool_conversation("1", "1", boxed(1))], answer=[None]) == [None]


def test_gsm8k_answers_and_their_column():
    reward = get_reward("tool_use", when_correct="gsm8k")
    conversation = tool_conversation("print(48 + 24)", "72", "Natalia sold 72 clips.\n#### 72")
    assert reward(completions=[conversation], answer=["... so 72.\n#### 72"]) == [1.0]


@pytest.mark.parametrize("options, message", [({"min_calls": 0}, "min_calls=0"),
                                              ({"when_correct": "code"}, "when_correct='code'")])
def test_bad_options_are_one_line(options, message):
    with pytest.raises(ValueError, match=message):
        get_reward("tool_use", **options)


def test_beside_correctness_at_a_tenth_it_never_pays_a_hack():
    rows = [{"prompt": "Compute 1234 * 5678.", "answer": "7006652"}, {"prompt": "What is two to the tenth power?", "answer": "1024"}]
    report = audit_reward(parse_reward_sum("math_accuracy + 0.1*tool_use"), rows, tool_turns=True)
    assert report.problem is None and not report.failed
