"""Hard timeouts of the maths verifier: any thread, asyncio, several threads, forked processes.

Each adversarial answer would keep sympy busy far longer than any test runs, so a ``timeout``
verdict whose reason names the deadline asked for is the deadline at work; no assertion here reads a clock.
The pool's template starts in the background when a batch starts."""

import asyncio
import os
import threading
import time

import pytest

from referee.verifiers import math as math_verifier
from referee.verifiers.deadline_pool import NamedFunction
from referee.verifiers.math import pipeline as math_pipeline
from referee.verifiers.math import workers as math_workers

DEADLINE = 1.0
HELD = f"over {DEADLINE} s"  # how a verdict says the deadline it was given ended it
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
    """Start the shared pool once, so that a deadline is never spent on start-up."""
    for workers in (None, 4):  # an answer only sympy can judge, so that the workers start
        assert math_verifier.verify(r"\boxed{\sqrt{5}/2}", GOLD, workers=workers).details["method"] == "sympy"


def _judged(completion, **options):
    return math_verifier.verify(completion, GOLD, timeout=DEADLINE, **options)


def _held(verdict):
    """A timeout ended by the deadline asked for (an answer over max_answer_chars is refused unread)."""
    return verdict.status == "timeout" and (HELD in verdict.reason or "over max_answer_chars" in verdict.reason)


@pytest.mark.parametrize("completion", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_adversarial_answers_time_out_within_the_deadline(completion):
    verdict = _judged(completion)
    assert _held(verdict) and verdict.score == 0.0, verdict.reason
    # The killed worker was replaced: the next check works.
    assert math_verifier.verify(r"\boxed{\sqrt{5}/2}", GOLD).correct


def test_timeout_holds_in_a_worker_thread():
    results = []
    thread = threading.Thread(target=lambda: results.append(_judged(ADVERSARIAL["9^9^9^9"])))
    thread.start()
    thread.join()
    assert _held(results[0]), results[0].reason


def test_timeout_holds_in_asyncio_code():
    async def score_in_task():
        return _judged(ADVERSARIAL["power tower in a fraction"])

    async def score_in_thread():
        return await asyncio.to_thread(_judged, ADVERSARIAL["9^9^9^9"])

    for coroutine in (score_in_task, score_in_thread):
        verdict = asyncio.run(coroutine())
        assert _held(verdict), verdict.reason


def test_timeouts_hold_in_several_threads_at_once():
    results = {}
    completions = [ADVERSARIAL["9^9^9^9"], ADVERSARIAL["power tower in a fraction"],
                   r"\boxed{\frac{\sqrt{5}}{2}}", ADVERSARIAL["root of a tower"]]

    def judge(index):
        results[index] = _judged(completions[index], workers=4)

    threads = [threading.Thread(target=judge, args=(i,)) for i in range(len(completions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [results[i].status for i in range(4)] == ["timeout", "timeout", "correct", "timeout"]
    assert all(_held(results[i]) for i in (0, 1, 3))


def test_batch_bounds_each_item_and_the_whole_batch():
    completions = [ADVERSARIAL["9^9^9^9"], r"\boxed{\frac{\sqrt{5}}{2}}", "no answer", r"\boxed{\sqrt{5}}"]
    verdicts = math_verifier.verify_batch(completions, [GOLD] * 4, timeout=DEADLINE)
    assert [v.status for v in verdicts] == ["timeout", "correct", "no_answer", "wrong"]
    assert _held(verdicts[0]), verdicts[0].reason

    verdicts = math_verifier.verify_batch([ADVERSARIAL["9^9^9^9"]] * 4, [GOLD] * 4, timeout=30, batch_timeout=DEADLINE)
    # Cut by the batch deadline, long before the 30 s item deadline: not the completion's fault.
    assert {v.status for v in verdicts} == {"error"}


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
            verdict = _judged(ADVERSARIAL["9^9^9^9"])
            os.write(write, f"{ok} {_held(verdict)}".encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    ok, held = os.read(read, 100).decode().split()
    os.close(read)
    assert ok == "True" and held == "True"
    assert math_verifier.verify(r"\boxed{\sqrt{5}/2}", GOLD).correct  # the parent's pool still works


def _pool_of(workers):
    return math_workers.maths_pool(workers)


def test_a_batch_starts_the_template_while_it_reads_and_forks_no_worker_it_does_not_need():
    verdicts = math_verifier.verify_batch([r"\boxed{1}", "so 0.5"], ["1", r"\frac12"], workers=3)
    assert [v.status for v in verdicts] == ["correct", "correct"]  # decided without sympy, without waiting
    pool, deadline = _pool_of(3), time.monotonic() + 60
    while not pool.processes() and time.monotonic() < deadline:  # the template starts in the background
        time.sleep(0.05)
    assert len(pool.processes()) == 1  # the template alone: no worker was asked for


def test_answers_decided_without_sympy_need_no_pool(monkeypatch):
    monkeypatch.setattr(math_workers, "PRELOAD", ("referee.verifiers.no_such_module",))
    verdicts = math_verifier.verify_batch([r"\boxed{1}", r"\boxed{\sqrt{5}/2}"], ["1", GOLD], workers=5)
    assert verdicts[0].status == "correct"
    assert verdicts[1].status == "error" and "did not start" in verdicts[1].reason  # not the completion's fault
