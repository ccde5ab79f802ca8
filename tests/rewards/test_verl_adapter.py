"""referee.rewards.trainers.verl called exactly as verl's reward managers call a custom reward function.

(``make test-integrations`` runs verl's own managers; these hold the contract without verl.)
"""

import asyncio
import inspect
import json
import multiprocessing
import threading
from concurrent.futures import ProcessPoolExecutor
from functools import partial

import pytest

from referee.rewards.trainers.adapters import METRIC_KEYS, ErrorRateExceeded, Scorer, TrainerSample
from referee.rewards.trainers.routing import UnknownDataSource
from referee.rewards.trainers.verl import VerlScore, compute_score, compute_score_async, compute_score_batch

STDIO = json.dumps({"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]})  # verl's stored shape
ADDER = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"

# (data_source, solution_str, ground_truth, extra_info, score, status key that is 1)
CASES = [
    ("openai/gsm8k", "9 * 2 = 18\n#### 18", "18", {}, 1.0, "acc"),
    ("openai/gsm8k", "#### 17", "18", {}, 0.0, None),
    ("openai/gsm8k", "I do not know", "18", {}, 0.0, "referee_no_answer"),
    ("openai/gsm8k", "#### 18", "eighteen", {}, 0.0, "referee_error"),
    ("lighteval/MATH", "so $\\boxed{\\frac{1}{2}}$", "\\frac{1}{2}", {}, 1.0, "acc"),
    ("codecontests", ADDER, STDIO, {}, 1.0, "acc"),
    ("apps", ADDER, None, {"tests": STDIO}, 1.0, "acc"),
    ("apps", ADDER, None, {}, 0.0, "referee_error"),  # no tests anywhere: the dataset's fault
    ("my/dataset", "#### 7", "7", {"verifier": "gsm8k"}, 1.0, "acc"),
]


def _call_with_kwargs(raw_fn, extra_kwargs, *args, **kwargs):
    """verl.trainer.ppo.reward._call_with_kwargs: reward_kwargs win over call-time kwargs."""
    return raw_fn(*args, **{**kwargs, **extra_kwargs})


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_naive_manager_keyword_call(case):
    source, text, gold, extra, score, flag = case
    extra_info = dict(extra, num_turns=None, rollout_reward_scores={})  # what NaiveRewardManager adds
    result = compute_score(data_source=source, solution_str=text, ground_truth=gold, extra_info=extra_info)
    assert isinstance(result, dict) and result["score"] == score
    assert list(result) == list(METRIC_KEYS) and all(isinstance(v, float) for v in result.values())
    for key in ("acc", "referee_error", "referee_timeout", "referee_no_answer"):
        assert result[key] == (1.0 if key == flag else 0.0), (key, result)


def test_the_batch_schema_of_sample_zero_holds_for_every_sample():
    """verl builds reward_extra_info columns from sample 0's keys and indexes every later sample by them."""
    results = [compute_score(c[0], c[1], c[2], c[3]) for c in CASES]
    keys = list(results[0])
    columns = {key: [r[key] for r in results] for key in keys}  # a KeyError here would break verl's batch
    assert all(len(values) == len(CASES) for values in columns.values())


def test_reward_kwargs_are_options():
    wrapped = partial(_call_with_kwargs, compute_score, {"fallback": -1.0})
    assert wrapped(data_source="openai/gsm8k", solution_str="#### 18", ground_truth="broken", extra_info={})["score"] == -1.0


def test_the_reward_loops_own_kwargs_are_not_options():
    result = compute_score(data_source="openai/gsm8k", solution_str="#### 18", ground_truth="18", extra_info={},
                           reward_router_address=None, reward_model_tokenizer=None)
    assert result["score"] == 1.0


def test_an_unknown_data_source_stops_at_the_first_sample():
    with pytest.raises(UnknownDataSource, match=r"data_source 'my/new_set'; set extra_info\['verifier'\]"):
        compute_score("my/new_set", "#### 18", "18", {})


def test_a_misspelt_reward_kwarg_stops_at_the_first_sample():
    from referee.rewards.trainers.routing import ConfigurationError

    with pytest.raises(ConfigurationError, match="'fallbak'"):
        compute_score("openai/gsm8k", "#### 18", "18", {}, fallbak=0.0)


def _prime_read(result):
    """verl.workers.reward_manager.prime.parallel_compute_score_async's reading of one result."""
    if isinstance(result, Exception) or result is None:
        return 0.0
    if isinstance(result, (int, float, bool)):
        return float(result)
    return float(result[0])


def test_prime_manager_positional_call_in_worker_processes():
    """PrimeRewardManager: partial(evaluation_func, task, completion, reference, task_extra_info) in a process pool."""
    cases = [c for c in CASES if c[0] == "openai/gsm8k"]
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("fork")) as executor:
        futures = [executor.submit(partial(compute_score, source, text, gold, extra)) for source, text, gold, extra, *_ in cases]
        results = [future.result(timeout=60) for future in futures]
    assert all(type(r) is VerlScore for r in results)  # survives pickling back to the parent
    assert [_prime_read(r) for r in results] == [c[4] for c in cases]


def test_reward_loop_sync_function_runs_in_the_default_executor():
    async def run_single():
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, lambda: compute_score(
            data_source="openai/gsm8k", solution_str="#### 18", ground_truth="18", extra_info={}))

    assert asyncio.run(run_single())["score"] == 1.0


def test_reward_loop_awaits_the_async_twin_and_the_loop_keeps_running(monkeypatch):
    """Each verification waits, in its worker thread, for a coroutine on the loop to answer: a twin
    that verified on the loop itself would never get that answer (no timing involved)."""
    wrapped = partial(_call_with_kwargs_async, compute_score_async, {})
    assert inspect.iscoroutinefunction(compute_score_async) and inspect.iscoroutinefunction(wrapped)
    answered = threading.Event()
    seen_threads = []
    score = Scorer.score

    def score_once_the_loop_answers(self, samples):
        seen_threads.append(threading.get_ident())
        assert answered.wait(timeout=30), "the event loop was blocked while a sample was verified"
        return score(self, samples)

    monkeypatch.setattr(Scorer, "score", score_once_the_loop_answers)

    async def run_batch():
        async def answer_when_a_verification_starts():
            while not seen_threads:
                await asyncio.sleep(0.001)
            answered.set()

        answering = asyncio.create_task(answer_when_a_verification_starts())
        results = await asyncio.gather(*(wrapped(data_source=c[0], solution_str=c[1], ground_truth=c[2], extra_info=c[3])
                                         for c in CASES))
        await answering
        return results

    results = asyncio.run(run_batch())
    assert [r["score"] for r in results] == [c[4] for c in CASES]
    assert len(seen_threads) == len(CASES) and threading.get_ident() not in seen_threads


async def _call_with_kwargs_async(raw_fn, extra_kwargs, *args, **kwargs):
    """verl.trainer.ppo.reward._call_with_kwargs_async."""
    return await raw_fn(*args, **{**kwargs, **extra_kwargs})


def test_a_hanging_answer_from_a_worker_thread_is_a_timeout_within_the_deadline():
    """The reward loop calls a sync compute_score from an executor thread: no signal-based timeouts there."""
    hanging = r"The answer is $\boxed{9^{9^{9^{9}}}}$."
    options = {"verifier_options": {"math": {"timeout": 1.0}}}
    compute_score("lighteval/MATH", r"\boxed{\sqrt{5}/2}", r"\frac{\sqrt{5}}{2}", {}, **options)  # warm the pool

    async def run_single():
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, lambda: compute_score(
            data_source="lighteval/MATH", solution_str=hanging, ground_truth=r"\frac{\sqrt{5}}{2}", extra_info={}, **options))

    # The tower never finishes on its own: a result, counted as a timeout, is the deadline at work.
    result = asyncio.run(run_single())
    assert result["referee_timeout"] == 1.0 and result["score"] == 0.0 and result["referee_error"] == 0.0


def test_a_hanging_program_is_a_timeout():
    result = compute_score("codecontests", "while True:\n    pass", STDIO, {}, verifier_options={"code": {"timeout": 1.0}})
    assert result["referee_timeout"] == 1.0 and result["score"] == 0.0


def test_batch_manager_call():
    results = compute_score_batch(data_sources=[c[0] for c in CASES], solution_strs=[c[1] for c in CASES],
                                  ground_truths=[c[2] for c in CASES], extra_infos=[c[3] for c in CASES])
    assert [r["score"] for r in results] == [c[4] for c in CASES]


def test_batch_manager_mismatched_lengths_are_refused():
    with pytest.raises(ValueError, match="one of each per sample"):
        compute_score_batch(["openai/gsm8k"], ["#### 1", "#### 2"], ["1", "2"], [{}, {}])


def test_an_outage_stops_the_run_even_through_verls_except_exception():
    """verl's compute_reward catches Exception and calls the manager again: the breaker raises both times."""
    options = {"max_error_share": 0.1, "error_window": 20}
    calls = 0

    def reward_manager():
        nonlocal calls
        calls += 1
        return [compute_score("openai/gsm8k", "#### 18", "broken gold", {}, **options) for _ in range(20)]

    with pytest.raises(ErrorRateExceeded, match="3 of the last 3 samples"):
        try:
            reward_manager()
        except Exception:
            reward_manager()
    assert calls == 1
    with pytest.raises(ErrorRateExceeded):  # stays tripped
        compute_score("openai/gsm8k", "#### 18", "18", {}, **options)


def test_a_cpp_codecontests_row_is_judged_as_cpp():
    from referee.verifiers.code import find_toolchain
    if find_toolchain("cpp") is None:
        pytest.skip("no g++ here")
    adder = "```cpp\n#include <iostream>\nint main() { int a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }\n```"
    result = compute_score("codecontests", adder.replace("```cpp", "```"), STDIO, {"language": "cpp"})
    assert result["score"] == 1.0, result
    assert compute_score("codecontests", adder.replace("```cpp", "```"), STDIO, {})["score"] == 0.0  # read as Python


# --- issue 34 ----------------------------------------------------------------------------------

def process_item(reward_fn, data_source, response_lst, reward_data):
    """verl.trainer.main_eval.process_item (verl 0.9.1), without its @ray.remote."""
    import numpy as np

    ground_truth = reward_data["ground_truth"]
    score_lst = [reward_fn(data_source, r, ground_truth) for r in response_lst]
    return data_source, np.mean(score_lst)


def test_main_eval_gets_floats_from_compute_score_float():
    """Issue 34: main_eval crashed adding referee's dict results (`unsupported operand type(s) for +`)."""
    from referee.rewards.trainers.verl import compute_score_float

    responses = ["9 * 2 = 18\n#### 18", "#### 17", "#### 18", "no idea"]
    with pytest.raises(TypeError, match="unsupported operand"):  # why the dict entry point cannot serve there
        process_item(compute_score, "openai/gsm8k", responses, {"ground_truth": "18"})
    source, score = process_item(compute_score_float, "openai/gsm8k", responses, {"ground_truth": "18"})
    assert (source, float(score)) == ("openai/gsm8k", 0.5)
    wrapped = partial(_call_with_kwargs, compute_score_float, {"fallback": -1.0})  # get_custom_reward_fn with reward_kwargs
    assert float(process_item(wrapped, "openai/gsm8k", ["#### 18"], {"ground_truth": "?"})[1]) == -1.0


class RayTaskError(Exception):
    """What Ray raises in the caller for a remote task's exception: an Exception holding it as ``cause``."""

    def __init__(self, cause):
        super().__init__(f"ray::compute_score() {type(cause).__name__}: {cause}")
        self.cause = cause


def test_a_stop_that_comes_back_through_ray_is_still_a_stop(monkeypatch):
    """Issue 34: over Ray referee's stop arrives as a RayTaskError (an Exception); a verifier call that
    raises one must stop the run, not score an `error`."""
    from referee.rewards.trainers.routing import RefereeStop, referee_stop
    from referee.rewards.verdict_rewards import VerifierReward

    stop = ErrorRateExceeded("26 of the last 512 samples were referee errors")

    def raises_through_ray(self, completions, gold):
        raise RayTaskError(stop)

    monkeypatch.setattr(VerifierReward, "verdicts", raises_through_ray)
    with pytest.raises(RefereeStop) as caught:
        Scorer().score([TrainerSample("#### 18", "18", "gsm8k")])
    assert caught.value is stop and not isinstance(caught.value, Exception)
    assert referee_stop(RayTaskError(stop)) is stop and referee_stop(RuntimeError("x")) is None


def test_rays_own_task_error_is_understood():
    exceptions = pytest.importorskip("ray.exceptions")
    from referee.rewards.trainers.routing import referee_stop

    stop = UnknownDataSource("referee has no verifier for data_source 'x'")
    error = exceptions.RayTaskError("compute_score", "Traceback ...", stop)
    assert isinstance(error, Exception) and referee_stop(error) is stop
    dual = error.as_instanceof_cause()  # RayTaskError(UnknownDataSource): an Exception and a stop at once
    assert isinstance(dual, Exception) and referee_stop(dual) is stop
