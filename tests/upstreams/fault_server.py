"""A scriptable, misbehaving MCP upstream speaking raw JSON lines on stdio (stdlib only).

    python tests/upstreams/fault_server.py [OPTION[=VALUE]] ...

Options are words on argv (see OPTIONS below, or `--help`). With none it is a plain,
correct server. Faults come two ways:

* global options, which change how the server behaves all the time (`garbage=3`
  writes three junk lines before every frame, `no-init` never answers initialize, ...);
* tools, which misbehave on the call that asks for it (`crash`, `hang`, `flood`, ...),
  so one test can script a fault at the exact moment it wants.

Tools (arguments in braces; all are listed by tools/list):

    echo {nonce}               text: the nonce; structuredContent {nonce, server}
    sleep {seconds, nonce?}    answer after `seconds` (cancellable: no answer once cancelled)
    hang {}                    never answer
    crash {code?, partial?}    exit mid-call (partial=true: write half a frame first)
    big {bytes}                a text result of exactly `bytes` characters
    records {count}            JSON text: a list of `count` records
    flood {count, nonce?}      `count` progress notifications (needs a progressToken), then the nonce
    garbage {lines?}           junk lines on stdout, then the answer
    giant {bytes}              one non-JSON line of `bytes` bytes, then the answer
    stderr {bytes}             `bytes` of noise on stderr, then the answer
    duplicate {nonce}          the answer twice
    stray {nonce}              answers with unknown ids first, then the real answer
    close_stdout {}            close stdout (the answer is never sent); keep running
    close_stdin {}             close stdin (writes to us fail with EPIPE); keep running
    env {}                     JSON text: this process's environment
    ask {method, params?}      send a request to the client, answer with its reply (JSON text)
    notify {method, params?}   send a notification to the client, then answer "sent"
    change_tools {names}       set the extra tools, send notifications/tools/list_changed
    error {code?, message?, data?}  a JSON-RPC error answer (with `data` as given)
    tool_error {message?}      an isError result
    pid {}                     this process's pid
    spew {method, count, bytes?, per_second?, nonce?}   (listed with the `spew` option)
                               `count` notifications of `method` (message, progress (needs a
                               progressToken), resources/updated, tools/list_changed, or any),
                               each padded to about `bytes`, at most `per_second` a second (0: as
                               fast as the pipe takes them), then the nonce; records `spewed`

`record=FILE` appends one JSON line per event: start (pid, argv), every frame received
(raw text, or an error for undecodable input), every frame sent (its id and method),
cancellations, exits. It is the upstream's side of the story in tests.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from typing import Any, Callable

# ---------------------------------------------------------------------------------------
# Global options: name -> (default, parser, help). The table is the whole interface.
# ---------------------------------------------------------------------------------------


def _flag(v: str) -> bool:
    return v.lower() not in ("0", "false", "no", "off")


OPTIONS: dict[str, tuple[Any, Callable[[str], Any], str]] = {
    "name": ("fault", str, "serverInfo.name"),
    "protocol": ("", str, "protocolVersion to answer with (default: echo the client's)"),
    "record": ("", str, "append a JSON line per event to this file"),
    "no-init": (False, _flag, "never answer initialize (keep reading)"),
    "init-delay": (0.0, float, "seconds to wait before answering initialize"),
    "init-error": (False, _flag, "answer initialize with a JSON-RPC error"),
    "exit-on-start": (None, int, "exit at once with this code"),
    "exit-after-init": (None, int, "exit with this code right after answering initialize"),
    "crash-after": (0, int, "exit(3) on receiving the Nth tools/call, without answering it"),
    "hang-tool": ("", str, "comma-separated tool names that are never answered"),
    "garbage": (0, int, "junk lines written before every frame"),
    "garbage-on-start": (0, int, "junk lines written before reading anything"),
    "giant": (0, int, "a non-JSON line of this many bytes before every tools/call answer"),
    "duplicate": (False, _flag, "send every response twice"),
    "unknown-ids": (False, _flag, "before every response, send responses for ids never issued"),
    "progress-flood": (0, int, "progress notifications before every tools/call answer (needs a token)"),
    "result-bytes": (0, int, "pad echo results to this many characters"),
    "stderr-flood": (0, int, "bytes of stderr noise at start and on every request"),
    "close-stdout-after": (0, int, "close stdout after sending N frames (keep running)"),
    "late-after-cancel": (False, _flag, "answer a cancelled request anyway"),
    "ignore-cancel": (False, _flag, "do not stop work on notifications/cancelled"),
    "tools-change-after": (0, int, "after N tools/call answers, add a tool and send list_changed"),
    "tool-pages": (0, int, "page size for tools/list (0: one page)"),
    "filler-tools": (0, int, "add this many filler tools"),
    "bad-tools": (False, _flag, "list hostile tool entries (control chars, reserved/invalid names)"),
    "notify-before-init": (False, _flag, "send notifications before answering initialize"),
    "request-before-init": (False, _flag, "send a ping request before answering initialize"),
    "linger": (0.0, float, "after stdin EOF, stay alive this many seconds before exiting"),
    "ignore-sigterm": (False, _flag, "ignore SIGTERM (and SIGINT)"),
    "no-capabilities": (False, _flag, "declare no capabilities at all"),
    "spew": (False, _flag, "list the spew tool (a flood of notifications on demand)"),
}

GARBAGE: list[bytes] = [
    b"this is not json",
    b"\xff\xfe\xfd invalid utf-8 \xc3\x28 \xed\xa0\x80",
    b"{\"jsonrpc\": \"2.0\", \"id\": ",  # truncated frame
    b"[1, 2, 3]",
    b"42",
    b"\"just a string\"",
    b"null",
    b"{}",
    b"{\"jsonrpc\": \"2.0\"}",
    b"{\"jsonrpc\": \"1.0\", \"id\": 1, \"result\": {}}",
    b"{\"jsonrpc\": \"2.0\", \"id\": true, \"result\": {}}",
    b"{\"jsonrpc\": \"2.0\", \"id\": 1.5, \"result\": {}}",
    b"{\"jsonrpc\": \"2.0\", \"method\": 7}",
    b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"nobody\",\"progress\":1}}",
    b"Content-Length: 42",
    b"",
    b"   ",
    b"\x00\x01\x02\x1b[31m",
    b"{\"a\": NaN}",
    b"{\"jsonrpc\":\"2.0\",\"id\":7,\"id\":8,\"result\":{}}",
]

RECORD_LIMIT = 4096  # characters of a received frame kept in the record


class FaultServer:
    def __init__(self, opts: dict[str, Any], argv: list[str]) -> None:
        self.o = opts
        self.argv = argv
        self.out_lock = threading.Lock()
        self.state_lock = threading.Lock()
        self.stdout_closed = False
        self.frames_sent = 0
        self.calls_received = 0
        self.calls_answered = 0
        self.next_out_id = 0
        self.extra_tools: list[str] = []
        self.cancel_events: dict[Any, threading.Event] = {}
        self.cancelled: set[Any] = set()
        self.pending_out: dict[Any, tuple[threading.Event, list[Any]]] = {}
        self.hang_tools = {t for t in str(opts["hang-tool"]).split(",") if t}
        self.garbage_i = 0
        self.stdin_closed_on_purpose = False

    # ---- recording and output ----------------------------------------------------------

    def record(self, event: str, **fields: Any) -> None:
        path = self.o["record"]
        if not path:
            return
        line = json.dumps({"event": event, "t": time.time(), "pid": os.getpid(), **fields}, default=repr) + "\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)

    def write_raw(self, data: bytes) -> None:
        """Write bytes to stdout; a vanished reader ends the process quietly."""
        if self.stdout_closed:
            return
        view = memoryview(data)
        try:
            while view:
                n = os.write(1, view[: 1 << 20])
                view = view[n:]
        except (BrokenPipeError, OSError):
            self.record("stdout_broken")
            os._exit(0)

    def junk(self, count: int) -> bytes:
        lines = []
        for _ in range(count):
            lines.append(GARBAGE[self.garbage_i % len(GARBAGE)])
            self.garbage_i += 1
        return b"".join(line + b"\n" for line in lines)

    def send(self, frame: dict[str, Any]) -> None:
        body = json.dumps(frame, separators=(",", ":")).encode() + b"\n"
        with self.out_lock:
            if self.o["garbage"]:
                self.write_raw(self.junk(self.o["garbage"]))
            is_response = "id" in frame and "method" not in frame
            if is_response and self.o["unknown-ids"]:
                for ghost in (987654321, "ghost-id", -1):
                    ghost_frame = {"jsonrpc": "2.0", "id": ghost, "result": {"content": [], "ghost": True}}
                    self.write_raw(json.dumps(ghost_frame).encode() + b"\n")
                err = {"jsonrpc": "2.0", "id": 123456789, "error": {"code": -32000, "message": "for nobody"}}
                self.write_raw(json.dumps(err).encode() + b"\n")
            self.write_raw(body)
            if is_response and self.o["duplicate"]:
                self.write_raw(body)
            self.frames_sent += 1
            self.record("sent", id=frame.get("id"), method=frame.get("method"), bytes=len(body))
            limit = self.o["close-stdout-after"]
            if limit and self.frames_sent >= limit:
                self.close_stdout()

    def close_stdout(self) -> None:
        if not self.stdout_closed:
            self.stdout_closed = True
            self.record("stdout_closed")
            try:
                os.close(1)
            except OSError:
                pass

    def result(self, rid: Any, result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": rid, "result": result})

    def error(self, rid: Any, code: int, message: str, data: Any = None) -> None:
        err: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        self.send({"jsonrpc": "2.0", "id": rid, "error": err})

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        frame: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            frame["params"] = params
        self.send(frame)

    def stderr_noise(self, nbytes: int) -> None:
        line = b"fault-server stderr noise " + b"#" * 70 + b"\n"
        left = nbytes
        try:
            while left > 0:
                chunk = line[:left] if left < len(line) else line
                os.write(2, chunk)
                left -= len(chunk)
        except OSError:
            pass

    # ---- catalog -----------------------------------------------------------------------

    def tools(self) -> list[dict[str, Any]]:
        def obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
            s: dict[str, Any] = {"type": "object", "properties": props}
            if required:
                s["required"] = required
            return s

        st, num, integer, boolean = {"type": "string"}, {"type": "number"}, {"type": "integer"}, {"type": "boolean"}
        spec: list[tuple[str, str, dict[str, Any]]] = [
            ("echo", "Echo the nonce.", obj({"nonce": st}, ["nonce"])),
            ("sleep", "Answer after some seconds.", obj({"seconds": num, "nonce": st}, ["seconds"])),
            ("hang", "Never answer.", obj({})),
            ("crash", "Exit mid-call.", obj({"code": integer, "partial": boolean})),
            ("big", "A result of N characters.", obj({"bytes": integer}, ["bytes"])),
            ("records", "A JSON list of N records.", obj({"count": integer}, ["count"])),
            ("flood", "Many progress notifications.", obj({"count": integer, "nonce": st}, ["count"])),
            ("garbage", "Junk lines, then the answer.", obj({"lines": integer})),
            ("giant", "A giant non-JSON line, then the answer.", obj({"bytes": integer}, ["bytes"])),
            ("stderr", "Noise on stderr, then the answer.", obj({"bytes": integer}, ["bytes"])),
            ("duplicate", "The answer twice.", obj({"nonce": st}, ["nonce"])),
            ("stray", "Answers for unknown ids, then the answer.", obj({"nonce": st}, ["nonce"])),
            ("close_stdout", "Close stdout and keep running.", obj({})),
            ("close_stdin", "Close stdin and keep running.", obj({})),
            ("env", "This process's environment.", obj({})),
            ("ask", "Send a request to the client.", obj({"method": st, "params": {"type": "object"}}, ["method"])),
            ("notify", "Send a notification.", obj({"method": st, "params": {"type": "object"}}, ["method"])),
            ("change_tools", "Set the extra tools.", obj({"names": {"type": "array", "items": st}}, ["names"])),
            ("error", "A JSON-RPC error.", obj({"code": integer, "message": st, "data": {}})),
            ("tool_error", "An isError result.", obj({"message": st})),
            ("pid", "This process's pid.", obj({})),
        ]
        if self.o["spew"]:
            spew = {"method": st, "count": integer, "bytes": integer, "per_second": num, "nonce": st}
            spec.append(("spew", "A flood of notifications of one kind.", obj(spew, ["method", "count"])))
        out = [{"name": n, "description": d, "inputSchema": s} for n, d, s in spec]
        for i in range(self.o["filler-tools"]):
            out.append(
                {"name": f"filler_{i:03d}", "description": f"Filler tool number {i}.", "inputSchema": obj({})}
            )
        for extra in self.extra_tools:
            out.append({"name": extra, "description": f"Extra tool {extra}: echoes.", "inputSchema": obj({})})
        if self.o["bad-tools"]:
            out.extend(
                [
                    {"name": "ctl_desc", "description": "a\x00b\x07c\x1b[2Jd\u202ee\u200bf\ufeffg", "inputSchema": obj({})},
                    {"name": "query_result", "description": "Collides with a sidecar tool.", "inputSchema": obj({})},
                    {"name": "find_tool", "description": "Collides with a bridge tool.", "inputSchema": obj({})},
                    {"name": "x" * 100, "description": "A very long name.", "inputSchema": obj({})},
                    {"name": "has space/and:colon", "description": "Characters engines refuse.", "inputSchema": obj({})},
                    {"name": "échø", "description": "Non-ASCII name.", "inputSchema": obj({})},
                    {"name": "echo", "description": "A duplicate of echo.", "inputSchema": obj({})},
                    {"name": "no_schema", "description": "Missing inputSchema."},
                ]
            )
        return out

    # ---- inbound -----------------------------------------------------------------------

    def serve(self) -> None:
        if self.o["exit-on-start"] is not None:
            self.record("exit", code=self.o["exit-on-start"], why="exit-on-start")
            os._exit(self.o["exit-on-start"])
        if self.o["stderr-flood"]:
            self.stderr_noise(self.o["stderr-flood"])
        if self.o["garbage-on-start"]:
            with self.out_lock:
                self.write_raw(self.junk(self.o["garbage-on-start"]))
        stdin = sys.stdin.buffer
        while True:
            try:
                line = stdin.readline()
            except (OSError, ValueError):
                line = b""
            if not line:
                break
            self.handle_line(line)
        self.record("stdin_eof")
        if self.stdin_closed_on_purpose:
            self.record("waiting_to_be_killed")
            threading.Event().wait()
        if self.o["linger"]:
            time.sleep(self.o["linger"])
        self.record("exit", code=0, why="stdin closed")
        os._exit(0)

    def handle_line(self, line: bytes) -> None:
        text = line.decode("utf-8", errors="replace").rstrip("\r\n")
        if not text.strip():
            return
        try:
            msg = json.loads(text)
        except ValueError:
            self.record("recv_invalid", raw=text[:RECORD_LIMIT])
            self.error(None, -32700, "Parse error")
            return
        self.record("recv", raw=text[:RECORD_LIMIT], size=len(text))
        if not isinstance(msg, dict):
            self.error(None, -32600, "Invalid Request")
            return
        if self.o["stderr-flood"]:
            self.stderr_noise(self.o["stderr-flood"])
        method = msg.get("method")
        if method is None:
            self.on_response(msg)
            return
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if "id" not in msg:
            self.on_notification(method, params)
            return
        rid = msg["id"]
        if method == "initialize":
            threading.Thread(target=self.on_initialize, args=(rid, params), daemon=True).start()
        elif method == "ping":
            self.result(rid, {})
        elif method == "tools/list":
            self.on_tools_list(rid, params)
        elif method == "tools/call":
            with self.state_lock:
                self.calls_received += 1
                n = self.calls_received
                self.cancel_events[rid] = threading.Event()
            if self.o["crash-after"] and n >= self.o["crash-after"]:
                self.record("exit", code=3, why=f"crash-after {n}")
                os._exit(3)
            threading.Thread(target=self.on_call, args=(rid, params), daemon=True).start()
        elif method in ("resources/list", "resources/templates/list", "prompts/list"):
            key = {"resources/list": "resources", "resources/templates/list": "resourceTemplates"}.get(method, "prompts")
            self.result(rid, {key: []})
        elif method == "logging/setLevel":
            self.result(rid, {})
        else:
            self.error(rid, -32601, "Method not found", method)

    def on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/cancelled":
            rid = params.get("requestId")
            self.record("cancelled", id=rid, reason=params.get("reason"))
            with self.state_lock:
                self.cancelled.add(rid)
                ev = self.cancel_events.get(rid)
            if ev is not None and not self.o["ignore-cancel"]:
                ev.set()

    def on_response(self, msg: dict[str, Any]) -> None:
        rid = msg.get("id")
        with self.state_lock:
            waiter = self.pending_out.pop(rid, None)
        if waiter is None:
            self.record("unexpected_response", id=rid)
            return
        waiter[1].append(msg)
        waiter[0].set()

    def on_initialize(self, rid: Any, params: dict[str, Any]) -> None:
        if self.o["no-init"]:
            self.record("init_ignored")
            return
        if self.o["notify-before-init"]:
            self.notify("notifications/message", {"level": "info", "data": "before init"})
            self.notify("notifications/tools/list_changed")
        if self.o["request-before-init"]:
            self.send({"jsonrpc": "2.0", "id": "early-ping", "method": "ping"})
        if self.o["init-delay"]:
            time.sleep(self.o["init-delay"])
        if self.o["init-error"]:
            self.error(rid, -32603, "initialize refused")
            return
        version = self.o["protocol"] or str(params.get("protocolVersion", "2025-06-18"))
        caps: dict[str, Any] = {}
        if not self.o["no-capabilities"]:
            caps = {"tools": {"listChanged": True}, "logging": {}}
        self.result(
            rid,
            {"protocolVersion": version, "capabilities": caps, "serverInfo": {"name": self.o["name"], "version": "0.0.1"}},
        )
        if self.o["exit-after-init"] is not None:
            self.record("exit", code=self.o["exit-after-init"], why="exit-after-init")
            os._exit(self.o["exit-after-init"])

    def on_tools_list(self, rid: Any, params: dict[str, Any]) -> None:
        tools = self.tools()
        size = self.o["tool-pages"]
        if size <= 0:
            self.result(rid, {"tools": tools})
            return
        try:
            start = int(params.get("cursor") or 0)
        except (TypeError, ValueError):
            self.error(rid, -32602, "bad cursor")
            return
        result: dict[str, Any] = {"tools": tools[start : start + size]}
        if start + size < len(tools):
            result["nextCursor"] = str(start + size)
        self.result(rid, result)

    # ---- calls -------------------------------------------------------------------------

    def on_call(self, rid: Any, params: dict[str, Any]) -> None:
        name = params.get("name")
        args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        token = meta.get("progressToken")
        cancel = self.cancel_events.get(rid) or threading.Event()
        self.record("call", id=rid, tool=name, arguments=args, progressToken=token)
        if name in self.hang_tools or name == "hang":
            return
        try:
            outcome = self.run_tool(rid, str(name), args, token, cancel)
        except Exception as exc:  # a bad argument: report it like a real server would
            self.error(rid, -32602, f"{type(exc).__name__}: {exc}")
            return
        if outcome is None:
            return
        with self.state_lock:
            was_cancelled = rid in self.cancelled
            self.cancel_events.pop(rid, None)
        if was_cancelled and not self.o["late-after-cancel"]:
            self.record("dropped_after_cancel", id=rid)
            return
        if self.o["progress-flood"] and token is not None:
            for i in range(self.o["progress-flood"]):
                self.notify("notifications/progress", {"progressToken": token, "progress": i + 1})
        if self.o["giant"]:
            with self.out_lock:
                self.write_raw(b"G" * self.o["giant"] + b"\n")
        if "error" in outcome:
            err = outcome["error"]
            self.error(rid, err["code"], err["message"], err.get("data"))
        else:
            self.result(rid, outcome["result"])
        with self.state_lock:
            self.calls_answered += 1
            answered = self.calls_answered
        after = self.o["tools-change-after"]
        if after and answered == after:
            self.extra_tools.append(f"late_tool_{answered}")
            self.notify("notifications/tools/list_changed")

    def spew(self, method: str, count: int, size: int, per_second: float, token: Any) -> int:
        """Write `count` notifications in batches of pre-encoded lines (a flood, not a loop
        of sends); pace them to `per_second` when given."""
        pad = "x" * max(size - 120, 0)
        if method == "notifications/progress":
            if token is None:
                return 0
            params: dict[str, Any] = {"progressToken": token, "progress": 1, "message": pad}
        elif method == "notifications/message":
            params = {"level": "info", "logger": "spew", "data": pad}
        elif method == "notifications/resources/updated":
            params = {"uri": f"spew://{pad}"}
        else:
            params = {"pad": pad} if pad else {}
        line = json.dumps({"jsonrpc": "2.0", "method": method, "params": params}, separators=(",", ":")).encode() + b"\n"
        batch = max(1, min(count, (1 << 20) // len(line), int(per_second / 20) if per_second else count))
        started, sent = time.monotonic(), 0
        while sent < count:
            n = min(batch, count - sent)
            with self.out_lock:
                self.write_raw(line * n)
            sent += n
            if per_second:
                ahead = sent / per_second - (time.monotonic() - started)
                if ahead > 0:
                    time.sleep(ahead)
        self.record("spewed", method=method, count=sent, bytes=sent * len(line))
        return sent

    def text(self, s: str, **extra: Any) -> dict[str, Any]:
        return {"result": {"content": [{"type": "text", "text": s}], **extra}}

    def ask_client(self, method: str, params: dict[str, Any] | None, timeout: float = 60.0) -> dict[str, Any]:
        with self.state_lock:
            self.next_out_id += 1
            oid = f"fault-{self.next_out_id}"
            waiter: tuple[threading.Event, list[Any]] = (threading.Event(), [])
            self.pending_out[oid] = waiter
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": oid, "method": method}
        if params is not None:
            frame["params"] = params
        self.send(frame)
        if not waiter[0].wait(timeout):
            return {"timeout": True}
        return waiter[1][0]

    def run_tool(
        self, rid: Any, name: str, args: dict[str, Any], token: Any, cancel: threading.Event
    ) -> dict[str, Any] | None:
        """Run one tool. None means: send nothing (hung, crashed or cancelled)."""
        if name == "echo" or name in self.extra_tools:
            nonce = str(args.get("nonce", ""))
            pad = self.o["result-bytes"]
            text = nonce.ljust(pad, ".") if pad else nonce
            return self.text(text, structuredContent={"nonce": nonce, "server": self.o["name"]})
        if name == "sleep":
            if cancel.wait(float(args["seconds"])):
                self.record("stopped_by_cancel", id=rid)
                if not self.o["late-after-cancel"]:
                    return None
            return self.text(f"slept {args['seconds']} {args.get('nonce', '')}".strip())
        if name == "crash":
            code = int(args.get("code", 3))
            if args.get("partial"):
                with self.out_lock:
                    self.write_raw(b'{"jsonrpc":"2.0","id":' + json.dumps(rid).encode() + b',"result":{"content":[{"ty')
            self.record("exit", code=code, why="crash tool")
            os._exit(code)
        if name == "big":
            n = int(args["bytes"])
            unit = "abcdefghijklmnopqrstuvwxyz012345"
            return self.text((unit * (n // len(unit) + 1))[:n])
        if name == "records":
            recs = [{"id": i, "name": f"rec-{i}", "tags": ["x", "y"], "nested": {"v": i}} for i in range(int(args["count"]))]
            return self.text(json.dumps(recs))
        if name == "flood":
            count = int(args["count"])
            if token is not None:
                for i in range(count):
                    self.notify("notifications/progress", {"progressToken": token, "progress": i + 1, "total": count})
            return self.text(str(args.get("nonce", count)))
        if name == "garbage":
            with self.out_lock:
                self.write_raw(self.junk(int(args.get("lines", len(GARBAGE)))))
            return self.text("after garbage")
        if name == "giant":
            with self.out_lock:
                self.write_raw(b"g" * int(args["bytes"]) + b"\n")
            return self.text("after giant")
        if name == "stderr":
            self.stderr_noise(int(args["bytes"]))
            return self.text("after stderr")
        if name == "duplicate":
            out = self.text(str(args["nonce"]))
            self.result(rid, out["result"])
            return out
        if name == "stray":
            for ghost in (424242, "stray-" + str(rid), rid if isinstance(rid, str) else f"{rid}-x"):
                self.send({"jsonrpc": "2.0", "id": ghost, "result": {"content": [{"type": "text", "text": "stray"}]}})
            return self.text(str(args["nonce"]))
        if name == "close_stdout":
            with self.out_lock:
                self.close_stdout()
            return None
        if name == "close_stdin":
            self.stdin_closed_on_purpose = True
            self.record("stdin_closed")
            try:
                os.close(0)
            except OSError:
                pass
            return self.text("stdin closed")
        if name == "env":
            return self.text(json.dumps(dict(os.environ)))
        if name == "ask":
            reply = self.ask_client(str(args["method"]), args.get("params"))
            return self.text(json.dumps(reply))
        if name == "notify":
            self.notify(str(args["method"]), args.get("params"))
            return self.text("sent")
        if name == "change_tools":
            self.extra_tools = [str(n) for n in args.get("names", [])]
            self.notify("notifications/tools/list_changed")
            return self.text(json.dumps(self.extra_tools))
        if name == "error":
            error = {"code": int(args.get("code", -32000)), "message": str(args.get("message", "tool failed"))}
            return {"error": {**error, "data": args["data"]} if "data" in args else error}
        if name == "tool_error":
            return self.text(str(args.get("message", "tool failed")), isError=True)
        if name == "pid":
            return self.text(str(os.getpid()))
        if name == "spew":
            sent = self.spew(str(args["method"]), int(args["count"]), int(args.get("bytes", 0)),
                             float(args.get("per_second", 0)), token)
            return self.text(str(args.get("nonce", sent)))
        return {"error": {"code": -32602, "message": f"Unknown tool: {name}"}}


def parse_argv(argv: list[str]) -> dict[str, Any]:
    opts = {k: v[0] for k, v in OPTIONS.items()}
    for word in argv:
        key, eq, value = word.lstrip("-").partition("=")
        if key == "help":
            for k, (default, _, text) in OPTIONS.items():
                sys.stderr.write(f"  {k:22} {text} (default {default!r})\n")
            sys.exit(0)
        if key not in OPTIONS:
            sys.stderr.write(f"fault_server: unknown option {key!r}; try --help\n")
            sys.exit(2)
        default, parse, _ = OPTIONS[key]
        opts[key] = parse(value) if eq else (True if isinstance(default, bool) else parse("1"))
    return opts


def main(argv: list[str]) -> None:
    opts = parse_argv(argv)
    if opts["ignore-sigterm"]:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGINT, lambda *_: os._exit(130))
    server = FaultServer(opts, argv)
    server.record("start", argv=argv, name=opts["name"])
    server.serve()


if __name__ == "__main__":
    main(sys.argv[1:])
