"""backend="ray" on a real local Ray cluster (no local_mode): one verifier host per node, shared by
its callers; deadlines inside the host; a killed host mid-batch; a caller's batch_timeout."""

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from referee.rewards import get_reward  # noqa: E402
from referee.verifiers import code, gsm8k, math, ray_host  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

# HumanEval-shaped tasks written here: prompt + canonical solution, a check(candidate) test, an entry point.
TASKS = [
    {"entry_point": "has_close_elements",
     "solution": "def has_close_elements(numbers, threshold):\n"
                 "    for i, a in enumerate(numbers):\n"
                 "        for j, b in enumerate(numbers):\n"
                 "            if i != j and abs(a - b) < threshold:\n"
                 "                return True\n"
                 "    return False\n",
     "test": "def check(candidate):\n"
             "    assert candidate([1.0, 2.0, 3.9, 4.0], 0.3) == True\n"
             "    assert candidate([1.0, 2.0, 3.0], 0.5) == False\n"
             "    assert candidate([], 1.0) == False\n"},
    {"entry_point": "truncate_number",
     "solution": "def truncate_number(number: float) -> float:\n    return number % 1.0\n",
     "test": "def check(candidate):\n"
             "    assert candidate(3.5) == 0.5\n"
             "    assert abs(candidate(1.33) - 0.33) < 1e-6\n"},
    {"entry_point": "below_zero",
     "solution": "from typing import List\n\n"
                 "def below_zero(operations: List[int]) -> bool:\n"
                 "    balance = 0\n"
                 "    for op in operations:\n"
                 "        balance += op\n"
                 "        if balance < 0:\n"
                 "            return True\n"
                 "    return False\n",
     "test": "def check(candidate):\n"
             "    assert candidate([]) == False\n"
             "    assert candidate([1, 2, -4, 5]) == True\n"
             "    assert candidate([1, -1, 2]) == False\n"},
    {"entry_point": "fib",
     "solution": "def fib(n: int) -> int:\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
     "test": "def check(candidate):\n"
             "    assert candidate(10) == 55\n"
             "    assert candidate(1) == 1\n"
             "    assert candidate(12) == 144\n"},
]


def _tests(task):
    return {"format": "humaneval", "test": task["test"], "entry_point": task["entry_point"]}


def _returns_none(task):
    head = task["solution"].split(":\n", 1)[0] if task["solution"].startswith("def") else \
        task["solution"][task["solution"].index("def "):].split(":\n", 1)[0]
    return f"{head}:\n    return None\n"


def _fenced(program):
    return f"Here is my solution.\n```python\n{program}```\n"


HANG = r"The answer is \boxed{9^{9^{9^{9}}}}."


@pytest.fixture(scope="module")
def cluster():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)  # never a cluster found here
    before = ray_host.configure_hosts()
    ray_host.configure_hosts(pool_size=2, start_timeout=240.0)
    try:
        yield ray
    finally:
        ray_host.configure_hosts(**before.__dict__)
        ray_host._handles.clear()
        ray.shutdown()


def _hosts():
    return [a for a in ray.util.list_named_actors(all_namespaces=True) if a["name"].startswith(ray_host.HOST_PREFIX)]


def _host():
    (entry,) = _hosts()
    return ray.get_actor(entry["name"], namespace=entry["namespace"])


def test_humaneval_canonical_pass_and_none_fail_through_ray(cluster):
    completions = [_fenced(t["solution"]) for t in TASKS] + [_fenced(_returns_none(t)) for t in TASKS]
    tests = [_tests(t) for t in TASKS] * 2
    verdicts = code.verify_batch(completions, tests, backend="ray")
    assert [v.status for v in verdicts] == ["correct"] * 4 + ["wrong"] * 4, [v.reason for v in verdicts]
    assert all(v.details["isolation"] in code.LEVELS for v in verdicts)
    # The same through a reward function, backend= passed on to verify_batch.
    reward = get_reward("code_all_pass", backend="ray")
    assert reward(completions=completions, tests=tests) == [1.0] * 4 + [0.0] * 4
    # Maths and GSM8K through the same host, and the host node's name.
    assert [v.status for v in math.verify_batch([r"\boxed{\frac12}", r"\boxed{3}", "no idea"], ["0.5", "2", "1"],
                                                backend="ray")] == ["correct", "wrong", "no_answer"]
    assert [v.status for v in gsm8k.verify_batch(["#### 18", "#### 17"], [18, 18], backend="ray")] == ["correct", "wrong"]
    (entry,) = _hosts()
    assert entry["name"] == ray_host.host_name(ray.get_runtime_context().get_node_id())


def test_the_documented_snippet_runs_as_written(cluster):
    """docs/integrations.md, "Across machines: Ray": the block runs as written on completions and golds; its
    asyncio line (a comment there, a top-level await) is awaited here."""
    text = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    [block] = [found for found in re.findall(r"```python\n(.*?)```", text, re.S) if 'backend="ray"' in found]
    namespace = {"completions": [r"so $\boxed{\frac12}$", r"\boxed{3}", "no idea"], "golds": ["0.5", "2", "1"]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # the docs show no call on its way out
        exec(block, namespace)
        assert [v.status for v in namespace["verdicts"]] == ["correct", "wrong", "no_answer"]
        assert namespace["reward"](completions=[_fenced(TASKS[0]["solution"])], tests=[_tests(TASKS[0])]) == [1.0]
        [awaited] = re.findall(r"# asyncio: await (.*)", block)
        exec("import referee.verifiers.ray_host", namespace)
        verdicts = asyncio.run(eval(f"(lambda: {awaited})()", namespace))
    assert [v.status for v in verdicts] == ["correct", "wrong", "no_answer"]


def test_an_unknown_backend_is_an_error_verdict_not_a_crash(cluster):
    assert [v.status for v in math.verify_batch([r"\boxed{1}"], ["1"], backend="spark")] == ["error"]
    with pytest.raises(ValueError, match="backend='spark'"):
        get_reward("math_accuracy", backend="spark")


def test_two_callers_on_one_node_share_one_host(cluster):
    @ray.remote(num_cpus=0)
    def caller():
        import os

        from referee.verifiers import math as maths

        return os.getpid(), [v.status for v in maths.verify_batch([r"\boxed{4}"], ["4"], backend="ray")]

    assert [v.status for v in math.verify_batch([r"\boxed{5}"], ["5"], backend="ray")] == ["correct"]
    pid, statuses = ray.get(caller.remote(), timeout=240)
    assert statuses == ["correct"]
    # A second Ray job (another driver on this node, e.g. `referee score --ray auto`) shares it too.
    other_job = subprocess.run(
        [sys.executable, "-c", "import os, ray; ray.init(address=os.environ['GCS'], log_to_driver=False); "
                               "from referee.verifiers import gsm8k; "
                               "print(os.getpid(), gsm8k.verify_batch(['#### 3'], [3], backend='ray')[0].status)"],
        env={**os.environ, "GCS": ray.get_runtime_context().gcs_address}, capture_output=True, text=True, timeout=240)
    other_pid, other_status = other_job.stdout.split()[-2:]
    assert other_status == "correct", other_job.stderr[-2000:]
    assert len(_hosts()) == 1
    info = ray_host.host_info(_host())
    callers = {tuple(c) for c in info["callers"]}
    assert {p for _, p in callers} >= {pid, os.getpid(), int(other_pid)}
    assert info["pool_size"] == 2 and info["isolation"] in code.LEVELS and info["sandbox_ok"]
    (described,) = ray_host.describe_hosts()
    assert described["node_id"] == info["node_id"]


def test_referee_score_and_doctor_on_ray(cluster, tmp_path, capsys):
    import json

    from referee.recipes.cli import build_parser

    data = tmp_path / "in.jsonl"
    rows = [{"completion": f"so #### {i % 7}", "answer": i % 5} for i in range(600)]
    lines = [json.dumps(row) for row in rows]
    lines[3] = "{not json"
    data.write_text("\n".join(lines) + "\n")
    outputs = {}
    for name, extra in (("local", []), ("ray", ["--ray", "auto"])):
        out = tmp_path / f"{name}.jsonl"
        args = build_parser().parse_args(["score", "gsm8k", str(data), "-o", str(out), "--no-progress", *extra])
        assert args.run(args) == 0
        outputs[name] = out.read_text().splitlines()
    assert outputs["ray"] == outputs["local"] and len(outputs["ray"]) == 600
    assert ray_host.host_info(_host())["items"] >= 599  # judged by the node's host
    assert json.loads(outputs["ray"][3])["status"] == "error"
    capsys.readouterr()
    args = build_parser().parse_args(["doctor", "--no-check", "--ray"])
    assert args.run(args) == 0
    printed = capsys.readouterr().out
    assert "ray verifier hosts: 1" in printed and "pool 2" in printed


def test_ray_data_map_batches_through_the_host(cluster):
    import ray.data

    rows = [{"completion": f"so \\boxed{{{i % 7}}}", "answer": str(i % 5)} for i in range(300)]
    rows += [{"completion": _fenced(t["solution"]), "answer": "unused"} for t in TASKS]
    judged = ray_host.verify_dataset(ray.data.from_items(rows[:300]), "math", batch_size=64, timeout=5.0).take_all()
    assert sorted(r["completion"] + r["answer"] for r in judged) == sorted(r["completion"] + r["answer"] for r in rows[:300])
    for row in judged:  # each row carries its own verdict (Ray Data may reorder blocks)
        boxed = row["completion"].split("{")[1].rstrip("}")
        assert row["status"] == ("correct" if boxed == row["answer"] else "wrong"), row
        assert json.loads(row["verdict"])["status"] == row["status"]
    # The host holds both CPUs of this cluster: everything here asks for none.
    code_rows = ray.data.from_items([{"completion": _fenced(t["solution"]), "tests": _tests(t)} for t in TASKS]
                                    + [{"completion": _fenced(_returns_none(TASKS[0])), "tests": _tests(TASKS[0])}])
    judged = ray_host.verify_dataset(code_rows, "code").take_all()
    assert sorted((r["status"], "return None" in r["completion"]) for r in judged) == \
        [("correct", False)] * 4 + [("wrong", True)]


def test_a_hanging_answer_returns_on_its_deadline_from_async_and_from_a_thread(cluster):
    golds = ["5", "2"]
    completions = [HANG, r"\boxed{2}"]

    async def from_async():
        return await ray_host.averify_batch("math", completions, golds, timeout=1.0)

    assert [v.status for v in asyncio.run(from_async())] == ["timeout", "correct"]

    box = {}

    def from_thread():
        box["verdicts"] = math.verify_batch(completions, golds, timeout=1.0, backend="ray")

    thread = threading.Thread(target=from_thread)
    thread.start()
    thread.join(120)
    assert not thread.is_alive()
    assert [v.status for v in box["verdicts"]] == ["timeout", "correct"]


def test_a_caller_batch_timeout_makes_unfinished_items_errors(cluster):
    # 6 hanging items with a 20 s deadline each on 2 workers cannot finish in 2 s.
    completions = [r"\boxed{7}"] + [HANG] * 6 + [r"\boxed{8}"]
    golds = ["7"] + ["5"] * 6 + ["8"]
    verdicts = math.verify_batch(completions, golds, timeout=20.0, batch_timeout=2.0, backend="ray")
    assert len(verdicts) == len(completions)
    assert verdicts[0].status == "correct" and verdicts[-1].status == "correct"  # fast paths, answered in time
    assert {v.status for v in verdicts[1:-1]} == {"error"}
    # Code takes a batch_timeout too, locally and on the host.
    sleepy = _fenced("import time\ndef fib(n):\n    time.sleep(2)\n    return 55\n")
    tests = [_tests(TASKS[3])] * 6
    verdicts = code.verify_batch([sleepy] * 6, tests, timeout=10.0, batch_timeout=1.0, backend="ray")
    assert len(verdicts) == 6 and {v.status for v in verdicts} == {"error"}


def test_the_caller_deadline_holds_when_the_host_is_too_busy_to_answer(cluster):
    # Every thread of the host (max_concurrency = 2 x pool size = 4) busy for 10 s, two with
    # programs in the code pool, two with hanging answers in the maths pool: a call with
    # batch_timeout=1 waits in Ray's queue, and the caller gives up on its own.
    sleeper = _fenced("import time\ndef fib(n):\n    time.sleep(10)\n    return 55\n")
    one_call = {"format": "humaneval", "test": "def check(candidate):\n    assert candidate(10) == 55\n", "entry_point": "fib"}
    calls = [(code.verify_batch, [sleeper], [one_call], 20.0)] * 2 + [(math.verify_batch, [HANG], ["5"], 10.0)] * 2
    host = _host()
    before = ray_host.host_info(host)["batches"]
    busy = [threading.Thread(target=verify, args=(completions, golds), kwargs={"timeout": timeout, "backend": "ray"})
            for verify, completions, golds, timeout in calls]
    for thread in busy:
        thread.start()
    try:
        deadline = time.monotonic() + 60
        while ray_host.host_info(host)["batches"] < before + 4 and time.monotonic() < deadline:
            time.sleep(0.05)  # info() has its own threads: it answers while the four batches run
        assert ray_host.host_info(host)["batches"] == before + 4
        verdicts = math.verify_batch([r"\boxed{1}", r"\boxed{2}"], ["1", "2"], batch_timeout=1.0, backend="ray")
        assert [v.status for v in verdicts] == ["error", "error"]
        assert "batch deadline of 1.0 s passed" in verdicts[0].reason
    finally:
        for thread in busy:
            thread.join(120)


def _slow_and_broken(copies):
    slow = [_fenced("import time\n" + t["solution"].replace(":\n", ":\n    time.sleep(0.2)\n", 1)) for t in TASKS]
    broken = [_fenced(_returns_none(t)) for t in TASKS]
    return (slow + broken) * copies, [_tests(t) for t in TASKS] * 2 * copies, (["correct"] * 4 + ["wrong"] * 4) * copies


def _kill_when_busy(old_pid, items_before):
    """Wait for a host other than ``old_pid``'s to take more than ``items_before`` items, kill it
    in the middle of the batch; its pid."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            host = _host()
            info = ray_host.host_info(host)
        except (ValueError, ray.exceptions.RayError):
            time.sleep(0.05)
            continue
        if info["pid"] != old_pid and info["items"] > items_before:
            time.sleep(0.5)  # the host is in the middle of the batch
            ray.kill(host)
            return info["pid"]
        time.sleep(0.05)
    raise AssertionError("no host took the batch")


def _in_thread(completions, tests):
    box = {}
    thread = threading.Thread(target=lambda: box.setdefault("verdicts", code.verify_batch(completions, tests, backend="ray")))
    thread.start()
    return thread, box


def test_ray_kill_of_the_host_mid_batch_returns_every_verdict_in_order_without_a_false_pass(cluster):
    completions, tests, expected = _slow_and_broken(3)
    host = _host()
    before = ray_host.host_info(host)
    thread, box = _in_thread(completions, tests)
    while ray_host.host_info(host)["items"] == before["items"]:
        time.sleep(0.05)
    time.sleep(0.5)  # the host is in the middle of the batch
    ray.kill(host)
    thread.join(300)
    assert not thread.is_alive()
    verdicts = box["verdicts"]
    # The batch was sent once more, to a new host (the only node's): every item judged, in order.
    assert [v.status for v in verdicts] == expected, [v.reason for v in verdicts]
    after = ray_host.host_info(_host())
    assert after["pid"] != before["pid"] and after["items"] == len(completions)

    # Both tries' hosts killed: the items are errors, in order, never a pass.
    thread, box = _in_thread(completions, tests)
    first = _kill_when_busy(None, after["items"])
    _kill_when_busy(first, 0)
    thread.join(300)
    assert not thread.is_alive()
    verdicts = box["verdicts"]
    assert len(verdicts) == len(completions)
    assert all(v.status in (want, "error") for v, want in zip(verdicts, expected))
    assert any(v.status == "error" and "both tries" in v.reason for v in verdicts)
    ray_host._handles.clear()


def _kill_hosts():
    ray_host.stop_hosts()
    deadline = time.monotonic() + 60
    while _hosts() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _hosts() == []


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid level needs root (CI runs as root)")
def test_min_isolation_refuses_code_below_it(cluster):
    # `uid`, not `basic`: the sandbox itself refuses `basic` unless it is accepted (allow_weak_isolation).
    _kill_hosts()
    before = ray_host.configure_hosts()
    ray_host.configure_hosts(isolation="uid", min_isolation="namespaces")
    try:
        verdicts = code.verify_batch([_fenced(TASKS[3]["solution"])], [_tests(TASKS[3])], backend="ray")
        assert verdicts[0].status == "error" and "below min_isolation=namespaces" in verdicts[0].reason
        assert get_reward("code_pass_rate", backend="ray")(completions=[TASKS[3]["solution"]],
                                                            tests=[_tests(TASKS[3])]) == [None]
        assert [v.status for v in math.verify_batch([r"\boxed{2}"], ["2"], backend="ray")] == ["correct"]
        (info,) = ray_host.describe_hosts(start=False)
        assert info["isolation"] == "uid" and info["refuses_code"]
    finally:
        _kill_hosts()
        ray_host.configure_hosts(**before.__dict__)
