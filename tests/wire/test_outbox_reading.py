"""Frames sent while a pipe's read is handled leave as in a loop turn: the first at once,
the rest joined at the read's end (`sidecar.wire.outbox.READING`), with no callback
scheduled on the loop; outside a read, the loop turn is the group, as before."""

from __future__ import annotations

import asyncio

import pytest

from sidecar.wire.outbox import READING, Outbox


def _outbox(written: list[bytes]) -> Outbox:
    return Outbox(written.append, asyncio.get_running_loop())


async def test_a_reads_followers_leave_together_at_its_end_and_the_turn_groups_the_rest() -> None:
    to_upstream: list[bytes] = []
    to_engine: list[bytes] = []
    up, down = _outbox(to_upstream), _outbox(to_engine)
    READING.open = True
    try:
        up(b"1")  # the first frame of the read: at once
        up(b"2")
        up(b"3")
        down(b"a")
        assert (to_upstream, to_engine) == ([b"1"], [b"a"])
    finally:
        READING.ended()
    assert (to_upstream, to_engine) == ([b"1", b"23"], [b"a"]) and not READING.sent and not READING.open
    up(b"4")  # outside a read: at once, its followers at the turn's end
    up(b"5")
    assert to_upstream == [b"1", b"23", b"4"]
    await asyncio.sleep(0)
    assert to_upstream == [b"1", b"23", b"4", b"5"]


async def test_a_write_that_breaks_at_a_reads_end_leaves_the_other_pipes_flowing(caplog: pytest.LogCaptureFixture) -> None:
    def broken(frame: bytes) -> None:
        if frame == b"yz":
            raise RuntimeError("the pipe is gone")

    fine: list[bytes] = []
    bad, good = Outbox(broken, asyncio.get_running_loop()), _outbox(fine)
    READING.open = True
    bad(b"x")
    bad(b"y")
    bad(b"z")
    good(b"1")
    good(b"2")
    READING.ended()
    assert fine == [b"1", b"2"] and "writing frames after a read failed" in caplog.text
    good(b"3")
    bad(b"w")  # neither is left waiting for a turn's end that never comes
    assert fine == [b"1", b"2", b"3"]


@pytest.mark.parametrize("reads", [
    [b'{"a":1}\n'],  # one whole line: the way with no `feed_each`
    [b'{"a":1}\r\n', b"  \n", b'{"b":2}\n{"c"', b':3}\n'],  # a \r, a blank line, a line cut across reads
    [b"x" * 40 + b"\n", b"y" * 10 + b"\n"],  # over the cap, then one under it
])
async def test_a_framers_read_gives_the_lines_feed_gives_with_the_read_open_around_them(reads: list[bytes]) -> None:
    from sidecar.wire.framing import LineFramer

    seen: list[tuple[bytes, bool]] = []
    framer, plain = LineFramer(32), LineFramer(32)
    expected = [line for data in reads for line in plain.feed(data)]
    written: list[bytes] = []
    out = _outbox(written)

    def on_line(line: bytes) -> None:
        seen.append((line, READING.open))
        out(line)
        out(b"+")  # a follower: leaves at the read's end

    for data in reads:
        framer.read(data, on_line, READING)
        assert not READING.open and not READING.sent
    assert seen == [(line, True) for line in expected]
    assert b"".join(written) == b"".join(line + b"+" for line in expected)
    assert framer.oversized == plain.oversized


@pytest.mark.parametrize("reads", [
    [b'{"a":1}\n'],
    [b'{"a":1}\r\n', b"  \n", b'{"b":2}\n{"c"', b':3}\n'],
    [b"x" * 40 + b"\n", b"y" * 10 + b"\n"],
])
async def test_a_line_readers_reads_are_the_framers_reads_to_its_own_on_line(reads: list[bytes]) -> None:
    """`LineReader.data_received` (the pipes' protocol, its own framer) is `LineFramer.read`
    to the reader's `on_line`, looked up at each read: set it and the next lines go there."""
    from sidecar.wire.framing import LineFramer
    from sidecar.wire.reader import LineReader

    plain = LineFramer(32)
    expected = [line for data in reads for line in plain.feed(data)]
    first: list[tuple[bytes, bool]] = []
    then: list[bytes] = []
    written: list[bytes] = []
    out = _outbox(written)

    def on_line(line: bytes) -> None:
        first.append((line, READING.open))
        out(line)
        out(b"+")

    reader = LineReader(on_line, 32)
    for data in reads:
        reader.data_received(data)
        assert not READING.open and not READING.sent
    assert first == [(line, True) for line in expected]
    assert b"".join(written) == b"".join(line + b"+" for line in expected)
    assert reader.oversized == plain.oversized
    reader.on_line = then.append
    reader.data_received(b'{"d":4}\n')
    assert then == [b'{"d":4}'] and len(first) == len(expected)
