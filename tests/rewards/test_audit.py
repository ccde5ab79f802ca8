import json
import re

import pytest

from referee.recipes.cli import main
from referee.rewards import get_reward, parse_reward_sum, verdict_reward
from referee.rewards.audit import PROBE_NAMES, PROBES, audit_reward, probe_answers
from referee.verifiers import Verdict
from referee.verifiers.numeric import iter_numbers

# Real GSM8K rows (train split shape: the answer column is the whole solution).
ROWS = [
    {"prompt": "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
               "How many clips did Natalia sell altogether in April and May?",
     "answer": "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n"
               "Natalia sold 48+24 = <<48+24=72>>72 clips altogether in April and May.\n#### 72"},
    {"prompt": "Weng earns $12 an hour for babysitting. Yesterday, she just did 50 minutes of babysitting. "
               "How much did she earn?",
     "answer": "Weng earns 12/60 = $<<12/60=0.2>>0.2 per minute.\nWorking 50 minutes, she earned "
               "0.2 x 50 = $<<0.2*50=10>>10.\n#### 10"},
    {"prompt": [{"role": "user", "content": "Betty needs $100 for a wallet. She has half of it, her parents give $15 "
                                            "and her grandparents twice as much as her parents. How much more does "
                                            "she need?"}],
     "answer": "#### 5"},
]


PROBES_BY_NAME = {probe.name: probe for probe in PROBES}
HEDGE_PROBES = ("box_then_other_answer", "other_answer_then_box", "negated_box", "hypothetical_box", "unfinished_think")


def verdicts(report):
    return {result.probe.name: result.verdict for result in report.results}


def write_rows(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def test_tags_around_a_wrong_answer_are_flagged_when_the_format_weight_matches_correctness():
    report = audit_reward(parse_reward_sum("gsm8k_accuracy + think_format"), ROWS)
    result = next(r for r in report.results if r.probe.name == "tags_around_wrong")
    assert (result.earns, result.pays_like_right, result.verdict) == (1.0, 1.0, "fail")
    assert "<think>" in result.example and "#### 73" in result.example
    assert report.failed


def test_a_small_format_weight_only_warns():
    strict = {"gsm8k_accuracy.mode": "strict"}
    report = audit_reward(parse_reward_sum("gsm8k_accuracy + 0.2*think_format", **strict), ROWS)
    assert verdicts(report)["tags_around_wrong"] == "warn"  # earns over a bare wrong answer, never like a right one
    assert not report.failed
    report = audit_reward(parse_reward_sum("gsm8k_accuracy + 0.2*gsm8k_format", **strict), ROWS)
    assert set(verdicts(report).values()) == {"ok", "n/a"}  # the plain wrong answer has its #### line too
    assert verdicts(report)["approximation"] == "n/a"  # these rows' golds are whole numbers


def test_a_format_reward_on_the_answer_line_can_tie_a_right_answer():
    # 1.0*gsm8k_format: "#### 73" scores 1, as much as a right answer written without the line.
    report = audit_reward(parse_reward_sum("gsm8k_accuracy + gsm8k_format"), ROWS)
    assert verdicts(report)["tags_around_wrong"] == "fail"


@pytest.mark.parametrize("mode", ["auto", "flexible", "strict"])
def test_gsm8k_accuracy_passes_every_probe_in_every_mode(mode):
    found = verdicts(audit_reward(get_reward("gsm8k_accuracy", mode=mode), ROWS))
    assert {name: verdict for name, verdict in found.items() if verdict != "ok"} == {"approximation": "n/a"}


def any_number_matches(prompts=None, completions=None, answer=None, **kwargs):
    """A naive reward peers write: full marks when any number in the text equals the gold."""
    golds = [re.findall(r"#### (\S+)", a)[-1] if "####" in a else a for a in answer]
    return [float(any(m.text == gold for m in iter_numbers(c))) for c, gold in zip(completions, golds)]


def paid_by_length(prompts=None, completions=None, answer=None, **kwargs):
    """Correctness plus a bonus for long reasoning that outgrows it."""
    correct = get_reward("gsm8k_accuracy", mode="strict")(completions=completions, answer=answer)
    return [c + 2 * min(len(text) / 2000, 1.0) for c, text in zip(correct, completions)]


def kind_to_empty(prompts=None, completions=None, answer=None, **kwargs):
    """Half marks for an empty completion: less than a right answer, more than a wrong one."""
    right = get_reward("gsm8k_accuracy", mode="strict")(completions=completions, answer=answer)
    return [0.5 if not text.strip() else r for text, r in zip(completions, right)]


@pytest.mark.parametrize(("reward", "expected"), [
    (any_number_matches, {"several_candidates": "fail", "two_boxed": "fail", "wrong_then_right": "fail",
                          "prompt_echo": "ok", **dict.fromkeys(HEDGE_PROBES, "fail")}),
    (paid_by_length, {"huge_repeat": "fail"}),
    (kind_to_empty, {"empty": "warn"}),
])
def test_naive_rewards_are_caught(reward, expected):
    found = verdicts(audit_reward(reward, ROWS))
    assert {name: found[name] for name in expected} == expected
    assert all(verdict != "fail" for name, verdict in found.items() if name not in expected)


def test_prompt_echo_pays_when_the_prompt_holds_the_answer():
    rows = [{"prompt": "Is the answer 18? What is 9 * 2?", "answer": "18"}]
    assert verdicts(audit_reward(any_number_matches, rows))["prompt_echo"] == "fail"
    assert verdicts(audit_reward(get_reward("gsm8k_accuracy", mode="strict"), rows))["prompt_echo"] == "ok"


def test_a_format_only_reward_cannot_tell_right_from_wrong():
    report = audit_reward(get_reward("tag_count"), ROWS)
    assert report.separating == 0
    result = {r.probe.name: r for r in report.results}
    assert result["format_only"].pays_like_right is None and result["format_only"].verdict == "warn"


def test_rows_without_an_answer_are_skipped_and_errors_are_left_out():
    rows = ROWS + [{"prompt": "?", "answer": None}, {"prompt": "?", "question": "no answer column"}]
    report = audit_reward(get_reward("gsm8k_accuracy"), rows)
    assert (report.rows, report.usable, report.separating) == (5, 3, 3)
    broken_gold = audit_reward(get_reward("gsm8k_accuracy"), [{"prompt": "?", "answer": "18"}],
                               answer_column="answer")
    assert broken_gold.usable == 1


@pytest.mark.parametrize(("gold", "right", "wrong"), [
    ("Natalia sold 48+24 = <<48+24=72>>72 clips.\n#### 72", "72", "73"),
    (18, "18", "19"),
    ("$1,000", "1000", "1001"),
    ("0.5", "0.5", "1.5"),
    (r"\frac{1}{2}", "0.5", "1.5"),
    (r"so the area is $\boxed{\pi r^2}$.", r"\pi r^2", r"\pi r^2+1"),
    (r"The interval is $\boxed{[-2, 7]}$", "[-2, 7]", "[-2, 7]+1"),
    (r"\text{Evelyn}", r"\text{Evelyn}", r"\text{Evelyn}+1"),
])
def test_probe_answers_from_real_gold_shapes(gold, right, wrong):
    answers = probe_answers(gold, [{"role": "user", "content": "Q?"}])
    assert (answers.right, answers.wrong, answers.prompt) == (right, wrong, "Q?")


@pytest.mark.parametrize("gold", [None, "", "#### Step 1", r"\boxed{", True])
def test_no_probes_without_a_usable_gold(gold):
    assert probe_answers(gold) is None


def test_cli_exits_1_on_a_failing_probe_and_0_on_a_clean_reward(tmp_path, capsys):
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    assert main(["audit", "gsm8k_accuracy + think_format", data]) == 1
    out = capsys.readouterr().out
    assert re.search(r"^tags_around_wrong\s+100%\s+100%\s+FAIL", out, re.MULTILINE)
    assert "lower their weights" in out
    assert main(["audit", "gsm8k_accuracy + 0.2*gsm8k_format", data, "-O", "gsm8k_accuracy.mode=strict"]) == 0


def test_cli_json(tmp_path, capsys):
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    assert main(["audit", "gsm8k_accuracy + think_format", data, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["failed"] is True and report["usable_rows"] == 3
    assert [probe["probe"] for probe in report["probes"]] == list(PROBE_NAMES)
    by_name = {probe["probe"]: probe for probe in report["probes"]}
    assert by_name["tags_around_wrong"]["pays_like_right"] == 1.0 and by_name["empty"]["verdict"] == "ok"


def test_cli_limit_and_fail_share(tmp_path, capsys):
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    assert main(["audit", "gsm8k_accuracy + think_format", data, "--limit", "1", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["rows"] == 1
    # tags around a wrong answer earn on every row: past any share below 1.0, never past 1.0
    assert main(["audit", "gsm8k_accuracy + think_format", data, "--fail-share", "1.0"]) == 0


@pytest.mark.parametrize(("args", "message"), [
    (["gsm8k_accuracy", "{missing}"], "No such file"),
    (["gsm8k_accuracy + tag_count", "{data}", "-O", "mode=strict"], "does not name a reward"),
    (["gsm8k_accuracy", "{data}", "--answer-column", "solution"], "has an answer in column 'solution'"),
])
def test_cli_unusable_input_exits_2(tmp_path, capsys, args, message):
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    args = [a.format(data=data, missing=tmp_path / "none.jsonl") for a in args]
    assert main(["audit", *args]) == 2
    assert message in capsys.readouterr().err


def test_cli_names_the_option_that_points_the_reward_at_the_gold(tmp_path, capsys):
    data = write_rows(tmp_path / "rows.jsonl", [{"prompt": "9 * 2?", "final": "18"}])
    assert main(["audit", "gsm8k_accuracy", data]) == 2
    assert capsys.readouterr().err == (
        f"referee audit: no row of {data} has the reward's gold column 'answer' (the rows have: final); point the "
        "reward at the gold with -O gold_column=final (in a sum, -O REWARD.gold_column=...), and the audit reads it "
        "too.\n")
    assert main(["audit", "gsm8k_accuracy", data, "-O", "gold_column=final"]) == 0


def test_cli_fails_a_reward_that_cannot_read_its_gold(tmp_path, capsys):
    # the gold is in "final", gsm8k_accuracy reads "answer": every probe is ok or n/a, yet nothing was judged
    data = write_rows(tmp_path / "rows.jsonl", [{"prompt": "9 * 2?", "final": "18"}])
    assert main(["audit", "gsm8k_accuracy", data, "--answer-column", "final"]) == 1
    captured = capsys.readouterr()
    assert "the reward gave None for every plain answer" in captured.out
    assert captured.err.count("\n") == 1 and "cannot read its gold" in captured.err and "'final'" in captured.err
    assert main(["audit", "gsm8k_accuracy", data, "--answer-column", "final", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["failed"] is True and "cannot read its gold" in report["problem"]
    assert main(["audit", "gsm8k_accuracy", data, "--answer-column", "final", "-O", "gold_column=final"]) == 0


def test_cli_fails_a_correctness_reward_that_never_tells_right_from_wrong(tmp_path, capsys):
    # "answer" holds another number than the gold the probes are built from: scored, never separating
    data = write_rows(tmp_path / "rows.jsonl", [{"prompt": "9 * 2?", "final": "18", "answer": "5"}])
    assert main(["audit", "gsm8k_accuracy", data, "--answer-column", "final"]) == 1
    assert "never scored a right answer above a wrong one" in capsys.readouterr().err
    # a shaping reward alone is not expected to tell them apart: a note, not a failure
    assert main(["audit", "tag_count", data, "--answer-column", "final"]) == 0
    assert "never scores the right answer above a wrong one" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "message"), [
    (["--fail-share", "7"], "--fail-share 7.0"),
    (["--fail-share", "nan"], "--fail-share nan"),
    (["--limit", "0"], "--limit 0"),
    (["-O", "timeout=-1"], "timeout=-1"),
])
def test_cli_checks_option_values_up_front(tmp_path, capsys, args, message):
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    reward = "math_accuracy" if "timeout=-1" in args else "gsm8k_accuracy"
    assert main(["audit", reward, data, *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_cli_a_reward_module_that_raises_at_import_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    (tmp_path / "broken_reward_mod.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.chdir(tmp_path)
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    assert main(["audit", "broken_reward_mod:reward", data]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "RuntimeError: boom at import" in err and "No module named" not in err


def test_cli_explains_a_warning(tmp_path, capsys):
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    assert main(["audit", "gsm8k_accuracy + 0.2*think_format", data, "-O", "gsm8k_accuracy.mode=strict"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^tags_around_wrong\s+100%\s+0%\s+WARN", out, re.MULTILINE)
    assert "tags_around_wrong: earns +0.2 on average over a plain wrong answer and pays like right on 0% of rows" in out


def test_each_probe_is_judged_on_its_own_completion():
    # a reward that pays the right answers and exactly the two_boxed probe's text, nothing else
    paid = {PROBES_BY_NAME["two_boxed"].build(probe_answers(row["answer"], row["prompt"])) for row in ROWS}

    def pays_two_boxed(completions, answer, **kwargs):
        rights = [probe_answers(gold).right for gold in answer]
        plain = [{f"The answer is $\\boxed{{{right}}}$.", f"The answer is {right}.\n#### {right}"} for right in rights]
        return [1.0 if text in paid or text in right else 0.0 for text, right in zip(completions, plain)]

    report = audit_reward(pays_two_boxed, ROWS)
    assert {name for name, verdict in verdicts(report).items() if verdict not in ("ok", "n/a")} == {"two_boxed"}
    assert verdicts(report)["approximation"] == "n/a"  # no row has an exact gold without a finite decimal
    result = next(r for r in report.results if r.probe.name == "two_boxed")
    assert result.example in paid and result.pays_like_right == 1.0


def test_a_reward_that_returns_too_few_scores_is_named():
    def one_short(completions, **kwargs):
        return [0.0] * (len(completions) - 1)

    with pytest.raises(ValueError, match=r"the reward returned \d+ scores for \d+ completions"):
        audit_reward(one_short, ROWS)


def json_verdicts(completions, final, **kwargs):
    """The JSON worked example's check: {"answer": N} against the final column."""
    verdicts = []
    for text, gold in zip(completions, final):
        try:
            answer = str(json.loads(text)["answer"])
        except (ValueError, TypeError, KeyError):
            verdicts.append(Verdict("no_answer", reason="no JSON answer"))
            continue
        verdicts.append(Verdict("correct", 1.0, answer) if answer == gold else Verdict("wrong", 0.0, answer))
    return verdicts


JSON_ROWS = [{"prompt": "What is 9 * 2?", "final": "18"}, {"prompt": "2 + 3?", "final": "5"}]


def test_the_audit_writes_answers_in_the_format_the_reward_declares():
    seen = []
    declared = verdict_reward(answer_template='{"answer": "{answer}"}')(
        lambda completions, final, **kwargs: seen.extend(completions) or json_verdicts(completions, final))
    report = audit_reward(declared, JSON_ROWS)
    assert '{"answer": "18"}' in seen and '{"answer": "19"}' in seen  # the right and a wrong answer, in JSON
    assert (report.usable, report.scored, report.separating, report.problem) == (2, 2, 2, None)
    assert set(verdicts(report).values()) == {"ok", "n/a"} and not report.failed
    assert report.formats == ("declared",)


def test_a_reward_that_declares_no_format_is_told_how_to_declare_one():
    report = audit_reward(verdict_reward(json_verdicts), JSON_ROWS)
    assert report.separating == 0 and report.failed
    assert report.problem == (
        "the reward never scored a right answer above a wrong one on the 2 rows it scored, in the answer shapes tried "
        "('The answer is $\\\\boxed{X}$.'; 'The answer is X.\\n#### X'; '<answer>X</answer>'; 'Answer: X'; "
        "'The answer is **X**.'; 'The answer is X.'): if it reads another format, name it (referee audit "
        "--answer-template 'FINAL: {answer}') or declare it on "
        """the reward, e.g. answer_template = '{"answer": "{answer}"}' or a write_answer(answer) method """
        "(docs/rewards.md, 'The answer format'), so no probe can be judged")


def test_an_answer_template_given_to_the_audit_probes_a_reward_that_declares_none(tmp_path, capsys):
    seen = []
    reward = verdict_reward(lambda completions, final, **kwargs: seen.extend(completions) or json_verdicts(completions,
                                                                                                           final))
    report = audit_reward(reward, JSON_ROWS, answer_template='{"answer": "{answer}"}')
    assert (report.separating, report.problem, report.formats) == (2, None, ("declared",))
    assert '{"answer": "19"}' in seen  # the probes' wrong answers are written in that format too
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(row) + "\n" for row in JSON_ROWS))
    assert main(["audit", "gsm8k_accuracy", str(rows), "--answer-template", "FINAL"]) == 2
    assert "--answer-template 'FINAL' has no {answer}" in capsys.readouterr().err


def test_a_write_answer_hook_is_used_and_built_in_rewards_declare_their_format():
    class Tagged:
        __name__ = "tagged"

        def write_answer(self, answer):
            return f"ANSWER: {answer}"

        def __call__(self, completions, final, **kwargs):
            return [float(text == f"ANSWER: {gold}") for text, gold in zip(completions, final)]

    report = audit_reward(Tagged(), JSON_ROWS)
    assert (report.separating, report.problem) == (2, None)
    assert get_reward("gsm8k_accuracy").answer_template == "The answer is {answer}.\n#### {answer}"
    assert get_reward("math_accuracy").answer_template == "The answer is $\\boxed{{answer}}$."


# ---------------------------------------------------------------------------------------------
# The hedge families: a contradicting override, a disowned box, an unfinished think block, an
# approximation offered for an exact gold


def _gold_number(gold):
    return re.findall(r"#### (\S+)", gold)[-1] if "####" in gold else gold


def last_box(prompts=None, completions=None, answer=None, **kwargs):
    """A naive reward: full marks when the last \\boxed{} holds the gold."""
    boxes = [re.findall(r"\\boxed\{([^{}]*)\}", text) for text in completions]
    return [float(bool(found) and found[-1].strip() == _gold_number(gold)) for found, gold in zip(boxes, answer)]


def last_number(prompts=None, completions=None, answer=None, **kwargs):
    """A naive reward: full marks when the last number in the text is the gold."""
    numbers = [list(iter_numbers(text)) for text in completions]
    return [float(bool(found) and found[-1].text == _gold_number(gold)) for found, gold in zip(numbers, answer)]


@pytest.mark.parametrize(("reward", "paid"), [
    (last_box, set(HEDGE_PROBES)),
    (last_number, {"other_answer_then_box", "negated_box", "hypothetical_box", "unfinished_think"}),
])
def test_naive_rewards_fail_the_hedge_probes(reward, paid):
    found = verdicts(audit_reward(reward, ROWS))
    assert {name for name in HEDGE_PROBES if found[name] == "fail"} == paid


@pytest.mark.parametrize("reward", ["gsm8k_accuracy", "math_accuracy"])
def test_referee_rewards_pass_the_hedge_probes(reward):
    found = verdicts(audit_reward(get_reward(reward), ROWS))
    assert {name: found[name] for name in HEDGE_PROBES} == dict.fromkeys(HEDGE_PROBES, "ok")


EXACT_ROWS = [{"prompt": "What is the area of a circle of radius 1?", "answer": r"\pi"},
              {"prompt": "What is the diagonal of a unit square?", "answer": r"\sqrt{2}"},
              {"prompt": "What share of 3 equal parts is one part?", "answer": r"\frac{1}{3}"},
              {"prompt": "What is 9 * 2?", "answer": "18"}]
EXACT_VALUES = {r"\pi": 3.14159265, r"\sqrt{2}": 1.41421356, r"\frac{1}{3}": 1 / 3, "18": 18.0}


def rounded_box(prompts=None, completions=None, answer=None, **kwargs):
    """A naive reward: the last box as written, or as a float within 0.001 of the gold's value."""
    scores = []
    for text, gold in zip(completions, answer):
        found = re.findall(r"\\boxed\{([^{}]*)\}", text)
        try:
            close = bool(found) and abs(float(found[-1]) - EXACT_VALUES[gold]) < 1e-3
        except ValueError:
            close = False
        scores.append(float(bool(found) and (found[-1] == gold or close)))
    return scores


def test_the_approximation_probe_runs_only_on_exact_golds_with_no_finite_decimal():
    assert [probe_answers(row["answer"]).approximation for row in EXACT_ROWS] == ["3.1416", "1.4142", "0.3333", None]
    result = next(r for r in audit_reward(rounded_box, EXACT_ROWS).results if r.probe.name == "approximation")
    assert result.scored == 3 and result.verdict == "fail" and result.example == "The answer is $\\boxed{3.1416}$."
    result = next(r for r in audit_reward(get_reward("math_accuracy"), EXACT_ROWS).results if r.probe.name == "approximation")
    assert result.scored == 3 and result.verdict == "ok"


# ---------------------------------------------------------------------------------------------
# The audit probes the reward's own answer format (issue: a reward reading <answer> tags was
# given an all-clear by probes written only with \boxed{} and ####)


def last_answer_tag(prompts=None, completions=None, answer=None, **kwargs):
    """A naive reward that reads the last <answer>...</answer> and declares no format."""
    tags = [re.findall(r"<answer>(.*?)</answer>", text, re.DOTALL) for text in completions]
    return [float(bool(found) and found[-1].strip() == _gold_number(gold)) for found, gold in zip(tags, answer)]


def test_the_audit_finds_the_answer_tag_format_and_writes_its_probes_in_it():
    report = audit_reward(last_answer_tag, ROWS)
    assert report.formats == ("answer tags",) and report.problem is None
    found = verdicts(report)
    assert found["wrong_then_right"] == "fail" and found["unfinished_think"] == "fail"
    assert found["two_boxed"] == "fail" and found["negated_box"] == "ok"
    examples = {result.probe.name: result.example for result in report.results}
    assert examples["wrong_then_right"] == "<answer>73</answer>\n<answer>72</answer>"
    assert examples["unfinished_think"].startswith("<think>") and "<answer>72</answer>" in examples["unfinished_think"]


def test_the_audit_passes_a_tag_reward_that_reads_one_final_answer():
    tagged = get_reward("gsm8k_accuracy")
    report = audit_reward(tagged, ROWS)
    assert "answer tags" in report.formats
    tags_only = [probe for probe in ("wrong_then_right", "unfinished_think") if verdicts(report)[probe] != "ok"]
    assert tags_only == []


def test_unjudged_probes_say_n_a_and_are_counted(tmp_path, capsys):
    data = write_rows(tmp_path / "rows.jsonl", JSON_ROWS)
    declared = verdict_reward(answer_template='{"answer": "{answer}"}')(
        lambda completions, final, **kwargs: json_verdicts(completions, final))
    report = audit_reward(declared, JSON_ROWS)
    assert verdicts(report)["approximation"] == "n/a"
    from referee.recipes.commands.audit import report_table
    table = report_table(report)
    assert re.search(r"^approximation\s+0%\s+n/a\s+n/a\s", table, re.MULTILINE)
    assert "1 of 15 probes could not be judged on these rows (n/a: approximation); they are not an all-clear." in table
    assert "answer formats the reward reads (every probe is written in each): declared" in table


# ---------------------------------------------------------------------------------------------
# A reward in a format no known container writes: the audit tries the containers the prompts ask
# for, writes every probe in the one the reward reads, and says plainly when it finds none (its
# probes then judge nothing: every one n/a, counted, the table no all-clear).

def last_match_reward(pattern):
    """A naive reward paying the last ``pattern`` match that equals the gold, declaring no format."""
    def reward(prompts=None, completions=None, answer=None, **kwargs):
        found = [re.findall(pattern, text, re.DOTALL) for text in completions]
        return [float(bool(values) and values[-1].strip() == _gold_number(gold)) for values, gold in zip(found, answer)]
    return reward


def asking(rows, instruction):
    """``rows`` with ``instruction`` added to each prompt (as a system message to a conversation)."""
    return [{**row, "prompt": [{"role": "system", "content": instruction}, *row["prompt"]]
             if isinstance(row["prompt"], list) else f"{row['prompt']} {instruction}"} for row in rows]


FINAL_TAG_READER = last_match_reward(r"<final>(.*?)</final>")


def test_the_audit_finds_a_tag_format_the_prompts_ask_for_and_writes_every_probe_in_it():
    seen = []
    rows = asking(ROWS, "Reason step by step, then give the result in <final></final> tags.")
    report = audit_reward(lambda completions, **kwargs: seen.extend(completions) or FINAL_TAG_READER(
        completions=completions, **kwargs), rows)
    assert report.formats == ("<final> tags (from the prompts)",) and report.problem is None
    assert report.separating == 3
    found = verdicts(report)
    assert found["wrong_then_right"] == found["two_boxed"] == found["unfinished_think"] == "fail"
    assert found["negated_box"] == found["tags_around_wrong"] == found["empty"] == "ok"
    examples = {result.probe.name: result.example for result in report.results}
    assert examples["wrong_then_right"] == "<final>73</final>\n<final>72</final>"
    texts = [text for text in seen if isinstance(text, str)]
    assert any(text.startswith("<think>") and text.endswith("</answer>\n<final>73</final>") for text in texts)
    assert any(text.startswith("<final>73</final>\n<final>73</final>\n") and len(text) > 20_000 for text in texts)
    assert any(text.endswith("</answer>\n<final></final>") for text in texts)  # format_only, in the tags


@pytest.mark.parametrize("instruction, pattern, name", [
    ("Write your answer as \\answer{...}.", r"\\answer\{([^{}]*)\}", "\\answer{} (from the prompts)"),
    ("End with a line ANSWER=<n>.", r"ANSWER=(\S+)", "ANSWER= (from the prompts)"),
    ('Reply with JSON: {"result": <n>}.', r'"result": "([^"]*)"', 'json "result" (from the prompts)'),
    ("Close with the line Result: <number>", r"Result: (\S+)", "Result: (from the prompts)"),
    ("End with RESULT -> <number>.", r"RESULT\s*->\s*(\S+)", "RESULT -> (from the prompts)"),
    ("Finish with Answer := <n>", r"Answer := (\S+)", "Answer := (from the prompts)"),
    ("End your reply with [[<n>]].", r"\[\[([^\[\]]*)\]\]", "[[{answer}]] (from the prompts)"),
    ("Output your answer as ANS(<n>)", r"ANS\((\S+?)\)", "ANS({answer}) (from the prompts)"),
    ('Finish with "#ANSWER: <n>"', r"#ANSWER: (\S+)", "#ANSWER: {answer} (from the prompts)"),
])
def test_the_audit_finds_other_formats_the_prompts_ask_for(instruction, pattern, name):
    report = audit_reward(last_match_reward(pattern), asking(ROWS, instruction))
    assert report.formats == (name,) and report.separating == 3 and report.problem is None
    assert verdicts(report)["wrong_then_right"] == "fail" and verdicts(report)["negated_box"] == "ok"


def test_a_format_the_audit_cannot_find_is_said_plainly(tmp_path, capsys, monkeypatch):
    (tmp_path / "answer_equals_reward.py").write_text(
        "import re\n\n"
        "def answer_equals(completions, answer, **kwargs):\n"
        "    found = [re.findall(r'ANSWER=(\\S+)', text) for text in completions]\n"
        "    return [float(bool(f) and f[-1] == a.split('#### ')[-1]) for f, a in zip(found, answer)]\n")
    monkeypatch.chdir(tmp_path)
    data = write_rows(tmp_path / "rows.jsonl", ROWS)  # the prompts do not name the format
    assert main(["audit", "answer_equals_reward:answer_equals", data]) == 1
    captured = capsys.readouterr()
    assert ("answer formats the reward reads: none found (tried boxed, ####, answer tags, Answer:, bold, plain); "
            "no probe below could be judged against a right answer") in captured.out
    assert "none of the 15 probes could be judged on these rows (all n/a): this audit is not an all-clear." \
        in captured.out
    assert not re.search(r"^\w+\s+\d+%\s+\S+\s+ok\s", captured.out, re.MULTILINE)
    assert "--answer-template" in captured.err
    assert main(["audit", "answer_equals_reward:answer_equals", data, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["answer_formats"], report["unjudged_probes"]) == ([], 15)
    assert report["answer_formats_tried"] == ["boxed", "####", "answer tags", "Answer:", "bold", "plain"]
    assert main(["audit", "answer_equals_reward:answer_equals", data, "--answer-template", "ANSWER={answer}"]) == 1
    out = capsys.readouterr().out
    assert "answer formats the reward reads (every probe is written in each): declared" in out
    assert re.search(r"^wrong_then_right\s+100%\s+100%\s+FAIL", out, re.MULTILINE)


def test_a_warning_on_rows_where_nothing_pays_like_right_does_not_read_as_a_share():
    from referee.recipes.commands.audit import report_table
    table = report_table(audit_reward(get_reward("tag_count"), ROWS))
    assert "n/a of rows" not in table
    assert ("format_only: earns +0.5 on average over a plain wrong answer; whether it pays like right could not be "
            "judged") in table


def test_the_volume_probe_is_one_completion_a_row_across_the_known_formats():
    """Written in each of the six known formats a last-number reward reads, the 20,000-character probe cost the
    GSM8K verifier 200 ms a row in answer tags: it is one plain sentence repeated, once a row."""
    seen = []
    reward = get_reward("gsm8k_accuracy")
    report = audit_reward(lambda completions, **kwargs: seen.extend(completions) or reward(completions=completions,
                                                                                         **kwargs), ROWS)
    assert len(report.formats) == 6
    huge = [text for text in seen if isinstance(text, str) and len(text) > 20_000]
    assert len(huge) == len(ROWS) and all(text.startswith("The answer is 73.\nThe answer is 73.\n") for text in huge[:1])


def test_labels_and_json_in_a_question_are_not_taken_for_an_answer_format():
    """A 'NOTE:' or a JSON object in a question is data: taken for a format a last-number reward 'reads', its
    probes ('NOTE: not 72') failed gsm8k_accuracy for a container nobody asked for."""
    rows = asking(ROWS, 'NOTE: show your work. IMPORTANT: the shop\'s log reads {"day": 3}.')
    report = audit_reward(get_reward("gsm8k_accuracy"), rows)
    assert not any("from the prompts" in name for name in report.tried)
    assert {name for name, verdict in verdicts(report).items() if verdict not in ("ok", "n/a")} == set()
