"""``verify_batch(..., backend="ray")`` through the node's verifier host against the local pools.

One run, one machine: a local Ray cluster (``ray.init``, no local mode) whose verifier host has
the same pool size as the local pools. Two workloads, as a GRPO step hands them over: 512 maths
answers (boxed fractions, roots and decimals, half right; many need sympy in the pool) and 256
programs (HumanEval-style functions checked by ``check(candidate)`` in the sandbox, half
right). Every round gets fresh answers (the verifiers cache repeated ones); both paths run the
same batches, alternately, after a warm-up, and must give the same statuses. The table gives
items per second and the host's overhead (ray time / local time - 1, median of the rounds).

It ends with a paper estimate of a 32-node run, from the measured per-item costs and the
measured fixed cost of a call through the host.

    python -m benchmarks.ray_host [--rounds 5] [--workers 2] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks.answers import maths_answer

MATHS_BATCH = 512
CODE_BATCH = 256

CODE_TESTS = {"format": "humaneval", "entry_point": "poly",
              "test": "def check(candidate):\n"
                      "    assert candidate([1, 2, 3], 2) == 17\n"
                      "    assert candidate([0], 5) == 0\n"
                      "    assert candidate([4, 0, 1], -1) == 5\n"}


def maths_batch(rng: random.Random, size: int) -> tuple[list[str], list[str]]:
    completions, golds = [], []
    for _ in range(size):
        gold, right, wrong = maths_answer(rng)
        completions.append(f"Working step by step, the result is $\\boxed{{{right if rng.random() < 0.5 else wrong}}}$.")
        golds.append(gold)
    return completions, golds


def code_batch(rng: random.Random, size: int) -> tuple[list[str], list[dict[str, Any]]]:
    completions = []
    for _ in range(size):
        name = f"v{rng.randrange(10**9)}"  # fresh text every item
        body = f"    {name} = 0\n    for c in reversed(coeffs):\n        {name} = {name} * x + c\n    return {name}\n"
        if rng.random() >= 0.5:
            body = body.replace(f"{name} * x + c", f"{name} * x - c")
        completions.append(f"```python\ndef poly(coeffs, x):\n{body}```")
    return completions, [CODE_TESTS] * size


def timed(function: Any, *args: Any, **kwargs: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - started, result


def measure(name: str, module: Any, make: Any, size: int, rounds: int, workers: int, rng: random.Random,
            options: dict[str, Any]) -> dict[str, Any]:
    for backend in ("local", "ray"):  # warm-up: pools started, sandboxes up, imports paid
        module.verify_batch(*make(rng, size), workers=workers, backend=backend, **options)
    local, remote = [], []
    for index in range(rounds):
        completions, golds = make(rng, size)
        order = ("local", "ray") if index % 2 == 0 else ("ray", "local")
        results = {}
        for backend in order:
            seconds, verdicts = timed(module.verify_batch, completions, golds, workers=workers, backend=backend,
                                      **options)
            results[backend] = [v.status for v in verdicts]
            (local if backend == "local" else remote).append(seconds)
        if results["local"] != results["ray"]:
            raise SystemExit(f"{name}: the two paths disagree on round {index}")
    local_s, ray_s = statistics.median(local), statistics.median(remote)
    return {"workload": name, "items": size, "rounds": rounds, "workers": workers,
            "local_seconds": local, "ray_seconds": remote, "local_median_s": local_s, "ray_median_s": ray_s,
            "local_items_per_s": size / local_s, "ray_items_per_s": size / ray_s,
            "overhead": ray_s / local_s - 1.0, "statuses": dict(sorted({s: results["ray"].count(s)
                                                                        for s in set(results["ray"])}.items()))}


def call_cost(gsm8k: Any, rounds: int = 50) -> float:
    """Seconds of a one-item call through the host (dispatch, object transfer, a host thread)."""
    gsm8k.verify_batch(["#### 1"], [1], backend="ray")
    return statistics.median(timed(gsm8k.verify_batch, [f"#### {i}"], [i], backend="ray")[0] for i in range(rounds))


def estimate(rows: list[dict[str, Any]], fixed: float, workers: int, nodes: int = 32, node_cores: int = 64,
             gpus_per_node: int = 8, per_gpu: int = 512) -> dict[str, Any]:
    """A 32-node run on paper: each node's host has half its cores in its pools; each GPU's
    trainer process hands the host ``per_gpu`` completions per step. Per-item cost scales with
    the pool size as measured here; completions never cross nodes, so nodes add up linearly and
    the step's verification time is one node's."""
    pool = node_cores // 2
    out: dict[str, Any] = {"nodes": nodes, "node_cores": node_cores, "host_pool": pool, "gpus_per_node": gpus_per_node,
                           "per_gpu_batch": per_gpu, "fixed_call_s": fixed, "workloads": {}}
    for row in rows:
        per_item_core_s = row["ray_median_s"] * workers / row["items"]  # core-seconds per item, measured
        node_items = gpus_per_node * per_gpu
        node_s = node_items * per_item_core_s / pool + fixed
        out["workloads"][row["workload"]] = {
            "per_item_core_ms": per_item_core_s * 1000, "items_per_node_step": node_items,
            "node_step_s": node_s, "cluster_items_per_s": nodes * node_items / node_s,
            "cluster_items_per_step": nodes * node_items}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2, help="pool size of the local pools and of the host")
    parser.add_argument("--json", default="benchmarks/results/ray_host.json", help="where to write the results")
    args = parser.parse_args()

    import ray

    from referee.verifiers import code, gsm8k, ray_host
    from referee.verifiers import math as maths

    ray.init(address="local", num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
    ray_host.configure_hosts(pool_size=args.workers)
    rng = random.Random(0)
    try:
        rows = [measure("maths", maths, maths_batch, MATHS_BATCH, args.rounds, args.workers, rng, {"timeout": 5.0}),
                measure("code", code, code_batch, CODE_BATCH, args.rounds, args.workers, rng, {})]
        fixed = call_cost(gsm8k)
        (host,) = ray_host.describe_hosts(start=False)
    finally:
        ray.shutdown()
    paper = estimate(rows, fixed, args.workers)
    print(f"{'workload':<8} {'items':>5} {'local items/s':>14} {'ray items/s':>12} {'overhead':>9}")
    for row in rows:
        print(f"{row['workload']:<8} {row['items']:>5} {row['local_items_per_s']:>14.1f} {row['ray_items_per_s']:>12.1f} "
              f"{row['overhead']:>+8.1%}")
    print(f"one-item call through the host: {fixed * 1000:.1f} ms; host isolation {host['isolation']}, pool {host['pool_size']}")
    print(f"paper, {paper['nodes']} nodes x {paper['node_cores']} cores (host pool {paper['host_pool']}), "
          f"{paper['gpus_per_node']} GPUs x {paper['per_gpu_batch']} completions per node and step:")
    for name, figures in paper["workloads"].items():
        print(f"  {name:<6} {figures['items_per_node_step']} items per node: {figures['node_step_s']:.2f} s per step; "
              f"cluster {figures['cluster_items_per_step']} items, {figures['cluster_items_per_s']:.0f} items/s")
    result = {"benchmark": "ray_host", "machine": {"cores": os.cpu_count(), "python": platform.python_version(),
                                                   "ray": ray.__version__},
              "host": {k: host[k] for k in ("isolation", "pool_size")}, "rows": rows, "fixed_call_s": fixed,
              "paper_32_nodes": paper}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
