"""The hostile corpus as an unprivileged user (or as root, for the levels only root reaches), run by test_hostile_as_user.py inside a pid namespace
of its own (``unshare --pid --fork --mount-proc``): this script is that namespace's pid 1, so a
``kill(-1, 9)`` reaches nothing outside it.

As root it makes the Python installation reachable for the user in its own mount namespace
(:func:`~referee.verifiers.sandbox.mounts.let_others_reach`), then becomes the user for good, starts
a long-running "trainer" of that user (``HF_TOKEN`` in its environment, a token in its memory),
judges each hostile program at the asked level, and prints one JSON line: for each attack whether
it was held (nothing read, written or signalled) and how its verdict came out.
"""

import json
import os
import signal
import subprocess
import sys
import time

from referee.verifiers import code
from referee.verifiers.sandbox.mounts import let_others_reach

TWO = {"format": "call", "fn_name": "f", "inputs": [[1]], "outputs": [2]}
OPTIONS = {"timeout": 2.0, "workers": 1, "memory_mb": 256, "allow_weak_isolation": True}
TRAINER = ("import sys, time\nheld = ('referee-mem-' + sys.stdin.readline().strip()).encode()\n"
           "sys.stdout.write('ready\\n'); sys.stdout.flush()\nwhile True:\n    time.sleep(1)\n")


def reads(setup: dict, trainer: int) -> list[tuple[str, str, str]]:
    """(attack, program, the secret it would show): f returns what it read, so a read that works
    puts the secret in the verdict's reason, the way a completion would smuggle it out."""
    home, paths = setup["home"], setup["paths"]
    read_file = "def f(x):\n    return open({path!r}).read()\n"
    memory = ("import re\ndef f(x):\n    found = []\n"
              f"    with open('/proc/{trainer}/maps') as maps, open('/proc/{trainer}/mem', 'rb') as mem:\n"
              "        for line in maps:\n            start, end = (int(a, 16) for a in line.split()[0].split('-'))\n"
              "            if 'rw' not in line.split()[1]:\n                continue\n"
              "            try:\n                mem.seek(start)\n                data = mem.read(end - start)\n"
              "            except OSError:\n                continue\n"
              "            found += re.findall(rb'referee-mem-([0-9a-f]{24})', data)\n"
              "    return b' '.join(found).decode()\n")
    environ = ("def f(x):\n    found = []\n    import os\n    for pid in {pids}:\n        try:\n"
               "            found += [v for v in open(f'/proc/{{pid}}/environ', 'rb').read().split(b'\\0')"
               " if v.startswith(b'HF_TOKEN=')]\n"
               "        except OSError:\n            pass\n    return b' '.join(found).decode()\n")
    return [
        ("read ~/.ssh/id_rsa", read_file.format(path=f"{home}/.ssh/id_rsa"), setup["secrets"]["ssh"]),
        ("read the hub token file", read_file.format(path=f"{home}/.cache/huggingface/token"), setup["secrets"]["hub"]),
        ("HF_TOKEN in the job's environment", "import os\ndef f(x):\n    return os.environ.get('HF_TOKEN', '')\n",
         setup["secrets"]["env"]),
        ("HF_TOKEN from /proc/<trainer>/environ", environ.format(pids=f"[{trainer}]"), setup["secrets"]["env"]),
        ("HF_TOKEN from every /proc/*/environ", environ.format(pids="[p for p in os.listdir('/proc') if p.isdigit()]"),
         setup["secrets"]["env"]),
        ("a token from /proc/<trainer>/mem", memory, setup["secrets"]["memory"]),
        ("answer key in a host folder", read_file.format(path=paths["answers"]), setup["secrets"]["answers"]),
        ("answer key in the home", read_file.format(path=f"{home}/data/answers.json"), setup["secrets"]["answers"]),
    ]


def writes(setup: dict) -> list[tuple[str, str, str]]:
    """(attack, program, the host path it would create): f returns 2 * x once it wrote."""
    token, paths = setup["token"], setup["paths"]
    write = "def f(x):\n    with open({path!r}, 'w') as out:\n        out.write({text!r})\n    return 2 * x\n"
    return [
        ("write into the home", write.format(path=f"{setup['home']}/{token}-home", text="pwned"),
         f"{setup['home']}/{token}-home"),
        ("plant a .pth in the venv", write.format(path=f"{paths['site_packages']}/{token}.pth", text="import os\n"),
         f"{paths['site_packages']}/{token}.pth"),
        ("write into a world-writable host folder", write.format(path=f"{paths['drop']}/{token}", text="pwned"),
         f"{paths['drop']}/{token}"),
    ]


SIGNALS = [  # (attack, program, given the trainer's pid): each must leave the trainer running
    ("os.kill(-1, SIGKILL)", lambda pid: "import os\ndef f(x):\n    os.kill(-1, 9)\n    return 2 * x\n"),
    ("SIGSTOP to -1", lambda pid: "import os, signal\ndef f(x):\n    os.kill(-1, signal.SIGSTOP)\n    return 2 * x\n"),
    ("SIGKILL to the trainer's pid", lambda pid: f"import os\ndef f(x):\n    os.kill({pid}, 9)\n    return 2 * x\n"),
]


def start_trainer(setup: dict) -> subprocess.Popen:
    env = {"PATH": "/usr/bin:/bin", "HOME": setup["home"], "HF_TOKEN": setup["secrets"]["env"]}
    trainer = subprocess.Popen([sys.executable, "-I", "-c", TRAINER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               env=env, text=True)
    trainer.stdin.write(setup["secrets"]["memory"] + "\n")  # in its memory only: never in argv or environ
    trainer.stdin.flush()
    assert trainer.stdout.readline() == "ready\n"
    return trainer


def running(process: subprocess.Popen) -> bool:
    """Alive and not stopped."""
    if process.poll() is not None:
        return False
    with open(f"/proc/{process.pid}/stat") as handle:
        return handle.read().rsplit(")", 1)[1].split()[0] not in ("T", "t", "Z", "X")


def become(setup: dict) -> None:
    """Become the throwaway user (``as_root``: stay root, the caller of the root-only levels, and
    the user's files are another user's)."""
    os.environ["HF_TOKEN"] = setup["secrets"]["env"]
    if setup.get("as_root"):
        return
    assert let_others_reach(setup["reach"]), "the user cannot reach the Python installation"
    os.setgroups([])
    os.setresgid(setup["gid"], setup["gid"], setup["gid"])
    os.setresuid(setup["uid"], setup["uid"], setup["uid"])
    os.environ.update(HOME=setup["home"], USER=setup["user"], HF_TOKEN=setup["secrets"]["env"])
    os.chdir(setup["home"])


def main() -> None:
    setup = json.loads(sys.argv[1])
    assert os.getpid() == 1, "run me as pid 1 of a pid namespace of my own"
    become(setup)
    isolation = code.resolve_isolation(setup["level"], allow_weak=True)
    trainer = start_trainer(setup)
    result = {"level": isolation.level, "mechanism": isolation.mechanism, "held": {}, "verdicts": {}}
    batch = reads(setup, trainer.pid) + writes(setup)
    verdicts = code.verify_batch([program for _, program, _ in batch], [TWO] * len(batch), isolation=setup["level"],
                                 **OPTIONS)
    for index, ((name, _, what), verdict) in enumerate(zip(batch, verdicts)):
        is_read = index < len(batch) - len(writes(setup))
        result["held"][name] = what not in repr(verdict) if is_read else not os.path.exists(what)
        result["verdicts"][name] = [verdict.status, verdict.reason[:200]]
    for name, program in SIGNALS:
        [verdict] = code.verify_batch([program(trainer.pid)], [TWO], isolation=setup["level"], batch_timeout=30.0,
                                      **OPTIONS)
        time.sleep(0.5)  # a signal in flight lands
        result["held"][name] = running(trainer)
        result["verdicts"][name] = [verdict.status, verdict.reason[:200]]
        os.kill(-1, signal.SIGCONT)  # from pid 1 of this namespace: what a stop froze here runs again
        if not running(trainer):
            trainer.kill()
            trainer.wait()
            trainer = start_trainer(setup)
    result["trainer survived the run"] = running(trainer)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
