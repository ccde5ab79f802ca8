"""The worker pool behind the maths verifier: deadlines, crashes, reuse, threads, fork, exit,
its start in the background and its template's warm-up between requests."""

import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from referee.verifiers import warm_workers
from referee.verifiers.deadline_pool import DeadlinePool, NamedFunction, shared_pool


@pytest.fixture(scope="module")
def pool():
    with DeadlinePool(2) as pool:
        yield pool


def _alive(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            return "zombie" not in status.read()
    except FileNotFoundError:
        return False


def test_results_keep_their_order(pool):
    outcomes = pool.run(pow, [(2, n) for n in range(50)], timeout=5)
    assert [o.value for o in outcomes] == [2 ** n for n in range(50)]
    assert {o.status for o in outcomes} == {"ok"}


def test_overrunning_task_is_killed_and_its_worker_replaced(pool):
    outcomes = pool.run(time.sleep, [(60,), (0,), (60,), (0,)], timeout=0.5)
    assert [o.status for o in outcomes] == ["timeout", "ok", "timeout", "ok"]  # left to sleep, they would be "ok"
    assert pool.run(abs, [(-3,)], timeout=5)[0].value == 3
    assert len(pool.processes()) <= pool.size + 1  # killed workers are gone, not leaked


def test_tasks_queued_behind_a_killed_task_still_run():
    with DeadlinePool(1) as single:
        outcomes = single.run(time.sleep, [(60,), (0,), (0,), (60,), (0,)], timeout=0.5)
        assert [o.status for o in outcomes] == ["timeout", "ok", "ok", "timeout", "ok"]


def test_worker_crash_and_exception_are_reported_not_raised(pool):
    crashed, raised, fine = pool.run(NamedFunction("os:_exit"), [(3,)], timeout=5) + \
        pool.run(int, [("x",), ("7",)], timeout=5)
    assert crashed.status == "crashed" and "died" in crashed.message
    assert raised.status == "raised" and raised.message.startswith("ValueError")
    assert fine.value == 7


def test_total_timeout_cancels_what_is_left(pool):
    outcomes = pool.run(time.sleep, [(60,)] * 5, timeout=30, total_timeout=0.5)
    assert {o.status for o in outcomes} == {"cancelled"}  # the 30 s deadline never came: the total one ended them


def test_several_threads_share_the_workers(pool):
    results = {}

    def work(index):
        results[index] = pool.run(pow, [(index, 2)] * 20, timeout=5)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert all([o.value for o in results[i]] == [i * i] * 20 for i in range(6))


def test_memory_limit_stops_a_runaway_task():
    with DeadlinePool(1, memory_limit_mb=512) as limited:
        outcome = limited.run(bytearray, [(2 * 1024 ** 3,)], timeout=10)[0]
    assert outcome.status == "raised" and outcome.message.startswith("MemoryError")


def test_bad_settings_are_refused(pool):
    with pytest.raises(ValueError, match="workers=0"):
        DeadlinePool(0)
    with pytest.raises(ValueError, match="timeout=0"):
        pool.run(abs, [(1,)], timeout=0)


def test_closed_pool_reports_instead_of_hanging():
    closed = DeadlinePool(1)
    closed.close()
    assert closed.run(abs, [(1,)], timeout=1)[0].status == "crashed"


def test_forked_child_starts_its_own_workers(pool):
    pool.run(abs, [(1,)], timeout=5)
    parent_processes = set(pool.processes())
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            outcomes = pool.run(time.sleep, [(0,), (60,)], timeout=0.5)
            mine = set(pool.processes())
            os.write(write, f"{[o.status for o in outcomes]}|{sorted(mine & parent_processes)}".encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    message = os.read(read, 1000).decode()
    os.close(read)
    assert message == "['ok', 'timeout']|[]"
    assert pool.run(abs, [(-2,)], timeout=5)[0].value == 2


def test_shared_pool_is_reused_and_everything_exits_with_the_interpreter():
    assert shared_pool(1) is shared_pool(1) and shared_pool(1) is not shared_pool(2)
    script = ("from referee.verifiers.deadline_pool import shared_pool\n"
              "pool = shared_pool(2)\n"
              "pool.run(abs, [(1,), (2,)], timeout=5)\n"
              "print(*pool.processes())\n")
    pids = [int(p) for p in subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                           check=True, timeout=60).stdout.split()]
    assert len(pids) == 3  # two workers and their template
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in pids)


def test_started_in_the_background_then_used():
    with DeadlinePool(1) as started:
        started.start()
        started.start()  # a second start while the first is under way or done: nothing more
        assert [o.value for o in started.run(abs, [(-4,), (5,)], timeout=30)] == [4, 5]
        assert len(started.processes()) == 2  # one worker and its template, not two templates


def test_closed_while_starting_leaves_nothing_running():
    starting = DeadlinePool(1, preload=("fractions",))
    starting.start()
    starting.close()  # does not wait for the template's imports
    assert starting.run(abs, [(1,)], timeout=5)[0].status == "crashed"
    assert starting.processes() == []


def test_an_endless_warm_up_never_delays_the_workers():
    # itertools.count() never ends: run as a preload it would block the template's start forever.
    with DeadlinePool(2, warm_up="itertools:count") as warming:
        assert [o.value for o in warming.run(pow, [(3, 2), (2, 3)], timeout=30)] == [9, 8]
        assert warming.run(time.sleep, [(60,)], timeout=0.5)[0].status == "timeout"
        assert warming.run(abs, [(-1,)], timeout=30)[0].value == 1  # its replacement came from the same template


class _Control:
    """Both ends of a template's control socket."""

    def __init__(self):
        self.template, self.caller = socket.socketpair()

    def close(self):
        self.template.close()
        self.caller.close()


def _recording(steps, done):
    for step in range(steps):
        done.append(step)
        yield


def test_warm_up_runs_to_its_end_while_nothing_is_asked():
    control, done = _Control(), []
    try:
        assert warm_workers._warm_while_idle(control.template, _recording(3, done), set()) is None
    finally:
        control.close()
    assert done == [0, 1, 2]


def test_warm_up_gives_way_to_a_request():
    control, done = _Control(), []
    control.caller.sendall(b"F")  # a fork request is waiting
    try:
        steps = warm_workers._warm_while_idle(control.template, _recording(3, done), set())
    finally:
        control.close()
    assert done == [] and steps is not None  # nothing ran; the rest waits for the next idle moment


def test_warm_up_waits_while_a_worker_is_busy():
    control, done = _Control(), []
    busy = subprocess.Popen([sys.executable, "-c", "print('spinning', flush=True)\nwhile True: pass"],
                            stdout=subprocess.PIPE)
    assert busy.stdout.readline() == b"spinning\n"  # in its loop from here on
    # The request comes only after the template has seen the busy worker for a while.
    threading.Timer(1.0, control.caller.sendall, args=(b"F",)).start()
    try:
        steps = warm_workers._warm_while_idle(control.template, _recording(3, done), {busy.pid})
    finally:
        busy.kill()
        busy.wait()
        busy.stdout.close()
        control.close()
    assert done == [] and steps is not None


def test_running_tells_busy_from_gone():
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    pids = {finished.pid}
    assert not warm_workers._running(pids) and pids == set()  # an exited worker is forgotten
    assert warm_workers._running({os.getpid()})  # this process, reading its own state, is running


def test_a_batch_runs_its_tasks_while_the_caller_is_still_adding(tmp_path):
    with DeadlinePool(1) as streaming:
        streaming.run(abs, [(1,)], timeout=30)  # the worker is up
        made = tmp_path / "made-by-the-worker"
        with streaming.batch(os.mkdir, timeout=30) as batch:
            batch.add((str(made),))
            deadline = time.monotonic() + 30
            while not made.exists() and time.monotonic() < deadline:  # the caller's own work
                batch.poll()
                time.sleep(0.01)
            assert made.exists()  # it ran before anyone waited for the outcomes
            batch.add((str(made),))  # made already: this one raises, and is reported
            assert [o.status for o in batch.outcomes()] == ["ok", "raised"]


def test_adding_to_a_batch_never_waits_for_the_templates_imports(tmp_path, monkeypatch):
    flag = tmp_path / "go"
    (tmp_path / "slow_preload.py").write_text(
        "import os, time\n"
        "def wait():\n"
        "    while not os.path.exists(os.environ['REFEREE_TEST_FLAG']):\n"
        "        time.sleep(0.01)\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # the template gets the caller's sys.path
    monkeypatch.setenv("REFEREE_TEST_FLAG", str(flag))
    with DeadlinePool(1, preload=("slow_preload:wait",)) as slow:
        slow.start()
        with slow.batch(abs, timeout=30) as batch:
            adding = threading.Thread(target=lambda: (batch.add((-3,)), batch.poll()))
            adding.start()
            adding.join(10)
            assert not adding.is_alive()  # returned although the template is still importing
            flag.touch()
            assert [o.value for o in batch.outcomes()] == [3]


def test_leaving_a_batch_early_kills_the_workers_busy_with_it():
    with DeadlinePool(1) as leaving:
        leaving.run(abs, [(1,)], timeout=30)
        (worker,) = set(leaving.processes()) - {leaving._zygote.pid}
        with leaving.batch(time.sleep, timeout=30) as batch:
            batch.add((60,))
        deadline = time.monotonic() + 5
        while _alive(worker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(worker)
        assert leaving.run(abs, [(-2,)], timeout=30)[0].value == 2  # a fresh worker takes over


def test_a_batch_deadline_cancels_what_is_left():
    with DeadlinePool(1) as pool, pool.batch(time.sleep, timeout=30, total_timeout=0.5) as batch:
        batch.add((60,))
        batch.poll()
        assert [o.status for o in batch.outcomes()] == ["cancelled"]
