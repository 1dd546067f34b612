"""The rules an entry must pass, and that they hold wherever a config is read."""

from __future__ import annotations

import logging
import re

import pytest

from sidecar.config import parse_config
from sidecar.errors import ConfigError
from sidecar.config import rules
from sidecar_admin.jsonish import JSONProblem, loads


@pytest.mark.parametrize("name", ["notes", "a", "my-notes_2", "x" * 32, "mcp-browser"])
def test_good_names(name: str) -> None:
    rules.check_name(name)


@pytest.mark.parametrize("name", ["Notes", "2fa", "-x", "_x", "x" * 33, "my notes", "notes!", "", "ünï"])
def test_bad_names(name: str) -> None:
    with pytest.raises(ConfigError, match="must start with a letter"):
        rules.check_name(name)


@pytest.mark.parametrize("name", sorted(rules.RESERVED_NAMES))
def test_reserved_names_are_refused_unless_built_in(name: str) -> None:
    with pytest.raises(ConfigError, match="kept for the sidecar's own tools"):
        rules.check_name(name)
    rules.check_name(name, builtin=True)


@pytest.mark.parametrize(("env", "problem"), [
    ({"OMB_TOKEN": "x"}, "OMB_TOKEN is refused"),
    ({"OGB_ROUTE": "x"}, "OGB_ROUTE is refused"),
    ({"omb_lower": "x"}, "omb_lower is refused"),
    ({"ELECTRON_RUN_AS_NODE": "0"}, "accepted only as 1"),
    ({"ELECTRON_RUN_AS_NODE": "true"}, "accepted only as 1"),
    ({"A=B": "x"}, "invalid environment variable name"),
    ({"": "x"}, "invalid environment variable name"),
])
def test_bad_env(env: dict[str, str], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem) as caught:
        rules.check_env(env, "mcpServers.x.env")
    for value in env.values():
        assert f"{value}" not in caught.value.problem.split()  # the value is never repeated


def test_good_env() -> None:
    rules.check_env({"ELECTRON_RUN_AS_NODE": "1", "TOKEN": "abc", "OMBRE": "x", "MY_OMB_X": "y"}, "p")


@pytest.mark.parametrize(("url", "problem"), [
    ("ftp://x.example.com/", "full http:// or https://"),
    ("mcp.example.com/mcp", "full http:// or https://"),
    ("https:///path", "full http:// or https://"),
    ("https://user:secret-pw@x.example.com/", "user name or password"),
    ("https://token@x.example.com/", "user name or password"),
    ("https://x.example.com/mcp?token=abc", "credential (token=…)"),
    ("https://x.example.com/mcp?access_token=abc", "credential (access_token=…)"),
    ("https://x.example.com/mcp?x-api-key=abc", "credential (x-api-key=…)"),
    ("https://x.example.com/m cp", "spaces or control characters"),
    ("https://x.example.com:99999/", "not a valid URL"),
])
def test_bad_urls(url: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(problem)) as caught:
        rules.check_url(url, "mcpServers.x.url")
    assert "secret-pw" not in caught.value.message and "abc" not in caught.value.message


@pytest.mark.parametrize("url", ["https://x.example.com/mcp", "http://127.0.0.1:8080/mcp", "http://[::1]:3000/sse",
                                 "https://x.example.com/mcp?tenant=blue"])
def test_good_urls(url: str) -> None:
    rules.check_url(url, "p")


@pytest.mark.parametrize(("name", "value", "problem"), [
    ("Bad Header", "x", "not a valid HTTP header name"),
    ("X-Key", "a\r\nInjected: yes", "single line"),
    ("X-Key", "a\x00b", "single line"),
    ("Content-Length", "5", "set by the sidecar itself"),
    ("mcp-session-id", "abc", "set by the sidecar itself"),
])
def test_bad_headers(name: str, value: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        rules.check_header(name, value, "p")


def test_a_header_given_twice_in_different_case() -> None:
    with pytest.raises(ConfigError, match="given twice"):
        rules.check_headers({"X-Key": "a", "x-key": "b"}, "p")


# -- the approved list -------------------------------------------------------------------


@pytest.mark.parametrize(("url", "pattern", "matches"), [
    ("https://a.example.com/mcp", "https://*.example.com/mcp", True),
    ("https://a.b.example.com/mcp", "https://*.example.com/mcp", True),
    ("https://example.com/mcp", "https://*.example.com/mcp", False),  # `*` is one or more labels
    ("https://evil.test/x.example.com/mcp", "https://*.example.com/mcp", False),
    ("https://a.example.com.evil.test/mcp", "https://*.example.com/mcp", False),
    ("https://aexample.com/mcp", "https://*.example.com/mcp", False),
    ("https://A.Example.COM./mcp", "https://*.example.com/mcp", True),
    ("http://a.example.com/mcp", "https://*.example.com/mcp", False),  # HTTPS only
    ("https://a.example.com/mcp", "http://*.example.com/mcp", False),
    ("https://a.example.com/other", "https://*.example.com/mcp", False),
    ("https://a.example.com/mcp/x", "https://*.example.com/mcp", False),
    ("https://a.example.com/mcp/x/y", "https://*.example.com/mcp/*", True),
    ("https://a.example.com/anything", "https://a.example.com/*", True),
    ("https://mcp.eu.corp.example/mcp", "https://mcp.*.example/mcp", True),
    ("https://mcp.corp.example/mcp", "https://mcp.*.example/mcp", True),
    ("https://mcp.example/mcp", "https://mcp.*.example/mcp", False),
    ("https://a.example.com:8443/mcp", "https://*.example.com/mcp", False),
    ("https://a.example.com:8443/mcp", "https://*.example.com:8443/mcp", True),
    ("https://a.example.com:443/mcp", "https://*.example.com/mcp", True),
    ("https://u:p@a.example.com/mcp", "https://*.example.com/mcp", False),
    ("https://ab.example.com/mcp", "https://a*.example.com/mcp", False),  # no partial-label stars
    ("https://a.example.com/", "https://a.example.com", True),
])
def test_host_label_matching(url: str, pattern: str, matches: bool) -> None:
    assert rules.url_matches(url, pattern) is matches


def test_approved_by_name_or_address() -> None:
    allowed = ["notes", "https://*.example.com/mcp"]
    assert rules.approved("notes", None, allowed)
    assert rules.approved("anything", "https://a.example.com/mcp", allowed)
    assert not rules.approved("other", None, allowed)
    assert not rules.approved("other", "https://evil.test/a.example.com/mcp", allowed)


# -- wherever a config is read ---------------------------------------------------------


def test_config_reading_applies_the_rules(caplog: pytest.LogCaptureFixture) -> None:
    document = {"mcpServers": {
        "ok": {"command": "x"},
        "Upper": {"command": "x"},
        "browser": {"command": "x"},
        "agents": {"command": "x", "builtin": True},
        "envy": {"command": "x", "env": {"OMB_SECRET": "canary-omb"}},
        "creds": {"url": "https://me:canary-pw@x.example.com/mcp"},
        "hdr": {"url": "https://x.example.com/mcp", "headers": {"X-K": "canary\nline"}},
    }}
    with caplog.at_level(logging.WARNING):
        config = parse_config(document, {})
    assert [s.alias for s in config.servers] == ["ok", "agents"]
    reasons = dict(config.skipped)
    assert "must start with a letter" in reasons["Upper"]
    assert "kept for the sidecar's own tools" in reasons["browser"]
    assert "OMB_SECRET is refused" in reasons["envy"]
    assert "user name or password" in reasons["creds"]
    assert "single line" in reasons["hdr"]
    assert "canary" not in caplog.text and "canary" not in repr(config.skipped)


def test_an_organization_leaves_unapproved_servers_configured_but_not_started() -> None:
    document = {
        "organization": {"name": "Acme", "customServers": False,
                         "approved": ["notes", "https://*.example.com/mcp"]},
        "mcpServers": {
            "agents": {"command": "x", "builtin": True},
            "notes": {"command": "notes-mcp"},
            "docs": {"url": "https://docs.example.com/mcp"},
            "plain": {"url": "http://docs.example.com/mcp"},
            "other": {"command": "other-mcp"},
            "sneaky": {"url": "https://evil.test/x.example.com/mcp"},
        },
    }
    config = parse_config(document, {})
    assert [s.alias for s in config.servers] == ["agents", "notes", "docs"]
    assert dict(config.skipped) == {
        name: "not on Acme's approved list (managed by the organization)" for name in ("plain", "other", "sneaky")
    }
    document["organization"] = {"name": "Acme", "customServers": True, "approved": []}
    assert len(parse_config(document, {}).servers) == 6


def test_mount_key_sees_same_servers_only() -> None:
    one = rules.mount_key("npx", ["-y", "a"], {"K": "1"}, None, None, {})
    assert one == rules.mount_key("npx", ["-y", "a"], {"K": "1"}, None, None, {})
    assert one != rules.mount_key("npx", ["-y", "a"], {"K": "2"}, None, None, {})
    assert one != rules.mount_key("npx", ["a", "-y"], {"K": "1"}, None, None, {})
    url = rules.mount_key(None, [], {}, None, "https://X.example.com:443/mcp", {"Authorization": "b"})
    assert url == rules.mount_key(None, [], {}, None, "https://x.example.com/mcp", {"authorization": "b"})
    assert url != rules.mount_key(None, [], {}, None, "https://x.example.com/mcp", {"Authorization": "c"})


def test_missing_values() -> None:
    assert rules.missing_values("x", ["a", rules.NEEDS_VALUE, ""], {"A": "", "B": "b"}, {"H": ""}) == [
        "env A", "header H", "argument 2"]  # an empty argument is a real value


def test_kind_json() -> None:
    assert loads('{"a": [1, 2,], // note\n "b": "x // not a comment", /* c */ }') == {"a": [1, 2], "b": "x // not a comment"}
    assert loads('{"s": "comma, }"}') == {"s": "comma, }"}
    with pytest.raises(JSONProblem, match="line 2"):
        loads('{"a": 1,\n "b": }')
