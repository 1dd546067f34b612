"""The gate: the ToolCall record and the ordered stages every call passes."""

from sidecar.gate.call import ToolCall
from sidecar.gate.chain import QUERY_RESULT, QUERY_RESULT_TOOL, Gate, Next, Stage

__all__ = ["QUERY_RESULT", "QUERY_RESULT_TOOL", "Gate", "Next", "Stage", "ToolCall"]
