"""A tiny blocking HTTP/1.1 client for MCP POSTs, on one keep-alive socket.

Owns the client side of the HTTP benchmark: one TCP connection to 127.0.0.1, a POST
of one JSON-RPC message, and its answer read back (`Content-Length` bodies, or a
chunked event stream whose first `data:` line is the answer). Like `bench.client`,
it does as little as it can so its own cost stays small and equal for every server;
aiohttp's client is deliberately not used for timing.

Refuses to guess: a status other than 200/202, a closed socket or a JSON-RPC error
raises `ConnectionFailed`.
"""

from __future__ import annotations

import socket
import time
from typing import Self

import msgspec

from bench.client import ConnectionFailed

__all__ = ["HttpConnection", "free_port", "wait_port"]

_READ = 1 << 16


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, timeout: float, alive: object = None) -> None:
    """Return once something accepts on `port`; `alive()` False (the server died) fails at once."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if callable(alive) and not alive():
            raise ConnectionFailed(f"the server exited before listening on {port}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
            return
        except OSError:
            time.sleep(0.02)
    raise ConnectionFailed(f"nothing listens on 127.0.0.1:{port} after {timeout:g}s")


class _Answer(msgspec.Struct):
    id: int | str | None = None
    result: msgspec.Raw = msgspec.Raw(b"")
    error: msgspec.Raw = msgspec.Raw(b"")


_decode_answer = msgspec.json.Decoder(_Answer).decode


class HttpConnection:
    """POSTs to `http://127.0.0.1:PORT/mcp` over one kept-alive socket."""

    def __init__(self, port: int, headers: dict[str, str] | None = None, timeout: float = 30.0) -> None:
        self.port = port
        self.headers = dict(headers or {})
        self._sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buffer = bytearray()

    def _head(self, extra: dict[str, str] | None, length: int) -> bytes:
        lines = [f"POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{self.port}", "Content-Type: application/json",
                 "Accept: application/json, text/event-stream", f"Content-Length: {length}"]
        lines += [f"{k}: {v}" for k, v in {**self.headers, **(extra or {})}.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    def post(self, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        """One exchange: (status, lower-cased headers, the JSON answer or b"")."""
        self._sock.sendall(self._head(headers, len(body)) + body)
        status, found = self._read_head()
        if "content-length" in found:
            payload = self._read_exactly(int(found["content-length"]))
        elif found.get("transfer-encoding", "").lower() == "chunked":
            payload = self._first_event(self._read_chunked())
        else:
            raise ConnectionFailed(f"an answer with neither length nor chunks: {found}")
        if status not in (200, 202):
            raise ConnectionFailed(f"HTTP {status}: {payload[:300]!r}")
        return status, found, payload

    def request(self, body: bytes, headers: dict[str, str] | None = None) -> msgspec.Raw:
        """POST a request; its raw `result` (a JSON-RPC error raises)."""
        _, _, payload = self.post(body, headers)
        answer = _decode_answer(payload)
        if answer.error:
            raise ConnectionFailed(f"error reply: {bytes(answer.error)[:300]!r}")
        return answer.result

    def _fill(self) -> None:
        chunk = self._sock.recv(_READ)
        if not chunk:
            raise ConnectionFailed("the server closed the connection")
        self._buffer += chunk

    def _read_head(self) -> tuple[int, dict[str, str]]:
        while (end := self._buffer.find(b"\r\n\r\n")) < 0:
            self._fill()
        lines = bytes(self._buffer[:end]).decode("latin-1").split("\r\n")
        del self._buffer[: end + 4]
        status = int(lines[0].split(" ", 2)[1])
        found = {}
        for line in lines[1:]:
            key, _, value = line.partition(":")
            found[key.strip().lower()] = value.strip()
        return status, found

    def _read_exactly(self, size: int) -> bytes:
        while len(self._buffer) < size:
            self._fill()
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def _read_line(self) -> bytes:
        while (end := self._buffer.find(b"\r\n")) < 0:
            self._fill()
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 2]
        return line

    def _read_chunked(self) -> bytes:
        parts = []
        while size := int(self._read_line().split(b";")[0], 16):
            parts.append(self._read_exactly(size))
            self._read_line()
        self._read_line()
        return b"".join(parts)

    @staticmethod
    def _first_event(stream: bytes) -> bytes:
        for line in stream.splitlines():
            if line.startswith(b"data:"):
                return line[5:].strip()
        return b""

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
