"""Which isolation layers this machine gives the code sandbox, why, and how to start a worker in them.

Levels, best first:

* ``full``: own pid, network, ipc, uts and mount namespaces with a minimal read-only root and a
  private ``/tmp``, and, because we are root, an unprivileged uid for each worker's jobs.
* ``namespaces``: the same namespaces inside a user namespace (not root): jobs keep the worker's uid.
* ``uid``: root where no namespaces can be made: own uid per worker and a network namespace, but
  the host's file system and process table stay visible (a private folder on the way to Python,
  such as pyenv's ``/root``, is covered in the worker's own mount namespace: see :mod:`.mounts`).
* ``basic``: neither: rlimits, a process group, outside deadlines and cleanup only.

Two mechanisms give the namespaces of ``full`` and ``namespaces``, the same root in both:
bubblewrap where it runs, else referee's own (:mod:`.namespaces`: a few syscalls, no binary), where
the kernel allows them (root, or unprivileged user namespaces). Setting ``REFEREE_NO_BUBBLEWRAP=1``
hides bubblewrap (as if it were not installed), for tests and for comparing the two.

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
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from . import confine
from .limits import DEFAULT_TMP_MB
from .namespaces import launcher_argv

LEVELS: tuple[str, ...] = ("full", "namespaces", "uid", "basic")
MECHANISMS: tuple[str, ...] = ("bubblewrap", "own namespaces")  # what makes the namespaces, preferred first
HIDE_BUBBLEWRAP_ENV = "REFEREE_NO_BUBBLEWRAP"
WORKER_MODULE = "referee.verifiers.sandbox.forkserver"
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
        ['namespaces', 'own uid', 'no network', 'rlimits, deadlines, cleanup, trusted judging', 'landlock + seccomp']
    """

    name: str
    on: bool
    why: str


@dataclass(frozen=True)
class Isolation:
    """The isolation a sandbox worker runs with: ``minimal_root`` when it has its own pid and mount
    namespaces with a minimal read-only root (made by ``mechanism``: bubblewrap or referee's own
    namespaces, ``""`` without), ``own_uid`` when its jobs run as an unprivileged uid of their own.

    Example:
        >>> iso = available_isolation("basic")
        >>> iso.level, iso.minimal_root, iso.own_uid, iso.mechanism
        ('basic', False, False, '')
    """

    level: str
    minimal_root: bool
    own_uid: bool
    layers: tuple[Layer, ...]
    mechanism: str = ""

    @property
    def bubblewrap(self) -> bool:
        """Whether bubblewrap makes the namespaces (not referee's own)."""
        return self.mechanism == "bubblewrap"

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


def read_only_paths(extra: Iterable[str] = ()) -> list[str]:
    """The folders a worker and its jobs need besides the system's: the Python installation, the
    environment, this package, and ``extra``, the folders outside the system's that a caller's jobs
    need (the judge gives its compilers': rustup's toolchain in a home, a JDK's configuration in /etc,
    :func:`~referee.verifiers.code.languages.toolchain_folders`), none inside another.

    Example:
        >>> any(sys.base_prefix.startswith(path) for path in ["/usr", *read_only_paths()])
        True
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     os.path.realpath(folder) in read_only_paths([folder])
        True
    """
    wanted = {sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix,
              str(Path(os.path.realpath(sys.executable)).parent.parent),
              str(Path(__file__).resolve().parents[1])}  # referee.verifiers, wherever it is installed
    wanted.update(extra)
    paths = sorted(os.path.realpath(p) for p in wanted if p and os.path.isdir(p))
    kept: list[str] = []
    for path in paths:  # sorted: a parent comes before its children
        if path.startswith(("/usr/", "/bin/", "/lib")) or any(path == k or path.startswith(k + "/") for k in kept):
            continue
        kept.append(path)
    return kept


def bubblewrap_argv(bwrap: str, *, user_namespace: bool, tmp_bytes: int = DEFAULT_TMP_MB << 20,
                    read_only: Iterable[str] = ()) -> list[str]:
    """The bubblewrap command line (up to ``--``) that runs a worker in its own namespaces, its root
    holding the folders of :func:`read_only_paths` (with ``read_only``) read-only.

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
    for path in [f for f in _SYSTEM_FILES if os.path.exists(f)] + read_only_paths(read_only):
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


def worker_argv(isolation: Isolation, worker_args: list[str], *, tmp_bytes: int = DEFAULT_TMP_MB << 20,
                read_only: Iterable[str] = ()) -> list[str]:
    """The full command that starts a fork-server worker with ``isolation`` (its minimal root, where it
    has one, holding ``read_only`` too: see :func:`read_only_paths`).

    Example:
        >>> worker_argv(available_isolation("basic"), ["--fd", "3"])[-4:]
        ['-m', 'referee.verifiers.sandbox.forkserver', '--fd', '3']
    """
    python = [sys.executable, "-I", "-B", "-m", WORKER_MODULE, *worker_args]
    if not isolation.minimal_root:
        return python
    if isolation.mechanism == "own namespaces":
        return launcher_argv(python, user_namespace=not _is_root(), tmp_bytes=tmp_bytes,
                             read_only=minimal_root_paths(read_only))
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise RuntimeError("bwrap is no longer on PATH; reinstall bubblewrap or pass isolation='basic'.")
    return bubblewrap_argv(bwrap, user_namespace=not _is_root(), tmp_bytes=tmp_bytes, read_only=read_only) + python


def minimal_root_paths(extra: Iterable[str] = ()) -> list[str]:
    """What the minimal root holds, read-only, besides ``/proc``, ``/dev`` and the private ``/tmp``:
    the system's folders (``/usr``, ``/bin``, ``/lib*``: a link stays a link), ``/etc/ld.so.cache``
    and ``/etc/localtime``, and :func:`read_only_paths` (with ``extra``). Nothing of ``/home``,
    ``/root``, ``/srv`` or the data, and the environment only read-only.

    Example:
        >>> paths = minimal_root_paths()
        >>> "/usr" in paths and not any(p in paths for p in ("/home", "/root", "/srv", "/tmp"))
        True
    """
    tops = [top for top in _TOP_LEVEL_SYSTEM if os.path.islink(top) or os.path.isdir(top)]
    return tops + [f for f in _SYSTEM_FILES if os.path.exists(f)] + read_only_paths(extra)


def bubblewrap_hidden() -> bool:
    """Whether ``REFEREE_NO_BUBBLEWRAP`` hides bubblewrap (set to anything but ``""`` or ``0``).

    Example:
        >>> os.environ.get(HIDE_BUBBLEWRAP_ENV, "") in ("", "0") or bubblewrap_hidden()
        True
    """
    return os.environ.get(HIDE_BUBBLEWRAP_ENV, "") not in ("", "0")


@functools.lru_cache(maxsize=1)
def probe_bubblewrap() -> tuple[bool, str]:
    """Whether bubblewrap can start a worker here (tried once per process), and why.

    Example:
        >>> ok, why = probe_bubblewrap()
        >>> isinstance(ok, bool) and bool(why)
        True
    """
    if bubblewrap_hidden():
        return False, f"bubblewrap is hidden by {HIDE_BUBBLEWRAP_ENV}"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False, "bwrap is not installed (apt-get install bubblewrap)"
    argv = bubblewrap_argv(bwrap, user_namespace=not _is_root())
    failure = _starts_a_worker(argv, f"bwrap at {bwrap}")
    if failure:
        return False, failure
    version = subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout.strip()
    return True, f"{version or 'bwrap'} at {bwrap} starts workers in their own namespaces"


def _starts_a_worker(argv: list[str], what: str) -> str:
    """Run ``argv`` with Python importing the worker after it: ``""`` when that works, else why not."""
    argv = [*argv, sys.executable, "-I", "-B", "-c", f"import {WORKER_MODULE}"]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=60, env=SANDBOX_ENV)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{what} failed to run: {exc}"
    if done.returncode != 0:
        error = done.stderr.decode(errors="replace").strip().splitlines()
        return f"{what} cannot start a sandbox here: {error[-1] if error else done.returncode}"
    return ""


@functools.lru_cache(maxsize=1)
def probe_own_namespaces() -> tuple[bool, str]:
    """Whether referee's own namespaces (:mod:`.namespaces`) can start a worker here (tried once per
    process), and why: the kernel may refuse them (user namespaces disabled, a container's seccomp
    profile: ``EPERM``, ``EINVAL``, ``ENOSPC`` past ``user.max_user_namespaces``).

    Example:
        >>> ok, why = probe_own_namespaces()
        >>> isinstance(ok, bool) and bool(why)
        True
    """
    user = "" if _is_root() else " in a user namespace"
    failure = _starts_a_worker(launcher_argv([], user_namespace=not _is_root(), tmp_bytes=1 << 20,
                                             read_only=minimal_root_paths()), "referee's own namespaces")
    if failure:
        return False, failure
    return True, f"referee's own namespaces{user} (unshare, mount, pivot_root; no binary) start workers"


def namespace_mechanism() -> tuple[str, str]:
    """What makes a worker's namespaces here, preferred first (:data:`MECHANISMS`; ``""`` when
    nothing can), and why: what it is, or why neither works.

    Example:
        >>> mechanism, why = namespace_mechanism()
        >>> mechanism in ("", *MECHANISMS) and bool(why)
        True
    """
    bwrap_ok, bwrap_why = probe_bubblewrap()
    if bwrap_ok:
        return "bubblewrap", bwrap_why
    own_ok, own_why = probe_own_namespaces()
    if own_ok:
        return "own namespaces", f"{own_why} ({bwrap_why})"
    return "", f"{bwrap_why}, and {own_why}"


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


def _confinement(mechanism: str, own_uid: bool) -> Layer:
    if mechanism:
        return Layer(confine.LAYER_NAME, False, f"not needed: the namespaces ({mechanism}) hold the jobs")
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


def _layers(level: str, mechanism: str, own_uid: bool, why: str) -> tuple[Layer, ...]:
    confinement = _confinement(mechanism, own_uid)
    if mechanism:
        sandbox = Layer("namespaces", True, f"{why}: own pid, network, ipc, uts and mount namespaces, "
                                            "read-only minimal root, private in-memory /tmp and /dev/shm of tmp_mb each")
        network = Layer("no network", True, f"own network namespace ({mechanism})")
    else:
        sandbox = Layer("namespaces", False, why)
        network = Layer("no network", own_uid or confinement.on,
                        "own network namespace (unshare as root)" if own_uid
                        else "no socket but an AF_UNIX pair, no TCP (landlock + seccomp)" if confinement.on
                        else "no network namespace without namespaces or root: jobs can open sockets")
    if own_uid:
        hidden = None if mechanism else unreadable_for_others(sysconfig.get_paths()["stdlib"])
        uid = Layer("own uid", True, "running as root: each worker's jobs run as their own unprivileged uid"
                    + ("" if mechanism else "; /tmp, /var/tmp and /dev/shm are the worker's own, in memory, of tmp_mb")
                    + (f"; they cannot pass through {hidden}, so the worker covers it, in a mount namespace of "
                       "its own, with an empty folder into which only Python and this package are bound back"
                       if hidden else ""))
    else:
        not_used = f"not used at the {level!r} level" if _is_root() else "not root"
        uid = Layer("own uid", False, f"{not_used}: jobs keep the worker's uid"
                    + ("" if mechanism or confine.holds(_is_root())
                       else ", so they can signal your processes and read your files"))
    always = Layer("rlimits, deadlines, cleanup, trusted judging", True,
                   "CPU, memory, processes, files, file size, files kept (tmp_mb), no core; outside deadlines; "
                   "every job process killed and checked; tests and expected values never enter the job")
    return sandbox, uid, network, always, confinement


# level -> (own pid and mount namespaces with a minimal root, own uid)
_REQUIREMENTS = {"full": (True, True), "namespaces": (True, False), "uid": (False, True), "basic": (False, False)}


def isolation_of(level: str, mechanism: str | None = None) -> Isolation:
    """The isolation of a level already resolved (by :func:`resolve_isolation`), without probing
    again: its namespaces made by ``mechanism`` (the resolved one's; ``None``: bubblewrap where
    it is on ``PATH`` and not hidden, else referee's own).

    Example:
        >>> isolation_of("full", "own namespaces").minimal_root, isolation_of("uid").own_uid
        (True, True)
        >>> isolation_of("basic", "bubblewrap").mechanism
        ''
    """
    minimal_root, own_uid = _REQUIREMENTS[level]
    if not minimal_root:
        mechanism = ""
    elif mechanism is None:
        mechanism = "bubblewrap" if shutil.which("bwrap") and not bubblewrap_hidden() else "own namespaces"
    return Isolation(level, minimal_root, own_uid, _layers(level, mechanism, own_uid, f"{mechanism}, resolved earlier"),
                     mechanism)


def exposures(isolation: Isolation) -> list[str]:
    """What a job at ``isolation`` could do to the caller: signal their processes, read their home
    (nothing where ``landlock + seccomp`` holds: :func:`~referee.verifiers.sandbox.confine.holds`).

    Example (as root, jobs at ``basic`` are root, which the layer does not make harmless):
        >>> exposures(isolation_of("full"))
        []
        >>> os.geteuid() != 0 or exposures(isolation_of("basic"))[0] == "signal your processes"
        True
    """
    if isolation.minimal_root:  # own pid and mount namespaces, a minimal root without /home or /root
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
        ValueError: isolation='basic' lets a job signal your processes and read your home ...; pass allow_weak_isolation=True with it to accept that, or use 'full' or 'namespaces' where namespaces can be made (user namespaces allowed, or bubblewrap: apt-get install bubblewrap).
    """
    isolation = available_isolation(requested)
    weak = exposures(isolation)
    if not weak:
        return isolation
    what = " and ".join(weak)
    if requested == "auto":
        missing = isolation.layers[0].why
        home = "" if not isolation.own_uid else f", or close your home to other users (chmod o-rwx {os.path.expanduser('~')})"
        raise ValueError(f"isolation='auto' found only {isolation.level!r} here, where a job could {what} "
                         f"({missing}): allow user namespaces or install bubblewrap (apt-get install bubblewrap)"
                         f"{home}, or pass isolation={isolation.level!r} with allow_weak_isolation=True to accept that.")
    if not allow_weak:
        raise ValueError(f"isolation={isolation.level!r} lets a job {what}; pass allow_weak_isolation=True with it "
                         "to accept that, or use 'full' or 'namespaces' where namespaces can be made (user namespaces "
                         "allowed, or bubblewrap: apt-get install bubblewrap).")
    if isolation.level not in _warned:
        _warned.add(isolation.level)
        warnings.warn(f"referee's code sandbox runs at isolation={isolation.level!r} (allow_weak_isolation=True): "
                      f"a job could {what}; run untrusted code at 'full' (root, with namespaces).",
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
        mechanism, why = namespace_mechanism()
        want_uid = root
    else:
        want_root, want_uid = _REQUIREMENTS[requested]
        mechanism, why = namespace_mechanism() if want_root else ("", f"not used at the {requested!r} level")
        if want_root and not mechanism:
            raise ValueError(f"isolation={requested!r} needs namespaces of its own, but {why}; allow user namespaces "
                             "or install bubblewrap (apt-get install bubblewrap), or pass isolation='auto'.")
        if want_uid and not root:
            raise ValueError(f"isolation={requested!r} needs root to give jobs their own uid; "
                             "run as root or pass isolation='auto'.")
    wanted = (bool(mechanism), want_uid)
    level = next(name for name, needs in _REQUIREMENTS.items() if needs == wanted)
    return Isolation(level, wanted[0], want_uid, _layers(level, mechanism, want_uid, why), mechanism)
