"""referee.rewards.trainers.prime_verifiers called exactly as the ``verifiers`` library's Rubric calls reward functions.

``Rubric._call_individual_reward_func``: with a ``**kwargs`` parameter the function gets every
score object (``prompt``, ``completion``, ``answer``, ``state``, ``info``, ``task``), otherwise
only those its signature names; ``float(await maybe_await(func, ...))``; any ``Exception`` is
logged and scored 0.0. ``Rubric._is_group_func`` treats functions with plural parameters
(``completions``, ``answers``, ...) or a list return annotation as group functions.
"""

import asyncio
import inspect
from typing import get_origin

import pytest

from referee.rewards.trainers.adapters import ErrorRateExceeded
from referee.rewards.trainers.prime_verifiers import RubricReward, rubric_functions, score_completion

GROUP_INDICATORS = {"states", "prompts", "completions", "answers", "tasks", "infos"}


async def maybe_await(func, *args, **kwargs):
    result = func(*args, **kwargs)
    if inspect.isawaitable(result):
        return await result
    return result


def is_group_func(func):
    signature = inspect.signature(func)
    annotation = signature.return_annotation
    return bool(set(signature.parameters) & GROUP_INDICATORS) or annotation is list or get_origin(annotation) is list


async def call_individual_reward_func(func, state):
    signature = inspect.signature(func)
    merged = {"prompt": state["prompt"], "completion": state["completion"], "answer": state.get("answer", ""),
              "state": state, "info": state.get("info", {}), "task": state.get("task")}
    if any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values()):
        arguments = merged
    else:
        arguments = {k: v for k, v in merged.items() if k in signature.parameters}
    try:
        return float(await maybe_await(func, **arguments))
    except Exception:
        return 0.0


async def score_rollout(funcs, weights, state):
    """Rubric.score_rollout: each function in order, then the weighted sum and the metrics."""
    scores = [await call_individual_reward_func(func, state) for func in funcs]
    state["reward"] = sum(score * weight for score, weight in zip(scores, weights))
    state["metrics"] = {func.__name__: score for func, score in zip(funcs, scores)}
    return state


def rollout(completion, answer, info=None, task="default"):
    return {"prompt": [{"role": "user", "content": "What is 9 * 2?"}], "completion": completion, "answer": answer,
            "info": info or {}, "task": task}


def test_the_rubric_sees_an_individual_async_function():
    funcs, weights = rubric_functions("gsm8k")
    assert not any(is_group_func(func) for func in funcs)
    assert inspect.iscoroutinefunction(funcs[0].__call__)


@pytest.mark.parametrize("completion, answer, reward", [
    ([{"role": "assistant", "content": "9 * 2 = 18\n#### 18"}], "18", 1.0),
    ("#### 17", "18", 0.0),
])
def test_scores_chat_and_text_completions(completion, answer, reward):
    funcs, weights = rubric_functions("gsm8k")
    state = asyncio.run(score_rollout(funcs, weights, rollout(completion, answer)))
    assert state["reward"] == reward and state["metrics"]["referee_gsm8k"] == reward


def test_errors_show_in_their_weight_zero_metric():
    funcs, weights = rubric_functions("gsm8k", fallback=0.0)
    state = asyncio.run(score_rollout(funcs, weights, rollout("#### 18", "unknown")))
    assert state["reward"] == 0.0
    assert state["metrics"]["referee_error"] == 1.0 and state["metrics"]["referee_no_answer"] == 0.0


def test_routing_by_info_for_mixed_datasets():
    reward = RubricReward()  # no verifier: info says
    tests = {"fn_name": "double", "inputs": [[9]], "outputs": [18]}
    code = rollout("def double(x):\n    return 2 * x", "", info={"verifier": "code", "tests": tests})
    maths = rollout("$\\boxed{18}$", "18", info={"data_source": "lighteval/MATH"})
    assert asyncio.run(call_individual_reward_func(reward, code)) == 1.0
    assert asyncio.run(call_individual_reward_func(reward, maths)) == 1.0


def test_an_environments_own_task_name_is_not_taken_for_an_unknown_data_source():
    """The Rubric's ``task`` is the environment's name: it routes when it is a known dataset, else the default does."""
    reward = RubricReward(default_verifier="gsm8k")
    assert asyncio.run(call_individual_reward_func(reward, rollout("#### 18", "18", task="default"))) == 1.0
    assert asyncio.run(call_individual_reward_func(reward, rollout("$\\boxed{\\frac12}$", "1/2", task="lighteval/MATH"))) == 1.0


def test_a_named_signature_function_gets_only_its_arguments():
    reward = RubricReward("gsm8k")

    async def only_needed(completion, answer):
        return await reward(completion, answer)

    assert asyncio.run(call_individual_reward_func(only_needed, rollout("#### 18", "18"))) == 1.0


def test_an_outage_escapes_the_rubrics_except_exception():
    funcs, weights = rubric_functions("gsm8k", max_error_share=0.0, error_window=4)
    with pytest.raises(ErrorRateExceeded):
        asyncio.run(score_rollout(funcs, weights, rollout("#### 18", "unknown")))


def test_the_v1_helper():
    result = asyncio.run(score_completion("so the answer is $\\boxed{18}$", "18", verifier="math"))
    assert (result.score, result.verdict.status, result.verifier) == (1.0, "correct", "math")


# --- verifiers v1 (0.4): Task.score runs the metrics, then the rewards (issue 34) ---------------

class V1MathTask:
    """docs/integrations.md's v1 pattern, as written there, on a plain class (verifiers.v1's decorators
    only mark the methods; Task.score awaits every @vf.metric, then every @vf.reward)."""

    def __init__(self, answer):
        self.answer = answer

    async def judged(self, trace):
        from referee.rewards.trainers.prime_verifiers import score_completion

        return await score_completion(trace.last_reply or "", self.answer, verifier="math")

    async def correct(self, trace):  # @vf.reward(weight=1.0)
        return (await self.judged(trace)).score

    async def referee(self, trace):  # @vf.metric
        from referee.rewards.trainers.prime_verifiers import fault_signals

        return fault_signals(await self.judged(trace))


async def task_score(task, trace):
    """verifiers.v1 Task.score's order: metrics first, then rewards."""
    metrics = await task.referee(trace)
    reward = await task.correct(trace)
    return reward, metrics


def test_the_v1_pattern_keeps_the_fault_signals_and_judges_once(scorer_calls):
    """Issue 34: with metrics before rewards, referee's flag passing gave v1 users empty metrics."""
    from types import SimpleNamespace

    reward, metrics = asyncio.run(task_score(V1MathTask("not a number {"), SimpleNamespace(last_reply="$\\boxed{18}$")))
    assert reward == 0.0 and metrics == {"referee_error": 1.0, "referee_timeout": 0.0, "referee_no_answer": 0.0}
    reward, metrics = asyncio.run(task_score(V1MathTask("18"), SimpleNamespace(last_reply="I am not sure.")))
    assert reward == 0.0 and metrics["referee_no_answer"] == 1.0 and metrics["referee_error"] == 0.0
    reward, metrics = asyncio.run(task_score(V1MathTask("18"), SimpleNamespace(last_reply="so $\\boxed{18}$")))
    assert reward == 1.0 and set(metrics.values()) == {0.0}
    assert scorer_calls == [1, 1, 1]  # one judgement per rollout: the reward reuses the metric's
