"""The bundled example: two small MCP servers and the demo that drives the sidecar."""
