"""The hostile corpus at ``basic`` and ``uid`` with the ``landlock + seccomp`` layer, as a cluster
account would meet it: a throwaway user the test creates (CI runs as root), with a long-running
"trainer" of that user, secrets in its home (``~/.ssh/id_rsa``, the hub token, an answer key), a
venv of its own, HF_TOKEN in the trainer's environment, a world-writable host folder, and a
trainer listening on loopback. At ``basic`` the caller is that user (jobs keep its uid); at ``uid``
the caller is root and the user's home is world-readable, as another user's would be.

Guard: the whole scenario (tests/reliability/confined_scenario.py) runs as pid 1 of a pid namespace
of its own, so that a job's ``kill(-1, 9)`` reaches nothing outside it even if the layer failed."""

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import uuid

import pytest

from referee.verifiers.sandbox import confine
from referee.verifiers.code.languages import find_toolchain

SCENARIO = os.path.join(os.path.dirname(__file__), "confined_scenario.py")
CAN_RUN = os.geteuid() == 0 and shutil.which("useradd") and shutil.which("unshare") and confine.holds(False)
pytestmark = pytest.mark.skipif(not CAN_RUN, reason="needs root, useradd, unshare and a kernel where landlock + "
                                                    "seccomp holds (Landlock ABI 6)")
SSH_KEY = f"-----BEGIN OPENSSH PRIVATE KEY----- {uuid.uuid4().hex}"
HUB_TOKEN = f"hf_file{uuid.uuid4().hex}"
HF_TOKEN = f"hf_env{uuid.uuid4().hex}"
ANSWER = f"answer-{uuid.uuid4().hex}"
SECRETS = (SSH_KEY, HUB_TOKEN, HF_TOKEN, ANSWER)

PROBE = '''
import ctypes, os
def c_call(result):
    if result == -1:
        raise OSError(ctypes.get_errno(), "refused")
    return result
def attempt(name, action):
    try:
        print(name, "DONE", repr(action())[:400])
    except Exception as exc:
        print(name, "REFUSED", type(exc).__name__)
'''


def hostile(home: str, world: str, state: str) -> dict[str, str]:
    """Programs that print what they got (a secret in the output is a leak) or try to do harm
    (checked after the runs: the trainer, the home, the world-writable folder, the connections)."""
    site = f"{home}/venv/lib/python3/site-packages"
    return {
        "signals": PROBE + "import signal\n"
                   "attempt('stop -1', lambda: os.kill(-1, signal.SIGSTOP))\n"
                   "attempt('stop the trainer', lambda: os.kill({trainer}, signal.SIGSTOP))\n"
                   "attempt('stop its group', lambda: os.killpg({trainer}, signal.SIGSTOP))\n"
                   "attempt('pidfd stop', lambda: signal.pidfd_send_signal(os.pidfd_open({trainer}), signal.SIGSTOP))\n"
                   "attempt('tgkill stop', lambda: c_call(ctypes.CDLL(None, use_errno=True).tgkill({trainer}, "
                   "{trainer}, signal.SIGSTOP)))\n"
                   "for pid in [p for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:\n"
                   "    attempt(f'kill {pid}', lambda: os.kill(int(pid), signal.SIGKILL))\n"
                   "attempt('kill -1', lambda: os.kill(-1, signal.SIGKILL))\n",
        "home": PROBE + f"for path in ['{home}/.ssh/id_rsa', '{home}/.cache/huggingface/token', '{home}/data/answers.jsonl']:\n"
                "    attempt(path, lambda: open(path).read())\n"
                f"attempt('list', lambda: os.listdir('{home}'))\n",
        "proc": PROBE + "import ctypes\n"
                "for name in ['environ', 'mem', 'maps', 'cmdline', 'cwd/.', 'root/.']:\n"
                "    attempt(name, lambda: os.listdir(f'/proc/{trainer}/{name}') if name.endswith('.') else\n"
                "            open(f'/proc/{trainer}/{name}', 'rb').read(1 << 16))\n"
                "libc = ctypes.CDLL(None, use_errno=True)\n"
                "buffer = ctypes.create_string_buffer(8)\n"
                "iov = (ctypes.c_void_p * 2)(ctypes.cast(buffer, ctypes.c_void_p), 8)\n"
                "remote = (ctypes.c_void_p * 2)(0x400000, 8)\n"
                "attempt('ptrace attach', lambda: c_call(libc.ptrace(16, {trainer}, 0, 0)))\n"
                "attempt('process_vm_readv', lambda: c_call(libc.process_vm_readv({trainer}, iov, 1, remote, 1, 0)))\n",
        "writes": PROBE + f"for path in ['{home}/planted', '{site}/evil.pth', '{world}/planted', '{home}/.bashrc']:\n"
                  "    attempt(path, lambda: open(path, 'a').write('import os'))\n",
        "network": PROBE + "import socket\n"
                   "attempt('tcp', lambda: socket.create_connection(('127.0.0.1', {port}), timeout=1).send(b'x'))\n"
                   "attempt('udp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', "
                   "('127.0.0.1', {port})))\n"
                   f"attempt('unix', lambda: socket.socket(socket.AF_UNIX).connect('{state}/trainer.sock'))\n"
                   "attempt('abstract', lambda: socket.socket(socket.AF_UNIX).connect('\\0referee-confined-trainer'))\n",
        "works": PROBE + "import asyncio, multiprocessing, tempfile, threading\n"
                 "attempt('tempfile', lambda: open(tempfile.mkstemp()[1], 'w').write('x'))\n"
                 "attempt('asyncio', lambda: asyncio.run(asyncio.sleep(0, 3)))\n"
                 "attempt('pipe', lambda: multiprocessing.Pipe()[0].fileno() > 0)\n"
                 "def forked():\n    pid = os.fork()\n    if pid == 0:\n        os._exit(3)\n"
                 "    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])\n"
                 "attempt('fork', forked)\n",
    }


C_KILLER = ("#include <signal.h>\n#include <stdio.h>\nint main(void) {\n"
            "    printf(\"%d %d\\n\", kill(-1, SIGSTOP), kill({trainer}, SIGKILL));\n"
            "    FILE *key = fopen(\"HOME/.ssh/id_rsa\", \"r\");\n    char line[200] = \"\";\n"
            "    if (key && fgets(line, sizeof line, key)) printf(\"%s\", line);\n"
            "    FILE *planted = fopen(\"WORLD/c-planted\", \"w\");\n    if (planted) fputs(\"x\", planted);\n"
            "    kill(-1, SIGKILL);\n    return 0;\n}\n")
RIGHT = {  # a correct program in each language, judged at the level (tests: print the sum of two numbers)
    "python": "a, b = map(int, input().split())\nprint(a + b)\n",
    "c": "#include <stdio.h>\nint main(void) { long a, b; scanf(\"%ld %ld\", &a, &b); printf(\"%ld\\n\", a + b); }\n",
    "cpp": "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }\n",
    "java": "import java.util.*;\npublic class Main { public static void main(String[] x) {\n"
            "  Scanner in = new Scanner(System.in); System.out.println(in.nextLong() + in.nextLong()); } }\n",
    "javascript": "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
                  "console.log(a + b);\n",
    "go": "package main\nimport \"fmt\"\nfunc main() { var a, b int64; fmt.Scan(&a, &b); fmt.Println(a + b) }\n",
    "rust": "use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap();\n"
            "  let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect(); println!(\"{}\", v[0] + v[1]); }\n",
}
SUM = {"format": "stdio", "inputs": ["2 3\n", "40 2\n"], "outputs": ["5\n", "42\n"]}


@pytest.fixture(scope="module")
def account():
    """The throwaway user, its home with the secrets and its venv, a world-writable host folder, and
    a folder for the trainer's state; all removed afterwards."""
    name = f"rfc{uuid.uuid4().hex[:10]}"
    base = tempfile.mkdtemp(prefix="referee-confined-")
    os.chmod(base, 0o755)
    home, world, state = f"{base}/home", f"{base}/world", f"{base}/state"
    subprocess.run(["useradd", "--no-create-home", "--home-dir", home, "--shell", "/bin/sh", "--user-group", name],
                   check=True, capture_output=True)
    try:
        user = pwd.getpwnam(name)
        files = {".ssh/id_rsa": SSH_KEY, ".cache/huggingface/token": HUB_TOKEN, "data/answers.jsonl": ANSWER,
                 ".bashrc": "# the user's", "venv/lib/python3/site-packages/site.pth": ""}
        for relative, text in files.items():
            path = os.path.join(home, relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as out:
                out.write(text)
        os.makedirs(state)
        os.makedirs(world)
        os.chmod(world, 0o777)
        for top, dirs, names in os.walk(base):
            for entry in [top, *(os.path.join(top, n) for n in dirs + names)]:
                if entry not in (base, world):
                    os.chown(entry, user.pw_uid, user.pw_gid)
        os.chmod(f"{home}/.ssh/id_rsa", 0o600)
        yield {"user": name, "home": home, "world": world, "state": state}
    finally:
        subprocess.run(["userdel", name], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def run_scenario(level: str, account: dict, home_mode: int) -> dict:
    os.chmod(account["home"], home_mode)
    for leftover in ("port", "connections", "trainer.sock"):
        if os.path.exists(f"{account['state']}/{leftover}"):
            os.unlink(f"{account['state']}/{leftover}")
    # the throwaway user has no Rust of its own (rustup lives in root's home): at basic, where jobs are that user
    judged = {f"right {language}": (program, {**SUM, "language": language}) for language, program in RIGHT.items()
              if find_toolchain(language) and not (level == "basic" and language == "rust")}
    if find_toolchain("c"):
        killer = C_KILLER.replace("HOME", account["home"]).replace("WORLD", account["world"])
        judged["c killer"] = (killer, {"format": "stdio", "inputs": [""], "outputs": ["never"], "language": "c"})
    config = {"level": level, "hf_token": HF_TOKEN, "hostile": hostile(account["home"], account["world"],
              account["state"]), "judged": judged, **account}
    done = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, SCENARIO, json.dumps(config)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def refused_everywhere(run: dict, *, allowed: tuple[str, ...] = ()) -> list[str]:
    """The attempts of one run that were not refused (except those named in ``allowed``)."""
    lines = [line for line in run["stdout"].splitlines() if " DONE " in line]
    return [line for line in lines if not line.startswith(allowed)]


@pytest.mark.parametrize(("level", "home_mode"), [("basic", 0o700), ("uid", 0o755)])
def test_the_hostile_corpus_reaches_nothing_of_the_caller(level, home_mode, account):
    report = run_scenario(level, account, home_mode)
    runs, judged = report["runs"], report["judged"]
    text = json.dumps(report)
    assert [secret for secret in SECRETS if secret in text] == []
    assert report["trainer"] in ("S", "R"), report  # alive, not stopped
    assert report["connections"] == "" and report["world"] == [] and report["home_added"] == []
    assert refused_everywhere(runs["signals"], allowed=("kill ",)) == [], runs["signals"]
    assert "kill -1 REFUSED" in runs["signals"]["stdout"] and "stop -1 REFUSED" in runs["signals"]["stdout"]
    assert refused_everywhere(runs["home"]) == [], runs["home"]
    assert refused_everywhere(runs["proc"], allowed=("cmdline",)) == [], runs["proc"]
    assert "ptrace attach REFUSED PermissionError" in runs["proc"]["stdout"]
    assert "process_vm_readv REFUSED PermissionError" in runs["proc"]["stdout"]
    assert refused_everywhere(runs["writes"]) == [], runs["writes"]
    assert refused_everywhere(runs["network"]) == [], runs["network"]
    works = runs["works"]["stdout"]
    assert all(f"{name} DONE" in works for name in ("tempfile", "asyncio", "pipe", "fork")), runs["works"]
    for name, verdict in judged.items():
        wanted = "wrong" if name == "c killer" else "correct"
        assert verdict["status"] == wanted and verdict["confinement"] == confine.LAYER_NAME, (name, verdict)
