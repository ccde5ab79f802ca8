"""The scenario of test_confined_levels.py, run as root and as pid 1 of a pid namespace of its own
(``unshare --pid --fork --mount-proc``): nothing a job does can reach a process outside it.

It starts a "trainer" as the throwaway user (HF_TOKEN in its environment, listening on a loopback
TCP port, a unix socket and an abstract one, logging every connection), becomes the caller (the
user at ``basic``; root at ``uid``), runs the hostile programs and the correct ones of the config at
the level, and prints one JSON line: what each run printed and what the machine looks like after.
"""

import json
import os
import pwd
import subprocess
import sys
import time
import warnings

TRAINER = r'''
import os, socket, sys, threading, time
state = sys.argv[1]
secret_in_memory = os.environ["HF_TOKEN"] * 3
def serve(sock):
    sock.listen(16)
    while True:
        conn, _ = sock.accept()
        with open(f"{state}/connections", "a") as log:
            log.write(f"{sock.family}\n")
        conn.close()
tcp = socket.socket(); tcp.bind(("127.0.0.1", 0))
unix = socket.socket(socket.AF_UNIX); unix.bind(f"{state}/trainer.sock"); os.chmod(f"{state}/trainer.sock", 0o777)
abstract = socket.socket(socket.AF_UNIX); abstract.bind("\0referee-confined-trainer")
for sock in (tcp, unix, abstract):
    threading.Thread(target=serve, args=(sock,), daemon=True).start()
with open(f"{state}/port.tmp", "w") as out:
    out.write(str(tcp.getsockname()[1]))
os.rename(f"{state}/port.tmp", f"{state}/port")
while True:
    time.sleep(1)
'''


def become(user: pwd.struct_passwd) -> None:
    os.setgroups([])
    os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
    os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)


def trainer_setup(paths: list[str], user: pwd.struct_passwd) -> None:
    """In the trainer's child: reach this Python (in a mount namespace of its own), then become the user."""
    from referee.verifiers.sandbox.mounts import let_others_reach

    if not let_others_reach(paths):
        raise OSError("the throwaway user cannot reach this Python")
    become(user)


def state_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def main() -> None:
    if os.getpid() != 1 or os.geteuid() != 0:
        sys.exit("confined_scenario.py runs as root, as pid 1 of its own pid namespace (unshare --pid --fork)")
    config = json.loads(sys.argv[1])
    from referee.verifiers import code
    from referee.verifiers.code.languages import toolchain_folders
    from referee.verifiers.sandbox.isolation import read_only_paths
    from referee.verifiers.sandbox.mounts import let_others_reach
    from referee.verifiers.code.run import run_program

    user = pwd.getpwnam(config["user"])
    import referee.verifiers

    # this Python, the venv and the whole checkout (the judge stack runs as the user at basic)
    paths = [*read_only_paths(toolchain_folders()),
             os.path.dirname(os.path.dirname(os.path.realpath(referee.verifiers.__file__)))]
    if config["level"] == "basic":  # the throwaway user can run this Python (pyenv in /root), in our mount namespace
        assert let_others_reach(paths)
    state = config["state"]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": config["home"], "HF_TOKEN": config["hf_token"]}
    trainer = subprocess.Popen([sys.executable, "-I", "-c", TRAINER, state], env=env, preexec_fn=lambda: trainer_setup(paths, user),
                               start_new_session=True)
    while not os.path.exists(f"{state}/port"):
        time.sleep(0.05)
    port = int(open(f"{state}/port").read())
    home_before = sorted(os.path.join(top, name) for top, dirs, files in os.walk(config["home"]) for name in dirs + files)
    if config["level"] == "basic":
        become(user)
    os.environ.update(env)
    fill = {"{trainer}": str(trainer.pid), "{port}": str(port)}
    runs = {}
    warnings.simplefilter("ignore")
    for name, program in config["hostile"].items():
        for key, value in fill.items():
            program = program.replace(key, value)
        run = run_program(program, isolation=config["level"], allow_weak_isolation=True, workers=1, timeout=10)
        runs[name] = {"stdout": run.stdout, "stderr": run.stderr[-2000:], "ended": run.ended}
    judged = {}
    for name, (program, tests) in config["judged"].items():
        for key, value in fill.items():
            program = program.replace(key, value)
        verdict = code.verify(program, tests, isolation=config["level"], allow_weak_isolation=True, workers=1,
                              timeout=5)
        judged[name] = {"status": verdict.status, "reason": verdict.reason,
                        "confinement": verdict.details.get("confinement")}
    time.sleep(0.5)
    home_after = sorted(os.path.join(top, name) for top, dirs, files in os.walk(config["home"]) for name in dirs + files)
    report = {"runs": runs, "judged": judged, "trainer": state_of(trainer.pid),
              "connections": open(f"{state}/connections").read() if os.path.exists(f"{state}/connections") else "",
              "world": os.listdir(config["world"]), "home_added": sorted(set(home_after) - set(home_before))}
    print(json.dumps(report))
    sys.stdout.flush()
    os._exit(0)  # pid 1: the namespace and everything left in it ends with us


if __name__ == "__main__":
    main()
