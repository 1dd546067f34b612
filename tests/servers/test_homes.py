"""`omb-sidecar import`: fixture homes for every source, and a table over every rule.

Each case is a home folder (files relative to it), the servers already configured, the
sources asked for, and what must come of it: per source, the names that came in, the names
skipped with words of the reason, the labels that failed with words of the reason, and the
values an entry still needs.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from sidecar_admin.homes import SOURCES, choose_sources, import_homes

REPO = Path(__file__).resolve().parents[2]
CANARY = "sk-live-canary-7f3a9c1e5b"

CLAUDE = ".claude.json"
DESKTOP_LINUX = ".config/Claude/claude_desktop_config.json"
DESKTOP_MAC = "Library/Application Support/Claude/claude_desktop_config.json"
CURSOR = ".cursor/mcp.json"
GEMINI = ".gemini/settings.json"
CODEX = ".codex/config.toml"


def servers(**entries: Any) -> str:
    return json.dumps({"mcpServers": entries})


@dataclass
class Case:
    files: dict[str, str]
    want: dict[str, dict[str, Any]]  # source -> {"added": [...], "skipped": {name: words}, "failed": {label: words}}
    existing: dict[str, Any] = field(default_factory=dict)
    sources: str | None = None
    needs: dict[str, list[str]] = field(default_factory=dict)  # name -> words of each need


CASES: dict[str, Case] = {
    "claude: only the top-level mcpServers, trailing commas accepted": Case(
        files={CLAUDE: '{"numStartups": 4, "mcpServers": {"memory": {"command": "npx", '
                       '"args": ["-y", "@modelcontextprotocol/server-memory"],},},\n'
                       ' "projects": {"/work": {"mcpServers": {"local": {"command": "local-mcp"}}}}}'},
        sources="claude",
        want={"claude": {"added": ["memory"]}},
    ),
    "claude-desktop: the Linux and the macOS file": Case(
        files={DESKTOP_LINUX: servers(fs={"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]}),
               DESKTOP_MAC: servers(git={"command": "uvx", "args": ["mcp-server-git"]})},
        sources="claude-desktop",
        want={"claude-desktop": {"added": ["fs", "git"]}},
    ),
    "cursor: a URL server with a header variable": Case(
        files={CURSOR: servers(docs={"url": "https://docs.example.com/mcp", "headers": {"X-Api-Key": "${env:DOCS_KEY}"}})},
        sources="cursor",
        want={"cursor": {"added": ["docs"]}},
        needs={"docs": ["header X-Api-Key"]},
    ),
    "gemini: httpUrl and a comment": Case(
        files={GEMINI: '{\n  // mine\n  "theme": "dark",\n  "mcpServers": {"search": {"httpUrl": "https://search.example.com/mcp"}}\n}'},
        sources="gemini",
        want={"gemini": {"added": ["search"]}},
    ),
    "codex: tables, a token variable named as a header to fill, env_vars": Case(
        files={CODEX: 'model = "o3"\n\n[mcp_servers.linear]\nurl = "https://mcp.linear.app/mcp"\n'
                      'bearer_token_env_var = "LINEAR_TOKEN"\n\n[mcp_servers.time]\ncommand = "uvx"\n'
                      'args = ["mcp-server-time"]\nenv_vars = ["TZ_NAME"]\n'},
        sources="codex",
        want={"codex": {"added": ["linear", "time"]}},
        needs={"linear": ["header Authorization", "LINEAR_TOKEN"], "time": ["env TZ_NAME"]},
    ),
    "a broken file beside a good one drops only itself": Case(
        files={CURSOR: '{"mcpServers": {"half": ', GEMINI: servers(time={"command": "uvx", "args": ["mcp-server-time"]}),
               DESKTOP_LINUX: "{not json", DESKTOP_MAC: servers(git={"command": "uvx", "args": ["mcp-server-git"]})},
        sources="cursor,gemini,claude-desktop",
        want={"cursor": {"failed": {"mcp.json": "JSON could not be read"}},
              "gemini": {"added": ["time"]},
              "claude-desktop": {"added": ["git"], "failed": {DESKTOP_LINUX: "JSON could not be read"}}},
    ),
    "a broken Codex file fails alone": Case(
        files={CODEX: "[mcp_servers.x\ncommand = 1", CLAUDE: servers(a1={"command": "a1-mcp"})},
        sources="codex,claude",
        want={"codex": {"failed": {"config.toml": "TOML could not be read"}}, "claude": {"added": ["a1"]}},
    ),
    "one unreadable entry drops only itself": Case(
        files={CURSOR: servers(good={"command": "good-mcp"}, bad=5, worse={"args": ["x"]})},
        sources="cursor",
        want={"cursor": {"added": ["good"], "failed": {"'bad'": "must be an object", "'worse'": "neither a command"}}},
    ),
    "a kind that cannot be saved fails while the rest come in": Case(
        files={CLAUDE: servers(sock={"type": "websocket", "url": "wss://ws.example.com/mcp"},
                               keyed={"url": "https://x.example.com/mcp?api_key=abc"},
                               fine={"type": "sse", "url": "https://old.example.com/sse"})},
        sources="claude",
        want={"claude": {"added": ["fine"], "failed": {"'sock'": "unknown type", "'keyed'": "credential"}}},
    ),
    "a different server under a taken name is skipped and named": Case(
        files={CURSOR: servers(notes={"command": "npx", "args": ["-y", "other-notes"]})},
        existing={"notes": {"command": "npx", "args": ["-y", "@example/notes-mcp"]}},
        sources="cursor",
        want={"cursor": {"skipped": {"notes": "the name 'notes' is taken by a different server"}}},
    ),
    "a reserved name gets mcp- before it": Case(
        files={GEMINI: servers(agents={"command": "agents-mcp"}, browser={"url": "https://b.example.com/mcp"})},
        sources="gemini",
        want={"gemini": {"added": ["mcp-agents", "mcp-browser"]}},
    ),
    "the same command under another name is left alone": Case(
        files={CLAUDE: servers(mem={"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
                                    "env": {"MEMORY_FILE": "/tmp/m.json"}})},
        existing={"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}},
        sources="claude",
        want={"claude": {"skipped": {"mem": "already here as 'memory'"}}},
    ),
    "the same address under another name is left alone": Case(
        files={CODEX: '[mcp_servers.gh]\nurl = "https://API.GitHubCopilot.com:443/mcp/"\n'
                      'bearer_token_env_var = "GITHUB_TOKEN"\n'},
        existing={"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",
                             "headers": {"Authorization": "Bearer saved"}}},
        sources="codex",
        want={"codex": {"skipped": {"gh": "already here as 'github'"}}},
    ),
    "one server in two engines comes in once": Case(
        files={CLAUDE: servers(time={"command": "uvx", "args": ["mcp-server-time"]}),
               CURSOR: servers(clock={"command": "uvx", "args": ["mcp-server-time"]}),
               CODEX: '[mcp_servers.time]\ncommand = "uvx"\nargs = ["mcp-server-time"]\n'},
        want={"claude": {"added": ["time"]}, "cursor": {"skipped": {"clock": "already here as 'time'"}},
              "codex": {"skipped": {"time": "already here as 'time'"}}, "gemini": {}, "claude-desktop": {}},
    ),
    "the same server twice in one file comes in once": Case(
        files={CURSOR: servers(a={"command": "same-mcp"}, b={"command": "same-mcp"})},
        sources="cursor",
        want={"cursor": {"added": ["a"], "skipped": {"b": "already here as 'a'"}}},
    ),
    "an mcpServers that is not an object fails its file": Case(
        files={GEMINI: '{"mcpServers": ["x"]}', CURSOR: "{}"},
        sources="gemini,cursor",
        want={"gemini": {"failed": {"settings.json": "not a table of servers"}}, "cursor": {}},
    ),
}


def _home(tmp_path: Path, files: dict[str, str]) -> Path:
    home = tmp_path / "home"
    for relative, text in files.items():
        path = home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    home.mkdir(exist_ok=True)
    return home


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_import_rules(case: Case, tmp_path: Path) -> None:
    home = _home(tmp_path, case.files)
    results = {r.source.key: r for r in import_homes(home, case.existing, choose_sources(case.sources), environ={})}
    assert set(results) == set(case.want) | ({s.key for s in SOURCES} if case.sources is None else set())
    for key, want in case.want.items():
        result = results[key]
        assert [a.name for a in result.added] == want.get("added", []), key
        assert {s.name: s.reason for s in result.skipped}.keys() == want.get("skipped", {}).keys(), result.skipped
        for name, words in want.get("skipped", {}).items():
            assert words in next(s.reason for s in result.skipped if s.name == name)
        assert len(result.failed) == len(want.get("failed", {})), result.failed
        for label, words in want.get("failed", {}).items():
            assert any(label in f.label and words in f.reason for f in result.failed), (label, result.failed)
        for added in result.added:
            assert added.entry["enabled"] is False
            said = [str(n) for n in added.needs]
            for words in case.needs.get(added.name, []):
                assert any(words in n for n in said), (added.name, said)


def test_a_token_variable_is_never_resolved(tmp_path: Path) -> None:
    home = _home(tmp_path, {CODEX: '[mcp_servers.linear]\nurl = "https://mcp.linear.app/mcp"\n'
                                   'bearer_token_env_var = "LINEAR_TOKEN"\n'})
    (result,) = import_homes(home, {}, choose_sources("codex"), environ={"LINEAR_TOKEN": CANARY})
    (added,) = result.added
    assert added.entry["headers"] == {"Authorization": ""}
    assert [(n.where, n.key) for n in added.needs] == [("header", "Authorization")]


@pytest.mark.parametrize(("source", "variable", "name", "text"), [
    ("codex", "CODEX_HOME", "config.toml", '[mcp_servers.{0}]\ncommand = "{0}-mcp"\n'),
    ("claude", "CLAUDE_CONFIG_DIR", ".claude.json", '{{"mcpServers": {{"{0}": {{"command": "{0}-mcp"}}}}}}'),
])
def test_the_engine_own_variable_is_read_when_no_home_is_named(source: str, variable: str, name: str, text: str,
                                                                tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (moved / name).write_text(text.format("far"))
    home = _home(tmp_path, {CODEX if source == "codex" else CLAUDE: text.format("near")})
    environ = {variable: str(moved)}
    (default,) = import_homes(home, {}, choose_sources(source), environ=environ, home_given=False)
    (named,) = import_homes(home, {}, choose_sources(source), environ=environ, home_given=True)
    assert [a.name for a in default.added] == ["far"] and [a.name for a in named.added] == ["near"]


def test_an_unknown_source_is_refused() -> None:
    with pytest.raises(ValueError, match="no source 'vscode'"):
        choose_sources("claude,vscode")


# -- the command, as a person runs it ------------------------------------------------------------


async def omb(*argv: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMB_", "OGB_", "CODEX_HOME", "CLAUDE_CONFIG_DIR"))}
    with anyio.fail_after(60):
        done = await anyio.run_process([sys.executable, "-m", "sidecar", *argv], check=False, cwd=str(REPO), env=env)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


@pytest.fixture
def fixture_home(tmp_path: Path) -> Path:
    return _home(tmp_path, {
        CLAUDE: servers(memory={"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
                                "env": {"API_KEY": CANARY}}),
        CURSOR: '{"mcpServers": {"x": ',
        CODEX: '[mcp_servers.linear]\nurl = "https://mcp.linear.app/mcp"\nbearer_token_env_var = "LINEAR_TOKEN"\n',
    })


async def test_import_saves_off_entries_and_says_per_source(fixture_home: Path, tmp_path: Path) -> None:
    config = tmp_path / "sidecar.json"
    code, out, err = await omb("import", "--config", str(config), "--home", str(fixture_home))
    assert code == 1, err  # the broken Cursor file failed; the rest came in
    saved = json.loads(config.read_text())["mcpServers"]
    assert set(saved) == {"memory", "linear"} and all(e["enabled"] is False for e in saved.values())
    assert saved["memory"]["env"] == {"API_KEY": CANARY}  # a literal value is kept, never shown
    assert "Claude Code (~/.claude.json):" in out and "Added 'memory'" in out
    assert "Cursor (~/.cursor/mcp.json):" in out and "JSON could not be read" in out
    assert "needs a value: header Authorization (it used $LINEAR_TOKEN)" in out
    assert "Claude Desktop: no config file" in out and "Gemini CLI: no config file" in out
    assert CANARY not in out + err

    code, out, _ = await omb("import", "--config", str(config), "--home", str(fixture_home), "--from", "claude,codex",
                             "--json")
    report = json.loads(out)
    assert code == 0 and [s["source"] for s in report["sources"]] == ["claude", "codex"]
    assert all(s["added"] == [] and s["skipped"][0]["reason"].startswith("already here") for s in report["sources"])
    assert CANARY not in out


async def test_a_dry_run_saves_nothing(fixture_home: Path, tmp_path: Path) -> None:
    config = tmp_path / "sidecar.json"
    config.write_text(json.dumps({"bot": {"id": "iris"}}))
    before = config.read_text()
    code, out, _ = await omb("import", "--config", str(config), "--home", str(fixture_home), "--from", "claude",
                             "--dry-run")
    assert code == 0 and "Would add 'memory'" in out and "nothing was saved" in out
    assert config.read_text() == before


async def test_an_unknown_source_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = await omb("import", "--config", str(tmp_path / "c.json"), "--from", "vscode")
    assert code == 2 and "no source 'vscode'" in err
