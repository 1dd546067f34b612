"""A fast MCP upstream for benchmarks: raw JSON lines on stdin/stdout, no SDK.

Owns the cheapest honest MCP server the benchmarks can put behind a proxy, so
that what a proxy adds is not hidden under server cost. It answers
`initialize`, `ping`, `tools/list` (the catalog its argv names, see
`catalogs.CatalogSpec.argv`), and `tools/call` of two working tools: `echo`
(returns its arguments as JSON text) and `blob` (returns a JSON array of
records of `arguments.bytes` bytes, built once per size and cached; with
`prepare: true` it only builds the cache and answers briefly, so a timed call
measures transport, not generation). Any other
catalog tool answers with a one-line text. Notifications are accepted and
ignored; unknown methods get -32601.

It refuses concurrency: requests are handled in arrival order, one at a time,
each reply written and flushed before the next line is read.

Run it as a script: `python bench/fast_upstream.py --tools 425 ...`; with
`--http PORT` it answers the same requests as POSTs to `http://127.0.0.1:PORT/mcp`
instead (aiohttp, one JSON answer per POST, 202 for a notification, no sessions): the
baseline of the HTTP benchmark, on the server stack the sidecar's own HTTP front uses.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.catalogs import CatalogSpec, build_catalog, records_json

_HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


class Request(msgspec.Struct):
    method: str = ""
    id: int | str | None = None
    params: msgspec.Raw = msgspec.Raw(b"")


class InitializeParams(msgspec.Struct):
    protocolVersion: str = "2025-06-18"


class CallParams(msgspec.Struct):
    name: str
    arguments: msgspec.Raw = msgspec.Raw(b"")


class BlobArguments(msgspec.Struct):
    bytes: int = 1000
    prepare: bool = False


class FastUpstream:
    """The request handlers; `handle` maps one request line to one reply line."""

    def __init__(self, spec: CatalogSpec) -> None:
        self.spec = spec
        self._request = msgspec.json.Decoder(Request)
        self._init_params = msgspec.json.Decoder(InitializeParams)
        self._call_params = msgspec.json.Decoder(CallParams)
        self._blob_args = msgspec.json.Decoder(BlobArguments)
        self._encode = msgspec.json.Encoder().encode
        self._tools_result: bytes | None = None
        self._blobs: dict[int, bytes] = {}

    def handle(self, line: bytes) -> bytes | None:
        request = self._request.decode(line)
        if request.id is None:
            return None
        result = self._dispatch(request)
        head = b'{"jsonrpc":"2.0","id":' + self._encode(request.id)
        if result is None:
            error = self._encode({"code": -32601, "message": f"method not found: {request.method}"})
            return head + b',"error":' + error + b"}\n"
        return head + b',"result":' + result + b"}\n"

    def _dispatch(self, request: Request) -> bytes | None:
        method = request.method
        if method == "tools/call":
            return self._call(request.params)
        if method == "tools/list":
            return self._tools()
        if method == "ping":
            return b"{}"
        if method == "initialize":
            return self._initialize(request.params)
        return None

    def _initialize(self, params: msgspec.Raw) -> bytes:
        asked = self._init_params.decode(params).protocolVersion if params else ""
        version = asked if asked in _HANDSHAKE_VERSIONS else "2025-06-18"
        return self._encode({
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "bench-fast-upstream", "version": "1.0"},
        })

    def _tools(self) -> bytes:
        if self._tools_result is None:
            self._tools_result = self._encode({"tools": build_catalog(self.spec)})
        return self._tools_result

    def _call(self, params: msgspec.Raw) -> bytes:
        call = self._call_params.decode(params or b'{"name":""}')
        if call.name == "echo":
            text = bytes(call.arguments) or b"{}"
            return self._text_result(text.decode())
        if call.name == "blob":
            blob = self._blob_args.decode(call.arguments or b"{}")
            result = self._blob(blob.bytes)
            return self._text_result(f"prepared {blob.bytes} bytes") if blob.prepare else result
        return self._text_result(f"{call.name} ran")

    def _blob(self, size: int) -> bytes:
        cached = self._blobs.get(size)
        if cached is None:
            cached = self._text_result(records_json(size).decode())
            self._blobs[size] = cached
        return cached

    def _text_result(self, text: str) -> bytes:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        return self._encode({"content": content, "isError": False})


def _timeline_mark() -> Any:
    """With `BENCH_TIMELINE` set (by `bench.startup_timeline` only), a function that appends
    one timed mark to that file; else None."""
    path = os.environ.get("BENCH_TIMELINE")
    if not path:
        return None
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    who = os.environ.get("BENCH_TIMELINE_WHO", "upstream")

    def mark(what: str) -> None:
        os.write(fd, f"{who}\t{what}\t{time.perf_counter():.6f}\t{time.process_time():.6f}\n".encode())
    return mark


def _serve_marked(upstream: FastUpstream, source: BinaryIO, sink: BinaryIO, mark: Any) -> None:
    mark("ready to read")
    for line in source:
        method = upstream._request.decode(line).method if line.strip() else ""
        mark(f"got {method}")
        reply = upstream.handle(line) if line.strip() else None
        if reply is not None:
            sink.write(reply)
            sink.flush()
            mark(f"answered {method}")


def serve(upstream: FastUpstream, source: BinaryIO, sink: BinaryIO) -> None:
    """Answer every line of `source` on `sink` until end of input."""
    mark = _timeline_mark()
    if mark is not None:
        return _serve_marked(upstream, source, sink, mark)
    for line in source:
        if not line.strip():
            continue
        reply = upstream.handle(line)
        if reply is not None:
            sink.write(reply)
            sink.flush()


def serve_http(upstream: FastUpstream, port: int) -> None:
    """Answer POSTs on 127.0.0.1:`port` until killed."""
    from aiohttp import web

    async def post(request: web.Request) -> web.Response:
        reply = upstream.handle(await request.read())
        if reply is None:
            return web.Response(status=202)
        return web.Response(body=reply[:-1], content_type="application/json")

    app = web.Application()
    app.router.add_post("/mcp", post)
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tools", type=int, default=4, help="tool count, echo and blob included")
    parser.add_argument("--tool-bytes", type=int, default=300, help="approximate JSON bytes per tool")
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--area", default="", help="name prefix of generated tools")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve HTTP POSTs on this port, not stdio")
    return parser


def parse_spec(argv: list[str] | None = None) -> CatalogSpec:
    args = _parser().parse_args(argv)
    return _spec(args)


def _spec(args: argparse.Namespace) -> CatalogSpec:
    return CatalogSpec(tools=args.tools, tool_bytes=args.tool_bytes, seed=args.seed, area=args.area)


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    upstream = FastUpstream(_spec(args))
    if args.http:
        serve_http(upstream, args.http)
        return
    try:
        serve(upstream, sys.stdin.buffer, sys.stdout.buffer)
    except (BrokenPipeError, KeyboardInterrupt):
        pass


if __name__ == "__main__":
    main()
