"""One tool round at 64 rollouts: referee's concurrent Python tool against TRL's serial loop and a bare subprocess.

A *tool round* is one tool turn of a GRPO step: every rollout of the batch has one Python cell
to run, and generation waits until all have answered. Three arms run the same cell for each of
``--rollouts`` rollouts, side by side in one process run:

* **referee concurrent**: ``--rollouts`` :class:`referee.rewards.tools.PythonTool` instances
  (isolation ``"auto"``), each ``reset``, then the round run the way ``RefereeGRPOTrainer`` runs
  it: :meth:`ConcurrentToolCalls._run_ahead` (one thread per rollout calling
  ``tool._run_ahead([code])``), then ``tool.python(code)`` for each, which finds its result waiting;
* **TRL serial**: the same tools, each ``reset``, then ``tool.python(code)`` one rollout after
  another, as TRL 1.16's ``GRPOTrainer._tool_call_loop`` calls them (the anchor);
* **bare subprocess**: no sandbox and no state, ``subprocess.run([sys.executable, "-c", code])``
  per rollout, one after another: a plain tool written without a sandbox.

The clock covers the round only (a ``reset`` is TRL's, before generation; its seconds are
reported beside). The *cold* round is the first on fresh tools: every sandbox worker starts in it
(the cheap cell; each arm gets its own fresh tools; one tool's cells first pay the process's
one-time costs, off the clock, and measure each cell's CPU in the sandbox). *Warm* rounds follow,
``--rounds`` per cell workload, the arms' order rotating each round so that load from elsewhere
hits them alike; the median is reported. Every cell must give the same output in every arm, or the run stops. Each cell
has a 30 s wall-clock limit (the default 5 s could stop a CPU-bound cell on a loaded machine);
the other limits are the defaults. It needs no data.

    python -m benchmarks.tools [--rollouts 64] [--rounds 3] [--workloads cheap,sleep,cpu] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from referee.recipes.train.tool_calls import ConcurrentToolCalls
from referee.rewards.tools import PythonTool
from referee.verifiers.code import CellLimits, resolve_isolation

WORKLOADS = {
    "cheap": "x = sum(range(1000)); print(x)",
    "sleep": "import time\ntime.sleep(0.3)\nprint('slept')",  # a slow cell that waits (a sleep, I/O), not computes
    "cpu": "print(sum(i * i for i in range(1_200_000)))",  # about 46 ms of CPU in the sandbox here
}
ARMS = ("referee concurrent", "TRL serial", "bare subprocess")
ANCHOR = "TRL serial"
CELL_TIMEOUT = 30.0
RESULTS = "benchmarks/results/tools.json"


def make_tools(rollouts: int, limits: CellLimits) -> list[PythonTool]:
    """``rollouts`` fresh tools at isolation ``"auto"``, none started (a worker starts on its first cell)."""
    return [PythonTool(limits, max_calls=None) for _ in range(rollouts)]


def reset_all(tools: Sequence[PythonTool]) -> float:
    """Seconds to ``reset`` every tool, one after another, as TRL does before generation."""
    started = time.perf_counter()
    for tool in tools:
        tool.reset()
    return time.perf_counter() - started


def concurrent_round(tools: Sequence[PythonTool], code: str) -> tuple[float, list[str]]:
    """Seconds and outputs of one round run as ``RefereeGRPOTrainer`` runs it: every rollout's cell
    on the mixin's thread pool, then TRL's loop collecting each result in rollout order."""
    runner = ConcurrentToolCalls()
    runner._tool_turn = {"tools": list(tools), "seconds": 0.0}
    started = time.perf_counter()
    runner._run_ahead({index: [code] for index in range(len(tools))})
    outputs = [tool.python(code) for tool in tools]
    return time.perf_counter() - started, outputs


def serial_round(tools: Sequence[PythonTool], code: str) -> tuple[float, list[str]]:
    """Seconds and outputs of one round run as TRL's ``_tool_call_loop`` runs it: one rollout after another."""
    started = time.perf_counter()
    outputs = [tool.python(code) for tool in tools]
    return time.perf_counter() - started, outputs


def subprocess_round(rollouts: int, code: str) -> tuple[float, list[str]]:
    """Seconds and outputs of ``rollouts`` bare ``python -c`` processes, one after another."""
    started = time.perf_counter()
    outputs = []
    for _ in range(rollouts):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=CELL_TIMEOUT)
        outputs.append((done.stdout + done.stderr).strip())
    return time.perf_counter() - started, outputs


def check_outputs(workload: str, arm: str, outputs: list[str], expected: str | None) -> str:
    """The round's one output; the run stops when rollouts or arms disagree (a cell failed or was stopped)."""
    distinct = set(outputs)
    if len(distinct) != 1 or (expected is not None and distinct != {expected}):
        raise SystemExit(f"{workload}, {arm}: the rollouts' outputs differ from each other or from the other "
                         f"arms: {sorted(distinct)[:3]} (expected {expected!r})")
    return outputs[0]


def tool_errors(tools: Sequence[PythonTool]) -> int:
    """Cells of the tools' current rollouts that did not run to their end (errors, timeouts, kills)."""
    return sum(not result.ok for tool in tools for result in tool.results)


def row(workload: str, arm: str, start: str, runs: list[float], rollouts: int, anchor: float,
        resets: list[float] | None = None) -> dict[str, Any]:
    """One arm's figures for one workload and start: median seconds per round, calls/s, and its
    speed against TRL serial (TRL serial's median seconds / this arm's; above 1 is faster)."""
    seconds = statistics.median(runs)
    return {"workload": workload, "arm": arm, "start": start, "rollouts": rollouts, "seconds": seconds,
            "calls_per_s": rollouts / seconds, "x_trl_serial": anchor / seconds, "runs": runs,
            "reset_seconds": statistics.median(resets) if resets else None}


def cold_rows(rollouts: int, limits: CellLimits) -> tuple[list[dict[str, Any]], list[PythonTool]]:
    """The first round on fresh tools (every sandbox worker starts in it), cheap cell; returns the
    rows and the concurrent arm's tools, now warm, for the warm rounds."""
    code, runs, expected = WORKLOADS["cheap"], {}, None
    serial_tools = make_tools(rollouts, limits)
    try:
        reset_all(serial_tools)
        runs[ANCHOR], outputs = serial_round(serial_tools, code)
        expected = check_outputs("cheap", ANCHOR, outputs, expected)
    finally:
        for tool in serial_tools:
            tool._close()
    tools = make_tools(rollouts, limits)
    reset_all(tools)
    runs["referee concurrent"], outputs = concurrent_round(tools, code)
    check_outputs("cheap", "referee concurrent", outputs, expected)
    runs["bare subprocess"], outputs = subprocess_round(rollouts, code)
    check_outputs("cheap", "bare subprocess", outputs, expected)
    return [row("cheap", arm, "cold", [runs[arm]], rollouts, runs[ANCHOR]) for arm in ARMS], tools


def warm_rows(tools: Sequence[PythonTool], workload: str, rounds: int) -> list[dict[str, Any]]:
    """``rounds`` warm rounds of each arm on ``workload``'s cell, the arms' order rotating each round."""
    code, rollouts = WORKLOADS[workload], len(tools)
    arms: dict[str, Callable[[], tuple[float, list[str]]]] = {
        "referee concurrent": lambda: concurrent_round(tools, code),
        ANCHOR: lambda: serial_round(tools, code),
        "bare subprocess": lambda: subprocess_round(rollouts, code)}
    runs: dict[str, list[float]] = {arm: [] for arm in ARMS}
    resets: dict[str, list[float]] = {arm: [] for arm in ARMS}
    expected = None
    for index in range(rounds):
        for arm in ARMS[index % 3:] + ARMS[:index % 3]:
            if arm != "bare subprocess":
                resets[arm].append(reset_all(tools))
            seconds, outputs = arms[arm]()
            if arm != "bare subprocess" and tool_errors(tools):
                failed = next(r.text for t in tools for r in t.results if not r.ok)
                raise SystemExit(f"{workload}, {arm}: a cell failed: {failed}")
            expected = check_outputs(workload, arm, outputs, expected)
            runs[arm].append(seconds)
    anchor = statistics.median(runs[ANCHOR])
    return [row(workload, arm, "warm", runs[arm], rollouts, anchor, resets[arm]) for arm in ARMS]


def cell_cpu_seconds(tool: PythonTool, code: str, repeats: int = 3) -> float:
    """The CPU seconds ``code`` takes in the sandbox (its process's, median of ``repeats``): what one
    rollout's cell asks of a core, so 64 of them need at least 64 times it over the cores."""
    timed = (f"import time as _clock\n_started = _clock.process_time()\nexec({code!r}, {{}})\n"
             "print(_clock.process_time() - _started)")
    return statistics.median(float(tool.python(timed).splitlines()[-1]) for _ in range(repeats))


def benchmark(rollouts: int = 64, rounds: int = 3, workloads: Sequence[str] = tuple(WORKLOADS)) -> dict[str, Any]:
    """The cold round and the warm rounds of every workload, as a JSON-ready dict (see the module docstring)."""
    import trl

    limits = CellLimits(timeout=CELL_TIMEOUT)
    started = time.perf_counter()
    (first,) = make_tools(1, limits)  # the process's one-time costs (the thread that forks workers), off the clock
    try:
        cpu_ms = {name: 1000 * cell_cpu_seconds(first, WORKLOADS[name]) for name in workloads}
    finally:
        first._close()
    rows, tools = cold_rows(rollouts, limits)
    try:
        isolation = tools[0]._session.level
        for workload in workloads:
            rows += warm_rows(tools, workload, rounds)
    finally:
        for tool in tools:
            tool._close()
    return {"benchmark": "tools", "machine": {"cores": os.cpu_count(), "load_average": os.getloadavg()[0],
                                              "python": platform.python_version(), "trl": trl.__version__},
            "isolation": isolation,
            "settings": {"rollouts": rollouts, "rounds": rounds, "cell_timeout_s": CELL_TIMEOUT},
            "workloads": {name: WORKLOADS[name] for name in workloads}, "cell_cpu_ms": cpu_ms, "rows": rows,
            "total_seconds": time.perf_counter() - started}


def print_table(result: dict[str, Any]) -> None:
    """The rows of :func:`benchmark` as a Markdown table."""
    machine = result["machine"]
    print(f"{result['settings']['rollouts']} rollouts, one cell each; isolation {result['isolation']}; "
          f"{machine['cores']} CPUs, load {machine['load_average']:.1f}; TRL {machine['trl']}; "
          f"warm: median of {result['settings']['rounds']} rounds")
    cpu = ", ".join(f"{name} {ms:.1f} ms" for name, ms in result["cell_cpu_ms"].items())
    print(f"each cell's CPU in the sandbox: {cpu}")
    print("| cell | start | arm | s per round | calls/s | x TRL serial | resets s |")
    print("|---|---|---|---:|---:|---:|---:|")
    for r in result["rows"]:
        resets = f"{r['reset_seconds']:.3f}" if r["reset_seconds"] is not None else ""
        print(f"| {r['workload']} | {r['start']} | {r['arm']} | {r['seconds']:.3f} | {r['calls_per_s']:.1f} "
              f"| {r['x_trl_serial']:.2f}x | {resets} |")
    print(f"total {result['total_seconds']:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rollouts", type=int, default=64, help="rollouts in the round (default 64)")
    parser.add_argument("--rounds", type=int, default=3, help="warm rounds per arm and cell (default 3)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help=f"cells to time, of {', '.join(WORKLOADS)} (default all)")
    parser.add_argument("--json", default=RESULTS, help="where to write the results (default %(default)s)")
    args = parser.parse_args()
    workloads = [name for name in args.workloads.split(",") if name]
    unknown = sorted(set(workloads) - set(WORKLOADS))
    if unknown or args.rollouts < 1 or args.rounds < 1:
        parser.error(f"unknown workloads {unknown}" if unknown else "--rollouts and --rounds must be positive")
    try:
        resolve_isolation()
    except ValueError as exc:  # no isolation level here keeps a cell away from this process
        raise SystemExit(f"PythonTool cannot run here: {exc}") from None
    result = benchmark(args.rollouts, args.rounds, workloads)
    print_table(result)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
