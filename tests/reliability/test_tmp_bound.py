"""What a job keeps in files is bounded (``tmp_mb``) at every level: the sandbox's private /tmp
lives in memory outside ``memory_mb``, and one job once held 2 GB there. Past the bound writes
fail or the job is killed, and that is the program's fault (score 0 with a reason), never an error."""

import os
import shutil
import uuid

import pytest

from referee.verifiers import code
from referee.verifiers.sandbox.forkserver import jobs_base
from referee.verifiers.sandbox.isolation import bubblewrap_argv

TMP_MB = 16
TOKEN = f"referee-fill-{uuid.uuid4().hex[:12]}"
# The attacker wins (the test expects its answer) only if it keeps more than twice the bound in
# files: in its folder, and where the level lets it, in /tmp, /dev/shm and /var/tmp.
FILLER = f'''
import errno, os, time
def f(places, cap, hold=False):
    total = 0
    for place in places:
        for i in range(10 ** 6):  # until a write fails (or, at basic, the job is killed)
            if total >= cap:
                break
            try:
                with open(os.path.join(place, f"{TOKEN}-{{i}}"), "wb") as handle:
                    for _ in range(4):
                        handle.write(b"x" * (1 << 20))
                        handle.flush()
                        total += 1
            except OSError as exc:
                if hold and exc.errno == errno.ENOSPC:  # the host's /dev/shm is full, not the bound:
                    time.sleep(0.01)                    # keep what is written until the worker measures it
                    continue
                break
    return total > {2 * TMP_MB} or total == cap
'''
HERE = "."
SHARED = ["/tmp", "/dev/shm", "/var/tmp"]


def _available(level):
    try:
        code.resolve_isolation(level)
    except ValueError:
        return False
    return True


LEVELS = [level for level in code.LEVELS if _available(level)]


@pytest.mark.parametrize("level", LEVELS)
def test_a_job_cannot_keep_more_than_tmp_mb_in_files(level):
    isolation = code.resolve_isolation(level)
    places = [HERE] + (SHARED if isolation.bubblewrap or isolation.own_uid else [])  # basic: yours, unprotected
    # basic: only the worker's sampling (every 50 ms) bounds the job folder; a small host /dev/shm
    # (Docker's 64 MiB) fills before that, which is no proof that the bound held: hold on and be measured
    tests = {"format": "call", "fn_name": "f", "inputs": [[places, 10_000, level == "basic"]], "outputs": [True]}
    verdict = code.verify(FILLER, tests, isolation=level, allow_weak_isolation=True, workers=1, tmp_mb=TMP_MB, timeout=5.0)
    assert verdict.status == "wrong" and verdict.score == 0.0, verdict.reason
    a_little = {**tests, "inputs": [[places, 4]]}  # it can write: the bound, not a broken sandbox, stopped it
    assert code.verify(FILLER, a_little, isolation=level, allow_weak_isolation=True, workers=1, tmp_mb=TMP_MB, timeout=5.0).correct
    left = [f"{place}/{name}" for place in SHARED if os.path.isdir(place) for name in os.listdir(place)
            if name.startswith(TOKEN)]
    assert left == []


def test_a_basic_job_that_writes_too_much_is_killed_with_a_reason():
    # without a private /tmp the job folder is measured every 50 ms: a job that keeps writing is
    # killed (one that writes a burst and returns within 50 ms can pass that bound briefly)
    if shutil.disk_usage(jobs_base(TMP_MB << 20)).free < 2 * TMP_MB << 20:
        pytest.skip(f"{jobs_base(TMP_MB << 20)} has less than {2 * TMP_MB} MiB free: the job could not pass the bound")
    tests = {"format": "call", "fn_name": "f", "inputs": [[[HERE], 10_000, True]], "outputs": [True]}
    verdict = code.verify(FILLER, tests, isolation="basic", allow_weak_isolation=True, workers=1, tmp_mb=TMP_MB, timeout=5.0)
    assert verdict.status == "wrong", verdict.reason
    assert f"kept more than {TMP_MB} MiB in files" in verdict.reason


def test_bubblewrap_sizes_every_writable_place_and_locks_the_rest():
    argv = bubblewrap_argv("bwrap", user_namespace=False, tmp_bytes=TMP_MB << 20)
    tmpfs = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--tmpfs"]
    sized = [argv[i + 3] for i, arg in enumerate(argv) if arg == "--size" and argv[i + 2] == "--tmpfs"]
    assert tmpfs == sized == ["/tmp", "/dev/shm"]
    assert argv[argv.index("--size") + 1] == str(TMP_MB << 20)
    read_only = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--remount-ro"]
    assert read_only == ["/", "/dev"]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "64"])
def test_tmp_mb_must_be_a_positive_integer(bad):
    verdict = code.verify("def f():\n    return 1\n", {"format": "call", "fn_name": "f", "inputs": [[]], "outputs": [1]},
                          tmp_mb=bad)
    assert verdict.status == "error" and "tmp_mb" in verdict.reason


@pytest.mark.parametrize("level", [level for level in LEVELS if level != "basic"])
def test_the_private_tmp_has_the_size_asked_for_and_changes_with_it(level):
    program = "import os\ndef f():\n    fs = os.statvfs('.')\n    return fs.f_blocks * fs.f_frsize >> 20\n"
    for size in (TMP_MB, 2 * TMP_MB, TMP_MB):  # a new size starts a new worker
        tests = {"format": "call", "fn_name": "f", "inputs": [[]], "outputs": [size]}
        verdict = code.verify(program, tests, isolation=level, allow_weak_isolation=True, workers=1, tmp_mb=size)
        assert verdict.correct, verdict.reason
