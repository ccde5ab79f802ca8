"""Read the rows to pre-filter from a JSONL or Parquet file, a ``datasets`` folder, or the hub.

A JSONL line that is not a JSON object becomes a :class:`BadRow` (reported, never fatal);
other formats are read with ``datasets`` / ``pyarrow`` and have a fixed schema.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from referee.rewards.jsonl import jsonl_rows, open_jsonl

from ..errors import RecipeError

if TYPE_CHECKING:
    from datasets import Dataset

_FINGERPRINT_SAMPLES = 64  # rows hashed to recognise a dataset again (on resume and merge)


@dataclass(frozen=True)
class BadRow:
    """A row that could not be read; ``reason`` says why in one line.

    Example:
        >>> BadRow("line 3: not valid JSON").reason
        'line 3: not valid JSON'
    """

    reason: str


Row = Union[dict[str, Any], BadRow]


class Rows:
    """The dataset's rows by position, each a dict (or a :class:`BadRow`).

    Example:
        >>> rows = Rows([{"prompt": "1 + 1 = ", "answer": "2"}, BadRow("line 2: not valid JSON")])
        >>> len(rows), rows.slice(0, 1)
        (2, [{'prompt': '1 + 1 = ', 'answer': '2'}])
        >>> rows.fingerprint() == Rows(rows.slice(0, 2)).fingerprint()
        True
    """

    def __init__(self, table: list[Row] | Dataset) -> None:
        self._table = table

    def __len__(self) -> int:
        return len(self._table)

    def slice(self, start: int, stop: int) -> list[Row]:
        """Rows ``start`` to ``stop - 1``."""
        if isinstance(self._table, list):
            return self._table[start:stop]
        return self._table.select(range(start, min(stop, len(self._table)))).to_list()

    def fingerprint(self) -> str:
        """A short hash of the row count and a spread of rows: equal for the same data read on
        any machine, different (almost surely) for other data."""
        count = len(self)
        step = max(1, count // _FINGERPRINT_SAMPLES)
        digest = hashlib.sha256(str(count).encode())
        for index in range(0, count, step):
            row = self.slice(index, index + 1)[0]
            payload = {"bad": row.reason} if isinstance(row, BadRow) else row
            digest.update(json.dumps(payload, sort_keys=True, default=str).encode())
        return digest.hexdigest()[:16]


def read_jsonl(path: str | Path) -> list[Row]:
    """Every non-blank line of a JSONL file (``.gz`` too) as a dict, or a :class:`BadRow`.

    Example:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "rows.jsonl")
        >>> _ = open(path, "w").write('{"prompt": "2 + 2 = "}\\n\\n{oops\\n[1]\\n')
        >>> read_jsonl(path)  # doctest: +NORMALIZE_WHITESPACE
        [{'prompt': '2 + 2 = '}, BadRow(reason='line 3: not valid JSON (Expecting property name enclosed in
        double quotes)'), BadRow(reason='line 4: a JSON object is needed, got list')]
    """
    with open_jsonl(path) as lines:
        return [BadRow(f"line {number}: {row}") if isinstance(row, str) else row for number, row in jsonl_rows(lines)]


def _pick_split(loaded: Any, split: str, source: str) -> Dataset:
    from datasets import DatasetDict

    if not isinstance(loaded, DatasetDict):
        return loaded
    if split not in loaded:
        raise RecipeError(f"{source} has no split {split!r}; pass --split with one of {', '.join(loaded)}.")
    return loaded[split]


def load_rows(source: str, *, split: str = "train", config_name: str | None = None) -> Rows:
    """The rows of ``source``: a ``.jsonl``/``.jsonl.gz`` or ``.parquet`` file, a folder made
    by ``datasets``' ``save_to_disk`` (``split`` picks from a ``DatasetDict``), another folder
    of data files, or a hub dataset name (``config_name`` and ``split`` as in ``load_dataset``).

    Example:
        >>> import tempfile, os
        >>> from datasets import Dataset
        >>> folder = os.path.join(tempfile.mkdtemp(), "ds")
        >>> Dataset.from_list([{"prompt": "1 + 2 = ", "answer": "3"}]).save_to_disk(folder)  # doctest: +ELLIPSIS
        ...
        >>> load_rows(folder).slice(0, 1)
        [{'prompt': '1 + 2 = ', 'answer': '3'}]
    """
    path = Path(source)
    name = path.name.lower()
    if path.is_file():
        if name.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
            return Rows(read_jsonl(path))
        if name.endswith(".parquet"):
            import pyarrow.parquet as pq
            from datasets import Dataset

            return Rows(Dataset(pq.read_table(path)))
        if name.endswith(".json"):
            from datasets import load_dataset

            return Rows(load_dataset("json", data_files=str(path), split="train"))
        raise RecipeError(f"Cannot read {source!r}: use a .jsonl, .jsonl.gz or .parquet file, a datasets folder or a hub name.")
    if path.is_dir():
        from datasets import load_dataset, load_from_disk

        saved = any((path / marker).is_file() for marker in ("dataset_info.json", "dataset_dict.json", "state.json"))
        try:
            loaded = load_from_disk(str(path)) if saved else load_dataset(str(path), config_name, split=split)
        except Exception as exc:  # datasets raises its own types (and FileNotFoundError) for a folder it cannot read
            raise RecipeError(f"Cannot read the folder {source!r} as a dataset ({type(exc).__name__}: {exc}); give a "
                             ".jsonl/.parquet file, a folder saved by datasets or a folder of such files.") from None
        return Rows(_pick_split(loaded, split, source))
    if source.startswith((".", "/", "~")) or name.endswith((".jsonl", ".parquet", ".json", ".gz")):
        raise RecipeError(f"No file or folder {source!r}; check the --data path.")
    from datasets import load_dataset

    from .sources import check_source

    check_source(source, "dataset", "data")  # at once, not after datasets' retries

    return Rows(load_dataset(source, config_name, split=split))
