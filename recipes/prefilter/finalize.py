"""Turn the finished chunks of a run into all / kept rows, report.json and the histogram."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .bounds import KeepBounds
from .outputs import output_path, row_writer
from .report import build_report, plot_histogram
from .store import ChunkStore, write_json

# Fields of a result row the report needs (the rest, e.g. samples, is not kept in memory).
_REPORT_FIELDS = ("row_index", "pass_rate", "num_correct", "num_samples", "num_unscored", "reward_means", "errors")

REPORT_FILE = "report.json"
HISTOGRAM_FILE = "pass_rate_hist.png"


def finalize(store: ChunkStore, chunks: Sequence[int], out: str | Path, *, keep: KeepBounds, group_size: int,
             output_format: str = "jsonl", run: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write ``all``, ``kept``, ``report.json`` and ``pass_rate_hist.png`` into ``out`` from
    ``chunks`` of ``store`` (rows in chunk order) and return the report.

    Example:
        >>> import tempfile
        >>> out = tempfile.mkdtemp()
        >>> store = ChunkStore(f"{out}/state")
        >>> store.write(0, {"rows": [{"row_index": 0, "pass_rate": 0.5}, {"row_index": 1, "pass_rate": 1.0}],
        ...                 "timing": {"generate_s": 2.0, "score_s": 0.5}})
        >>> report = finalize(store, [0], out, keep=KeepBounds(0.0, 0.5), group_size=2)
        >>> report["kept"], report["timing"], open(f"{out}/kept.jsonl").read()
        (1, {'generate_s': 2.0, 'score_s': 0.5}, '{"row_index": 0, "pass_rate": 0.5}\\n')
    """
    out = Path(out)
    slim: list[dict[str, Any]] = []
    timing: dict[str, float] = defaultdict(float)
    metrics: dict[str, list[float]] = defaultdict(list)
    unread_detail = None  # the first chunk's word on what the model wrote, where the reward read nothing
    with row_writer(out, "all", output_format) as add_all, row_writer(out, "kept", output_format) as add_kept:
        for index in chunks:
            payload = store.read(index)
            for name, seconds in payload.get("timing", {}).items():
                timing[name] += seconds
            for name, values in payload.get("reward_metrics", {}).items():
                metrics[name].extend(values)
            unread_detail = unread_detail or payload.get("unread_detail")
            for record in payload["rows"]:
                add_all(record)
                if keep.contains(record.get("pass_rate")):
                    add_kept(record)
                slim.append({key: record[key] for key in _REPORT_FIELDS if key in record})
    report = build_report(slim, keep=keep, group_size=group_size, run=run or {}, timing=dict(timing),
                          reward_metrics=dict(metrics))
    if unread_detail:
        report["unread_detail"] = unread_detail
    report["files"] = {
        "all": output_path(out, "all", output_format).name,
        "kept": output_path(out, "kept", output_format).name,
        "histogram": HISTOGRAM_FILE,
    }
    write_json(out / REPORT_FILE, report)
    plot_histogram(report, out / HISTOGRAM_FILE)
    return report
