"""What a ``referee serve`` operator bounds: the token, what a client may ask, sizes and timeouts."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

# The environment variable that holds the bearer token (safer than --token: a command line is
# readable by every local user in /proc/PID/cmdline).
TOKEN_ENV = "REFEREE_SERVE_TOKEN"


@dataclass(frozen=True)
class ServeLimits:
    """The bounds one ``referee serve`` process applies to every client.

    Attributes:
        token: the bearer token every endpoint but ``/health`` needs (``None``: no token).
        max_body_bytes: the largest request body; a larger one is refused (413) before it is read.
        max_completion_chars: the longest query (prompt + response) judged; a longer one scores 0
            as a ``timeout`` without being read, as the verifiers' ``max_answer_chars`` does.
        max_memory_mb: the most memory a ``/run_code`` request may ask for its program.
        max_timeout: the most seconds a ``/run_code`` request may ask for its program.
        max_programs: ``/run_code`` programs run at once; one more is refused with 429.
        request_timeout: seconds a connection has to deliver a whole request (headers and body),
            counted from when the server starts waiting for it; then it is closed.
        idle_timeout: seconds an idle keep-alive connection stays open after a response.
        max_connections: connections served at once; beyond it requests get 503.

    Example:
        >>> ServeLimits(token="s3cret").max_body_bytes
        33554432
    """

    token: str | None = None
    max_body_bytes: int = 32 * 2 ** 20
    max_completion_chars: int = 200_000
    max_memory_mb: int = 4096
    max_timeout: float = 60.0
    max_programs: int = 8
    request_timeout: float = 30.0
    idle_timeout: float = 5.0
    max_connections: int = 512


def is_loopback(address: str) -> bool:
    """Whether ``address`` (an IP address as the socket reports it) is a loopback address.

    Example:
        >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("0.0.0.0"), is_loopback("10.1.2.3")
        (True, True, False, False)
    """
    try:
        return ipaddress.ip_address(address.split("%", 1)[0]).is_loopback
    except ValueError:
        return False
