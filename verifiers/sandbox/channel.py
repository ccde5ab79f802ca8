"""Framed messages over a socket: a 4-byte length, then one value in the strict wire encoding.

Every receive takes a deadline (a ``time.monotonic()`` instant, or ``None`` to wait) and a
size cap, so a peer that stalls or floods is cut off instead of hanging or exhausting the
reader.
"""

from __future__ import annotations

import socket
import struct
import time
from typing import Any

from .wire import decode, encode

_HEADER = struct.Struct(">I")


class ChannelClosed(ConnectionError):
    """The peer closed the channel (or died) before a whole message arrived.

    Example:
        >>> a, b = socket.socketpair(); a.close()
        >>> recv_message(b)
        Traceback (most recent call last):
        ...
        referee.verifiers.sandbox.channel.ChannelClosed: the peer closed the channel
    """


class ChannelTimeout(TimeoutError):
    """No whole message arrived before the deadline (see :func:`recv_message`)."""


class MessageTooLarge(ValueError):
    """The peer announced a message longer than the reader allows.

    Example:
        >>> a, b = socket.socketpair(); send_message(a, "x" * 100)
        >>> recv_message(b, max_bytes=10)
        Traceback (most recent call last):
        ...
        referee.verifiers.sandbox.channel.MessageTooLarge: a 105-byte message exceeds the 10-byte limit
    """


def send_message(sock: socket.socket, value: Any) -> None:
    """Send one value; raises :class:`~referee.verifiers.sandbox.wire.WireError` if it is not plain data.

    Example:
        >>> a, b = socket.socketpair()
        >>> send_message(a, ("call", "f", (1, 2), {}))
        >>> recv_message(b, deadline=time.monotonic() + 1)
        ('call', 'f', (1, 2), {})
    """
    send_encoded(sock, encode(value))


def send_encoded(sock: socket.socket, payload: bytes) -> None:
    """Send a value already encoded with :func:`~referee.verifiers.sandbox.wire.encode`.

    Example:
        >>> a, b = socket.socketpair(); send_encoded(a, encode([1, 2]))
        >>> recv_message(b)
        [1, 2]
    """
    sock.sendall(_HEADER.pack(len(payload)) + payload)


def _recv_exactly(sock: socket.socket, size: int, deadline: float | None) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChannelTimeout(f"no reply within the deadline ({len(chunks)} of {size} bytes read)")
            sock.settimeout(left)
        else:
            sock.settimeout(None)
        try:
            chunk = sock.recv(min(size - len(chunks), 1 << 20))
        except socket.timeout:
            raise ChannelTimeout(f"no reply within the deadline ({len(chunks)} of {size} bytes read)") from None
        except OSError as exc:  # ECONNRESET and friends: the peer is gone
            raise ChannelClosed(f"channel failed: {exc}") from None
        if not chunk:
            raise ChannelClosed("the peer closed the channel")
        chunks += chunk
    return bytes(chunks)


def recv_message(sock: socket.socket, *, deadline: float | None = None, max_bytes: int = 1 << 30) -> Any:
    """Receive one value, waiting until ``deadline`` at most; the payload may not exceed ``max_bytes``.

    Raises :class:`ChannelClosed`, :class:`ChannelTimeout`, :class:`MessageTooLarge`, or
    :class:`~referee.verifiers.sandbox.wire.WireError` for malformed bytes.

    Example:
        >>> a, b = socket.socketpair()
        >>> recv_message(b, deadline=time.monotonic() + 0.01)
        Traceback (most recent call last):
        ...
        referee.verifiers.sandbox.channel.ChannelTimeout: no reply within the deadline (0 of 4 bytes read)
    """
    (size,) = _HEADER.unpack(_recv_exactly(sock, _HEADER.size, deadline))
    if size > max_bytes:
        raise MessageTooLarge(f"a {size}-byte message exceeds the {max_bytes}-byte limit")
    return decode(_recv_exactly(sock, size, deadline))
