"""``referee eval``'s run: generate and score through the pre-filter's chunks, then write results and a report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..common.generation import GenerationBackend
from ..prefilter.bounds import KeepBounds
from ..prefilter.merge import gather_shards
from ..prefilter.outputs import row_writer
from ..prefilter.pipeline import generate_pending
from ..prefilter.report import build_report
from ..prefilter.run import report_header
from ..prefilter.scoring import Scorer
from ..prefilter.store import ChunkStore, write_json
from .config import EvalConfig
from .metrics import ks_up_to
from .plot import plot_eval
from .results import grouping_problem, prompt_fields, summarize

REPORT_FILE = "report.json"
PLOT_FILE = "eval.png"
ROWS_FILE = "all.jsonl"
# What a summary keeps of each saved sample (the texts stay in all.jsonl only).
_SAMPLE_FIELDS = ("tokens", "truncated")


def majority_reward(scorer: Scorer) -> tuple[Any, str | None]:
    """The reward maj@k groups answers with (the success reward) and, when it cannot, why.

    Example:
        >>> reward, problem = majority_reward(Scorer(["gsm8k_accuracy"]))
        >>> reward.__name__, problem
        ('gsm8k_accuracy', None)
    """
    reward = scorer.functions[scorer.names.index(scorer.success_reward)]
    problem = grouping_problem(reward)
    return (None, problem) if problem else (reward, None)


def finalize_eval(store: ChunkStore, chunks: Sequence[int], out: str | Path, *, scorer: Scorer, num_samples: int,
                  ks: Sequence[int] | None, run: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write ``all.jsonl`` (every result row with its samples, ``pass_at_k``, ``maj_at_k`` and
    ``answer_groups``), ``report.json`` and ``eval.png`` into ``out`` from ``chunks`` of ``store``;
    returns the report (``run``: what it says of the run, see :func:`report_header`).

    Example:
        >>> import tempfile
        >>> out = tempfile.mkdtemp()
        >>> store = ChunkStore(f"{out}/state")
        >>> store.write(0, {"rows": [{"row_index": 0, "answer": "4", "pass_rate": 0.5, "num_samples": 2,
        ...     "num_correct": 1, "samples": [{"text": "#### 4", "passed": True, "tokens": 3, "truncated": False},
        ...                                   {"text": "#### 5", "passed": False, "tokens": 3, "truncated": False}]}]})
        >>> report = finalize_eval(store, [0], out, scorer=Scorer(["gsm8k_accuracy"]), num_samples=2, ks=None)
        >>> report["metrics"]["pass@1"], report["metrics"]["pass@2"], report["metrics"]["maj@2"]
        (0.5, 1.0, 0.5)
    """
    out = Path(out)
    ks = ks_up_to(num_samples, ks)
    reward, problem = majority_reward(scorer)
    slim: list[dict[str, Any]] = []
    metrics: dict[str, list[float]] = {}
    with row_writer(out, "all", "jsonl") as add:
        for index in chunks:
            payload = store.read(index)
            for name, values in payload.get("reward_metrics", {}).items():
                metrics.setdefault(name, []).extend(values)
            for record in payload["rows"]:
                record = {**record, **prompt_fields(record, ks, reward)}
                add(record)
                slim.append({**{k: v for k, v in record.items() if k != "samples"},
                             "samples": [{k: s.get(k) for k in _SAMPLE_FIELDS} for s in record.get("samples") or []]})
    pass_rates = build_report(slim, keep=KeepBounds(0.0, 1.0), group_size=num_samples, run={}, reward_metrics=metrics)
    report = {
        **(run or {}),
        "ks": ks,
        "metrics": summarize(slim, ks),
        "maj_at_k": {"grouped_by": None if reward is None else reward.__name__, "problem": problem},
        "rows": pass_rates["rows"],
        "rows_scored": pass_rates["rows_scored"],
        "rows_with_errors": pass_rates["rows_with_errors"],
        "rows_solved": sum(1 for row in slim if row.get("num_correct")),
        "pass_rate_histogram": [{"pass_rate": bar["pass_rate"], "rows": bar["rows"]}
                                for bar in pass_rates["pass_rate_histogram"]],
        "errors": pass_rates["errors"],
        "reward_metrics": pass_rates["reward_metrics"],
        "files": {"rows": ROWS_FILE, "plot": PLOT_FILE},
    }
    write_json(out / REPORT_FILE, report)
    plot_eval(report, out / PLOT_FILE)
    return report


def run_eval(config: EvalConfig, *, backend: GenerationBackend | None = None, tokenizer: Any = None) -> dict[str, Any]:
    """Run (or resume) the evaluation ``config`` describes and return its report.

    Finished chunks in ``config.out`` are kept (Ctrl-C loses at most the chunk in progress;
    the same command resumes); once every chunk of the shard is done, ``all.jsonl``,
    ``report.json`` and ``eval.png`` are written. ``backend`` and ``tokenizer`` replace the ones
    ``config`` would load.

    Example:
        >>> import json, tempfile
        >>> from referee.recipes.common.generation import Sample
        >>> from referee.recipes.common.tiny_model import build_char_tokenizer
        >>> folder = tempfile.mkdtemp()
        >>> with open(f"{folder}/rows.jsonl", "w") as rows:
        ...     _ = rows.write("\\n".join(json.dumps({"prompt": f"{i} + 1 = ", "answer": str(i + 1)}) for i in range(3)))
        >>> class TwoThrees:  # half the samples answer 2, half 3
        ...     context_length = None
        ...     def generate(self, prompt_ids, n, sampling, seed):
        ...         return [[Sample("#### 2", (1,), False), Sample("#### 3", (1, 2), True)] * (n // 2) for _ in prompt_ids]
        >>> report = run_eval(EvalConfig(model="unused", data=f"{folder}/rows.jsonl", out=f"{folder}/out",
        ...                              rewards=("gsm8k_accuracy",), num_generations=4, progress=False),
        ...                   backend=TwoThrees(), tokenizer=build_char_tokenizer())
        >>> report["metrics"]["pass@1"], report["metrics"]["pass@4"], report["metrics"]["truncated_share"]
        (0.3333333333333333, 0.6666666666666666, 0.5)
    """
    run = generate_pending(config.prefilter_config(), backend=backend, tokenizer=tokenizer, desc="eval")
    return finalize_eval(run.store, run.assigned, config.out, scorer=run.scorer, num_samples=config.num_generations,
                         ks=config.ks, run=report_header(run.manifest))


def merge_evals(folders: Sequence[str | Path], out: str | Path, *, ks: Sequence[int] | None = None) -> dict[str, Any]:
    """Gather the chunks of the shard runs of one evaluation into ``out`` and write its results,
    as one unsharded run would have (see :func:`referee.recipes.prefilter.merge_runs`).

    Example:
        >>> merge_evals([], "out")
        Traceback (most recent call last):
        ...
        ValueError: No shard folders to merge; pass the --out folders of the shard runs.
    """
    store, num_chunks, manifest = gather_shards(folders, out)
    settings = manifest["settings"]
    scorer = Scorer(settings["rewards"], reward_options=settings["reward_options"],
                    success_reward=settings["success_reward"], threshold=settings["threshold"])
    return finalize_eval(store, range(num_chunks), out, scorer=scorer, num_samples=int(settings["num_generations"]),
                         ks=ks, run=report_header(manifest))
