"""Held-out evaluation: the pass@k estimator, maj@k by equivalence, `referee eval` and its resume."""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.recipes.cli import main
from referee.recipes.heldout.metrics import majority_at_k, pass_at_k
from referee.recipes.prefilter.chunks import ChunkRunner
from referee.rewards import get_reward
from referee.verifiers.answer_groups import AnswerPartition, partition_answers


def product_form(n: int, c: int, k: int) -> Fraction:
    """pass@k as the HumanEval paper computes it: 1 - prod(1 - k/i) for i from n-c+1 to n."""
    if n - c < k:
        return Fraction(1)
    product = Fraction(1)
    for i in range(n - c + 1, n + 1):
        product *= 1 - Fraction(k, i)
    return 1 - product


@given(st.integers(1, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_at_k_matches_the_product_form(case):
    n, c, k = case
    assert math.isclose(pass_at_k(n, c, k), float(product_form(n, c, k)), rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize("n, c, k, expected", [
    (16, 0, 1, 0.0), (16, 0, 16, 0.0),    # nothing right: never passes
    (16, 16, 1, 1.0), (16, 16, 16, 1.0),  # everything right
    (5, 3, 3, 1.0), (5, 4, 2, 1.0),       # fewer wrong samples than k: a right one is always drawn
    (4, 1, 1, 0.25), (4, 1, 4, 1.0),
])
def test_pass_at_k_edge_cases(n, c, k, expected):
    assert pass_at_k(n, c, k) == expected


@pytest.mark.parametrize("n, c, k", [(4, 5, 1), (4, 1, 0), (4, 1, 5), (0, 0, 1), (4, -1, 1)])
def test_pass_at_k_refuses_impossible_counts(n, c, k):
    with pytest.raises(ValueError, match="pass@k needs"):
        pass_at_k(n, c, k)


def test_answers_written_differently_with_one_value_are_one_vote():
    completions = [r"so \boxed{0.5}", r"\boxed{\dfrac{1}{2}}", r"The answer is $\frac{2}{4}$.", r"\boxed{3}",
                   r"\boxed{3.0}", r"\boxed{\frac{6}{2}}", "I give up."]
    partition = partition_answers(completions, verifier="math", gold="1/2")
    assert partition.groups == ((0, 1, 2), (3, 4, 5))
    assert partition.labels[6] is None  # no answer casts no vote
    assert partition.correct_group == 0
    # Voting on strings would have made 3 a plurality of one against three singletons of 1/2.
    assert partition.majority_score() == 0.5  # a 3-3 tie: the expected score of a random tie-break


def test_a_wrong_answer_written_many_ways_wins_the_vote_as_one_group():
    completions = [r"\boxed{0.5}", r"\boxed{3}", r"\boxed{3.0}", r"\boxed{\frac{9}{3}}"]
    partition = partition_answers(completions, verifier="math", gold="1/2")
    assert partition.groups[0] == (1, 2, 3) and partition.correct_group == 1
    assert partition.majority_score() == 0.0


def test_a_hedge_is_no_vote_for_either_of_its_answers():
    completions = [r"\boxed{4}", r"It is \boxed{4} or \boxed{5}, I am not sure.", r"\boxed{5}", r"\boxed{5}"]
    partition = partition_answers(completions, verifier="math", gold="4")
    assert partition.labels[1] not in (partition.labels[0], partition.labels[2])
    assert partition.groups[0] == (2, 3)  # the 5s win; the hedge paid neither of them
    assert partition.majority_score() == 0.0


def test_gsm8k_answers_group_by_number_without_a_gold():
    partition = partition_answers(["#### 1,000", "The answer is 1000.", "#### 999", "no number"], verifier="gsm8k")
    assert partition.groups == ((0, 1), (2,)) and partition.labels[3] is None
    assert partition.correct_group is None and partition.majority_score() == 0.0


def test_grouping_out_of_time_says_so_instead_of_guessing():
    partition = partition_answers([r"\boxed{1}", r"\boxed{1.0}"], verifier="math", gold="1", timeout=1e-9)
    assert partition.complete is False and partition.labels == (None, None)


def test_code_answers_are_not_grouped():
    with pytest.raises(ValueError, match="cannot be grouped by value"):
        partition_answers(["print(1)"], verifier="code")


def test_majority_at_k_averages_every_subset_when_few():
    # right, right, wrong, no answer: of the six pairs, four elect the right answer, two tie or miss.
    partition = AnswerPartition((0, 0, 1, None), ((0, 1), (2,)), ("4", "5"), correct_group=0)
    pairs = [(0, 1, 1.0), (0, 2, 0.5), (0, 3, 1.0), (1, 2, 0.5), (1, 3, 1.0), (2, 3, 0.0)]
    assert majority_at_k(partition, [0, 1, 2, 3], 2) == pytest.approx(sum(s for *_, s in pairs) / len(pairs))
    assert majority_at_k(partition, [0, 1, 2, 3], 1) == pytest.approx(0.5)  # maj@1 is pass@1


def test_majority_at_k_samples_seeded_subsets_when_many():
    labels = tuple(i % 3 for i in range(40))
    groups = tuple(tuple(i for i in range(40) if i % 3 == g) for g in range(3))
    partition = AnswerPartition(labels, groups, ("a", "b", "c"), correct_group=0)
    first = majority_at_k(partition, range(40), 9, seed=3)
    assert first == majority_at_k(partition, range(40), 9, seed=3)
    assert 0.2 < first < 0.6


def eval_args(model_dir, data, out, *extra):
    return ["eval", "--model", str(model_dir), "--data", str(data), "--prompt-column", "question",
            "--reward", "gsm8k_accuracy", "-k", "4", "--max-tokens", "6", "--chunk-size", "2", "--out", str(out),
            "--backend", "transformers", "--no-progress", *extra]


@pytest.fixture
def sums(tmp_path):
    path = tmp_path / "sums.jsonl"
    path.write_text("".join(json.dumps({"question": f"{a}+{a}", "answer": f"#### {2 * a}"}) + "\n" for a in range(5)))
    return path


def test_referee_eval_writes_rows_report_and_plot(model_dir, sums, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(eval_args(model_dir, sums, out, "--ks", "1,2,4")) == 0
    printed = capsys.readouterr().out
    assert "pass@k" in printed and "maj@k" in printed and f"{out}/eval.png" in printed
    report = json.loads((out / "report.json").read_text())
    assert report["ks"] == [1, 2, 4] and report["rows"] == 5
    assert set(report["metrics"]) >= {"pass@1", "pass@2", "pass@4", "maj@4", "mean_length", "truncated_share"}
    assert report["maj_at_k"] == {"grouped_by": "gsm8k_accuracy", "problem": None}
    rows = [json.loads(line) for line in (out / "all.jsonl").read_text().splitlines()]
    assert [row["row_index"] for row in rows] == list(range(5))
    assert all(len(row["samples"]) == 4 and set(row["pass_at_k"]) == {"1", "2", "4"} for row in rows)
    assert (out / "eval.png").read_bytes()[:4] == b"\x89PNG"


def test_eval_of_a_model_that_never_writes_what_the_reward_reads_warns_and_exits_3(model_dir, sums, tmp_path, capsys):
    """Strict GSM8K reads only '#### N', which the untrained tiny model never writes: every row scores 0 for
    want of an answer, which is no accuracy at all, so the run says so and exits 3 (docs/cli.md)."""
    out = tmp_path / "out"
    assert main(eval_args(model_dir, sums, out, "-O", "mode=strict")) == 3
    captured = capsys.readouterr()
    assert "pass@k" in captured.out  # the results are still written and summarised
    assert captured.err.splitlines()[-1] == ("referee eval: the reward gsm8k_accuracy read no answer in 100% of the completions: the "
                            "model never writes what the reward reads, so no pass rate means anything; read the "
                            "samples in all.jsonl and prompt for the format the reward reads (referee audit names "
                            "it), or pick a reward that reads what the model writes.")
    assert main(eval_args(model_dir, sums, tmp_path / "lenient")) == 0  # the last number is read: an answer, if wrong


def final_tags(prompts, completions, answer, **kwargs):
    """A reward of one's own that reads <final> tags and logs nothing (no no_answer share)."""
    read = [re.findall(r"<final>(.*?)</final>", text) for text in completions]
    return [float(bool(found) and found[-1].strip() == str(gold)) for found, gold in zip(read, answer)]


@pytest.mark.parametrize(("writes", "exit_code"), [
    ("#### 1", 3),  # a format the reward never reads: pass@k 0 says nothing of the model
    ("<final>1</final>", 0),  # the reward's format, wrong answers: a real 0
])
def test_eval_with_a_reward_of_ones_own_that_never_reads_the_model_exits_3(tmp_path, capsys, writes, exit_code):
    from referee.recipes.commands.eval import summary_lines
    from referee.recipes.commands.prefilter import report_run
    from referee.recipes.common.generation import Sample
    from referee.recipes.common.tiny_model import build_char_tokenizer
    from referee.recipes.heldout import EvalConfig, run_eval

    class Scripted:
        context_length = None

        def generate(self, prompt_ids, n, sampling, seed):
            return [[Sample(writes, (1,), False)] * n for _ in prompt_ids]

    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"prompt": f"{k} + 4 =", "answer": str(k + 4)}) + "\n" for k in range(3)))
    config = EvalConfig(model="unused", data=str(data), out=str(tmp_path / "out"), rewards=(final_tags,),
                        num_generations=4, progress=False)
    code = report_run("eval", config.out, lambda: run_eval(config, backend=Scripted(),
                                                           tokenizer=build_char_tokenizer()), summary_lines)
    assert code == exit_code
    assert ("referee eval: no row is solved: the reward final_tags paid nothing, not even the samples given the right "
            "answer in place of the model's own (100% of them unpaid)" in capsys.readouterr().err) == (exit_code == 3)


def test_an_interrupted_eval_resumes_to_the_same_result(model_dir, sums, tmp_path, monkeypatch):
    whole = tmp_path / "whole"
    assert main(eval_args(model_dir, sums, whole)) == 0
    expected = (whole / "all.jsonl").read_text()
    run = ChunkRunner.run
    calls = []

    def interrupted(self, index):
        calls.append(index)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return run(self, index)

    monkeypatch.setattr(ChunkRunner, "run", interrupted)
    stopped = tmp_path / "stopped"
    assert main(eval_args(model_dir, sums, stopped)) == 130
    assert not (stopped / "all.jsonl").exists()
    monkeypatch.setattr(ChunkRunner, "run", run)
    assert main(eval_args(model_dir, sums, stopped)) == 0
    assert (stopped / "all.jsonl").read_text() == expected
    assert json.loads((stopped / "report.json").read_text())["metrics"] == \
        json.loads((whole / "report.json").read_text())["metrics"]


def test_eval_shards_merge_into_the_unsharded_result(model_dir, sums, tmp_path):
    whole = tmp_path / "whole"
    assert main(eval_args(model_dir, sums, whole)) == 0
    shards = [tmp_path / f"shard{i}" for i in range(2)]
    for index, folder in enumerate(shards):
        assert main(eval_args(model_dir, sums, folder, "--shard-index", str(index), "--num-shards", "2")) == 0
    merged = tmp_path / "merged"
    assert main(["eval", "--out", str(merged), "--merge", *map(str, shards)]) == 0
    assert json.loads((merged / "report.json").read_text())["metrics"] == \
        json.loads((whole / "report.json").read_text())["metrics"]


def test_maj_at_k_names_why_a_reward_cannot_group_answers():
    from referee.recipes.heldout.results import grouping_problem

    assert grouping_problem(get_reward("code_pass_rate")).endswith("whose answers are not values to vote on")
    assert grouping_problem(get_reward("gsm8k_format")) == \
        "reward gsm8k_format has no verifier to group answers by (a referee VerifierReward has one)"


def test_eval_refuses_bad_ks_in_one_line(model_dir, sums, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(eval_args(model_dir, sums, tmp_path / "o", "--ks", "0,2"))
    assert exit_info.value.code == 2
    assert "--ks '0,2' must list whole numbers >= 1" in capsys.readouterr().err
