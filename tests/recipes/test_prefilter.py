"""Pre-filter behaviour: pass rates, inclusive bounds, rewards kept apart, bad rows, chat prompts."""

import json
import re
from pathlib import Path

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from referee.recipes.prefilter import (
    EngineOptions,
    KeepBounds,
    PrefilterConfig,
    Sample,
    SamplingOptions,
    degenerate_share,
    run_prefilter,
)
from referee.recipes.prefilter.scoring import pass_counts

torch.set_num_threads(1)


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def write_jsonl(path, rows):
    Path(path).write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows))
    return str(path)


class ScriptedBackend:
    """Answers each prompt with the completions ``script`` gives for its decoded text."""

    def __init__(self, tokenizer, script, context_length=None):
        self.tokenizer, self.script, self.context_length = tokenizer, script, context_length
        self.seen = []

    def generate(self, prompt_ids, num_generations, sampling, seed):
        groups = []
        for ids in prompt_ids:
            prompt = self.tokenizer.decode(ids)
            self.seen.append(prompt)
            texts = self.script(prompt)
            assert len(texts) == num_generations
            groups.append([Sample(text, tuple(self.tokenizer(text)["input_ids"]), False) for text in texts])
        return groups


def contains_answer(prompts, completions, answer, **kwargs):
    return [float(gold in text) for text, gold in zip(completions, answer)]


def config_for(tmp_path, data, rewards, **overrides):
    settings = dict(model="unused", data=data, rewards=tuple(rewards), out=str(tmp_path / "out"), progress=False,
                    engine=EngineOptions(backend="transformers"))
    settings.update(overrides)
    return PrefilterConfig(**settings)


def test_pass_rates_match_a_hand_count_of_the_recorded_samples(tmp_path, model_dir, tokenizer):
    # An untrained model writes random characters: whether a sample contains the row's digit
    # varies, so pass rates spread over several values.
    rows = [{"prompt": f"{i} + {i} = ", "answer": str(i % 10)} for i in range(12)]
    config = config_for(tmp_path, write_jsonl(tmp_path / "rows.jsonl", rows), [contains_answer], model=model_dir,
                        num_generations=6, keep=KeepBounds.parse("0.1666:0.5"), save_samples=True, chunk_size=5,
                        sampling=SamplingOptions(max_tokens=24, seed=3))
    report = run_prefilter(config)

    results = read_jsonl(tmp_path / "out/all.jsonl")
    assert [r["row_index"] for r in results] == list(range(12))
    hand_rates = []
    for row, result in zip(rows, results):
        assert result["prompt"] == row["prompt"] and len(result["samples"]) == 6
        hand = sum(row["answer"] in sample["text"] for sample in result["samples"])
        hand_rates.append(hand / 6)
        assert (result["num_correct"], result["num_samples"], result["num_unscored"]) == (hand, 6, 0)
        assert result["pass_rate"] == hand / 6
        assert [s["passed"] for s in result["samples"]] == [row["answer"] in s["text"] for s in result["samples"]]
    assert len(set(hand_rates)) > 1, "the samples should give several pass rates"
    kept = read_jsonl(tmp_path / "out/kept.jsonl")
    assert [r["row_index"] for r in kept] == [i for i, p in enumerate(hand_rates) if 0.1666 <= p <= 0.5]
    assert report["kept"] == len(kept)
    assert report["degenerate_groups"]["before"] == pytest.approx(degenerate_share(hand_rates, 6))


def by_count(prompt):
    """Row "k" passes on exactly k of its 4 samples ("yes" passes, "no" does not)."""
    k = int(prompt.strip())
    return ["yes"] * k + ["no"] * (4 - k)


def says_yes(prompts, completions, **kwargs):
    return [float(text == "yes") for text in completions]


@pytest.mark.parametrize("keep, kept_rows", [
    ("0.25:0.75", [1, 2, 3]),   # both ends inclusive
    ("0.5:0.5", [2]),
    ("0:1", [0, 1, 2, 3, 4]),
    (":0.25", [0, 1]),
    ("0.75:", [3, 4]),
])
def test_keep_bounds_are_inclusive(tmp_path, tokenizer, keep, kept_rows):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": str(k)} for k in range(5)])
    report = run_prefilter(config_for(tmp_path, data, [says_yes], num_generations=4, keep=KeepBounds.parse(keep)),
                           backend=ScriptedBackend(tokenizer, by_count), tokenizer=tokenizer)
    assert [r["row_index"] for r in read_jsonl(tmp_path / "out/kept.jsonl")] == kept_rows
    assert [bar["pass_rate"] for bar in report["pass_rate_histogram"]] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert [bar["kept"] for bar in report["pass_rate_histogram"]] == [k in kept_rows for k in range(5)]


@pytest.mark.parametrize("text, problem", [
    ("0.2", "LO:HI"), ("0.9:0.1", "reversed"), ("0:1.5", "[0, 1]"), ("a:b", "not numbers"), ("nan:1", "[0, 1]"),
])
def test_bad_keep_bounds_are_refused_with_the_fix(text, problem):
    with pytest.raises(ValueError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        KeepBounds.parse(text)


def first_letter_is_a(prompts, completions, **kwargs):
    return [float(text[0] == "a") for text in completions]


def length_over_ten(prompts, completions, **kwargs):
    return [len(text) / 10 for text in completions]


def test_several_rewards_stay_apart_and_only_the_success_reward_decides(tmp_path, tokenizer):
    # Each sample has its own text, so a reward value shifted to another row, sample or reward
    # (open-r1's reshaping bug) shows up. Row k: samples "a" * (k + j) for j in 0..3, then "b...".
    def script(prompt):
        k = int(prompt.strip())
        return [("a" if j % 2 == 0 else "b") * (k + j + 1) for j in range(4)]

    data = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": str(k)} for k in range(6)])
    config = config_for(tmp_path, data, [first_letter_is_a, length_over_ten], num_generations=4,
                        success_reward="length_over_ten", threshold=0.5, keep=KeepBounds(0.5, 0.75),
                        save_samples=True, chunk_size=4)
    run_prefilter(config, backend=ScriptedBackend(tokenizer, script), tokenizer=tokenizer)
    for k, result in enumerate(read_jsonl(tmp_path / "out/all.jsonl")):
        texts = script(str(k))
        assert [s["text"] for s in result["samples"]] == texts
        for sample, text in zip(result["samples"], texts):
            assert sample["rewards"] == {"first_letter_is_a": float(text[0] == "a"), "length_over_ten": len(text) / 10}
        passes = sum(len(text) / 10 >= 0.5 for text in texts)
        assert (result["num_correct"], result["pass_rate"]) == (passes, passes / 4)
        assert result["reward_means"]["first_letter_is_a"] == 0.5
        assert result["reward_means"]["length_over_ten"] == pytest.approx(sum(len(t) for t in texts) / 40)
    kept = [r["row_index"] for r in read_jsonl(tmp_path / "out/kept.jsonl")]
    assert kept == [k for k in range(6) if 0.5 <= sum(k + j + 1 >= 5 for j in range(4)) / 4 <= 0.75]


def graded_unless_bad_gold(prompts, completions, gold, **kwargs):
    """1 for "yes", 0 for "no"; None when the gold is "???" (not the completion's fault)."""
    return [None if g == "???" else float(text == "yes") for text, g in zip(completions, gold)]


def test_none_rewards_are_reported_and_leave_the_denominator(tmp_path, tokenizer):
    def script(prompt):
        return ["yes", "no", "yes", "no"]

    def partly_none(prompts, completions, gold, **kwargs):
        # the third sample of each row is unscored
        return [None if i % 4 == 2 else float(text == "yes") for i, text in enumerate(completions)]

    rows = [{"prompt": "1", "gold": "ok"}, {"prompt": "2", "gold": "???"}]
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    config = config_for(tmp_path, data, [partly_none, graded_unless_bad_gold], num_generations=4,
                        keep=KeepBounds(0.0, 1.0))
    report = run_prefilter(config, backend=ScriptedBackend(tokenizer, script), tokenizer=tokenizer)
    first, second = read_jsonl(tmp_path / "out/all.jsonl")
    # yes, no, (None), no: 1 pass out of 3 scored samples, not 1/4 or 2/4
    assert (first["num_correct"], first["num_samples"], first["num_unscored"], first["pass_rate"]) == (1, 3, 1, 1 / 3)
    assert "gave no score to 1 of 4 samples" in first["errors"][0] and "left out of the pass rate" in first["errors"][0]
    # the other reward returned None for the whole second row; the success reward still scored it
    assert second["pass_rate"] == 1 / 3 and second["reward_means"]["graded_unless_bad_gold"] is None
    assert any("graded_unless_bad_gold gave no score to 4 of 4" in e for e in second["errors"])
    assert report["samples"] == {"scored": 6, "unscored": 2, "passed": 2}


def test_a_row_whose_samples_are_all_unscored_has_no_pass_rate_and_is_never_kept(tmp_path, tokenizer):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": "1", "gold": "???"}, {"prompt": "2", "gold": "fine"}])
    report = run_prefilter(config_for(tmp_path, data, [graded_unless_bad_gold], num_generations=4,
                                      keep=KeepBounds(0.0, 1.0)),
                           backend=ScriptedBackend(tokenizer, by_count), tokenizer=tokenizer)
    unscored, scored = read_jsonl(tmp_path / "out/all.jsonl")
    assert unscored["pass_rate"] is None and unscored["num_samples"] == 0 and unscored["num_unscored"] == 4
    assert scored["pass_rate"] == 0.5
    assert [r["row_index"] for r in read_jsonl(tmp_path / "out/kept.jsonl")] == [1]
    assert (report["rows_scored"], report["rows_unscored"], report["kept"]) == (1, 1, 1)


def fussy_reward(prompts, completions, gold, **kwargs):
    if any(g == "boom" for g in gold):
        raise ValueError("cannot read gold 'boom'")
    if any(g == "short" for g in gold):
        return [1.0]  # wrong length for any batch of more than one sample
    return [float(text == "yes") for text in completions]


def test_bad_rows_are_reported_per_row_and_the_run_goes_on(tmp_path, tokenizer):
    lines = [
        {"prompt": "2", "gold": "ok"},
        "{not json",
        "[1, 2]",
        {"question": "2", "gold": "ok"},          # no prompt column
        {"prompt": "2"},                          # no gold column for the reward
        {"prompt": "1" * 60, "gold": "ok"},       # too long for the context
        {"prompt": "   ", "gold": "ok"},          # empty
        {"prompt": 42, "gold": "ok"},             # not text
        {"prompt": "2", "gold": "boom"},          # the reward raises on this row
        {"prompt": "2", "gold": "short"},         # the reward returns too few values on this row
        {"prompt": "3", "gold": "ok"},
    ]
    data = write_jsonl(tmp_path / "rows.jsonl", lines)
    backend = ScriptedBackend(tokenizer, by_count, context_length=40)
    report = run_prefilter(config_for(tmp_path, data, [fussy_reward], num_generations=4, keep=KeepBounds(0.0, 1.0),
                                      sampling=SamplingOptions(max_tokens=8), chunk_size=4),
                           backend=backend, tokenizer=tokenizer)
    results = read_jsonl(tmp_path / "out/all.jsonl")
    assert [r["row_index"] for r in results] == list(range(11))
    assert [r["pass_rate"] for r in results] == [0.5] + [None] * 9 + [0.75]
    expected = {
        1: "line 2: not valid JSON",
        2: "line 3: a JSON object is needed, got list",
        3: "row has no 'prompt' column",
        4: "row has no column 'gold', which reward fussy_reward reads",
        5: "prompt is 60 tokens; with 8 new tokens that exceeds the model's context of 40 tokens",
        6: "prompt is empty",
        7: "prompt is a int, not text",
        8: "reward fussy_reward raised ValueError: cannot read gold 'boom'",
        9: "reward fussy_reward returned 1 values for 4 completions",
    }
    for index, message in expected.items():
        assert len(results[index]["errors"]) == 1 and message in results[index]["errors"][0], results[index]
    assert results[3]["question"] == "2"  # the row's own columns are kept
    assert results[0]["errors"] == [] and results[10]["errors"] == []
    assert report["rows_with_errors"] == 9 and report["errors"]["first"][0]["row_index"] == 1
    # rows that could not be rendered were never sent to the model
    assert len(backend.seen) == 5


def test_a_row_the_backend_fails_on_is_reported_and_a_systemic_failure_stops_the_run(tmp_path, tokenizer):
    class Fragile(ScriptedBackend):
        def generate(self, prompt_ids, num_generations, sampling, seed):
            prompts = [self.tokenizer.decode(ids) for ids in prompt_ids]
            if "3" in prompts:
                raise RuntimeError("device-side assert on this prompt")
            if "0" in prompts:
                raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
            return super().generate(prompt_ids, num_generations, sampling, seed)

    data = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": str(k)} for k in (1, 3, 2)])
    run_prefilter(config_for(tmp_path, data, [says_yes], num_generations=4, keep=KeepBounds(0, 1)),
                  backend=Fragile(tokenizer, by_count), tokenizer=tokenizer)
    results = read_jsonl(tmp_path / "out/all.jsonl")
    assert [r["pass_rate"] for r in results] == [0.25, None, 0.5]
    assert results[1]["errors"] == ["generation failed (RuntimeError: device-side assert on this prompt)"]

    data = write_jsonl(tmp_path / "oom.jsonl", [{"prompt": str(k)} for k in (1, 0)])
    with pytest.raises(RuntimeError, match="out of memory"):
        run_prefilter(config_for(tmp_path, data, [says_yes], num_generations=4, keep=KeepBounds(0, 1),
                                 out=str(tmp_path / "oom")),
                      backend=Fragile(tokenizer, by_count), tokenizer=tokenizer)
    assert not list((tmp_path / "oom/state").glob("chunk-*"))  # nothing saved: a rerun retries the chunk


def test_chat_prompts_get_the_chat_template_and_rewards_get_assistant_messages(tmp_path, tokenizer):
    received = []

    def records_completions(prompts, completions, **kwargs):
        received.append((prompts, completions))
        return [1.0] * len(completions)

    rows = [{"prompt": [{"role": "user", "content": "1+1"}]}, {"prompt": "2+2="}]
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    backend = ScriptedBackend(tokenizer, lambda prompt: ["2", "2"])
    run_prefilter(config_for(tmp_path, data, [records_completions], num_generations=2, keep=KeepBounds(0, 1)),
                  backend=backend, tokenizer=tokenizer)
    # TRL's rule: chat prompts through the template, text prompts as they are
    assert backend.seen == ["u:1+1\na:", "2+2="]
    prompts, completions = received[0]
    assert prompts == [rows[0]["prompt"]] * 2 + ["2+2="] * 2
    assert completions == [[{"role": "assistant", "content": "2"}]] * 2 + ["2", "2"]

    backend = ScriptedBackend(tokenizer, lambda prompt: ["2", "2"])
    run_prefilter(config_for(tmp_path, data, [records_completions], num_generations=2, keep=KeepBounds(0, 1),
                             out=str(tmp_path / "always"), chat_template="always", system_prompt="add"),
                  backend=backend, tokenizer=tokenizer)
    assert backend.seen == ["u:1+1\na:", "s:add\nu:2+2=\na:"]


def test_the_report_predicts_degenerate_groups_at_the_training_group_size(tmp_path, tokenizer):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": str(k)} for k in range(5)])
    report = run_prefilter(config_for(tmp_path, data, [says_yes], num_generations=4, keep=KeepBounds(0.25, 0.75),
                                      group_size=8),
                           backend=ScriptedBackend(tokenizer, by_count), tokenizer=tokenizer)
    def share(p):
        return p ** 8 + (1 - p) ** 8

    assert report["degenerate_groups"]["group_size"] == 8
    assert report["degenerate_groups"]["before"] == pytest.approx(sum(share(k / 4) for k in range(5)) / 5)
    assert report["degenerate_groups"]["after"] == pytest.approx(sum(share(k / 4) for k in (1, 2, 3)) / 3)
    assert report["mean_pass_rate"] == {"before": 0.5, "after": 0.5}
    assert json.loads((tmp_path / "out/report.json").read_text())["kept"] == 3
    assert (tmp_path / "out/pass_rate_hist.png").read_bytes()[:4] == b"\x89PNG"


def test_degenerate_share_matches_the_formula_of_the_design_notes():
    assert degenerate_share([0.9], 8) == pytest.approx(0.9 ** 8 + 0.1 ** 8)
    assert degenerate_share([0.5], 8) == pytest.approx(2 / 256)
    assert degenerate_share([0.0, 1.0], 8) == 1.0


@pytest.mark.parametrize("mode, passes", [("strict", 1), ("auto", 2)])
def test_the_trainers_gsm8k_reward_scores_the_samples_and_its_verdicts_are_kept(tmp_path, tokenizer, mode, passes):
    def script(prompt):
        return ["so 9 * 2 = 18\n#### 18", "#### 17", "The answer is 18.", "no idea"]

    rows = [{"prompt": "q1", "answer": "9 * 2 = 18\n#### 18"}, {"prompt": "q2", "answer": "not a number"}]
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    report = run_prefilter(
        config_for(tmp_path, data, ["gsm8k_accuracy"], reward_options={"gsm8k_accuracy": {"mode": mode}},
                   num_generations=4, keep=KeepBounds(0.25, 0.75), save_samples=True),
        backend=ScriptedBackend(tokenizer, script), tokenizer=tokenizer)
    solved, bad_gold = read_jsonl(tmp_path / "out/all.jsonl")
    assert (solved["num_correct"], solved["num_samples"], solved["pass_rate"]) == (passes, 4, passes / 4)
    statuses = [s["logged"]["gsm8k_accuracy/status"] for s in solved["samples"]]
    assert statuses == ["correct", "wrong", "no_answer" if mode == "strict" else "correct", "no_answer"]
    # an unusable gold is not the completions' fault: no pass rate, reported on the row
    assert bad_gold["pass_rate"] is None and bad_gold["num_unscored"] == 4
    assert "gsm8k_accuracy gave no score to 4 of 4 samples" in bad_gold["errors"][0]
    assert report["kept"] == 1 and report["rows_unscored"] == 1


unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(unit, unit, st.integers(min_value=1, max_value=16), st.integers(min_value=0, max_value=16))
def test_keep_bounds_parse_and_contain_exactly_the_band(a, b, samples, correct):
    low, high = min(a, b), max(a, b)
    bounds = KeepBounds.parse(f"{low!r}:{high!r}")
    assert (bounds.low, bounds.high) == (low, high)
    assert bounds.contains(low) and bounds.contains(high)
    rate = min(correct, samples) / samples
    assert bounds.contains(rate) == (low <= rate <= high)


@given(st.lists(st.one_of(st.none(), unit), max_size=20), unit)
def test_pass_counts_split_every_sample_into_passed_failed_or_unscored(values, threshold):
    correct, scored, unscored = pass_counts(values, threshold)
    assert scored + unscored == len(values)
    assert correct == sum(v is not None and v >= threshold for v in values) <= scored


@given(st.lists(unit, min_size=1, max_size=10), st.integers(min_value=2, max_value=16))
def test_degenerate_share_is_a_share_and_least_at_even_odds(rates, group_size):
    share = degenerate_share(rates, group_size)
    assert 0.0 <= share <= 1.0 + 1e-12
    assert share >= degenerate_share([0.5] * len(rates), group_size) - 1e-12


@pytest.mark.parametrize(("writes", "exit_code"), [("<answer>nine</answer>", 3), ("#### 9", 0)])
def test_a_reward_that_reads_no_answer_fails_the_run_with_its_own_exit_code(tmp_path, tokenizer, capsys, writes,
                                                                              exit_code):
    """The demo model writes '#### N'; a reward that reads something else pays 0 everywhere and keeps no row:
    the run says why and exits 3 instead of 0 (the same for eval, which shares report_run)."""
    from referee.recipes.commands.prefilter import report_run, summary_lines, unread_answers
    from referee.recipes.heldout import EvalConfig, run_eval

    data = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": f"{k} + 4 =", "answer": str(k + 4)} for k in range(3)])
    backend = ScriptedBackend(tokenizer, lambda prompt: [writes] * 4)
    config = config_for(tmp_path, data, ["gsm8k_accuracy"], num_generations=4, keep=KeepBounds(0.25, 0.75))
    code = report_run("prefilter", config.out, lambda: run_prefilter(config, backend=backend, tokenizer=tokenizer),
                      summary_lines)
    err = capsys.readouterr().err
    assert code == exit_code
    assert ("the reward gsm8k_accuracy read no answer in 100% of the completions" in err) == (exit_code == 3)
    report = run_eval(EvalConfig(model="unused", data=data, out=str(tmp_path / "eval"), rewards=("gsm8k_accuracy",),
                                 num_generations=4, progress=False), backend=backend, tokenizer=tokenizer)
    assert (unread_answers(report) is not None) == (exit_code == 3)


def final_tags(prompts, completions, answer, **kwargs):
    """A reward of one's own that reads <final> tags and logs nothing (no no_answer share)."""
    read = [re.findall(r"<final>(.*?)</final>", text) for text in completions]
    return [float(bool(found) and found[-1].strip() == str(gold)) for found, gold in zip(read, answer)]


@pytest.mark.parametrize(("writes", "exit_code"), [
    (lambda k: "#### 1", 3),  # wrong answers in a format the reward never reads: no row can be kept for that reason
    (lambda k: "<final>1</final>", 0),  # wrong answers in the reward's format: the prompts are too hard, not unread
    (lambda k: f"<final>{k + 4}</final>" if k else "#### 1", 0),  # some rows kept
])
def test_a_reward_of_ones_own_that_never_reads_the_model_fails_the_run_with_the_unread_code(
        tmp_path, tokenizer, capsys, writes, exit_code):
    """The issue: a reward reading a format the model never writes paid 0, prefilter kept 0 rows and exited 0
    without a word. A reward of one's own logs no no_answer share; the run gives the right answer in place of the
    model's and sees the reward still pays nothing."""
    from referee.recipes.commands.prefilter import report_run, summary_lines

    data = write_jsonl(tmp_path / "rows.jsonl", [{"prompt": f"{k} + 4 =", "answer": str(k + 4)} for k in range(3)])
    backend = ScriptedBackend(tokenizer, lambda prompt: [writes(int(prompt.split()[0]))] * 4)
    config = config_for(tmp_path, data, [final_tags], num_generations=4, keep=KeepBounds(0.25, 1.0))
    code = report_run("prefilter", config.out, lambda: run_prefilter(config, backend=backend, tokenizer=tokenizer),
                      summary_lines)
    err = capsys.readouterr().err
    assert code == exit_code
    assert ("no row can be kept: the reward final_tags paid nothing, not even the samples given the right answer in "
            "place of the model's own (100% of them unpaid)" in err) == (exit_code == 3)
    # and it says what the model wrote and which formats the reward pays (none the audit tries: these prompts
    # do not name <final> tags)
    said = "The model wrote, e.g., '#### 1'; final_tags paid a right answer above a wrong one in none of the formats"
    assert (said in err) == (exit_code == 3)
    assert ("unread_detail" in json.loads((tmp_path / "out" / "report.json").read_text())) == (exit_code == 3)
