import json
import logging
from pathlib import Path

import pytest

from sidecar.config import load_config, parse_config
from sidecar.errors import ConfigError

CONTRACT = {
    "bot": {"id": "iris", "engine": "api", "modelUrl": "http://127.0.0.1:11434/v1", "selection": None},
    "features": {"agentsToolBridge": False},
    "budgets": {"resultChars": 8000, "heldBytesPerServer": 67108864, "toolCap": 128},
    "mcpServers": {
        "agents": {"command": "python3", "args": ["-m", "example.agents"], "builtin": True,
                   "alwaysListed": ["list_bots", "post_to_room"], "directOnly": ["post_to_room"]},
        "notes": {"command": "npx", "args": ["-y", "@example/notes-mcp"], "env": {"TOKEN": "t0ken"}},
        "docs": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer b"}},
        "old": {"type": "sse", "url": "https://old.example.com/sse", "enabled": False},
    },
}


def test_the_spec_contract_loads() -> None:
    config = parse_config(CONTRACT, {})
    assert config.bot.id == "iris" and config.bot.model_url == "http://127.0.0.1:11434/v1"
    assert [s.alias for s in config.servers] == ["agents", "notes", "docs"]
    agents = config.servers[0]
    assert agents.builtin and agents.always_listed == ["list_bots", "post_to_room"] and agents.direct_only == ["post_to_room"]
    assert config.servers[2].type == "http"
    assert {"t0ken", "Bearer b"} <= set(config.secrets())


def test_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(CONTRACT))
    assert load_config(path).budgets.result_chars == 8000


def test_bad_top_level_value_names_its_path() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"budgets": {"resultChars": "lots"}}, {})
    assert "budgets.resultChars" in caught.value.message


def test_bad_server_entry_is_skipped_and_the_rest_load(caplog: pytest.LogCaptureFixture) -> None:
    document = {"mcpServers": {"bad": {"command": "x", "args": "not-a-list"}, "nocmd": {},
                               "good": {"command": "x"}, "bad name!": {"command": "x"}}}
    with caplog.at_level(logging.WARNING):
        config = parse_config(document, {})
    assert [s.alias for s in config.servers] == ["good"]
    reasons = dict(config.skipped)
    assert "mcpServers.bad.args" in reasons["bad"]
    assert "needs `command`" in reasons["nocmd"]
    assert "bad name!" in reasons
    assert "mcpServers.bad.args" in caplog.text


def test_unknown_keys_are_reported_with_their_path(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        parse_config({"budgetz": 1, "bot": {"idd": "x"}, "mcpServers": {"a": {"command": "x", "colour": "red"}}}, {})
    for path in ("budgetz", "bot.idd", "mcpServers.a.colour"):
        assert path in caplog.text


def test_environment_overrides() -> None:
    config = parse_config({}, {"OMB_MCP_RESULT_BUDGET": "1234", "OMB_AGENTS_TOOL_BRIDGE": "1"})
    assert config.budgets.result_chars == 1234 and config.features.agents_tool_bridge is True
    config = parse_config({"features": {"agentsToolBridge": True}}, {"OMB_AGENTS_TOOL_BRIDGE": "0"})
    assert config.features.agents_tool_bridge is False
    config = parse_config({"features": {"agentsToolBridge": True}}, {"OMB_AGENTS_TOOL_BRIDGE": "yes"})
    assert config.features.agents_tool_bridge is True
    assert parse_config({}, {"OMB_MCP_RESULT_BUDGET": "-5"}).budgets.result_chars == 8000


def test_not_an_object_or_not_json(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        parse_config([], {})
    path = tmp_path / "c.json"
    path.write_text("{nope")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(path)
    with pytest.raises(ConfigError, match="missing.json does not exist"):
        load_config(tmp_path / "missing.json")
    (tmp_path / "empty.json").write_text(" \n")
    with pytest.raises(ConfigError, match="empty.json is empty"):
        load_config(tmp_path / "empty.json")


def test_credentials_inside_header_values_are_secrets_too() -> None:
    import base64

    basic = base64.b64encode(b"someone:pa55word-canary").decode()
    config = parse_config({"mcpServers": {"d": {"url": "https://x.example/mcp",
                                                "headers": {"Authorization": "Bearer tok-canary-1", "X-Basic": f"Basic {basic}"}}}}, {})
    secrets = set(config.secrets())
    assert {"Bearer tok-canary-1", "tok-canary-1", "someone:pa55word-canary", "pa55word-canary"} <= secrets
