"""Hostile programs in one batch, as a GRPO step would send them: every verdict comes back, in
order, with the right status; no hostile program passes; nothing survives the batch (no process,
no file); the pool judges correctly afterwards."""

import os
import time
import uuid

import pytest

from referee.verifiers import code
from referee.verifiers.sandbox.isolation import confined

TMP_MB = 16
TOKEN = f"referee-hostile-{uuid.uuid4().hex[:12]}"
OPTIONS = {"timeout": 1.0, "workers": 2, "memory_mb": 256, "tmp_mb": TMP_MB}
TWO = {"format": "call", "fn_name": "f", "inputs": [[1]], "outputs": [2]}
RIGHT = "def f(x):\n    return 2 * x\n"
WRONG = "def f(x):\n    return 3 * x\n"
SHARED = ["/tmp", "/dev/shm", "/var/tmp"]
LEVEL = code.resolve_isolation()
PROTECTED = LEVEL.minimal_root or LEVEL.own_uid  # no network, and jobs cannot signal the worker


def hostile(level_protected: bool, port: int, no_sockets: bool) -> list[tuple[str, str, set]]:
    """(name, program, the statuses it may get) in batch order; the program returns 2 * x only
    when its attack worked, so a pass is a broken sandbox."""
    return [
        ("deep tree", "import os\nfor i in range(1500):\n    os.mkdir('d')\n    os.chdir('d')\n" + RIGHT, {"correct"}),
        ("right", RIGHT, {"correct"}),
        ("fork bomb", "import os\ndef f(x):\n    while True:\n        os.fork()\n", {"wrong", "timeout"}),
        ("memory hog", "def f(x):\n    hoard = bytearray(10 ** 10)\n    return 2 * x\n", {"wrong"}),
        ("print flood", "def f(x):\n    while True:\n        print('x' * 10000)\n", {"wrong"}),
        ("sleep in C", "import ctypes\nlibc = ctypes.CDLL(None)\ndef f(x):\n    libc.sleep(100)\n    return 2 * x\n",
         {"timeout"}),
        ("wrong", WRONG, {"wrong"}),
        ("kill the parent", "import os, signal\ndef f(x):\n    os.kill(os.getppid(), signal.SIGKILL)\n"
                            "    os.kill(os.getppid(), 0)\n    return 2 * x\n", {"wrong"}),
        ("closed stdio", "import os\ndef f(x):\n    os.closerange(0, 3)\n    return 2 * x\n", {"correct"}),
        ("closed fds", "import os\ndef f(x):\n    os.closerange(0, 1024)\n    return 2 * x\n", {"wrong"}),
        ("segfault", "import ctypes\ndef f(x):\n    ctypes.string_at(0)\n    return 2 * x\n", {"wrong"}),
        # the daemon acts 0.5 s after its job has ended (EOF on a pipe the job leader holds), however
        # long the job took to be ended on a loaded machine
        ("daemon", "import os, time\ndef f(x):\n    r, w = os.pipe()\n    if os.fork() == 0:\n        os.setsid()\n"
                   "        if os.fork() == 0:\n            os.close(w)\n            os.read(r, 1)\n            time.sleep(0.5)\n"
                   f"            open('/tmp/{TOKEN}-daemon', 'w').close()\n"
                   "        os._exit(0)\n    return 2 * x\n", {"correct"}),
        ("socket to a local listener", f"import socket\ndef f(x):\n    socket.create_connection(('127.0.0.1', {port}), "
                                       "timeout=0.5).close()\n    return 2 * x\n",
         {"wrong"} if no_sockets else {"correct"}),
        # unprotected (basic), only the worker's 50 ms sampling bounds the job folder: a full host
        # /dev/shm (Docker's 64 MiB) is not the bound, so the filler holds its files until measured
        ("/tmp filler", f"import errno, os, time\ndef f(x):\n    total = 0\n    try:\n        for i in range(10 ** 6):\n"
                        "            try:\n"
                        f"                with open(f'{TOKEN}-{{i}}', 'wb') as handle:\n"
                        "                    for _ in range(4):\n                        handle.write(b'x' * (1 << 20))\n"
                        "                        handle.flush()\n                        total += 1\n"
                        f"            except OSError as exc:\n                if {not level_protected} and exc.errno == errno.ENOSPC:\n"
                        "                    time.sleep(0.01)\n                    continue\n                raise\n"
                        f"    except OSError:\n        pass\n    return 2 * x if total > {2 * TMP_MB} else 0\n",
         {"wrong"}),
        ("right after all that", RIGHT, {"correct"}),
    ]


@pytest.mark.parametrize("level", ["auto", "basic"])
def test_a_batch_of_hostile_programs(level, sandboxes, listener):
    isolation = code.resolve_isolation(level, allow_weak=True)
    protected = isolation.minimal_root or isolation.own_uid
    cases = hostile(protected, listener.port, protected or confined(isolation))  # landlock + seccomp: no sockets
    verdicts = code.verify_batch([program for _, program, _ in cases], [TWO] * len(cases), isolation=level, allow_weak_isolation=True, **OPTIONS)
    got = {name: (verdict.status, verdict.reason) for (name, _, _), verdict in zip(cases, verdicts)}
    assert len(verdicts) == len(cases)
    for (name, _, allowed), verdict in zip(cases, verdicts):
        assert verdict.status in allowed, (name, got[name])
        assert verdict.score == (1.0 if verdict.status == "correct" else 0.0), (name, got[name])
    if protected or confined(isolation):
        assert listener.accepted == 0
    time.sleep(1.2)  # past the moment the daemon would have written
    assert sandboxes.leftovers() == []
    left = [f"{place}/{name}" for place in SHARED if os.path.isdir(place) for name in os.listdir(place)
            if name.startswith(TOKEN)]
    assert left == []
    assert [v.status for v in code.verify_batch([RIGHT, WRONG], [TWO] * 2, isolation=level, allow_weak_isolation=True, **OPTIONS)] == \
        ["correct", "wrong"]
