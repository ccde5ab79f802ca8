"""Kills from outside the program: a job SIGKILLed by someone else (the OOM killer, an operator)
is an ``error`` (reward None), never a wrong answer; a fork server or a judge SIGKILLed in the
middle of a batch costs a retry, and every verdict still comes back, right and in order."""

import threading

import pytest

from referee.rewards.policy import reward_of
from referee.verifiers import code
from referee.verifiers.sandbox.forkserver import killed_from_outside

TWO = {"format": "call", "fn_name": "f", "inputs": [[1]], "outputs": [2]}
SLOW_RIGHT = "import time\ndef f(x):\n    time.sleep(0.3)\n    return 2 * x\n"


def _in_background(function):
    result = []
    thread = threading.Thread(target=lambda: result.append(function()), daemon=True)
    thread.start()
    return thread, result


@pytest.mark.parametrize("level", ["auto", "basic"])
def test_a_job_killed_from_outside_is_an_error_not_a_wrong_answer(level, sandboxes):
    code.verify("def f(x):\n    return 2 * x\n", TWO, isolation=level, allow_weak_isolation=True, workers=1)  # the sandbox is warm
    killer, killed = _in_background(lambda: sandboxes.kill_when(sandboxes.jobs, settle=0.3))
    verdict = code.verify("import time\ndef f(x):\n    time.sleep(30)\n    return 2 * x\n", TWO, isolation=level, allow_weak_isolation=True,
                          workers=1, timeout=10.0)
    killer.join()
    assert killed[0], "no job was found to kill"
    assert verdict.status == "error" and "did not send" in verdict.reason, verdict.reason
    assert reward_of(verdict) is None  # the 10 s timeout never fired: that would be a timeout, the program's fault
    assert sandboxes.leftovers() == []
    assert code.verify("def f(x):\n    return 2 * x\n", TWO, isolation=level, allow_weak_isolation=True, workers=1).correct


def test_the_jobs_own_kills_stay_its_fault():
    sigkill = 0x09  # the wait status of a process killed by SIGKILL
    assert killed_from_outside(sigkill, 0.2, None, 3)
    assert not killed_from_outside(sigkill, 3.5, None, 3)  # its CPU limit: it ignored SIGXCPU
    assert not any(killed_from_outside(sigkill, 0.2, why, 3) for why in ("deadline", "output", "disk"))
    ignores_sigxcpu = ("import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\n"
                       "def f(x):\n    while True:\n        pass\n")
    verdict = code.verify(ignores_sigxcpu, TWO, timeout=1.0, workers=1)
    assert verdict.status == "timeout", verdict.reason


@pytest.mark.parametrize("victim", ["forkservers", "judges"])
def test_a_sandbox_process_killed_mid_batch_costs_a_retry_not_a_verdict(victim, sandboxes):
    programs = [SLOW_RIGHT, "def f(x):\n    return 3 * x\n"] * 4
    code.verify_batch(programs[:2], [TWO] * 2, workers=2)  # warm: both judges have their sandbox
    killer, killed = _in_background(lambda: sandboxes.kill_when(getattr(sandboxes, victim), settle=0.2))
    verdicts = code.verify_batch(programs, [TWO] * len(programs), workers=2)
    killer.join()
    assert killed[0], f"no {victim} found to kill"
    assert [v.status for v in verdicts] == ["correct", "wrong"] * 4, [v.reason for v in verdicts]
    assert sandboxes.leftovers() == []
    assert code.verify_batch(programs[:2], [TWO] * 2, workers=2)[0].correct
