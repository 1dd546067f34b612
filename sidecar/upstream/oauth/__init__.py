"""Sign-in for URL upstreams: the sidecar as an OAuth client (MCP authorization, 2025-11-25).

The pure decisions (`discovery`, `flow`, `choices`) are kept apart from the I/O
(`exchange` talks to authorization servers over aiohttp, `sealed` keeps the tokens,
`runtime` hands a bearer token to the HTTP client). Nothing here is imported on the
stdio start path: the channels ask `runtime` only when a URL server is opened.
"""
