"""The paste importer, table-driven: pastes shaped like what people really paste, each with
the exact entries and messages expected.

Every case runs against the same configured servers (`notes` and `github` are taken);
the organization cases run with custom servers off.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.config import Organization, parse_server
from sidecar_admin.importer import import_paste
from sidecar.config.rules import NEEDS_VALUE

EXISTING: dict[str, Any] = {
    "notes": {"command": "npx", "args": ["-y", "@example/notes-mcp"], "env": {"TOKEN": "t"}},
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer x"}},
}
ACME = Organization(name="Acme", custom_servers=False, approved=["https://*.example.com/mcp", "sentry"])


class Prefix(str):
    """Matches any message that starts with it (for parser messages we do not own)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and other.startswith(str(self))

    __hash__ = str.__hash__


@dataclass
class Case:
    id: str
    paste: str
    added: list[tuple[str, dict[str, Any], list[str], list[str]]] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)
    organization: Organization | None = None


def add(name: str, entry: dict[str, Any], needs: tuple[str, ...] = (), notes: tuple[str, ...] = ()) -> tuple[
    str, dict[str, Any], list[str], list[str]
]:
    return name, {**entry, "enabled": False}, list(needs), list(notes)


def http(url: str, **more: Any) -> dict[str, Any]:
    return {"type": "http", "url": url, **more}


def sse(url: str, **more: Any) -> dict[str, Any]:
    return {"type": "sse", "url": url, **more}


def cmd(command: str, *args: str, **more: Any) -> dict[str, Any]:
    return {"command": command, **({"args": list(args)} if args else {}), **more}


PLACEHOLDER = "it was a placeholder"
TOKENS_IN_HEADERS = "put tokens in a header instead"

CASES = [
    # -- an address alone --------------------------------------------------------------------
    Case("url-http", "https://mcp.linear.app/mcp", [add("linear", http("https://mcp.linear.app/mcp"))]),
    Case("url-sse", "https://mcp.asana.com/sse", [add("asana", sse("https://mcp.asana.com/sse"))]),
    Case("url-localhost", "http://localhost:3000/mcp", [add("local", http("http://localhost:3000/mcp"))]),
    Case("url-subdomain", "https://docs.mcp.cloudflare.com/sse",
         [add("cloudflare-docs", sse("https://docs.mcp.cloudflare.com/sse"))]),
    Case("url-with-password", "https://me:hunter2@mcp.example.com/mcp",
         dropped=[("line 1", f"the address holds a user name or password: {TOKENS_IN_HEADERS}")]),
    Case("url-with-key-in-query", "https://mcp.example.com/mcp?api_key=abc",
         dropped=[("line 1", f"the address carries a credential (api_key=…): {TOKENS_IN_HEADERS}")]),
    Case("url-websocket", "wss://mcp.example.com/ws",
         dropped=[("line 1", "only http:// and https:// addresses can be added")]),
    # -- claude mcp add ----------------------------------------------------------------------
    Case("claude-http", "claude mcp add --transport http sentry https://mcp.sentry.dev/mcp",
         [add("sentry", http("https://mcp.sentry.dev/mcp"))]),
    Case("claude-sse-scope-after", "claude mcp add --transport sse asana https://mcp.asana.com/sse --scope user",
         [add("asana", sse("https://mcp.asana.com/sse"))]),
    Case("claude-header-placeholder",
         'claude mcp add --transport http secure-api https://api.example.com/mcp --header "Authorization: Bearer your-token"',
         [add("secure-api", http("https://api.example.com/mcp", headers={"Authorization": ""}),
              needs=(f"header Authorization ({PLACEHOLDER})",))]),
    Case("claude-header-value", 'claude mcp add -t http -H "X-API-Key: k-12345" stripe https://mcp.stripe.com',
         [add("stripe", http("https://mcp.stripe.com", headers={"X-API-Key": "k-12345"}))]),
    Case("claude-cloudflare-access-variables",
         'claude mcp add --transport http internal https://mcp.corp.example/mcp '
         '--header "CF-Access-Client-Id: $CF_ID" --header "CF-Access-Client-Secret: ${CF_SECRET}"',
         [add("internal", http("https://mcp.corp.example/mcp",
                               headers={"CF-Access-Client-Id": "", "CF-Access-Client-Secret": ""}),
              needs=("header CF-Access-Client-Id (it used $CF_ID)",
                     "header CF-Access-Client-Secret (it used ${CF_SECRET})"))]),
    Case("claude-stdio-env-placeholder", "claude mcp add airtable --env AIRTABLE_API_KEY=YOUR_KEY -- npx -y airtable-mcp-server",
         [add("airtable", cmd("npx", "-y", "airtable-mcp-server", env={"AIRTABLE_API_KEY": ""}),
              needs=(f"env AIRTABLE_API_KEY ({PLACEHOLDER})",))]),
    Case("claude-stdio-two-env", "claude mcp add -e API_KEY=abc123 -e REGION=eu-west-1 weather -- node /opt/weather/build/index.js",
         [add("weather", cmd("node", "/opt/weather/build/index.js", env={"API_KEY": "abc123", "REGION": "eu-west-1"}))]),
    Case("claude-stdio-without-dashes", "claude mcp add fs npx -y @modelcontextprotocol/server-filesystem /tmp",
         [add("fs", cmd("npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"))]),
    Case("claude-missing-target", "claude mcp add lonely",
         dropped=[("line 1", "`claude mcp add` needs a name and then a command or an address")]),
    Case("claude-unknown-transport", "claude mcp add --transport ws sock wss://a.example.com",
         dropped=[("line 1", "unknown transport 'ws' (stdio, http or sse)")]),
    Case("claude-unknown-option", "claude mcp add notes2 --weird -- uvx notes2-mcp",
         dropped=[("line 1", "`claude mcp add` option --weird is not one this can read")]),
    Case("claude-oauth-flags",
         "claude mcp add --transport http --client-id abc --callback-port 8080 corp https://mcp.corp.example/mcp",
         [add("corp", http("https://mcp.corp.example/mcp"),
              notes=("its sign-in app settings (--client-id, --client-secret) are not kept",))]),
    Case("claude-add-json-variable",
         """claude mcp add-json weather-api '{"type":"http","url":"https://api.weather.example/mcp","headers":{"Authorization":"Bearer ${WEATHER_TOKEN}"}}'""",
         [add("weather-api", http("https://api.weather.example/mcp", headers={"Authorization": ""}),
              needs=("header Authorization (it used ${WEATHER_TOKEN})",))]),
    Case("claude-add-json-trailing-commas",
         """claude mcp add-json local-tool '{"command":"uvx","args":["local-tool-mcp"],"env":{"DEBUG":"1",},}'""",
         [add("local-tool", cmd("uvx", "local-tool-mcp", env={"DEBUG": "1"}))]),
    Case("claude-add-json-multiline",
         "claude mcp add-json api '{\n  \"type\": \"http\",\n  \"url\": \"https://api.example.com/mcp\"\n}'",
         [add("api", http("https://api.example.com/mcp"))]),
    Case("claude-several-lines-one-broken",
         "claude mcp add --transport http notion https://mcp.notion.com/mcp\n"
         "claude mcp add --transport http\n"
         "claude mcp add memory -- npx -y @modelcontextprotocol/server-memory",
         [add("notion", http("https://mcp.notion.com/mcp")),
          add("memory", cmd("npx", "-y", "@modelcontextprotocol/server-memory"))],
         [("line 2", "`claude mcp add` needs a name and then a command or an address")]),
    Case("claude-line-continuation", "claude mcp add --transport http \\\n    notion https://mcp.notion.com/mcp",
         [add("notion", http("https://mcp.notion.com/mcp"))]),
    Case("claude-same-server-twice",
         "claude mcp add one -- uvx same-mcp\nclaude mcp add two -- uvx same-mcp",
         [add("one", cmd("uvx", "same-mcp"))], [("line 2", "already here as 'one'")]),
    Case("codex-mcp-add", "codex mcp add notes-tool --env NOTES_KEY=$NOTES_KEY -- npx -y notes-tool-mcp",
         [add("notes-tool", cmd("npx", "-y", "notes-tool-mcp", env={"NOTES_KEY": ""}),
              needs=("env NOTES_KEY (it used $NOTES_KEY)",))]),
    # -- npx, uvx, docker lines --------------------------------------------------------------
    Case("npx-home-folders", "npx -y @modelcontextprotocol/server-filesystem ~/Documents ~/Desktop",
         [add("filesystem", cmd("npx", "-y", "@modelcontextprotocol/server-filesystem", NEEDS_VALUE, NEEDS_VALUE),
              needs=("argument 3 (it used ~)", "argument 4 (it used ~)"))]),
    Case("npx-env-prefix", "BRAVE_API_KEY=$BRAVE_API_KEY npx -y @modelcontextprotocol/server-brave-search",
         [add("brave-search", cmd("npx", "-y", "@modelcontextprotocol/server-brave-search", env={"BRAVE_API_KEY": ""}),
              needs=("env BRAVE_API_KEY (it used $BRAVE_API_KEY)",))]),
    Case("npx-scoped-latest", "npx @playwright/mcp@latest", [add("playwright", cmd("npx", "@playwright/mcp@latest"))]),
    Case("npx-mcp-remote", "npx -y mcp-remote https://mcp.atlassian.com/v1/sse",
         [add("atlassian", cmd("npx", "-y", "mcp-remote", "https://mcp.atlassian.com/v1/sse"))]),
    Case("npx-key-argument-placeholder", "npx -y @upstash/context7-mcp --api-key YOUR_API_KEY",
         [add("context7", cmd("npx", "-y", "@upstash/context7-mcp", "--api-key", NEEDS_VALUE),
              needs=(f"argument 4 ({PLACEHOLDER})",))]),
    Case("npx-shell-prompt", "$ npx -y @modelcontextprotocol/server-sequential-thinking",
         [add("sequential-thinking", cmd("npx", "-y", "@modelcontextprotocol/server-sequential-thinking"))]),
    Case("uvx-fetch", "uvx mcp-server-fetch", [add("fetch", cmd("uvx", "mcp-server-fetch"))]),
    Case("uvx-from-git", "uvx --from git+https://github.com/example/tools-mcp tools-mcp --verbose",
         [add("tools", cmd("uvx", "--from", "git+https://github.com/example/tools-mcp", "tools-mcp", "--verbose"))]),
    Case("uvx-dotted-package", "uvx awslabs.aws-documentation-mcp-server@latest",
         [add("awslabs-aws-documentation", cmd("uvx", "awslabs.aws-documentation-mcp-server@latest"))]),
    Case("uvx-two-names-numbered", "uvx notes-mcp\nnpx -y notes-mcp",
         [add("notes-2", cmd("uvx", "notes-mcp"), notes=("named 'notes-2': 'notes' is taken",)),
          add("notes-3", cmd("npx", "-y", "notes-mcp"), notes=("named 'notes-3': 'notes' is taken",))]),
    Case("docker-env-value-moved", "docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN=ghp_abcdef123456 ghcr.io/github/github-mcp-server",
         [add("github-2", cmd("docker", "run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN",
                              "ghcr.io/github/github-mcp-server", env={"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_abcdef123456"}),
              notes=("moved the value of GITHUB_PERSONAL_ACCESS_TOKEN from the docker arguments into its environment",
                     "named 'github-2': 'github' is taken"))]),
    Case("docker-env-passed-through", "docker run -i --rm -e POSTGRES_URL mcp/postgres",
         [add("postgres", cmd("docker", "run", "-i", "--rm", "-e", "POSTGRES_URL", "mcp/postgres", env={"POSTGRES_URL": ""}),
              needs=("env POSTGRES_URL (it used $POSTGRES_URL)",))]),
    Case("docker-not-run", "docker compose up", dropped=[("line 1", "only `docker run` starts a server")]),
    Case("prose", "Install it with pip first",
         dropped=[("line 1", "it is not an address, a `claude mcp add` command or a command line this can read "
                             "(it starts with 'Install')")]),
    # -- JSON blocks -------------------------------------------------------------------------
    Case("claude-desktop-block",
         """{"mcpServers": {
              "slack": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-slack"],
                        "env": {"SLACK_BOT_TOKEN": "${SLACK_BOT_TOKEN}", "SLACK_TEAM_ID": "T01234567"}, "enabled": true},
              "docs": {"type": "streamable-http", "url": "https://mcp.example.com/mcp",
                       "headers": {"Authorization": "Bearer <token>"}}
         }}""",
         [add("slack", cmd("npx", "-y", "@modelcontextprotocol/server-slack",
                           env={"SLACK_BOT_TOKEN": "", "SLACK_TEAM_ID": "T01234567"}),
              needs=("env SLACK_BOT_TOKEN (it used ${SLACK_BOT_TOKEN})",)),
          add("docs", http("https://mcp.example.com/mcp", headers={"Authorization": ""}),
              needs=(f"header Authorization ({PLACEHOLDER})",))]),
    Case("block-name-taken", '{"mcpServers": {"notes": {"command": "uvx", "args": ["notes-server"]}}}',
         [add("notes-2", cmd("uvx", "notes-server"), notes=("named 'notes-2': 'notes' is taken",))]),
    Case("block-already-here",
         '{"mcpServers": {"my-notes": {"command": "npx", "args": ["-y", "@example/notes-mcp"], "env": {"TOKEN": "t"}}}}',
         dropped=[("'my-notes'", "already here as 'notes'")]),
    Case("vscode-servers-input",
         """{"inputs": [{"type": "promptString", "id": "gh-token", "password": true}],
             "servers": {"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",
                                    "headers": {"Authorization": "Bearer ${input:gh-token}"}}}}""",
         [add("github-2", http("https://api.githubcopilot.com/mcp/", headers={"Authorization": ""}),
              needs=("header Authorization (it used ${input:gh-token})",),
              notes=("named 'github-2': 'github' is taken",))]),
    Case("vscode-stdio-envfile",
         '{"servers": {"py": {"type": "stdio", "command": "python", "args": ["-m", "my_mcp"], '
         '"envFile": "${workspaceFolder}/.env"}}}',
         [add("py", cmd("python", "-m", "my_mcp"), notes=("its envFile is not read: add those variables to env",))]),
    Case("cursor-map-comments-commas", '{\n  // my servers\n  "context7": {"url": "https://mcp.context7.com/mcp",},\n}',
         [add("context7", http("https://mcp.context7.com/mcp"))]),
    Case("single-entry-command", '{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}',
         [add("memory", cmd("npx", "-y", "@modelcontextprotocol/server-memory"))]),
    Case("single-entry-windsurf-url", '{"serverUrl": "https://mcp.figma.com/mcp"}',
         [add("figma", http("https://mcp.figma.com/mcp"))]),
    Case("gemini-http-url", '{"mcpServers": {"gem": {"httpUrl": "https://gem.example.com/sse", "trust": true}}}',
         [add("gem", http("https://gem.example.com/sse"))]),
    Case("fragment-reserved-name", '"browser": {"command": "npx", "args": ["@playwright/mcp@latest"]}',
         [add("mcp-browser", cmd("npx", "@playwright/mcp@latest"),
              notes=("named 'mcp-browser': 'browser' is kept for the sidecar's own tools",))]),
    Case("claude-reserved-name", "claude mcp add computer -- npx -y computer-use-mcp",
         [add("mcp-computer", cmd("npx", "-y", "computer-use-mcp"),
              notes=("named 'mcp-computer': 'computer' is kept for the sidecar's own tools",))]),
    Case("name-tidied", '{"mcpServers": {"My Notes Server": {"command": "notes-mcp"}}}',
         [add("my-notes-server", cmd("notes-mcp"), notes=("named 'my-notes-server' (from 'My Notes Server')",))]),
    Case("name-too-long", "claude mcp add a-really-long-server-name-that-keeps-going https://x.example.com/mcp",
         [add("a-really-long-server-name-that-k", http("https://x.example.com/mcp"),
              notes=("named 'a-really-long-server-name-that-k' (from 'a-really-long-server-name-that-keeps-going')",))]),
    Case("name-starts-with-digit", '{"mcpServers": {"1password": {"command": "op-mcp"}}}',
         [add("mcp-1password", cmd("op-mcp"), notes=("named 'mcp-1password' (from '1password')",))]),
    Case("command-string-with-args", '{"mcpServers": {"tool": {"command": "npx -y some-tool-mcp"}}}',
         [add("tool", cmd("npx", "-y", "some-tool-mcp"))]),
    Case("windows-cmd", '{"mcpServers": {"win": {"command": "cmd", "args": ["/c", "npx", "-y", "@example/win-mcp"]}}}',
         [add("win", cmd("cmd", "/c", "npx", "-y", "@example/win-mcp"))]),
    Case("builtin-claimed",
         '{"mcpServers": {"fake": {"command": "uvx", "args": ["fake-mcp"], "builtin": true, "alwaysListed": ["x"]}}}',
         [add("fake", cmd("uvx", "fake-mcp"),
              notes=("builtin, alwaysListed and directOnly are ignored: a pasted server is never built in",))]),
    Case("broken-entries-mixed-with-good",
         """{"mcpServers": {
              "good": {"command": "uvx", "args": ["good-mcp"]},
              "nostring": "npx foo",
              "empty": {},
              "both": {"command": "x", "url": "https://a.example.com/mcp"},
              "platform-env": {"command": "x", "env": {"OMB_TOKEN": "1"}},
              "electron": {"command": "/Applications/Foo.app/Contents/MacOS/Foo", "env": {"ELECTRON_RUN_AS_NODE": "0"}},
              "electron-ok": {"command": "/Applications/Foo.app/Contents/MacOS/Foo", "env": {"ELECTRON_RUN_AS_NODE": "1"}},
              "bad-header": {"url": "https://a.example.com/mcp", "headers": {"Bad Header": "x"}},
              "two-lines": {"url": "https://b.example.com/mcp", "headers": {"X-Key": "a\\nb"}},
              "weird-type": {"type": "websocket", "url": "wss://c.example.com"},
              "host-header": {"url": "https://d.example.com/mcp", "headers": {"Host": "evil.test"}}
         }}""",
         [add("good", cmd("uvx", "good-mcp")),
          add("electron-ok", cmd("/Applications/Foo.app/Contents/MacOS/Foo", env={"ELECTRON_RUN_AS_NODE": "1"}))],
         [("'nostring'", "a server entry must be an object"),
          ("'empty'", "it has neither a command nor an address"),
          ("'both'", "it has both a command and an address"),
          ("'platform-env'", "the environment variable OMB_TOKEN is refused: OMB_* and OGB_* belong to the platform"),
          ("'electron'", "ELECTRON_RUN_AS_NODE is accepted only as 1"),
          ("'bad-header'", "'Bad Header' is not a valid HTTP header name"),
          ("'two-lines'", "the value of header X-Key must be a single line without control characters"),
          ("'weird-type'", "unknown type 'websocket' (stdio, http or sse)"),
          ("'host-header'", "the header Host is set by the sidecar itself")]),
    Case("variable-in-address", "claude mcp add --transport http tenant https://$TENANT.example.com/mcp",
         dropped=[("line 1", "its address cannot be saved as written (it used $TENANT): paste the real address")]),
    Case("placeholder-command", """claude mcp add-json weather '{"command": "/path/to/weather-cli"}'""",
         dropped=[("line 1", f"its command cannot be saved as written ({PLACEHOLDER})")]),
    Case("broken-json", '{"mcpServers": {"a": {"command": "x"',
         dropped=[("the paste", Prefix("its JSON could not be read ("))]),
    Case("empty-paste", "   \n ", dropped=[("the paste", "it is empty")]),
    # -- Codex config.toml -------------------------------------------------------------------
    Case("codex-toml",
         '[mcp_servers.docs]\nurl = "https://mcp.example.com/mcp"\nbearer_token_env_var = "DOCS_TOKEN"\n\n'
         '[mcp_servers.files]\ncommand = "npx"\nargs = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"]\n'
         'enabled = false\nstartup_timeout_sec = 20\n[mcp_servers.files.env]\nLOG_LEVEL = "debug"\n',
         [add("docs", http("https://mcp.example.com/mcp", headers={"Authorization": ""}),
              needs=("header Authorization (it used $DOCS_TOKEN)",)),
          add("files", cmd("npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/data", env={"LOG_LEVEL": "debug"}))]),
    Case("codex-toml-env-vars-and-header-variables",
         '[mcp_servers.api]\nurl = "https://api.example.com/mcp"\nenv_http_headers = { "X-Api-Key" = "EXAMPLE_KEY" }\n'
         'http_headers = { "X-Team" = "blue" }\n\n[mcp_servers.runner]\ncommand = "runner-mcp"\nenv_vars = ["RUNNER_TOKEN"]\n',
         [add("api", http("https://api.example.com/mcp", headers={"X-Team": "blue", "X-Api-Key": ""}),
              needs=("header X-Api-Key (it used $EXAMPLE_KEY)",)),
          add("runner", cmd("runner-mcp", env={"RUNNER_TOKEN": ""}), needs=("env RUNNER_TOKEN (it used $RUNNER_TOKEN)",))]),
    Case("codex-toml-broken", '[mcp_servers.x\ncommand = "y"\n',
         dropped=[("the paste", Prefix("its TOML could not be read ("))]),
    # -- the organization's approved list ----------------------------------------------------
    Case("organization-approved-list",
         "https://a.example.com/mcp\nhttps://evil.test/x.example.com/mcp\nhttp://b.example.com/mcp\n"
         "claude mcp add --transport http sentry https://mcp.sentry.dev/mcp\nuvx fetch-mcp",
         [add("example-a", http("https://a.example.com/mcp")), add("sentry", http("https://mcp.sentry.dev/mcp"))],
         [("line 2", "not on Acme's approved list"), ("line 3", "not on Acme's approved list"),
          ("line 5", "not on Acme's approved list")],
         organization=ACME),
]


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 40
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_paste(case: Case) -> None:
    result = import_paste(case.paste, EXISTING, case.organization)
    got_added = [(a.name, a.entry, [str(n) for n in a.needs], a.notes) for a in result.added]
    got_dropped = [(d.label, d.reason) for d in result.dropped]
    assert got_added == case.added
    assert got_dropped == case.dropped
    for name, entry, *_ in got_added:
        assert entry["enabled"] is False
        parse_server(name, entry)  # what comes in passes the rules a config is read with
        assert name not in EXISTING


def test_nothing_in_a_result_repeats_a_value() -> None:
    """Messages name variables and keys; a value the paste gave is only ever in the entry."""
    paste = ('claude mcp add --transport http x https://x.example.com/mcp -H "X-Key: canary-value-1"\n'
             "docker run -i --rm -e TOKEN=canary-value-2 mcp/thing\n"
             'claude mcp add -e A=canary-value-3 -e OMB_X=canary-value-4 y -- uvx y-mcp')
    result = import_paste(paste, {})
    words = " ".join([*(str(d) for d in result.dropped),
                      *(str(n) for a in result.added for n in a.needs),
                      *(n for a in result.added for n in a.notes)])
    assert "canary" not in words
    assert [d.reason for d in result.dropped] == [
        "the environment variable OMB_X is refused: OMB_* and OGB_* belong to the platform"]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
ENTRY_KEYS = st.sampled_from(["command", "args", "env", "url", "headers", "type", "cwd", "serverUrl", "name",
                              "enabled", "transport", "oauth", "builtin", "envFile", "httpUrl"])


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(max_size=10), st.dictionaries(ENTRY_KEYS, JSON_VALUES, max_size=6), max_size=4))
def test_any_mcpservers_block_drops_only_what_it_cannot_read(block: dict[str, Any]) -> None:
    result = import_paste(json.dumps({"mcpServers": block}), EXISTING)
    assert len(result.added) + len(result.dropped) == max(len(block), 1)
    for added in result.added:
        parse_server(added.name, added.entry)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_any_text_is_read_without_raising(text: str) -> None:
    import_paste(text, EXISTING)
    import_paste("[mcp_servers.x]\n" + text, EXISTING)
    import_paste("claude mcp add " + text, EXISTING)
