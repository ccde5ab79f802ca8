"""Data parallelism: one worker process per group of GPUs, each taking a share of the chunks.

Offline vLLM runs data parallel as one engine per process (its own examples do the same), so
does this: worker ``r`` of ``W`` sees GPUs ``r*T .. r*T+T-1`` (``T`` = tensor parallel size)
through ``CUDA_VISIBLE_DEVICES`` and takes every ``W``-th pending chunk. Workers write into
the run's own chunk store, so results are identical to a single process (chunk seeds depend
on the chunk only) and a killed run resumes the same way.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Any

from ..common.generation import cuda_available
from .store import write_json

if TYPE_CHECKING:
    from .run import OpenedRun

_LOG_TAIL = 2000  # characters of a failed worker's log shown in the error


class WorkerError(RuntimeError):
    """A data-parallel worker process failed; the message ends with its log.

    Example:
        >>> issubclass(WorkerError, RuntimeError)
        True
    """


def visible_gpus() -> list[str]:
    """The GPUs this process may use, as ``CUDA_VISIBLE_DEVICES`` entries (``[]`` on CPU).

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict(os.environ, {"CUDA_VISIBLE_DEVICES": "2,3"}):
        ...     visible_gpus()
        ['2', '3']
    """
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return [device.strip() for device in listed.split(",") if device.strip()]
    if not cuda_available():
        return []
    import torch

    return [str(index) for index in range(torch.cuda.device_count())]


def worker_devices(workers: int, gpus_per_worker: int, gpus: Sequence[str]) -> list[str | None]:
    """Each worker's ``CUDA_VISIBLE_DEVICES``: consecutive groups of ``gpus_per_worker``
    GPUs, or ``None`` for every worker when there is no GPU (CPU workers).

    Example:
        >>> worker_devices(2, 2, ["0", "1", "2", "3"])
        ['0,1', '2,3']
        >>> worker_devices(2, 1, [])
        [None, None]
        >>> worker_devices(3, 2, ["0", "1", "2", "3"])
        Traceback (most recent call last):
        ...
        ValueError: 3 workers x 2 GPUs need 6 GPUs but 4 are visible; lower --data-parallel-size or --tensor-parallel-size.
    """
    if not gpus:
        return [None] * workers
    needed = workers * gpus_per_worker
    if needed > len(gpus):
        raise ValueError(f"{workers} workers x {gpus_per_worker} GPUs need {needed} GPUs but {len(gpus)} are visible; "
                         "lower --data-parallel-size or --tensor-parallel-size.")
    return [",".join(gpus[rank * gpus_per_worker:(rank + 1) * gpus_per_worker]) for rank in range(workers)]


def worker_environment(device: str | None, workers: int) -> dict[str, str]:
    """The environment of a worker: its GPUs, or on CPU a fair share of the cores.

    Example:
        >>> worker_environment("2,3", 2)["CUDA_VISIBLE_DEVICES"]
        '2,3'
    """
    environment = dict(os.environ)
    if device is not None:
        environment["CUDA_VISIBLE_DEVICES"] = device
    else:
        environment.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // workers)))
    return environment


def _tail(path: Any) -> str:
    text = path.read_text(encoding="utf-8", errors="replace")
    return text[-_LOG_TAIL:]


def run_workers(run: OpenedRun, advance: Callable[[int], Any], *, poll_seconds: float = 1.0) -> None:
    """Process ``run.pending`` in ``data_parallel_size`` worker processes and wait for them,
    calling ``advance(rows)`` as chunks finish. Ctrl-C stops the workers (finished chunks
    stay); a failed worker raises :class:`WorkerError` with the end of its log.

    Example:
        >>> import json, tempfile
        >>> from referee.recipes.prefilter import EngineOptions, PrefilterConfig
        >>> from referee.recipes.prefilter.run import open_run
        >>> folder = tempfile.mkdtemp()
        >>> _ = open(f"{folder}/rows.jsonl", "w").write(json.dumps({"prompt": "1 + 1 = "}))
        >>> run = open_run(PrefilterConfig(model="unused", data=f"{folder}/rows.jsonl", out=f"{folder}/out",
        ...                                rewards=("gsm8k_accuracy",), engine=EngineOptions(data_parallel_size=2)))
        >>> run.pending = []  # nothing left to do: no worker is started
        >>> run_workers(run, print)
    """
    engine = run.config.engine
    workers = min(engine.data_parallel_size, len(run.pending))
    devices = worker_devices(workers, engine.tensor_parallel_size, visible_gpus())
    folder = run.store.folder / "workers"
    folder.mkdir(parents=True, exist_ok=True)
    single = dataclasses.replace(run.config, engine=dataclasses.replace(engine, data_parallel_size=1), progress=False)
    processes: list[subprocess.Popen[bytes]] = []
    logs: list[IO[Any]] = []
    try:
        for rank in range(workers):
            spec = folder / f"rank-{rank}.json"
            write_json(spec, {"config": single.to_dict(), "chunks": run.pending[rank::workers]})
            logs.append(open(folder / f"rank-{rank}.log", "wb"))
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "referee.recipes.prefilter.worker", str(spec)],
                env=worker_environment(devices[rank], workers), stdout=logs[-1], stderr=subprocess.STDOUT,
            ))
        counted = set(run.store.done())
        while True:
            running = any(process.poll() is None for process in processes)
            finished = set(run.store.done()) - counted
            if finished:
                advance(run.rows_in(sorted(finished)))
                counted |= finished
            if not running:
                break
            time.sleep(poll_seconds)
    except BaseException:
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            process.wait()
        raise
    finally:
        for log in logs:
            log.close()
    failed = [rank for rank, process in enumerate(processes) if process.returncode != 0]
    if failed:
        log = folder / f"rank-{failed[0]}.log"
        raise WorkerError(f"Data-parallel worker(s) {failed} failed; rerun the command to resume. "
                           f"End of {log}:\n{_tail(log)}")
