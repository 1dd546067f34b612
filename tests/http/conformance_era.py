"""The conformance fixture served as a server of one protocol era only (`--era session`
or `--era stateless`), as servers that have not moved to 2026-07-28, or have only that
revision, are: an ASGI layer answers a request of the other era with the
unsupported-version error before the SDK sees it, so a client (the sidecar) then speaks
the era the server has. `--era both`, the default, lets everything through.
"""

from __future__ import annotations

from typing import Any

from tests.upstreams.loopback import refusing_versions

__all__ = ["ERA", "one_era"]

MODERN = "2026-07-28"
ERA = {"name": "both"}  # set from the command line by conformance_server


def _refused(request: Any) -> bool:
    """A request this fixture's era does not serve: at `session`, a 2026-07-28 one (its
    header, or `server/discover`); at `stateless`, `initialize`."""
    if not isinstance(request, dict):
        return False
    if ERA["name"] == "stateless":
        return request.get("method") == "initialize"
    meta = (request.get("params") or {}).get("_meta") if isinstance(request.get("params"), dict) else None
    modern = isinstance(meta, dict) and meta.get("io.modelcontextprotocol/protocolVersion") == MODERN
    return modern or request.get("method") == "server/discover"


def one_era(app: Any) -> Any:
    """ASGI: a request of the other era answered with the unsupported-version error, as a
    server of one era only does (`--era session|stateless`); its clients then speak the
    era it has."""
    return refusing_versions(app, lambda request: ([MODERN] if ERA["name"] == "stateless" else ["2025-11-25"])
                             if _refused(request) else None)
