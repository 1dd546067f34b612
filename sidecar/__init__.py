"""omb-sidecar: an MCP proxy that runs beside an AI agent engine.

Importing the package loads nothing heavy: the runtime path never imports the
`mcp` SDK, pydantic, aiohttp or jmespath (a test pins this).
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
