"""Engine-facing I/O: the stdio front, the dispatcher and its method table, and the HTTP
front (`sidecar.front.http`, loaded only when serving HTTP)."""

from sidecar.concurrency import Jobs
from sidecar.front.dispatcher import Dispatcher
from sidecar.front.stdio import open_stdout, serve_stdio

__all__ = ["Dispatcher", "Jobs", "open_stdout", "serve_stdio"]
