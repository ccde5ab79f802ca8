"""uvicorn's HTTP/1.1 protocol with a request deadline: a connection must deliver a whole request in time.

uvicorn (0.54) times out only idle keep-alive connections *after* a response
(``timeout_keep_alive``); a connection that opens and sends nothing, or trickles its headers or
body a byte at a time, stays open for good, and a thousand such connections make the server
unreachable. Here a deadline starts whenever the connection waits for a request (when it
opens, and after each response) and closes it unless the request has arrived whole by then;
bytes trickling in do not extend it. What h11 holds of a request not yet whole is bounded too
(uvicorn's ``h11_max_incomplete_event_size``, 16 KiB by default: past it, a 400).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

# h11 states in which the client is still sending its request.
_RECEIVING = (h11.IDLE, h11.SEND_BODY)


def protocol_with_request_timeout(seconds: float) -> type[H11Protocol]:
    """A uvicorn ``http`` protocol class that closes a connection whose request is not whole after ``seconds``.

    Example:
        >>> protocol_with_request_timeout(10.0).request_timeout
        10.0
    """

    class RequestTimeoutProtocol(H11Protocol):
        request_timeout = float(seconds)

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._request_deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._watch()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._watch()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._watch()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_deadline()
            super().connection_lost(exc)

        def _watch(self) -> None:
            """Start the deadline when the connection begins to wait for a request, stop it once one is whole."""
            if self.transport.is_closing():
                self._stop_deadline()
            elif self.conn.their_state in _RECEIVING:
                if self._request_deadline is None:
                    self._request_deadline = self.loop.call_later(self.request_timeout, self._too_slow)
            else:
                self._stop_deadline()

        def _stop_deadline(self) -> None:
            if self._request_deadline is not None:
                self._request_deadline.cancel()
                self._request_deadline = None

        def _too_slow(self) -> None:
            self._request_deadline = None
            if not self.transport.is_closing():
                self.transport.close()

    return RequestTimeoutProtocol
