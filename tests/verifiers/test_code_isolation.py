"""Isolation levels: what the sandbox picks and why, the paths a non-root user gets, the pool's
life cycle (reused, restarted when damaged, shut down at exit), and ``referee doctor``."""

import ctypes
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from types import SimpleNamespace

import pytest

from referee.recipes.cli import main as referee_main
from referee.verifiers import code
from referee.verifiers.sandbox import cleanup, isolation as iso
from referee.verifiers.sandbox.channel import recv_message
from referee.verifiers.sandbox.cleanup import kill_job, running_since
from referee.verifiers.sandbox.forkserver import jobs_base
from referee.verifiers.code.grading import judge_pool
from referee.verifiers.sandbox.namespaces import SCRIPT as NAMESPACES_LAUNCHER
from referee.verifiers.code.run import run_program
from referee.verifiers.sandbox.uids import lease_uid

MECHANISM = iso.namespace_mechanism()[0]  # bubblewrap, referee's own namespaces, or "" (REFEREE_NO_BUBBLEWRAP hides one)
IS_ROOT = os.geteuid() == 0
# What a user without root gets: namespaces in a user namespace where they can be made, else the basic layers.
NOT_ROOT_LEVELS = ["basic"] + (["namespaces"] if MECHANISM else [])
NO_BUBBLEWRAP = (False, "bwrap is not installed (apt-get install bubblewrap)")
NO_USER_NAMESPACES = (False, "referee's own namespaces cannot start a sandbox here: referee namespaces: unshare of user, "
                             "mount, pid, network, ipc and uts namespaces: No space left on device (ENOSPC)")

TWICE = {"format": "call", "fn_name": "f", "inputs": [[1], [2]], "outputs": [2, 4]}
FOUR_FORMATS = [
    ("def f(x):\n    return 2 * x\n", TWICE),
    ("from typing import List\ndef total(xs: List[int]) -> int:\n    return sum(xs)\n",
     {"format": "humaneval", "entry_point": "total",
      "test": "def check(candidate):\n    assert candidate([1, 2]) == 3\n    assert candidate([]) == 0\n"}),
    ("import math\ndef hyp(a, b):\n    return math.hypot(a, b)\n",
     {"format": "asserts", "setup": "import math", "asserts": ["assert math.isclose(hyp(3, 4), 5)"]}),
    ("a, b = map(int, input().split())\nprint(a * b)\n", {"format": "stdio", "inputs": ["6 7\n"], "outputs": ["42\n"]}),
]


def test_auto_picks_the_best_level_this_machine_gives():
    chosen = iso.available_isolation("auto")
    assert chosen.minimal_root == bool(MECHANISM) and chosen.own_uid == IS_ROOT and chosen.mechanism == MECHANISM
    assert chosen.bubblewrap == (MECHANISM == "bubblewrap")
    assert chosen.level == {(True, True): "full", (True, False): "namespaces", (False, True): "uid",
                            (False, False): "basic"}[(bool(MECHANISM), IS_ROOT)]
    assert all(layer.why for layer in chosen.layers)


def test_without_root_auto_falls_back_and_says_why(monkeypatch):
    monkeypatch.setattr(iso, "_is_root", lambda: False)
    chosen = iso.available_isolation("auto")
    assert not chosen.own_uid and chosen.level in NOT_ROOT_LEVELS
    uid_layer = next(layer for layer in chosen.layers if layer.name == "own uid")
    assert not uid_layer.on and uid_layer.why.startswith("not root")
    with pytest.raises(ValueError, match="needs root"):
        iso.resolve_isolation("uid")


@pytest.mark.skipif(not iso.probe_own_namespaces()[0], reason="the kernel refuses referee's own namespaces here")
def test_without_bubblewrap_referee_makes_the_namespaces_itself(monkeypatch):
    monkeypatch.setattr(iso, "probe_bubblewrap", lambda: NO_BUBBLEWRAP)
    chosen = iso.available_isolation("auto")
    assert chosen.level == ("full" if IS_ROOT else "namespaces") and chosen.mechanism == "own namespaces"
    why = next(layer.why for layer in chosen.layers if layer.name == "namespaces")
    assert why.startswith("referee's own namespaces") and "apt-get install bubblewrap" in why
    assert iso.exposures(chosen) == []
    assert iso.worker_argv(chosen, ["--fd", "3"])[3] == NAMESPACES_LAUNCHER


def test_where_no_namespaces_can_be_made_auto_falls_back_and_says_why(monkeypatch):
    monkeypatch.setattr(iso, "probe_bubblewrap", lambda: NO_BUBBLEWRAP)
    monkeypatch.setattr(iso, "probe_own_namespaces", lambda: NO_USER_NAMESPACES)
    chosen = iso.available_isolation("auto")
    assert chosen.level == ("uid" if IS_ROOT else "basic") and chosen.mechanism == ""
    why = next(layer.why for layer in chosen.layers if layer.name == "namespaces")
    assert "apt-get install bubblewrap" in why and "(ENOSPC)" in why
    with pytest.raises(ValueError, match="needs namespaces of its own, but bwrap is not installed.*ENOSPC"):
        iso.resolve_isolation("full")


# --- failing closed -----------------------------------------------------------------------------

@pytest.fixture
def no_confinement(monkeypatch):
    """A kernel without Landlock: the ``landlock + seccomp`` layer is off (tests/verifiers/test_code_confinement.py
    covers it on)."""
    from referee.verifiers.sandbox import confine

    monkeypatch.setattr(confine, "probe", lambda: (False, "this kernel has no Landlock"))


@pytest.fixture
def fresh_resolution(monkeypatch):
    """Resolution as in a new process: nothing cached, nothing warned yet (and so again afterwards)."""
    from referee.verifiers.code import grading

    grading._isolation.cache_clear()
    monkeypatch.setattr(iso, "_warned", set())
    yield
    grading._isolation.cache_clear()


def test_auto_refuses_a_level_where_jobs_reach_you_and_says_how_to_get_one(monkeypatch, fresh_resolution,
                                                                          no_confinement):
    monkeypatch.setattr(iso, "_is_root", lambda: False)
    monkeypatch.setattr(iso, "probe_bubblewrap", lambda: NO_BUBBLEWRAP)
    monkeypatch.setattr(iso, "probe_own_namespaces", lambda: NO_USER_NAMESPACES)
    with pytest.raises(ValueError) as refused:
        iso.resolve_isolation("auto")
    message = str(refused.value)
    assert "'basic'" in message and "signal your processes" in message and "read your home" in message
    assert "apt-get install bubblewrap" in message and "allow_weak_isolation=True" in message
    assert message.count(". ") == 0  # one sentence
    verdict = code.verify("def f(x):\n    return 2 * x\n", TWICE, workers=1)  # nothing runs
    assert verdict.status == "error" and verdict.reason == message and verdict.details["isolation"] == "auto"
    with pytest.raises(ValueError, match="found only 'basic'"):  # the acknowledgement goes with a named level only
        iso.resolve_isolation("auto", allow_weak=True)


def test_a_weak_level_runs_only_when_named_and_accepted_and_warns_once(fresh_resolution):
    refused = code.verify("def f(x):\n    return 2 * x\n", TWICE, isolation="basic", workers=1)
    assert refused.status == "error" and "allow_weak_isolation=True" in refused.reason
    with pytest.warns(RuntimeWarning, match="isolation='basic'.*signal your processes"):
        accepted = code.verify("def f(x):\n    return 2 * x\n", TWICE, isolation="basic", allow_weak_isolation=True,
                               workers=1)
    assert accepted.correct and accepted.details["isolation"] == "basic"
    from referee.verifiers.code import grading

    grading._isolation.cache_clear()  # resolved again: still no second warning in this process
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert code.verify("def f(x):\n    return 2 * x\n", TWICE, isolation="basic", allow_weak_isolation=True,
                           workers=1).correct


def test_uid_is_weak_only_where_others_can_enter_your_home(monkeypatch, no_confinement):
    home = tempfile.mkdtemp()  # under /tmp, which others may pass through (pytest's tmp_path is under a 0700 folder)
    try:
        monkeypatch.setenv("HOME", home)
        os.chmod(home, 0o700)
        assert iso.exposures(iso.isolation_of("uid")) == []
        os.chmod(home, 0o755)
        assert iso.exposures(iso.isolation_of("uid")) == [f"read your home {os.path.realpath(home)}"]
        assert iso.exposures(iso.isolation_of("full")) == iso.exposures(iso.isolation_of("namespaces")) == []
    finally:
        os.rmdir(home)


def test_min_isolation_refuses_a_weaker_level(fresh_resolution):
    verdict = code.verify("def f(x):\n    return 2 * x\n", TWICE, isolation="basic", allow_weak_isolation=True,
                          min_isolation="uid", workers=1)
    assert verdict.status == "error" and "below min_isolation='uid'" in verdict.reason
    assert verdict.details["isolation"] == "basic"
    bad = code.verify("def f(x):\n    return 2 * x\n", TWICE, min_isolation="strong")
    assert bad.status == "error" and "min_isolation='strong'" in bad.reason
    best = iso.available_isolation("auto").level
    assert code.verify("def f(x):\n    return 2 * x\n", TWICE, min_isolation=best, workers=1).correct


def test_every_code_verdict_says_its_isolation_level():
    level = iso.available_isolation("auto").level
    verdicts = code.verify_batch(["def f(x):\n    return 2 * x\n", "no code here", 3, "def f(x):\n    return x\n"],
                                 [TWICE, TWICE, TWICE, {"format": "nope"}], workers=1)
    assert [v.details["isolation"] for v in verdicts] == [level] * 4


def test_doctor_exits_1_below_full_strength(capsys):
    assert referee_main(["doctor", "--isolation", "basic", "--no-check"]) == 1
    assert "below full strength: a job could signal your processes" in capsys.readouterr().out
    if iso.available_isolation("auto").level == "full":
        assert referee_main(["doctor", "--no-check"]) == 0


@pytest.mark.parametrize("level", NOT_ROOT_LEVELS)
@pytest.mark.parametrize(("program", "tests"), FOUR_FORMATS, ids=[t["format"] for _, t in FOUR_FORMATS])
def test_the_not_root_levels_judge_all_four_formats(level, program, tests):
    assert code.verify(program, tests, isolation=level, allow_weak_isolation=True, workers=1).correct
    wrong = program.replace("2 * x", "3 * x").replace("sum(xs)", "len(xs)").replace("hypot", "fsum").replace("a * b", "a + b")
    wrong = wrong.replace("math.fsum(a, b)", "math.fsum([a, b])")
    assert code.verify(wrong, tests, isolation=level, allow_weak_isolation=True, workers=1).status == "wrong"


@pytest.mark.parametrize("level", NOT_ROOT_LEVELS)
def test_the_not_root_levels_hold_the_attacks_they_can(level):
    # In referee's own namespaces the worker is pid 1 of its pid namespace, which ignores its jobs'
    # signals: the kill does nothing and the right answer passes. Landlock + seccomp refuses the
    # signal (the call raises). Elsewhere the worker dies.
    isolation = code.resolve_isolation(level, allow_weak=True)
    worker_out_of_reach = isolation.mechanism == "own namespaces"
    attacks = [
        ("import os, signal\ndef f(x):\n    os.kill(os.getppid(), signal.SIGKILL)\n    return 2 * x\n",
         "passed" if worker_out_of_reach else "exception" if iso.confined(isolation) else "crashed"),
        ("def f(x):\n    while True:\n        pass\n", "timeout"),
        ("import sys\nsys.exit(0)\n", "load"),
        ("class Anything:\n    def __eq__(self, other):\n        return True\ndef f(x):\n    return Anything()\n",
         "unsendable"),
        ("def f(x):\n    while True:\n        print('x' * 10000)\n", "output"),
    ]
    verdicts = code.verify_batch([a for a, _ in attacks], [TWICE] * len(attacks), isolation=level, allow_weak_isolation=True, workers=1, timeout=1.0)
    assert [v.score for v in verdicts] == [float(kind == "passed") for _, kind in attacks], [v.reason for v in verdicts]
    assert [v.details["tests"][0]["kind"] for v in verdicts] == [kind for _, kind in attacks]
    assert code.verify("def f(x):\n    return 2 * x\n", TWICE, isolation=level, allow_weak_isolation=True, workers=1).correct


def _reachable(level):
    try:
        return code.resolve_isolation(level).level == level
    except ValueError:
        return False


# The levels with a /tmp and /dev/shm of their own (basic writes the host's: nothing to check there).
PRIVATE_TMP_LEVELS = [level for level in ("full", "uid", "namespaces") if _reachable(level)]
WRITES_TMP = ("def f(x):\n    with open('/tmp/a', 'w') as out:\n        out.write(str(x))\n"
              "    with open('/dev/shm/b', 'w') as out:\n        out.write(str(x))\n"
              "    return int(open('/tmp/a').read()) + int(open('/dev/shm/b').read())\n")
SEES_LEFTOVERS = ("import os\ndef f(x):\n"
                  "    return x + len({'a', 'b'} & set(os.listdir('/tmp') + os.listdir('/dev/shm')))\n")


@pytest.mark.parametrize("level", PRIVATE_TMP_LEVELS)
def test_tmp_and_dev_shm_are_writable_at_every_level(level):
    verdict = code.verify(WRITES_TMP, TWICE, isolation=level, allow_weak_isolation=True, workers=1)
    assert verdict.correct and verdict.details["isolation"] == level, verdict.reason


# Where jobs have a uid of their own, what it leaves is removed after each job. (At `namespaces`,
# whose jobs share the fork server's uid, a later job of the same worker still sees it.)
@pytest.mark.parametrize("level", [level for level in PRIVATE_TMP_LEVELS if level in ("full", "uid")])
def test_what_a_job_leaves_in_tmp_is_gone_before_the_next_job(level):
    assert code.verify(WRITES_TMP, TWICE, isolation=level, allow_weak_isolation=True, workers=1).correct
    after = code.verify(SEES_LEFTOVERS, {"format": "call", "fn_name": "f", "inputs": [[1]], "outputs": [1]},
                        isolation=level, allow_weak_isolation=True, workers=1)
    assert after.correct, after.reason  # f(1) == 1 only if neither file was left


@pytest.mark.parametrize("level", ["uid"] if IS_ROOT else [])  # only root can give jobs their own uid
def test_the_uid_level_without_bubblewrap(level):
    program = ("import os, signal, socket\ndef f(x):\n    try:\n        os.kill(os.getppid(), signal.SIGKILL)\n"
               "        return 0\n    except OSError:\n        pass\n    try:\n"
               "        socket.socket().connect(('127.0.0.1', 9))\n        return 0\n    except OSError:\n        pass\n"
               "    return 2 * x if os.getuid() != 0 else 0\n")
    verdict = code.verify(program, TWICE, isolation=level, allow_weak_isolation=True, workers=1)
    assert verdict.correct, verdict.reason  # not root, no network, the worker out of reach


@pytest.mark.parametrize("level", ["uid"] if IS_ROOT else [])
def test_the_uid_level_imports_the_whole_standard_library_wherever_python_lives(level):
    # none of these is imported by the worker; pyenv keeps them in a 0700 /root, for one
    program = ("import calendar, email.mime.text, json.tool, sqlite3, zoneinfo\ndef f(x):\n"
               "    return 2 * x if calendar.isleap(2024) else 0\n")
    verdict = code.verify(program, TWICE, isolation=level, allow_weak_isolation=True, workers=1)
    assert verdict.correct, verdict.reason


def test_uid_leases_are_unique_until_released():
    first, second = lease_uid(), lease_uid()
    assert first.uid != second.uid
    freed = first.uid
    first.release()
    third = lease_uid()
    assert third.uid == freed
    second.release()
    third.release()


def _forkservers(root: int) -> list[int]:
    children: dict = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as handle:
                    ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
                with open(f"/proc/{name}/cmdline", "rb") as handle:
                    argv = handle.read().split(b"\0")
            except OSError:
                continue
            children.setdefault(ppid, []).append((int(name), argv))
    found, stack = [], [root]
    while stack:
        for pid, argv in children.get(stack.pop(), []):
            stack.append(pid)
            if (b"referee.verifiers.sandbox.forkserver" in argv and b"bwrap" not in argv[0]
                    and os.fsencode(NAMESPACES_LAUNCHER) not in argv):
                found.append(pid)
    return found


def test_the_pool_is_reused_and_restarted_when_damaged():
    assert code.verify("def f(x):\n    return 2 * x\n", TWICE, workers=1).correct
    workers = judge_pool(1).processes()
    assert code.verify("def f(x):\n    return 2 * x\n", TWICE, workers=1).correct
    assert judge_pool(1).processes() == workers  # reused, not restarted
    for pid in _forkservers(os.getpid()):
        os.kill(pid, signal.SIGKILL)  # damage every sandbox worker from outside
    assert code.verify("def f(x):\n    return 2 * x\n", TWICE, workers=1).correct
    for pid in judge_pool(1).processes():
        os.kill(pid, signal.SIGKILL)  # and the judges and their template
    time.sleep(0.2)
    assert code.verify("def f(x):\n    return 2 * x\n", TWICE, workers=1).correct


def test_a_plain_run_restarts_a_damaged_sandbox_worker_too():
    assert run_program("print(1)", workers=1).stdout == "1\n"
    for pid in _forkservers(os.getpid()):
        os.kill(pid, signal.SIGKILL)  # the worker the judge kept is dead before the next run
    run = run_program("print(2)", workers=1)
    assert (run.ended, run.stdout) == ("finished", "2\n"), run


def _job_folders(pid: int) -> list[str]:
    """The host folders a worker without bubblewrap keeps its job folders in."""
    return [path for base in ("/dev/shm", tempfile.gettempdir()) for path in glob.glob(f"{base}/referee-jobs-{pid}-*")]


@pytest.mark.parametrize("level", ["auto", "basic"])
def test_everything_is_shut_down_at_exit(level):
    script = ("import glob, json, os\nfrom referee.verifiers import code\n"
              "from referee.verifiers.code.grading import judge_pool\n"
              "from tests.verifiers.test_code_isolation import _forkservers\n"
              "assert code.verify('def f(x):\\n    return 2 * x\\n', {'format': 'call', 'fn_name': 'f', "
              f"'inputs': [[1]], 'outputs': [2]}}, workers=2, isolation={level!r}, allow_weak_isolation=True).correct\n"
              "from tests.verifiers.test_code_isolation import _job_folders\n"
              "folders = [f for pid in _forkservers(os.getpid()) for f in _job_folders(pid)]\n"
              "print(json.dumps({'pids': judge_pool(2).processes(), 'folders': folders}))\n")
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    left = json.loads(child.stdout)
    assert left["pids"] and (level == "auto" or left["folders"])  # without bubblewrap, job folders are the host's
    while any(os.path.exists(path) for path in left["folders"] + [f"/proc/{pid}" for pid in left["pids"]]):
        time.sleep(0.05)  # they go when the child's exit is noticed; no_test_hangs fails the test if never


def test_a_worker_killed_before_cleaning_up_leaves_no_folder_for_long():
    assert code.verify("def f(x):\n    return 2 * x\n", TWICE, isolation="basic", allow_weak_isolation=True, workers=1).correct
    killed = _forkservers(os.getpid())
    stale = [path for pid in killed for path in _job_folders(pid)]
    assert stale
    for pid in killed:
        os.kill(pid, signal.SIGKILL)  # no chance to clean up
    assert code.verify("def f(x):\n    return 2 * x\n", TWICE, isolation="basic", allow_weak_isolation=True, workers=1).correct
    assert [path for path in stale if os.path.exists(path)] == []  # the next worker swept them


def _bare_worker() -> tuple[subprocess.Popen, socket.socket]:
    """A fork-server worker at the basic level, started straight, ready to serve."""
    ours, theirs = socket.socketpair()
    worker = subprocess.Popen([sys.executable, "-m", "referee.verifiers.sandbox.forkserver", "--fd", str(theirs.fileno())],
                              pass_fds=[theirs.fileno()])
    theirs.close()
    assert recv_message(ours, deadline=time.monotonic() + 60)[0] == "ready"
    return worker, ours


def test_a_killed_worker_not_yet_reaped_or_whose_pid_was_reused_leaves_no_folder():
    killed, _ = _bare_worker()
    [stale] = _job_folders(killed.pid)
    os.kill(killed.pid, signal.SIGKILL)
    os.waitid(os.P_PID, killed.pid, os.WEXITED | os.WNOWAIT)  # dead, but its parent has not reaped it: a zombie
    base, me = os.path.dirname(stale), os.getpid()
    reused = f"{base}/referee-jobs-{me}-{running_since(me) - 1}-reused"  # an older process that had our pid
    live = f"{base}/referee-jobs-{me}-{running_since(me)}-live"  # looks like ours: in use
    for folder in (reused, live):
        os.mkdir(folder)
    try:
        assert os.path.exists(f"/proc/{killed.pid}")
        swept, control = _bare_worker()
        assert [path for path in (stale, reused) if os.path.exists(path)] == [] and os.path.isdir(live)
        control.close()
        assert swept.wait(timeout=10) == 0 and _job_folders(swept.pid) == []  # the new worker removes its own
    finally:
        killed.wait()
        os.rmdir(live)
        if os.path.exists(reused):
            os.rmdir(reused)


def test_job_folders_leave_a_dev_shm_without_room_for_a_few_jobs(monkeypatch):
    """A container's 64 MiB /dev/shm that one job could fill would fail the jobs beside it."""
    if not os.access("/dev/shm", os.W_OK):
        pytest.skip("no writable /dev/shm here")
    monkeypatch.setattr(os, "statvfs", lambda path: SimpleNamespace(f_bavail=16 << 10, f_frsize=4096))  # 64 MiB free
    jobs_at_once = max(4, os.cpu_count() or 1)
    assert jobs_base(tmp_bytes=(64 << 20) // jobs_at_once) == "/dev/shm"
    assert jobs_base(tmp_bytes=(64 << 20) // jobs_at_once + 1) == tempfile.gettempdir()
    assert jobs_base(tmp_bytes=64 << 20) == tempfile.gettempdir()


def test_a_stale_job_folder_is_removed_from_either_place_a_worker_may_have_used():
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # its pid names a worker that has ended
    stale = [tempfile.mkdtemp(prefix=f"referee-jobs-{dead.pid}-1-", dir=base)
             for base in {jobs_base(), tempfile.gettempdir()}]
    worker, control = _bare_worker()
    try:
        assert [path for path in stale if os.path.exists(path)] == []
    finally:
        control.close()
        worker.wait(timeout=10)
        for path in stale:
            if os.path.exists(path):
                os.rmdir(path)


def test_a_killed_job_process_its_parent_never_reaps_is_not_a_survivor():
    """A killed job process stays a zombie until its parent reaps it; where that parent is not
    the cleaner (a container's init that does not reap, an outside process) the job is still clean."""
    ready, say_ready = os.pipe()
    parent = os.fork()
    if parent == 0:  # outside the job; forks the job leader and never reaps it
        leader = os.fork()
        if leader == 0:
            os.setsid()
            os.write(say_ready, b"%d\n" % os.getpid())
            time.sleep(60)
            os._exit(0)  # never back into pytest
        time.sleep(60)
        os._exit(0)
    try:
        leader = int(os.read(ready, 32))
        statuses, survivors = kill_job(session=leader, uid=None, timeout=1.0)
        assert running_since(leader) is None and os.path.exists(f"/proc/{leader}")  # killed, not reaped
        assert (statuses, survivors) == ({}, [])
    finally:
        os.kill(parent, signal.SIGKILL)
        os.waitpid(parent, 0)


def test_doctor_prints_the_level_and_proves_the_sandbox_works(capsys):
    assert referee_main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert f"code sandbox isolation: {iso.resolve_isolation().level}" in out
    assert (f"(namespaces made by {MECHANISM})" in out) == bool(MECHANISM)
    assert "check: a test program was judged in the sandbox" in out
    assert out.count("  on ") + out.count("  off ") == len(iso.resolve_isolation().layers)
    assert "landlock + seccomp: " in out


def test_doctor_says_when_a_level_is_not_available(monkeypatch, capsys):
    monkeypatch.setattr(iso, "probe_bubblewrap", lambda: NO_BUBBLEWRAP)
    monkeypatch.setattr(iso, "probe_own_namespaces", lambda: NO_USER_NAMESPACES)
    assert referee_main(["doctor", "--isolation", "full"]) == 2
    assert "needs namespaces of its own" in capsys.readouterr().err


# As a user whose namespace may make no more user namespaces (user.max_user_namespaces=0 in a user
# namespace of the test's own: the machine's setting is untouched), the launcher says why, in one line.
REFUSED_LAUNCH = """
import ctypes, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
assert libc.unshare(0x10000000) == 0  # a user namespace of our own, where we are uid 1000
for name, text in (("setgroups", "deny"), ("uid_map", "1000 0 1"), ("gid_map", "1000 0 1")):
    with open(f"/proc/self/{name}", "w") as handle:
        handle.write(text)
with open("/proc/sys/user/max_user_namespaces", "w") as handle:
    handle.write("0")
argv = [sys.executable, "-I", "-B", sys.argv[1], "--user-namespace", "--ro", "/usr", "--", "/bin/true"]
done = subprocess.run(argv, capture_output=True, text=True)
print(done.returncode, done.stderr.strip())
"""


@pytest.mark.skipif(not IS_ROOT, reason="maps root into a user namespace of the test's own")
def test_the_launcher_says_why_the_kernel_refuses_namespaces():
    from referee.verifiers.sandbox.namespaces import EXIT_REFUSED

    done = subprocess.run([sys.executable, "-c", REFUSED_LAUNCH, NAMESPACES_LAUNCHER], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    status, line = done.stdout.strip().split(" ", 1)
    assert int(status) == EXIT_REFUSED
    assert line == ("referee namespaces: unshare of user, mount, pid, network, ipc and uts namespaces: "
                    "No space left on device (ENOSPC)")


@pytest.mark.skipif(not iso.probe_own_namespaces()[0], reason="the kernel refuses referee's own namespaces here")
def test_a_killed_launcher_takes_its_whole_namespace_with_it():
    from referee.verifiers.sandbox.limits import Limits
    from referee.verifiers.sandbox.sandbox import Sandbox

    sandbox = Sandbox(iso.isolation_of("namespaces" if not IS_ROOT else "full", "own namespaces"),
                      uid=lease_uid().uid if IS_ROOT else None)
    sandbox.start()
    try:
        channel = sandbox.start_job({"mode": "stdio", "code": "import time\nprint('up', flush=True)\ntime.sleep(60)",
                                     "limits": Limits.for_tests(timeout=20, tests=1).to_dict(), "deadline_s": 60})
        [worker] = [pid for pid in _forkservers(os.getpid()) if _parent(pid) == sandbox.process.pid]
        with open(f"/proc/{worker}/status") as handle:  # pid 1 of its own pid namespace
            assert [line.split()[-1] for line in handle if line.startswith("NSpid:")] == ["1"]
        job = [pid for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
               if running_since(pid) is not None and _parent(pid) == worker]
        assert job
        os.kill(sandbox.process.pid, signal.SIGKILL)  # the launcher, from outside
        for pid in [worker, *job]:
            while running_since(pid) is not None:
                time.sleep(0.01)  # gone (no_test_hangs fails the test if never)
        channel.close()
    finally:
        sandbox.close()


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return -1


def test_a_grandchild_handed_to_the_cleaner_during_its_pass_is_killed():
    """The daemon race: a job process that exits by itself while the cleaner passes over the job
    hands its child to the cleaner (a subreaper) after the pass listed the job; the cleaner must
    list again before it calls the job clean."""
    report_read, report = os.pipe()
    cleaner = os.fork()
    if cleaner == 0:  # a subreaper of its own, so that orphans come to it and not to pytest
        verdict = b"?"
        try:
            ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
            go_read, go = os.pipe()
            ready_read, ready = os.pipe()
            leader = os.fork()
            if leader == 0:
                os.setsid()
                middle = os.fork()
                if middle == 0:
                    os.setsid()  # out of the leader's group, like a daemon
                    if os.fork() == 0:
                        os.close(go_read)
                        time.sleep(60)
                        os._exit(0)
                    os.write(ready, b"%d\n" % os.getpid())
                    os.read(go_read, 1)  # exits when the cleaner has listed the job
                    os._exit(0)
                time.sleep(60)
                os._exit(0)
            middle = int(os.read(ready_read, 32))
            listing = cleanup.job_processes

            def list_then_let_the_middle_exit(**kwargs):
                found = listing(**kwargs)
                if middle in found:
                    os.write(go, b"!")
                    while running_since(middle) is not None:
                        time.sleep(0.001)
                return found

            cleanup.job_processes = list_then_let_the_middle_exit
            statuses, survivors = kill_job(session=leader, uid=None, children=True, timeout=2.0)
            cleanup.job_processes = listing
            orphans = [pid for pid in cleanup.job_processes(session=None, uid=None, reaper=os.getpid())
                       if running_since(pid) is not None]
            verdict = b"clean" if not survivors and not orphans else b"survived %r" % orphans
            for pid in orphans:
                os.kill(pid, signal.SIGKILL)
        finally:
            os.write(report, verdict)
            os._exit(0)
    os.close(report)
    got = os.read(report_read, 200)
    os.waitpid(cleaner, 0)
    assert got == b"clean"
