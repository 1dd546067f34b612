"""The gate: the ToolCall record, the ordered stages every call passes, and the one
mapping of a call's outcome to the wire."""

from sidecar.gate.call import ToolCall
from sidecar.gate.chain import QUERY_RESULT, QUERY_RESULT_TOOL, Gate, Next, Observer, Stage
from sidecar.gate.parts import GateParts, SharedState

__all__ = ["QUERY_RESULT", "QUERY_RESULT_TOOL", "Gate", "GateParts", "Next", "Observer", "SharedState", "Stage",
           "ToolCall"]
