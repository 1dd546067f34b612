"""The FastMCP proxy peer, served on stdio.

Owns the one call the benchmark makes into `fastmcp` (the PyPI package, a
benchmark-only dependency): `fastmcp.server.create_proxy(config)` over the
same `{"mcpServers": {...}}` file the sidecar reads, run as a stdio server.
With one server FastMCP keeps tool names bare; with several it prefixes them
`<alias>_<tool>`. Settings are FastMCP's defaults (banner off, logs quiet):
the peer is measured as its users would get it.

`python bench/fastmcp_proxy.py --config PATH`
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="FastMCP proxy over an mcpServers config")
    parser.add_argument("--config", type=Path, required=True)
    args = parser.parse_args(argv)
    config = json.loads(args.config.read_text())
    servers = {"mcpServers": config["mcpServers"]}
    os.environ.setdefault("FASTMCP_LOG_LEVEL", "ERROR")
    from fastmcp.server import (
        create_proxy,  # late: the import is part of what start-up costs
    )

    proxy = create_proxy(servers, name="bench-fastmcp-proxy")
    proxy.run("stdio", show_banner=False)


if __name__ == "__main__":
    main()
