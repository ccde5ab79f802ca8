"""Write result rows as JSONL (streamed), Parquet or a ``datasets`` folder, atomically."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .store import atomic_folder, atomic_output

OUTPUT_FORMATS: tuple[str, ...] = ("jsonl", "parquet", "datasets")


def output_path(folder: str | Path, stem: str, output_format: str) -> Path:
    """Where rows called ``stem`` go in ``folder`` for ``output_format``.

    Example:
        >>> output_path("out", "kept", "parquet").as_posix(), output_path("out", "kept", "datasets").as_posix()
        ('out/kept.parquet', 'out/kept')
    """
    if output_format not in OUTPUT_FORMATS:
        raise ValueError(f"Unknown output format {output_format!r}; choose one of {', '.join(OUTPUT_FORMATS)}.")
    suffix = "" if output_format == "datasets" else f".{output_format}"
    return Path(folder) / f"{stem}{suffix}"


def _as_dataset(rows: list[dict[str, Any]], stem: str) -> Any:
    from datasets import Dataset

    columns = list(dict.fromkeys(key for row in rows for key in row))
    try:
        return Dataset.from_list([{key: row.get(key) for key in columns} for row in rows])
    except Exception as exc:  # pyarrow raises several types for columns it cannot type
        raise ValueError(
            f"Cannot store {stem} rows as a table ({type(exc).__name__}: {exc}); a column probably mixes types "
            "across rows. Rerun with --format jsonl: the finished chunks are reused, nothing is generated again."
        ) from None


@contextmanager
def row_writer(folder: str | Path, stem: str, output_format: str) -> Iterator[Callable[[dict[str, Any]], None]]:
    """Yield an ``add(row)`` function; the rows appear at :func:`output_path` when the block ends.

    JSONL is streamed; Parquet and ``datasets`` rows are gathered, then written with
    ``datasets`` (missing columns are filled with nulls).

    Example:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> with row_writer(folder, "kept", "jsonl") as add:
        ...     add({"prompt": "1 + 1 = ", "pass_rate": 0.5})
        >>> open(output_path(folder, "kept", "jsonl")).read()
        '{"prompt": "1 + 1 = ", "pass_rate": 0.5}\\n'
    """
    path = output_path(folder, stem, output_format)
    if output_format == "jsonl":
        with atomic_output(path) as handle:

            def add(row: dict[str, Any]) -> None:
                handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")

            yield add
        return
    rows: list[dict[str, Any]] = []
    yield rows.append
    dataset = _as_dataset(rows, stem)
    if output_format == "parquet":
        with atomic_output(path, "wb") as handle:
            dataset.to_parquet(handle)
    else:
        with atomic_folder(path) as temporary:
            dataset.save_to_disk(str(temporary))
