"""referee audit --tool-turns: rewards for training with a Python tool must read the final assistant message only."""

import json

import pytest

from referee.recipes.cli import main
from referee.rewards import completion_text, get_reward, parse_reward_sum
from referee.rewards.audit import audit_reward
from referee.rewards.tool_probes import TOOL_PROBES, shown_completion, tool_conversation

ROWS = [
    {"prompt": "Natalia sold clips to 48 of her friends in April, and then half as many in May. How many in all?",
     "answer": "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips.\n#### 72"},
    {"prompt": "What is three quarters plus one eighth?", "answer": "\\frac{7}{8}"},
    {"prompt": [{"role": "user", "content": "Compute 1234 * 5678."}], "answer": "7006652"},
]
TOOL_NAMES = [probe.name for probe in TOOL_PROBES]


def tool_verdicts(report):
    return {result.probe.name: result.verdict for result in report.results if result.probe.name in TOOL_NAMES}


def all_messages(completions, answer, **kwargs):
    """A reward that reads every message of a conversation, the tool's too (the mistake the probes catch)."""
    texts = [c if isinstance(c, str) else " ".join(str(m.get("content", "")) for m in c) for c in completions]
    return [1.0 if gold.split()[-1].strip("\\frac{}") in text else 0.0 for text, gold in zip(texts, answer)]


def first_message(completions, answer, **kwargs):
    """A reward that reads the first message of a conversation: it misses the answer given after a tool turn."""
    texts = [c if isinstance(c, str) else c[0]["content"] for c in completions]
    return [1.0 if gold.split()[-1] in text else 0.0 for text, gold in zip(texts, answer)]


@pytest.mark.parametrize("name", ["math_accuracy", "gsm8k_accuracy"])
def test_referees_rewards_pay_the_final_message_after_a_tool_turn_and_nothing_else(name):
    rows = ROWS if name == "math_accuracy" else [ROWS[0], ROWS[2]]
    report = audit_reward(get_reward(name), rows, tool_turns=True)
    assert report.problem is None and not report.failed
    assert tool_verdicts(report) == dict.fromkeys(TOOL_NAMES, "ok")


def test_a_sum_with_a_format_term_is_probed_in_the_format_it_reads():
    report = audit_reward(parse_reward_sum("math_accuracy + 0.1*answer_format"), ROWS, tool_turns=True)
    assert tool_verdicts(report) == dict.fromkeys(TOOL_NAMES, "ok")


def test_a_reward_that_reads_tool_output_fails():
    verdicts = tool_verdicts(audit_reward(all_messages, ROWS, tool_turns=True))
    assert verdicts["answer_in_tool_output"] == verdicts["tool_says_correct"] == "fail"
    assert verdicts["gold_read_by_the_tool"] == "fail"


def test_a_reward_that_misses_the_answer_after_a_tool_turn_is_a_problem():
    report = audit_reward(first_message, [ROWS[0], ROWS[2]], tool_turns=True)
    assert report.failed and "does not read the last assistant message" in report.problem


def test_without_the_flag_no_tool_probe_runs():
    assert not tool_verdicts(audit_reward(get_reward("math_accuracy"), ROWS))


def test_probes_never_state_the_right_answer_in_the_final_message():
    from referee.rewards.audit import probe_answers

    answers = probe_answers("#### 72")
    for probe in TOOL_PROBES:
        conversation = probe.build(answers)
        assert [m["role"] for m in conversation] == ["assistant", "tool", "assistant"]
        assert "72" not in completion_text(conversation)
        assert "72" in shown_completion(conversation)  # the tool turn holds it


def test_cli_tool_turns(tmp_path, capsys):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    assert main(["audit", "math_accuracy", str(data), "--tool-turns", "--json"]) == 0
    probes = {probe["probe"]: probe for probe in json.loads(capsys.readouterr().out)["probes"]}
    assert {name: probes[name]["verdict"] for name in TOOL_NAMES} == dict.fromkeys(TOOL_NAMES, "ok")
    assert main(["audit", "math_accuracy", str(data)]) == 0
    assert "answer_in_tool_output" not in capsys.readouterr().out


def test_golden_cases_with_tool_turns(tmp_path, capsys):
    cases = [{"completion": tool_conversation("print(6 * 7)", "42", "The answer is $\\boxed{42}$."), "answer": "42",
              "expected": 1.0},
             {"completion": tool_conversation("print(6 * 7)", "42", "See the output above."), "answer": "42",
              "expected": 0.0}]
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")
    assert main(["check", "math_accuracy", str(golden)]) == 0
