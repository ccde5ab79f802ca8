"""The uid level's mount namespace: a job's uid reaches the folders it needs through a private
folder, sees nothing else there, and the host's folders and mounts stay as they were."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from referee.verifiers.sandbox.uids import lease_uid

IS_ROOT = os.geteuid() == 0
# Reaches the folder as root, then reads what it can as the job's uid (without root: says it cannot).
REACH_AS = """
import json, os, sys
from referee.verifiers.sandbox.mounts import let_others_reach
private, uid = sys.argv[1], int(sys.argv[2])
found = {"reached": let_others_reach([f"{private}/python/lib"])}
if found["reached"]:
    os.setgroups([]); os.setresgid(uid, uid, uid); os.setresuid(uid, uid, uid)
    def attempt(read):
        try:
            return read()
        except OSError as exc:
            return type(exc).__name__
    found.update(module=attempt(lambda: open(f"{private}/python/lib/mod.py").read()),
                 listing=attempt(lambda: sorted(os.listdir(private))),
                 secret=attempt(lambda: open(f"{private}/secret").read()))
print(json.dumps(found))
"""


@pytest.fixture()
def private_folder():
    folder = tempfile.mkdtemp()  # 0700: other users cannot pass through
    os.makedirs(f"{folder}/python/lib")
    with open(f"{folder}/python/lib/mod.py", "w") as handle:
        handle.write("ANSWER = 42\n")
    with open(f"{folder}/secret", "w") as handle:
        handle.write("root's")
    os.chmod(f"{folder}/secret", 0o644)  # readable, were the folder passable: only the mount hides it
    yield folder
    shutil.rmtree(folder)


def test_the_job_uid_reaches_what_it_needs_and_nothing_else(private_folder):
    lease = lease_uid()
    try:
        done = subprocess.run([sys.executable, "-c", REACH_AS, private_folder, str(lease.uid)],
                              capture_output=True, text=True, timeout=60)
    finally:
        lease.release()
    assert done.returncode == 0, done.stderr
    # only root may take a mount namespace of its own; without root the uid level is not offered at all
    expected = ({"reached": True, "module": "ANSWER = 42\n", "listing": ["python"], "secret": "FileNotFoundError"}
                if IS_ROOT else {"reached": False})
    assert json.loads(done.stdout) == expected
    assert os.stat(private_folder).st_mode & 0o777 == 0o700  # the host's folder is as it was
    with open("/proc/self/mounts") as mounts:
        assert private_folder not in mounts.read()


# Takes the private in-memory /tmp with a folder under /tmp kept (a checkout cloned there), then
# checks that the folder is still there and that /tmp is bounded.
PRIVATE_TMP = """
import json, os, sys
from referee.verifiers.sandbox.mounts import private_shared_folders
kept, filler = sys.argv[1], sys.argv[2]
found = {"private": private_shared_folders(4 << 20, keep=[kept])}
found["kept"] = open(os.path.join(kept, "module.py")).read()
written = 0
try:
    with open(filler, "wb") as handle:
        for _ in range(16):
            handle.write(b"x" * (1 << 20))
            handle.flush()
            written += 1
except OSError:
    pass
found["written_mb"] = written
print(json.dumps(found))
"""


@pytest.mark.skipif(not IS_ROOT, reason="a mount namespace needs root")
def test_the_private_tmp_is_bounded_even_when_the_checkout_lives_under_tmp():
    checkout = tempfile.mkdtemp(dir="/tmp")
    filler = f"/tmp/referee-filler-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        with open(f"{checkout}/module.py", "w") as handle:
            handle.write("VALUE = 1\n")
        run = subprocess.run([sys.executable, "-c", PRIVATE_TMP, checkout, filler], capture_output=True, text=True,
                             timeout=60)
        found = json.loads(run.stdout)
        assert found["private"] and found["kept"] == "VALUE = 1\n"
        assert found["written_mb"] < 16  # the 4 MiB bound stopped the filler
        assert not os.path.exists(filler)  # it wrote into its own /tmp, not the host's
    finally:
        shutil.rmtree(checkout)
        if os.path.exists(filler):
            os.remove(filler)
