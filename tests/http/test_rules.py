"""The pure decisions under the HTTP code, without sockets: proxy choice, address and
redirect rules, event-stream decoding, admission rules and 2026-07-28 checks.
"""

from __future__ import annotations

import json

import msgspec
import pytest
from multidict import CIMultiDict, CIMultiDictProxy

from sidecar.errors import UpstreamUnavailable
from sidecar.front.http.admission import (
    GuardError,
    HostRule,
    bearer_matches,
    check_bind,
    load_token,
    split_bind,
)
from sidecar.front.http.stateless import answer_status, discover_result, judge, stamp_answer, stamp_for
from sidecar.upstream.eventstream import EventStreamDecoder
from sidecar.upstream.channel import Outgoing
from sidecar.upstream.outgoing import ModernEnvelope, header_value
from sidecar.upstream.proxying import choose_proxy, is_loopback_host
from sidecar.upstream.redirects import check_headers, check_url, next_hop
from sidecar.upstream.webclient import credential_parts
from sidecar.wire import Answer, Request, UpstreamFrame

PROXIES = {"HTTPS_PROXY": "http://proxy:3128", "http_proxy": "http://plain:8080"}


@pytest.mark.parametrize("url,environ,expected", [
    ("https://api.example.com/mcp", PROXIES, "http://proxy:3128"),
    ("http://api.example.com/mcp", PROXIES, "http://plain:8080"),
    ("https://api.example.com/mcp", {"HTTP_PROXY": "http://only:1"}, "http://only:1"),
    ("http://127.0.0.1:9/mcp", PROXIES, None),
    ("http://localhost/mcp", PROXIES, None),
    ("http://[::1]:80/mcp", PROXIES, None),
    ("http://127.8.9.10/mcp", PROXIES, None),
    ("https://api.example.com/mcp", {**PROXIES, "NO_PROXY": "example.com"}, None),
    ("https://api.example.com/mcp", {**PROXIES, "no_proxy": ".example.com"}, None),
    ("https://api.example.com/mcp", {**PROXIES, "NO_PROXY": "other.com,*.nope"}, "http://proxy:3128"),
    ("https://api.example.com:8443/mcp", {**PROXIES, "NO_PROXY": "api.example.com:8443"}, None),
    ("https://10.1.2.3/mcp", {**PROXIES, "NO_PROXY": "10.0.0.0/8"}, None),
    ("https://api.example.com/mcp", {**PROXIES, "NO_PROXY": "*"}, None),
    ("https://api.example.com/mcp", {}, None),
])
def test_proxy_choice(url, environ, expected):
    assert choose_proxy(url, environ) == expected


def test_loopback_names():
    assert all(is_loopback_host(h) for h in ("localhost", "127.0.0.1", "::1", "[::1]", "127.1.2.3", "a.localhost"))
    assert not any(is_loopback_host(h) for h in ("example.com", "10.0.0.1", "localhost.evil.com"))


@pytest.mark.parametrize("url", ["ftp://x/y", "file:///etc/passwd", "http://u:p@h/x", "http://u@h/x", "https://",
                                 "http://h:99999/x", "javascript:alert(1)"])
def test_refused_addresses(url):
    with pytest.raises(UpstreamUnavailable) as refused:
        check_url(url)
    assert "p@" not in refused.value.message


def test_header_rules():
    check_headers({"Authorization": "Bearer x", "X-Api-Key": "v"})
    for bad in ({"Bad Name": "v"}, {"": "v"}, {"X": "a\nb"}, {"X": "a\rb"}, {"Nul\0": "v"}):
        with pytest.raises(UpstreamUnavailable):
            check_headers(bad)


@pytest.mark.parametrize("method,status,location,followed", [
    ("POST", 307, "/other", "https://h.example/other"),
    ("POST", 308, "https://h.example/x", "https://h.example/x"),
    ("GET", 302, "/moved", "https://h.example/moved"),
    ("POST", 302, "/moved", None),
    ("POST", 303, "/moved", None),
    ("POST", 307, "https://evil.example/x", None),
    ("POST", 307, "http://h.example/x", None),  # a scheme change is another origin
    ("POST", 307, "https://h.example:444/x", None),
    ("POST", 307, None, None),
])
def test_redirects_only_same_origin_and_method_preserving(method, status, location, followed):
    if followed is None:
        with pytest.raises(UpstreamUnavailable):
            next_hop("https://h.example/mcp", method, status, location)
    else:
        assert next_hop("https://h.example/mcp", method, status, location) == followed


def test_event_stream_decoding():
    decoder = EventStreamDecoder(max_event=64)
    events = decoder.feed(b"event: endpoint\r\ndata: /m?s=1\r\n\r\n: comment\n")
    events += decoder.feed(b"id: 7\ndata: {\"a\":\ndata: 1}\n\nretry: 250\n")
    events += decoder.feed(b"data: " + b"x" * 100 + b"\n\ndata: ok\r")
    events += decoder.feed(b"\n\r\n")
    assert [(e.event, e.data) for e in events] == [("endpoint", "/m?s=1"), ("message", '{"a":\n1}'),
                                                  ("message", "ok")]
    assert decoder.last_id == "7" and decoder.retry_ms == 250 and decoder.oversized == 1


def test_event_stream_split_anywhere():
    stream = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n" * 3
    decoder = EventStreamDecoder()
    events = [e for i in range(len(stream)) for e in decoder.feed(stream[i:i + 1])]
    assert len(events) == 3 and all(json.loads(e.data)["id"] == 1 for e in events)


def test_tokens_come_from_files_or_named_variables(tmp_path):
    path = tmp_path / "token"
    path.write_text("0123456789abcdefXYZ\n")
    assert load_token(str(path), None) == "0123456789abcdefXYZ"
    assert load_token(None, "TOK", {"TOK": "0123456789abcdefXYZ"}) == "0123456789abcdefXYZ"
    for file, env, environ in ((None, None, {}), (None, "TOK", {}), (None, "TOK", {"TOK": "short"}),
                               (str(tmp_path / "missing"), None, {}), (str(path), "TOK", {"TOK": "x" * 20})):
        with pytest.raises(GuardError):
            load_token(file, env, environ)


def test_bearer_compare():
    token = "0123456789abcdefXYZ"
    assert bearer_matches(f"Bearer {token}", token) and bearer_matches(f"bearer  {token}", token)
    assert not any(bearer_matches(v, token) for v in (None, "", token, f"Basic {token}", f"Bearer {token}x"))


def test_binds_and_hosts():
    assert split_bind("127.0.0.1:8080") == ("127.0.0.1", 8080) and split_bind("[::1]:9") == ("::1", 9)
    for bad in ("8080", "host:", "h:70000"):
        with pytest.raises(GuardError):
            split_bind(bad)
    check_bind("127.0.0.1", False)
    check_bind("0.0.0.0", True)
    with pytest.raises(GuardError):
        check_bind("0.0.0.0", False)
    rule = HostRule("127.0.0.1")
    assert rule.host_allowed("localhost:1") and rule.host_allowed("[::1]") and not rule.host_allowed(None)
    assert not any(rule.host_allowed(h) for h in ("evil.com", "evil.com:1@127.0.0.1", "127.0.0.1/x", ""))
    assert rule.origin_allowed(None) and rule.origin_allowed("http://127.0.0.1:5173")
    assert not any(rule.origin_allowed(o) for o in ("null", "http://evil.example", "file://", "http://127.0.0.1:x"))
    assert HostRule("10.0.0.5", ["sidecar.internal"]).host_allowed("sidecar.internal:8443")


ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def headers(values: dict[str, list[str]]) -> CIMultiDictProxy[str]:
    """Request headers as aiohttp hands them over: case-blind, a repeated one kept twice."""
    return CIMultiDictProxy(CIMultiDict([(name, v) for name, vs in values.items() for v in vs]))


def test_modern_checks_compare_headers_with_the_body():
    call = Request(1, "tools/call", {"name": "añ tool", "_meta": ENVELOPE})
    good = {"MCP-Protocol-Version": ["2026-07-28"], "Mcp-Method": ["tools/call"], "mcp-name": [header_value("añ tool")]}
    assert judge(call, ENVELOPE, headers(good)) is None
    twice = {**good, "Mcp-Method": ["tools/call", "tools/call"]}
    assert judge(call, ENVELOPE, headers(twice)).code == -32020  # type: ignore[union-attr]
    assert judge(call, ENVELOPE, headers({**good, "mcp-name": ["other"]})).code == -32020  # type: ignore[union-attr]
    bad_version = {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "1999-01-01"}
    refusal = judge(call, bad_version, headers({**good, "MCP-Protocol-Version": ["1999-01-01"]}))
    assert refusal is not None and refusal.code == -32022 and refusal.data["supported"] == ["2026-07-28"]


def test_a_judgement_taken_on_the_first_comparison_is_the_full_ones():
    """Headers equal to the body pass at once; every other request is judged in full, in
    the same order: a null version with no header is the version's refusal, not the header's,
    and a name in the base64 form that equals the body literally is decoded, then compared."""
    call = Request(1, "tools/call", {"name": "echo", "_meta": ENVELOPE})
    good = {"MCP-Protocol-Version": ["2026-07-28"], "Mcp-Method": ["tools/call"], "Mcp-Name": ["echo"]}
    assert judge(call, ENVELOPE, headers(good)) is None
    null_version = {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": None}
    refusal = judge(call, null_version, headers({k: v for k, v in good.items() if k != "MCP-Protocol-Version"}))
    assert refusal is not None and refusal.code == -32602
    literal = "=?base64?ZWNobw==?="  # "echo" in the base64 form, sent as the tool's very name
    odd = Request(2, "tools/call", {"name": literal, "_meta": ENVELOPE})
    assert judge(odd, ENVELOPE, headers({**good, "Mcp-Name": [literal]})).code == -32020  # type: ignore[union-attr]
    assert judge(call, ENVELOPE, headers({**good, "Mcp-Name": [literal]})) is None  # decoded: "echo"
    assert judge(call, ENVELOPE, headers({**good, "Mcp-Method": ["tools/list"]})).code == -32020  # type: ignore[union-attr]
    removed = Request(3, "ping", {"_meta": ENVELOPE})
    assert judge(removed, ENVELOPE, headers({**good, "Mcp-Method": ["ping"]})).code == -32601  # type: ignore[union-attr]


@pytest.mark.parametrize("raw", [b'{"content":[]}', b'{"content":[]} \n', b'{"content":[] }', b'{}', b'{ }',
                                 b'{"content":[],"resultType":"complete"}', b'[1]', b'"text"'])
def test_a_call_answer_is_stamped_the_same_by_the_plain_stamp(raw):
    """The stamp made once for every method not cacheable writes what `stamp_answer` writes."""
    for result in (msgspec.Raw(raw), raw):
        assert stamp_for("tools/call")(Answer(7, result)) == stamp_answer("tools/call", Answer(7, result))
    assert stamp_for("tools/call")(Answer(8, {"content": []})) == stamp_answer("tools/call", Answer(8, {"content": []}))
    assert json.loads(stamp_for("tools/call")(Answer(9, b'{"a":1}')))["result"] == {"a": 1, "resultType": "complete"}


def test_modern_results_are_stamped():
    for result in (msgspec.Raw(b'{"tools":[]}'), {"tools": []}):  # an upstream's, spliced; the sidecar's own
        frame = json.loads(stamp_answer("tools/list", Answer(3, result)))
        assert frame["id"] == 3 and frame["result"]["tools"] == []
        assert frame["result"]["resultType"] == "complete" and "ttlMs" in frame["result"] and "cacheScope" in frame["result"]
    called = json.loads(stamp_answer("tools/call", Answer(4, msgspec.Raw(b' {"content":[],"resultType":"input_required"} '))))
    assert called["result"] == {"content": [], "resultType": "input_required"}  # kept, and no caching hints
    assert answer_status(None) == 200 and answer_status(-32601) == 404
    assert discover_result({"tools": {}})["supportedVersions"] == ["2026-07-28"]


def test_the_client_envelope_and_headers():
    probe = Outgoing(b"", 1, "server/discover", {"_meta": ENVELOPE})  # typed: nothing is parsed again
    envelope = ModernEnvelope.offered(probe)
    envelope.judge(UpstreamFrame(id=1, result=msgspec.Raw(b'{"supportedVersions":["2026-07-28"]}')))
    assert envelope.adopted
    call = Outgoing(b"", 2, "tools/call", {"name": "x\ny", "_meta": {"progressToken": 5}})
    wrapped = json.loads(envelope.wrap(call))
    assert wrapped["params"]["_meta"] == {"progressToken": 5, **ENVELOPE}
    sent = envelope.headers(call)
    assert sent["Mcp-Method"] == "tools/call" and sent["Mcp-Name"].startswith("=?base64?")


def test_credentials_inside_header_values_are_secrets_too():
    assert credential_parts("Bearer abc123") == ["Bearer abc123", "abc123"]
    assert "s3cret" in credential_parts("Basic dXNlcjpzM2NyZXQ=")
    assert credential_parts("plainvalue") == ["plainvalue"]
