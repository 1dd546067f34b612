"""`python -m bench.decode`: what reading an engine frame and writing a stateless answer
cost, decoded once, beside the two-pass way the sidecar used before (kept here as the
baseline, nowhere else).

Rows, each the fastest of repeated runs (on a shared machine, the least disturbed):
- an engine frame, `decode_engine_frame` (one msgspec decode, the repeated-key count on
  one re-encoding) against the baseline (msgspec to validate, then the standard
  library with a pairs hook to refuse repeated keys; the same depth check and envelope
  rules on both sides), for a small `tools/call` and two of about 670 KB (many records;
  one long text); msgspec's decode alone and the repeated-key check alone beside them;
- a 2026-07-28 answer with a 3.6 MB upstream result: `stamp_answer` (fields spliced in)
  against the baseline (the whole answer decoded, stamped, re-encoded);
- an answer routed by an HTTP session: the baseline decoded the head of every frame
  the sidecar had itself encoded; an event is routed by its type and id;
- that answer encoded (stdio, HTTP sessions): joined around the upstream's result bytes,
  against the `%` formatting used before (which costs far more on a large body).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import msgspec

from sidecar.front.http.stateless import stamp_answer
from sidecar.wire import Answer, decode_engine_frame, decode_upstream_frame, encode_event, encode_result
from sidecar.wire.depth import too_deep
from sidecar.wire.duplicates import has_duplicate_key
from sidecar.wire.jsonrpc import _envelope


def _small_call() -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 17, "method": "tools/call", "params": {
        "name": "github__create_issue", "arguments": {"title": "t", "body": "b" * 120}}}).encode()


def _large_call() -> bytes:
    rows = [{"id": i, "sku": f"SKU-{i:06d}", "name": f"item {i}: a thing", "tags": ["red", "large"],
             "price": i * 1.25, "in_stock": i % 3 == 0, "note": "see https://example.com/x?id=%d" % i}
            for i in range(3900)]
    return json.dumps({"jsonrpc": "2.0", "id": 18, "method": "tools/call", "params": {
        "name": "shop__import_products", "arguments": {"rows": rows}}}).encode()


def _large_text_call() -> bytes:
    text = "".join(f"line {i}: a \"quoted\" word, a tab\t and more text to fill it\n" for i in range(11_000))
    return json.dumps({"jsonrpc": "2.0", "id": 20, "method": "tools/call", "params": {
        "name": "fs__write_file", "arguments": {"path": "/tmp/notes.txt", "content": text}}}).encode()


def _large_result() -> bytes:
    rows = [{"id": i, "title": f"Issue {i}", "body": "Steps: open, click, see \"error\".\n" * 3,
             "labels": ["bug", "p2"], "state": "open"} for i in range(14_000)]
    return json.dumps({"content": [{"type": "text", "text": json.dumps(rows[:200])}],
                       "structuredContent": {"issues": rows}}).encode()


# -- the baseline: how the sidecar read and stamped frames before they were decoded once --

def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise ValueError("duplicate key")
    return obj


_validator = msgspec.json.Decoder()
_floor = msgspec.json.Decoder()
_strict = json.JSONDecoder(object_pairs_hook=_no_repeats)


def _two_pass_decode(line: bytes) -> Any:
    _validator.decode(line)
    return _strict.decode(line.decode())


def _two_pass_frame(line: bytes) -> object:
    """The whole of the old engine-frame read: the same depth check and envelope rules."""
    if too_deep(line):
        return None
    return _envelope(_two_pass_decode(line))


class _Answer(msgspec.Struct):
    jsonrpc: str = "2.0"
    id: int | str | None = None
    result: dict[str, Any] | None = None
    error: msgspec.Raw = msgspec.Raw()


class _Head(msgspec.Struct):
    id: int | str | None = None
    method: str | None = None
    params: msgspec.Raw = msgspec.Raw()


_head = msgspec.json.Decoder(_Head)


def _reencoded_stamp(frame: bytes) -> bytes:
    answer = msgspec.json.decode(frame, type=_Answer)
    assert answer.result is not None
    answer.result.setdefault("resultType", "complete")
    return msgspec.json.encode({"jsonrpc": "2.0", "id": answer.id, "result": answer.result})


def _formatted_answer(ident: int, result: msgspec.Raw) -> bytes:
    return b'{"jsonrpc":"2.0","id":%b,"result":%b}\n' % (msgspec.json.encode(ident), bytes(result))


def _route_by_head(frame: bytes) -> object:
    head = _head.decode(frame)
    return head.id if head.method is None else head.method


def _route_by_event(event: Answer) -> object:
    return event.id if type(event) is Answer else None


# -- the run ------------------------------------------------------------------------------

def _fastest_of(jobs: tuple[Callable[[], object], ...], budget: float) -> list[float]:
    """The fastest of repeated runs of each job, the jobs taking turns (on a shared
    machine the least disturbed run, and both sides see the same disturbances)."""
    times: list[list[float]] = [[] for _ in jobs]
    deadline = time.perf_counter() + budget
    while time.perf_counter() < deadline or len(times[0]) < 15:
        for job, taken in zip(jobs, times):
            started = time.perf_counter()
            job()
            taken.append(time.perf_counter() - started)
    return [min(taken) for taken in times]


def rows(budget: float = 0.6) -> list[tuple[str, float, float]]:
    """(what, decoded once in seconds, the baseline in seconds or 0) for each case; each
    pair runs for about `budget` seconds."""

    def pair(now: Callable[[], object], before: Callable[[], object] | None = None) -> tuple[float, float]:
        if before is None:
            return _fastest_of((now,), budget)[0], 0.0
        fast, slow = _fastest_of((now, before), budget)
        return fast, slow

    found: list[tuple[str, float, float]] = []
    for name, frame in (("tools/call, %d B" % len(_small_call()), _small_call()),
                        ("tools/call, %d KB of records" % (len(_large_call()) // 1000), _large_call()),
                        ("tools/call, %d KB of text" % (len(_large_text_call()) // 1000), _large_text_call())):
        found.append((f"engine frame: {name}", *pair(lambda: decode_engine_frame(frame), lambda: _two_pass_frame(frame))))
        obj = msgspec.json.decode(frame)
        found.append(("  msgspec's decode alone (the floor)", *pair(lambda: _floor.decode(frame))))
        found.append(("  the repeated-key check alone", *pair(lambda: has_duplicate_key(frame, obj))))
    result = _large_result()
    upstream = decode_upstream_frame(b'{"jsonrpc":"2.0","id":4,"result":' + result + b"}")
    assert upstream is not None
    answer = Answer(19, upstream.result)  # a view into the upstream's frame, as in the sidecar
    framed = encode_result(19, result)
    found.append((f"stateless answer, {len(result) / 1e6:.1f} MB result",
                  *pair(lambda: stamp_answer("tools/call", answer), lambda: _reencoded_stamp(framed))))
    found.append(("HTTP session: route that answer", *pair(lambda: _route_by_event(answer), lambda: _route_by_head(framed))))
    found.append(("  and encode it (stdio, sessions)", *pair(lambda: encode_event(answer),
                                                           lambda: _formatted_answer(19, upstream.result))))
    return found


def main() -> None:
    print(f"{'case':44} {'decoded once':>14} {'baseline':>12} {'ratio':>7}")
    for name, now, before in rows():
        ratio = f"{before / now:6.1f}x" if before else ""
        shown = f"{before * 1e6:10.1f}us" if before else ""
        print(f"{name:44} {now * 1e6:12.1f}us {shown:>12} {ratio:>7}")


if __name__ == "__main__":
    main()
