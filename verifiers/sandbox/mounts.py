"""Letting the jobs' own uid reach the Python installation where no namespaces build them a root.

At the ``uid`` level jobs see the host's file system as their own uid. A Python installed
under a folder that other users cannot pass through (pyenv in a 0700 ``/root``, a venv in a
private home) would leave them only the modules the worker had already imported, and a correct
program that imports ``calendar`` would fail to load. The worker (root) therefore takes a mount
namespace of its own, private so that nothing in it reaches the host, and covers each such
folder with an empty tmpfs that others may pass through, into which it binds back the folders
the jobs need and nothing else. The host's folders keep their permissions.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from .isolation import unreadable_for_others

_CLONE_NEWNS = 0x00020000
_MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x1000, 0x4000, 0x40000
_LIBC = ctypes.CDLL(None, use_errno=True)


def blocked_paths(paths: Iterable[str]) -> dict[str, list[str]]:
    """The folders that stop other users on their way to ``paths``, each with the paths it stops.

    A path that others cannot list itself is left out: no mount on the way would change that.

    Example:
        >>> import tempfile
        >>> private = tempfile.mkdtemp()  # 0700
        >>> os.makedirs(f"{private}/python/lib")
        >>> blocked_paths([f"{private}/python/lib", "/usr/lib"]) == {private: [f"{private}/python/lib"]}
        True
        >>> blocked_paths([private])
        {}
    """
    blocked: dict[str, list[str]] = {}
    for path in map(os.path.realpath, paths):
        folder = unreadable_for_others(path)
        if folder is not None and folder not in (path, "/"):
            blocked.setdefault(folder, []).append(path)
    return blocked


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def raw(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    if _LIBC.mount(raw(source), raw(target), raw(fstype), flags, raw(data)) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"mount on {target}: {os.strerror(error)}")


def _covered(folder: str, paths: list[str], cover: Callable[[], None]) -> None:
    """Run ``cover`` (a mount over ``folder``), then bind ``paths`` (inside ``folder``) back where they were."""
    handles = {path: os.open(path, os.O_PATH | os.O_DIRECTORY) for path in paths}  # reachable once covered
    try:
        cover()
        for path, handle in handles.items():
            for step in [*reversed(Path(path).relative_to(folder).parents), Path(path).relative_to(folder)]:
                made = os.path.join(folder, step)
                if not os.path.isdir(made):
                    os.mkdir(made)
                    os.chmod(made, 0o755)  # whatever the umask
            _mount(f"/proc/self/fd/{handle}", path, None, _MS_BIND | _MS_REC)
    finally:
        for handle in handles.values():
            os.close(handle)


def _cover(folder: str, paths: list[str]) -> None:
    """Hide ``folder`` under a tmpfs that others may pass through, with ``paths`` bound back in."""
    _covered(folder, paths, lambda: _mount("tmpfs", folder, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755"))


def let_others_reach(paths: Iterable[str]) -> bool:
    """Make ``paths`` reachable for every uid, in a private mount namespace of this process when
    a folder on their way stops other users (that needs root). Whether they are reachable now.

    Example (nothing stops other users on the way to the system's folders: no namespace needed):
        >>> let_others_reach(["/usr/lib"])
        True
    """
    blocked = blocked_paths(paths)
    if not blocked:
        return True
    try:
        if _LIBC.unshare(_CLONE_NEWNS) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"unshare of the mount namespace: {os.strerror(error)}")
        _mount(None, "/", None, _MS_REC | _MS_PRIVATE)  # no mount of ours reaches the host
        for folder, stopped in blocked.items():
            _cover(folder, stopped)
    except OSError:
        return False
    return not blocked_paths(paths)


def private_shared_folders(size_bytes: int, *, keep: Iterable[str] = (), folders: Iterable[str] = ("/tmp", "/var/tmp"),
                           base: str = "/dev/shm") -> bool:
    """Give this process (and the jobs it forks) its own in-memory ``base`` of ``size_bytes``, with
    ``folders`` bound onto folders inside it, in a private mount namespace (needs root): whatever
    a job writes there counts against one bound, and vanishes with the worker. What ``keep``
    names inside one of ``folders`` (a checkout under ``/tmp``) is bound back at its place, so
    the bound holds wherever the checkout lives. Whether ``base`` is private now.

    Example (without root there is no mount namespace to take):
        >>> os.geteuid() == 0 or private_shared_folders(1 << 20) is False
        True
    """
    kept = [os.path.realpath(path) for path in keep]

    def holds_kept(folder: str) -> bool:
        return any(path == folder or path.startswith(folder + "/") for path in kept)

    if not os.path.isdir(base) or holds_kept(base):
        return False
    inodes = max(1024, size_bytes // 4096)  # empty files and folders cost no blocks: bound them too
    try:
        if _LIBC.unshare(_CLONE_NEWNS) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"unshare of the mount namespace: {os.strerror(error)}")
        _mount(None, "/", None, _MS_REC | _MS_PRIVATE)  # no mount of ours reaches the host
        _mount("tmpfs", base, "tmpfs", _MS_NOSUID | _MS_NODEV, f"size={int(size_bytes)},nr_inodes={inodes},mode=1777")
        for folder in folders:
            if not os.path.isdir(folder) or os.path.islink(folder) or folder in kept:
                continue
            inside = os.path.join(base, "." + folder.strip("/").replace("/", "-"))
            os.mkdir(inside)
            os.chmod(inside, 0o1777)
            held = [path for path in kept if path.startswith(folder + "/")]
            _covered(folder, held, lambda inside=inside, folder=folder: _mount(inside, folder, None, _MS_BIND))
    except OSError:
        return False
    return True
