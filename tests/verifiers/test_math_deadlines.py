"""Hard timeouts of the maths verifier: any thread, asyncio, several threads, forked processes."""

import asyncio
import os
import threading
import time

import pytest

from referee.verifiers import math as math_verifier
from referee.verifiers.deadline_pool import NamedFunction
from referee.verifiers.math import pipeline as math_pipeline

DEADLINE = 1.0
SLACK = 0.5
GOLD = r"\frac{\sqrt{5}}{2}"  # not a plain number: sympy vouches for it once, then it is cached

ADVERSARIAL = {
    "power tower in a fraction": r"\boxed{\dfrac{5^{(5^{(5^{(5^5)})}-4)}-5}{16}}",
    "9^9^9^9": r"The answer is $\boxed{9^{9^{9^{9}}}}$.",
    "100,000-character answer": "\\boxed{" + "1+" * 50_000 + "}",
    "5,000 nested braces": "\\boxed{" + "{" * 5000 + "1" + "}" * 5000 + "}",
    "root of a tower": r"\boxed{\sqrt{9^{9^{9^{9}}}}}",
}


@pytest.fixture(scope="module", autouse=True)
def warm_pool():
    """Start the shared pool once, so that timing checks measure deadlines, not start-up."""
    for workers in (None, 4):  # an answer only sympy can judge, so that the workers start
        assert math_verifier.verify(r"\boxed{\sqrt{5}/2}", GOLD, workers=workers).details["method"] == "sympy"


def _timed(completion, **options):
    started = time.monotonic()
    verdict = math_verifier.verify(completion, GOLD, timeout=DEADLINE, **options)
    return verdict, time.monotonic() - started


@pytest.mark.parametrize("completion", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_adversarial_answers_time_out_within_the_deadline(completion):
    verdict, elapsed = _timed(completion)
    assert verdict.status == "timeout" and verdict.score == 0.0, verdict.reason
    assert elapsed <= DEADLINE + SLACK
    # The killed worker was replaced: the next check works.
    assert math_verifier.verify(r"\boxed{\sqrt{5}/2}", GOLD).correct


def test_timeout_holds_in_a_worker_thread():
    results = []
    thread = threading.Thread(target=lambda: results.append(_timed(ADVERSARIAL["9^9^9^9"])))
    thread.start()
    thread.join(DEADLINE + SLACK + 5)
    verdict, elapsed = results[0]
    assert verdict.status == "timeout" and elapsed <= DEADLINE + SLACK


def test_timeout_holds_in_asyncio_code():
    async def score_in_task():
        return _timed(ADVERSARIAL["power tower in a fraction"])

    async def score_in_thread():
        return await asyncio.to_thread(_timed, ADVERSARIAL["9^9^9^9"])

    for coroutine in (score_in_task, score_in_thread):
        verdict, elapsed = asyncio.run(coroutine())
        assert verdict.status == "timeout" and elapsed <= DEADLINE + SLACK


def test_timeouts_hold_in_several_threads_at_once():
    results = {}
    completions = [ADVERSARIAL["9^9^9^9"], ADVERSARIAL["power tower in a fraction"],
                   r"\boxed{\frac{\sqrt{5}}{2}}", ADVERSARIAL["root of a tower"]]

    def judge(index):
        results[index] = _timed(completions[index], workers=4)

    threads = [threading.Thread(target=judge, args=(i,)) for i in range(len(completions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE + SLACK + 5)
    assert [results[i][0].status for i in range(4)] == ["timeout", "timeout", "correct", "timeout"]
    assert max(elapsed for _, elapsed in results.values()) <= DEADLINE + SLACK


def test_batch_bounds_each_item_and_the_whole_batch():
    completions = [ADVERSARIAL["9^9^9^9"], r"\boxed{\frac{\sqrt{5}}{2}}", "no answer", r"\boxed{\sqrt{5}}"]
    started = time.monotonic()
    verdicts = math_verifier.verify_batch(completions, [GOLD] * 4, timeout=DEADLINE)
    assert [v.status for v in verdicts] == ["timeout", "correct", "no_answer", "wrong"]
    assert time.monotonic() - started <= DEADLINE + SLACK

    started = time.monotonic()
    verdicts = math_verifier.verify_batch([ADVERSARIAL["9^9^9^9"]] * 4, [GOLD] * 4, timeout=30, batch_timeout=DEADLINE)
    assert {v.status for v in verdicts} == {"error"}  # cut by the batch deadline: not the completion's fault
    assert time.monotonic() - started <= DEADLINE + SLACK


def test_a_gold_that_hangs_is_the_golds_fault():
    verdict = math_verifier.verify(r"\boxed{1}", r"9^{9^{9^{9}}}", timeout=DEADLINE)
    assert verdict.status == "error" and "gold" in verdict.reason


def test_a_failing_checker_is_an_error_not_the_completions_fault(monkeypatch):
    monkeypatch.setattr(math_pipeline, "_JUDGE", NamedFunction("os:_exit"))  # raises TypeError in the worker
    verdict = math_verifier.verify(r"\boxed{\sqrt{5}/2}", GOLD)
    assert verdict.status == "error" and "TypeError" in verdict.reason


def test_forked_child_gets_its_own_workers():
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's pool is not usable here, a fresh one must start
        try:
            ok = math_verifier.verify(r"\boxed{\sqrt{5}/2}", GOLD).correct
            verdict, elapsed = _timed(ADVERSARIAL["9^9^9^9"])
            os.write(write, f"{ok} {verdict.status} {elapsed:.3f}".encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    ok, status, elapsed = os.read(read, 100).decode().split()
    os.close(read)
    assert ok == "True" and status == "timeout" and float(elapsed) <= DEADLINE + SLACK
    assert math_verifier.verify(r"\boxed{\sqrt{5}/2}", GOLD).correct  # the parent's pool still works
