import logging
import pickle
from collections import defaultdict

import pytest

from referee.rewards import FormatReward, VerifierReward, get_reward
from referee.rewards import policy
from referee.verifiers import Verdict, gsm8k

GOLD = "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\nShe makes 9 * 2 = $<<9*2=18>>18.\n#### 18"


class FakeTrainer:
    """Collects what a reward logs through the callbacks GRPOTrainer passes."""

    def __init__(self):
        self.metrics = defaultdict(list)
        self.extra = defaultdict(list)

    def kwargs(self):
        return {"log_metric": lambda name, value: self.metrics[name].append(value),
                "log_extra": lambda column, values: self.extra[column].extend(values),
                "trainer_state": object()}


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(policy, "_warned", set())


def test_gsm8k_accuracy_reads_standard_and_conversational_completions():
    reward = get_reward("gsm8k_accuracy")
    completions = [
        "16 - 3 - 4 = 9, 9 * 2 = 18\n#### 18",
        [{"role": "assistant", "content": "She makes $\\boxed{18}$ dollars."}],
        [{"role": "assistant", "content": [{"type": "text", "text": "#### 17"}]}],
        "I am not sure.",
    ]
    assert reward(prompts=["q"] * 4, completions=completions, completion_ids=[[1]] * 4, answer=[GOLD] * 4) == [
        1.0, 1.0, 0.0, 0.0]


def test_metrics_and_extracted_answers_are_logged():
    trainer = FakeTrainer()
    reward = get_reward("gsm8k_accuracy")
    reward(prompts=["q"] * 4, completions=["#### 18", "#### 17", "no idea", "#### 18"],
           answer=[18, 18, 18, "eighteen"], **trainer.kwargs())
    assert trainer.metrics == {
        "rewards/gsm8k_accuracy/no_answer": [0.25],
        "rewards/gsm8k_accuracy/timeout": [0.0],
        "rewards/gsm8k_accuracy/error": [0.25],
    }
    assert trainer.extra["gsm8k_accuracy/extracted"] == ["18", "17", None, None]
    assert trainer.extra["gsm8k_accuracy/status"] == ["correct", "wrong", "no_answer", "error"]


def test_not_the_completions_fault_is_none_and_warned_once_per_kind(caplog):
    reward = get_reward("gsm8k_accuracy")
    with caplog.at_level(logging.WARNING, logger="referee.rewards"):
        assert reward(completions=["#### 18", "#### 18"], answer=["eighteen", "n/a"]) == [None, None]
        assert reward(completions=["#### 18"], answer=["???"]) == [None]
        assert reward(completions=["#### 18"], question=["How many?"]) == [None]
        assert reward(completions=["#### 18"], question=["How many?"]) == [None]
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 2, messages
    assert "eighteen" in messages[0] and "None" in messages[0]
    assert "no gold column 'answer'" in messages[1] and "question" in messages[1]


def test_missing_gold_column_counts_as_errors():
    trainer = FakeTrainer()
    assert get_reward("gsm8k_accuracy")(completions=["#### 18"] * 3, solution=["18"] * 3, **trainer.kwargs()) == [None] * 3
    assert trainer.metrics["rewards/gsm8k_accuracy/error"] == [1.0]


def test_gold_column_is_configurable():
    reward = get_reward("gsm8k_accuracy", gold_column="final", name="gsm8k_final")
    assert reward(completions=["#### 18"], final=["18"], answer=["17"]) == [1.0]
    first_present = VerifierReward("either", "gsm8k", gold_column=("answer", "solution"))
    assert first_present(completions=["#### 18"], solution=["18"]) == [1.0]
    assert first_present(completions=["#### 18"], answer=["18"], solution=["17"]) == [1.0]


def test_verifier_options_are_checked_when_the_reward_is_built():
    assert get_reward("gsm8k_accuracy", mode="strict")(completions=["The answer is 18."], answer=["18"]) == [0.0]
    with pytest.raises(ValueError, match="Bad option for the gsm8k verifier"):
        get_reward("gsm8k_accuracy", strictness=2)
    with pytest.raises(ValueError, match="Unknown reward 'gsm8k'; choose one of gsm8k_accuracy"):
        get_reward("gsm8k")
    with pytest.raises(ValueError, match="not a plain name"):
        get_reward("gsm8k_accuracy", name="my reward")
    with pytest.raises(ValueError, match="gold_column"):
        VerifierReward("x", "gsm8k", gold_column=[])


def test_unreadable_completions_are_errors_not_zeros():
    assert get_reward("gsm8k_accuracy")(completions=[None, 42, [], "#### 18"], answer=[18] * 4) == [None, None, None, 1.0]
    assert get_reward("gsm8k_format")(completions=[None, "#### 18"]) == [None, 1.0]


def test_a_crashing_batch_call_falls_back_to_one_completion_at_a_time(monkeypatch, caplog):
    def broken_batch(completions, golds, **options):
        raise RuntimeError("worker pool died")

    real_verify = gsm8k.verify

    def picky_verify(completion, gold, **options):
        if "boom" in completion:
            raise MemoryError("verifier bug")
        return real_verify(completion, gold, **options)

    monkeypatch.setattr(gsm8k, "verify_batch", broken_batch)
    monkeypatch.setattr(gsm8k, "verify", picky_verify)
    trainer = FakeTrainer()
    with caplog.at_level(logging.WARNING, logger="referee.rewards"):
        rewards = get_reward("gsm8k_accuracy")(completions=["#### 18", "boom", "#### 7"], answer=[18] * 3, **trainer.kwargs())
    assert rewards == [1.0, None, 0.0]
    assert trainer.metrics["rewards/gsm8k_accuracy/error"] == [pytest.approx(1 / 3)]
    text = caplog.text
    assert "worker pool died" in text and "MemoryError: verifier bug" in text


def test_a_verifier_returning_garbage_is_contained(monkeypatch):
    monkeypatch.setattr(gsm8k, "verify_batch", lambda completions, golds, **options: [None])
    monkeypatch.setattr(gsm8k, "verify", lambda completion, gold, **options: "correct")
    assert get_reward("gsm8k_accuracy")(completions=["#### 18", "#### 18"], answer=[18, 18]) == [None, None]


def test_nothing_escapes_even_when_the_reward_layer_itself_breaks(monkeypatch):
    reward = get_reward("gsm8k_accuracy")
    monkeypatch.setattr(VerifierReward, "verdicts", lambda self, completions, **columns: 1 / 0)
    trainer = FakeTrainer()
    assert reward(completions=["#### 18", "#### 18"], answer=[18, 18], **trainer.kwargs()) == [None, None]
    assert trainer.metrics["rewards/gsm8k_accuracy/error"] == [1.0]


def test_broken_logging_callbacks_do_not_stop_scoring():
    def broken(*args):
        raise RuntimeError("logger down")

    assert get_reward("gsm8k_accuracy")(completions=["#### 18"], answer=[18], log_metric=broken, log_extra=broken) == [1.0]


def test_column_length_mismatch_is_an_error():
    assert get_reward("gsm8k_accuracy")(completions=["#### 18", "#### 18"], answer=[18]) == [None, None]
    assert get_reward("gsm8k_accuracy")(completions=["#### 18"], answer="18") == [None]


@pytest.mark.parametrize(("name", "completion", "expected"), [
    ("think_format", "Let me compute 9 * 2 = 18.\n</think>\n#### 18", 1.0),
    ("think_format", "<think>\n\n</think>\n\n#### 18", 0.0),
    ("answer_format", "<think>x</think><answer>18</answer>", 1.0),
    ("answer_format", "<answer>17</answer><answer>18</answer>", 0.0),
    ("tag_count", "<think>x</think>18", 0.5),
    ("gsm8k_format", "9 * 2 = 18\n#### 18", 1.0),
    ("gsm8k_format", "#### 17\n#### 18", 0.0),
    ("code_format", "```python\nprint(1)\n```", 1.0),
])
def test_format_rewards(name, completion, expected):
    reward = get_reward(name)
    assert reward(completions=[completion, [{"role": "assistant", "content": completion}]]) == [expected, expected]
    assert reward.kind == "shaping"


def test_format_options_and_regex():
    strict_prefill = get_reward("think_format", prefilled=True, name="think_prefilled")
    assert strict_prefill(completions=["x</think>18", "<think>x</think>18"]) == [1.0, 0.0]
    final_line = get_reward("regex_format", pattern=r"(?m)^Final: \d+$", name="final_line")
    assert final_line(completions=["work\nFinal: 18", "Final answer 18"]) == [1.0, 0.0]
    with pytest.raises(ValueError, match="pattern"):
        get_reward("regex_format")
    with pytest.raises(ValueError, match="Unknown format check"):
        FormatReward("x", "xml")


def test_verdicts_are_available_for_the_prefilter():
    verdicts = get_reward("gsm8k_accuracy").verdicts(["#### 18", "#### 17"], answer=[18, 18])
    assert [v.status for v in verdicts] == ["correct", "wrong"]
    assert all(isinstance(v, Verdict) for v in verdicts)
    assert get_reward("gsm8k_format").verdicts(["#### 18"])[0].extracted == "18"


@pytest.mark.parametrize("name", ["gsm8k_accuracy", "think_format", "answer_format", "tag_count", "gsm8k_format",
                                  "code_format"])
def test_rewards_pickle_with_their_name(name):
    reward = get_reward(name, name=f"{name}_v2")
    copy = pickle.loads(pickle.dumps(reward))
    assert copy.__name__ == f"{name}_v2"
    batch = {"completions": ["<think>x</think>\n#### 18", "nothing"], "answer": ["18", "18"]}
    assert copy(**batch) == reward(**batch)


def test_trl_names_the_metrics_after_the_reward():
    from trl.trainer.utils import get_callable_name, is_async_callable

    reward = get_reward("gsm8k_accuracy", name="gsm8k_strict", mode="strict")
    assert get_callable_name(reward) == "gsm8k_strict"
    assert not is_async_callable(reward)


def test_verifier_options_without_gold_column_use_the_verifiers_column():
    strict = VerifierReward("gsm8k_strict", "gsm8k", mode="strict")  # used to raise TypeError
    assert strict.gold_columns == ("answer",)
    assert strict(completions=["#### 18", "The answer is 18."], answer=["18", "18"]) == [1.0, 0.0]
    with pytest.raises(ValueError, match="Unknown verifier 'gsm8"):
        VerifierReward("x", "gsm8")


@pytest.mark.parametrize("verifier, options, problem", [
    ("math", {"timeout": -1}, "timeout=-1"),
    ("math", {"max_answer_chars": 0}, "max_answer_chars=0"),
    ("gsm8k", {"abs_tol": float("nan")}, "abs_tol=nan"),
    ("gsm8k", {"mode": "loose"}, "mode='loose'"),
    ("code", {"timeout": float("inf")}, "timeout=inf"),
    ("code", {"memory_mb": 0}, "memory_mb=0"),
])
def test_bad_option_values_are_refused_when_the_reward_is_built(verifier, options, problem):
    with pytest.raises(ValueError, match="Bad option") as raised:
        VerifierReward("checked", verifier, **options)
    assert problem in str(raised.value)


def test_code_verify_with_an_infinite_timeout_is_an_error_verdict_not_an_exception():
    from referee.verifiers import code

    tests = {"format": "asserts", "asserts": ["assert f() == 1"]}
    verdict = code.verify("def f():\n    return 1", tests, timeout=float("inf"))  # used to raise OverflowError
    assert verdict.status == "error" and "timeout=inf" in verdict.reason
    assert code.verify_batch(["def f():\n    return 1"] * 2, [tests] * 2, timeout=float("inf"))[1].status == "error"


# --- the breaker on TRL's path (issue 34) ------------------------------------------------------

def test_a_run_of_unusable_golds_stops_trls_training_calls():
    """Issue 34: with every gold unusable TRL trained on the shaping reward alone; the correctness
    reward's breaker now stops the run (past the trainers' `except Exception`, as on the adapters)."""
    from referee.rewards.trainers.adapters import ErrorRateExceeded

    reward = get_reward("gsm8k_accuracy", max_error_share=0.25, error_window=8)
    trainer = FakeTrainer()
    assert reward(completions=["#### 18"] * 2, answer=["n/a", "18"], **trainer.kwargs()) == [None, 1.0]  # 1 of 8: allowed
    with pytest.raises(ErrorRateExceeded, match=r"3 of the last 4 samples.*reward gsm8k_accuracy: gold 'n/a'.*other rewards alone"):
        reward(completions=["#### 18"] * 2, answer=["n/a", "n/a"], **trainer.kwargs())
    with pytest.raises(ErrorRateExceeded):  # tripped for good: the next batch, good golds and all
        reward(completions=["#### 18"], answer=["18"], **trainer.kwargs())
    assert not isinstance(ErrorRateExceeded("x"), Exception)


def test_the_breaker_watches_training_calls_only_and_can_be_turned_off():
    reward = get_reward("gsm8k_accuracy", max_error_share=0.0, error_window=8)
    for _ in range(3):  # the pre-filter, the audit and golden checks call without trainer_state: never stopped
        assert reward(completions=["#### 18"], answer=["n/a"]) == [None]
    off = get_reward("gsm8k_accuracy", max_error_share=None)
    assert off(completions=["#### 18"] * 40, answer=["n/a"] * 40, **FakeTrainer().kwargs()) == [None] * 40
    with pytest.raises(ValueError, match="max_error_share=2"):
        get_reward("gsm8k_accuracy", max_error_share=2)


def test_a_reward_with_its_breaker_pickles_as_trls_async_trainer_needs():
    from referee.rewards.trainers.adapters import ErrorRateExceeded

    reward = get_reward("gsm8k_accuracy", max_error_share=0.0, error_window=4)
    copy = pickle.loads(pickle.dumps(reward))
    with pytest.raises(ErrorRateExceeded):
        copy(completions=["#### 18"], answer=["n/a"], **FakeTrainer().kwargs())
