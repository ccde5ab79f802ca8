"""DiagnosticsCallback: a real CPU GRPOTrainer run writes the samples file and logs flags;
on_log handles eval logs, the training summary, log history and ranks."""

import json
import logging
import re

import pytest
from transformers import TrainerControl, TrainerState, TrainingArguments

from referee.recipes.diagnostics import SAMPLES_FILE, DiagnosticsCallback, sample_rows
from referee.recipes.diagnostics.monitor import ADVANTAGE_MEAN, CAUSES, DiagnosticsConfig


def _answer_of(prompt):
    left, right = prompt.rstrip("=").split("+")
    return str(int(left) + int(right))


def _reward(prompt, completion):
    # the length term makes rewards differ between samples, so a misaligned row shows
    return float(_answer_of(prompt) in completion) + len(completion) / 100


class AnswerAndLength:
    """A reward that logs what it read through log_extra, as referee's rewards do."""

    __name__ = "answer_and_length"

    def __call__(self, prompts, completions, log_extra=None, **kwargs):
        if log_extra is not None:
            log_extra("extracted", [completion.strip()[:4] for completion in completions])
        return [_reward(prompt, completion) for prompt, completion in zip(prompts, completions)]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Three GRPO steps of the tiny model on CPU with the callback attached."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from referee.recipes.common.loading import load_tokenizer
    from referee.recipes.common.tiny_model import save_tiny_model

    torch.set_num_threads(1)
    folder = save_tiny_model(tmp_path_factory.mktemp("tiny"))
    output_dir = tmp_path_factory.mktemp("run")
    rows = [{"prompt": f"{a}+{b}=", "answer": str(a + b)} for a in range(5) for b in range(5)]
    args = GRPOConfig(output_dir=str(output_dir), use_cpu=True, bf16=False, activation_checkpointing=False,
                      max_steps=3, num_generations=4, per_device_train_batch_size=4, max_completion_length=16,
                      learning_rate=1e-4, logging_steps=1, report_to="none", save_strategy="no", seed=0)
    trainer = GRPOTrainer(model=AutoModelForCausalLM.from_pretrained(folder), reward_funcs=[AnswerAndLength()],
                          args=args, train_dataset=Dataset.from_list(rows), processing_class=load_tokenizer(folder))
    # The untrained model runs into max_completion_length: a low truncation limit must fire.
    config = DiagnosticsConfig(window=2, min_points=2, clipped_share_max=0.1, samples_every=2, num_samples=3)
    callback = DiagnosticsCallback(config).attach(trainer)
    logger = logging.getLogger("referee.recipes.diagnostics")
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger.addHandler(handler)
    try:
        trainer.train()
    finally:
        logger.removeHandler(handler)
    return trainer, callback, output_dir, [record.getMessage() for record in records]


@pytest.mark.slow
def test_attach_puts_the_callback_ahead_of_the_printer(trained):
    trainer, callback, _, _ = trained
    assert trainer.callback_handler.callbacks[0] is callback
    assert trainer.callback_handler.callbacks.count(callback) == 1


@pytest.mark.slow
def test_a_cpu_run_writes_samples_every_n_steps(trained):
    _, callback, output_dir, _ = trained
    assert callback.samples_path == output_dir / SAMPLES_FILE
    rows = [json.loads(line) for line in (output_dir / SAMPLES_FILE).read_text().splitlines()]
    assert [row["step"] for row in rows] == [1, 1, 1, 3, 3, 3]
    for row in rows:
        assert set(row) == {"step", "prompt", "completion", "rewards", "advantage", "extra"}
        assert isinstance(row["completion"], str)
        # the reward, the logged extraction and the completion are of the same sample
        assert row["rewards"] == {"answer_and_length": pytest.approx(_reward(row["prompt"], row["completion"]))}
        assert row["extra"] == {"extracted": row["completion"].strip()[:4]}
        assert isinstance(row["advantage"], float)


@pytest.mark.slow
def test_a_cpu_run_logs_flags_and_the_mean_advantage(trained):
    trainer, _, _, _ = trained
    step_logs = [entry for entry in trainer.state.log_history if "reward" in entry]
    assert len(step_logs) == 3
    for entry in step_logs:
        assert {f"diagnostics/{cause}" for cause in CAUSES} <= set(entry)
        assert abs(entry[ADVANTAGE_MEAN]) < 1e-6  # TRL centres every group
    assert step_logs[-1]["diagnostics/truncated_completions"] == 1.0
    summary = trainer.state.log_history[-1]
    assert "train_runtime" in summary and not any(key.startswith("diagnostics/") for key in summary)


@pytest.mark.slow
def test_a_cpu_run_warns_once_with_the_remedy(trained):
    _, callback, _, messages = trained
    truncation = [message for message in messages if "truncated_completions" in message]
    assert len(truncation) == 1
    assert "max_completion_length" in truncation[0]
    assert len(messages) == len({finding.cause for finding in callback.monitor.reported})


def _state(step, *, main=True):
    state = TrainerState()
    state.global_step = step
    state.is_world_process_zero = main
    return state


def test_on_log_skips_eval_logs_and_the_summary():
    callback = DiagnosticsCallback()
    args = TrainingArguments(output_dir="/tmp/unused", report_to="none")
    for logs in ({"eval_reward": 0.1, "eval_loss": 0.2}, {"train_runtime": 3.0, "train_loss": 0.1}, {}, None):
        callback.on_log(args, _state(5), TrainerControl(), logs=logs)
        assert not logs or not any(key.startswith("diagnostics/") for key in logs)
    assert callback.monitor.reported == []


def test_on_log_updates_the_log_history_entry_of_the_step(caplog):
    callback = DiagnosticsCallback()
    args = TrainingArguments(output_dir="/tmp/unused", report_to="none")
    state = _state(4)
    state.log_history = [{"kl": -0.5, "step": 4}]
    logs = {"kl": -0.5}
    with caplog.at_level(logging.WARNING, logger="referee.recipes.diagnostics"):
        callback.on_log(args, state, TrainerControl(), logs=logs)
        callback.on_log(args, state, TrainerControl(), logs=dict(logs))
    assert state.log_history[0]["diagnostics/negative_kl"] == 1.0 == logs["diagnostics/negative_kl"]
    assert len(caplog.records) == 1 and "use k3" in caplog.records[0].getMessage()


def test_other_ranks_flag_but_do_not_warn(caplog):
    callback = DiagnosticsCallback()
    args = TrainingArguments(output_dir="/tmp/unused", report_to="none")
    logs = {"kl": -0.5}
    with caplog.at_level(logging.WARNING, logger="referee.recipes.diagnostics"):
        callback.on_log(args, _state(1, main=False), TrainerControl(), logs=logs)
    assert logs["diagnostics/negative_kl"] == 1.0 and caplog.records == []


def test_sample_rows_tolerate_short_columns_and_nan():
    batch = {"prompt": ["p"] * 3, "completion": ["a", "b", "c"], "rewards": {"r": [float("nan"), 1.0]},
             "advantages": [0.0, 0.5, -0.5], "extra": {}}
    rows = sample_rows(2, batch, 5)
    assert [row["completion"] for row in rows] == ["a", "b", "c"]
    assert [row["rewards"]["r"] for row in rows] == [None, 1.0, None]
    assert sample_rows(2, {**batch, "completion": []}, 3) == []


def warnings_of_a_run_that_pays_nothing(caplog, reward, completions, cause, *, no_answer=None, rows=()):
    """The diagnostics warnings naming ``cause`` of five logs in which ``reward`` paid 0 for every completion of a
    batch of ``completions`` (its no_answer share ``no_answer`` when given), the trainer's rows ``rows``."""
    from types import SimpleNamespace

    from transformers.trainer_callback import CallbackHandler

    trainer = SimpleNamespace(callback_handler=CallbackHandler([], None, None, None, None), reward_funcs=[reward],
                              train_dataset=list(rows),
                              _logs={"prompt": ["2 + 2 ="] * len(completions), "completion": completions,
                                     "rewards": {}, "advantages": [0.0] * len(completions), "extra": {}})
    callback = DiagnosticsCallback(DiagnosticsConfig(samples_every=0)).attach(trainer)
    args = TrainingArguments(output_dir="/tmp/unused", report_to="none")
    logs = {"frac_reward_zero_std": 1.0, "reward_std": 0.0, "reward": 0.0}
    if no_answer is not None:
        logs[f"rewards/{reward.__name__}/no_answer"] = no_answer
    with caplog.at_level(logging.WARNING, logger="referee.recipes.diagnostics"):
        for step in range(1, 6):
            callback.on_log(args, _state(step), TrainerControl(), logs=dict(logs))
    return [record.getMessage() for record in caplog.records if cause in record.getMessage()]


def test_the_never_parses_warning_shows_a_completion_and_the_format_the_reward_reads(caplog):
    from referee.rewards import get_reward

    messages = warnings_of_a_run_that_pays_nothing(caplog, get_reward("gsm8k_accuracy"), ["<answer>4</answer>"] * 2,
                                                   "reward_never_parses", no_answer=1.0)
    assert len(messages) == 1
    assert "Example completion: '<answer>4</answer>'." in messages[0]
    assert "gsm8k_accuracy reads answers written as 'The answer is X.\\n#### X'." in messages[0]


def _tag_reader(tag):
    def reward(completions, answer, **kwargs):
        texts = [c if isinstance(c, str) else c[-1]["content"] for c in completions]
        found = [re.findall(f"<{tag}>(.*?)</{tag}>", text) for text in texts]
        return [float(bool(f) and f[-1].strip() == gold) for f, gold in zip(found, answer)]
    reward.__name__ = f"{tag}_tags"
    return reward


@pytest.mark.parametrize(("reward", "said"), [
    (_tag_reader("answer"), "answer_tags pays right answers written as answer tags (referee audit's probes)."),
    (_tag_reader("final"), "final_tags paid a right answer above a wrong one in none of the formats referee audit "
                           "tries (boxed, ####, answer tags, Answer:, bold, plain): name its format with referee "
                           "audit --answer-template."),
])
def test_a_reward_of_ones_own_that_pays_nothing_shows_a_completion_and_what_it_reads(caplog, reward, said):
    """The issue: a reward reading a format the demo model never writes paid 0 at every step; the warning said only
    'pre-filter the prompts'. It now shows what the model wrote and the format the audit finds the reward reads."""
    rows = [{"prompt": [{"role": "user", "content": f"{k}+2"}], "answer": str(k + 2)} for k in range(3)]
    messages = warnings_of_a_run_that_pays_nothing(
        caplog, reward, [[{"role": "assistant", "content": "2 + 2 = 4\n#### 4"}]] * 2, "degenerate_groups", rows=rows)
    assert len(messages) == 1
    assert "never write what your reward reads" in messages[0]
    assert "Example completion: '2 + 2 = 4\\n#### 4'." in messages[0]
    assert said in messages[0]


def test_the_never_parses_warning_names_a_format_declared_by_write_answer(caplog):
    class FinalTags:
        __name__ = "final_tags"
        kind = "correctness"

        def write_answer(self, answer):
            return f"<final>{answer}</final>"

        def __call__(self, completions, **kwargs):
            return [0.0] * len(completions)

    messages = warnings_of_a_run_that_pays_nothing(caplog, FinalTags(), ["#### 4"], "reward_never_parses",
                                                   no_answer=1.0)
    assert "final_tags reads answers written as '<final>X</final>'." in messages[0]
