"""The bodies of the console's pages: servers, calls, held tools, add by paste.

Owns what each page says and which forms it offers. Takes data (rows, calls, changes,
check words) and returns HTML; every outside value goes through `Escape`. A header or
env value is never put on a page: the fill form's inputs are write-only (password
fields with no value), and entries are shown by names only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from sidecar.trust.pins import Change, Pin
from sidecar_admin import views
from sidecar_admin.console.pages import Escape, notice, post_form, table, when
from sidecar_admin.console.state import CallLine, ServerRow
from sidecar_admin.importer import ImportResult
from sidecar_admin.review import change_lines

__all__ = ["add_body", "calls_body", "fill_form", "held_body", "servers_body", "words_box"]

_STATE_CLASS = {"on": "ok", "off": "muted", "needs sign-in": "warn", "starting": "info", "restarting": "warn"}


def _path(name: str) -> str:
    return quote(name, safe="")


def words_box(esc: Escape, lines: Sequence[str], ok: bool) -> str:
    """What an act said (a check's words, an import's lines), as one box."""
    return notice("<br>".join(esc(line) for line in lines), "ok" if ok else "bad")


# -- servers --------------------------------------------------------------------------------


def servers_body(esc: Escape, csrf: str, rows: Sequence[ServerRow], gateway: bool, said: str = "") -> str:
    head = ["Server", "State", "Tools", "Last check", "Next check", *(["Bots"] if gateway else []), ""]
    cells = [_server_cells(esc, csrf, row, gateway) for row in rows]
    listing = table(head, cells, "servers") if rows else "<p>No servers are configured yet.</p>"
    return f'{said}{listing}<p><a href="/console/add">Add a server</a> by pasting what its page says to run.</p>'


def _server_cells(esc: Escape, csrf: str, row: ServerRow, gateway: bool) -> list[str]:
    css = _STATE_CLASS.get(row.state, "bad")
    state = f'<span class="state {css}">{esc(row.state)}</span>'
    if row.reason:
        state += f'<div class="why">{esc(row.reason)}</div>'
    act = post_form(f"/console/servers/{_path(row.name)}/test", csrf, "", "Test", css="inline")
    if row.needs:
        act += f' <a href="/console/servers/{_path(row.name)}/fill">Fill values</a>'
    if row.url:
        act += " " + post_form(f"/console/servers/{_path(row.name)}/signin", csrf, "", "Sign in", css="inline")
        act += " " + post_form(f"/console/servers/{_path(row.name)}/signout", csrf, "", "Sign out", css="inline")
    bots = [esc(", ".join(row.bots) or "none")] if gateway else []
    tools = esc(row.tools) if row.tools is not None else "—"
    return [f"<strong>{esc(row.name)}</strong>", state, tools, when(row.last_check), when(row.next_check), *bots, act]


# -- calls ----------------------------------------------------------------------------------


def calls_body(esc: Escape, lines: Iterable[CallLine], seen: int) -> str:
    rows = [[when(c.at), esc(c.tool), esc(c.bot), f'<span class="state {"ok" if c.outcome == "completed" else "bad"}">'
             f'{esc(c.outcome)}</span>', f"{c.ms:g} ms", f"{c.bytes_in} / {c.bytes_out}", "held" if c.held else "—"]
            for c in lines]
    listing = table(["When", "Tool", "Bot", "Outcome", "Took", "Bytes in / out", "Result held"], rows, "calls") if rows \
        else "<p>No call has passed since the sidecar started.</p>"
    return (f"<p>The last calls as they pass ({seen} since start; this page refreshes every few seconds). "
            f"Arguments and results are never shown.</p>{listing}")


# -- held tools -----------------------------------------------------------------------------

HeldServer = tuple[str, list[tuple[Change, dict[str, Any]]], Mapping[str, Pin]]  # alias, changes + tools, pins


def held_body(esc: Escape, csrf: str, servers: Sequence[HeldServer], said: str = "") -> str:
    if not servers:
        return f"{said}<p>No tool is held: every listed definition is as approved.</p>"
    parts = [said]
    for alias, changes, pins in servers:
        parts.append(f'<section class="held"><h2>{esc(alias)}</h2>')
        for change, tool in changes:
            parts.append(_change_block(esc, csrf, alias, change, tool, pins))
        every = post_form(f"/console/held/{_path(alias)}/approve", csrf, "", f"Approve every tool of {esc(alias)}")
        parts.append(f"{every}</section>")
    return "".join(parts)


def _change_block(esc: Escape, csrf: str, alias: str, change: Change, tool: dict[str, Any],
                  pins: Mapping[str, Pin]) -> str:
    lines = change_lines(change, pins, tool)
    diff = "".join(_diff_line(esc, line) for line in lines[1:])  # each line is its own block
    one = post_form(f"/console/held/{_path(alias)}/approve", csrf,
                    f'<input type="hidden" name="tool" value="{esc(change.tool)}">', f"Approve {esc(change.tool)}")
    return f'<article><h3>{esc(lines[0])}</h3><pre class="diff">{diff}</pre>{one}</article>'


def _diff_line(esc: Escape, line: str) -> str:
    body = line[2:] if line.startswith("  ") else line
    kind = "line"
    if body.startswith("+") and not body.startswith("+++"):
        kind = "line add"
    elif body.startswith("-") and not body.startswith("---"):
        kind = "line del"
    elif body.startswith("finding:"):
        kind = "line finding"
    return f'<span class="{kind}">{esc(line) or " "}</span>'



# -- add ------------------------------------------------------------------------------------


def add_body(csrf: str, said: str = "") -> str:
    field = ('<label for="paste">Paste a link, a <code>claude mcp add</code> line, an <code>npx</code>, '
             '<code>uvx</code> or <code>docker run</code> line, or an <code>mcpServers</code> block</label>'
             '<textarea id="paste" name="paste" rows="8" required spellcheck="false"></textarea>')
    return f"{said}{post_form('/console/add', csrf, field, 'Add', css='stack')}"


def import_box(esc: Escape, result: ImportResult) -> str:
    return words_box(esc, views.import_lines(result), bool(result.added))


def fill_form(esc: Escape, csrf: str, name: str, needs: Sequence[tuple[str, str]]) -> str:
    """The values a paste left out, write-only: typed in, never shown again."""
    if not needs:
        return f"<p>'{esc(name)}' has nothing left to fill.</p>"
    fields = "".join(
        f'<label for="v{i}">{esc(where)} {esc(key)}</label>'
        f'<input id="v{i}" name="v:{esc(where)}:{esc(key)}" type="password" autocomplete="off">'
        for i, (where, key) in enumerate(needs))
    return (f"<h2>Values for {esc(name)}</h2><p>What the paste left out. Values are saved to the config file "
            f"and never shown again.</p>"
            + post_form(f"/console/servers/{_path(name)}/fill", csrf, fields, "Save and test", css="stack"))
