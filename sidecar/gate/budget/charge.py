"""The result budget: no oversized result reaches the model whole.

Pure functions over a result's bytes. Under budget, the bytes pass untouched and
undecoded. Over budget: a JSON payload (structuredContent, or a text block that parses
as JSON) is held and replaced by its shaped view; other text is cut, head and tail, with
a marker. Images, audio and blobs pass up to a byte cap, beyond which a note replaces them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import msgspec

from sidecar.gate.budget.held import TooBigToHold
from sidecar.gate.budget.shape import Deep, Level, cut_text, open_payload, shaped_view

__all__ = ["Charge", "charge_result", "text_result"]

ChargeKind = Literal["pass", "binary", "cut", "shaped", "too_big"]
_BINARY_TYPES = ("image", "audio")


class Charge(msgspec.Struct, frozen=True):
    kind: ChargeKind
    result: msgspec.Raw
    bytes_in: int
    handle: str | None = None

    @property
    def bytes_out(self) -> int:
        return len(self.result)


def text_result(text: str, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def _trim_binary(content: list[Any], cap: int) -> tuple[list[Any], bool]:
    """Replace binary blocks over the cap; returns the content and whether it changed."""
    changed = False
    out: list[Any] = []
    for block in content:
        data, label = _binary_of(block)
        if data is None:
            out.append(block)
        elif len(data) > cap:
            out.append({"type": "text", "text": f"[{label} of {len(data) * 3 // 4:,} bytes left out: over the sidecar's cap of {cap:,} bytes]"})
            changed = True
        else:
            out.append(block)
    return out, changed


def _binary_of(block: Any) -> tuple[str | None, str]:
    if not isinstance(block, dict):
        return None, ""
    if block.get("type") in _BINARY_TYPES and isinstance(block.get("data"), str):
        return block["data"], str(block.get("mimeType") or block["type"])
    resource = block.get("resource")
    if block.get("type") == "resource" and isinstance(resource, dict) and isinstance(resource.get("blob"), str):
        return resource["blob"], str(resource.get("mimeType") or "embedded blob")
    return None, ""


def visible_chars(result: dict[str, Any], structured_json: bytes | None = None) -> int:
    """Characters the model reads: text blocks and embedded texts, or the structured content
    (`structured_json`: its encoding, when the caller has it)."""
    chars = 0
    for block in result.get("content") or []:
        if not isinstance(block, dict):
            continue
        if isinstance(block.get("text"), str):
            chars += len(block["text"])
        resource = block.get("resource")
        if isinstance(resource, dict) and isinstance(resource.get("text"), str):
            chars += len(resource["text"])
    structured = result.get("structuredContent")
    if structured is not None:  # often a copy of the text: the larger of the two counts
        encoded = structured_json if structured_json is not None else msgspec.json.encode(structured)
        chars = max(chars, len(encoded.decode("utf-8", "replace")))
    return chars


def _structured_json(result: dict[str, Any]) -> bytes | None:
    """structuredContent encoded once, for both the count and the payload held."""
    structured = result.get("structuredContent")
    return None if structured is None else msgspec.json.encode(structured)


def _json_payload(result: dict[str, Any], structured_json: bytes | None) -> tuple[bytes, Level | Deep | None] | None:
    """The bytes worth holding, with their top level when it was opened to find them:
    structuredContent, or the largest text block that is JSON."""
    if isinstance(result.get("structuredContent"), (dict, list)) and structured_json is not None:
        return structured_json, None
    texts = [b["text"] for b in result.get("content") or [] if isinstance(b, dict) and isinstance(b.get("text"), str)]
    for text in sorted(texts, key=len, reverse=True):
        if text.lstrip()[:1] in ("{", "["):
            payload: bytes = text.encode()
            try:
                level = open_payload(payload)  # parses it all, once: the shape reads what it opened
            except msgspec.DecodeError:
                continue
            return payload, level
    return None


def _cut_all(result: dict[str, Any], budget: int, chars: int) -> dict[str, Any]:
    content: list[Any] = []
    for block in result.get("content") or []:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            share = max(200, budget * len(block["text"]) // max(chars, 1))
            block = {**block, "text": cut_text(block["text"], share)}
        content.append(block)
    cut = {k: v for k, v in result.items() if k != "structuredContent"}
    cut["content"] = content
    return cut


def charge_result(raw: bytes, budget: int, binary_cap: int, hold: Callable[[bytes], str]) -> Charge:
    """Decide what of `raw` (a tools/call result) the model may see."""
    size = len(raw)
    if size <= budget:
        return Charge("pass", msgspec.Raw(raw), size)
    try:
        result = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return Charge("pass", msgspec.Raw(raw), size)
    if not isinstance(result, dict):
        return Charge("pass", msgspec.Raw(raw), size)
    content, trimmed = _trim_binary(list(result.get("content") or []), binary_cap)
    if trimmed:
        result = {**result, "content": content}
        raw = msgspec.json.encode(result)
    structured_json = _structured_json(result)
    chars = visible_chars(result, structured_json)
    if chars <= budget:
        return Charge("binary" if trimmed else "pass", msgspec.Raw(raw), size)
    return _over_budget(result, chars, budget, hold, size, structured_json)


def _over_budget(result: dict[str, Any], chars: int, budget: int, hold: Callable[[bytes], str], size: int,
                 structured_json: bytes | None) -> Charge:
    """The result decoded once (by the caller); the payload found in it opened once,
    its levels shared by the shape and the records shown (`sidecar.gate.budget.shape.Opened`)."""
    found = _json_payload(result, structured_json)
    if found is None:
        return Charge("cut", msgspec.Raw(msgspec.json.encode(_cut_all(result, budget, chars))), size)
    payload, level = found
    try:
        handle = hold(payload)
    except TooBigToHold as exc:
        message = f"{exc}. Ask the tool for less (a narrower query or a smaller page)."
        return Charge("too_big", msgspec.Raw(msgspec.json.encode(text_result(message, True))), size)
    view = shaped_view(payload, handle, len(payload), budget, level)
    shaped = text_result(view, bool(result.get("isError")))
    return Charge("shaped", msgspec.Raw(msgspec.json.encode(shaped)), size, handle)
