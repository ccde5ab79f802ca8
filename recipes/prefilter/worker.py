"""A data-parallel worker process: ``python -m referee.recipes.prefilter.worker SPEC.json``.

``SPEC.json`` holds the run's config (with ``data_parallel_size=1``) and the chunks this
worker takes; the worker writes them into the run's chunk store and exits.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ..common.backends import build_backend
from .config import PrefilterConfig
from .run import open_run, process_chunks


def run_worker(spec_path: str | Path) -> list[int]:
    """Process the chunks listed in ``spec_path`` that are still pending; return them.

    Example:
        >>> import tempfile
        >>> from referee.recipes.prefilter.store import write_json
        >>> folder = tempfile.mkdtemp()
        >>> _ = open(f"{folder}/rows.jsonl", "w").write('{"prompt": "1 + 1 = "}\\n')
        >>> config = PrefilterConfig(model="unused", data=f"{folder}/rows.jsonl", out=f"{folder}/out",
        ...                          rewards=("referee.rewards.completions:completion_text",))
        >>> write_json(f"{folder}/spec.json", {"config": config.to_dict(), "chunks": []})
        >>> run_worker(f"{folder}/spec.json")
        []
    """
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    config = PrefilterConfig.from_dict(spec["config"])
    run = open_run(config)
    pending = set(run.pending)
    chunks = [index for index in spec["chunks"] if index in pending]
    if chunks:
        from referee.recipes.common.loading import load_tokenizer

        tokenizer = load_tokenizer(config.model)
        process_chunks(run, chunks, build_backend(config.model, tokenizer, config.engine), tokenizer)
    return chunks


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the worker process (one argument: the spec file).

    Example:
        >>> main([])  # the usage goes to standard error
        2
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    if len(arguments) != 1:
        print("usage: python -m referee.recipes.prefilter.worker SPEC.json", file=sys.stderr)
        return 2
    run_worker(arguments[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
