"""The MCP protocol revisions the sidecar speaks, on both of its sides.

Owns the version strings: the session revisions negotiated by `initialize` (oldest first,
the newest preferred) and the stateless revision whose requests each carry their own
envelope. The front answers engines by them; upstream handshakes offer them.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` waits for the runtime: the early answers read this module
if TYPE_CHECKING:
    from typing import Any

__all__ = ["CAPABILITIES_KEY", "ENVELOPE_KEYS", "HANDSHAKE_VERSIONS", "MODERN_VERSION", "without_envelope"]

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# The stateless revision: no initialize, every request carries its own envelope.
MODERN_VERSION = "2026-07-28"
# What a 2026-07-28 request's `_meta` says of its sender (its revision, capabilities, name,
# log level): about the engine and the sidecar, never passed on to an upstream, which gets
# the sidecar's own (a session-era server refuses a request that carries them).
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"  # the sender's capabilities, in that envelope
ENVELOPE_KEYS = frozenset({"io.modelcontextprotocol/protocolVersion", CAPABILITIES_KEY,
                           "io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/logLevel"})


def without_envelope(meta: dict[str, Any]) -> dict[str, Any]:
    """`meta` without the engine's envelope (the same dict when it has none)."""
    if not any(key in ENVELOPE_KEYS for key in meta):
        return meta
    return {key: value for key, value in meta.items() if key not in ENVELOPE_KEYS}

# The MCP Apps extension's name among a server's `capabilities.extensions`.
UI_EXTENSION = "io.modelcontextprotocol/ui"
