"""``referee serve`` as a subprocess, called over HTTP with OpenRLHF's remote reward-model JSON and
Sandbox Fusion's ``/run_code`` requests."""

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("fastapi", reason="the serve extra (make install installs it)")
pytest.importorskip("uvicorn", reason="the serve extra (make install installs it)")

PROMPT = "<|im_start|>user\nWhat is 9 * 2?<|im_end|>\n<|im_start|>assistant\n"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def call(url, body=None, timeout=60):
    """(status, JSON reply) of a GET, or of a POST of ``body`` as JSON (OpenRLHF posts with aiohttp's json=)."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def start_server(*options):
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "referee.recipes.cli", "serve", "--port", str(port), *options],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"referee serve exited {process.returncode}: {process.stdout.read()}")
        try:
            if call(f"{url}/health", timeout=2)[0] in (200, 503):
                return process, url
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise AssertionError("referee serve did not answer /health within 60 s")


@pytest.fixture(scope="module")
def server():
    process, url = start_server("--workers", "1", "--default-verifier", "gsm8k")
    yield url
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def test_health(server):
    status, reply = call(f"{server}/health")
    assert status == 200 and reply["status"] == "ok" and reply["errors"]["tripped"] is False


def test_get_reward_with_openrlhfs_payload(server):
    tests = {"fn_name": "double", "inputs": [[9]], "outputs": [18]}
    payload = {  # what SingleTurnAgentExecutor._fetch_rewards_via_http posts
        "query": [PROMPT + "9 * 2 = 18\n#### 18<|im_end|>", PROMPT + "#### 17<|im_end|>",
                  PROMPT + "$\\boxed{18}$<|im_end|>", PROMPT + "```python\ndef double(x):\n    return 2 * x\n```<|im_end|>",
                  PROMPT + "#### 18<|im_end|>"],
        "prompts": [PROMPT] * 5,
        "labels": ["18", "18", json.dumps({"data_source": "lighteval/MATH", "answer": "18"}),
                   json.dumps({"verifier": "code", "tests": tests}), "not a number"],
    }
    status, reply = call(f"{server}/get_reward", payload)
    assert status == 200, reply
    assert reply["rewards"] == [1.0, 0.0, 1.0, 1.0, 0.0] and reply["scores"] == reply["rewards"]
    assert reply["extra_logs"]["referee_error"] == pytest.approx(0.2)
    assert reply["extra_logs"]["referee_accuracy"] == pytest.approx(0.6)


def test_parallel_requests_share_the_server(server):
    payload = {"query": [PROMPT + f"#### {n}" for n in range(64)], "prompts": [PROMPT] * 64,
               "labels": [str(n if n % 2 else n + 1) for n in range(64)]}
    with ThreadPoolExecutor(8) as pool:
        replies = list(pool.map(lambda _: call(f"{server}/get_reward", payload), range(8)))
    assert all(status == 200 for status, _ in replies)
    assert all(reply["rewards"] == [float(n % 2) for n in range(64)] for _, reply in replies)


@pytest.mark.parametrize("body, message", [
    (b"not json", "not JSON"),
    ({"queries": ["x"]}, "needs 'query'"),
    ({"query": ["x"], "prompts": [""], "labels": []}, "one prompt and one label per query"),
    ({"query": ["x"], "prompts": [""], "labels": ['{"data_source": "verifier", "verifier": "maths"}']}, "'maths'"),
])
def test_bad_requests_are_400_with_one_sentence(server, body, message):
    status, reply = call(f"{server}/get_reward", body)
    assert status == 400 and message in reply["error"]


def test_run_code_answers_verls_sandbox_fusion_requests(server):
    body = {"compile_timeout": 5, "run_timeout": 5, "code": "a, b = map(int, input().split())\nprint(a * b)",
            "stdin": "6 7\n", "memory_limit_MB": 1024, "language": "python", "files": {}, "fetch_files": []}
    status, reply = call(f"{server}/run_code", body)
    assert status == 200 and reply["status"] == "Success", reply
    assert reply["run_result"]["status"] == "Finished" and reply["run_result"]["stdout"] == "42\n"
    status, reply = call(f"{server}/run_code", {**body, "code": "import sys\nsys.exit(2)"})
    assert status == 200 and reply["status"] == "Failed" and reply["run_result"]["return_code"] == 2
    status, reply = call(f"{server}/run_code", {**body, "language": "rust"})
    assert status == 400 and "Python only" in reply["error"]
    assert call(f"{server}/run_code", b"{")[0] == 400


def test_an_outage_answers_503_and_health_says_so():
    process, url = start_server("--default-verifier", "gsm8k", "--max-error-share", "0.1", "--error-window", "10")
    try:
        broken = {"query": ["#### 18"] * 4, "prompts": [""] * 4, "labels": ["?"] * 4}
        status, reply = call(f"{url}/get_reward", broken)
        assert status == 503 and "referee errors" in reply["error"]
        assert call(f"{url}/get_reward", {"query": ["#### 1"], "labels": ["1"]})[0] == 503  # stays down
        status, reply = call(f"{url}/health")
        assert status == 503 and reply["status"] == "tripped"
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_bad_options_exit_2_before_serving():
    result = subprocess.run([sys.executable, "-m", "referee.recipes.cli", "serve", "--port", str(free_port()),
                             "--verifier-options", '{"math": {"timeuot": 5}}'], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "timeuot" in result.stderr and "Traceback" not in result.stderr
