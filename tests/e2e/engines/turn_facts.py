"""Reading a turn's report: the tools each engine sent to the fake model, and the tool
results it passed back, in each provider's format."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["model_requests", "offered_tools", "tool_results", "ToolResult"]


class ToolResult(dict[str, Any]):
    """{"text": the result as the model received it, "is_error": bool}."""

    @property
    def text(self) -> str:
        return str(self["text"])

    @property
    def is_error(self) -> bool:
        return bool(self["is_error"])


def model_requests(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The requests that offered tools (the turn's own, not side requests)."""
    return [r for r in result["requests"] if r["tools"]]


def offered_tools(result: dict[str, Any]) -> list[str]:
    requests = model_requests(result)
    assert requests, f"the engine never asked the model with tools: {result['stdout'][-2000:]}\n{result['stderr'][-2000:]}"
    return list(requests[0]["tools"])


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text(part) for part in content)
    if isinstance(content, dict):
        if isinstance(content.get("text"), str):
            return str(content["text"])
        return _text(content.get("content", ""))
    return json.dumps(content)


def tool_results(result: dict[str, Any], dialect: str) -> list[ToolResult]:
    """The tool results in the last request: what the model finally received."""
    body = model_requests(result)[-1]["body"]
    found: list[ToolResult] = []
    if dialect == "anthropic":
        for message in body.get("messages", []):
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if block.get("type") == "tool_result":
                    found.append(ToolResult(text=_text(block.get("content", "")), is_error=bool(block.get("is_error"))))
    elif dialect == "responses":
        for item in body.get("input", []):
            if item.get("type") == "function_call_output":
                found.append(ToolResult(text=_text(item.get("output", "")), is_error=False))
    else:
        for message in body.get("messages", []):
            if message.get("role") == "tool":
                found.append(ToolResult(text=_text(message.get("content", "")), is_error=False))
    return found
