"""The hostile corpus as cells of :class:`referee.rewards.tools.PythonTool` rollouts, the way GRPO
with ``environment_factory`` would feed them: the judge's hostile programs
(test_hostile_programs.py), the attacks on the caller of hostile_as_user.py and
test_confined_levels.py, and cells that wreck their own process or the session's channel.

For each program, at each level: ``python()`` answers a str and never raises; nothing of the
trainer (this test process, and a child "trainer" with ``HF_TOKEN`` in its environment and a token
in its memory) is read, written or signalled; a cell that ends, stops or floods its process is
reported by its ``CellResult`` flags, and the next cell says it runs in a restarted session (and
only then are its variables gone); after ``reset()`` the next rollout finds none of the last one's
variables, files, environment or modules; after ``_close()`` no sandbox process is left.

Hostile cells run only at levels where a job cannot reach this machine's processes: a pid
namespace or a throwaway uid (test_hostile_native.guarded) and nothing exposed
(test_cell_session's ``_guarded``: ``exposures()`` empty). As root without one of them, a cell's
``kill(-1, 9)`` would end every process here.

Not asserted here, because they do not hold today: SysV IPC objects (``shmget``, ``msgget``) a
rollout makes outlive ``reset()`` at every level (at ``uid`` in the host's IPC namespace, after
``_close()`` too); at ``namespaces`` files in the sandbox's /tmp and /dev/shm outlive ``reset()``,
and a cell can write the fork server's memory (its jobs keep the worker's uid), which every later
rollout of that tool is forked from.
"""

import importlib.util
import os
import platform
import secrets
import select
import shutil
import socket
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from referee.rewards.tools import PythonTool

HERE = Path(__file__).resolve().parent


def _load(path: Path):
    """A sibling module's helpers (``--import-mode=importlib`` puts no test folder on ``sys.path``)."""
    spec = importlib.util.spec_from_file_location(f"referee_tool_cells_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PROGRAMS = _load(HERE / "test_hostile_programs.py")  # the judge's batch of hostile programs
AS_USER = _load(HERE / "hostile_as_user.py")  # reads of the caller's secrets, signals, the trainer
CONFINED = _load(HERE / "test_confined_levels.py")  # probes that print DONE or REFUSED per attempt
NATIVE = _load(HERE / "test_hostile_native.py")  # guarded(): a pid namespace or a throwaway uid
CELLS = _load(HERE.parent / "verifiers" / "test_cell_session.py")  # _guarded(), _sandbox_processes()
CellLimits, RESTARTED = CELLS.CellLimits, CELLS.RESTARTED  # from where the session's own tests take them

GUARDED_LEVELS = [level for level in CELLS.GUARDED_LEVELS if NATIVE.guarded(level)]
TOKEN = f"referee-toolcell-{secrets.token_hex(6)}"  # in every name a cell or the caller makes
LIMITS = CellLimits(timeout=1.0, cpu_seconds=1.0, memory_mb=256, output_chars=4000, tmp_mb=PROGRAMS.TMP_MB)
AFTER = "('planted_state' in globals(), 6 * 7)"  # the session's variables are kept unless it restarted
PREFIXES = ("referee-planted-", PROGRAMS.TOKEN, TOKEN)  # what a rollout, the corpus or this test leaves

pytestmark = pytest.mark.skipif(not GUARDED_LEVELS, reason="no isolation level here guards the caller")


# --- the caller ------------------------------------------------------------------------------


class Caller:
    """What the trainer has that a cell must not reach: secrets in a home folder of ours (a key, a
    hub token, an answer key), one in this process's environment, a child "trainer" with
    ``HF_TOKEN`` in its environment and a token in its memory, places a cell must not write,
    and unix sockets (a path and an abstract name) that count their connections."""

    def __init__(self) -> None:
        self.tokens = {key: secrets.token_hex(12) for key in ("ssh", "hub", "env", "memory", "answers", "process")}
        self.home = os.path.join(os.path.expanduser("~"), f"{TOKEN}-home")
        self.world = tempfile.mkdtemp(prefix="referee-toolcell-world-")  # world-writable, on the host
        self.state = tempfile.mkdtemp(prefix="referee-toolcell-state-")
        self.site_packages = sysconfig.get_paths()["purelib"]
        self.targets = [os.path.join(os.path.expanduser("~"), f"{TOKEN}-w"), os.path.join(os.getcwd(), f"{TOKEN}-w"),
                        f"/tmp/{TOKEN}-w", f"/var/tmp/{TOKEN}-w", f"/dev/shm/{TOKEN}-w",
                        os.path.join(self.site_packages, f"{TOKEN}-w.pth"),
                        os.path.join(self.site_packages, f"{TOKEN}.pth"),
                        os.path.join(os.path.dirname(AS_USER.code.__file__), f"{TOKEN}-w")]
        self.setup = {"home": self.home, "token": TOKEN, "secrets": self.tokens,
                      "paths": {"answers": f"{self.home}/srv/answers.json", "drop": f"{self.home}/drop",
                                "site_packages": self.site_packages}}
        self.trainer = None
        self.sockets: list[socket.socket] = []
        self.accepted = {"unix": 0, "abstract": 0}

    def start(self) -> None:
        os.chmod(self.world, 0o777)
        os.chmod(self.state, 0o755)
        files = {".ssh/id_rsa": self.tokens["ssh"], ".cache/huggingface/token": self.tokens["hub"],
                 "data/answers.json": self.tokens["answers"], "data/answers.jsonl": self.tokens["answers"],
                 "srv/answers.json": self.tokens["answers"], ".bashrc": "# the trainer's"}
        for relative, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(self.home, relative)), exist_ok=True)
            with open(os.path.join(self.home, relative), "w") as out:
                out.write(text)
        os.makedirs(f"{self.home}/drop")
        os.chmod(f"{self.home}/drop", 0o1777)
        os.environ["REFEREE_TOOL_SECRET"] = self.tokens["process"]
        self.trainer = AS_USER.start_trainer(self.setup)  # HF_TOKEN=tokens["env"], tokens["memory"] in memory
        for kind, address in (("unix", f"{self.state}/trainer.sock"), ("abstract", f"\0{TOKEN}-trainer")):
            server = socket.socket(socket.AF_UNIX)
            server.bind(address)
            if kind == "unix":
                os.chmod(address, 0o777)
            server.listen(16)
            self.sockets.append(server)
            threading.Thread(target=self._serve, args=(server, kind), daemon=True).start()
        self.before = self.listing()

    def _serve(self, server: socket.socket, kind: str) -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            self.accepted[kind] += 1
            connection.close()

    def listing(self) -> dict[str, str]:
        """Every file of the home and the world-writable folder, with its content."""
        found = {}
        for top in (self.home, self.world):
            for folder, _, names in os.walk(top):
                for name in names:
                    with open(os.path.join(folder, name), errors="replace") as handle:
                        found[os.path.join(folder, name)] = handle.read()
        return found

    @property
    def all_secrets(self) -> list[str]:
        return list(self.tokens.values())

    def fill(self, program: str, port: int) -> str:
        """A corpus program with this caller's trainer pid, port and paths in it."""
        return (program.replace("{trainer}", str(self.trainer.pid)).replace("{port}", str(port))
                .replace("\\0referee-confined-trainer", f"\\0{TOKEN}-trainer"))

    def assert_untouched(self) -> None:
        """Alive, not stopped, nothing of ours changed, nothing written where a cell must not write."""
        assert AS_USER.running(self.trainer), "the trainer was killed or stopped"
        assert os.environ["REFEREE_TOOL_SECRET"] == self.tokens["process"]
        assert self.listing() == self.before
        assert [path for path in self.targets if os.path.exists(path)] == []
        assert self.accepted == {"unix": 0, "abstract": 0}

    def close(self) -> None:
        for server in self.sockets:
            server.close()
        if self.trainer is not None:
            self.trainer.kill()
            self.trainer.wait()
        os.environ.pop("REFEREE_TOOL_SECRET", None)
        for path in self.targets:
            if os.path.exists(path):
                os.remove(path)
        for folder in (self.home, self.world, self.state):
            shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def caller():
    made = Caller()
    try:
        made.start()
        yield made
    finally:
        made.close()


# --- the corpus as cells ---------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One hostile cell: ``code(caller, port)``; ``check(result, isolation)``, asserting on its
    CellResult; ``restarts(result, isolation)``, whether the next cell must say it runs in a
    restarted session (``None``: either, e.g. where a cell may or may not have taken its worker
    down; not given: exactly when the cell was killed or stopped); ``ends_later``: the cell leaves
    something that ends its process after it answered (the test waits for that before the next
    cell); ``settle``: seconds to wait after the next ``reset`` before looking for what the cell
    left (something that would act once its job ended); ``desynced``: the cell wrote replies of its own
    into its channel, so the rest of its rollout may be answered out of step."""

    code: Callable[[Caller, int], str]
    check: Callable[[Any, Any], None]
    restarts: Callable[[Any, Any], bool | None] | None = None
    ends_later: bool = False
    settle: float = 0.0
    desynced: bool = False


def _prints(value):
    def check(result, isolation):
        assert result.ok and result.text == value, (result, value)
    return check


def _bounded(result):
    assert len(result.text) < LIMITS.output_chars + 500, len(result.text)


def _stopped(result, isolation):
    """Ended by its wall clock or its CPU limit, and what it printed is capped."""
    assert (result.timeout or result.killed) and not result.ok, result
    _bounded(result)


def _timeout(result, isolation):
    assert result.timeout and not result.ok and "did not finish within 1 s" in result.text, result


def _killed(*words):
    def check(result, isolation):
        assert result.killed and not result.timeout and not result.ok, result
        assert all(word in result.text for word in words), (result, words)
    return check


def _raises(name=""):
    def check(result, isolation):
        assert result.error and not result.killed and result.text.splitlines()[-1].startswith(name), result
    return check


def _self_sigkill(result, isolation):
    """A SIGKILL the worker did not send, within the CPU limit, reads as one from outside (the OOM
    killer, an operator): forkserver.killed_from_outside cannot tell a job that sent it itself."""
    assert not result.ok and (result.killed or result.sandbox_failed) and "SIGKILL" in result.text, result


def _failed(result, isolation):
    assert not result.ok, result


def _anything(result, isolation):
    """What the cell shows does not matter: the caller, checked after every cell, does."""


def _not_two(result, isolation):
    assert result.text.splitlines()[-1] != "2", result  # 2 is what f returns once its attack worked


def _nothing_read(result, isolation):
    assert not result.ok or result.text == "''", result  # '': f read nothing


def _huge_value(result, isolation):
    assert result.ok and result.truncated, result
    _bounded(result)


def _worker_attack(result, isolation):
    """A cell that signals its parent, the sandbox's worker: refused where the job has an uid of its
    own; where it keeps the worker's uid (in their pid namespace) it may take the worker, and the job
    with it, down: the caller is what must hold there."""
    if isolation.own_uid:
        assert result.error and "PermissionError" in result.text, result


def _worker_may_go(result, isolation):
    return (result.killed or result.timeout) if isolation.own_uid else None


def _no_done(allowed=()):
    def check(result, isolation):
        done = [line for line in result.text.splitlines() if " DONE " in line and not line.startswith(allowed)]
        assert done == [], result.text
    return check


def _judge(name):
    """A program of the judge's corpus (it defines ``f``) as a cell that shows ``f(1)``."""
    def code(caller, port):
        [program] = [program for found, program, _ in PROGRAMS.hostile(True, port, True) if found == name]
        return program + "\nf(1)\n"
    return code


# What the judge's programs do as cells: those the judge must find correct print 2 (harmless, or
# an attack that only the judge's cleanup can stop: the daemon); the others never show 2. A
# program the corpus adds later gets that check alone.
JUDGE = {
    "fork bomb": (_failed, None),  # fork refused past the process limit (an own uid), else the wall clock
    "memory hog": (_raises("MemoryError"), None),
    "print flood": (_stopped, None),
    "sleep in C": (_timeout, None),
    "wrong": (_prints("3"), None),
    "kill the parent": (_worker_attack, _worker_may_go),
    "closed fds": (_killed(), None),  # its channel is closed with the rest: the session cannot answer
    "segfault": (_killed("SIGSEGV"), None),
    "socket to a local listener": (_raises(), None),  # no network: refused
    "/tmp filler": (_prints("0"), None),  # the private /tmp (tmp_mb) filled up, no more
}
JUDGE_SETTLE = {"daemon": 1.2}  # its job ends at the next reset; it would write 0.5 s after

SIGNALS = CONFINED.PROBE + """import signal
attempt('kill the test process', lambda: os.kill({me}, signal.SIGKILL))
attempt('kill its process group', lambda: os.killpg(os.getpgid({me}), signal.SIGKILL))
attempt('stop the trainer', lambda: os.kill({trainer}, signal.SIGSTOP))
attempt('pidfd kill the trainer', lambda: signal.pidfd_send_signal(os.pidfd_open({trainer}), signal.SIGKILL))
attempt('tgkill the trainer', lambda: c_call(ctypes.CDLL(None, use_errno=True).tgkill({trainer}, {trainer}, 9)))
""" + ("attempt('raw kill syscall', lambda: c_call(ctypes.CDLL(None, use_errno=True).syscall(62, {trainer}, 9)))\n"
       if platform.machine() == "x86_64" else "")
STRAY_REPLY = ("import os, socket, sys\n"  # the job's own framing code, wherever the package keeps it
               "[send] = {m.send_message for n, m in list(sys.modules.items()) if n.endswith('.channel')}\n"
               "send(socket.socket(fileno=os.dup(3)), ('cell', 'forged', 0, ''))\n'real'\n")


def _as_user(name):
    """An attack of hostile_as_user.py (a program that defines ``f``) as a cell that shows ``f(1)``."""
    def code(caller, port):
        attacks = {attack: program for attack, program, _ in AS_USER.reads(caller.setup, caller.trainer.pid)}
        attacks |= {attack: program for attack, program, _ in AS_USER.writes(caller.setup)}
        attacks |= {attack: program(caller.trainer.pid) for attack, program in AS_USER.SIGNALS}
        return attacks[name] + "\nf(1)\n"
    return code


def _confined(name):
    """A probe of test_confined_levels.py (it prints DONE or REFUSED per attempt) as a cell."""
    return lambda caller, port: caller.fill(CONFINED.hostile(caller.home, caller.world, caller.state)[name], port)


def _cases() -> dict[str, Case]:
    cases = {}
    for name, _, allowed in PROGRAMS.hostile(True, 0, True):
        check, restarts = JUDGE.get(name, (_prints("2") if "correct" in allowed else _not_two, None))
        cases[f"judge: {name}"] = Case(_judge(name), check, restarts, settle=JUDGE_SETTLE.get(name, 0.0))
    # the caller: its files, environment, memory, processes and sockets; nothing may be read, written or signalled
    for name in ("read ~/.ssh/id_rsa", "read the hub token file", "HF_TOKEN in the job's environment",
                 "HF_TOKEN from /proc/<trainer>/environ", "HF_TOKEN from every /proc/*/environ",
                 "a token from /proc/<trainer>/mem", "answer key in a host folder", "answer key in the home"):
        cases[f"caller: {name}"] = Case(_as_user(name), _nothing_read)
    for name in ("write into the home", "plant a .pth in the venv", "write into a world-writable host folder",
                 "SIGKILL to the trainer's pid"):
        cases[f"caller: {name}"] = Case(_as_user(name), _not_two)
    for name in ("os.kill(-1, SIGKILL)", "SIGSTOP to -1"):  # all a job's uid reaches in its pid namespace
        cases[f"caller: {name}"] = Case(_as_user(name), _anything, _worker_may_go)
    cases["caller: secrets in the home, probed"] = Case(_confined("home"), _no_done())
    cases["caller: the trainer's /proc, ptrace, process_vm_readv"] = Case(_confined("proc"), _no_done(("cmdline",)))
    cases["caller: writes, probed"] = Case(_confined("writes"), _no_done())
    # a datagram may go into the sandbox's own empty network; the caller's sockets count what reaches them
    cases["caller: tcp, udp, unix and abstract sockets"] = Case(_confined("network"), _no_done(("udp",)))
    cases["caller: signals to the test process and the trainer"] = Case(
        lambda caller, port: caller.fill(SIGNALS.replace("{me}", str(os.getpid())), port), _no_done())
    cases["caller: reads and writes of test_cell_session"] = Case(
        lambda caller, port: CELLS._reads(["/etc/shadow", f"{caller.home}/.ssh/id_rsa", "/proc/1/environ",
                                           f"/proc/{os.getpid()}/environ"])
        + "".join(f"try:\n    open({path!r}, 'w').write('x')\nexcept OSError as exc:\n    print(type(exc).__name__)\n"
                  for path in caller.targets), _anything)
    cases["works: tempfile, asyncio, pipe, fork"] = Case(_confined("works"), _works)  # the guards leave these
    # a cell that wrecks its own process: its flags say how, and the next cell that it restarted
    cases["self: os._exit"] = Case(lambda caller, port: "import os\nos._exit(3)\n", _killed("exited (code 3)"))
    cases["self: SIGKILL itself"] = Case(
        lambda caller, port: "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", _self_sigkill)
    cases["self: SIGSTOP itself"] = Case(
        lambda caller, port: "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)\n", _timeout)
    cases["self: abort"] = Case(lambda caller, port: "import os\nos.abort()\n", _killed("SIGABRT"))
    cases["self: endless loop"] = Case(lambda caller, port: "while True:\n    pass\n", _stopped)
    cases["self: recursion in C"] = Case(lambda caller, port: "import sys\nsys.setrecursionlimit(10 ** 8)\nx = []\n"
                                         "for _ in range(10 ** 6):\n    x = [x]\nrepr(x)\n", _failed)
    cases["self: memory, 16 MiB at a time"] = Case(
        lambda caller, port: "hoard = []\nwhile True:\n    hoard.append(bytearray(1 << 24))\n", _raises("MemoryError"))
    cases["self: file descriptors"] = Case(
        lambda caller, port: "held = []\nwhile True:\n    held.append(open('/dev/null'))\n", _raises("OSError"))
    cases["self: a thread ends the process after the cell"] = Case(
        lambda caller, port: "import os, threading, time\n"
                             "threading.Thread(target=lambda: (time.sleep(0.1), os._exit(1)), daemon=True).start()\n"
                             "'left'\n", _prints("'left'"), lambda result, isolation: True, ends_later=True)
    cases["self: a child that stays"] = Case(
        lambda caller, port: "import os, time\nif os.fork() == 0:\n    os.setsid()\n    while True:\n"
                             "        time.sleep(0.1)\n'forked'\n", _prints("'forked'"))
    cases["self: a 50 MB value"] = Case(lambda caller, port: "'y' * (50 * 10 ** 6)\n", _huge_value)
    cases["self: floods its file descriptors"] = Case(
        lambda caller, port: "import os\nwhile True:\n    os.write(1, b'z' * 65536)\n", _stopped)
    # the session's channel (fd 3): garbage, a length no reader takes, a shut channel, a reply of its own
    cases["channel: garbage"] = Case(
        lambda caller, port: "import os, time\nos.write(3, b'\\x00\\x00\\x00\\x05junk!')\ntime.sleep(0.5)\n",
        _killed("malformed"))
    cases["channel: a 2 GiB length"] = Case(
        lambda caller, port: "import os, time\nos.write(3, (1 << 31).to_bytes(4, 'big'))\ntime.sleep(0.5)\n",
        _killed("malformed"))
    cases["channel: shut"] = Case(
        lambda caller, port: "import os, socket\nsocket.socket(fileno=os.dup(3)).shutdown(socket.SHUT_RDWR)\n",
        _killed())
    cases["channel: a reply of its own"] = Case(lambda caller, port: STRAY_REPLY, _prints("forged"), desynced=True)
    return cases


def _works(result, isolation):
    assert result.ok and " REFUSED " not in result.text and result.text.count(" DONE ") == 4, result.text


CASES = _cases()
# a cell that stops every process of its uid in its pid namespace stops the worker where jobs keep
# its uid ('namespaces'): the next reset waits for the worker's reply deadline (15 s), then starts a fresh one
SLOW = {("namespaces", "caller: SIGSTOP to -1")}


def _params():
    return [pytest.param(level, name, marks=[pytest.mark.slow] if (level, name) in SLOW else [], id=f"{level}-{name}")
            for level in GUARDED_LEVELS for name in CASES]


# --- the rollouts ----------------------------------------------------------------------------


def _probe_and_plant(token: str, shared: list[str], gone: list[str]) -> str:
    """A rollout's first cell: what it finds of an earlier rollout (variables, environment, modules,
    files in its folder, its home and ``shared``; the job folders ``gone``), then the state it leaves."""
    return f"""import builtins, json, os, sys
seen = ['variable'] * ('planted_state' in globals()) + ['environment'] * bool(os.environ.get('REFEREE_PLANTED'))
seen += ['module'] * ('referee_planted_module' in sys.modules) + ['builtins'] * hasattr(builtins, 'referee_planted')
seen += ['json.dumps'] * (json.dumps([1]) != '[1]') + ['sys.path'] * ('/referee-planted' in sys.path)
places = [os.getcwd(), os.path.expanduser('~'), *[place for place in {shared!r} if os.path.isdir(place)]]
for place in places:
    seen += [os.path.join(place, name) for name in os.listdir(place) if name.startswith({PREFIXES!r})]
seen += [folder for folder in {gone!r} if os.path.exists(folder) and folder != os.getcwd()]  # a fresh worker's job-1
print('seen', seen)
planted_state = {token!r}
os.environ['REFEREE_PLANTED'] = {token!r}
sys.modules['referee_planted_module'] = type(sys)('referee_planted_module')
builtins.referee_planted = {token!r}
json.dumps = lambda *args, **kwargs: 'patched'
sys.path.insert(0, '/referee-planted')
for place in places:
    with open(os.path.join(place, 'referee-planted-' + {token!r}), 'w') as out:
        out.write({token!r})
print('cwd', os.getcwd())
"""


class Rollouts:
    """A tool as TRL's ``environment_factory`` makes it, every call's text kept."""

    def __init__(self, level: str) -> None:
        self.tool = PythonTool.factory(LIMITS, isolation=level)()
        self.isolation = self.tool._session.isolation
        self.texts: list[str] = []

    def call(self, code: str):
        """One tool call: a str back, nothing raised; the CellResult it logged."""
        text = self.tool.python(code)
        assert isinstance(text, str)
        result = self.tool.results[-1]
        assert result.text == text
        self.texts.append(text)
        return result

    def after(self, restarted: bool | None):
        """The cell after a hostile one: a restarted session says so and has lost its variables; one
        that was not restarted kept them."""
        result = self.call(AFTER)
        if not self.isolation.own_uid and result.killed and restarted is not False:
            result = self.call(AFTER)  # the worker a cell killed may end after that cell answered
        if restarted is None:
            restarted = result.restarted
        if restarted:
            assert result.restarted and result.text == f"{RESTARTED}\n(False, 42)", result
        else:
            assert not result.restarted and result.text == "(True, 42)", result


@pytest.mark.parametrize("level, name", _params())
def test_a_hostile_cell_in_a_rollout_reaches_nothing_and_leaves_nothing(level, name, caller, listener, sandboxes):
    case = CASES[name]
    earlier = set(CELLS._sandbox_processes(None, wait=0))  # other tests' fork servers in this process
    rollouts = Rollouts(level)
    isolation, tool = rollouts.isolation, rollouts.tool
    # Each job's leftovers in the worker's private /tmp and /dev/shm are swept where jobs have an uid
    # of their own. At 'namespaces' they keep the worker's uid, nothing sweeps those folders between
    # rollouts, and only the job's folder and home are planted and looked at here.
    shared = ["/tmp", "/var/tmp", "/dev/shm"] if isolation.own_uid else []
    uid = None
    try:
        tool.reset(prompt="the hostile rollout")
        planted = rollouts.call(_probe_and_plant(f"{TOKEN}-a", shared, []))
        assert planted.ok and planted.text.startswith("seen []"), planted
        folder = planted.text.split("\ncwd ", 1)[1].strip()
        hostile = rollouts.call(case.code(caller, listener.port))
        case.check(hostile, isolation)
        caller.assert_untouched()
        if case.ends_later:  # the process ends by itself: its channel reads EOF
            assert select.select([tool._session._channel], [], [], 30)[0], "the process did not end"
        if not case.desynced:
            rollouts.after(case.restarts(hostile, isolation) if case.restarts else not (hostile.ok or hostile.error))
        if tool._session._lease is not None:
            uid = tool._session._lease.uid
        tool.reset(prompt="the next rollout")
        time.sleep(case.settle)
        probe = rollouts.call(_probe_and_plant(f"{TOKEN}-b", shared, [folder]))
        assert probe.ok and not probe.restarted and probe.text.startswith("seen []"), probe
        assert rollouts.call("6 * 7").text == "42"  # in step again
    finally:
        tool._close()
    assert CELLS._sandbox_processes(uid, ignore=earlier) == []  # no worker, no job, nothing the cells started
    assert sandboxes.leftovers() == []
    assert [token for token in caller.all_secrets if any(token in text for text in rollouts.texts)] == []
    assert listener.accepted == 0
    caller.assert_untouched()
    assert [f"{place}/{entry}" for place in ("/tmp", "/var/tmp", "/dev/shm") if os.path.isdir(place)
            for entry in os.listdir(place) if entry.startswith(PREFIXES)] == []  # the host's own shared folders
