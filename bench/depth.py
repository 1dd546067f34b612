"""`python -m bench.depth`: what the depth check costs on the hot path, beside a decode.

For each frame shape: the median time of `too_deep` (the check every frame pays) and of
`msgspec.json.decode` (what the sidecar does next anyway), and their ratio. Normal frames
take the memchr-speed path (at most 512 opening brackets); only frames with more
brackets than the limit are scanned exactly.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable

import msgspec

from sidecar.wire.depth import too_deep


def _frames() -> dict[str, bytes]:
    call = {"jsonrpc": "2.0", "id": 17, "method": "tools/call",
            "params": {"name": "github__create_issue", "arguments": {"title": "t", "body": "b" * 120}}}
    result = {"jsonrpc": "2.0", "id": 17, "result": {"content": [{"type": "text", "text": "r" * 4000}]}}
    tool = {"name": "t", "description": "d [x] {y}" * 20, "inputSchema": {"type": "object", "properties": {
        "a": {"type": "array", "items": {"type": "string"}}}}}
    listing = {"jsonrpc": "2.0", "id": 3, "result": {"tools": [dict(tool, name=f"t{i}") for i in range(2000)]}}
    return {
        "tools/call, 200 B": json.dumps(call).encode(),
        "result, 4 KB": json.dumps(result).encode(),
        "tools/list, 2,000 tools (0.9 MB)": json.dumps(listing).encode(),
        "attack: 100,000 deep (200 KB)": b"[" * 100_000 + b"]" * 100_000,
        "flat: 3,000,000 empty arrays (9 MB)": b"[" + b"[]," * 3_000_000 + b"[]]",
    }


def _median(job: Callable[[], object], budget: float = 0.3) -> float:
    times: list[float] = []
    deadline = time.perf_counter() + budget
    while time.perf_counter() < deadline or len(times) < 5:
        started = time.perf_counter()
        job()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _decode(frame: bytes) -> object:
    try:
        return msgspec.json.decode(frame)
    except RecursionError:
        return None


def main() -> None:
    print(f"{'frame':40} {'too_deep':>12} {'decode':>12} {'ratio':>7}")
    for name, frame in _frames().items():
        check = _median(lambda: too_deep(frame))
        decode = _median(lambda: _decode(frame))
        print(f"{name:40} {check * 1e6:10.2f}us {decode * 1e6:10.2f}us {check / decode:7.2f}")


if __name__ == "__main__":
    main()
