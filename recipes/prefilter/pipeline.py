"""The pre-filter run: load, resume, generate and score chunk by chunk, then write the results."""

from __future__ import annotations

import sys
from typing import Any

from ..common.backends import build_backend
from ..common.generation import GenerationBackend
from .config import PrefilterConfig
from .finalize import finalize
from .parallel import run_workers
from .run import OpenedRun, open_run, process_chunks, report_header


def _progress_bar(run: OpenedRun, desc: str) -> Any:
    from tqdm import tqdm

    total = run.rows_in(run.assigned)
    return tqdm(total=total, initial=total - run.rows_in(run.pending), unit=" prompts", desc=desc,
                disable=not run.config.progress, file=sys.stderr, dynamic_ncols=True)


def generate_pending(config: PrefilterConfig, *, backend: GenerationBackend | None = None, tokenizer: Any = None,
                     desc: str = "prefilter") -> OpenedRun:
    """Open (or resume) the run ``config`` describes and generate and score every chunk of its
    shard not yet saved, with a progress bar named ``desc``; returns the opened run.

    ``backend`` and ``tokenizer`` replace the ones ``config`` would load (see :func:`run_prefilter`).
    """
    if backend is None and tokenizer is None:  # before the run's state is written: a bad name leaves none
        from ..common.sources import check_source

        check_source(config.model, "model", "--model")
    run = open_run(config)
    if not run.pending:
        return run
    bar = _progress_bar(run, desc)
    try:
        if config.engine.data_parallel_size > 1:
            if backend is not None:
                raise ValueError("data_parallel_size > 1 starts its own worker processes; pass no backend object.")
            run_workers(run, bar.update)
        else:
            if tokenizer is None:
                from ..common.loading import load_tokenizer

                tokenizer = load_tokenizer(config.model)
            if backend is None:
                backend = build_backend(config.model, tokenizer, config.engine)
            process_chunks(run, run.pending, backend, tokenizer, lambda payload: bar.update(len(payload["rows"])))
    finally:
        bar.close()
    return run


def run_prefilter(config: PrefilterConfig, *, backend: GenerationBackend | None = None,
                  tokenizer: Any = None) -> dict[str, Any]:
    """Run (or resume) the pre-filter ``config`` describes and return its report.

    Finished chunks in ``config.out`` are kept and not generated again; when every chunk of
    the shard is done, ``all``/``kept`` rows, ``report.json`` and ``pass_rate_hist.png`` are
    written. ``backend`` and ``tokenizer`` replace the ones ``config`` would load (a test or a
    model already in memory).

    Example:
        >>> import json, os, tempfile
        >>> from referee.recipes.common.tiny_model import save_tiny_model
        >>> from referee.recipes.prefilter import EngineOptions, KeepBounds, SamplingOptions
        >>> folder = tempfile.mkdtemp()
        >>> with open(f"{folder}/rows.jsonl", "w") as rows:
        ...     _ = rows.write("\\n".join(json.dumps({"prompt": f"{i} + 1 = "}) for i in range(3)))
        >>> def has_digit(prompts, completions, **kwargs):
        ...     return [float(any(c.isdigit() for c in text)) for text in completions]
        >>> report = run_prefilter(PrefilterConfig(
        ...     model=str(save_tiny_model(f"{folder}/model")), data=f"{folder}/rows.jsonl", rewards=(has_digit,),
        ...     out=f"{folder}/out", num_generations=4, keep=KeepBounds(0.25, 0.75), progress=False,
        ...     sampling=SamplingOptions(max_tokens=8), engine=EngineOptions(backend="transformers")))
        >>> report["rows"], sorted(os.listdir(f"{folder}/out"))
        (3, ['all.jsonl', 'kept.jsonl', 'pass_rate_hist.png', 'report.json', 'state'])
    """
    run = generate_pending(config, backend=backend, tokenizer=tokenizer)
    return finalize(run.store, run.assigned, config.out, keep=config.keep,
                    group_size=config.group_size or config.num_generations, output_format=config.output_format,
                    run=report_header(run.manifest))
