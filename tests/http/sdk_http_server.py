"""tests/upstreams/sdk_server.py's scripted upstream, served over Streamable HTTP on
loopback instead of stdio (same tools, same `--events` record).

    python tests/http/sdk_http_server.py [sdk_server options]

Prints `PORT <n>` once it listens on 127.0.0.1; the endpoint is `/mcp`.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

warnings.simplefilter("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "upstreams"))

import anyio  # noqa: E402
from loopback import serve_on_loopback  # noqa: E402
from sdk_server import SdkUpstream, parse_args  # noqa: E402


async def main() -> None:
    upstream = SdkUpstream(parse_args())
    upstream.events.emit("start", name=upstream.name, transport="http")
    app = upstream.build().streamable_http_app()
    await serve_on_loopback(app)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except KeyboardInterrupt:
        pass
