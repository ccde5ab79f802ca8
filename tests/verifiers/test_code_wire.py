"""The strict wire encoding and its framing: plain data round-trips exactly, nothing else crosses,
and no byte string makes the decoder run code, hang or build anything but plain data."""

import enum
import math
import socket
import time
from collections import Counter, OrderedDict, defaultdict, deque, namedtuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers.sandbox.channel import (ChannelClosed, ChannelTimeout, MessageTooLarge, recv_message,
                                            send_encoded, send_message)
from referee.verifiers.sandbox.wire import MAX_DEPTH, WireError, decode, encode

PLAIN_TYPES = (type(None), bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset, Counter, OrderedDict)

hashable = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary(),
    lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3),
    max_leaves=8,
)
plain = st.recursive(
    hashable | st.complex_numbers(allow_nan=False) | st.integers(min_value=-(10 ** 80), max_value=10 ** 80),
    lambda inner: (st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(hashable, inner, max_size=4)
                   | st.sets(hashable, max_size=4)),
    max_leaves=20,
)


def _same(a, b) -> bool:
    """Equal and of exactly the same types all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


@settings(max_examples=300, deadline=None)
@given(value=plain)
def test_plain_data_round_trips_exactly(value):
    assert _same(decode(encode(value)), value)


@settings(max_examples=500, deadline=None)
@given(data=st.binary(max_size=200))
def test_any_bytes_decode_to_plain_data_or_fail_cleanly(data):
    try:
        value = decode(data)
    except WireError:
        return
    stack = [value]
    while stack:
        item = stack.pop()
        assert type(item) in PLAIN_TYPES
        if isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())


@settings(max_examples=200, deadline=None)
@given(value=plain, cut=st.integers(min_value=0))
def test_truncated_or_padded_encodings_are_refused(value, cut):
    data = encode(value)
    with pytest.raises(WireError):
        decode(data[: cut % len(data)])
    with pytest.raises(WireError):
        decode(data + b"N")


class AlwaysEqual:
    def __eq__(self, other):
        return True


class EqualList(list):
    def __eq__(self, other):
        return True


class EqualStr(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


class EqualInt(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class HashedDict(dict):
    def __hash__(self):
        return 0


@pytest.mark.parametrize("value", [AlwaysEqual(), EqualList([1]), EqualStr("x"), EqualInt(3), HashedDict(a=1),
                                   [1, EqualStr("x")], {"k": AlwaysEqual()}, (x for x in []), print, object(),
                                   deque([1]), range(3), Ellipsis])
def test_objects_and_subclasses_with_their_own_equality_are_refused(value):
    with pytest.raises(WireError, match="not plain data"):
        encode(value)


class Colour(enum.IntEnum):
    RED = 1


def test_subclasses_that_keep_their_base_equality_cross_as_the_base():
    point = namedtuple("Point", "x y")(1, 2)
    counts = defaultdict(int, a=2)
    values = decode(encode([point, counts, Colour.RED, Counter("aab"), OrderedDict(b=1, a=2)]))
    assert values == [(1, 2), {"a": 2}, 1, Counter(a=2, b=1), OrderedDict(b=1, a=2)]
    assert [type(v) for v in values] == [tuple, dict, int, Counter, OrderedDict]


def test_nesting_is_capped_both_ways():
    deep = []
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(WireError, match="nested deeper"):
        encode(deep)
    with pytest.raises(WireError, match="nested deeper"):
        decode(b"l\x00\x00\x00\x01" * (MAX_DEPTH + 5) + b"N")
    looped = []
    looped.append(looped)
    with pytest.raises(WireError):
        encode(looped)


@pytest.mark.parametrize("data, message", [
    (b"", "truncated"),
    (b"X", "unknown tag"),
    (b"s\x00\x00\x00\x02\xff\xfe", "not UTF-8"),
    (b"d\x00\x00\x00\x01l\x00\x00\x00\x00N", "bad dict key"),
    (b"S\x00\x00\x00\x01l\x00\x00\x00\x00", "bad set item"),
    (b"l\xff\xff\xff\xff", "exceeds"),  # a count of 4 billion items is refused before allocating
    (b"i\x00\x00\x00\x08\x01", "exceeds"),
])
def test_malformed_bytes_say_what_is_wrong(data, message):
    with pytest.raises(WireError, match=message):
        decode(data)


def test_huge_ints_and_special_floats_cross():
    values = [10 ** 5000, -(2 ** 4000), float("inf"), -0.0, complex(1, -2)]
    assert decode(encode(values)) == values
    assert math.isnan(decode(encode(float("nan"))))


def test_frames_round_trip_and_keep_their_boundaries():
    a, b = socket.socketpair()
    send_message(a, ("call", "f", (1, [2]), {"k": None}))
    send_message(a, "second")
    assert recv_message(b, deadline=time.monotonic() + 2) == ("call", "f", (1, [2]), {"k": None})
    assert recv_message(b, deadline=time.monotonic() + 2) == "second"


def test_a_frame_larger_than_allowed_is_refused_unread():
    a, b = socket.socketpair()
    a.sendall(b"\xff\xff\xff\xff")
    with pytest.raises(MessageTooLarge):
        recv_message(b, deadline=time.monotonic() + 2, max_bytes=1 << 20)


def test_a_stalling_peer_hits_the_deadline():
    a, b = socket.socketpair()
    a.sendall(b"\x00\x00\x00\x10N")  # announces 16 bytes, sends 1
    with pytest.raises(ChannelTimeout):  # the peer never sends the rest: only the deadline ends the wait
        recv_message(b, deadline=time.monotonic() + 0.2)


def test_a_closed_peer_is_reported_not_waited_for():
    a, b = socket.socketpair()
    send_encoded(a, encode(1)[:0])  # an empty payload is not a value
    a.close()
    with pytest.raises(WireError):
        recv_message(b, deadline=time.monotonic() + 2)
    with pytest.raises(ChannelClosed):
        recv_message(b, deadline=time.monotonic() + 2)
