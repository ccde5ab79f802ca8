"""backend="ray" on a simulated two-node Ray cluster (ray.cluster_utils.Cluster): one verifier
host per CPU node, and a batch whose node is lost mid-way fails over to the other node's host."""

import threading
import time

import pytest

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

from referee.verifiers import code, ray_host  # noqa: E402

TESTS = {"format": "humaneval", "entry_point": "add",
         "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n"}
SLOW = "```python\nimport time\ndef add(a, b):\n    time.sleep(0.5)\n    return a + b\n```"
BROKEN = "```python\ndef add(a, b):\n    return None\n```"


@pytest.fixture(scope="module")
def cluster():
    # A head without CPUs (the driver's node: no host there) and two one-CPU nodes. Node deaths
    # are noticed within about a second instead of the default 30 s.
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "include_dashboard": False,
        "_system_config": {"health_check_period_ms": 500, "health_check_failure_threshold": 3,
                           "health_check_initial_delay_ms": 0}})
    nodes = [cluster.add_node(num_cpus=1) for _ in range(2)]
    before = ray_host.configure_hosts()
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        cluster.wait_for_nodes()
        ray_host.configure_hosts(pool_size=1, start_timeout=240.0)
        yield cluster, nodes
    finally:
        ray_host.configure_hosts(**before.__dict__)
        ray_host._handles.clear()
        ray.shutdown()
        cluster.shutdown()


def test_one_host_per_node_and_failover_after_remove_node(cluster):
    cluster, nodes = cluster
    worker_nodes = {node.node_id for node in nodes}
    infos = ray_host.describe_hosts()  # starts a host on every live CPU node
    assert sorted(info["node_id"] for info in infos) == sorted(worker_nodes)
    assert all(info["pool_size"] == 1 and info["sandbox_ok"] for info in infos)
    names = sorted(a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
                   if a["name"].startswith(ray_host.HOST_PREFIX))
    assert names == sorted(ray_host.host_name(n) for n in worker_nodes)

    completions, expected = [SLOW, BROKEN] * 6, ["correct", "wrong"] * 6
    home = ray_host._caller_node(ray, ray_host.cpu_nodes())  # the head has no CPUs: a worker node's host
    assert home in worker_nodes
    survivor = next(n for n in worker_nodes if n != home)
    box = {}
    thread = threading.Thread(target=lambda: box.setdefault(
        "verdicts", code.verify_batch(completions, [TESTS] * len(completions), backend="ray")))
    thread.start()
    home_host = ray_host.host_for_node(home)
    deadline = time.monotonic() + 120
    while ray_host.host_info(home_host)["items"] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # in the middle of the batch (12 programs, 0.5 s or more each, on one worker)
    cluster.remove_node(next(n for n in nodes if n.node_id == home), allow_graceful=False)
    thread.join(300)
    assert not thread.is_alive()
    assert [v.status for v in box["verdicts"]] == expected, [v.reason for v in box["verdicts"]]
    info = ray_host.host_info(ray_host.host_for_node(survivor))
    assert info["items"] == len(completions)  # the whole batch was judged again on the other node
