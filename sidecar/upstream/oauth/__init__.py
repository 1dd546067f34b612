"""Sign-in for URL upstreams: the sidecar as an OAuth client (MCP authorization, 2025-11-25).

Rooms: the pure decisions (`discovery`: challenges, addresses, scopes, ports; `flow`:
PKCE, state, the return; `choices`: what metadata allows) kept apart from the I/O
(`exchange` talks to authorization servers over aiohttp, `locate` finds a server's
sign-in, `grants` gets tokens, `sealed` keeps them, `runtime` hands a bearer token to the
HTTP client). `where` names the process's config; it alone is touched at start. Nothing
else here is imported on the stdio start path.
"""
