"""Fixtures shared by the tests: one tiny local model for the whole session (recipes, examples),
and a local TCP listener that counts the connections sandboxed programs make (code verifier).
Property tests have no per-example deadline: they test behaviour, and a loaded CI machine is slow.
No test asserts how long something took: a deadline test asserts what the deadline does (a
``timeout`` verdict for work that never ends on its own), and ``no_test_hangs`` fails a test that
stalls instead of letting it hold up the run."""

import os
import signal
import socket
import threading

import pytest
from hypothesis import settings

from referee.recipes.common.loading import load_tokenizer
from referee.recipes.common.tiny_model import save_tiny_model

settings.register_profile("referee", deadline=None)
settings.load_profile("referee")

# Seconds after which a test counts as hung (generous: the slowest training test takes a few minutes on CI).
HANG_LIMIT = int(os.environ.get("REFEREE_TEST_HANG_LIMIT", "900"))


@pytest.fixture(autouse=True)
def no_test_hangs():
    """Fail a test still running after ``HANG_LIMIT`` seconds (a deadline that stopped holding, a
    deadlock) with a one-line reason, rather than stall the whole run until CI's own limit."""
    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def hung(signum, frame):
        raise TimeoutError(f"the test ran past {HANG_LIMIT} s: something it waits on no longer ends")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(HANG_LIMIT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture()
def scorer_calls(monkeypatch):
    """The size of each batch referee's adapters judge (``Scorer.score``, still judged), in call order."""
    from referee.rewards.trainers.adapters import Scorer

    calls = []
    score = Scorer.score

    def counted(self, samples, **kwargs):
        calls.append(len(samples))
        return score(self, samples, **kwargs)

    monkeypatch.setattr(Scorer, "score", counted)
    return calls


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory):
    """A saved tiny Qwen2 model with its character tokenizer (read only: tests must not write here)."""
    return str(save_tiny_model(tmp_path_factory.mktemp("tiny")))


@pytest.fixture(scope="session")
def tokenizer(model_dir):
    return load_tokenizer(model_dir)


class Listener:
    """A TCP server on 127.0.0.1 that counts every connection it gets."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.accepted = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()

    def connections(self) -> list[str]:
        """Lines of /proc/net/tcp for established connections to or from our port."""
        port = f":{self.port:04X}"
        with open("/proc/net/tcp") as handle:
            return [line for line in handle if port in line and line.split()[3] != "0A"]

    def close(self) -> None:
        self.server.close()


@pytest.fixture()
def listener():
    """A fresh listener per test: its connection count belongs to that test alone."""
    server = Listener()
    yield server
    server.close()
