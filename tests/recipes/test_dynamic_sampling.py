"""Dynamic sampling: constant groups are dropped and the batch refilled, with exact loss normalisers."""

from __future__ import annotations

import pytest
import torch
from datasets import Dataset

from referee.recipes.common.loading import load_tokenizer
from referee.recipes.errors import RecipeError
from referee.recipes.train.config import build_grpo_config
from referee.recipes.train.dynamic_sampling import classify_groups
from referee.recipes.train.trainer import RefereeGRPOTrainer

G = 4


def by_prompt(prompts, completions, **kwargs):
    """'A' is always right, 'B' always wrong, 'C' right on completions of odd character sum, 'D' never
    scored and 'E' scored only on completions of even character sum (always right): only 'C' groups
    can inform."""
    values = []
    for prompt, completion in zip(prompts, completions):
        odd = sum(map(ord, completion)) % 2
        values.append({"A": 1.0, "B": 0.0, "C": float(odd), "D": None, "E": None if odd else 1.0}[prompt[-1]])
    return values


by_prompt.kind = "correctness"


def make_trainer(tmp_path, model_dir, prompts, **settings):
    args = build_grpo_config(
        str(tmp_path), profile="cpu", per_device_train_batch_size=8, num_generations=G, max_completion_length=6,
        report_to="none", logging_steps=1, seed=0, temperature=1.0,
        dynamic_sampling={"max_rounds": 6, **settings})
    trainer = RefereeGRPOTrainer(model=str(model_dir), reward_funcs=by_prompt, args=args,
                                 processing_class=load_tokenizer(model_dir),
                                 train_dataset=Dataset.from_dict({"prompt": prompts}))
    trainer.model.train()
    return trainer


def groups_of(trainer, batch):
    """The prompt letter of each group of a (not yet shuffled) batch, and its advantages."""
    texts = trainer.processing_class.batch_decode(batch["prompt_ids"], skip_special_tokens=True)
    letters = [text.strip()[-1] for text in texts]
    assert all(len(set(letters[i:i + G])) == 1 for i in range(0, len(letters), G))  # whole groups
    return [letters[i] for i in range(0, len(letters), G)], batch["advantages"].view(-1, G)


def generate(trainer):
    torch.manual_seed(0)
    inputs = next(iter(trainer.get_train_dataloader()))
    return trainer._generate_and_score_completions(inputs)


def test_a_kept_batch_holds_only_groups_whose_reward_varies(tmp_path, model_dir):
    trainer = make_trainer(tmp_path, model_dir, ["1+A", "1+B", "1+C", "1+D", "1+E", "2+C", "3+C"] * 2)
    batch = generate(trainer)
    letters, advantages = groups_of(trainer, batch)
    assert len(letters) == 2 and set(letters) == {"C"}
    assert (advantages.abs().sum(dim=1) > 0).all()
    assert int(batch["num_items_in_batch"]) == int(batch["completion_mask"].sum())
    metrics = trainer._metrics["train"]
    assert metrics["dynamic_sampling/rounds"][-1] >= 1 and metrics["dynamic_sampling/shortfall_share"][-1] == 0.0
    generated = metrics["dynamic_sampling/generated_completions"][-1]
    assert generated == G * 2 * metrics["dynamic_sampling/rounds"][-1]


@pytest.mark.parametrize("policy", ["keep", "repeat", "skip"])
def test_shortfall_policies_fill_the_batch_as_documented(tmp_path, model_dir, policy):
    trainer = make_trainer(tmp_path, model_dir, ["1+A", "1+B", "1+D", "1+E"] * 2, on_shortfall=policy, max_rounds=2)
    batch = generate(trainer)
    letters, advantages = groups_of(trainer, batch)
    assert len(letters) == 2  # the batch keeps its size
    assert (advantages == 0).all()  # nothing informative was found: repeat falls back to constant groups
    metrics = trainer._metrics["train"]
    assert metrics["dynamic_sampling/rounds"][-1] == 2 and metrics["dynamic_sampling/shortfall_share"][-1] == 1.0
    assert metrics["dynamic_sampling/dropped_all_correct"][-1] + metrics["dynamic_sampling/dropped_all_wrong"][-1] + \
        metrics["dynamic_sampling/dropped_other"][-1] == 4
    if policy == "skip":
        assert int(batch["completion_mask"].sum()) == 0 and int(batch["num_items_in_batch"]) == 0
    else:
        assert int(batch["num_items_in_batch"]) == int(batch["completion_mask"].sum()) > 0


def test_repeat_fills_with_the_informative_groups_found(tmp_path, model_dir):
    # One informative group among many constant ones: two rounds find it at least once.
    trainer = make_trainer(tmp_path, model_dir, ["1+C"] + ["1+A"] * 15, on_shortfall="repeat", max_rounds=1)
    batch = generate(trainer)
    letters, _ = groups_of(trainer, batch)
    if "C" in letters:
        assert letters == ["C", "C"]


def test_none_rewards_never_make_a_group_informative():
    nan = float("nan")
    kinds = classify_groups(torch.tensor([1.0, nan, nan, nan, 1.0, nan, 0.0, nan, nan, nan, nan, nan]), 4)
    assert kinds.informative.tolist() == [False, True, False]
    assert kinds.unscored == 2


@pytest.mark.parametrize("settings, message", [
    ({"max_round": 3}, "dynamic_sampling has no key 'max_round'; did you mean 'max_rounds'?"),
    ({"on_shortfall": "drop"}, "dynamic_sampling.on_shortfall is 'drop'; choose one of keep, repeat, skip."),
    ({"max_rounds": 0}, "dynamic_sampling.max_rounds is 0; it must be a whole number >= 1."),
])
def test_bad_settings_are_refused_in_one_line(tmp_path, settings, message):
    with pytest.raises(RecipeError) as error:
        build_grpo_config(str(tmp_path), profile="cpu", dynamic_sampling=settings)
    assert message in str(error.value)


def test_a_reward_that_is_not_there_is_refused(tmp_path, model_dir):
    with pytest.raises(ValueError, match="dynamic_sampling.reward 'accuracy' is not one of the rewards"):
        make_trainer(tmp_path, model_dir, ["1+A"] * 4, reward="accuracy")


TWO_RANKS = """
import json, os, sys
import torch
from datasets import Dataset
from referee.recipes.common.loading import load_tokenizer
from referee.recipes.train.config import build_grpo_config
from referee.recipes.train.teardown import exit_process, holding_process_group
from referee.recipes.train.trainer import RefereeGRPOTrainer
sys.path.insert(0, sys.argv[3])
from test_dynamic_sampling import by_prompt

torch.set_num_threads(1)
model_dir, out = sys.argv[1], sys.argv[2]
extra = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
seen = []

class Recording(RefereeGRPOTrainer):
    def _generate_and_score_completions(self, inputs):
        batch = super()._generate_and_score_completions(inputs)
        texts = self.processing_class.batch_decode(batch["prompt_ids"], skip_special_tokens=True)
        seen.append({"letters": [t.strip()[-1] for t in texts], "advantages": batch["advantages"].tolist(),
                     "tokens": int(batch["num_items_in_batch"]), "rows": len(texts)})
        return batch

with holding_process_group():
    args = build_grpo_config(out, profile="cpu", per_device_train_batch_size=4, num_generations=4,
                             max_completion_length=6, max_steps=2, report_to="none", save_strategy="no", seed=0,
                             dynamic_sampling={"max_rounds": 8}, disable_tqdm=True, **extra)
    trainer = Recording(model=model_dir, reward_funcs=by_prompt, args=args, processing_class=load_tokenizer(model_dir),
                        train_dataset=Dataset.from_dict({"prompt": ["1+A", "1+C", "2+C", "3+C", "4+C", "1+D"] * 4}))
    trainer.train()
    rank = trainer.accelerator.process_index
    with open(os.path.join(out, f"rank{rank}.json"), "w") as sink:
        json.dump(seen, sink)
    if trainer.curriculum is not None:
        with open(os.path.join(out, f"curriculum{rank}.json"), "w") as sink:
            json.dump(trainer._curriculum_state(), sink)
    del trainer
exit_process(0)
"""


def run_two_ranks(tmp_path, model_dir, **extra):
    """Run TWO_RANKS on two processes with ``extra`` config settings; each rank's recorded batches."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "two_ranks.py"
    script.write_text(TWO_RANKS)
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                           str(script), str(model_dir), str(tmp_path), str(Path(__file__).parent), json.dumps(extra)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    return [json.loads((tmp_path / f"rank{rank}.json").read_text()) for rank in range(2)]


@pytest.mark.slow
def test_two_processes_keep_aligned_batches_of_informative_groups(tmp_path, model_dir):
    ranks = run_two_ranks(tmp_path, model_dir)
    assert len(ranks[0]) == len(ranks[1]) == 2  # one generation per step on each rank, no rank ahead
    for first, second in zip(*ranks):
        assert first["rows"] == second["rows"] == 4  # each rank hands TRL a full batch
        assert first["tokens"] == second["tokens"]  # the normaliser counts both ranks' kept tokens
        for batch in (first, second):
            assert set(batch["letters"]) == {"C"} and any(batch["advantages"])


@pytest.mark.slow
def test_two_processes_keep_the_same_sweep_state(tmp_path, model_dir):
    import json

    run_two_ranks(tmp_path, model_dir, curriculum={"sampler": "sweep", "retire_after": 1, "half_life": 1})
    states = [json.loads((tmp_path / f"curriculum{rank}.json").read_text()) for rank in range(2)]
    assert states[0] == states[1]
    assert states[0]["sweep"]["retired"] and states[0]["step"] == 1  # 'A' retired; the posterior forgot


def test_groups_split_across_processes_are_refused():
    from referee.recipes.train.dynamic_sampling import split_groups_problem

    assert "not a multiple of num_generations=4" in split_groups_problem(12, 2, 4)


@pytest.mark.parametrize("dropped, which", [((6.0, 1.0), "too easy"), ((0.0, 7.0), "too hard")])
def test_diagnostics_say_when_the_rounds_run_out_and_whether_the_data_is_too_easy_or_hard(dropped, which):
    from referee.recipes.diagnostics.monitor import DiagnosticsMonitor

    monitor = DiagnosticsMonitor()
    for step in range(1, 6):
        found = monitor.update(step, {"reward": 0.5, "dynamic_sampling/shortfall_share": 0.75,
                                      "dynamic_sampling/dropped_all_correct": dropped[0],
                                      "dynamic_sampling/dropped_all_wrong": dropped[1]})
        if found:
            assert found[0].cause == "dynamic_sampling_exhausted" and which in found[0].evidence
            return
    raise AssertionError("no finding")


def curriculum_trainer(tmp_path, model_dir, prompts, curriculum, **settings):
    args = build_grpo_config(
        str(tmp_path / "out"), profile="cpu", per_device_train_batch_size=8, num_generations=G,
        max_completion_length=6, report_to="none", logging_steps=1, seed=0, curriculum=curriculum,
        disable_tqdm=True, **settings)
    trainer = RefereeGRPOTrainer(model=str(model_dir), reward_funcs=by_prompt, args=args,
                                 processing_class=load_tokenizer(model_dir),
                                 train_dataset=Dataset.from_dict({"prompt": prompts}))
    trainer.model.train()
    return trainer


def seed_file(tmp_path, counts):
    import json

    path = tmp_path / "all.jsonl"
    path.write_text("".join(json.dumps({"row_index": i, "num_correct": c, "num_samples": n}) + "\n"
                            for i, (c, n) in enumerate(counts)))
    return str(path)


def test_the_band_curriculum_draws_only_prompts_the_model_sometimes_solves(tmp_path, model_dir):
    prompts = ["1+A", "2+A", "1+C", "2+C", "3+C", "1+B"]
    seeded = seed_file(tmp_path, [(20, 20), (20, 20), (5, 10), (4, 10), (6, 10), (0, 20)])
    trainer = curriculum_trainer(tmp_path, model_dir, prompts, {"sampler": "band", "seed_from": seeded})
    for _ in range(3):
        letters, _ = groups_of(trainer, generate(trainer))
        assert set(letters) == {"C"}
    assert 0 < trainer._metrics["train"]["curriculum/solved_share"][-1] < 1


def test_the_posterior_learns_from_every_step(tmp_path, model_dir):
    trainer = curriculum_trainer(tmp_path, model_dir, ["1+A", "1+B"], {"sampler": "learnability"})
    generate(trainer)
    means = trainer.posterior.means()
    assert means[0] > 0.5 > means[1] or means[0] == 0.5  # an 'A' group passed, a 'B' group failed, or not drawn
    assert sum(trainer.posterior.alpha) + sum(trainer.posterior.beta) == 2 * 2 + 2 * G  # prior + one batch


@pytest.mark.parametrize("curriculum", [{"sampler": "thompson"}, {"sampler": "sweep", "retire_after": 1}])
def test_a_resumed_run_draws_the_prompts_of_the_uninterrupted_one(tmp_path, model_dir, curriculum):
    prompts = [f"{i}+{letter}" for i in range(4) for letter in "ABCE"]
    drawn: dict[str, list[list[int]]] = {"whole": [], "resumed": []}

    def run(name, folder, **keys):
        trainer = curriculum_trainer(folder, model_dir, prompts, {**curriculum, "half_life": 3}, max_steps=4,
                                     save_strategy="steps", save_steps=2, **keys)
        draw = trainer._draw_inputs

        def recording(round_index):
            rows, indices = draw(round_index)
            drawn[name].append(indices[::G])
            return rows, indices

        trainer._draw_inputs = recording
        return trainer

    import contextlib
    import io

    whole = run("whole", tmp_path / "whole")
    with contextlib.redirect_stdout(io.StringIO()):
        whole.train()
    checkpoint = tmp_path / "whole" / "out" / "checkpoint-2"
    assert (checkpoint / "curriculum_state.json").is_file()
    resumed = run("resumed", tmp_path / "resumed")
    with contextlib.redirect_stdout(io.StringIO()):
        resumed.train(resume_from_checkpoint=str(checkpoint))
    assert drawn["resumed"] == drawn["whole"][2:]
    assert resumed._curriculum_state() == whole._curriculum_state()
    assert whole.posterior.step == 3  # the posterior forgot up to the last generation's step
    if curriculum["sampler"] == "sweep":  # 'A' and 'B' prompts retire after one constant group
        assert {why["reason"] for why in whole.sweep.retired.values()} <= {"solved", "failed"} and whole.sweep.retired


def test_the_sweep_curriculum_draws_every_prompt_once_before_any_twice(tmp_path, model_dir):
    prompts = [f"{i}+{letter}" for i in range(3) for letter in "ABCE"]  # 12 prompts, 2 groups a step
    trainer = curriculum_trainer(tmp_path, model_dir, prompts, {"sampler": "sweep", "retire_after": 0},
                                 dynamic_sampling={"max_rounds": 2})
    draw, drawn = trainer._draw_inputs, []

    def recording(round_index):
        rows, indices = draw(round_index)
        drawn.extend(indices[::G])
        return rows, indices

    trainer._draw_inputs = recording
    while len(drawn) < 2 * len(prompts):
        generate(trainer)
        trainer.state.global_step += 1
    assert sorted(drawn[:12]) == list(range(12)) and sorted(drawn[12:24]) == list(range(12))
    assert trainer._metrics["train"]["curriculum/sweep"][-1] >= 1


def test_a_seed_file_of_other_data_is_refused(tmp_path, model_dir):
    with pytest.raises(ValueError, match="has 2 rows but the training set has 3"):
        curriculum_trainer(tmp_path, model_dir, ["1+A", "1+B", "1+C"],
                           {"seed_from": seed_file(tmp_path, [(1, 2), (0, 2)])})
