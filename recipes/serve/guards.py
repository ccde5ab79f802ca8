"""ASGI layers in front of ``referee serve``'s endpoints: the bearer token and the body size limit.

Both answer before the endpoint runs and before the body is read: a request without the token
costs the server its headers only, and a body over the limit is refused from its
``Content-Length`` or, when it comes in chunks, as soon as the bytes received pass the limit.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Endpoints anyone may call (a load balancer's or an orchestrator's health probe).
OPEN_PATHS = frozenset({"/health"})


async def send_json(send: Send, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]] = ()) -> None:
    """Answer with ``body`` as JSON and ``status``, closing the connection (the rest of the body is unread)."""
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            (b"connection", b"close"), *headers]})
    await send({"type": "http.response.body", "body": data})


def token_matches(given: bytes, token: str) -> bool:
    """Whether ``given`` is ``token``, compared in constant time (digests first: lengths do not leak either).

    Example:
        >>> token_matches(b"s3cret", "s3cret"), token_matches(b"s3cre", "s3cret")
        (True, False)
    """
    return hmac.compare_digest(hashlib.sha256(given).digest(), hashlib.sha256(token.encode()).digest())


def bearer_of(scope: Scope) -> bytes | None:
    """The token a request carries: its ``Authorization: Bearer ...`` header, else a ``token=`` in its
    query string (OpenRLHF's and verl's clients send no headers of their own), else ``None``.

    Example:
        >>> bearer_of({"headers": [(b"authorization", b"Bearer abc")]}), bearer_of({"headers": []})
        (b'abc', None)
        >>> bearer_of({"headers": [], "query_string": b"token=abc%2Fd"})
        b'abc/d'
    """
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, credentials = value.partition(b" ")
            return credentials.strip() if scheme.lower() == b"bearer" else None
    given = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
    return given[0].encode() if given else None


class TokenGuard:
    """Refuses (401) every HTTP request but those to :data:`OPEN_PATHS` without the bearer token.

    Example:
        >>> import asyncio
        >>> async def app(scope, receive, send): await send_json(send, 200, {"ok": True})
        >>> sent = []
        >>> async def send(message): sent.append(message)
        >>> asyncio.run(TokenGuard(app, "s3cret")({"type": "http", "path": "/get_reward", "headers": []}, None, send))
        >>> sent[0]["status"]
        401
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path") not in OPEN_PATHS:
            given = bearer_of(scope)
            if given is None or not token_matches(given, self.token):
                await send_json(send, 401, {"error": "this server needs its token: send the header "
                                                     "'Authorization: Bearer <token>', or add ?token=<token> to the "
                                                     "URL, with the token referee serve was started with."},
                                [(b"www-authenticate", b"Bearer")])
                return
        await self.app(scope, receive, send)


class BodyLimit:
    """Refuses (413) a request whose body is over ``max_bytes``, before the endpoint reads any of it.

    The body is read here, up to the limit, and handed on whole: an endpoint never holds more.

    Example:
        >>> import asyncio
        >>> async def app(scope, receive, send): await send_json(send, 200, {"ok": True})
        >>> sent = []
        >>> async def send(message): sent.append(message)
        >>> scope = {"type": "http", "path": "/get_reward", "headers": [(b"content-length", b"5000")]}
        >>> asyncio.run(BodyLimit(app, 1000)(scope, None, send)); sent[0]["status"]
        413
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _refusal(self, size: str) -> dict[str, Any]:
        return {"error": f"the body is {size}, over this server's limit of {self.max_bytes} bytes (--max-body-mb); "
                         "send fewer or shorter completions per request."}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and value.strip().isdigit() and int(value) > self.max_bytes:
                await send_json(send, 413, self._refusal(f"{int(value)} bytes"))
                return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left: nothing to answer
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await send_json(send, 413, self._refusal(f"more than {size} bytes"))
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
