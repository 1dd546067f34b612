"""The Streamable HTTP front (aiohttp, loaded only when `--http` is given).

Its modules, in the order a request meets them: `listener` (the socket and the limits
before a handler), `admission` (Host, Origin, bearer token, as pure decisions),
`routes` (the MCP endpoint and its order of admission), `sessions` (one engine session
per `Mcp-Session-Id`) and `stateless` (the 2026-07-28 revision, whole).
"""
