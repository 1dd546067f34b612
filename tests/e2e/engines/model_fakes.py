"""Fake model APIs on 127.0.0.1 for real engine turns: Anthropic Messages (Claude Code),
OpenAI Responses (Codex) and OpenAI chat completions (pi), each streaming as its engine
expects. Standard library only: the turn runner imports it inside a network namespace.

A `Script` says what the fake model does in a turn: call these tools, one per model
request, in order, then answer with a final text. Tool names in a script are the face's
own names (`agents__list_bots`, `use_tool`); each dialect finds the engine's spelling of
that name among the tools the request offers (`mcp__omb__agents__list_bots` on Claude
Code, the function `agents__list_bots` in the `mcp__omb` namespace on Codex, the bare name
on pi). A request that does not offer a scripted tool gets a text answer saying so, which
the tests see in the record.

Every request is recorded (path and decoded body) for the tests to assert on: the tools
the engine sent, and the tool results it passed back to the model.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Script", "ToolStep", "FakeModelAPI", "DIALECTS"]

FINAL_TEXT = "Done: the tool answered."


@dataclass(frozen=True)
class ToolStep:
    name: str  # the face's name of the tool (the engine adds its own prefix)
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Script:
    steps: tuple[ToolStep, ...]
    final_text: str = FINAL_TEXT

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Script:
        steps = tuple(ToolStep(s["name"], s.get("arguments", {})) for s in data["steps"])
        return cls(steps, data.get("final_text", FINAL_TEXT))


# -- what the model says, as a dialect-neutral reply ----------------------------------


@dataclass(frozen=True)
class Reply:
    text: str | None = None
    call: tuple[str, str | None, dict[str, Any]] | None = None  # (name, namespace, arguments)


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


# -- Anthropic Messages ----------------------------------------------------------------


class Anthropic:
    path = "/v1/messages"

    @staticmethod
    def tool_names(body: dict[str, Any]) -> list[str]:
        return [t.get("name", "") for t in body.get("tools") or []]

    @staticmethod
    def results_so_far(body: dict[str, Any]) -> int:
        count = 0
        for message in body.get("messages") or []:
            content = message.get("content")
            if isinstance(content, list):
                count += sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
        return count

    @staticmethod
    def resolve(body: dict[str, Any], name: str) -> tuple[str, str | None] | None:
        for offered in Anthropic.tool_names(body):
            if offered == name or (offered.startswith("mcp__") and offered.split("__", 2)[-1] == name):
                return offered, None
        return None

    @staticmethod
    def events(reply: Reply, serial: int) -> Iterator[bytes]:
        message = {"id": f"msg_{serial}", "type": "message", "role": "assistant", "model": "fake-model",
                   "content": [], "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": 10, "output_tokens": 1}}
        yield _sse("message_start", {"type": "message_start", "message": message})
        if reply.call is not None:
            name, _, arguments = reply.call
            block = {"type": "tool_use", "id": f"toolu_{serial:04d}", "name": name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(arguments)}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": reply.text or ""}
            stop = "end_turn"
        yield _sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block})
        yield _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
        yield _sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": 5}})
        yield _sse("message_stop", {"type": "message_stop"})


# -- OpenAI Responses ------------------------------------------------------------------


class Responses:
    path = "/v1/responses"

    @staticmethod
    def _functions(body: dict[str, Any]) -> Iterator[tuple[str, str | None]]:
        for tool in body.get("tools") or []:
            if tool.get("type") == "namespace":
                for inner in tool.get("tools") or []:
                    yield inner.get("name", ""), tool.get("name")
            else:
                yield tool.get("name", ""), None

    @staticmethod
    def tool_names(body: dict[str, Any]) -> list[str]:
        return [f"{ns}/{name}" if ns else name for name, ns in Responses._functions(body)]

    @staticmethod
    def results_so_far(body: dict[str, Any]) -> int:
        items = body.get("input")
        if not isinstance(items, list):
            return 0
        return sum(1 for i in items if isinstance(i, dict) and i.get("type") == "function_call_output")

    @staticmethod
    def resolve(body: dict[str, Any], name: str) -> tuple[str, str | None] | None:
        wanted = name.replace("-", "_")
        for offered, namespace in Responses._functions(body):
            if offered in (name, wanted) or offered.endswith(f"__{wanted}"):
                return offered, namespace
        return None

    @staticmethod
    def events(reply: Reply, serial: int) -> Iterator[bytes]:
        rid = f"resp_{serial}"
        base = {"id": rid, "object": "response", "created_at": 0, "model": "fake-model", "output": []}
        yield _sse("response.created", {"type": "response.created", "response": {**base, "status": "in_progress"}})
        if reply.call is not None:
            name, namespace, arguments = reply.call
            args = json.dumps(arguments)
            item = {"type": "function_call", "id": f"fc_{serial}", "call_id": f"call_{serial}", "name": name,
                    "arguments": "", "status": "in_progress"}
            if namespace:
                item["namespace"] = namespace
            yield _sse("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item})
            yield _sse("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta",
                                                                  "item_id": item["id"], "output_index": 0, "delta": args})
            yield _sse("response.function_call_arguments.done", {"type": "response.function_call_arguments.done",
                                                                 "item_id": item["id"], "output_index": 0, "arguments": args})
            done = {**item, "arguments": args, "status": "completed"}
        else:
            item = {"type": "message", "id": f"msg_{serial}", "role": "assistant", "status": "in_progress", "content": []}
            yield _sse("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item})
            yield _sse("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                      "output_index": 0, "content_index": 0, "delta": reply.text or ""})
            done = {**item, "status": "completed",
                    "content": [{"type": "output_text", "text": reply.text or "", "annotations": []}]}
        yield _sse("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": done})
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        yield _sse("response.completed", {"type": "response.completed",
                                          "response": {**base, "status": "completed", "output": [done], "usage": usage}})


# -- OpenAI chat completions -----------------------------------------------------------


class Chat:
    path = "/v1/chat/completions"

    @staticmethod
    def tool_names(body: dict[str, Any]) -> list[str]:
        return [(t.get("function") or {}).get("name", "") for t in body.get("tools") or []]

    @staticmethod
    def results_so_far(body: dict[str, Any]) -> int:
        return sum(1 for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "tool")

    @staticmethod
    def resolve(body: dict[str, Any], name: str) -> tuple[str, str | None] | None:
        return (name, None) if name in Chat.tool_names(body) else None

    @staticmethod
    def events(reply: Reply, serial: int) -> Iterator[bytes]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            body = {"id": f"chatcmpl-{serial}", "object": "chat.completion.chunk", "created": 0, "model": "fake-model",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if finish:
                body["usage"] = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
            return _sse(None, body)

        if reply.call is not None:
            name, _, arguments = reply.call
            call = {"index": 0, "id": f"call_{serial}", "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)}}
            yield chunk({"role": "assistant", "content": None, "tool_calls": [call]})
            yield chunk({}, "tool_calls")
        else:
            yield chunk({"role": "assistant", "content": reply.text or ""})
            yield chunk({}, "stop")
        yield b"data: [DONE]\n\n"


DIALECTS: dict[str, Any] = {"anthropic": Anthropic, "responses": Responses, "chat": Chat}


# -- the server ------------------------------------------------------------------------


class FakeModelAPI:
    """One dialect's fake API on 127.0.0.1; `with FakeModelAPI(...) as api:` serves it."""

    def __init__(self, dialect: str, script: Script) -> None:
        self.dialect = DIALECTS[dialect]
        self.script = script
        self.requests: list[dict[str, Any]] = []  # {"path", "body", "tools", "reply"}
        self._lock = threading.Lock()
        self._serial = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-model", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeModelAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reply_to(self, body: dict[str, Any]) -> Reply:
        """The scripted step for this request: the next tool call, or the final text."""
        step_index = self.dialect.results_so_far(body)
        if not body.get("tools"):
            return Reply(text="ok")  # a side request (titles, summaries): nothing scripted
        if step_index >= len(self.script.steps):
            return Reply(text=self.script.final_text)
        step = self.script.steps[step_index]
        found = self.dialect.resolve(body, step.name)
        if found is None:
            return Reply(text=f"FAKE-MODEL: the tool {step.name} was not offered")
        return Reply(call=(found[0], found[1], step.arguments))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                self._plain(200, b"{}")

            def do_HEAD(self) -> None:
                self._plain(200, b"")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._plain(400, b'{"error":"not json"}')
                    return
                path = self.path.split("?", 1)[0]
                if not path.endswith(api.dialect.path.removeprefix("/v1")):
                    api._record(path, body, None)
                    self._plain(404, b'{"error":"unknown path"}')
                    return
                reply = api.reply_to(body)
                serial = api._record(path, body, reply)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for event in api.dialect.events(reply, serial):
                    self.wfile.write(event)
                    self.wfile.flush()
                self.close_connection = True

            def _plain(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

        return Handler

    def _record(self, path: str, body: dict[str, Any], reply: Reply | None) -> int:
        with self._lock:
            serial = next(self._serial)
            self.requests.append({
                "path": path,
                "body": body,
                "tools": self.dialect.tool_names(body),
                "reply": None if reply is None else {"text": reply.text, "call": reply.call},
            })
            return serial
