import pickle
import threading
from pathlib import Path

import pytest

from referee.recipes.cli import main
from referee.rewards import get_reward
from referee.rewards.audit import audit_reward
from referee.rewards.testing import assert_golden, golden_params

GOLDEN = Path(__file__).parent / "golden" / "math.jsonl"


@pytest.mark.parametrize("case", golden_params(GOLDEN))
def test_math_accuracy_golden_file(case):
    assert_golden("math_accuracy", case)


def test_referee_check_on_the_math_golden_file():
    assert main(["check", "math_accuracy", str(GOLDEN)]) == 0


def test_answer_column_first_then_solution_row_by_row():
    reward = get_reward("math_accuracy")
    completions = [r"\boxed{\frac12}", r"\boxed{\frac12}", r"\boxed{3}"]
    answers = [r"\frac{1}{2}", None, None]
    solutions = [r"wrong gold $\boxed{7}$", r"so $\boxed{0.5}$", None]
    assert reward(completions=completions, answer=answers, solution=solutions) == [1.0, 1.0, None]


def test_a_runaway_answer_is_the_completions_fault_and_counted_as_timeout():
    logged = {}
    reward = get_reward("math_accuracy", timeout=1.0, name="math_fast")
    reward(completions=[r"\boxed{2\sqrt{2}}"], answer=[r"\sqrt{8}"])  # starts the worker pool first
    # Without a deadline enforced from outside, this tower never finishes: that the call returns at all,
    # with the tower counted as a timeout, is the deadline at work (the suite times nothing).
    assert reward(completions=[r"\boxed{9^{9^{9^{9}}}}", r"\boxed{1}"], answer=["1", "1"],
                  log_metric=logged.__setitem__) == [0.0, 1.0]
    assert logged["rewards/math_fast/timeout"] == 0.5


def test_scores_from_a_worker_thread_like_trls_async_path():
    reward = get_reward("math_accuracy")
    results = []
    thread = threading.Thread(target=lambda: results.append(
        reward(completions=[r"\boxed{2\sqrt{2}}"], answer=[r"\sqrt{8}"])))
    thread.start()
    thread.join(30)
    assert results == [[1.0]]


def test_pickles_with_options():
    reward = get_reward("math_accuracy", abs_tol=0.01, name="math_tolerant")
    copy = pickle.loads(pickle.dumps(reward))
    assert copy.__name__ == "math_tolerant" and copy(completions=[r"\boxed{0.333}"], answer=[r"\frac13"]) == [1.0]
    with pytest.raises(ValueError, match="Bad option for the math verifier"):
        get_reward("math_accuracy", tolerance=0.01)


def test_audit_finds_that_echoing_a_computation_prompt_pays():
    rows = [{"prompt": r"Compute $\dbinom{8}{4}$.", "answer": "70"},
            {"prompt": "What is the smallest prime greater than 20?", "answer": "23"}]
    report = {r.probe.name: r for r in audit_reward(get_reward("math_accuracy"), rows).results}
    # "$\dbinom{8}{4}$" is equivalent to 70: the echo pays on the first row only.
    assert report["prompt_echo"].pays_like_right == 0.5 and report["prompt_echo"].verdict == "fail"
    assert report["tags_around_wrong"].verdict == report["several_candidates"].verdict == "ok"
