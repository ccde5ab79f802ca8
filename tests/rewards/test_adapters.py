"""The adapters' shared core: options, fallback for errors, the circuit breaker, off-loop waiting."""

import asyncio
import threading

import pytest

from referee.rewards.trainers import adapters
from referee.rewards.trainers.adapters import (
    METRIC_KEYS,
    AdapterOptions,
    ErrorBreaker,
    ErrorRateExceeded,
    Scorer,
    TrainerSample,
    scorer_for,
)
from referee.rewards.trainers.routing import ConfigurationError
from referee.verifiers import Verdict

CORRECT = TrainerSample("#### 18", "18", "openai/gsm8k")
BROKEN_GOLD = TrainerSample("#### 18", "eighteen", "openai/gsm8k")


def test_the_completions_fault_scores_and_an_error_scores_the_fallback():
    scorer = Scorer(AdapterOptions(fallback=-0.5))
    scores = scorer.score([CORRECT, TrainerSample("#### 17", "18", "gsm8k"), TrainerSample("nothing", "18", "gsm8k"),
                           BROKEN_GOLD])
    assert [s.score for s in scores] == [1.0, 0.0, 0.0, -0.5]
    assert [s.verdict.status for s in scores] == ["correct", "wrong", "no_answer", "error"]
    assert [s.metrics()["referee_error"] for s in scores] == [0.0, 0.0, 0.0, 1.0]


def test_every_sample_reports_the_same_numeric_keys():
    for score in Scorer().score([CORRECT, BROKEN_GOLD, TrainerSample(None, "18", "gsm8k")]):
        metrics = score.metrics()
        assert tuple(metrics) == METRIC_KEYS and all(isinstance(v, float) for v in metrics.values())


def test_a_verifier_that_raises_is_an_error_not_a_crash(monkeypatch):
    from referee.verifiers import gsm8k

    def broken(*args, **kwargs):
        raise RuntimeError("verifier bug")

    monkeypatch.setattr(gsm8k, "verify_batch", broken)
    monkeypatch.setattr(gsm8k, "verify", broken)
    [score] = Scorer().score([CORRECT])
    assert (score.score, score.verdict.status) == (0.0, "error") and "verifier bug" in score.verdict.reason


def test_all_or_nothing_drops_partial_credit(monkeypatch):
    from referee.verifiers import gsm8k

    monkeypatch.setattr(gsm8k, "verify_batch", lambda c, g, **o: [Verdict("wrong", 0.5)] * len(c))
    assert Scorer(AdapterOptions(all_or_nothing=True)).score([CORRECT])[0].score == 0.0
    assert Scorer().score([CORRECT])[0].score == 0.5


@pytest.mark.parametrize("options, named", [
    ({"fallbak": 0}, "'fallbak'"),
    ({"fallback": "zero"}, "fallback='zero'"),
    ({"fallback": float("nan")}, "fallback=nan"),
    ({"max_error_share": 2}, "max_error_share=2"),
    ({"error_window": 0}, "error_window=0"),
    ({"default_verifier": "gms8k"}, "'gms8k'"),
    ({"verifier_options": {"maths": {}}}, "verifier_options="),
    ({"verifier_options": {"gsm8k": {"moed": "strict"}}}, "verifier_options['gsm8k']"),
])
def test_bad_options_are_one_clear_error_before_any_sample(options, named):
    with pytest.raises(ConfigurationError) as caught:
        Scorer(AdapterOptions.parse(options))
    assert named in str(caught.value)


def test_options_reach_the_verifier():
    strict = scorer_for({"verifier_options": {"gsm8k": {"mode": "strict"}}}, name="test_strict")
    assert strict.score([TrainerSample("The answer is 18.", "18", "gsm8k")])[0].verdict.status == "no_answer"
    assert Scorer().score([TrainerSample("The answer is 18.", "18", "gsm8k")])[0].score == 1.0


def test_the_breaker_allows_its_share_then_trips():
    breaker = ErrorBreaker(max_share=0.05, window=100)
    breaker.record([False] * 95 + [True] * 5)  # exactly 5%: allowed
    with pytest.raises(ErrorRateExceeded, match="6 of the last 100 samples"):
        breaker.record([True])


def test_the_breaker_window_slides():
    breaker = ErrorBreaker(max_share=0.1, window=10)
    for _ in range(20):  # one error in every ten samples, forever: never more than 10%
        breaker.record([True] + [False] * 9)
    assert breaker.stats()["errors"] == 1 and not breaker.tripped


def test_once_tripped_every_call_raises_until_reset():
    scorer = Scorer(AdapterOptions(max_error_share=0.25, error_window=4))
    scorer.score([BROKEN_GOLD, CORRECT, CORRECT])
    with pytest.raises(ErrorRateExceeded, match="eighteen"):  # says what the errors were
        scorer.score([BROKEN_GOLD])
    with pytest.raises(ErrorRateExceeded):  # even for a good sample: the outage is not over
        scorer.score([CORRECT])
    scorer.breaker.reset()
    assert scorer.score([CORRECT])[0].score == 1.0


def test_the_breaker_counts_samples_from_many_threads():
    breaker = ErrorBreaker(max_share=0.5, window=4000)
    threads = [threading.Thread(target=lambda: [breaker.record([False]) for _ in range(500)]) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert breaker.stats()["samples"] == 4000


def test_the_breaker_is_not_an_exception_trainers_swallow():
    scorer = Scorer(AdapterOptions(max_error_share=0.0, error_window=8))
    swallowed = False
    with pytest.raises(ErrorRateExceeded):
        try:  # what OpenRLHF's agent executor and verl's prime manager do around a reward call
            scorer.score([BROKEN_GOLD])
        except Exception:
            swallowed = True
    assert not swallowed


def test_one_scorer_per_options_shares_the_breaker():
    assert scorer_for({"fallback": 0.25}, name="t") is scorer_for({"fallback": 0.25}, name="t")
    assert scorer_for({"fallback": 0.25}, name="t") is not scorer_for({"fallback": 0.5}, name="t")


def test_the_async_twin_waits_off_the_event_loop(monkeypatch):
    """The verifier waits for a coroutine on the loop to answer: on the loop itself it never would."""
    from referee.verifiers import gsm8k

    started, answered = threading.Event(), threading.Event()

    def waits_for_the_loop(completions, golds, **options):
        started.set()
        assert answered.wait(timeout=30), "the event loop was blocked while the verifier worked"
        return [Verdict("correct", 1.0)] * len(completions)

    monkeypatch.setattr(gsm8k, "verify_batch", waits_for_the_loop)

    async def main():
        async def answer():
            while not started.is_set():
                await asyncio.sleep(0.001)
            answered.set()

        answering = asyncio.create_task(answer())
        scores = await Scorer().score_async([CORRECT])
        await answering
        return scores

    assert asyncio.run(main())[0].score == 1.0


def test_the_async_twin_raises_the_breaker_too():
    scorer = Scorer(AdapterOptions(max_error_share=0.0, error_window=8))
    with pytest.raises(ErrorRateExceeded):
        asyncio.run(scorer.score_async([BROKEN_GOLD]))


def test_scorer_threads_are_bounded():
    assert adapters._thread_pool()._max_workers == 32
