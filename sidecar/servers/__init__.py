"""Bring your own servers: the rules an entry must pass, the paste importer, the bounded
check ("Test"), the health file, and the `omb-sidecar add|check|servers` commands.

Rooms: `rules` (pure checks, called by `sidecar.config` wherever a config is read),
`forms`, `shell` and `jsonish` (reading pastes), `importer` (paste -> named, safe
entries), `store` (the config file, written atomically and 0600; write-only values),
`check` and `signin` (one bounded handshake and listing; RFC 9728 hints on a refusal),
`health` (results kept in `<data>/mcp-health.json`, and `leave_out`: which servers a face
leaves out), `views` and `commands` (the CLI). Only `rules` is imported here:
`sidecar.config` imports this package while it is itself being imported.
"""

from sidecar.servers.rules import (
    RESERVED_NAMES,
    approved,
    check_name,
    mount_key,
    url_matches,
)

__all__ = ["RESERVED_NAMES", "approved", "check_name", "mount_key", "url_matches"]
