"""Fixtures shared by the tests: one tiny local model for the whole session (recipes, examples),
and a local TCP listener that counts the connections sandboxed programs make (code verifier).
Property tests have no per-example deadline: they test behaviour, and a loaded CI machine is slow."""

import socket
import threading

import pytest
from hypothesis import settings

from referee.recipes.common.loading import load_tokenizer
from referee.recipes.common.tiny_model import save_tiny_model

settings.register_profile("referee", deadline=None)
settings.load_profile("referee")


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
