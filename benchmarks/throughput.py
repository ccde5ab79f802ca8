"""Throughput of the maths checkers, each run in fresh processes, from a cold start and warm.

* **cold**: the clock starts in a fresh process before the checker is imported, so the
  imports, referee's worker pool start and every first-use cost are included (what the first
  batch of a training run pays);
* **warm**: the checker is imported and warmed first: math-verify parses the same answer
  shapes referee's worker template warms up with; referee's pool is started by one answer
  that needs sympy and left idle until its template has warmed up (as between a trainer's
  batches). The batch itself is new to both (its golds too).

Each referee row is compared with math-verify from the same start, in the same run, runs
interleaved so that load from elsewhere hits every checker alike (median of ``repeats``).
:mod:`benchmarks.math` and :mod:`benchmarks.math_real` use it; on its own it times one run:

    python -m benchmarks.throughput --checker referee --start cold --workers 1 --batch BATCH.json

This module imports nothing of referee or math-verify at its top: a cold run imports them on the clock.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

START_KINDS = ("cold", "warm")
_IDLE_CHECKS = 5  # consecutive looks (50 ms apart) that find the pool's processes idle
_IDLE_LIMIT = 60.0  # seconds to wait for the pool to go idle before timing anyway


def math_verify_checker(boxed_gold: bool) -> Callable[[list[str], list[str]], list[bool | None]]:
    """math-verify as its README calls it: ``verify(parse(gold), parse(completion))``, the gold boxed or bare."""
    from math_verify import parse, verify

    def check(completions: list[str], golds: list[str]) -> list[bool | None]:
        results: list[bool | None] = []
        for text, gold in zip(completions, golds):
            parsed_gold = parse(f"\\boxed{{{gold}}}" if boxed_gold else gold)
            results.append(bool(verify(parsed_gold, parse(text))) if parsed_gold else None)
        return results

    return check


def _warm_math_verify() -> None:
    """The answer shapes referee's worker template warms up with, parsed and compared by math-verify."""
    from math_verify import parse, verify

    from referee.verifiers.math.sympy_worker import _WARM_UP_ANSWERS

    for answer in _WARM_UP_ANSWERS:
        verify(parse(f"\\boxed{{{answer}}}"), parse(f"\\boxed{{{answer}+1}}"))


def _wait_until_idle(pids: list[int]) -> None:
    """Wait until none of ``pids`` has been busy for a few looks in a row (the template's warm-up is over)."""
    from referee.verifiers.warm_workers import _running

    deadline, idle = time.monotonic() + _IDLE_LIMIT, 0
    while idle < _IDLE_CHECKS and time.monotonic() < deadline:
        idle = 0 if _running(set(pids)) else idle + 1
        time.sleep(0.05)


def measure(checker: str, batch_path: str, workers: int, start: str) -> float:
    """Seconds this process takes to judge the batch, from a ``cold`` or ``warm`` start (see the module docstring)."""
    logging.disable(logging.WARNING)  # math-verify logs every parse failure
    batch = json.loads(Path(batch_path).read_text())
    completions, golds = [c["completion"] for c in batch], [c["gold"] for c in batch]
    started = time.perf_counter()
    if checker == "math-verify":
        check = math_verify_checker(boxed_gold=True)
        if start == "warm":
            _warm_math_verify()
            started = time.perf_counter()
        check(completions, golds)
        return time.perf_counter() - started
    from referee.verifiers import math as referee_math

    if start == "warm":
        from referee.verifiers.math.workers import maths_pool

        referee_math.verify(r"\boxed{x+1}", "1+x", workers=workers)  # a sympy check: starts the pool
        _wait_until_idle(maths_pool(workers).processes())
        started = time.perf_counter()
    referee_math.verify_batch(completions, golds, workers=workers)
    return time.perf_counter() - started


def _in_fresh_process(checker: str, batch_path: str, workers: int, start: str) -> float:
    command = [sys.executable, "-m", "benchmarks.throughput", "--checker", checker, "--batch", batch_path,
               "--workers", str(workers), "--start", start]
    return float(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def throughput(batch_path: str, size: int, repeats: int, workers: tuple[int, ...] = (1, 2)) -> list[dict[str, Any]]:
    """math-verify and referee (at each worker count), cold and warm, each in fresh processes; median of ``repeats``.

    Each row's ``speedup`` is against math-verify from the same start; ``speedup_vs_warm_math_verify``
    against math-verify warm (for a cold row, the stricter figure).
    """
    runs = [("math-verify direct (boxed gold), 1 process", "math-verify", 1)] + \
        [(f"referee math, {n} worker{'s' if n > 1 else ''}", "referee", n) for n in workers]
    times: dict[tuple[str, str], list[float]] = {(name, start): [] for name, _, _ in runs for start in START_KINDS}
    for _ in range(repeats):  # interleaved, so that load from elsewhere hits every checker alike
        for start in START_KINDS:
            for name, checker, count in runs:
                times[name, start].append(_in_fresh_process(checker, batch_path, count, start))
    rows = []
    for start in START_KINDS:
        anchor = statistics.median(times[runs[0][0], start])
        for name, _, count in runs:
            seconds = statistics.median(times[name, start])
            rows.append({"checker": name, "workers": count, "start": start, "seconds": seconds,
                         "completions_per_s": size / seconds, "speedup": anchor / seconds,
                         "speedup_vs_warm_math_verify": statistics.median(times[runs[0][0], "warm"]) / seconds,
                         "runs": times[name, start]})
    return rows


def print_throughput(rows: list[dict[str, Any]]) -> None:
    """The rows of :func:`throughput` as a table."""
    print(f"{'checker':42} {'start':>5} {'seconds':>8} {'completions/s':>13} {'x math-verify':>13} {'x warm m-v':>10}")
    for r in rows:
        print(f"{r['checker']:42} {r['start']:>5} {r['seconds']:8.3f} {r['completions_per_s']:13.0f} "
              f"{r['speedup']:12.1f}x {r['speedup_vs_warm_math_verify']:9.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checker", choices=("math-verify", "referee"), required=True)
    parser.add_argument("--batch", required=True, help="JSON list of {completion, gold}")
    parser.add_argument("--workers", type=int, default=1, help="referee's worker count")
    parser.add_argument("--start", choices=START_KINDS, default="cold")
    args = parser.parse_args()
    print(json.dumps(measure(args.checker, args.batch, args.workers, args.start)))


if __name__ == "__main__":
    main()
