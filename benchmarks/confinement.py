"""What the ``landlock + seccomp`` layer costs a job, side by side in one run.

Two measures, in rounds that alternate which arm goes first, so that the machine's load falls on
both alike:

* the call itself: ``confine_job`` (a Landlock ruleset of the job's ~30 rules, then the seccomp
  filter) in a forked child, against the same fork doing nothing;
* whole jobs: a trivial call-based job (start, load, one call, end and cleanup) at ``basic`` in one
  fork-server worker with the layer and in one without it.

    python -m benchmarks.confinement --jobs 200 --rounds 3
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import os
import statistics
import struct
import time

from referee.verifiers.code.languages import toolchain_folders
from referee.verifiers.sandbox import confine
from referee.verifiers.sandbox.channel import recv_message, send_message
from referee.verifiers.sandbox.isolation import Isolation, isolation_of, read_only_paths
from referee.verifiers.sandbox.limits import Limits
from referee.verifiers.sandbox.sandbox import Sandbox

_PR_SET_NO_NEW_PRIVS = 38
REQUEST = {"mode": "calls", "code": "def f(x):\n    return 2 * x\n", "names": ["f"],
           "limits": Limits.for_tests(timeout=1, tests=1).to_dict(), "deadline_s": 5}


def confine_seconds(rules: list[tuple[str, int]], apply: bool) -> float:
    """Seconds one forked child spends in ``confine_job`` (or in nothing, when not ``apply``)."""
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        os.setsid()
        ctypes.CDLL(None).prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        started = time.perf_counter()
        if apply:
            confine.confine_job(rules)
        os.write(write, struct.pack("d", time.perf_counter() - started))
        os._exit(0)
    os.close(write)
    seconds = struct.unpack("d", os.read(read, 8))[0]
    os.close(read)
    os.waitpid(child, 0)
    return seconds


def job_seconds(isolation: Isolation, jobs: int) -> float:
    """The median seconds of one trivial job, start to cleanup, in a fresh worker at ``isolation``."""
    sandbox = Sandbox(isolation, uid=None, read_only=toolchain_folders())  # as the judge starts it
    sandbox.start()
    times = []
    try:
        for _ in range(jobs):
            started = time.perf_counter()
            channel = sandbox.start_job(REQUEST)
            recv_message(channel, deadline=time.monotonic() + 10)
            send_message(channel, ("call", "f", (21,), {}))
            recv_message(channel, deadline=time.monotonic() + 10)
            channel.close()
            sandbox.end_job()
            times.append(time.perf_counter() - started)
    finally:
        sandbox.close()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=200, help="jobs (and forks) per arm and round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    on, why = confine.probe()
    if not on:
        raise SystemExit(f"landlock + seccomp is off here: {why}")
    confined = isolation_of("basic")
    bare = dataclasses.replace(confined, layers=tuple(layer for layer in confined.layers
                                                      if layer.name != confine.LAYER_NAME))
    rules = confine.job_rules(read_only_paths(toolchain_folders()), ["/dev/shm"])  # the judge's jobs' rules
    print(f"{why.split(':')[0]}; {len(rules)} rules; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.1f}")
    print("| round | confine_job ms | bare fork ms | job without ms | job with ms | with / without |")
    print("|---:|---:|---:|---:|---:|---:|")
    for round_ in range(1, args.rounds + 1):
        call = statistics.median(confine_seconds(rules, True) for _ in range(args.jobs))
        nothing = statistics.median(confine_seconds(rules, False) for _ in range(args.jobs))
        if round_ % 2:
            without, with_layer = job_seconds(bare, args.jobs), job_seconds(confined, args.jobs)
        else:  # the other order: a worker started second may find the machine warmer or busier
            with_layer, without = job_seconds(confined, args.jobs), job_seconds(bare, args.jobs)
        print(f"| {round_} | {call * 1e3:.2f} | {nothing * 1e3:.3f} | {without * 1e3:.2f} | {with_layer * 1e3:.2f} "
              f"| {with_layer / without:.2f}x |")


if __name__ == "__main__":
    main()
