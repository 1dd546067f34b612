"""Engine-facing I/O and the MCP method handlers."""

from sidecar.front.face import Face
from sidecar.front.handlers import Dispatcher
from sidecar.front.jobs import Jobs
from sidecar.front.session import EngineSession
from sidecar.front.stdio import open_stdout, serve_stdio

__all__ = ["Dispatcher", "EngineSession", "Face", "Jobs", "open_stdout", "serve_stdio"]
