"""An MCP Apps upstream on the `mcp` SDK's own `Apps` extension (stdio).

    python tests/apps/apps_server.py          # stdio
    python tests/apps/apps_server.py --http   # Streamable HTTP on 127.0.0.1; prints `PORT <n>`
    python tests/apps/apps_server.py --http --modern   # the same, 2026-07-28 only (`initialize` refused)

Tools: `show_clock` (bound to `ui://clock/app.html`, for the model and the app),
`tick` (app-only: `visibility: ["app"]`), `plain` (no UI). Each answers with its own name
and the `_meta` keys it received, so a test sees what reached the server.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

warnings.simplefilter("ignore")

import anyio  # noqa: E402
from mcp.server.apps import Apps  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402

CLOCK_HTML = "<!doctype html><title>clock</title><p id=t></p>"

apps = Apps()


def _seen(ctx: Context[Any], name: str) -> str:
    meta = ctx.request_context.meta
    keys = sorted(meta) if isinstance(meta, dict) else sorted(meta.model_dump(exclude_none=True)) if meta else []
    return f"{name} meta={','.join(keys)}"


@apps.tool(resource_uri="ui://clock/app.html", description="Show the current time in a clock app")
def show_clock(ctx: Context[Any]) -> str:
    return _seen(ctx, "show_clock")


@apps.tool(resource_uri="ui://clock/app.html", visibility=["app"], description="Advance the clock app by one tick")
def tick(ctx: Context[Any]) -> str:
    return _seen(ctx, "tick")


apps.add_html_resource("ui://clock/app.html", CLOCK_HTML, name="clock")

server = MCPServer("apps-server", extensions=[apps])


@server.tool(description="A plain tool with no UI")
def plain(ctx: Context[Any]) -> str:
    return _seen(ctx, "plain")


async def serve_http() -> None:
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))  # the checkout
    from tests.upstreams.loopback import serve_on_loopback

    app = server.streamable_http_app()
    if "--modern" in sys.argv:  # a server without the session revisions (tests/eras/modern_server.py's layer)
        from tests.upstreams.loopback import refusing_initialize

        app = refusing_initialize(app)
    await serve_on_loopback(app)


if __name__ == "__main__":
    if "--http" in sys.argv:
        anyio.run(serve_http)
    else:
        server.run()
