"""The strict wire encoding: plain Python data to bytes and back, and nothing else.

Plain data is ``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``, ``bytes``, ``list``,
``tuple``, ``dict``, ``set`` and ``frozenset``, plus the standard library's ``Counter`` and
``OrderedDict``. Decoding builds only those types, with the standard library's own classes, so
nothing a sandboxed program sends can run code, or compare in its own way, on the trusted side.
No pickle anywhere.

A subclass that keeps its base type's equality (a namedtuple, an ``IntEnum``, a
``defaultdict``) is sent as its base type; one with its own ``__eq__`` or ``__hash__`` (a
``list`` that equals everything), an object, a function or a generator is refused.

Layout: one tag byte per value; sized values carry a 4-byte big-endian length or count.
"""

from __future__ import annotations

import struct
from collections import Counter, OrderedDict
from typing import Any

MAX_DEPTH = 100  # nesting deeper than this is refused both ways (no recursion blow-up)

_COUNT = struct.Struct(">I")
_FLOAT = struct.Struct(">d")
_COMPLEX = struct.Struct(">dd")
_CONTAINERS: dict[type, bytes] = {list: b"l", tuple: b"t", set: b"S", frozenset: b"R"}
_BUILDERS: dict[int, type] = {ord("l"): list, ord("t"): tuple, ord("S"): set, ord("R"): frozenset}
_MAPPINGS: dict[type, bytes] = {dict: b"d", Counter: b"C", OrderedDict: b"O"}
_MAPPING_BUILDERS: dict[int, type] = {ord("d"): dict, ord("C"): Counter, ord("O"): OrderedDict}
_BASES: tuple[type, ...] = (int, float, complex, str, bytes, list, tuple, dict, set, frozenset)


class WireError(ValueError):
    """A value that is not plain data, or bytes that are not a well-formed encoding.

    Example:
        >>> decode(b"N" + b"N")
        Traceback (most recent call last):
        ...
        referee.verifiers.sandbox.wire.WireError: 1 stray bytes after the value
    """


def encode(value: Any) -> bytes:
    """The bytes of ``value``; raises :class:`WireError` for anything that is not plain data.

    Example:
        >>> decode(encode({"a": [1, 2.5, None], (1, "x"): {3}, "b": b"\\x00"}))
        {'a': [1, 2.5, None], (1, 'x'): {3}, 'b': b'\\x00'}
        >>> class AlwaysEqual(list):
        ...     def __eq__(self, other): return True
        >>> encode(AlwaysEqual())
        Traceback (most recent call last):
        ...
        referee.verifiers.sandbox.wire.WireError: a value of type AlwaysEqual is not plain data (only None, ...)
        >>> from collections import namedtuple
        >>> decode(encode(namedtuple("Point", "x y")(1, 2)))
        (1, 2)
    """
    out = bytearray()
    _encode(value, out, 0)
    return bytes(out)


def _encode(value: Any, out: bytearray, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise WireError(f"value is nested deeper than {MAX_DEPTH} levels")
    kind = type(value)
    if kind not in _PLAIN and value is not None:
        value = _as_base(value)
        kind = type(value)
    if value is None:
        out += b"N"
    elif kind is bool:
        out += b"T" if value else b"F"
    elif kind is int:
        size = value.bit_length() // 8 + 1
        out += b"i" + _COUNT.pack(size) + value.to_bytes(size, "big", signed=True)
    elif kind is float:
        out += b"f" + _FLOAT.pack(value)
    elif kind is complex:
        out += b"c" + _COMPLEX.pack(value.real, value.imag)
    elif kind is str:
        data = value.encode("utf-8", "surrogatepass")
        out += b"s" + _COUNT.pack(len(data)) + data
    elif kind is bytes:
        out += b"b" + _COUNT.pack(len(value)) + value
    elif kind in _CONTAINERS:
        out += _CONTAINERS[kind] + _COUNT.pack(len(value))
        for item in value:
            _encode(item, out, depth + 1)
    elif kind in _MAPPINGS:
        out += _MAPPINGS[kind] + _COUNT.pack(len(value))
        for key, item in value.items():
            _encode(key, out, depth + 1)
            _encode(item, out, depth + 1)
    else:  # a base-type conversion that still gave a subclass
        raise WireError(f"a value of type {kind.__name__} is not plain data")


_PLAIN = frozenset({bool, *_BASES, Counter, OrderedDict})


def _as_base(value: Any) -> Any:
    """``value`` as its built-in base type when it keeps that type's equality; else WireError."""
    kind = type(value)
    for base in _BASES:
        if isinstance(value, base):
            if getattr(kind, "__eq__", None) is base.__eq__ and getattr(kind, "__hash__", None) is base.__hash__:
                try:
                    return base(value)
                except Exception as exc:  # a subclass whose own methods fail
                    raise WireError(f"a value of type {kind.__name__} could not be read as {base.__name__} ({exc})") from None
            break
    raise WireError(f"a value of type {kind.__name__} is not plain data (only None, bool, int, float, complex, "
                    "str, bytes, list, tuple, dict, set, frozenset, Counter and OrderedDict cross)")


def decode(data: bytes) -> Any:
    """The value encoded in ``data``; raises :class:`WireError` unless it is exactly one well-formed value.

    Example:
        >>> decode(encode([1, "two", (3.0, None)]))
        [1, 'two', (3.0, None)]
        >>> decode(b"l\\x00\\x00\\x00\\x09")
        Traceback (most recent call last):
        ...
        referee.verifiers.sandbox.wire.WireError: count 9 at byte 1 exceeds the 0 bytes left
    """
    reader = _Reader(bytes(data))
    value = reader.value(0)
    if reader.position != len(data):
        raise WireError(f"{len(data) - reader.position} stray bytes after the value")
    return value


class _Reader:
    __slots__ = ("data", "position", "end")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.position = 0
        self.end = len(data)

    def _take(self, size: int) -> bytes:
        start = self.position
        if start + size > self.end:
            raise WireError(f"truncated: {size} bytes wanted at byte {start}, {self.end - start} left")
        self.position = start + size
        return self.data[start:start + size]

    def _count(self) -> int:
        at = self.position
        if at + 4 > self.end:
            raise WireError(f"truncated: 4 bytes wanted at byte {at}, {self.end - at} left")
        (count,) = _COUNT.unpack_from(self.data, at)
        self.position = at + 4
        if count > self.end - self.position:  # every item takes at least one byte: refuse before allocating
            raise WireError(f"count {count} at byte {at} exceeds the {self.end - self.position} bytes left")
        return count

    def value(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise WireError(f"value is nested deeper than {MAX_DEPTH} levels")
        if self.position >= self.end:
            raise WireError(f"truncated: 1 bytes wanted at byte {self.position}, 0 left")
        tag = self.data[self.position]
        self.position += 1
        if tag == 115:  # s
            try:
                return str(self._take(self._count()), "utf-8", "surrogatepass")
            except UnicodeDecodeError as exc:
                raise WireError(f"string is not UTF-8 ({exc.reason})") from None
        if tag == 105:  # i
            return int.from_bytes(self._take(self._count()), "big", signed=True)
        if tag in _BUILDERS:
            items = [self.value(depth + 1) for _ in range(self._count())]
            try:
                return _BUILDERS[tag](items)
            except TypeError as exc:  # an unhashable item in a set
                raise WireError(f"bad set item ({exc})") from None
        if tag == 78:  # N
            return None
        if tag == 84:  # T
            return True
        if tag == 70:  # F
            return False
        if tag == 102:  # f
            return _FLOAT.unpack(self._take(8))[0]
        if tag in _MAPPING_BUILDERS:
            result: dict[Any, Any] = _MAPPING_BUILDERS[tag]()
            for _ in range(self._count()):
                key = self.value(depth + 1)
                try:
                    result[key] = self.value(depth + 1)
                except TypeError as exc:
                    raise WireError(f"bad dict key ({exc})") from None
            return result
        if tag == 98:  # b
            return self._take(self._count())
        if tag == 99:  # c
            return complex(*_COMPLEX.unpack(self._take(16)))
        raise WireError(f"unknown tag {tag!r} at byte {self.position - 1}")
