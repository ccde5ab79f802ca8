"""Reading JSONL files of rows (golden cases, scored completions, datasets) in one place."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


def jsonl_rows(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """``(line number, row)`` for every non-blank line; a line that is not a JSON object gives
    ``(line number, reason)`` instead, so each caller decides whether to skip, report or stop.

    Example:
        >>> list(jsonl_rows(['{"a": 1}', "", "{oops", "[1]"]))  # doctest: +NORMALIZE_WHITESPACE
        [(1, {'a': 1}), (3, 'not valid JSON (Expecting property name enclosed in double quotes)'),
         (4, 'a JSON object is needed, got list')]
    """
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, f"not valid JSON ({exc.msg})"
            continue
        if isinstance(row, dict):
            yield number, row
        else:
            yield number, f"a JSON object is needed, got {type(row).__name__}"


def open_jsonl(path: str | Path) -> Any:
    """A text stream over a JSONL file, gzip-compressed when its name ends in ``.gz``.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "rows.jsonl.gz")
        >>> with gzip.open(path, "wt") as out:
        ...     _ = out.write('{"a": 1}\\n')
        >>> with open_jsonl(path) as lines:
        ...     list(jsonl_rows(lines))
        [(1, {'a': 1})]
    """
    opener = gzip.open if str(path).endswith(".gz") else open
    return opener(path, "rt", encoding="utf-8", errors="replace")
