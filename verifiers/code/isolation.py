"""Which isolation layers this machine gives the code sandbox, why, and how to start a worker in them.

Levels, best first:

* ``full``: bubblewrap (own pid, network, ipc, uts and mount namespaces; a minimal read-only
  root; a private ``/tmp``) and, because we are root, an unprivileged uid for each worker's jobs.
* ``namespaces``: bubblewrap inside a user namespace (not root): jobs keep the worker's uid.
* ``uid``: root without bubblewrap: own uid per worker and a network namespace, but the host's
  file system and process table stay visible (a private folder on the way to Python, such as
  pyenv's ``/root``, is covered in the worker's own mount namespace: see :mod:`.mounts`).
* ``basic``: neither: rlimits, a process group, outside deadlines and cleanup only.

Without namespaces of their own (``uid``, ``basic``) jobs also take Landlock and a seccomp filter
where the kernel has them (:mod:`.confine`, the ``landlock + seccomp`` layer): with Landlock's
signal scope (ABI 6) a job then reaches neither the caller's processes nor their home, even with
the caller's uid.

Every level keeps the rest: per-job rlimits, a fresh job folder, capped output, deadlines
enforced from outside, cleanup that kills every process the job left, and trusted-side judging.

It fails closed: :func:`resolve_isolation` never gives a level where a job could signal the
caller's processes or read the caller's home (``basic``; ``uid`` with a home other users can
pass through) unless that level is named *and* accepted (``allow_weak=True``, the verifiers'
``allow_weak_isolation`` option), which warns once per process. ``auto`` raises instead, naming
what is missing. :func:`available_isolation` says what the machine gives, with no policy.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import warnings
from dataclasses import dataclass
from pathlib import Path

from . import confine
from .languages import toolchain_folders
from .limits import DEFAULT_TMP_MB

LEVELS: tuple[str, ...] = ("full", "namespaces", "uid", "basic")
WORKER_MODULE = "referee.verifiers.code.forkserver"
SANDBOX_ENV: dict[str, str] = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "HOME": "/tmp",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
_TOP_LEVEL_SYSTEM = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr")
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime")


@dataclass(frozen=True)
class Layer:
    """One isolation layer: its name, whether it is on, and why.

    Example:
        >>> [layer.name for layer in available_isolation("basic").layers]
        ['bubblewrap', 'own uid', 'no network', 'rlimits, deadlines, cleanup, trusted judging', 'landlock + seccomp']
    """

    name: str
    on: bool
    why: str


@dataclass(frozen=True)
class Isolation:
    """The isolation a sandbox worker runs with.

    Example:
        >>> iso = available_isolation("basic")
        >>> iso.level, iso.bubblewrap, iso.own_uid
        ('basic', False, False)
    """

    level: str
    bubblewrap: bool
    own_uid: bool
    layers: tuple[Layer, ...]

    def summary(self) -> str:
        """One line: the level and the layers that are on."""
        return f"{self.level} ({', '.join(layer.name for layer in self.layers if layer.on)})"


def below(level: str, minimum: str | None) -> bool:
    """Whether sandbox isolation ``level`` is weaker than ``minimum`` (``None``: nothing is).

    Example:
        >>> below("basic", "uid"), below("full", "uid"), below("uid", None)
        (True, False, False)
    """
    return minimum is not None and LEVELS.index(level) > LEVELS.index(minimum)


def _is_root() -> bool:
    return os.geteuid() == 0


def read_only_paths() -> list[str]:
    """The folders a worker and its jobs need besides the system's: the Python installation, the
    environment, this package, and the compilers' folders outside the system's (rustup's toolchain in
    a home, a JDK's configuration in /etc: :func:`~referee.verifiers.code.languages.toolchain_folders`),
    none inside another.

    Example:
        >>> any(sys.base_prefix.startswith(path) for path in ["/usr", *read_only_paths()])
        True
    """
    wanted = {sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix,
              str(Path(os.path.realpath(sys.executable)).parent.parent),
              str(Path(__file__).resolve().parents[1])}  # referee.verifiers, wherever it is installed
    wanted.update(toolchain_folders())
    paths = sorted(os.path.realpath(p) for p in wanted if p and os.path.isdir(p))
    kept: list[str] = []
    for path in paths:  # sorted: a parent comes before its children
        if path.startswith(("/usr/", "/bin/", "/lib")) or any(path == k or path.startswith(k + "/") for k in kept):
            continue
        kept.append(path)
    return kept


def bubblewrap_argv(bwrap: str, *, user_namespace: bool, tmp_bytes: int = DEFAULT_TMP_MB << 20) -> list[str]:
    """The bubblewrap command line (up to ``--``) that runs a worker in its own namespaces.

    The only places a job can write are its private ``/tmp`` and ``/dev/shm``, in-memory tmpfs
    of ``tmp_bytes`` each, world-writable with the sticky bit as on any machine (the fork server
    removes what a job's uid leaves there after each job); the root and ``/dev`` are read-only.

    Example:
        >>> argv = bubblewrap_argv("bwrap", user_namespace=False, tmp_bytes=1 << 20)
        >>> "--unshare-net" in argv and "--unshare-user" not in argv and argv[-1] == "--"
        True
        >>> at = argv.index("--tmpfs"); argv[at - 4:at + 2]
        ['--perms', '1777', '--size', '1048576', '--tmpfs', '/tmp']
    """
    argv = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--hostname", "sandbox", "--clearenv"]
    if user_namespace:
        argv.append("--unshare-user")
    for key, value in SANDBOX_ENV.items():
        argv += ["--setenv", key, value]
    for top in _TOP_LEVEL_SYSTEM:
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    # The fresh /proc, /dev and /tmp first: mounted after the binds, they would hide a Python or a
    # checkout that lives under them (a clone in /tmp, say).
    size = str(int(tmp_bytes))
    # 1777 as on any machine: the jobs' own uid writes there too (bubblewrap's default, 0755 root, locks it out).
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", size, "--tmpfs", "/tmp",
             "--perms", "1777", "--size", size, "--tmpfs", "/dev/shm"]
    made: set[str] = {"/proc", "/dev", "/tmp"}
    for path in [f for f in _SYSTEM_FILES if os.path.exists(f)] + read_only_paths():
        parent = Path(path).parent
        for folder in reversed([parent, *parent.parents]):
            # bubblewrap makes missing parents 0700, which would lock the jobs' uid out
            if str(folder) != "/" and str(folder) not in made:
                made.add(str(folder))
                argv += ["--perms", "0755", "--dir", str(folder)]
        argv += ["--ro-bind", path, path]
    # Read-only from here: bubblewrap's root and /dev are tmpfs of their own, unbounded otherwise.
    argv += ["--remount-ro", "/", "--remount-ro", "/dev", "--chdir", "/tmp", "--"]
    return argv


def worker_argv(isolation: Isolation, worker_args: list[str], *, tmp_bytes: int = DEFAULT_TMP_MB << 20) -> list[str]:
    """The full command that starts a fork-server worker with ``isolation``.

    Example:
        >>> worker_argv(available_isolation("basic"), ["--fd", "3"])[-4:]
        ['-m', 'referee.verifiers.code.forkserver', '--fd', '3']
    """
    python = [sys.executable, "-I", "-B", "-m", WORKER_MODULE, *worker_args]
    if not isolation.bubblewrap:
        return python
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise RuntimeError("bwrap is no longer on PATH; reinstall bubblewrap or pass isolation='basic'.")
    return bubblewrap_argv(bwrap, user_namespace=not _is_root(), tmp_bytes=tmp_bytes) + python


@functools.lru_cache(maxsize=1)
def probe_bubblewrap() -> tuple[bool, str]:
    """Whether bubblewrap can start a worker here (tried once per process), and why.

    Example:
        >>> ok, why = probe_bubblewrap()
        >>> isinstance(ok, bool) and bool(why)
        True
    """
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False, "bwrap is not installed (apt-get install bubblewrap)"
    argv = bubblewrap_argv(bwrap, user_namespace=not _is_root())
    argv += [sys.executable, "-I", "-B", "-c", f"import {WORKER_MODULE}"]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=60, env=SANDBOX_ENV)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bwrap at {bwrap} failed to run: {exc}"
    if done.returncode != 0:
        error = done.stderr.decode(errors="replace").strip().splitlines()
        return False, f"bwrap at {bwrap} cannot start a sandbox here: {error[-1] if error else done.returncode}"
    version = subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout.strip()
    return True, f"{version or 'bwrap'} at {bwrap} starts workers in their own namespaces"


def unreadable_for_others(path: str) -> str | None:
    """The first folder on the way to ``path`` that other users cannot pass through (or, for
    ``path`` itself, list), or ``None`` when they can read it.

    Example:
        >>> unreadable_for_others("/usr/lib") is None
        True
    """
    target = Path(os.path.realpath(path))
    for folder in [*reversed(target.parents), target]:
        mode = folder.stat().st_mode
        if not mode & stat.S_IXOTH or (folder == target and not mode & stat.S_IROTH):
            return str(folder)
    return None


def _confinement(bubblewrap: bool, own_uid: bool) -> Layer:
    if bubblewrap:
        return Layer(confine.LAYER_NAME, False, "not needed: bubblewrap's namespaces hold the jobs")
    on, why = confine.probe()
    if on and not own_uid and _is_root():
        why += "; the jobs are root at this level and keep root's capabilities, so it does not make the level strong"
    return Layer(confine.LAYER_NAME, on, why)


def confined(isolation: Isolation) -> bool:
    """Whether jobs at ``isolation`` take the ``landlock + seccomp`` layer (:mod:`.confine`).

    Example:
        >>> confined(isolation_of("full")), confined(isolation_of("basic")) == confine.probe()[0]
        (False, True)
    """
    return any(layer.name == confine.LAYER_NAME and layer.on for layer in isolation.layers)


def _layers(level: str, bubblewrap: bool, own_uid: bool, bwrap_why: str) -> tuple[Layer, ...]:
    confinement = _confinement(bubblewrap, own_uid)
    if bubblewrap:
        sandbox = Layer("bubblewrap", True, f"{bwrap_why}: own pid, network, ipc, uts and mount namespaces, "
                                            "read-only minimal root, private in-memory /tmp and /dev/shm of tmp_mb each")
        network = Layer("no network", True, "own network namespace (bubblewrap)")
    else:
        sandbox = Layer("bubblewrap", False, bwrap_why)
        network = Layer("no network", own_uid or confinement.on,
                        "own network namespace (unshare as root)" if own_uid
                        else "no socket but an AF_UNIX pair, no TCP (landlock + seccomp)" if confinement.on
                        else "no network namespace without bubblewrap or root: jobs can open sockets")
    if own_uid:
        hidden = None if bubblewrap else unreadable_for_others(sysconfig.get_paths()["stdlib"])
        uid = Layer("own uid", True, "running as root: each worker's jobs run as their own unprivileged uid"
                    + ("" if bubblewrap else "; /tmp, /var/tmp and /dev/shm are the worker's own, in memory, of tmp_mb")
                    + (f"; they cannot pass through {hidden}, so the worker covers it, in a mount namespace of "
                       "its own, with an empty folder into which only Python and this package are bound back"
                       if hidden else ""))
    else:
        why = f"not used at the {level!r} level" if _is_root() else "not root"
        uid = Layer("own uid", False, f"{why}: jobs keep the worker's uid"
                    + ("" if bubblewrap or confine.holds(_is_root())
                       else ", so they can signal your processes and read your files"))
    always = Layer("rlimits, deadlines, cleanup, trusted judging", True,
                   "CPU, memory, processes, files, file size, files kept (tmp_mb), no core; outside deadlines; "
                   "every job process killed and checked; tests and expected values never enter the job")
    return sandbox, uid, network, always, confinement


_REQUIREMENTS = {"full": (True, True), "namespaces": (True, False), "uid": (False, True), "basic": (False, False)}


def isolation_of(level: str) -> Isolation:
    """The isolation of a level already resolved (by :func:`resolve_isolation`), without probing again.

    Example:
        >>> isolation_of("full").bubblewrap, isolation_of("uid").own_uid
        (True, True)
    """
    bubblewrap, own_uid = _REQUIREMENTS[level]
    return Isolation(level, bubblewrap, own_uid, _layers(level, bubblewrap, own_uid, "resolved earlier"))


def exposures(isolation: Isolation) -> list[str]:
    """What a job at ``isolation`` could do to the caller: signal their processes, read their home
    (nothing where ``landlock + seccomp`` holds: :func:`~referee.verifiers.code.confine.holds`).

    Example (as root, jobs at ``basic`` are root, which the layer does not make harmless):
        >>> exposures(isolation_of("full"))
        []
        >>> os.geteuid() != 0 or exposures(isolation_of("basic"))[0] == "signal your processes"
        True
    """
    if isolation.bubblewrap:  # own pid namespace, a minimal root without /home or /root
        return []
    if confined(isolation) and confine.holds(jobs_are_root=not isolation.own_uid and _is_root()):
        return []
    found = [] if isolation.own_uid else ["signal your processes"]
    home = os.path.realpath(os.path.expanduser("~"))
    if not isolation.own_uid or _others_can_enter(home):
        found.append(f"read your home {home}")
    return found


def _others_can_enter(path: str) -> bool:
    """Whether a user other than the owner can pass through every folder down to ``path`` and into it."""
    target = Path(path)
    try:
        return all(folder.stat().st_mode & stat.S_IXOTH for folder in [*reversed(target.parents), target])
    except OSError:
        return False


_warned: set[str] = set()


def resolve_isolation(requested: str = "auto", *, allow_weak: bool = False) -> Isolation:
    """The isolation to run untrusted code with: the best available for ``"auto"``, else exactly the
    level asked for; never one where a job could reach you (:func:`exposures`) unless it is named and
    ``allow_weak`` accepts it (a warning, once per process and level).

    Raises ``ValueError`` (one sentence saying what is missing and how to get it) for a level this
    machine cannot give, for ``auto`` where only a weak level is left, and for a weak level named
    without ``allow_weak``.

    Example:
        >>> resolve_isolation("basic", allow_weak=True).summary()
        'basic (...rlimits, deadlines, cleanup, trusted judging...)'
        >>> resolve_isolation("basic")
        Traceback (most recent call last):
        ...
        ValueError: isolation='basic' lets a job signal your processes and read your home ...; pass allow_weak_isolation=True with it to accept that, or install bubblewrap (apt-get install bubblewrap) for 'full' or 'namespaces'.
    """
    isolation = available_isolation(requested)
    weak = exposures(isolation)
    if not weak:
        return isolation
    what = " and ".join(weak)
    if requested == "auto":
        missing = isolation.layers[0].why if not isolation.bubblewrap else "bubblewrap does not run here"
        home = "" if not isolation.own_uid else f", or close your home to other users (chmod o-rwx {os.path.expanduser('~')})"
        raise ValueError(f"isolation='auto' found only {isolation.level!r} here, where a job could {what} "
                         f"({missing}): install bubblewrap (apt-get install bubblewrap){home}, or pass "
                         f"isolation={isolation.level!r} with allow_weak_isolation=True to accept that.")
    if not allow_weak:
        raise ValueError(f"isolation={isolation.level!r} lets a job {what}; pass allow_weak_isolation=True with it "
                         "to accept that, or install bubblewrap (apt-get install bubblewrap) for 'full' or 'namespaces'.")
    if isolation.level not in _warned:
        _warned.add(isolation.level)
        warnings.warn(f"referee's code sandbox runs at isolation={isolation.level!r} (allow_weak_isolation=True): "
                      f"a job could {what}; run untrusted code at 'full' (root and bubblewrap).",
                      RuntimeWarning, stacklevel=2)
    return isolation


def available_isolation(requested: str = "auto") -> Isolation:
    """What this machine gives: the best level for ``"auto"``, else exactly the level asked for (no
    fail-closed policy: :func:`resolve_isolation` adds it; ``referee doctor`` reports with this).

    Raises ``ValueError`` (one sentence saying what is missing) for a level this machine cannot give.

    Example:
        >>> available_isolation("basic").summary()
        'basic (...rlimits, deadlines, cleanup, trusted judging...)'
    """
    if requested != "auto" and requested not in _REQUIREMENTS:
        raise ValueError(f"isolation={requested!r} is not one of auto, {', '.join(LEVELS)}.")
    root = _is_root()
    if requested == "auto":
        bwrap_ok, bwrap_why = probe_bubblewrap()
        want_bwrap, want_uid = bwrap_ok, root
    else:
        want_bwrap, want_uid = _REQUIREMENTS[requested]
        bwrap_ok, bwrap_why = probe_bubblewrap() if want_bwrap else (False, f"not used at the {requested!r} level")
        if want_bwrap and not bwrap_ok:
            raise ValueError(f"isolation={requested!r} needs bubblewrap, but {bwrap_why}; "
                             "install it or pass isolation='auto'.")
        if want_uid and not root:
            raise ValueError(f"isolation={requested!r} needs root to give jobs their own uid; "
                             "run as root or pass isolation='auto'.")
    level = next(name for name, needs in _REQUIREMENTS.items() if needs == (want_bwrap, want_uid))
    return Isolation(level, want_bwrap, want_uid, _layers(level, want_bwrap, want_uid, bwrap_why))
