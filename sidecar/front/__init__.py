"""Engine-facing I/O and the MCP method handlers."""

from sidecar.front.face import Face
from sidecar.front.handlers import Dispatcher
from sidecar.front.session import EngineSession
from sidecar.front.stdio import open_stdout, serve_stdio

__all__ = ["Dispatcher", "EngineSession", "Face", "open_stdout", "serve_stdio"]
