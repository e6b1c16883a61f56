"""Size-prefixed framing: frames survive any split of the stream; bad size prefixes are values."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from impl.wire import ErrorKind, FrameReader, WireError, frame


@settings(max_examples=200, deadline=None)
@given(payloads=st.lists(st.binary(max_size=40), max_size=6), cuts=st.lists(st.integers(0, 400), max_size=10))
def test_frames_survive_any_split(payloads, cuts):
    stream = b"".join(frame(p) for p in payloads)
    bounds = sorted({0, len(stream), *(c for c in cuts if c <= len(stream))})
    reader, got = FrameReader(max_size=40), []
    for a, b in zip(bounds, bounds[1:]):
        reader.feed(stream[a:b])
        got.extend(reader.drain())
    assert got == payloads and reader.pending == 0


def test_one_byte_at_a_time():
    reader = FrameReader()
    data = frame(b"hello") + frame(b"") + frame(b"x")
    out = []
    for i in range(len(data)):
        reader.feed(data[i:i + 1])
        item = reader.next()
        if item is not None:
            out.append(item)
    assert out == [b"hello", b"", b"x"]


def test_size_above_the_maximum_is_refused_before_the_body_arrives():
    reader = FrameReader(max_size=10)
    reader.feed(b"\x00\x00\x00\x0b")  # 11 > 10: refused from the prefix alone
    err = reader.next()
    assert isinstance(err, WireError) and err.kind == ErrorKind.FRAME_TOO_LARGE
    assert "size = 11 larger than 10" in err.reason and err.hex == "0000000b"
    reader.feed(b"more")
    assert reader.next() is err and reader.pending == 0  # the stream stays broken
    ok = FrameReader(max_size=10)
    ok.feed(frame(b"0123456789"))
    assert ok.next() == b"0123456789"


def test_negative_size_is_refused():
    reader = FrameReader()
    reader.feed(b"\xff\xff\xff\xff")
    err = reader.next()
    assert err.kind == ErrorKind.NEGATIVE_SIZE and "size = -1" in str(err) and "\n" not in str(err)


def test_unlimited_reader_and_bad_maximum():
    reader = FrameReader(max_size=None)
    reader.feed(frame(b"z" * 1000))
    assert reader.next() == b"z" * 1000
    with pytest.raises(ValueError):
        FrameReader(max_size=-1)
