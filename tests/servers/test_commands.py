"""`omb-sidecar add | check | servers`, run as a person runs them (a real process each),
and the canary sweep: header and env values appear in nothing a command prints."""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import stat
import sys
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from sidecar_admin.store import ConfigFile, edit_form, merge_write_only

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Run:
    code: int
    out: str
    err: str


async def omb(*argv: str, stdin: str = "", timeout: float = 60.0) -> Run:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMB_", "OGB_"))}
    with anyio.fail_after(timeout):
        done = await anyio.run_process([sys.executable, "-m", "sidecar", *argv], input=stdin.encode(),
                                       check=False, cwd=str(REPO), env=env)
    return Run(done.returncode, done.stdout.decode(), done.stderr.decode())


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "sidecar.json"
    path.write_text(json.dumps({"bot": {"id": "iris", "engine": "api"}, "budgets": {"toolCap": 128},
                                "mcpServers": {"notes": {"command": "npx", "args": ["-y", "@example/notes-mcp"],
                                                         "env": {"TOKEN": "saved-token"}}}}))
    path.chmod(0o644)
    return path


def servers_of(path: Path) -> dict[str, Any]:
    block: dict[str, Any] = json.loads(path.read_text())["mcpServers"]
    return block


# -- add ------------------------------------------------------------------------------------


async def test_add_writes_off_entries_atomically_and_privately(config: Path) -> None:
    paste = ('claude mcp add --transport http docs https://mcp.example.com/mcp --header "Authorization: Bearer $DOCS"\n'
             "uvx notes-mcp\nnot a server line\n")
    run = await omb("add", "--config", str(config), "--no-check", stdin=paste)
    assert run.code == 0, run.err
    assert run.out.splitlines() == [
        "Added 'docs': Streamable HTTP https://mcp.example.com/mcp, off until it passes a check",
        "  needs a value: header Authorization (it used $DOCS)",
        "Added 'notes-2': command `uvx notes-mcp`, off until it passes a check",
        "  note: named 'notes-2': 'notes' is taken",
        "Not added: line 3: it is not an address, a `claude mcp add` command or a command line this can read "
        "(it starts with 'not')",
    ]
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    document = json.loads(config.read_text())
    assert document["bot"] == {"id": "iris", "engine": "api"}  # the rest of the file is kept
    assert servers_of(config)["docs"] == {"type": "http", "url": "https://mcp.example.com/mcp",
                                          "headers": {"Authorization": ""}, "enabled": False}
    assert servers_of(config)["notes"]["env"] == {"TOKEN": "saved-token"}  # nothing is overwritten
    assert not [p for p in config.parent.iterdir() if p.name.endswith(".tmp")]


async def test_add_creates_the_file_and_takes_the_paste_from_argv(tmp_path: Path) -> None:
    path = tmp_path / "new" / "sidecar.json"
    run = await omb("add", "--config", str(path), "--no-check", "https://mcp.linear.app/mcp")
    assert run.code == 0 and run.out.startswith("Added 'linear'")
    assert servers_of(path) == {"linear": {"type": "http", "url": "https://mcp.linear.app/mcp", "enabled": False}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


async def test_concurrent_adds_lose_nothing(config: Path) -> None:
    async with anyio.create_task_group() as group:
        for n in range(4):
            group.start_soon(lambda n=n: omb("add", "--config", str(config), "--no-check", f"uvx tool{n}-mcp"))
    assert set(servers_of(config)) == {"notes", "tool0", "tool1", "tool2", "tool3"}


async def test_add_checks_what_it_can_and_turns_on_what_passes(config: Path, fault_server_path: Path) -> None:
    paste = (f"{sys.executable} {fault_server_path}\n"
             f"{sys.executable} {fault_server_path} exit-on-start=4\n"
             "claude mcp add later -e KEY=$KEY -- uvx later-mcp\n")
    run = await omb("add", "--config", str(config), stdin=paste)
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert "Connected: 21 tools" in lines and "'fault' is on." in lines
    assert "Not connected: it stopped (exit code 4) before it finished the handshake" in lines
    assert "Saved, but off: the test failed. Bots can use 'fault-2' once it passes." in lines
    saved = servers_of(config)
    assert "enabled" not in saved["fault"] and saved["fault-2"]["enabled"] is False
    assert saved["later"]["enabled"] is False  # blanks to fill: not checked yet
    health = json.loads((config.parent / "mcp-health.json").read_text())
    assert health["fault"]["ok"] is True and health["fault-2"]["ok"] is False and "later" not in health


async def test_add_json(config: Path) -> None:
    run = await omb("add", "--config", str(config), "--no-check", "--json", stdin="uvx a-mcp\nbad")
    document = json.loads(run.out)
    assert [a["name"] for a in document["added"]] == ["a"]
    assert document["notAdded"][0]["label"] == "line 2"


async def test_an_organization_refuses_unapproved_pastes(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"organization": {"name": "Acme", "customServers": False,
                                                 "approved": ["https://*.example.com/mcp"]},
                                "mcpServers": {"old": {"command": "old-mcp"}}}))
    run = await omb("add", "--config", str(path), "--no-check", stdin="https://evil.test/x.example.com/mcp\nuvx x-mcp")
    assert run.code == 1
    assert run.out.splitlines() == ["Not added: line 1: not on Acme's approved list",
                                    "Not added: line 2: not on Acme's approved list"]
    listing = await omb("servers", "--config", str(path))
    assert listing.out.splitlines()[:2] == [
        "old: managed, command `old-mcp`", "  not on Acme's approved list (managed by the organization)"]
    check = await omb("check", "--config", str(path), "old")
    assert check.code == 1 and check.out.splitlines()[0] == "Not connected: 'old' is not on Acme's approved list"


# -- check ----------------------------------------------------------------------------------


async def test_check_turns_an_entry_on_and_says_so(config: Path, npm: Any) -> None:
    entry = npm.everything_entry()
    await omb("add", "--config", str(config), "--no-check", stdin=json.dumps({"mcpServers": {"everything": entry}}))
    run = await omb("check", "--config", str(config), "everything")
    assert run.code == 0, run.err
    first, rest = run.out.splitlines()[0], run.out.splitlines()[1:]
    assert first.startswith("Connected: ") and first.endswith(" tools")
    assert rest == ["'everything' is on."]
    assert "enabled" not in servers_of(config)["everything"]
    again = json.loads((await omb("check", "--config", str(config), "--json", "everything")).out)
    assert again["ok"] and again["enabled"] and again["headline"] == first


async def test_check_of_an_unknown_name(config: Path) -> None:
    run = await omb("check", "--config", str(config), "nothing")
    assert (run.code, run.out, run.err) == (2, "", "omb-sidecar: there is no server named 'nothing'\n")


async def test_a_failing_check_of_an_entry_that_was_on(config: Path) -> None:
    document = json.loads(config.read_text())
    document["mcpServers"]["broken"] = {"command": sys.executable, "args": ["-c", "raise SystemExit(5)"]}
    config.write_text(json.dumps(document))
    run = await omb("check", "--config", str(config), "broken")
    assert (run.code, run.out.splitlines()) == (1, [
        "Not connected: it stopped (exit code 5) before it finished the handshake",
        "'broken' is left out of bots' tools until it passes; the HTTP front tries it again at start and every "
        "30 minutes; `omb-sidecar check broken` tries it now.",
    ])
    assert "enabled" not in servers_of(config)["broken"]  # a failure never switches an entry off
    health = json.loads((config.parent / "mcp-health.json").read_text())
    assert health["broken"]["ok"] is False and health["broken"]["announced"] is False


async def test_check_of_an_entry_with_blanks_starts_nothing(config: Path) -> None:
    await omb("add", "--config", str(config), "--no-check",
              stdin='claude mcp add --transport http docs https://mcp.example.com/mcp -H "Authorization: Bearer $T"')
    run = await omb("check", "--config", str(config), "docs")
    assert (run.code, run.out.splitlines()) == (1, [
        "Not connected: it still needs a value for header Authorization",
        "'docs' stays off until they are filled: `omb-sidecar servers edit docs`.",
    ])
    assert not (config.parent / "mcp-health.json").exists()


# -- servers --------------------------------------------------------------------------------


async def test_list_show_edit_off_remove(config: Path) -> None:
    paste = 'claude mcp add --transport http docs https://mcp.example.com/mcp -H "X-Key: kept-value" -H "X-Old: old"'
    await omb("add", "--config", str(config), "--no-check", stdin=paste)
    listing = await omb("servers", "--config", str(config))
    assert listing.out.splitlines() == [
        "notes: on, command `npx -y @example/notes-mcp`", "  env: TOKEN",
        "docs: off, Streamable HTTP https://mcp.example.com/mcp", "  headers: X-Key, X-Old",
    ]
    shown = json.loads((await omb("servers", "show", "docs", "--config", str(config))).out)
    assert shown == {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"X-Key": "", "X-Old": ""},
                     "enabled": False}
    shown["headers"] = {"X-Key": "", "X-New": "new-value"}  # X-Key kept, X-Old removed, X-New added
    edit = await omb("servers", "edit", "docs", "--no-check", "--config", str(config), stdin=json.dumps(shown))
    assert edit.code == 0 and edit.out == "Saved 'docs': off until it passes a check.\n"
    assert servers_of(config)["docs"]["headers"] == {"X-Key": "kept-value", "X-New": "new-value"}
    bad = await omb("servers", "edit", "docs", "--no-check", "--config", str(config),
                    stdin=json.dumps({**shown, "headers": {"Bad Header": "x"}}))
    assert bad.code == 2 and "'Bad Header' is not a valid HTTP header name" in bad.err
    assert servers_of(config)["docs"]["headers"] == {"X-Key": "kept-value", "X-New": "new-value"}
    assert (await omb("servers", "off", "notes", "--config", str(config))).out == "'notes' is off.\n"
    assert servers_of(config)["notes"]["enabled"] is False
    removed = await omb("servers", "remove", "docs", "--config", str(config))
    assert removed.out == "Removed 'docs' and its saved keys.\n" and "docs" not in servers_of(config)
    as_json = json.loads((await omb("servers", "list", "--json", "--config", str(config))).out)
    assert as_json == [{"name": "notes", "state": "off", "kind": "command", "env": ["TOKEN"], "headers": [],
                        "needs": [], "command": "npx", "args": ["-y", "@example/notes-mcp"]}]


async def test_health_with_nothing_due(config: Path) -> None:
    run = await omb("servers", "health", "--config", str(config))
    assert (run.code, run.out) == (0, "No check is due.\n")


def test_write_only_merge_and_form() -> None:
    saved = {"command": "x", "env": {"A": "a1", "B": "b1", "C": "c1"}, "headers": {}}
    edited = {"command": "y", "env": {"A": "", "B": "b2", "D": ""}}
    assert merge_write_only(saved, edited) == {"command": "y", "env": {"A": "a1", "B": "b2", "D": ""}}
    assert edit_form({"env": {"A": "secret"}, "headers": {"H": "v"}, "args": ["z"]}) == {
        "env": {"A": ""}, "headers": {"H": ""}, "args": ["z"]}
    saved_args = {"command": "x", "args": ["--api-key", "k-1", "--token=t-2", "--name", "n", "--key", ""]}
    form = edit_form(saved_args)
    assert form["args"] == ["--api-key", "[hidden]", "--token=[hidden]", "--name", "n", "--key", ""]
    form["args"] = [*form["args"][:3], "--name", "m", "--key", "filled", "--extra"]
    assert merge_write_only(saved_args, form)["args"] == [
        "--api-key", "k-1", "--token=t-2", "--name", "m", "--key", "filled", "--extra"]


def test_a_config_behind_a_symlink_is_written_in_place(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with ConfigFile(link).edit() as document:
        document["mcpServers"] = {}
    assert link.is_symlink() and json.loads(real.read_text()) == {"mcpServers": {}}


# -- the canary sweep -----------------------------------------------------------------------


def forms(secret: str) -> set[str]:
    raw = secret.encode()
    return {secret, json.dumps(secret)[1:-1], urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret),
            base64.b64encode(raw).decode().rstrip("="), base64.urlsafe_b64encode(raw).decode().rstrip("=")}


@pytest.mark.skipif(importlib.util.find_spec("sidecar.upstream.http") is None,
                    reason="sidecar.upstream.http (the Streamable HTTP channel) is not in this build")
async def test_canary_values_appear_in_nothing_a_command_prints(
    tmp_path: Path, fault_server_path: Path, serve_http: Callable[..., Any]
) -> None:
    canaries = {"canary-hdr-Zq81x", "canary-env-Kp42y", "canary-pass-Mw3z", "canary-docker-Xy9w", "canary-edit-Lr5v",
                "canary-json-Tt7u"}
    spec, url = await serve_http(key="the-right-key")  # it echoes any wrong key it gets in its 401 body
    leaky = ("import os, sys\nsys.stderr.write(repr(dict(os.environ)))\nprint(os.environ.get('LEAK', ''))\n"
             "sys.stdout.flush()\nsys.exit(1)\n")
    path = tmp_path / "sidecar.json"
    pastes = [
        f'claude mcp add --transport http web {url} --header "X-Api-Key: canary-hdr-Zq81x"',
        f"LEAK=canary-env-Kp42y {sys.executable} -c {json.dumps(leaky)}",
        f"claude mcp add fine -e OWN=canary-pass-Mw3z -- {sys.executable} {fault_server_path}",
        "docker run -i --rm -e TOKEN=canary-docker-Xy9w mcp/thing",
    ]
    runs = [await omb("add", "--config", str(path), "--log-level", "DEBUG", stdin="\n".join(pastes))]
    runs.append(await omb("add", "--config", str(path), "--json", "--log-level", "DEBUG",
                          stdin=json.dumps({"mcpServers": {"j": {"url": url, "headers": {"X-Api-Key": "canary-json-Tt7u"}}}})))
    for argv in (["servers"], ["servers", "--json"], ["servers", "show", "web"], ["check", "web"],
                 ["check", "--json", "web"], ["check", "leak"], ["check", "fine"], ["servers", "health", "--all"],
                 ["servers", "health"]):
        runs.append(await omb(*argv, "--config", str(path), "--log-level", "DEBUG"))
    form = {"headers": {"X-Api-Key": "canary-edit-Lr5v"}, "type": "http", "url": url}
    runs.append(await omb("servers", "edit", "web", "--config", str(path), "--log-level", "DEBUG", stdin=json.dumps(form)))
    runs.append(await omb("check", "web", "--config", str(path), "--log-level", "DEBUG"))

    said = "\n".join(f"{r.out}\n{r.err}" for r in runs)
    assert "Added 'web'" in said and "refused the keys (HTTP 401): check the headers X-Api-Key" in said
    assert "Connected: 21 tools" in said  # the sweep saw real work, not only refusals
    saved = path.read_text() + (tmp_path / "mcp-health.json").read_text()
    assert "canary-edit-Lr5v" in saved  # the values are kept (0600), and only there
    assert {"canary-hdr-Zq81x", "canary-json-Tt7u", "canary-edit-Lr5v"} <= set(spec.seen_keys)
    leaks = sorted(f for c in canaries for f in forms(c) if f in said)
    assert leaks == []
    assert "canary" not in (tmp_path / "mcp-health.json").read_text()

