"""The sidecar in front of real servers, driven by real clients.

Upstreams: `@modelcontextprotocol/server-everything` (Node, from tests/npm) under the alias
`everything`, and tests/upstreams/sdk_server.py (the `mcp` SDK's server) under `sdk`.
Clients: the MCP Inspector CLI (`--cli`), and the `mcp` SDK's ClientSession.

The contract these tests hold the sidecar to (SPEC §3, issue 2):
* tools of a face with several upstreams are named `<alias>__<tool>`; prompts likewise;
  resources keep their URIs; each is routed back to the upstream that owns it;
* `initialize` is answered at once; upstreams that are ready later are announced with
  `notifications/tools/list_changed`, so a test that needs an upstream's tools waits
  (bounded) for the list to hold them, re-listing on each announcement;
* requests an upstream sends to the client (sampling, elicitation, roots) reach a client
  that declared the capability, and its answer goes back to that upstream.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

pytestmark = [
    pytest.mark.e2e,
    # sampling, roots, logging and resources/subscribe are marked deprecated for 2026-07-28 by the SDK
    pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning"),
]

EV = "everything"
SDK = "sdk"
SDK_NAME = "sdk-one"  # the sdk_server's own name: it appears in its answers and resource URIs
NAME_RULE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

EV_CORE = {f"{EV}__echo", f"{EV}__get-sum", f"{EV}__trigger-long-running-operation"}
SDK_CORE = {f"{SDK}__echo", f"{SDK}__add", f"{SDK}__slow", f"{SDK}__sample", f"{SDK}__set_tools"}


@pytest.fixture
def sdk_events(tmp_path: Path) -> Path:
    return tmp_path / "sdk-events.jsonl"


@pytest.fixture
def two_servers(npm, sdk_server_entry, write_config, sdk_events) -> Path:
    """A config with server-everything and one sdk_server.

    The Inspector CLI lists tools once and never re-lists on list_changed, so the face
    holds its first listing until both upstreams have started (`listWaitSeconds`).
    """
    return write_config({EV: npm.everything_entry(), SDK: {**sdk_server_entry(SDK_NAME, "", sdk_events), "pinning": "warn"}},
                        face={"listWaitSeconds": 30})


def texts(result: Any) -> str:
    """All text blocks of a CallToolResult, joined."""
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def nonce() -> str:
    return uuid.uuid4().hex


# Both Inspector generations: v1 is built on the TypeScript SDK 1.x, v2 on 2.x.
inspectors = pytest.mark.parametrize("cli", ["v1", "v2"])


# ---- the MCP Inspector CLI -----------------------------------------------------------------------


@inspectors
async def test_inspector_lists_both_servers_under_their_prefixes(npm, two_servers, sidecar_argv, cli):
    run = await npm.inspector(sidecar_argv(two_servers), "tools/list", cli=cli)
    assert run.returncode == 0, run.stderr[-2000:]
    tools = run.json["tools"]
    names = [t["name"] for t in tools]
    assert EV_CORE <= set(names), f"server-everything's tools missing from the first listing: {names}"
    assert SDK_CORE <= set(names), f"sdk_server's tools missing from the first listing: {names}"
    assert len(names) == len(set(names)), "a tool is listed twice"
    assert names[0] == "query_result"  # the sidecar's own tool, listed first
    for name in names[1:]:
        assert name.startswith((f"{EV}__", f"{SDK}__")), f"{name} lacks its upstream's prefix"
        assert NAME_RULE.match(name), f"{name} breaks ^[a-zA-Z0-9_-]{{1,64}}$"
    by_name = {t["name"]: t for t in tools}
    # Descriptions and schemas pass through unchanged.
    assert by_name[f"{EV}__echo"]["description"] == "Echoes back the input string"
    assert by_name[f"{EV}__get-sum"]["inputSchema"]["required"] == ["a", "b"]
    assert by_name[f"{SDK}__echo"]["description"] == f"Echo the nonce back (server {SDK_NAME})."


@inspectors
async def test_inspector_calls_one_tool_of_each_server(npm, two_servers, sidecar_argv, cli):
    target = sidecar_argv(two_servers)
    run = await npm.inspector(target, "tools/call", tool_name=f"{EV}__echo", tool_args={"message": "hello sidecar"},
                              cli=cli)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.json["content"][0]["text"] == "Echo: hello sidecar"
    assert not run.json.get("isError")

    run = await npm.inspector(target, "tools/call", tool_name=f"{SDK}__add", tool_args={"a": 40, "b": 2}, cli=cli)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.json["content"][0]["text"] == "42"

    token = nonce()
    run = await npm.inspector(target, "tools/call", tool_name=f"{SDK}__echo", tool_args={"nonce": token}, cli=cli)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.json["structuredContent"] == {"nonce": token, "server": SDK_NAME, "text": ""}


@inspectors
async def test_inspector_resources_and_prompts(npm, two_servers, sidecar_argv, cli):
    target = sidecar_argv(two_servers)
    run = await npm.inspector(target, "resources/read", extra=["--uri", f"sdk://{SDK_NAME}/static/hello"], cli=cli)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.json["contents"][0]["text"] == f"hello from {SDK_NAME}"
    run = await npm.inspector(target, "prompts/get", extra=["--prompt-name", f"{SDK}__greet",
                                                            "--prompt-args", "name=Inspector"], cli=cli)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.json["messages"][0]["content"]["text"] == f"Hello Inspector, from {SDK_NAME}."


# ---- the mcp SDK client: listing and calling --------------------------------------------------


async def test_sdk_client_lists_and_calls_both_servers(two_servers, sidecar_client):
    async with sidecar_client(two_servers) as c:
        assert c.init.capabilities.tools is not None
        tools = await c.wait_for_tools(EV_CORE | SDK_CORE)
        names = [t.name for t in tools]
        assert len(names) == len(set(names))
        assert names == [t.name for t in await c.list_all_tools()], "tool order is not deterministic"

        res = await c.session.call_tool(f"{EV}__get-sum", {"a": 1, "b": 2})
        assert texts(res) == "The sum of 1 and 2 is 3."
        token = nonce()
        res = await c.session.call_tool(f"{SDK}__echo", {"nonce": token})
        assert texts(res) == token
        assert res.structured_content == {"nonce": token, "server": SDK_NAME, "text": ""}

        # An error result and a JSON-RPC error from the upstream both reach the client.
        res = await c.session.call_tool(f"{SDK}__fail", {"message": "bad input, fix it"})
        assert res.is_error and "bad input, fix it" in texts(res)
        try:
            res = await c.session.call_tool(f"{SDK}__fail", {"message": "rpc says no", "rpc": True})
        except MCPError as exc:
            assert "rpc says no" in str(exc)
        else:
            assert res.is_error and "rpc says no" in texts(res)


async def test_schemas_pass_through_unchanged(two_servers, sidecar_client, sdk_server_path, tmp_path):
    """What the sidecar lists for sdk_server equals what sdk_server lists itself, renamed."""
    import sys

    from mcp import ClientSession, StdioServerParameters, stdio_client

    direct = StdioServerParameters(command=sys.executable, args=[str(sdk_server_path), "--name", SDK_NAME])
    async with stdio_client(direct) as (r, w), ClientSession(r, w) as s:
        with anyio.fail_after(30):
            await s.initialize()
            own = {t.name: t for t in (await s.list_tools()).tools}
    async with sidecar_client(two_servers) as c:
        proxied = {t.name: t for t in await c.wait_for_tools(SDK_CORE)}
    for name, tool in own.items():
        seen = proxied[f"{SDK}__{name}"]
        assert seen.description == tool.description
        assert seen.input_schema == tool.input_schema
        assert seen.output_schema == tool.output_schema


async def test_concurrent_calls_are_not_crossed(two_servers, sidecar_client):
    async with sidecar_client(two_servers) as c:
        await c.wait_for_tools(EV_CORE | SDK_CORE)
        results: dict[str, str] = {}

        async def one(i: int) -> None:
            token = f"{i}-{nonce()}"
            if i % 2:
                res = await c.session.call_tool(f"{EV}__echo", {"message": token})
                results[token] = texts(res).removeprefix("Echo: ")
            else:
                res = await c.session.call_tool(f"{SDK}__echo", {"nonce": token})
                results[token] = texts(res)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for i in range(40):
                    tg.start_soon(one, i)
        assert len(results) == 40
        assert all(k == v for k, v in results.items()), {k: v for k, v in results.items() if k != v}


async def test_two_instances_of_one_server_stay_apart(sdk_server_entry, write_config, sidecar_client):
    cfg = write_config({"alpha": sdk_server_entry("alpha"), "beta": sdk_server_entry("beta")})
    async with sidecar_client(cfg) as c:
        await c.wait_for_tools({"alpha__echo", "beta__echo"})
        a = await c.session.call_tool("alpha__echo", {"nonce": "x"})
        b = await c.session.call_tool("beta__echo", {"nonce": "x"})
        assert a.structured_content["server"] == "alpha"
        assert b.structured_content["server"] == "beta"
        uris = {str(r.uri) for r in (await c.session.list_resources()).resources}
        assert {"sdk://alpha/static/hello", "sdk://beta/static/hello"} <= uris
        assert (await c.session.read_resource("sdk://beta/static/hello")).contents[0].text == "hello from beta"


# ---- requests from upstreams to the client ---------------------------------------------------


async def test_sampling_from_server_everything_reaches_the_client(two_servers, sidecar_client):
    answer = f"sampled-{nonce()}"
    prompt = f"prompt-{nonce()}"
    seen: list[types.CreateMessageRequestParams] = []

    async def sampling(ctx, params: types.CreateMessageRequestParams):
        seen.append(params)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=answer), model="fake-model"
        )

    async with sidecar_client(two_servers, sampling=sampling) as c:
        tool = f"{EV}__trigger-sampling-request"
        await c.wait_for_tools({tool})
        with anyio.fail_after(30):
            res = await c.session.call_tool(tool, {"prompt": prompt, "maxTokens": 20})
    assert len(seen) == 1
    assert prompt in seen[0].messages[0].content.text
    assert seen[0].max_tokens == 20
    assert answer in texts(res) and "fake-model" in texts(res)


async def test_elicitation_from_server_everything_reaches_the_client(two_servers, sidecar_client):
    who = f"Ada {nonce()[:8]}"
    seen: list[Any] = []

    async def elicitation(ctx, params):
        seen.append(params)
        return types.ElicitResult(action="accept", content={"name": who, "check": True, "integer": 7})

    async with sidecar_client(two_servers, elicitation=elicitation) as c:
        tool = f"{EV}__trigger-elicitation-request"
        await c.wait_for_tools({tool})
        with anyio.fail_after(30):
            res = await c.session.call_tool(tool, {})
    assert len(seen) == 1
    assert "name" in seen[0].requested_schema["properties"]
    out = texts(res)
    assert f"Name: {who}" in out and "Favorite Integer: 7" in out


async def test_elicitation_decline_comes_back(two_servers, sidecar_client):
    async def elicitation(ctx, params):
        return types.ElicitResult(action="decline")

    async with sidecar_client(two_servers, elicitation=elicitation) as c:
        tool = f"{EV}__trigger-elicitation-request"
        await c.wait_for_tools({tool})
        with anyio.fail_after(30):
            res = await c.session.call_tool(tool, {})
    assert "declined" in texts(res)


async def test_sampling_elicitation_roots_from_the_sdk_server(two_servers, sidecar_client):
    async def sampling(ctx, params):
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=f"re: {params.messages[0].content.text}"),
            model="m1",
        )

    async def elicitation(ctx, params):
        return types.ElicitResult(action="accept", content={"name": "Grace"})

    async def roots(ctx):
        return types.ListRootsResult(roots=[types.Root(uri="file:///work/project", name="project")])

    async with sidecar_client(two_servers, sampling=sampling, elicitation=elicitation, roots=roots) as c:
        await c.wait_for_tools(SDK_CORE)
        with anyio.fail_after(30):
            res = await c.session.call_tool(f"{SDK}__sample", {"prompt": "ping?"})
            assert texts(res) == "sampled[m1]: re: ping?"
            res = await c.session.call_tool(f"{SDK}__elicit", {"message": "name please"})
            assert json.loads(texts(res)) == {"action": "accept", "content": {"name": "Grace"}}
            res = await c.session.call_tool(f"{SDK}__roots", {})
            assert json.loads(texts(res)) == ["file:///work/project"]


async def test_sampling_without_the_capability_fails_clearly(two_servers, sidecar_client):
    """A client that declared no sampling: the upstream gets an error, the call ends (bounded)."""
    async with sidecar_client(two_servers) as c:
        await c.wait_for_tools(SDK_CORE)
        with anyio.fail_after(15):
            try:
                res = await c.session.call_tool(f"{SDK}__sample", {"prompt": "anyone?"})
            except MCPError:
                return
        assert res.is_error, f"sampling without the capability should fail, got {texts(res)!r}"


# ---- notifications both ways ---------------------------------------------------------------------


async def test_progress_and_log_messages_are_relayed(two_servers, sidecar_client):
    logs: list[types.LoggingMessageNotificationParams] = []

    async def logging(params):
        logs.append(params)

    async with sidecar_client(two_servers, logging=logging) as c:
        await c.wait_for_tools(EV_CORE | SDK_CORE)
        progress: list[tuple[float, float | None]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, total))

        with anyio.fail_after(30):
            res = await c.session.call_tool(f"{SDK}__slow", {"seconds": 0.5}, progress_callback=on_progress)
        assert texts(res).startswith("slept")
        assert progress and progress[-1] == (5, 5), progress
        assert [p for p, _ in progress] == sorted(p for p, _ in progress)

        progress.clear()
        with anyio.fail_after(30):
            res = await c.session.call_tool(
                f"{EV}__trigger-long-running-operation", {"duration": 0.6, "steps": 3}, progress_callback=on_progress
            )
        assert "Long running operation completed" in texts(res)
        assert [p for p, _ in progress] == [1, 2, 3]

        text = f"log-{nonce()}"
        await c.session.call_tool(f"{SDK}__log", {"message": text, "level": "warning"})
        await c.wait_for_notification(types.LoggingMessageNotification, where=lambda n: n.params.data == text)
        assert any(entry.data == text and entry.level == "warning" for entry in logs)


async def test_cancellation_reaches_the_upstream(two_servers, sidecar_client, sdk_events, wait_event):
    async with sidecar_client(two_servers) as c:
        await c.wait_for_tools(SDK_CORE)
        token = nonce()
        with anyio.move_on_after(1.0):  # the client gives up and sends notifications/cancelled
            await c.session.call_tool(f"{SDK}__slow", {"seconds": 60, "nonce": token})
        await wait_event(sdk_events, lambda e: e["event"] == "cancelled" and e.get("nonce") == token,
                         what="the upstream seeing the cancellation")
        # The session is still good afterwards.
        assert texts(await c.session.call_tool(f"{SDK}__add", {"a": 1, "b": 1})) == "2"


async def test_upstream_tool_list_change_reaches_the_client(two_servers, sidecar_client):
    async with sidecar_client(two_servers) as c:
        await c.wait_for_tools(SDK_CORE)
        before = c.tools_changed
        await c.session.call_tool(f"{SDK}__set_tools", {"names": ["late_one"]})
        await c.wait_for_tools({f"{SDK}__late_one"})
        assert c.tools_changed > before
        token = nonce()
        assert texts(await c.session.call_tool(f"{SDK}__late_one", {"nonce": token})) == token


# ---- resources, prompts, completion ---------------------------------------------------------------


async def test_resources_are_listed_and_read_from_their_owner(two_servers, sidecar_client):
    async with sidecar_client(two_servers) as c:
        await c.wait_for_tools(EV_CORE | SDK_CORE)
        resources = {str(r.uri): r for r in (await c.session.list_resources()).resources}
        own = f"sdk://{SDK_NAME}/static/hello"
        assert own in resources
        ev_docs = [u for u in resources if u.startswith("demo://resource/static/document/")]
        assert ev_docs, f"server-everything's static resources are missing: {sorted(resources)}"

        assert (await c.session.read_resource(own)).contents[0].text == f"hello from {SDK_NAME}"
        doc = await c.session.read_resource(ev_docs[0])
        assert doc.contents and str(doc.contents[0].uri) == ev_docs[0]

        templates = {t.uri_template for t in (await c.session.list_resource_templates()).resource_templates}
        assert f"sdk://{SDK_NAME}/items/{{id}}" in templates
        assert "demo://resource/dynamic/text/{resourceId}" in templates
        item = await c.session.read_resource(f"sdk://{SDK_NAME}/items/9")
        assert item.contents[0].text == f"item 9 from {SDK_NAME}"
        dyn = await c.session.read_resource("demo://resource/dynamic/text/3")
        assert dyn.contents and "3" in dyn.contents[0].text


async def test_prompts_are_listed_and_fetched_from_their_owner(two_servers, sidecar_client):
    async with sidecar_client(two_servers) as c:
        await c.wait_for_tools(EV_CORE | SDK_CORE)
        prompts = {p.name for p in (await c.session.list_prompts()).prompts}
        assert {f"{SDK}__greet", f"{SDK}__plain", f"{EV}__simple-prompt"} <= prompts, sorted(prompts)
        got = await c.session.get_prompt(f"{SDK}__greet", {"name": "Lin"})
        assert got.messages[0].content.text == f"Hello Lin, from {SDK_NAME}."
        got = await c.session.get_prompt(f"{EV}__simple-prompt")
        assert got.messages[0].content.text == "This is a simple prompt without arguments."


async def test_completion_is_routed(two_servers, sidecar_client):
    async with sidecar_client(two_servers) as c:
        await c.wait_for_tools(SDK_CORE)
        done = await c.session.complete(types.PromptReference(type="ref/prompt", name=f"{SDK}__greet"),
                                        {"name": "name", "value": "al"})
        assert done.completion.values == ["alice", "alfred"]
        done = await c.session.complete(
            types.ResourceTemplateReference(type="ref/resource", uri=f"sdk://{SDK_NAME}/items/{{id}}"),
            {"name": "id", "value": "4"},
        )
        assert done.completion.values == ["42"]


async def test_subscriptions_and_resource_updates(two_servers, sidecar_client, sdk_events, wait_event):
    async with sidecar_client(two_servers) as c:
        await c.wait_for_tools(SDK_CORE)
        uri = f"sdk://{SDK_NAME}/static/hello"
        await c.session.subscribe_resource(uri)
        await wait_event(sdk_events, lambda e: e["event"] == "subscribe" and e["uri"] == uri,
                         what="the subscription reaching the upstream")
        await c.session.call_tool(f"{SDK}__touch", {"uri": uri})
        note = await c.wait_for_notification(types.ResourceUpdatedNotification)
        assert str(note.params.uri) == uri
        await c.session.unsubscribe_resource(uri)
        await wait_event(sdk_events, lambda e: e["event"] == "unsubscribe" and e["uri"] == uri,
                         what="the unsubscription reaching the upstream")


async def test_client_to_upstream_notifications_and_requests(two_servers, sidecar_client, sdk_events, wait_event):
    async def roots(ctx):
        return types.ListRootsResult(roots=[])

    async with sidecar_client(two_servers, roots=roots) as c:
        await c.wait_for_tools(SDK_CORE)
        await c.session.send_ping()
        await c.session.set_logging_level("error")
        await wait_event(sdk_events, lambda e: e["event"] == "set_level" and e["level"] == "error",
                         what="logging/setLevel reaching the upstream")
        await c.session.send_roots_list_changed()
        await wait_event(
            sdk_events,
            lambda e: e["event"] == "notification" and e["method"] == "notifications/roots/list_changed",
            what="notifications/roots/list_changed reaching the upstream",
        )
