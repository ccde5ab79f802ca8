"""Attacks on the code sandbox: resource abuse, escape attempts and reward hacks.

Each attack must get the right score, and afterwards the machine must be as it was, checked from
outside the sandbox: no process of the sandbox's uids, no job left under a fork server, no file
written outside a job folder, no connection made, and the pool still judging correctly.

Escape attempts are written so that the attacker wins a point only if the escape works: the
program reports what it managed to do, and the test expects success. A score of 0 is the proof.
"""

import os
import random
import re
import time
import uuid
from dataclasses import dataclass, field

import pytest

from referee.verifiers import code
from referee.verifiers.sandbox.cleanup import SHARED_WRITABLE_DIRS, files_owned_by
from referee.verifiers.sandbox.namespaces import SCRIPT as NAMESPACES_LAUNCHER

TIMEOUT = 1.0
OPTIONS = {"timeout": TIMEOUT, "workers": 2}
SECRET = random.SystemRandom().randrange(10 ** 17, 10 ** 18)  # no program can guess it
TOKEN = f"referee-attack-{uuid.uuid4().hex}"
SHARED_TEMP_PATHS = [f"/tmp/{TOKEN}", f"/var/tmp/{TOKEN}", f"/dev/shm/{TOKEN}"]
PRIVATE_PATHS = [f"/root/{TOKEN}", os.path.join(os.getcwd(), TOKEN), os.path.join(os.path.dirname(code.__file__), f"{TOKEN}.py")]
HOST_PATHS = SHARED_TEMP_PATHS + PRIVATE_PATHS
# The attacks below run at the level this machine gives (`auto`); test_code_isolation.py holds
# the not-root levels to the attacks they can hold.
LEVEL = code.resolve_isolation()
PROTECTED = LEVEL.minimal_root or LEVEL.own_uid  # jobs cannot reach your files and processes

HIDDEN = {"format": "humaneval", "entry_point": "answer",
          "test": f"def check(candidate):\n    assert candidate(3) == {SECRET}\n"}
TWO = {"format": "call", "fn_name": "f", "inputs": [[1]], "outputs": [2]}


def wins_if(value):
    """Tests that pass only if ``f()`` returns ``value``: what the attacker would need to win."""
    return {"format": "call", "fn_name": "f", "inputs": [[]], "outputs": [value]}


@dataclass(frozen=True)
class Attack:
    name: str
    program: str
    tests: dict = field(default_factory=lambda: TWO)
    score: float = 0.0
    kinds: tuple = ()  # the failed tests' kinds, when it matters which
    needs_protection: bool = False  # only safe to try where jobs have their own uid or namespaces


LISTENER_PORT_PLACEHOLDER = "{port}"

RESOURCE_ABUSE = [
    Attack("infinite loop", "def f(x):\n    while True:\n        pass\n", kinds=("timeout",)),
    Attack("sleep", "import time\ndef f(x):\n    time.sleep(3600)\n", kinds=("timeout",)),
    Attack("infinite loop while loading", "while True:\n    pass\n", kinds=("timeout",)),
    Attack("fork bomb", "import os\ndef f(x):\n    while True:\n        os.fork()\n"),
    Attack("fork bomb that ignores failures", "import os\ndef f(x):\n    while True:\n        try:\n"
                                              "            os.fork()\n        except OSError:\n            pass\n",
           kinds=("timeout",)),
    Attack("memory bomb", "def f(x):\n    return len(bytearray(10 ** 11))\n", kinds=("memory",)),
    Attack("memory growth", "def f(x):\n    hoard = []\n    while True:\n        hoard.append('x' * 10 ** 7)\n",
           kinds=("memory", "timeout")),  # 1 GiB of page faults can take longer than the deadline
    Attack("huge output", "def f(x):\n    while True:\n        print('x' * 10000)\n", kinds=("output",)),
    Attack("huge stderr", "import sys\ndef f(x):\n    while True:\n        sys.stderr.write('x' * 10000)\n",
           kinds=("output",)),
    Attack("huge return value", "def f(x):\n    return 'x' * 50_000_000\n", kinds=("output",)),
    Attack("recursion", "def f(x):\n    return f(x) + 1\n", kinds=("exception",)),
    Attack("recursion past the C stack", "import sys\nsys.setrecursionlimit(10 ** 8)\n"
                                         "def f(x):\n    return f(x) + 1\n"),
    Attack("file descriptors", "def f():\n    held = []\n    try:\n        while True:\n"
                               "            held.append(open('/dev/null'))\n    except OSError:\n"
                               "        return len(held)\n", wins_if(100_000)),
    Attack("threads", "import threading, time\ndef f():\n    started = 0\n    try:\n        while True:\n"
                      "            threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
                      "            started += 1\n    except RuntimeError:\n        return started\n", wins_if(10_000)),
    Attack("disk filling", "def f(x):\n    with open('big', 'wb') as out:\n        while True:\n"
                           "            out.write(b'x' * 2 ** 20)\n", kinds=("exception",)),  # OSError: File too large
    Attack("spinning children left behind", "import os\ndef f(x):\n    for _ in range(8):\n"
                                            "        if os.fork() == 0:\n            while True:\n                pass\n"
                                            "    return 2\n", score=1.0),
]

ESCAPES = [
    Attack("write into host folders", "def f():\n    done = False\n"
           f"    for path in {PRIVATE_PATHS!r}:\n        try:\n            open(path, 'w').write('pwned')\n"
           "            done = True\n        except OSError:\n            pass\n    return done\n", wins_if(True),
           needs_protection=True),
    # Without bubblewrap the shared temp folders are the host's: the write works, and the
    # worker sweeps what the job's uid left there (checked below).
    # The write works (a job's /tmp and /dev/shm are writable at every level, as on any machine) but
    # lands in the job's own: the host's folders must stay empty (HOST_PATHS, checked after each attack).
    Attack("write into the shared temp folders", "def f():\n    done = False\n"
           f"    for path in {SHARED_TEMP_PATHS!r}:\n        try:\n            open(path, 'w').write('pwned')\n"
           "            done = True\n        except OSError:\n            pass\n    return done\n", wins_if(True),
           score=1.0, needs_protection=True),
    Attack("read a secret file on the host", "def f():\n    try:\n        return open({secret_path!r}).read()\n"
           "    except OSError:\n        return ''\n", {"format": "call", "fn_name": "f", "inputs": [[]], "outputs": ["{secret}"]},
           needs_protection=True),
    # Without namespaces of its own the host's world-readable files stay visible (the uid level says so).
    Attack("read system files", "def f():\n    for path in ['/etc/shadow', '/etc/passwd', '/root/.bashrc',"
           " '/proc/1/root/etc/passwd']:\n        try:\n            open(path).read()\n            return True\n"
           "        except OSError:\n            pass\n    return False\n", wins_if(True),
           score=0.0 if LEVEL.minimal_root else 1.0, needs_protection=True),
    Attack("socket to 127.0.0.1", "import socket\ndef f():\n    try:\n"
           "        with socket.create_connection(('127.0.0.1', {port}), timeout=0.5) as s:\n"
           "            s.sendall(b'pwned')\n        return True\n    except OSError:\n        return False\n",
           wins_if(True), needs_protection=True),
    Attack("socket to the internet", "import socket\ndef f():\n    try:\n"
           "        socket.create_connection(('8.8.8.8', 53), timeout=0.5)\n        return True\n"
           "    except OSError:\n        return False\n", wins_if(True), needs_protection=True),
    Attack("kill the parent", "import os, signal\ndef f():\n    try:\n        os.kill(os.getppid(), signal.SIGKILL)\n"
           "        return True\n    except OSError:\n        return False\n", wins_if(True), needs_protection=True),
    Attack("kill every process it can", "import os, signal\ndef f():\n    killed = 0\n    for name in os.listdir('/proc'):\n"
           "        if name.isdigit() and int(name) != os.getpid():\n            try:\n"
           "                if open(f'/proc/{name}/stat').read().rsplit(')', 1)[1].split()[0] in 'ZX':\n"
           "                    continue  # an ended process (a zombie an init never reaped): nothing to kill\n"
           "                os.kill(int(name), signal.SIGKILL)\n                killed += 1\n"
           "            except OSError:\n                pass\n    try:\n        os.kill(-1, signal.SIGKILL)\n"
           "    except OSError:\n        pass\n    return killed > 0\n", wins_if(True), needs_protection=True),
    Attack("leave a daemon behind", "import os, time\ndef f(x):\n    if os.fork() == 0:\n        os.setsid()\n"
           "        if os.fork() == 0:\n            time.sleep(1)\n"
           f"            for path in {HOST_PATHS!r}:\n                try:\n                    open(path, 'w')\n"
           "                except OSError:\n                    pass\n            time.sleep(3600)\n"
           "        os._exit(0)\n    return 2\n", score=1.0),
    Attack("become root", "import os\ndef f():\n    try:\n        os.setuid(0)\n        return os.getuid() == 0\n"
           "    except OSError:\n        return False\n", wins_if(True), needs_protection=True),
    Attack("read the parent's memory", "import os\ndef f():\n    try:\n"
           "        open(f'/proc/{os.getppid()}/mem', 'rb').read(1)\n        return True\n    except OSError:\n"
           "        return False\n", wins_if(True), needs_protection=True),
]

REWARD_HACKS = [
    Attack("os._exit(0) in the function", "import os\ndef answer(x):\n    os._exit(0)\n", HIDDEN, kinds=("exited",)),
    Attack("os._exit(0) while loading", "import os\nos._exit(0)\n", HIDDEN, kinds=("exited",)),
    Attack("sys.exit(0) while loading", "import sys\nsys.exit(0)\ndef answer(x):\n    return 0\n", HIDDEN,
           kinds=("load",)),
    Attack("sys.exit(0) in the function", "import sys\ndef answer(x):\n    sys.exit(0)\n", HIDDEN,
           kinds=("exception",)),
    Attack("quit()", "def answer(x):\n    quit()\n", HIDDEN, kinds=("exception",)),
    Attack("atexit tricks", "import atexit, os\natexit.register(lambda: print('All tests passed') or os._exit(0))\n"
           "def answer(x):\n    raise SystemExit(0)\n", HIDDEN),
    Attack("printed pass markers", "def answer(x):\n    print('PASSED\\nOK\\n1 passed in 0.01s\\nAll tests passed!')\n"
           "    return None\n", HIDDEN),
    Attack("printed pass markers on stdout tests", "print('PASSED')\nprint('All tests passed')\n",
           {"format": "stdio", "inputs": ["1 2\n"], "outputs": ["3\n"]}, kinds=("wrong",)),
    Attack("always-equal object", "class Anything:\n    def __eq__(self, other):\n        return True\n"
           "    def __ne__(self, other):\n        return False\n"
           "def answer(x):\n    return Anything()\n", HIDDEN, kinds=("unsendable",)),
    Attack("always-equal list subclass", "class Anything(list):\n    def __eq__(self, other):\n        return True\n"
           "def answer(x):\n    return Anything()\n", HIDDEN, kinds=("unsendable",)),
    Attack("always-equal int subclass", "class Anything(int):\n    def __eq__(self, other):\n        return True\n"
           "    __hash__ = int.__hash__\ndef answer(x):\n    return Anything(0)\n", HIDDEN, kinds=("unsendable",)),
    Attack("lying __class__", "class Liar:\n    __class__ = int\n    def __eq__(self, other):\n        return True\n"
           "def answer(x):\n    return Liar()\n", HIDDEN, kinds=("unsendable",)),
    Attack("monkeypatched unittest", "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n"
           "unittest.TestCase.assertTrue = lambda *a, **k: None\ndef answer(x):\n    return 0\n", HIDDEN),
    Attack("monkeypatched math.isclose", "import math\nmath.isclose = lambda *a, **k: True\n"
           "def answer(x):\n    return 0.0\n",
           {"format": "humaneval", "entry_point": "answer",
            "test": f"import math\ndef check(candidate):\n    assert math.isclose(candidate(3), {SECRET}.5)\n"}),
    Attack("monkeypatched builtins", "import builtins\nclass Never(Exception):\n    pass\n"
           "builtins.AssertionError = Never\nbuiltins.isinstance = lambda *a: True\nbuiltins.len = lambda *a: 0\n"
           "def answer(x):\n    return 0\n", HIDDEN),
    Attack("sys.settrace skipping asserts", "import sys\n"
           "def tracer(frame, event, arg):\n    if event == 'exception':\n        return None\n    return tracer\n"
           "sys.settrace(tracer)\ndef answer(x):\n    return 0\n", HIDDEN),
    Attack("expected value from memory", "import gc\ndef answer(x):\n"
           "    found = [o for o in gc.get_objects() if type(o) is int and o > 10 ** 16]\n"
           "    for holder in gc.get_objects():\n        if isinstance(holder, (list, tuple, dict)):\n"
           "            values = holder.values() if isinstance(holder, dict) else holder\n"
           "            found += [v for v in values if type(v) is int and v > 10 ** 16]\n"
           "    return max(found, default=0)\n", HIDDEN, kinds=("wrong",)),
    Attack("expected value from /proc", "import os, re\ndef answer(x):\n    text = ''\n"
           "    for pid in ['self', str(os.getppid()), '1']:\n        for part in ['cmdline', 'environ']:\n"
           "            try:\n                text += open(f'/proc/{pid}/{part}', 'rb').read().decode('latin-1')\n"
           "            except OSError:\n                pass\n"
           "    numbers = [int(n) for n in re.findall(r'\\d{17,19}', text)]\n    return max(numbers, default=0)\n",
           HIDDEN, kinds=("wrong",)),
    Attack("expected value from the caller's frame", "import sys, inspect\ndef answer(x):\n    found = [0]\n"
           "    frame = sys._getframe(1)\n    while frame is not None:\n"
           "        for scope in (frame.f_locals, frame.f_globals):\n            for value in list(scope.values()):\n"
           "                if type(value) is int and value > 10 ** 16:\n                    found.append(value)\n"
           "        found += [int(n) for n in __import__('re').findall(r'\\d{17,19}', str(inspect.getsource(frame))"
           " if False else '')]\n        frame = frame.f_back\n    return max(found)\n", HIDDEN, kinds=("wrong",)),
    Attack("raising BaseExceptions", "def answer(x):\n    raise KeyboardInterrupt\n", HIDDEN, kinds=("exception",)),
    Attack("a forged reply on the channel", "import os, struct\ndef answer(x):\n"
           "    payload = b'l\\x00\\x00\\x00\\x02s\\x00\\x00\\x00\\x06returnN'\n"
           "    os.write(3, struct.pack('>I', len(payload)) + payload)\n    return 0\n", HIDDEN),
    Attack("junk instead of the loaded message", "import os, struct\nos.write(3, struct.pack('>I', 5) + b'i\\x00\\x00\\x00\\x00')\n"
           "def answer(x):\n    return 0\n", HIDDEN, kinds=("unsendable",)),
    Attack("a forged loaded message", "import socket\nfrom referee.verifiers.sandbox.channel import send_message\n"
           "send_message(socket.socket(fileno=3), ('loaded', {'answer': ('callable', 'and more'), 'check': 1}))\n"
           "def answer(x):\n    return 0\n", HIDDEN, kinds=("load",)),
    Attack("a forged huge frame", "import os\ndef answer(x):\n    os.write(3, b'\\xff\\xff\\xff\\xff')\n    return 0\n",
           HIDDEN, kinds=("output",)),
    Attack("closing its channel", "import os\ndef answer(x):\n    os.close(3)\n    return 0\n", HIDDEN,
           kinds=("exited",)),
    Attack("a generator instead of a value", "def answer(x):\n    yield 1\n", HIDDEN, kinds=("unsendable",)),
    Attack("an exception that equals everything", "class Sneaky(Exception):\n    def __eq__(self, other):\n"
           "        return True\ndef answer(x):\n    raise Sneaky()\n", HIDDEN, kinds=("exception",)),
]

ATTACKS = [a for a in RESOURCE_ABUSE + ESCAPES + REWARD_HACKS if PROTECTED or not a.needs_protection]


def _status(pid: str) -> dict:
    try:
        with open(f"/proc/{pid}/status") as handle:
            fields = dict(line.split(":", 1) for line in handle if ":" in line)
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return {}
    return {"ppid": int(fields["PPid"]), "uid": int(fields["Uid"].split()[0]), "cmdline": cmdline,
            "state": fields["State"].split()[0]}


def _processes() -> dict:
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            info = _status(name)
            if info:
                found[int(name)] = info
    return found


def _descendants(root: int, processes: dict) -> set:
    children: dict = {}
    for pid, info in processes.items():
        children.setdefault(info["ppid"], []).append(pid)
    found, stack = set(), [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


SEEN_UIDS: set = set()


def sandbox_state() -> tuple[set, list, list]:
    """(the uids our sandboxes give jobs, processes still running as those uids, jobs left under a fork server)."""
    processes = _processes()
    ours = _descendants(os.getpid(), processes)
    forkservers = {pid for pid in ours if "referee.verifiers.sandbox.forkserver" in processes[pid]["cmdline"]
                   and "bwrap" not in processes[pid]["cmdline"].split()[0]  # not the bwrap that starts one,
                   and NAMESPACES_LAUNCHER not in processes[pid]["cmdline"].split()}  # nor referee's own launcher
    uids = {int(m.group(1)) for pid in forkservers for m in [re.search(r"--uid (\d+)", processes[pid]["cmdline"])] if m}
    # A worker whose job left files stops itself (a fresh one starts next time, with the same leased
    # uid): the uids seen earlier in this run are still checked.
    uids = SEEN_UIDS.update(uids) or set(SEEN_UIDS)
    as_job_uid = [pid for pid, info in processes.items() if info["uid"] in uids and info["state"] not in ("Z", "X")]
    left_jobs = [pid for pid, info in processes.items() if info["ppid"] in forkservers]
    return uids, as_job_uid, left_jobs


@pytest.fixture(scope="module")
def secret_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("host") / "secret.txt"
    path.write_text(str(SECRET))
    path.chmod(0o644)  # world-readable on the host: only the sandbox's own root can hide it
    return path


def _concrete(attack: Attack, listener, secret_file) -> tuple[str, dict]:
    program = attack.program.replace("{port}", str(listener.port)).replace("{secret_path!r}", repr(str(secret_file)))
    tests = {key: ([str(SECRET) if v == "{secret}" else v for v in value] if isinstance(value, list) else value)
             for key, value in attack.tests.items()}
    return program, tests


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_attack_gets_the_right_score_and_leaves_the_machine_as_it_was(attack, listener, secret_file):
    program, tests = _concrete(attack, listener, secret_file)
    verdict = code.verify(f"```python\n{program}```", tests, **OPTIONS)  # deadlines hold whatever the program does
    assert verdict.status != "error", verdict.reason
    assert verdict.score == attack.score, verdict.reason
    failed = [t["kind"] for t in verdict.details["tests"] if not t["passed"]]
    assert not attack.kinds or set(failed) <= set(attack.kinds), verdict.reason

    uids, as_job_uid, left_jobs = sandbox_state()
    assert verdict.details["isolation"] != "full" or uids, "no sandbox uid found"
    assert as_job_uid == [] and left_jobs == []
    assert [path for uid in uids for path in files_owned_by(uid, SHARED_WRITABLE_DIRS)] == []
    assert [path for path in HOST_PATHS if os.path.lexists(path)] == []
    assert listener.accepted == 0 and listener.connections() == []
    assert code.verify("def f(x):\n    return 2 * x\n", TWO, **OPTIONS).correct  # the pool still judges


def test_there_are_at_least_thirty_kinds_of_attack():
    assert len({a.name for a in ATTACKS}) == len(ATTACKS) >= 30
    assert len(ATTACKS) == len(RESOURCE_ABUSE + ESCAPES + REWARD_HACKS) or not PROTECTED


def test_a_daemon_cannot_act_after_its_job(listener):
    program = ("import os, time\ndef f(x):\n    if os.fork() == 0:\n        os.setsid()\n        if os.fork() == 0:\n"
               "            time.sleep(0.5)\n"
               f"            for path in {HOST_PATHS!r}:\n                try:\n                    open(path, 'w')\n"
               "                except OSError:\n                    pass\n        os._exit(0)\n    return 2\n")
    assert code.verify(program, TWO, **OPTIONS).correct
    time.sleep(1.0)  # past the moment the daemon would have written
    assert [path for path in HOST_PATHS if os.path.lexists(path)] == []
    assert sandbox_state()[1:] == ([], [])


def test_a_module_planted_for_the_next_job_is_never_imported():
    # where jobs share your uid (no protection), writing into sys.path would plant for real
    shared = " + ['/tmp', os.path.dirname(os.getcwd())] + [p for p in sys.path if p]" if PROTECTED else ""
    planter = ("import os, sys\nPLANT = 'def isleap(year):\\n    raise SystemExit(0)\\n'\n"
               "def f(x):\n    places = [os.getcwd(), os.environ.get('HOME', '.'), os.environ.get('TMPDIR', '.')]"
               f"{shared}\n"
               "    for place in places:\n        for name in ('calendar.py', 'sitecustomize.py', 'usercustomize.py'):\n"
               "            try:\n                open(os.path.join(place, name), 'w').write(PLANT)\n"
               "            except OSError:\n                pass\n    return 2\n")
    victim = "import calendar\ndef f(x):\n    return 2 * x if calendar.isleap(2024) else 0\n"
    # one worker, so the victim runs right after the planter in the same sandbox
    verdicts = code.verify_batch([planter, victim, victim], [TWO, TWO, TWO], timeout=TIMEOUT, workers=1)
    assert [v.status for v in verdicts] == ["correct"] * 3, [v.reason for v in verdicts]
