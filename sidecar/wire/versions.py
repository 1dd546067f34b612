"""The MCP protocol revisions the sidecar speaks, on both of its sides.

Owns the version strings: the session revisions negotiated by `initialize` (oldest first,
the newest preferred) and the stateless revision whose requests each carry their own
envelope. The front answers engines by them; upstream handshakes offer them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ENVELOPE_KEYS", "HANDSHAKE_VERSIONS", "MODERN_VERSION", "without_envelope"]

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# The stateless revision: no initialize, every request carries its own envelope.
MODERN_VERSION = "2026-07-28"

# The per-request envelope a 2026-07-28 engine puts in `params._meta`: it describes the
# engine to the sidecar, and must not go on upstream (a session-era server refuses a request
# that carries it; a 2026-07-28 server gets the sidecar's own envelope instead).
ENVELOPE_KEYS = frozenset({"io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities",
                           "io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/logLevel"})


def without_envelope(params: dict[str, Any]) -> dict[str, Any]:
    """`params` with the engine's envelope keys taken out of `_meta` (the same dict when none)."""
    meta = params.get("_meta")
    if not isinstance(meta, dict) or ENVELOPE_KEYS.isdisjoint(meta):
        return params
    rest = {k: v for k, v in meta.items() if k not in ENVELOPE_KEYS}
    trimmed = {k: v for k, v in params.items() if k != "_meta"}
    return {**trimmed, "_meta": rest} if rest else trimmed
