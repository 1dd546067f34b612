"""The MCP protocol revisions the sidecar speaks, on both of its sides.

Owns the version strings: the session revisions negotiated by `initialize` (oldest first,
the newest preferred) and the stateless revision whose requests each carry their own
envelope. The front answers engines by them; upstream handshakes offer them.
"""

from __future__ import annotations

__all__ = ["HANDSHAKE_VERSIONS", "MODERN_VERSION"]

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# The stateless revision: no initialize, every request carries its own envelope.
MODERN_VERSION = "2026-07-28"
