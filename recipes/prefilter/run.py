"""An opened pre-filter run: its rows, scorer and chunk store, and the chunks still to generate and score."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..common.data import Rows, load_rows
from ..common.generation import GenerationBackend, resolve_backend
from .chunks import ChunkRunner, chunk_rows
from .config import PrefilterConfig
from .scoring import Scorer
from .store import ChunkStore

MANIFEST_VERSION = 1


def shard_chunks(num_chunks: int, shard_index: int, num_shards: int) -> list[int]:
    """The chunks shard ``shard_index`` of ``num_shards`` takes: every ``num_shards``-th one
    (chunks are sized by :func:`rows_per_chunk` so that this splits the rows evenly).

    Example:
        >>> shard_chunks(7, 1, 3)
        [1, 4]
    """
    return list(range(shard_index, num_chunks, num_shards))


def rows_per_chunk(num_rows: int, chunk_size: int, num_shards: int) -> int:
    """The rows in each chunk: ``chunk_size``, or with several shards the size that splits the
    rows into a multiple of ``num_shards`` chunks of at most ``chunk_size``, nearly equal, so
    each shard gets its share of the rows (12 rows on 2 shards: 6 and 6, not 12 and 0).

    Example:
        >>> rows_per_chunk(12, 64, 1), rows_per_chunk(12, 64, 2), rows_per_chunk(200, 64, 3)
        (64, 6, 34)
    """
    if num_shards <= 1 or num_rows == 0:
        return chunk_size
    rounds = math.ceil(num_rows / (num_shards * chunk_size))
    return max(1, math.ceil(num_rows / (rounds * num_shards)))


def chunk_size_of(settings: dict[str, Any]) -> int:
    """The rows per chunk of a saved run's ``settings`` (see :func:`rows_per_chunk`).

    Example:
        >>> chunk_size_of({"chunk_size": 64}), chunk_size_of({"chunk_size": 64, "rows_per_chunk": 6})
        (64, 6)
    """
    return int(settings.get("rows_per_chunk") or settings["chunk_size"])


def build_manifest(config: PrefilterConfig, rows: Rows, scorer: Scorer, *,
                   chunk_size: int | None = None) -> dict[str, Any]:
    """The run description saved in ``state/run.json``.

    ``settings`` (what decides the samples and scores) must match to resume a run or merge
    shards; ``shard`` must match to resume; the rest (keep bounds, group size, output format,
    the data path) may change between reruns.

    Example:
        >>> config = PrefilterConfig(model="m", data="d.jsonl", rewards=("gsm8k_accuracy",), out="o")
        >>> manifest = build_manifest(config, Rows([{"prompt": "1 + 1 = "}]), Scorer(config.rewards))
        >>> manifest["settings"]["rewards"], manifest["settings"]["data"]["rows"], manifest["shard"]
        (['gsm8k_accuracy'], 1, {'index': 0, 'count': 1})
    """
    settings_chunk = {"rows_per_chunk": chunk_size} if chunk_size and chunk_size != config.chunk_size else {}
    return {
        "version": MANIFEST_VERSION,
        "settings": {
            **settings_chunk,
            "model": config.model,
            "data": {"rows": len(rows), "fingerprint": rows.fingerprint(), "split": config.split,
                     "config": config.data_config},
            "prompt": {"column": config.prompt_column, "chat_template": config.chat_template,
                       "system_prompt": config.system_prompt, "chat_template_kwargs": dict(config.chat_template_kwargs),
                       **({"recipe": config.recipe} if config.recipe else {})},
            "rewards": list(scorer.names),
            "reward_options": {spec: dict(options) for spec, options in config.reward_options.items()},
            "success_reward": scorer.success_reward,
            "threshold": scorer.threshold,
            "num_generations": config.num_generations,
            "sampling": dataclasses.asdict(config.sampling),
            "backend": resolve_backend(config.engine.backend),
            "chunk_size": config.chunk_size,
            "save_samples": config.save_samples,
        },
        "shard": {"index": config.shard_index, "count": config.num_shards},
        "data_source": config.data,
        "keep": {"low": config.keep.low, "high": config.keep.high},
        "group_size": config.group_size or config.num_generations,
        "output_format": config.output_format,
    }


def report_header(manifest: dict[str, Any]) -> dict[str, Any]:
    """What a report says about the run it summarises (copied from the manifest).

    Example:
        >>> config = PrefilterConfig(model="m", data="d.jsonl", rewards=("gsm8k_accuracy",), out="o")
        >>> header = report_header(build_manifest(config, Rows([]), Scorer(config.rewards)))
        >>> header["model"], header["success_reward"], header["num_generations"]
        ('m', 'gsm8k_accuracy', 8)
    """
    settings = manifest["settings"]
    return {
        "model": settings["model"],
        "data": manifest["data_source"],
        "rewards": settings["rewards"],
        "success_reward": settings["success_reward"],
        "threshold": settings["threshold"],
        "num_generations": settings["num_generations"],
        "sampling": settings["sampling"],
        "backend": settings["backend"],
        "shard": manifest["shard"],
    }


@dataclass
class OpenedRun:
    """A run's rows, scorer and store, the chunks it must have and those still to do.

    Example:
        >>> import json, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> with open(f"{folder}/rows.jsonl", "w") as rows:
        ...     _ = rows.write("\\n".join(json.dumps({"prompt": f"{i} + 1 = ", "answer": i + 1}) for i in range(5)))
        >>> config = PrefilterConfig(model="unused", data=f"{folder}/rows.jsonl", out=f"{folder}/out", chunk_size=2,
        ...                          rewards=("gsm8k_accuracy",), shard_index=1, num_shards=2)
        >>> run = open_run(config)  # 5 rows in chunks of 2: shard 1 of 2 takes chunk 1
        >>> run.assigned, run.pending, run.rows_in(run.assigned)
        ([1], [1], 2)
    """

    config: PrefilterConfig
    rows: Rows
    scorer: Scorer
    store: ChunkStore
    manifest: dict[str, Any]
    assigned: list[int]
    pending: list[int]
    chunk_size: int  # rows per chunk (see rows_per_chunk)

    def rows_in(self, chunks: Sequence[int]) -> int:
        """How many rows ``chunks`` hold."""
        return sum(len(chunk_rows(len(self.rows), self.chunk_size, c)) for c in chunks)


def open_run(config: PrefilterConfig) -> OpenedRun:
    """Load the data and rewards, and start (or check and resume) the run in ``config.out``.

    Example:
        >>> import json, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> with open(f"{folder}/rows.jsonl", "w") as rows:
        ...     _ = rows.write("\\n".join(json.dumps({"prompt": f"{i} + 1 = ", "answer": i + 1}) for i in range(5)))
        >>> config = PrefilterConfig(model="unused", data=f"{folder}/rows.jsonl", out=f"{folder}/out", chunk_size=2,
        ...                          rewards=("gsm8k_accuracy",), shard_index=1, num_shards=2)
        >>> run = open_run(config)
        >>> run.scorer.names, len(run.rows), run.pending
        (('gsm8k_accuracy',), 5, [1])
    """
    scorer = Scorer(config.rewards, reward_options=config.reward_options, success_reward=config.success_reward,
                    threshold=config.threshold)
    rows = read_rows(config, scorer)
    if config.max_rows is not None and config.max_rows < len(rows):
        rows = Rows(rows.slice(0, config.max_rows))
    store = ChunkStore(Path(config.out) / "state")
    size = rows_per_chunk(len(rows), config.chunk_size, config.num_shards)
    if config.num_shards == 1 and store.manifest_path.is_file():  # a merged run keeps its shards' chunks
        saved = store.manifest().get("settings", {})
        if saved.get("chunk_size") == config.chunk_size:
            size = chunk_size_of(saved)
    manifest = build_manifest(config, rows, scorer, chunk_size=size)
    store.open(manifest)
    assigned = shard_chunks(math.ceil(len(rows) / size), config.shard_index, config.num_shards)
    done = set(store.done())
    return OpenedRun(config, rows, scorer, store, manifest, assigned, [c for c in assigned if c not in done], size)


def read_rows(config: PrefilterConfig, scorer: Scorer) -> Rows:
    """The run's rows: as they are, or mapped by ``config.recipe``'s loader (keeping the columns the rewards read).

    Example:
        >>> import json, tempfile
        >>> path = f"{tempfile.mkdtemp()}/rows.jsonl"
        >>> _ = open(path, "w").write(json.dumps({"question": "2 + 3?", "answer": "#### 5"}))
        >>> config = PrefilterConfig(model="m", data=path, rewards=("gsm8k_accuracy",), out="o")
        >>> read_rows(config, Scorer(config.rewards)).slice(0, 1)
        [{'question': '2 + 3?', 'answer': '#### 5'}]
        >>> recipe = dataclasses.replace(config, recipe="gsm8k_qwen2.5-1.5b_lora")
        >>> sorted(read_rows(recipe, Scorer(config.rewards)).slice(0, 1)[0])
        ['answer', 'prompt']
    """
    if config.recipe is None:
        return load_rows(config.data, split=config.split, config_name=config.data_config)
    from ..train.recipe import reward_column_names
    from .recipe_prompts import read_recipe_prompts, recipe_rows

    return recipe_rows(read_recipe_prompts(config.recipe), config.data, split=config.split,
                       config_name=config.data_config, max_rows=config.max_rows,
                       keep=reward_column_names(scorer.functions))


def process_chunks(run: OpenedRun, chunks: Sequence[int], backend: GenerationBackend, tokenizer: Any,
                   on_chunk: Callable[[dict[str, Any]], None] | None = None) -> None:
    """Generate, score and save ``chunks`` one after the other (each saved atomically).

    Example:
        >>> from referee.recipes.common.tiny_model import build_char_tokenizer
        >>> from referee.recipes.common.generation import Sample
        >>> import json, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> with open(f"{folder}/rows.jsonl", "w") as rows:
        ...     _ = rows.write("\\n".join(json.dumps({"prompt": f"{i} + 1 = ", "answer": i + 1}) for i in range(5)))
        >>> config = PrefilterConfig(model="unused", data=f"{folder}/rows.jsonl", out=f"{folder}/out", chunk_size=2,
        ...                          rewards=("gsm8k_accuracy",), shard_index=1, num_shards=2)
        >>> class Twos:  # every sample answers 2
        ...     context_length = None
        ...     def generate(self, prompt_ids, n, sampling, seed):
        ...         return [[Sample("#### 2", (), False)] * n for _ in prompt_ids]
        >>> run = open_run(config)
        >>> process_chunks(run, run.pending, Twos(), build_char_tokenizer())
        >>> [(row["answer"], row["pass_rate"]) for row in run.store.read(1)["rows"]]
        [(3, 0.0), (4, 0.0)]
    """
    runner = ChunkRunner(run.config, run.rows, tokenizer, backend, run.scorer, chunk_size=run.chunk_size,
                         check_unread=True)
    for index in chunks:
        payload = runner.run(index)
        run.store.write(index, payload)
        if on_chunk is not None:
            on_chunk(payload)
