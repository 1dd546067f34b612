"""URL upstreams end to end: the sidecar (stdio front) against scriptable Streamable
HTTP upstreams served in the test's event loop.

Covers the session and version headers, the 2026-07-28 probe and the stateless
envelope, errors the model can act on (with no address and no header value), one
failed POST failing one call only, refusals naming header names, same-origin-only
redirects, the 32 MB list cap, address and header checks, and proxies.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import anyio.abc
import pytest
from aiohttp import web
from fake_upstream import FakeUpstream, serve_fake
from http_support import free_port

pytestmark = pytest.mark.timeout(120)

CANARY = "hdr-canary-7f3a9e21c0d4"


def url_entry(url: str, **extra: Any) -> dict[str, Any]:
    return {"type": "http", "url": url, "headers": {"X-Api-Key": CANARY}, "startTimeoutSeconds": 5, **extra}


async def wait_in_log(sc: Any, words: str, timeout: float = 15.0) -> str:
    try:
        with anyio.fail_after(timeout):
            while words not in sc.stderr:
                await anyio.sleep(0.05)
    except TimeoutError:
        raise AssertionError(f"{words!r} not logged within {timeout}s; log: {sc.stderr[-3000:]}") from None
    return sc.stderr


def error_text(frame: dict[str, Any]) -> str:
    if "error" in frame:
        return str(frame["error"].get("message"))
    return json.dumps(frame["result"])


async def started(raw_sidecar: Any, write_config: Any, servers: dict[str, Any], **env: str) -> Any:
    config = write_config(servers)
    return raw_sidecar(config, "--log-level", "DEBUG", env=env or None)


async def test_a_url_upstream_keeps_its_session_and_version_headers(raw_sidecar, write_config):
    async with serve_fake(FakeUpstream()) as fake:
        async with await started(raw_sidecar, write_config, {"web": url_entry(fake.url)}) as sc:
            await sc.initialize()
            await sc.wait_for_tools(["web__echo"])
            answer = await sc.call("web__echo", {"text": "hi"})
            assert "echo: hi" in json.dumps(answer["result"])
    methods = [r.body.get("method") for r in fake.requests if isinstance(r.body, dict)]
    assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]
    call = next(r for r in fake.requests if isinstance(r.body, dict) and r.body.get("method") == "tools/call")
    assert call.headers["Mcp-Session-Id"] == fake.session
    assert call.headers["MCP-Protocol-Version"] == "2025-11-25"
    assert call.headers["X-Api-Key"] == CANARY
    assert any(r.method == "DELETE" and r.headers.get("Mcp-Session-Id") == fake.session for r in fake.requests)


async def test_a_2026_07_28_only_upstream_is_spoken_to_statelessly(raw_sidecar, write_config):
    async with serve_fake(FakeUpstream(modern_only=True)) as fake:
        async with await started(raw_sidecar, write_config, {"new": url_entry(fake.url)}) as sc:
            await sc.initialize()
            await sc.wait_for_tools(["new__echo"])
            answer = await sc.call("new__echo", {"text": "stateless"})
            assert "echo: stateless" in json.dumps(answer["result"]), answer
    call = next(r for r in fake.requests if isinstance(r.body, dict) and r.body.get("method") == "tools/call")
    assert call.headers["Mcp-Method"] == "tools/call" and call.headers["Mcp-Name"] == "echo"
    assert call.headers["MCP-Protocol-Version"] == "2026-07-28"
    assert call.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert "Mcp-Session-Id" not in call.headers


async def test_an_upstream_error_reaches_the_model_without_address_or_header_value(raw_sidecar, write_config):
    async with serve_fake(FakeUpstream(error_text=f"bad argument near {CANARY}")) as fake:
        async with await started(raw_sidecar, write_config, {"web": url_entry(fake.url)}) as sc:
            await sc.initialize()
            await sc.wait_for_tools(["web__fail"])
            answer = await sc.call("web__fail", {})
        host_port = fake.url.split("//")[1].split("/")[0]
    words = error_text(answer)
    assert "bad argument" in words and answer["error"]["code"] == -32042
    assert CANARY not in words and host_port not in words and "127.0.0.1" not in words


@pytest.mark.parametrize("status,expected", [(502, "HTTP 502"), (401, "send the message again")])
async def test_a_failed_post_fails_one_call_and_the_connection_lives(raw_sidecar, write_config, status, expected):
    async with serve_fake(FakeUpstream(status_for={"boom": status})) as fake:
        async with await started(raw_sidecar, write_config, {"web": url_entry(fake.url)}) as sc:
            await sc.initialize()
            await sc.wait_for_tools(["web__boom"])
            failed = await sc.call("web__boom", {})
            assert expected in error_text(failed), failed
            if status == 401:
                assert "X-Api-Key" in error_text(failed) and CANARY not in error_text(failed)
            after = await sc.call("web__echo", {"text": "still here"})
            assert "echo: still here" in json.dumps(after["result"])


async def test_a_refused_start_names_the_header_names_never_values(raw_sidecar, write_config):
    async with serve_fake(FakeUpstream(refuse_all=403)) as fake:
        async with await started(raw_sidecar, write_config, {"web": url_entry(fake.url)}) as sc:
            await sc.initialize()
            log = await wait_in_log(sc, "HTTP 403")
    assert "check X-Api-Key" in log and CANARY not in log


async def test_a_redirect_to_another_origin_is_not_followed(raw_sidecar, write_config):
    async with serve_fake(FakeUpstream()) as elsewhere, serve_fake(FakeUpstream()) as first:
        first.redirect_to = elsewhere.url
        async with await started(raw_sidecar, write_config, {"web": url_entry(first.url)}) as sc:
            await sc.initialize()
            log = await wait_in_log(sc, "redirected to another address")
    assert first.requests and elsewhere.requests == [], "the other origin must see no request at all"
    assert CANARY not in log


async def test_same_origin_redirects_keep_the_method_or_are_refused(raw_sidecar, write_config):
    async with serve_fake(FakeUpstream()) as fake:
        fake.redirect_to = fake.url.replace("/mcp", "/moved")
        async with await started(raw_sidecar, write_config, {"web": url_entry(fake.url)}) as sc:
            await sc.initialize()
            await sc.wait_for_tools(["web__echo"])
        assert any(r.path == "/moved" and r.headers.get("X-Api-Key") == CANARY for r in fake.requests)
    async with serve_fake(FakeUpstream(redirect_status=302)) as fake:
        fake.redirect_to = fake.url.replace("/mcp", "/moved")
        async with await started(raw_sidecar, write_config, {"web": url_entry(fake.url)}) as sc:
            await sc.initialize()
            await wait_in_log(sc, "would change the method")
        assert not any(r.path == "/moved" for r in fake.requests)


async def test_a_list_over_32_mb_is_refused_before_it_is_read(raw_sidecar, write_config):
    async with serve_fake(FakeUpstream(list_length=40 * 1024 * 1024)) as fake:
        async with await started(raw_sidecar, write_config, {"web": url_entry(fake.url)}) as sc:
            await sc.initialize()
            await wait_in_log(sc, f"over the {32 * 1024 * 1024}-byte body cap")


@pytest.mark.parametrize("entry,words", [
    ({"type": "http", "url": "http://user:pw@127.0.0.1:9/mcp"}, ("carries credentials", "user name or password")),
    ({"type": "http", "url": "ftp://127.0.0.1/mcp"}, ("must start with http://", "full http:// or https://")),
    ({"type": "sse", "url": "file:///etc/passwd"}, ("must start with http://", "full http:// or https://")),
    ({"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Bad Name": "x"}},
     ("not a valid HTTP field name", "not a valid HTTP header name")),
    ({"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "a\r\nInjected: 1"}},
     ("single line",)),
])
async def test_bad_addresses_and_headers_are_refused(raw_sidecar, write_config, entry, words):
    """Refused by the config check or, behind it, by the channel; never dialled either way."""
    async with await started(raw_sidecar, write_config, {"bad": entry, "ok": url_entry("http://127.0.0.1:9/x")}) as sc:
        await sc.initialize()
        await wait_in_log(sc, "upstream 'ok'")
        with anyio.fail_after(15):
            while not any(w in sc.stderr for w in words):
                await anyio.sleep(0.05)
        log = sc.stderr
    assert "pw@" not in log and "Injected" not in log


async def test_http_goes_through_the_proxy_in_absolute_form_and_loopback_never(raw_sidecar, write_config):
    async with serve_fake(FakeUpstream()) as proxy, serve_fake(FakeUpstream()) as local:
        servers = {"far": url_entry("http://upstream.invalid/mcp"), "near": url_entry(local.url)}
        async with await started(raw_sidecar, write_config, servers, HTTP_PROXY=proxy.url.rsplit("/", 1)[0]) as sc:
            await sc.initialize()
            await sc.wait_for_tools(["far__echo", "near__echo"])
    assert proxy.requests and all(r.headers.get("Host") == "upstream.invalid" for r in proxy.requests)
    assert local.requests, "loopback is reached directly"


class ConnectRecorder:
    """A proxy that writes down each request line and refuses it."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.url = ""

    async def serve(self, stream: Any) -> None:
        async with stream:
            head = b""
            with anyio.move_on_after(5):
                while b"\r\n\r\n" not in head:
                    head += await stream.receive()
            self.lines.append(head.split(b"\r\n", 1)[0].decode(errors="replace"))
            await stream.send(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


async def test_https_goes_through_connect_and_no_proxy_is_honoured(raw_sidecar, write_config):
    recorder = ConnectRecorder()
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with anyio.create_task_group() as group:
        group.start_soon(listener.serve, recorder.serve)
        servers = {"tls": url_entry("https://secure.invalid/mcp"), "skip": url_entry("https://skipped.invalid/mcp")}
        env = {"HTTPS_PROXY": f"http://127.0.0.1:{port}", "NO_PROXY": "skipped.invalid"}
        async with await started(raw_sidecar, write_config, servers, **env) as sc:
            await sc.initialize()
            await wait_in_log(sc, "upstream 'skip'")
            await wait_in_log(sc, "upstream 'tls'")
        group.cancel_scope.cancel()
    assert recorder.lines and all(line.startswith("CONNECT secure.invalid:443 ") for line in recorder.lines)


@pytest.mark.parametrize("fillers,starts", [(45, True), (0, False)])
async def test_a_big_url_server_gets_longer_to_start(raw_sidecar, write_config, fillers, starts):
    """One-second start budget; the list's second page comes after two seconds. A server
    found big on its first page (more than 40 tools) gets 30 s; a small one does not."""
    fake = FakeUpstream(filler_tools=fillers, page_size=max(fillers, 2), page_delay=2.0)
    async with serve_fake(fake) as web:
        async with await started(raw_sidecar, write_config, {"web": url_entry(web.url, startTimeoutSeconds=1)}) as sc:
            await sc.initialize()
            if starts:
                await sc.wait_for_tools(["web__boom"], timeout=20)
            else:
                await wait_in_log(sc, "did not answer within 1s")


async def test_a_legacy_sse_message_address_on_another_origin_is_refused(raw_sidecar, write_config):
    other, done = FakeUpstream(), anyio.Event()
    async with serve_fake(other) as elsewhere:
        async def stream(request: web.Request) -> web.StreamResponse:
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            await response.write(f"event: endpoint\ndata: {elsewhere.url}\n\n".encode())
            with anyio.move_on_after(30):
                await done.wait()
            return response

        app = web.Application()
        app.router.add_get("/sse", stream)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        try:
            entry = {"type": "sse", "url": f"http://127.0.0.1:{port}/sse", "headers": {"X-Api-Key": CANARY}}
            async with await started(raw_sidecar, write_config, {"old": entry}) as sc:
                await sc.initialize()
                await wait_in_log(sc, "message address on another origin")
        finally:
            done.set()
            await runner.cleanup()
    assert other.requests == []
