"""Each upstream frame is scanned for depth at most once and decoded once, on every
transport, and what the connection encodes is never parsed again on its way down (issue
23, the seam). A frame too short to nest past the limit (`MAX_DEPTH` bytes or fewer: a
level takes a bracket) is not scanned at all; a longer one is scanned once.

Real upstreams (a stdio child; Streamable HTTP answering one JSON body or an event stream;
legacy SSE, on 127.0.0.1), the core in memory over them. The readers are wrapped in
counters for one `tools/call` round: the request going down and its answer coming up.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hostile_http import serve_hostile

import sidecar.wire.jsonrpc as jsonrpc
from sidecar.wire import depth
from tests.harness import over_real_upstreams

pytestmark = pytest.mark.timeout(60)

FAULT_SERVER = Path(__file__).resolve().parents[1] / "upstreams" / "fault_server.py"


class _Counted:
    """A decoder whose `decode` calls are counted."""

    def __init__(self, inner: Any, counts: Counter[str], name: str) -> None:
        self._inner, self._counts, self._name = inner, counts, name

    def decode(self, data: Any) -> Any:
        self._counts[self._name] += 1
        return self._inner.decode(data)


@contextmanager
def counting(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Counts every depth scan and every JSON decode the upstream side makes meanwhile."""
    counts: Counter[str] = Counter()

    def counted(name: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return inner(*args, **kwargs)
        return wrapper

    with monkeypatch.context() as patch:
        for module in [m for name, m in sys.modules.items() if name.startswith("sidecar.upstream")]:
            if getattr(module, "too_deep", None) is depth.too_deep:
                patch.setattr(module, "too_deep", counted("scan", depth.too_deep))
            for attr, value in list(vars(module).items()):
                if isinstance(value, msgspec.json.Decoder):
                    patch.setattr(module, attr, _Counted(value, counts, "decode"))
        patch.setattr(jsonrpc, "_upstream_decoder", _Counted(jsonrpc._upstream_decoder, counts, "decode"))
        patch.setattr(msgspec.json, "decode", counted("decode", msgspec.json.decode))
        yield counts


@pytest.mark.parametrize("size", ["short", "long"])
@pytest.mark.parametrize("transport", ["stdio", "http-json", "http-stream", "sse"])
async def test_at_most_one_scan_and_one_decode_per_frame_on_every_transport(
        transport: str, size: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "once" if size == "short" else "once" + "." * 2 * depth.MAX_DEPTH
    async with serve_hostile() as web:
        entry: dict[str, Any] = {"command": sys.executable, "args": [str(FAULT_SERVER)]}
        if transport != "stdio":
            entry = {"type": "sse" if transport == "sse" else "http", "url": web.sse_url if transport == "sse" else web.http_url}
        async with over_real_upstreams({"mcpServers": {"u": {**entry, "pinning": "off"}}}) as sidecar:
            await sidecar.settled()
            upstream = sidecar.face.pool.get("u")
            assert upstream is not None and upstream.connection is not None
            conn = upstream.connection
            if transport == "stdio":
                call: dict[str, Any] = {"name": "echo", "arguments": {"nonce": text}}
            else:
                line = '{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"%s"}]}}' % text
                call = {"name": "say", "arguments": {"lines": [line], "stream": transport == "http-stream"}}
            with counting(monkeypatch) as counts:
                answer = await conn.request("tools/call", call)
    assert f'"{text}"'.encode() in bytes(answer)
    # the frame is the result and an envelope of a few dozen bytes: short under the limit, long past it
    assert (len(answer) + 64 <= depth.MAX_DEPTH) if size == "short" else (len(answer) > depth.MAX_DEPTH)
    expected = {"scan": 1, "decode": 1} if size == "long" else {"decode": 1}
    assert dict(counts) == expected, (transport, size, counts)
