"""``referee serve`` as a subprocess, called over HTTP with OpenRLHF's remote reward-model JSON and
Sandbox Fusion's ``/run_code`` requests; and its guards: the token, the caps, the size limits, the
timeouts, nested JSON and the per-request error breaker."""

import json
import os
import socket
import threading
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


def call(url, body=None, timeout=60, token=None):
    """(status, JSON reply) of a GET, or of a POST of ``body`` as JSON (OpenRLHF posts with aiohttp's json=)."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def start_server(*options, env=None):
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "referee.recipes.cli", "serve", "--port", str(port), *options],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=None if env is None else {**os.environ, **env})
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


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def server():
    process, url = start_server("--workers", "1", "--default-verifier", "gsm8k")
    yield url
    stop(process)


def serve_exits(*options, env=None):
    """(exit status, output) of a ``referee serve`` that is expected to refuse to start."""
    result = subprocess.run([sys.executable, "-m", "referee.recipes.cli", "serve", *options], capture_output=True,
                            text=True, timeout=60, env=None if env is None else {**os.environ, **env})
    return result.returncode, result.stdout + result.stderr


def test_health(server):
    status, reply = call(f"{server}/health")
    assert status == 200 and reply["status"] == "ok" and reply["errors"] == {"errors": 0, "samples": 0, "window": 512}


def test_get_reward_with_openrlhfs_payload(server):
    tests = {"fn_name": "double", "inputs": [[9]], "outputs": [18]}
    payload = {  # what SingleTurnAgentExecutor._fetch_rewards_via_http posts
        "query": [PROMPT + "9 * 2 = 18\n#### 18<|im_end|>", PROMPT + "#### 17<|im_end|>",
                  PROMPT + "$\\boxed{18}$<|im_end|>", PROMPT + "```python\ndef double(x):\n    return 2 * x\n```<|im_end|>",
                  PROMPT + "#### 18<|im_end|>"],
        "prompts": [PROMPT] * 5,
        "labels": ["18", "18", json.dumps({"data_source": "lighteval/MATH", "answer": "18"}),
                   json.dumps({"verifier": "code", "tests": tests}), "18"],
    }
    status, reply = call(f"{server}/get_reward", payload)
    assert status == 200, reply
    assert reply["rewards"] == [1.0, 0.0, 1.0, 1.0, 1.0] and reply["scores"] == reply["rewards"]
    assert reply["extra_logs"]["referee_error"] == 0.0
    assert reply["extra_logs"]["referee_accuracy"] == pytest.approx(0.8)


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
    status, reply = call(f"{server}/run_code", {**body, "language": "cobol"})
    assert status == 400 and "'cobol' is not served" in reply["error"]
    status, reply = call(f"{server}/run_code", {**body, "language": "nodejs", "code": "console.log(6 * 7)"})
    assert status == 200 and reply["run_result"]["stdout"] == "42\n", reply
    assert call(f"{server}/run_code", b"{")[0] == 400


def test_bad_options_exit_2_before_serving():
    result = subprocess.run([sys.executable, "-m", "referee.recipes.cli", "serve", "--port", str(free_port()),
                             "--verifier-options", '{"math": {"timeuot": 5}}'], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "timeuot" in result.stderr and "Traceback" not in result.stderr


# --- the per-request error breaker -------------------------------------------------------------

def test_unusable_labels_fail_their_request_alone_with_a_400_naming_the_label(server):
    bad = {"query": [PROMPT + "#### 18"] * 30, "prompts": [PROMPT] * 30, "labels": ["eighteen"] * 30}
    status, reply = call(f"{server}/get_reward", bad)
    assert status == 400 and reply["error"].startswith("label 0 ('eighteen') cannot be judged") and reply["labels"] == list(range(30))
    mixed = {"query": [PROMPT + "#### 18"] * 3, "prompts": [PROMPT] * 3,
             "labels": ["18", json.dumps({"verifier": "code", "tests": {"fn_name": "f"}}), "18"]}
    status, reply = call(f"{server}/get_reward", mixed)
    assert status == 400 and reply["error"].startswith("label 1 (") and reply["labels"] == [1]
    status, reply = call(f"{server}/get_reward", {"query": [PROMPT + "#### 18"], "prompts": [PROMPT], "labels": ["18"]})
    assert status == 200 and reply["rewards"] == [1.0]  # the next request, any client's, is judged as ever
    status, reply = call(f"{server}/health")
    assert status == 200 and reply["status"] == "ok"


class FailingSandbox:
    """A scorer stand-in whose verifier fails (not the completion's fault) for every non-empty completion."""

    def __init__(self, max_error_share):
        from referee.rewards.trainers.adapters import AdapterOptions, Scorer

        self.real = Scorer(AdapterOptions(default_verifier="gsm8k", max_error_share=max_error_share))
        self.options = self.real.options

    def route(self, sample):
        return self.real.route(sample)

    def score(self, samples, record=True):
        from referee.rewards.trainers.adapters import SampleScore
        from referee.verifiers import Verdict

        return [SampleScore(0.0, Verdict("error", reason="the sandbox died") if sample.completion else
                            Verdict("no_answer"), "gsm8k") for sample in samples]


def test_errors_that_are_not_the_labels_fault_fail_only_the_request_past_the_share():
    from referee.recipes.serve.judging import ErrorWindow, judge_request

    window = ErrorWindow(100)
    body = {"query": ["#### 18"] * 4, "labels": ["18"] * 4}
    reply = judge_request(body, FailingSandbox(0.5), 1000, window)
    assert reply.status == 503 and "4 of the 4 samples" in reply.body["error"] and "the sandbox died" in reply.body["error"]
    assert window.stats() == {"errors": 4, "samples": 4, "window": 100}
    reply = judge_request(body, FailingSandbox(1.0), 1000, window)  # a share the operator allows: fallback rewards
    assert reply.status == 200 and reply.body["rewards"] == [0.0] * 4 and reply.body["extra_logs"]["referee_error"] == 1.0


# --- limits on what a client sends -------------------------------------------------------------

@pytest.fixture(scope="module")
def small_server():
    process, url = start_server("--workers", "1", "--default-verifier", "gsm8k", "--max-body-mb", "0.01",
                                "--max-completion-chars", "200", "--max-timeout", "5", "--max-memory-mb", "512",
                                "--max-programs", "1", "--request-timeout", "1", "--idle-timeout", "1")
    yield url
    stop(process)


def test_a_body_over_the_limit_is_refused_before_it_is_read(small_server):
    for head in (b"Content-Length: 20001\r\n", b"Transfer-Encoding: chunked\r\n"):
        with connect(small_server) as raw:  # a body over 10 KiB that never comes whole
            body = b"" if b"Length" in head else b"1000\r\n" + b"x" * 4096 + b"\r\n"  # no Content-Length: counted
            raw.sendall(b"POST /get_reward HTTP/1.1\r\nHost: x\r\n" + head + b"\r\n" + body * 3)
            reply = b""
            while received := raw.recv(65536):
                reply += received
        assert reply.startswith(b"HTTP/1.1 413") and b"--max-body-mb" in reply, (head, reply)


def test_a_query_over_the_length_bound_scores_0_as_a_timeout_unread(small_server):
    body = {"query": ["#### 18", "x" * 300 + "#### 18"], "prompts": ["", ""], "labels": ["18", "18"]}
    status, reply = call(f"{small_server}/get_reward", body)
    assert status == 200 and reply["rewards"] == [1.0, 0.0]
    assert reply["extra_logs"]["referee_timeout"] == 0.5 and reply["extra_logs"]["referee_error"] == 0.0


@pytest.mark.parametrize("body", [b"[" * 100_000 + b"]" * 100_000,
                                  json.dumps({"query": ["#### 1"], "labels": ['{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"]}).encode()])
def test_deeply_nested_json_is_a_400(body):
    process, url = start_server("--default-verifier", "gsm8k", "--workers", "1")
    try:
        status, reply = call(f"{url}/get_reward", body)
        assert status == 400 and "nested too deeply" in reply["error"]
        assert call(f"{url}/run_code", b"[" * 100_000)[0] == 400
    finally:
        stop(process)


def test_run_code_requests_beyond_the_operators_caps_are_refused(small_server):
    body = {"code": "print(1)", "language": "python", "stdin": ""}
    status, reply = call(f"{small_server}/run_code", {**body, "run_timeout": 6})
    assert status == 400 and "(0, 5]" in reply["error"]
    status, reply = call(f"{small_server}/run_code", {**body, "memory_limit_MB": 1024})
    assert status == 400 and "[1, 512]" in reply["error"]
    status, reply = call(f"{small_server}/run_code", {**body, "code": "#" * 300})
    assert status == 400 and "--max-completion-chars" in reply["error"]
    status, reply = call(f"{small_server}/run_code", {**body, "run_timeout": 5, "memory_limit_MB": 512})
    assert status == 200 and reply["run_result"]["stdout"] == "1\n"


def test_programs_beyond_max_programs_get_429(small_server):
    busy = {"code": "while True:\n    pass", "language": "python", "run_timeout": 5}
    first = {}

    def hold_the_slot():  # a quick program may hold it when we arrive: then ask again
        while (reply := call(f"{small_server}/run_code", busy))[0] == 429:
            pass
        first["reply"] = reply

    thread = threading.Thread(target=hold_the_slot)
    thread.start()
    seen = set()
    while thread.is_alive() and 429 not in seen:  # until the busy program holds the one slot
        seen.add(call(f"{small_server}/run_code", {"code": "print(1)", "language": "python"})[0])
    thread.join()
    assert 429 in seen and first["reply"][1]["run_result"]["status"] == "TimeLimitExceeded"


# --- timeouts ----------------------------------------------------------------------------------

def connect(url):
    host, port = url.rsplit("/", 1)[1].rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=30)


def test_a_connection_that_sends_nothing_is_closed(small_server):
    with connect(small_server) as idle:
        assert idle.recv(100) == b""  # closed by the server (the socket's own timeout would raise instead)


def test_headers_trickled_in_do_not_keep_a_connection_open(small_server):
    with connect(small_server) as slow:
        slow.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        try:
            for _ in range(300):  # a header line every 0.1 s: each arrives well inside any idle timeout
                slow.sendall(b"X-Slow: 1\r\n")
                time.sleep(0.1)
        except OSError:
            pass  # closed while we were still sending
        assert slow.recv(100) == b""


def test_an_idle_keep_alive_connection_is_closed_after_its_response(small_server):
    with connect(small_server) as connection:
        connection.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        received = b""
        while b'"verifiers"' not in received:
            received += connection.recv(4096)
        assert received.startswith(b"HTTP/1.1 200") and connection.recv(100) == b""


# --- the token ---------------------------------------------------------------------------------

def test_every_endpoint_but_health_needs_the_token():
    process, url = start_server("--default-verifier", "gsm8k", "--workers", "1", env={"REFEREE_SERVE_TOKEN": "s3cret-token"})
    try:
        body = {"query": ["#### 18"], "labels": ["18"]}
        assert call(f"{url}/health")[0] == 200
        for token in (None, "wrong", "s3cret-toke", "s3cret-token-"):
            status, reply = call(f"{url}/get_reward", body, token=token)
            assert status == 401 and "Authorization: Bearer" in reply["error"]
            assert call(f"{url}/run_code", {"code": "print(1)"}, token=token)[0] == 401
        status, reply = call(f"{url}/get_reward", body, token="s3cret-token")
        assert status == 200 and reply["rewards"] == [1.0]
        assert call(f"{url}/get_reward?token=s3cret-token", body)[0] == 200  # OpenRLHF's client sends no headers
        assert call(f"{url}/get_reward?token=s3cret", body)[0] == 401
        assert call(f"{url}/run_code", {"code": "print(1)"}, token="s3cret-token")[1]["run_result"]["stdout"] == "1\n"
    finally:
        stop(process)


def test_an_address_other_than_loopback_is_refused_without_a_token():
    status, output = serve_exits("--host", "0.0.0.0", "--port", "0")
    assert status == 2 and len(output.strip().splitlines()) == 1 and "REFEREE_SERVE_TOKEN" in output
    status, output = serve_exits("--host", "0.0.0.0", "--port", "0", "--token", " ")
    assert status == 2 and "token" in output and "Traceback" not in output


# --- start-up ----------------------------------------------------------------------------------

def test_a_port_in_use_is_one_line_and_exit_2_without_a_banner():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        status, output = serve_exits("--port", str(port))
    assert status == 2 and output.strip().splitlines() == [
        f"referee serve: 127.0.0.1 port {port} is in use (another server?); stop it or choose another --port."]


@pytest.mark.parametrize("options, message", [
    (["--port", "99999"], "--port 99999 is not a port"),
    (["--max-timeout", "1e300"], "--max-timeout"),
    (["--max-programs", "0"], "--max-programs 0 must be a positive number"),
])
def test_unusable_limits_are_one_line_and_exit_2(options, message):
    status, output = serve_exits(*options)
    assert status == 2 and len(output.strip().splitlines()) == 1 and message in output


def test_headers_still_incomplete_past_16_kib_are_a_400(small_server):
    with connect(small_server) as raw:  # h11 bounds what it holds of a request not yet whole
        raw.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"X-Big: aaaaaaaaaaaaaaaa\r\n" * 1000)
        reply = b""
        while received := raw.recv(65536):
            reply += received
    assert reply.startswith(b"HTTP/1.1 400")


def test_connections_past_max_connections_get_503():
    process, url = start_server("--default-verifier", "gsm8k", "--workers", "1", "--max-connections", "2")
    try:
        def status():
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=30) as reply:
                    return reply.status
            except urllib.error.HTTPError as error:  # uvicorn's own 503 is plain text
                return error.code

        with connect(url), connect(url):  # two held open (idle, not yet timed out)
            assert status() == 503
        while status() != 200:  # the server notices they closed (no_test_hangs fails the test if never)
            time.sleep(0.1)
    finally:
        stop(process)


# --- OpenRLHF's errors reach the user (issue 34) ------------------------------------------------
# OpenRLHF's HTTP client retries a refused request five times, then trains on with the reward None and
# dies on `'NoneType' object has no attribute 'size'`: the sentence must show in the server's log, in
# /health, and, through referee's client file, in the exception that stops the run.

def test_refusals_are_logged_with_their_sentence_and_counted_by_health():
    process, url = start_server("--workers", "1", "--default-verifier", "gsm8k")
    try:
        typo = {"query": [PROMPT + "#### 18"], "prompts": [PROMPT], "labels": ['{"data_source": "openai/gms8k", "answer": "18"}']}
        status, reply = call(f"{url}/get_reward", typo)
        assert status == 400 and "did you mean 'openai/gsm8k'" in reply["error"]
        elsewhere = {"query": ["User: 9*2? Worked: #### 18\nAssistant: I am not sure."], "prompts": ["9*2? Worked: #### 18\nA:"],
                     "labels": ["18"]}
        status, reply = call(f"{url}/get_reward", elsewhere)
        assert status == 400 and reply["error"].startswith("query 0: the query does not contain its prompt") and reply["queries"] == [0]
        status, health = call(f"{url}/health")
        assert status == 200 and health["status"] == "ok" and health["refused"]["requests"] == 2
        assert health["refused"]["last"] == reply["error"] and health["breaker"] == {"tripped": False, "trips": 0, "reason": None}
    finally:
        stop(process)
    output = process.stdout.read()
    port = url.rsplit(":", 1)[1]  # issue 34: the start-up line gives verl 0.7+'s key, the old one labelled
    assert f"verl 0.7+: reward.sandbox_fusion.url=http://127.0.0.1:{port}/run_code; verl 0.6 and earlier: " \
           "reward_model.sandbox_fusion.url)" in output
    assert "referee serve: POST /get_reward answered 400: label 0 (" in output and "did you mean 'openai/gsm8k'" in output
    assert "referee serve: POST /get_reward answered 400: query 0: the query does not contain its prompt" in output


def serve_in_thread(scorer):
    """build_app(scorer) under uvicorn in a thread: (server, url)."""
    import uvicorn

    from referee.recipes.serve.app import build_app

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(build_app(scorer), host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:  # no_test_hangs fails the test if it never starts
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{port}"


def test_a_tripped_request_is_logged_and_health_names_the_breaker_and_why(caplog):
    import logging

    log = logging.getLogger("referee.serve")
    log.addHandler(caplog.handler)
    server, url = serve_in_thread(FailingSandbox(0.05))
    try:
        status, reply = call(f"{url}/get_reward", {"query": ["#### 18"] * 4, "labels": ["18"] * 4})
        assert status == 503 and "the sandbox died" in reply["error"]
        status, health = call(f"{url}/health")
        assert status == 200 and health["status"] == "tripped"
        assert health["breaker"] == {"tripped": True, "trips": 1, "reason": reply["error"]}
    finally:
        server.should_exit = True
        log.removeHandler(caplog.handler)
    assert {r.getMessage() for r in caplog.records} == {f"POST /get_reward answered 503: {reply['error']}"}


def load_client_like_openrlhf():
    """SingleTurnAgentExecutor: spec_from_file_location("reward_func", path) on the file given as the remote URL."""
    import importlib.util

    from referee.recipes.serve import client

    spec = importlib.util.spec_from_file_location("reward_func", client.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reward_func


def execute_like_openrlhf(func, query, prompt, label):
    """SingleTurnAgentExecutor.execute: the reward in a thread, any Exception logged and the reward left None."""
    import asyncio

    async def execute():
        try:
            [info] = await asyncio.gather(asyncio.to_thread(func, [query], [prompt], [label]))
            return info.get("rewards")
        except Exception:
            return None

    return asyncio.run(execute())


def test_the_client_file_returns_rewards_and_stops_the_run_with_the_servers_sentence(server, monkeypatch):
    from referee.rewards.trainers.routing import RefereeStop

    func = load_client_like_openrlhf()  # a module of its own: its classes are not referee.recipes.serve.client's
    monkeypatch.setenv("REFEREE_SERVE_URL", server)
    assert execute_like_openrlhf(func, PROMPT + "#### 18<|im_end|>", PROMPT, "18") == [1.0]
    with pytest.raises(RefereeStop, match=r"HTTP 400\): label 0 \('eighteen'\) cannot be judged") as caught:
        execute_like_openrlhf(func, PROMPT + "#### 18", PROMPT, "eighteen")
    assert type(caught.value).__name__ == "RewardServerRefused"
    monkeypatch.setenv("REFEREE_SERVE_URL", f"http://127.0.0.1:{free_port()}/get_reward")
    monkeypatch.setattr(func.__globals__["time"], "sleep", lambda seconds: None)
    with pytest.raises(RefereeStop, match="did not answer in 5 tries") as caught:
        func([PROMPT + "#### 18"], [PROMPT], ["18"])
    assert type(caught.value).__name__ == "RewardServerUnreachable"


def test_the_client_file_carries_a_503s_sentence(monkeypatch):
    from referee.rewards.trainers.routing import RefereeStop

    server, url = serve_in_thread(FailingSandbox(0.05))
    try:
        monkeypatch.setenv("REFEREE_SERVE_URL", url)
        with pytest.raises(RefereeStop, match=r"HTTP 503\): 1 of the 1 samples .* the sandbox died"):
            execute_like_openrlhf(load_client_like_openrlhf(), "#### 18", "", "18")
    finally:
        server.should_exit = True
