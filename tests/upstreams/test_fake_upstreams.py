"""The test upstreams themselves behave as documented (no sidecar involved).

If one of these fails, every sidecar test built on that upstream is suspect.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytestmark = [pytest.mark.timeout(60), pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

CLIENT_CAPS = {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}


def fault_argv(fault_server_path: Path, *options: str) -> list[str]:
    return [sys.executable, str(fault_server_path), *options]


def text_of(response: dict) -> str:
    return response["result"]["content"][0]["text"]


# ---- fault_server ------------------------------------------------------------------------------


async def test_fault_normal_echo_and_concurrency(raw_process, fault_server_path):
    async with raw_process(fault_argv(fault_server_path, "name=plain")) as up:
        init = await up.initialize()
        assert init["serverInfo"]["name"] == "plain"
        names = {t["name"] for t in await up.list_tools()}
        assert {"echo", "sleep", "hang", "crash", "flood", "ask"} <= names
        # Slow calls first, fast ones after: answers come back out of order, each with its nonce.
        ids = {}
        for i in range(6):
            ids[f"n{i}"] = await up.send_request(
                "tools/call", {"name": "sleep", "arguments": {"seconds": 0.3 - i * 0.05, "nonce": f"n{i}"}}
            )
        for nonce, rid in ids.items():
            resp = await up.response(rid)
            assert text_of(resp).endswith(nonce)
        echo = await up.call("echo", {"nonce": "abc"})
        assert text_of(echo) == "abc"
        assert echo["result"]["structuredContent"] == {"nonce": "abc", "server": "plain"}
        assert up.bad_lines == []


async def test_fault_garbage_between_frames(raw_process, fault_server_path):
    async with raw_process(fault_argv(fault_server_path, "garbage=3", "garbage-on-start=4")) as up:
        await up.initialize()
        resp = await up.call("echo", {"nonce": "still-here"})
        assert text_of(resp) == "still-here"
        assert any(b"\xff" in line for line in up.bad_lines) or len(up.bad_lines) >= 5
        resp = await up.call("garbage", {"lines": 20})
        assert text_of(resp) == "after garbage"


async def test_fault_crash_after_n_calls(raw_process, fault_server_path):
    async with raw_process(fault_argv(fault_server_path, "crash-after=2")) as up:
        await up.initialize()
        assert text_of(await up.call("echo", {"nonce": "one"})) == "one"
        rid = await up.send_request("tools/call", {"name": "echo", "arguments": {"nonce": "two"}})
        assert await up.wait_exit() == 3
        assert up.responses_to(rid) == []


async def test_fault_crash_mid_call_partial_frame(raw_process, fault_server_path):
    async with raw_process(fault_argv(fault_server_path)) as up:
        await up.initialize()
        await up.send_request("tools/call", {"name": "crash", "arguments": {"code": 9, "partial": True}})
        assert await up.wait_exit() == 9
        with anyio.fail_after(5):
            while not up.stdout_closed:
                await up.changed()
        assert up.bad_lines and up.bad_lines[-1].startswith(b'{"jsonrpc":"2.0","id":')


async def test_fault_no_init_and_slow_init(raw_process, fault_server_path):
    async with raw_process(fault_argv(fault_server_path, "no-init")) as up:
        rid = await up.send_request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                                   "clientInfo": {"name": "t", "version": "0"}})
        with pytest.raises(AssertionError):  # the driver's bounded wait ran out
            await up.response(rid, timeout=0.5)
        assert (await up.request("ping"))["result"] == {}
    async with raw_process(fault_argv(fault_server_path, "init-delay=0.4")) as up:
        start = anyio.current_time()
        await up.initialize()
        assert anyio.current_time() - start >= 0.35


async def test_fault_duplicate_and_unknown_ids(raw_process, fault_server_path):
    async with raw_process(fault_argv(fault_server_path, "duplicate", "unknown-ids")) as up:
        await up.initialize()
        resp = await up.call("echo", {"nonce": "dup"})
        await up.wait_for(lambda f: f.get("id") == resp["id"] and f is not resp, what="the duplicate")
        assert len(up.responses_to(resp["id"])) == 2
        assert up.responses_to(987654321) and up.responses_to("ghost-id") and up.responses_to(123456789)
    async with raw_process(fault_argv(fault_server_path)) as up:
        await up.initialize()
        resp = await up.call("stray", {"nonce": "real"})
        assert text_of(resp) == "real"
        assert up.responses_to(424242)


async def test_fault_progress_flood_and_results(raw_process, fault_server_path):
    async with raw_process(fault_argv(fault_server_path, "progress-flood=50")) as up:
        await up.initialize()
        resp = await up.call("flood", {"count": 200, "nonce": "flooded"}, meta={"progressToken": "tok-1"})
        assert text_of(resp) == "flooded"
        progress = [n for n in up.notifications("notifications/progress") if n["params"]["progressToken"] == "tok-1"]
        assert len(progress) == 250
        big = await up.call("big", {"bytes": 1_000_000})
        assert len(text_of(big)) == 1_000_000
        recs = json.loads(text_of(await up.call("records", {"count": 100})))
        assert len(recs) == 100 and recs[99]["id"] == 99


async def test_fault_giant_line_and_stderr(raw_process, fault_server_path):
    async with raw_process(fault_argv(fault_server_path, "stderr-flood=5000")) as up:
        await up.initialize()
        resp = await up.call("giant", {"bytes": 3_000_000})
        assert text_of(resp) == "after giant"
        assert any(len(line) == 4096 and line.startswith(b"gggg") for line in up.bad_lines)
        resp = await up.call("stderr", {"bytes": 200_000})
        assert text_of(resp) == "after stderr"
        assert up.stderr_total >= 200_000


async def test_fault_cancellation_is_seen_and_result_dropped(raw_process, fault_server_path, tmp_path, read_events):
    record = tmp_path / "fault.jsonl"
    async with raw_process(fault_argv(fault_server_path, f"record={record}")) as up:
        await up.initialize()
        rid = await up.send_request("tools/call", {"name": "sleep", "arguments": {"seconds": 30, "nonce": "c"}})
        await up.notify("notifications/cancelled", {"requestId": rid, "reason": "test"})
        await up.request("ping")  # frames are read in order: the cancel was handled before this ping
        assert any(e["event"] == "cancelled" and e["id"] == rid for e in read_events(record))
        assert text_of(await up.call("echo", {"nonce": "after"})) == "after"
        assert up.responses_to(rid) == []
    async with raw_process(fault_argv(fault_server_path, "late-after-cancel")) as up:
        await up.initialize()
        rid = await up.send_request("tools/call", {"name": "sleep", "arguments": {"seconds": 30}})
        await up.notify("notifications/cancelled", {"requestId": rid})
        resp = await up.response(rid)
        assert text_of(resp).startswith("slept")


async def test_fault_asks_the_client(raw_process, fault_server_path):
    async with raw_process(fault_argv(fault_server_path)) as up:
        await up.initialize(capabilities=CLIENT_CAPS)
        rid = await up.send_request("tools/call", {"name": "ask", "arguments": {
            "method": "sampling/createMessage",
            "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5},
        }})
        req = await up.peer_request("sampling/createMessage")
        await up.respond(req["id"], {"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"})
        reply = json.loads(text_of(await up.response(rid)))
        assert reply["result"]["content"]["text"] == "yo"


async def test_fault_tool_list_changes(raw_process, fault_server_path):
    async with raw_process(fault_argv(fault_server_path, "tools-change-after=1", "tool-pages=5", "bad-tools")) as up:
        await up.initialize()
        first = await up.list_tools()
        names = [t["name"] for t in first]
        assert "ctl_desc" in names and "query_result" in names and names.count("echo") == 2
        mark = len(up.frames)
        await up.call("echo", {"nonce": "x"})
        await up.notification("notifications/tools/list_changed", start=mark)
        assert "late_tool_1" in {t["name"] for t in await up.list_tools()}
        await up.call("change_tools", {"names": ["brand_new"]})
        assert "brand_new" in {t["name"] for t in await up.list_tools()}


async def test_fault_pipes_and_exit(raw_process, fault_server_path):
    async with raw_process(fault_argv(fault_server_path, "exit-on-start=5")) as up:
        assert await up.wait_exit() == 5
    async with raw_process(fault_argv(fault_server_path)) as up:
        await up.initialize()
        await up.send_request("tools/call", {"name": "close_stdout", "arguments": {}})
        with anyio.fail_after(5):
            while not up.stdout_closed:
                await up.changed()
        assert up.process.returncode is None  # still running with stdout closed
    async with raw_process(fault_argv(fault_server_path)) as up:
        up.shutdown_grace = 0.2  # it will not exit on its own
        await up.initialize()
        resp = await up.call("close_stdin", {})
        assert text_of(resp) == "stdin closed"
        with pytest.raises((anyio.BrokenResourceError, BrokenPipeError, OSError)):
            for _ in range(100):  # the pipe buffer may take a few writes before EPIPE shows
                await up.send_bytes(b"x" * 65536 + b"\n")
    async with raw_process(fault_argv(fault_server_path, "ignore-sigterm", "linger=60")) as up:
        up.shutdown_grace = 0.2
        await up.initialize()
    assert up.process.returncode is not None  # the driver escalated to SIGKILL


async def test_fault_env_is_what_it_was_given(raw_process, fault_server_path):
    async with raw_process(fault_argv(fault_server_path), env={"CANARY_VAR": "c4n4ry"}) as up:
        await up.initialize()
        env = json.loads(text_of(await up.call("env", {})))
        assert env["CANARY_VAR"] == "c4n4ry"


# ---- sdk_server ----------------------------------------------------------------------------------


async def test_sdk_server_directly(raw_process, sdk_server_path, tmp_path, read_events):
    events = tmp_path / "sdk.jsonl"
    argv = [sys.executable, str(sdk_server_path), "--name", "alpha", "--prefix", "a_", "--events", str(events),
            "--page-size", "5", "--filler-tools", "3"]
    async with raw_process(argv) as up:
        init = await up.initialize(capabilities=CLIENT_CAPS, timeout=30)
        assert init["serverInfo"]["name"] == "alpha"
        assert init["capabilities"]["tools"]["listChanged"] is True
        names = [t["name"] for t in await up.list_tools()]
        assert {"a_echo", "a_add", "a_slow", "a_sample", "a_elicit", "a_roots", "a_log", "a_set_tools"} <= set(names)
        assert "a_filler_002" in names
        resp = await up.call("a_echo", {"nonce": "N1"})
        assert resp["result"]["structuredContent"] == {"nonce": "N1", "server": "alpha", "text": ""}
        assert text_of(await up.call("a_add", {"a": 40, "b": 2})) == "42"

        # Sampling: the server asks us, we answer, the tool returns our text.
        rid = await up.send_request("tools/call", {"name": "a_sample", "arguments": {"prompt": "hello"}})
        req = await up.peer_request("sampling/createMessage")
        assert req["params"]["messages"][0]["content"]["text"] == "hello"
        await up.respond(req["id"], {"role": "assistant", "content": {"type": "text", "text": "canary"}, "model": "m"})
        assert text_of(await up.response(rid)) == "sampled[m]: canary"

        # Progress and cancellation.
        mark = len(up.frames)
        rid = await up.send_request("tools/call", {"name": "a_slow", "arguments": {"seconds": 30, "nonce": "zz"},
                                                   "_meta": {"progressToken": "p1"}})
        await up.notification("notifications/progress", start=mark, where=lambda n: n["params"]["progressToken"] == "p1")
        await up.notify("notifications/cancelled", {"requestId": rid})
        await up.request("ping")
        assert up.responses_to(rid) == [] or "error" in up.responses_to(rid)[0]

        # Tool list change.
        mark = len(up.frames)
        await up.call("a_set_tools", {"names": ["dyn"]})
        await up.notification("notifications/tools/list_changed", start=mark)
        assert "a_dyn" in {t["name"] for t in await up.list_tools()}
    kinds = [e["event"] for e in read_events(events)]
    assert "start" in kinds and "cancelled" in kinds


async def test_sdk_server_with_sdk_client(sdk_server_path):
    import mcp_types as types
    from mcp import ClientSession, StdioServerParameters, stdio_client

    async def sampling(ctx, params):
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="s!"), model="x")

    async def elicitation(ctx, params):
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def roots(ctx):
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])

    logs = []

    async def logging(params):
        logs.append(params)

    server = StdioServerParameters(command=sys.executable, args=[str(sdk_server_path), "--name", "beta"])
    async with stdio_client(server) as (r, w):
        async with ClientSession(r, w, sampling_callback=sampling, elicitation_callback=elicitation,
                                 list_roots_callback=roots, logging_callback=logging) as s:
            with anyio.fail_after(30):
                await s.initialize()
            assert (await s.call_tool("sample", {"prompt": "p"})).content[0].text == "sampled[x]: s!"
            assert json.loads((await s.call_tool("elicit", {})).content[0].text)["content"] == {"name": "Ada"}
            assert json.loads((await s.call_tool("roots", {})).content[0].text) == ["file:///work"]
            await s.call_tool("log", {"message": "hello", "level": "warning"})
            assert logs and logs[0].data == "hello"
            res = await s.read_resource("sdk://beta/items/5")
            assert res.contents[0].text == "item 5 from beta"
            prompt = await s.get_prompt("greet", {"name": "Bo"})
            assert prompt.messages[0].content.text == "Hello Bo, from beta."
            done = await s.complete(types.PromptReference(type="ref/prompt", name="greet"),
                                    {"name": "name", "value": "car"})
            assert done.completion.values == ["carol", "carlos"]


# ---- the Node reference programs --------------------------------------------------------------


@pytest.mark.parametrize("cli", ["v1", "v2"])
async def test_inspector_cli_against_server_everything(npm, cli, tmp_path):
    target = [npm.node, str(npm.everything_js), "stdio"]
    asks: dict[str, tuple[str, dict[str, Any]]] = {
        "list": ("tools/list", {}),
        "sum": ("tools/call", {"tool_name": "get-sum", "tool_args": {"a": 2, "b": 40}}),
        "echo": ("tools/call", {"tool_name": "echo", "tool_args": {"message": "hi there"}}),
        "read": ("resources/read", {"extra": ["--uri", "demo://resource/dynamic/text/1"]}),
        "prompt": ("prompts/get", {"extra": ["--prompt-name", "simple-prompt"]}),
    }
    runs: dict[str, Any] = {}
    limit = anyio.Semaphore(3)  # each run is two node processes, mostly start-up: a few at a time

    async def ask(key: str, method: str, options: dict[str, Any]) -> None:
        home = tmp_path / key  # v2 keeps a catalog file under HOME: one HOME a run
        home.mkdir()
        async with limit:
            runs[key] = await npm.inspector(target, method, cli=cli, **options,
                                            env={"HOME": str(home), "MCP_CATALOG_PATH": str(home / "mcp-catalog.json")})

    async with anyio.create_task_group() as group:
        for key, (method, options) in asks.items():
            group.start_soon(ask, key, method, options)
    names = {t["name"] for t in runs["list"].json["tools"]}
    assert {"echo", "get-sum", "trigger-long-running-operation"} <= names
    assert runs["sum"].json["content"][0]["text"] == "The sum of 2 and 40 is 42."
    assert runs["echo"].json["content"][0]["text"] == "Echo: hi there"
    assert runs["read"].json["contents"][0]["uri"] == "demo://resource/dynamic/text/1"
    assert runs["prompt"].json["messages"][0]["content"]["text"] == "This is a simple prompt without arguments."
