"""Merge the output folders of shard runs (``--shard-index/--num-shards``) into one result."""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .bounds import KeepBounds
from .finalize import finalize
from .run import chunk_size_of, report_header
from .store import ChunkStore, describe_difference


def _copy_atomic(source: Path, target: Path) -> None:
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    shutil.copyfile(source, temporary)
    os.replace(temporary, target)


def _read_manifest(folder: Path) -> dict[str, Any]:
    store = ChunkStore(folder / "state")
    if not store.manifest_path.is_file():
        raise ValueError(f"{folder} is not a prefilter output folder (no state/run.json); pass the --out folders of "
                         "the shard runs.")
    return store.manifest()


def merge_runs(folders: Sequence[str | Path], out: str | Path, *, keep: KeepBounds | None = None,
               group_size: int | None = None, output_format: str | None = None) -> dict[str, Any]:
    """Gather the chunks of shard runs of one pre-filter run into ``out`` and write its
    results, exactly as one unsharded run would have. ``keep``, ``group_size`` and
    ``output_format`` default to those of the first shard.

    Every chunk of the dataset must be in exactly one of ``folders``; ``out`` becomes a
    complete run folder (rerunning the unsharded command on it only rewrites the results).

    Example:
        >>> import json, tempfile
        >>> base = Path(tempfile.mkdtemp())
        >>> manifest = {"settings": {"data": {"rows": 3}, "chunk_size": 2, "model": "m", "rewards": ["r"],
        ...             "success_reward": "r", "threshold": 1.0, "num_generations": 2, "sampling": {}, "backend": "b"},
        ...             "data_source": "d.jsonl", "keep": {"low": 0.5, "high": 1.0}, "group_size": 2,
        ...             "output_format": "jsonl"}
        >>> for shard in (0, 1):
        ...     store = ChunkStore(base / f"shard{shard}" / "state")
        ...     store.open({**manifest, "shard": {"index": shard, "count": 2}})
        ...     store.write(shard, {"rows": [{"row_index": 2 * shard + i, "pass_rate": 0.5} for i in range(2 - shard)]})
        >>> report = merge_runs([base / "shard1", base / "shard0"], base / "merged")
        >>> report["rows"], report["kept"], [row["row_index"] for row in map(json.loads, open(base / "merged/all.jsonl"))]
        (3, 3, [0, 1, 2])
    """
    merged, num_chunks, manifest = gather_shards(folders, out, keep=keep, group_size=group_size,
                                                 output_format=output_format)
    return finalize(merged, range(num_chunks), out, keep=KeepBounds(**manifest["keep"]),
                    group_size=manifest["group_size"], output_format=manifest["output_format"],
                    run=report_header(manifest))


def gather_shards(folders: Sequence[str | Path], out: str | Path, *, keep: KeepBounds | None = None,
                  group_size: int | None = None,
                  output_format: str | None = None) -> tuple[ChunkStore, int, dict[str, Any]]:
    """Check that ``folders`` are the shards of one run holding every chunk once, and copy their
    chunks into ``out``'s store; returns that store, the number of chunks and its manifest
    (see :func:`merge_runs`, which then writes the results)."""
    if not folders:
        raise ValueError("No shard folders to merge; pass the --out folders of the shard runs.")
    paths = [Path(folder) for folder in folders]
    manifests = [_read_manifest(path) for path in paths]
    first = manifests[0]
    for path, manifest in zip(paths[1:], manifests[1:]):
        difference = describe_difference({k: first.get(k) for k in ("version", "settings")},
                                         {k: manifest.get(k) for k in ("version", "settings")})
        if difference:
            raise ValueError(f"{path} was run with other settings than {paths[0]} ({difference}); only shards of "
                             "one run can be merged.")
    settings = first["settings"]
    num_chunks = math.ceil(settings["data"]["rows"] / chunk_size_of(settings))
    owners: dict[int, ChunkStore] = {}
    for path in paths:
        store = ChunkStore(path / "state")
        for index in store.done():
            if index in owners and owners[index].folder.resolve() != store.folder.resolve():
                raise ValueError(f"Chunk {index} is in both {owners[index].folder.parent} and {path}; pass each "
                                 "shard's folder once, and shards of a single --num-shards split.")
            owners[index] = store
    missing = [index for index in range(num_chunks) if index not in owners]
    if missing:
        raise ValueError(f"{len(missing)} of {num_chunks} chunks are missing (first: {missing[:5]}); finish the shard "
                         "runs (rerun their commands: they resume) or add their folders.")
    keep = keep or KeepBounds(**first["keep"])
    group_size = group_size or first["group_size"]
    output_format = output_format or first["output_format"]
    merged = ChunkStore(Path(out) / "state")
    manifest = {**first, "shard": {"index": 0, "count": 1}, "keep": {"low": keep.low, "high": keep.high},
                "group_size": group_size, "output_format": output_format}
    merged.open(manifest)
    for index, store in owners.items():
        if store.folder.resolve() != merged.folder.resolve() and not merged.path(index).exists():
            _copy_atomic(store.path(index), merged.path(index))
    return merged, num_chunks, manifest
