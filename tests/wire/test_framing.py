from hypothesis import given, strategies as st

from sidecar.wire import LineFramer


def test_lines_split_across_chunks_are_joined() -> None:
    framer = LineFramer(100)
    assert framer.feed(b'{"a":') == []
    assert framer.feed(b'1}\n{"b":2}\n{"c"') == [b'{"a":1}', b'{"b":2}']
    assert framer.feed(b":3}\r\n") == [b'{"c":3}']


def test_blank_lines_are_skipped() -> None:
    assert LineFramer(100).feed(b"\n  \n\r\nx\n") == [b"x"]


def test_oversized_line_is_dropped_and_framing_resyncs_at_next_newline() -> None:
    framer = LineFramer(10)
    assert framer.feed(b"0123456789ABCDEF") == []
    assert framer.feed(b"still the same line") == []
    assert framer.feed(b"...end\nok\n") == [b"ok"]
    assert framer.oversized == 1
    assert framer.pending_bytes == 0


def test_oversized_line_in_one_chunk() -> None:
    framer = LineFramer(4)
    assert framer.feed(b"toolong\nfine\n") == [b"fine"]
    assert framer.oversized == 1


@given(st.lists(st.binary(max_size=30).filter(lambda b: b"\n" not in b and b.strip()), max_size=20),
       st.lists(st.integers(min_value=1, max_value=17), min_size=1, max_size=10))
def test_any_chunking_gives_the_same_lines(lines: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(line + b"\n" for line in lines)
    framer = LineFramer(1000)
    out: list[bytes] = []
    position, turn = 0, 0
    while position < len(stream):
        step = cuts[turn % len(cuts)]
        out += framer.feed(stream[position : position + step])
        position += step
        turn += 1
    assert out == [line.rstrip(b"\r") for line in lines if line.rstrip(b"\r").strip()]


@given(st.lists(st.binary(max_size=30).filter(lambda b: b"\n" not in b), max_size=20),
       st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=10))
def test_any_chunking_drops_exactly_the_lines_over_the_cap(lines: list[bytes], cuts: list[int]) -> None:
    """Bursts of whole lines (split at once) and buffered pieces keep the same lines."""
    cap = 12
    stream = b"".join(line + b"\n" for line in lines)
    framer = LineFramer(cap)
    out: list[bytes] = []
    position, turn = 0, 0
    while position < len(stream):
        step = cuts[turn % len(cuts)]
        out += framer.feed(stream[position : position + step])
        position += step
        turn += 1
    kept = [line.rstrip(b"\r") for line in lines if len(line) <= cap]
    assert out == [line for line in kept if line.strip()]
    assert framer.oversized == sum(len(line) > cap for line in lines)


@given(st.lists(st.binary(max_size=30).filter(lambda b: b"\n" not in b), max_size=20))
def test_one_line_per_read_gives_what_a_line_at_a_time_reference_gives(lines: list[bytes]) -> None:
    """Each read holding exactly one line (every read of a lone call) takes the framer's
    one-line path; blank and `\\r`-ended lines come out as from any other read."""
    framer = LineFramer(1000)
    out: list[bytes] = []
    for line in lines:
        out += framer.feed(line + b"\n")
    assert out == [line.rstrip(b"\r") for line in lines if line.rstrip(b"\r").strip()]
    assert framer.pending_bytes == 0


def test_an_empty_read_and_a_read_after_a_partial_line() -> None:
    framer = LineFramer(100)
    assert framer.feed(b"") == []
    assert framer.feed(b'{"a"') == []
    assert framer.feed(b":1}\n") == [b'{"a":1}']  # the buffered path, not the one-line one
    assert framer.feed(b"x\r\r\n") == [b"x"]


@given(st.lists(st.binary(max_size=30).filter(lambda b: b"\n" not in b), max_size=20),
       st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=10),
       st.booleans())
def test_feed_each_hands_on_what_feed_returns(lines: list[bytes], cuts: list[int], one_per_read: bool) -> None:
    """`feed_each` (what both stdio pipes call) gives the same lines, the same drops over
    the cap and the same notices of them as `feed`, however the reads are cut: a read of
    one whole line takes its own path, every other read `feed`'s."""
    cap = 12
    stream = b"".join(line + b"\n" for line in lines)
    reads = [line + b"\n" for line in lines] if one_per_read else []
    position, turn = 0, 0
    while not one_per_read and position < len(stream):
        step = cuts[turn % len(cuts)]
        reads.append(stream[position : position + step])
        position += step
        turn += 1
    notices: list[tuple[int, bytes, bytes]] = []
    seen: list[tuple[int, bytes, bytes]] = []
    reference, framer = LineFramer(cap, lambda d: notices.append((d.size, d.head, d.tail))), \
        LineFramer(cap, lambda d: seen.append((d.size, d.head, d.tail)))
    expected: list[bytes] = []
    out: list[bytes] = []
    for read in reads:
        expected += reference.feed(read)
        framer.feed_each(read, out.append)
    assert out == expected and seen == notices
    assert (framer.oversized, framer.pending_bytes) == (reference.oversized, reference.pending_bytes)
