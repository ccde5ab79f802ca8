"""Job folders of any shape are removed: a tree deeper than Python's recursion limit and longer
than PATH_MAX, locked folders, links that point out of the tree (never followed)."""

import glob
import os
import subprocess
import tempfile
import time

import pytest

from referee.verifiers import code
from referee.verifiers.sandbox.cleanup import remove_tree, tree_bytes

TWO = {"format": "call", "fn_name": "f", "inputs": [[1]], "outputs": [2]}
DEEP_TREE = "import os\nfor i in range(1500):\n    os.mkdir('d')\n    os.chdir('d')\ndef f(x):\n    return 2 * x\n"


def _deep_tree(root, depth):
    folder = os.open(root, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=folder)
        folder, previous = os.open("d", os.O_RDONLY, dir_fd=folder), folder
        os.close(previous)
    with open(f"/proc/self/fd/{folder}/leaf", "w") as handle:
        handle.write("x")
    os.close(folder)


def test_a_tree_deeper_than_the_recursion_limit_is_removed():
    job = tempfile.mkdtemp(dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else None)  # where job folders live
    try:
        _deep_tree(job, 3000)  # 6000 characters of path: past PATH_MAX too
        remove_tree(job)
        assert not os.path.lexists(job)
    finally:
        if os.path.lexists(job):
            subprocess.run(["rm", "-rf", job], check=False)


def test_locked_folders_are_unlocked_and_links_are_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("keep")
    job = tmp_path / "job"
    (job / "a" / "b").mkdir(parents=True)
    (job / "a" / "b" / "file").write_text("x")
    (job / "a" / "link").symlink_to(outside)
    os.chmod(job / "a" / "b", 0)
    os.chmod(job / "a", 0o100)
    remove_tree(str(job))
    assert not job.exists()
    assert (outside / "keep").read_text() == "keep"


@pytest.mark.parametrize("level", ["auto", "basic"])
def test_a_program_that_makes_a_deep_tree_gets_its_normal_verdict(level):
    verdicts = code.verify_batch([DEEP_TREE, DEEP_TREE.replace("2 * x", "3 * x"), "def f(x):\n    return 2 * x\n"],
                                 [TWO] * 3, isolation=level, allow_weak_isolation=True, workers=1, timeout=2.0)
    assert [v.status for v in verdicts] == ["correct", "wrong", "correct"], [v.reason for v in verdicts]
    assert all(v.details["jobs"] == 1 for v in verdicts)  # no sandbox restart
    leftovers = [path for base in {"/dev/shm", tempfile.gettempdir()} if os.path.isdir(base)
                 for path in glob.glob(f"{base}/referee-jobs-*/job-1/d")]
    assert leftovers == []


def test_measuring_a_tree_survives_what_a_job_does_to_it(tmp_path):
    job = tmp_path / "job"
    (job / "locked" / "inner").mkdir(parents=True)
    (job / "locked" / "inner" / "data").write_bytes(b"x" * 200_000)
    os.chmod(job / "locked" / "inner", 0)
    os.chmod(job / "locked", 0)
    assert tree_bytes(str(job), 1 << 30) >= 200_000  # locked folders still count
    (job / "link").symlink_to("/usr")
    assert tree_bytes(str(job), 1 << 30) < 1 << 20  # a link is never followed
    assert tree_bytes(str(tmp_path / "missing"), 100) == 0
    os.mkdir(job / "deep")
    _deep_tree(str(job / "deep"), 2000)
    assert tree_bytes(str(job), 1 << 30) >= 2000 * 4096
    remove_tree(str(job))


def test_a_deep_tree_left_on_the_host_by_a_killed_worker_does_not_stop_the_next_one():
    import socket
    import sys

    from referee.verifiers.sandbox.channel import recv_message

    from referee.verifiers.sandbox.forkserver import jobs_base

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # its pid names a worker that has ended
    stale = tempfile.mkdtemp(prefix=f"referee-jobs-{dead.pid}-1-", dir=jobs_base())  # where workers look
    os.mkdir(f"{stale}/job-1")
    _deep_tree(f"{stale}/job-1", 1500)
    ours, theirs = socket.socketpair()
    worker = subprocess.Popen([sys.executable, "-m", "referee.verifiers.sandbox.forkserver", "--fd", str(theirs.fileno())],
                              pass_fds=[theirs.fileno()])
    theirs.close()
    try:
        assert recv_message(ours, deadline=time.monotonic() + 60)[0] == "ready"
        assert not os.path.lexists(stale)
    finally:
        ours.close()
        worker.wait(timeout=30)
        if os.path.lexists(stale):
            subprocess.run(["rm", "-rf", stale], check=False)
