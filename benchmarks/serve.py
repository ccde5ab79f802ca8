"""``referee serve``'s ``POST /get_reward`` against calling the same scorer in-process.

Each request is what OpenRLHF sends a remote reward model: 64 queries (a chat prompt, the
response, end-of-turn tokens), their prompts and their labels. Two workloads: GSM8K answers
(``#### N``, judged in-process: the cost is mostly HTTP and JSON) and maths answers (boxed
fractions and roots, several needing sympy in the verifier's worker pool). Half the answers are
right. Rows: in-process ``handle_get_reward`` calls one after another; HTTP from one client;
HTTP from several clients at once (the server shares one set of verifier pools). Every mode gets
fresh answers (the verifiers cache repeated ones); the same two requests scored both ways first
must agree. The table gives completions per second and milliseconds per request of 64.

The load test then sends ``--load-clients`` (20) clients x ``--load-requests`` (50) requests of
16 GSM8K completions at once over loopback, with the bearer token, each request bounded by a
30 s client timeout and the whole test by ``--load-seconds`` (300): it prints the p50 and p99
latency, the requests that failed, and the server's resident memory (its own process, and with
its verifier workers) before and at the peak of the load.

    python -m benchmarks.serve [--requests 40] [--clients 4] [--workers 2] [--only load] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.answers import maths_answer
from referee.rewards.trainers.adapters import AdapterOptions, Scorer
from referee.rewards.trainers.openrlhf import handle_get_reward

BATCH = 64
LOAD_BATCH = 16
TOKEN = secrets.token_hex(16)  # the server runs with a token, as an exposed one must
PROMPT = "<|im_start|>system\nReason, then answer.<|im_end|>\n<|im_start|>user\n{q}<|im_end|>\n<|im_start|>assistant\n"


def gsm8k_item(rng: random.Random) -> tuple[str, str, str]:
    a, b = rng.randint(2, 999), rng.randint(2, 999)
    answer = a * b if rng.random() < 0.5 else a * b + rng.randint(1, 9)
    prompt = PROMPT.format(q=f"A crate holds {a} boxes of {b} pens. How many pens?")
    response = f"There are {a} boxes and {b} pens in each, so {a} * {b} pens.\n#### {answer}"
    return prompt + response + "<|im_end|>", prompt, json.dumps({"data_source": "openai/gsm8k", "answer": str(a * b)})


def math_item(rng: random.Random) -> tuple[str, str, str]:
    gold, right, wrong = maths_answer(rng)
    answer = right if rng.random() < 0.5 else wrong
    prompt = PROMPT.format(q=f"Simplify the expression {gold}.")
    response = f"Working it through step by step, the result is $\\boxed{{{answer}}}$."
    return prompt + response + "<|im_end|>", prompt, json.dumps({"data_source": "lighteval/MATH", "answer": gold})


def payloads(kind: str, requests: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    make = gsm8k_item if kind == "gsm8k" else math_item
    out = []
    for _ in range(requests):
        items = [make(rng) for _ in range(BATCH)]
        out.append({"query": [i[0] for i in items], "prompts": [i[1] for i in items], "labels": [i[2] for i in items]})
    return out


def post(url: str, payload: dict[str, Any], timeout: float = 300) -> dict[str, Any]:
    request = urllib.request.Request(url, data=json.dumps(payload).encode(),
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        return json.loads(reply.read())


def rss_mib(pid: int) -> tuple[float, float]:
    """(the process's resident memory, with every descendant's) in MiB, from /proc."""
    parents: dict[int, int] = {}
    sizes: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            parents[int(name)] = int(fields[1])
            sizes[int(name)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    tree, grew = {pid}, True
    while grew:
        more = {child for child, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    return sizes.get(pid, 0) / 2 ** 20, sum(sizes.get(p, 0) for p in tree) / 2 ** 20


def load_test(url: str, pid: int, clients: int, per_client: int, seconds: float) -> dict[str, Any]:
    """``clients`` threads, each posting ``per_client`` requests one after another until ``seconds`` pass."""
    batches = payloads("gsm8k", clients * per_client // 4 + 1, seed=7)  # 64 per payload: four requests of 16 each
    requests = [{key: value[i * LOAD_BATCH:(i + 1) * LOAD_BATCH] for key, value in batch.items()}
                for batch in batches for i in range(BATCH // LOAD_BATCH)]
    deadline = time.monotonic() + seconds
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    before = rss_mib(pid)
    peak = list(before)
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.2):
            now = rss_mib(pid)
            peak[0], peak[1] = max(peak[0], now[0]), max(peak[1], now[1])

    def client(index: int) -> None:
        for n in range(per_client):
            if time.monotonic() > deadline:
                return
            started = time.perf_counter()
            try:
                reply = post(f"{url}/get_reward", requests[index * per_client + n], timeout=30)
                ok = len(reply["rewards"]) == LOAD_BATCH
            except (OSError, urllib.error.HTTPError, ValueError) as exc:
                ok, reply = False, repr(exc)
            with lock:
                (latencies if ok else failures).append(time.perf_counter() - started if ok else str(reply)[:200])

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    wall = time.perf_counter() - started
    done.set()
    watcher.join()
    ordered = sorted(latencies)
    return {"clients": clients, "requests_per_client": per_client, "completions_per_request": LOAD_BATCH,
            "answered": len(latencies), "failed": len(failures), "first_failures": failures[:3], "seconds": wall,
            "requests_per_s": len(latencies) / wall,
            "p50_ms": 1000 * statistics.median(ordered) if ordered else None,
            "p99_ms": 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else None,
            "server_rss_mib_before": before[0], "server_rss_mib_peak": peak[0],
            "with_workers_rss_mib_before": before[1], "with_workers_rss_mib_peak": peak[1]}


def start_server(workers: int) -> tuple[subprocess.Popen, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "referee.recipes.cli", "serve", "--port", str(port),
                                "--workers", str(workers)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "REFEREE_SERVE_TOKEN": TOKEN})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2):
                return process, url
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("referee serve did not start within 60 s")


def timed(label: str, kind: str, run, requests: list[dict[str, Any]]) -> dict[str, Any]:
    started = time.perf_counter()
    replies = run(requests)
    seconds = time.perf_counter() - started
    rewards = [r for reply in replies for r in reply["rewards"]]
    return {"workload": kind, "mode": label, "requests": len(requests), "completions": len(rewards),
            "seconds": seconds, "completions_per_s": len(rewards) / seconds, "ms_per_request": 1000 * seconds / len(requests),
            "mean_reward": sum(rewards) / len(rewards)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=40, help="requests of 64 completions per workload and mode")
    parser.add_argument("--clients", type=int, default=4, help="concurrent HTTP clients in the last mode")
    parser.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 1)),
                        help="verifier worker processes (in-process and in the server alike)")
    parser.add_argument("--load-clients", type=int, default=20, help="clients of the load test")
    parser.add_argument("--load-requests", type=int, default=50, help="requests per client in the load test")
    parser.add_argument("--load-seconds", type=float, default=300.0, help="the load test stops sending after this")
    parser.add_argument("--only", choices=("throughput", "load"), default=None, help="run one part only")
    parser.add_argument("--json", default="benchmarks/results/serve.json", help="where to write the results")
    args = parser.parse_args()

    options = AdapterOptions.parse({"verifier_options": {"math": {"workers": args.workers}}})
    scorer = Scorer(options, name="benchmark")
    process, url = start_server(args.workers)
    results = []
    load = None
    try:
        for kind in () if args.only == "load" else ("gsm8k", "math"):
            check = payloads(kind, 2, seed=99)  # the same answers both ways: warms pools and caches, checks agreement
            same = [handle_get_reward(p, scorer)["rewards"] for p in check] == \
                [post(f"{url}/get_reward", p)["rewards"] for p in check]
            if not same:
                raise SystemExit(f"{kind}: HTTP and in-process rewards differ")
            # Fresh answers for every mode (verifiers cache repeated answers: a rerun would flatter it).
            direct = timed("in-process handle_get_reward", kind,
                           lambda rs: [handle_get_reward(p, scorer) for p in rs], payloads(kind, args.requests, seed=1))
            http_one = timed("HTTP, 1 client", kind,
                             lambda rs: [post(f"{url}/get_reward", p) for p in rs], payloads(kind, args.requests, seed=2))
            with ThreadPoolExecutor(args.clients) as pool:
                http_many = timed(f"HTTP, {args.clients} clients", kind,
                                  lambda rs: list(pool.map(lambda p: post(f"{url}/get_reward", p), rs)),
                                  payloads(kind, args.requests, seed=3))
            for row in (direct, http_one, http_many):
                row["vs_in_process"] = row["completions_per_s"] / direct["completions_per_s"]
            results += [direct, http_one, http_many]
        if args.only != "throughput":
            post(f"{url}/get_reward", payloads("gsm8k", 1, seed=98)[0])  # warm, as the rows above are
            load = load_test(url, process.pid, args.load_clients, args.load_requests, args.load_seconds)
    finally:
        process.terminate()
        process.wait(timeout=30)

    if results:
        print(f"{args.requests} requests of {BATCH} completions per workload; {args.workers} verifier workers; "
              f"{os.cpu_count()} CPUs\n")
        print("| workload | mode | completions/s | ms per request | x in-process | mean reward |")
        print("|---|---|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['workload']} | {r['mode']} | {r['completions_per_s']:,.0f} | {r['ms_per_request']:.1f} "
              f"| {r['vs_in_process']:.2f}x | {r['mean_reward']:.2f} |")
    if load is not None:
        print(f"\nload test: {load['clients']} clients x {load['requests_per_client']} requests of "
              f"{load['completions_per_request']} GSM8K completions, loopback, with the token\n")
        print("| answered | failed | requests/s | p50 ms | p99 ms | server RSS MiB (before -> peak) | with workers |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        print(f"| {load['answered']} | {load['failed']} | {load['requests_per_s']:,.0f} | {load['p50_ms']:.1f} "
              f"| {load['p99_ms']:.1f} | {load['server_rss_mib_before']:.0f} -> {load['server_rss_mib_peak']:.0f} "
              f"| {load['with_workers_rss_mib_before']:.0f} -> {load['with_workers_rss_mib_peak']:.0f} |")
        for failure in load["first_failures"]:
            print(f"failed: {failure}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"batch": BATCH, "requests": args.requests, "clients": args.clients,
                                           "workers": args.workers, "cpus": os.cpu_count(), "results": results,
                                           "load": load}, indent=2))


if __name__ == "__main__":
    main()
