"""The hostile corpus as a user on a typical cluster account would run it: not root, with and
without bubblewrap. The test (root, as CI runs) makes a throwaway user with a secret key, a hub
token and an answer key in its home, a virtualenv of its own, and a world-writable host folder;
then runs hostile_as_user.py as that user, at every level a user reaches here, inside a pid
namespace of its own (the guard: a ``kill(-1, 9)`` there reaches nothing else on this machine).

At ``namespaces`` (bubblewrap, or referee's own namespaces where bubblewrap is hidden) every attack
must be held: nothing read, written or signalled. ``basic`` holds nearly nothing, and says so: what
it holds is measured and compared with docs/verifiers.md's table, never skipped.
"""

import glob
import json
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from referee.verifiers.code.languages import toolchain_folders
from referee.verifiers.sandbox import confine, isolation as iso

SCENARIO = Path(__file__).with_name("hostile_as_user.py")
ATTACKS = ["read ~/.ssh/id_rsa", "read the hub token file", "HF_TOKEN in the job's environment",
           "HF_TOKEN from /proc/<trainer>/environ", "HF_TOKEN from every /proc/*/environ",
           "a token from /proc/<trainer>/mem", "answer key in a host folder", "answer key in the home",
           "write into the home", "plant a .pth in the venv", "write into a world-writable host folder",
           "os.kill(-1, SIGKILL)", "SIGSTOP to -1", "SIGKILL to the trainer's pid"]
# What basic (the user's own uid, the host's processes and files) holds without the landlock +
# seccomp layer, as measured here on a kernel without it: only the job's own environment is clean
# there. With the layer (Landlock ABI 6+) every attack is held. docs/verifiers.md says the same.
HELD_AT_BASIC_UNCONFINED = {name: name == "HF_TOKEN in the job's environment" for name in ATTACKS}
CONFINED = confine.holds(jobs_are_root=False)
HELD_AT_BASIC = dict.fromkeys(ATTACKS, True) if CONFINED else HELD_AT_BASIC_UNCONFINED

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("useradd") is None or shutil.which("unshare") is None,
                                reason="needs root, useradd and unshare to make a throwaway user and a pid namespace")


def _install_referee(site_packages: str) -> None:
    """Make referee importable from the user's venv the way it is installed here: the editable
    finder of a development install, else a copy of the installed package."""
    ours = sysconfig.get_paths()["purelib"]
    finders = glob.glob(f"{ours}/__editable__*referee*")
    if finders:
        for path in finders:
            shutil.copy(path, site_packages)
    else:
        import referee

        shutil.copytree(os.path.dirname(referee.__file__), f"{site_packages}/referee")


def _write(path: str, text: str, mode: int, owner: pwd.struct_passwd) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)
    os.chmod(path, mode)
    os.chown(path, owner.pw_uid, owner.pw_gid)


@pytest.fixture(scope="module")
def account():
    name = f"refh{secrets.token_hex(4)}"
    subprocess.run(["useradd", "--create-home", "--home-dir", f"/home/{name}", "--shell", "/usr/sbin/nologin",
                    "--user-group", name], check=True, capture_output=True)
    user = pwd.getpwnam(name)
    host = f"/srv/{name}"  # the host's world-readable data and a world-writable drop folder
    try:
        os.chmod(user.pw_dir, 0o755)  # as Debian's useradd makes it: others may read what is not private
        os.makedirs(f"{host}/drop")
        os.chmod(host, 0o755)
        os.chmod(f"{host}/drop", 0o1777)
        tokens = {key: secrets.token_hex(12) for key in ("ssh", "hub", "env", "memory", "answers")}
        _write(f"{user.pw_dir}/.ssh/id_rsa", tokens["ssh"], 0o600, user)
        _write(f"{user.pw_dir}/.cache/huggingface/token", tokens["hub"], 0o600, user)
        _write(f"{user.pw_dir}/data/answers.json", tokens["answers"], 0o644, user)
        _write(f"{host}/answers.json", tokens["answers"], 0o644, pwd.getpwuid(0))
        venv = f"{user.pw_dir}/venv"
        subprocess.run([os.path.realpath(sys.executable), "-m", "venv", "--without-pip", venv], check=True)
        [site_packages] = glob.glob(f"{venv}/lib/python*/site-packages")
        _install_referee(site_packages)
        subprocess.run(["chown", "-R", f"{name}:{name}", user.pw_dir], check=True)
        before = _listing(user.pw_dir)
        # what the user must reach through a private /root (pyenv's Python, a checkout there)
        reach = iso.read_only_paths(toolchain_folders()) + [str(SCENARIO.parent)]
        yield {"user": name, "uid": user.pw_uid, "gid": user.pw_gid, "home": user.pw_dir, "token": secrets.token_hex(8),
               "secrets": tokens, "reach": reach, "python": f"{venv}/bin/python", "before": before,
               "paths": {"answers": f"{host}/answers.json", "drop": f"{host}/drop", "site_packages": site_packages}}
    finally:
        subprocess.run(["userdel", "--remove", name], capture_output=True)
        shutil.rmtree(host, ignore_errors=True)
        shutil.rmtree(f"/home/{name}", ignore_errors=True)


def _run_as_user(account: dict, level: str, hide_bubblewrap: bool, *, as_root: bool = False) -> dict:
    setup = {key: value for key, value in account.items() if key not in ("python", "before")}
    setup |= {"level": level, "as_root": as_root}
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    if hide_bubblewrap:
        env[iso.HIDE_BUBBLEWRAP_ENV] = "1"
    # The guard: a pid namespace of its own, the scenario its pid 1, killed with the test.
    done = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", account["python"], "-I",
                           str(SCENARIO), json.dumps(setup)], capture_output=True, text=True, timeout=500, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _listing(home: str) -> list[str]:
    """Every path in ``home`` but Python's byte-code caches (the scenario's own imports write them)."""
    return sorted(str(p) for p in Path(home).rglob("*") if "__pycache__" not in p.parts)


def _host_untouched(account: dict) -> None:
    assert os.listdir(account["paths"]["drop"]) == []
    assert _listing(account["home"]) == account["before"]


def _user_mechanism(hide_bubblewrap: bool) -> str:
    """What a user gets here: bubblewrap runs unprivileged where user namespaces are allowed, as ours do."""
    return "own namespaces" if hide_bubblewrap or shutil.which("bwrap") is None else "bubblewrap"


@pytest.mark.parametrize("hide_bubblewrap", [False, True], ids=["bubblewrap", "bubblewrap hidden"])
def test_namespaces_hold_every_attack_as_an_unprivileged_user(account, hide_bubblewrap):
    if not iso.probe_own_namespaces()[0]:
        pytest.skip(f"no namespaces for users here: {iso.probe_own_namespaces()[1]}")
    result = _run_as_user(account, "auto", hide_bubblewrap)
    print(json.dumps(result, indent=1))
    assert (result["level"], result["mechanism"]) == ("namespaces", _user_mechanism(hide_bubblewrap))
    assert sorted(result["held"]) == sorted(ATTACKS)
    assert {name for name, held in result["held"].items() if not held} == set(), result["verdicts"]
    # every read and write ran (an error would hide whether it was held); the signals' verdicts vary
    # (under bubblewrap the worker is pid 2, which a job of its uid can kill or stop: wrong, or error)
    assert all(result["verdicts"][name][0] != "error" for name in ATTACKS[:11]), result["verdicts"]
    if result["mechanism"] == "own namespaces":  # its worker is pid 1, out of its jobs' reach: every verdict comes
        assert all(status == "wrong" for status, _ in result["verdicts"].values()), result["verdicts"]
    assert result["trainer survived the run"]
    _host_untouched(account)


def test_basic_as_an_unprivileged_user_holds_what_the_docs_say(account):
    result = _run_as_user(account, "basic", hide_bubblewrap=True)
    print(json.dumps(result, indent=1))
    assert result["level"] == "basic"
    try:
        # every read and write ran (an error would hide whether it was held)
        assert all(result["verdicts"][name][0] != "error" for name in ATTACKS[:11]), result["verdicts"]
        assert result["held"] == HELD_AT_BASIC, result["verdicts"]
    finally:  # what basic let the programs write
        for path in glob.glob(f"{account['home']}/{account['token']}*") + glob.glob(
                f"{account['paths']['site_packages']}/{account['token']}*") + glob.glob(f"{account['paths']['drop']}/*"):
            os.unlink(path)
    lines = (Path(__file__).parents[2] / "docs" / "verifiers.md").read_text().splitlines()
    header = next(line for line in lines if line.startswith("| attack | "))
    column = [cell.strip() for cell in header.strip("|").split("|")].index(
        "`basic`, landlock + seccomp" if CONFINED else "`basic`, without it")
    rows = {line.split(" | ")[0].strip("| "): [cell.strip() for cell in line.strip("|").split("|")]
            for line in lines if line.startswith("| ") and line.split(" | ")[0].strip("| ") in HELD_AT_BASIC}
    assert {name: rows[name][column].startswith("holds") for name in rows} == HELD_AT_BASIC


# As root (the levels only root reaches; never basic: its jobs would be root), the throwaway user's
# secrets are another user's and the trainer is root's. `uid` hides nothing of the host's files
# that others may read: the answer keys (in /srv, in a 0755 home) and the world-writable folder.
# With the landlock + seccomp layer (Landlock ABI 6+) it holds those too.
HELD_AT_UID_UNCONFINED = {name: name not in ("answer key in a host folder", "answer key in the home",
                                             "write into a world-writable host folder") for name in ATTACKS}
HELD_AT_UID = dict.fromkeys(ATTACKS, True) if CONFINED else HELD_AT_UID_UNCONFINED


@pytest.mark.parametrize("level, hide_bubblewrap", [("full", False), ("full", True), ("uid", True)],
                         ids=["full, bubblewrap", "full, own namespaces", "uid"])
def test_the_root_levels_hold_what_the_docs_say(account, level, hide_bubblewrap):
    if level == "full" and not (iso.probe_own_namespaces()[0] if hide_bubblewrap else iso.probe_bubblewrap()[0]):
        pytest.skip("no namespaces of that kind here")
    result = _run_as_user(account, level, hide_bubblewrap, as_root=True)
    print(json.dumps(result, indent=1))
    assert result["level"] == level
    assert result["mechanism"] == ("" if level == "uid" else "own namespaces" if hide_bubblewrap else "bubblewrap")
    try:
        assert all(result["verdicts"][name][0] != "error" for name in ATTACKS[:11]), result["verdicts"]
        assert result["held"] == (HELD_AT_UID if level == "uid" else dict.fromkeys(ATTACKS, True)), result["verdicts"]
        assert result["trainer survived the run"]
    finally:
        for path in glob.glob(f"{account['paths']['drop']}/*"):
            os.unlink(path)
    assert _listing(account["home"]) == account["before"]
