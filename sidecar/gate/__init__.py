"""The gate: the ToolCall record and the ordered stages every call passes."""

from sidecar.gate.call import ToolCall
from sidecar.gate.chain import Gate, Next, Stage

__all__ = ["Gate", "Next", "Stage", "ToolCall"]
