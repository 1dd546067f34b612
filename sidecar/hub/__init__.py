"""The hub: what the engine sees as one MCP server (the face) and the engine sessions it
talks to. Fronts feed it frames and carry what it sends; it never touches a socket."""

from sidecar.hub.assemble import FaceOptions, build_face
from sidecar.hub.face import Face
from sidecar.hub.session import EngineSession

__all__ = ["EngineSession", "Face", "FaceOptions", "build_face"]
