"""MCP Apps (the `io.modelcontextprotocol/ui` extension): which tools only an app may call.

A tool bound to a `ui://` resource carries `_meta.ui` (`resourceUri`, maybe `visibility`);
the sidecar passes that object through unchanged. A tool whose `visibility` leaves out
"model" is app-only: the layouts and every search leave it out (`model_catalog`), and a
call to it runs only when the request says it comes from an app (`APP_MARKER`).

The extension puts no marker of its own on the wire: the host (the engine) proxies an
app's `tools/call` as any other call. So the marker is the sidecar's own
`params._meta["omb-sidecar/from-app"] = true`, asserted by the engine, and taken off
before the call goes upstream. It keeps a model from reaching an app-only tool by name;
it does not prove that an app, rather than a host that lies, sent the call. No I/O.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar.catalog.merge import Catalog, CatalogEntry, app_only_spec
from sidecar.wire.versions import UI_EXTENSION

__all__ = ["APP_MARKER", "UI_EXTENSION", "is_app_only", "model_catalog", "take_app_marker", "ui_extension"]

APP_MARKER = "omb-sidecar/from-app"


def is_app_only(spec: dict[str, Any]) -> bool:
    """True when the tool's `_meta.ui.visibility` is a list without "model" (the merge keeps
    the answer on each entry as `app_only`; this reads a spec that is not an entry yet)."""
    return app_only_spec(spec)


def model_catalog(catalog: Catalog) -> Catalog:
    """The catalog less its app-only tools: what any layout or search may show the model.
    The same object when there are none (the common case costs one pass, no copy)."""
    if not any(e.app_only for e in catalog.tools):
        return catalog
    tools = tuple(e for e in catalog.tools if not e.app_only)
    return msgspec.structs.replace(catalog, tools=tools, by_tool={e.exposed: e for e in tools})


def take_app_marker(meta: dict[str, Any] | None) -> tuple[dict[str, Any] | None, bool]:
    """`meta` without the app marker, and whether it said the request is an app's."""
    if not meta or APP_MARKER not in meta:
        return meta, False
    rest = {k: v for k, v in meta.items() if k != APP_MARKER}
    return rest or None, meta[APP_MARKER] is True


def runs_for(entry: CatalogEntry, from_app: bool) -> bool:
    """Whether a direct call may run this tool: an app-only tool only for an app."""
    return from_app or not entry.app_only


def ui_extension(offers: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The Apps extension's server capability to offer the engine: the first upstream's that
    offers it (None in `offers`: an upstream still starting, counted as offering it)."""
    for caps in offers:
        if caps is None:
            return {}
        extensions = caps.get("extensions")
        found = extensions.get(UI_EXTENSION) if isinstance(extensions, dict) else None
        if isinstance(found, dict):
            return found
    return None
