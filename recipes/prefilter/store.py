"""Results on disk: atomic file writes and the resumable store of finished chunks.

A run's ``state/`` folder holds ``run.json`` (what was asked: model, data, rewards,
sampling, sharding) and one ``chunk-NNNNNNNN.json`` per finished chunk. Every file appears
whole or not at all (written to a temporary name, synced, then renamed), so a run killed at
any moment leaves only finished chunks behind and a rerun continues from them.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

_CHUNK_RE = re.compile(r"^chunk-(\d{8})\.json$")


@functools.lru_cache(maxsize=1)
def _umask() -> int:
    mask = os.umask(0)  # reading the umask means setting it: done once, then cached
    os.umask(mask)
    return mask


def _permissions(base: int) -> int:
    """``base`` less the umask: what a plain ``open`` would have created (mkstemp and
    mkdtemp make private files and folders)."""
    return base & ~_umask()


@contextmanager
def atomic_output(path: str | Path, mode: str = "w") -> Iterator[IO[Any]]:
    """Write ``path`` through a temporary file that replaces it only when the block succeeds.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
        >>> with atomic_output(path) as handle:
        ...     _ = handle.write("done")
        >>> open(path).read(), oct(os.stat(path).st_mode & 0o777) == oct(_permissions(0o666))
        ('done', True)
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.chmod(temporary, _permissions(0o666))
    try:
        with os.fdopen(descriptor, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_json(path: str | Path, payload: Any) -> None:
    """Write ``payload`` as JSON to ``path`` atomically.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "report.json")
        >>> write_json(path, {"kept": 3})
        >>> json.load(open(path))
        {'kept': 3}
    """
    with atomic_output(path) as handle:
        json.dump(payload, handle, ensure_ascii=False, indent=2, default=str)
        handle.write("\n")


@contextmanager
def atomic_folder(path: str | Path) -> Iterator[Path]:
    """Build a folder under a temporary name and put it in place of ``path`` on success.

    Example:
        >>> import os, tempfile
        >>> target = os.path.join(tempfile.mkdtemp(), "kept")
        >>> with atomic_folder(target) as folder:
        ...     _ = (folder / "a.txt").write_text("x")
        >>> sorted(os.listdir(target))
        ['a.txt']
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    os.chmod(temporary, _permissions(0o777))
    try:
        yield temporary
        if path.exists():
            retired = path.with_name(f".{path.name}.old")
            shutil.rmtree(retired, ignore_errors=True)
            path.rename(retired)
            temporary.rename(path)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            temporary.rename(path)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise


class RunMismatchError(ValueError):
    """The output folder holds a run with other settings than the ones asked for.

    Example:
        >>> issubclass(RunMismatchError, ValueError)
        True
    """


def describe_difference(saved: dict[str, Any], wanted: dict[str, Any], prefix: str = "") -> str | None:
    """The first setting that differs between two run descriptions, as ``key: old -> new``.

    Example:
        >>> describe_difference({"sampling": {"seed": 0}}, {"sampling": {"seed": 1}})
        'sampling.seed: 0 -> 1'
    """
    for key in sorted(set(saved) | set(wanted)):
        old, new = saved.get(key), wanted.get(key)
        if isinstance(old, dict) and isinstance(new, dict):
            found = describe_difference(old, new, f"{prefix}{key}.")
            if found:
                return found
        elif old != new:
            return f"{prefix}{key}: {old!r} -> {new!r}"
    return None


class ChunkStore:
    """The finished chunks of one run, in ``folder`` (usually ``OUT/state``).

    Example:
        >>> import tempfile
        >>> store = ChunkStore(tempfile.mkdtemp())
        >>> store.open({"settings": {"model": "tiny"}, "shard": {"index": 0, "count": 1}})
        >>> store.write(3, {"rows": [{"row_index": 6}]})
        >>> store.done(), store.read(3)["rows"]
        ([3], [{'row_index': 6}])
        >>> store.open({"settings": {"model": "other"}, "shard": {"index": 0, "count": 1}})
        Traceback (most recent call last):
        ...
        referee.recipes.prefilter.store.RunMismatchError: ...
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    @property
    def manifest_path(self) -> Path:
        return self.folder / "run.json"

    def manifest(self) -> dict[str, Any]:
        """The saved run description (raises ``FileNotFoundError`` when there is none)."""
        return json.loads(self.manifest_path.read_text(encoding="utf-8"))

    def open(self, manifest: dict[str, Any], *, compared: Sequence[str] = ("version", "settings", "shard")) -> None:
        """Start a run described by ``manifest``, or check that its ``compared`` parts match the
        run already here (the other parts, such as the keep bounds, are updated)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.manifest_path.exists():
            saved = self.manifest()
            difference = describe_difference({k: saved.get(k) for k in compared}, {k: manifest.get(k) for k in compared})
            if difference:
                raise RunMismatchError(
                    f"{self.folder.parent} holds a run with other settings ({difference}); "
                    "rerun with the same settings to resume it, or choose another --out."
                )
            if saved == manifest:
                return
        write_json(self.manifest_path, manifest)

    def path(self, index: int) -> Path:
        return self.folder / f"chunk-{index:08d}.json"

    def done(self) -> list[int]:
        """Indices of the finished chunks, sorted."""
        if not self.folder.is_dir():
            return []
        return sorted(int(m.group(1)) for name in os.listdir(self.folder) if (m := _CHUNK_RE.match(name)))

    def write(self, index: int, payload: dict[str, Any]) -> None:
        """Save chunk ``index`` (atomically)."""
        with atomic_output(self.path(index)) as handle:
            json.dump(payload, handle, ensure_ascii=False, default=str)

    def read(self, index: int) -> dict[str, Any]:
        """The saved payload of chunk ``index``."""
        return json.loads(self.path(index).read_text(encoding="utf-8"))
