"""``referee serve``'s ``POST /get_reward`` against calling the same scorer in-process.

Each request is what OpenRLHF sends a remote reward model: 64 queries (a chat prompt, the
response, end-of-turn tokens), their prompts and their labels. Two workloads: GSM8K answers
(``#### N``, judged in-process: the cost is mostly HTTP and JSON) and maths answers (boxed
fractions and roots, several needing sympy in the verifier's worker pool). Half the answers are
right. Rows: in-process ``handle_get_reward`` calls one after another; HTTP from one client;
HTTP from several clients at once (the server shares one set of verifier pools). Every mode gets
fresh answers (the verifiers cache repeated ones); the same two requests scored both ways first
must agree. The table gives completions per second and milliseconds per request of 64.

    python -m benchmarks.serve [--requests 40] [--clients 4] [--workers 2] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.answers import maths_answer
from referee.rewards.adapters import AdapterOptions, Scorer
from referee.rewards.openrlhf import handle_get_reward

BATCH = 64
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


def post(url: str, payload: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as reply:
        return json.loads(reply.read())


def start_server(workers: int) -> tuple[subprocess.Popen, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "referee.recipes.cli", "serve", "--port", str(port),
                                "--workers", str(workers)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
    parser.add_argument("--json", default="benchmarks/results/serve.json", help="where to write the results")
    args = parser.parse_args()

    options = AdapterOptions.parse({"verifier_options": {"math": {"workers": args.workers}}})
    scorer = Scorer(options, name="benchmark")
    process, url = start_server(args.workers)
    results = []
    try:
        for kind in ("gsm8k", "math"):
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
    finally:
        process.terminate()
        process.wait(timeout=30)

    print(f"{args.requests} requests of {BATCH} completions per workload; {args.workers} verifier workers; "
          f"{os.cpu_count()} CPUs\n")
    print("| workload | mode | completions/s | ms per request | x in-process | mean reward |")
    print("|---|---|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['workload']} | {r['mode']} | {r['completions_per_s']:,.0f} | {r['ms_per_request']:.1f} "
              f"| {r['vs_in_process']:.2f}x | {r['mean_reward']:.2f} |")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"batch": BATCH, "requests": args.requests, "clients": args.clients,
                                           "workers": args.workers, "cpus": os.cpu_count(), "results": results}, indent=2))


if __name__ == "__main__":
    main()
