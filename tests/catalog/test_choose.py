"""Which layout a face gets: SPEC §4's table, the bridge switch, the face.layout override."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from sidecar.catalog.layouts import choose
from sidecar.catalog.layouts.choose import ALL_TRANSPORTS, URL_TRANSPORTS, choose_layout, model_is_local
from sidecar.config import SidecarConfig, parse_config

LOCAL = "http://127.0.0.1:11434/v1"
REMOTE = "https://api.example.com/v1"


def config(engine: str = "api", *, url: str | None = None, bridge: bool | None = None, selection: Any = None,
           layout: str = "auto", cap: int = 128, env: dict[str, str] | None = None) -> SidecarConfig:
    document: dict[str, Any] = {"bot": {"engine": engine, "modelUrl": url, "selection": selection},
                                "face": {"layout": layout}, "budgets": {"toolCap": cap}}
    if bridge is not None:
        document["features"] = {"agentsToolBridge": bridge}
    return parse_config(document, env or {})


@pytest.mark.parametrize(
    ("engine", "trio", "capped"),
    [("claude", frozenset(), False), ("codex", frozenset(), False), ("codex-chatgpt", URL_TRANSPORTS, False),
     ("pi", URL_TRANSPORTS, False), ("api", ALL_TRANSPORTS, True), ("acp", frozenset(), False),
     ("muse", frozenset(), False)],
)
def test_the_table_gives_each_engine_its_trio_and_cap(engine: str, trio: frozenset[str], capped: bool) -> None:
    plan = choose_layout(config(engine))
    assert plan.trio == trio and (plan.cap == 128) is capped and (plan.cap is None) is not capped
    assert not plan.bridged


@pytest.mark.parametrize(("engine", "bridged"), [("api", True), ("claude", True), ("codex", False),
                                                 ("codex-chatgpt", False), ("pi", False), ("acp", False),
                                                 ("anything-else", False)])
def test_only_claude_and_api_are_ever_bridged(engine: str, bridged: bool) -> None:
    assert choose_layout(config(engine, bridge=True)).bridged is bridged


def test_the_switch_is_off_by_default_and_on_for_a_local_model() -> None:
    assert not choose_layout(config("api", url=REMOTE)).bridged
    assert choose_layout(config("api", url=LOCAL)).bridged
    assert choose_layout(config("api", url=REMOTE, bridge=True)).bridged


def test_the_variable_wins_when_it_is_exactly_one_or_zero() -> None:
    env0 = {"OMB_AGENTS_TOOL_BRIDGE": "0"}
    assert not choose_layout(config("api", url=LOCAL, env=env0), env0).bridged  # turns the local model off too
    assert not choose_layout(config("api", bridge=True, env=env0), env0).bridged
    env1 = {"OMB_AGENTS_TOOL_BRIDGE": "1"}
    assert choose_layout(config("api", url=REMOTE, env=env1), env1).bridged
    other = {"OMB_AGENTS_TOOL_BRIDGE": "true"}
    assert not choose_layout(config("api", url=REMOTE, env=other), other).bridged
    assert choose_layout(config("api", url=LOCAL, env=other), other).bridged


def test_a_bot_with_a_selection_is_never_bridged() -> None:
    selection = {"servers": ["agents"], "tools": None}
    env1 = {"OMB_AGENTS_TOOL_BRIDGE": "1"}
    assert not choose_layout(config("api", url=LOCAL, bridge=True, selection=selection, env=env1), env1).bridged
    assert not choose_layout(config("claude", bridge=True, selection=selection)).bridged
    assert not choose_layout(config("api", selection=selection, layout="bridged")).bridged


def test_claude_takes_the_shims_decision_as_written() -> None:
    assert choose_layout(config("claude", bridge=True)).bridged
    assert not choose_layout(config("claude", bridge=False, url=LOCAL)).bridged  # the shim refused: no promotion


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:11434/v1", "http://localhost:8080", "http://LOCALHOST.:1/", "http://10.1.2.3/v1",
     "http://172.20.0.5:8000", "http://192.168.1.20:1234/v1", "http://169.254.10.1/", "http://[::1]:8080/v1",
     "http://[fe80::1%25eth0]:80/", "http://[fd12:3456::1]/", "http://[::ffff:192.168.0.9]/", "http://gpu-box.local:11434",
     "http://models.localhost/v1", "192.168.0.7:11434/v1", "http://0.0.0.0:8000"],
)
def test_local_model_urls(url: str) -> None:
    assert model_is_local(url)


@pytest.mark.parametrize(
    "url",
    [None, "", "https://api.openai.com/v1", "http://8.8.8.8/", "http://[2001:4860::8888]/", "http://local/",
     "http://example.local.evil.com/", "http://100.64.1.1/", "not a url"],
)
def test_remote_model_urls(url: str | None) -> None:
    assert not model_is_local(url)


def test_a_failure_while_deciding_leaves_the_face_unbridged_with_one_line(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(url: str | None) -> bool:
        raise ValueError(f"secret detail {url}")

    monkeypatch.setattr(choose, "model_is_local", broken)
    with caplog.at_level(logging.WARNING, logger=choose.__name__):
        plan = choose_layout(config("api", url="http://[broken"))
    assert not plan.bridged and plan.trio == ALL_TRANSPORTS and plan.cap == 128
    assert len(caplog.records) == 1
    assert "ValueError" in caplog.text and "secret" not in caplog.text and "broken" not in caplog.text


def test_a_malformed_url_is_a_failure_too(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=choose.__name__):
        assert not choose_layout(config("api", url="http://[::1/v1")).bridged
    assert [r.getMessage() for r in caplog.records] == ["bridge decision failed (ValueError): the face stays unbridged"]


@pytest.mark.parametrize(
    ("layout", "name", "bridged", "trio", "cap"),
    [("full", "full", False, frozenset(), None), ("bridged", "bridged", True, frozenset(), None),
     ("trio", "trio", False, ALL_TRANSPORTS, None), ("cap", "cap", False, frozenset(), 100)],
)
def test_the_face_override_picks_one_layout(layout: str, name: str, bridged: bool, trio: frozenset[str],
                                           cap: int | None) -> None:
    plan = choose_layout(config("codex", layout=layout, cap=100))
    assert (plan.name, plan.bridged, plan.trio, plan.cap) == (name, bridged, trio, cap)


def test_the_plan_knows_the_name_budget_and_a_tiny_cap_still_holds_the_shared_trio() -> None:
    plan = choose_layout(parse_config({"face": {"name": "agents", "layout": "cap"}, "budgets": {"toolCap": 1}}, {}))
    assert plan.name_budget == 64 - len("mcp__agents__") and plan.cap == 3
    assert choose_layout(config("api", bridge=True)).name == "bridged+trio+cap"
