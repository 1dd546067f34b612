"""`omb-sidecar check NAME`, the "Test": start the command or reach the address, complete
the handshake, list the tools, and say plainly what happened.

Owns one bounded session per check: 8 s for a command (30 s for an address), at most
32 MB read, the command stopped afterwards (its whole process group), its environment the
upstream allow-list plus its own configured variables (the stdio channel's rule). When a
command fails, the last lines of its stderr come back (`stderr_tail`, control characters
stripped, redacted), so a person sees why it died (an npm package that does not exist). Refuses to start an entry that still has blanks to fill. Every
word it returns passes through a redactor holding the entry's header and env values.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import anyio
import msgspec

from sidecar.catalog.sanitize import ToolCaps, cap_tool
from sidecar.config import ServerConfig, SidecarConfig, rules
from sidecar.errors import (Refused, SidecarError, SignInNeeded, TimedOut, TooLarge, Unreachable, UpstreamError,
                            UpstreamUnavailable)
from sidecar.mounts.health import CheckResult, Outcome
from sidecar.redact import Redactor
from sidecar.upstream.channel import Channel
from sidecar.upstream.connection import Connection
from sidecar.upstream.handshake import handshake, read_listing
from sidecar.upstream.stdio import ChildProcess, spawn_child
from sidecar.upstream.transports import open_channel
from sidecar.wire import UpstreamFrame
from sidecar.wire.salvage import DroppedFrame

__all__ = ["CHECK_SECONDS", "READ_CAP", "CheckResult", "Outcome", "check_server", "last_lines", "poison_warnings",
           "refused", "tool_caps", "tool_warnings"]

log = logging.getLogger(__name__)

CHECK_SECONDS = {"stdio": 8.0, "http": 30.0, "sse": 30.0}
READ_CAP = 32 * 1024 * 1024
STOP_GRACE = 0.5  # a check owes a child no patience once it is done with it
PROBE_SECONDS = 5.0
STDERR_LINES = 8
STDERR_LINE_CHARS = 300
STDERR_DRAIN_SECONDS = 1.0
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def refused(name: str, outcome: Outcome, reason: str) -> CheckResult:
    """A check that never started (blanks to fill, not approved)."""
    return CheckResult(name=name, outcome=outcome, reason=reason)


class _Meter:
    """Counts every byte read from the upstream; past the cap, the connection is ended."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.total = 0
        self.over = False
        self.conn: Connection | None = None

    def _counted(self, size: int) -> bool:
        if self.over:
            return False
        self.total += size
        if self.total > self.cap:
            self.over = True
            if self.conn is not None:
                self.conn.lost(TooLarge(f"sent more than {self.cap // (1024 * 1024)} MB"))
        return not self.over and self.conn is not None

    # the Inbox the channel reports to (sidecar.upstream.channel)
    def feed(self, line: bytes) -> None:
        if self._counted(len(line) + 1) and self.conn is not None:
            self.conn.feed(line)

    def frame(self, frame: UpstreamFrame, size: int) -> None:
        if self._counted(size + 1) and self.conn is not None:
            self.conn.frame(frame, size)

    def dropped(self, notice: DroppedFrame) -> None:
        if self.conn is not None:
            self.conn.dropped(notice)

    def fault(self, ident: int | str, fault: UpstreamUnavailable) -> None:
        if self.conn is not None:
            self.conn.fault(ident, fault)


class _QuietPeer:
    """The check's answers to a server's own requests: ping and an empty roots list."""

    def upstream_notification(self, conn: Connection, frame: UpstreamFrame) -> None:
        return None

    def upstream_request(self, conn: Connection, frame: UpstreamFrame) -> None:
        if frame.id is None or isinstance(frame.id, bool):
            return
        if frame.method == "ping":
            conn.respond(frame.id, {})
        elif frame.method == "roots/list":
            conn.respond(frame.id, {"roots": []})
        else:
            conn.respond_error(frame.id, -32601, "not available while the server is being checked")


async def check_server(
    server: ServerConfig,
    *,
    tool_cap: int = 128,
    others: Mapping[str, Iterable[str]] | None = None,
    seconds: float | None = None,
    read_cap: int = READ_CAP,
    caps: ToolCaps | None = None,
    probe_calls: bool = False,
) -> CheckResult:
    """One bounded handshake and tool listing; never raises for the server's faults. With
    `probe_calls` (a person's check, never a background one) a URL server that lists its
    tools is also asked for calls, to find one that wants a sign-in only then."""
    needs = rules.missing_values(server.command, server.args, server.env, server.headers)
    if needs:
        return refused(server.alias, "needs-values", "it still needs a value for " + ", ".join(needs))
    limit = seconds if seconds is not None else CHECK_SECONDS[server.type]
    redact = Redactor(server.secrets())
    try:
        tools = await _session(server, limit, read_cap, probe_calls and server.type != "stdio")
    except _Failed as failure:
        result = await _explain(server, failure)
        log.info("check of '%s': %s", server.alias, result.outcome)
        return msgspec.structs.replace(result, reason=redact(result.reason),
                                       stderr_tail=[redact(line) for line in failure.stderr])
    names = [t["name"] for t in tools if isinstance(t.get("name"), str)]
    warnings = tool_warnings(len(tools), names, tool_cap, others or {}, server.alias)
    warnings += poison_warnings(server.alias, tools, others or {})
    cut = oversized_tools(tools, caps or ToolCaps())
    if cut:
        warnings.append(size_warning(cut, caps or ToolCaps()))
    log.info("check of '%s': connected, %d tools", server.alias, len(tools))
    return CheckResult(name=server.alias, outcome="connected", tools=len(tools), tool_names=names,
                       warnings=[redact(w) for w in warnings], cut_tools=cut,
                       definitions=tools)


def tool_caps(config: SidecarConfig) -> ToolCaps:
    """The per-tool size caps a config sets (`budgets.toolDescriptionChars`, `toolSchemaBytes`)."""
    return ToolCaps(config.budgets.tool_description_chars, config.budgets.tool_schema_bytes)


def oversized_tools(tools: list[dict[str, Any]], caps: ToolCaps) -> list[str]:
    """The names of the tools a listing would cut (a description or a schema over the caps)."""
    return [str(t.get("name")) for t in tools if cap_tool(t, caps)[1]]


def size_warning(cut: list[str], caps: ToolCaps) -> str:
    shown = ", ".join(cut[:5]) + (f" and {len(cut) - 5} more" if len(cut) > 5 else "")
    return (f"{len(cut)} of its tools are over the size limits (a description of {caps.description_chars} "
            f"characters, a schema of {caps.schema_bytes} bytes) and are cut in every listing: {shown}")


class _Failed(Exception):
    """Why a check ended without a listing: its kind, the words, and for a refusal its status;
    each decided by the type of the fault, never by its words."""

    def __init__(self, kind: str, words: str, *, status: int = 401, late: bool = False) -> None:
        super().__init__(words)
        self.kind = kind
        self.words = words
        self.status = status
        self.late = late  # unreachable because nothing answered in time
        self.stderr: list[str] = []


async def _session(server: ServerConfig, limit: float, read_cap: int, probe: bool = False) -> list[dict[str, Any]]:
    meter = _Meter(read_cap)
    channel: Channel | None = None
    finished = False
    try:
        with anyio.fail_after(limit):
            channel = await _open(server, meter, read_cap)
            conn = meter.conn = Connection(server.alias, channel, _QuietPeer())
            ended = channel.ended
            channel.gone.add_done_callback(lambda _: conn.lost(ended()))
            info = await handshake(conn, probe=server.type == "http")  # as the pool opens it
            listing = await read_listing(conn, info.capabilities, frozenset({"tools"}))
            if probe:
                from sidecar_admin.signin import calls_refused

                refusal = await calls_refused(conn, listing.tools)
                if refusal is not None:
                    raise _Failed("refused", f"it refused a tool call (HTTP {refusal.status})", status=refusal.status)
            finished = True
            return listing.tools
    except TimeoutError:
        failure = _Failed("timed-out", f"no answer within {limit:g} s; trying again may help")
        failure.stderr = await _stderr_of(channel)
        raise failure from None
    except SidecarError as exc:
        failure = _failure(exc, meter, await _end_words(channel, meter), server.type != "stdio")
        failure.stderr = await _stderr_of(channel)
        raise failure from None
    finally:
        if channel is not None:
            with anyio.CancelScope(shield=True):
                await _stop(channel, gently=finished)


async def _open(server: ServerConfig, meter: _Meter, read_cap: int) -> Channel:
    if server.type != "stdio":
        return await open_channel(server, meter)
    try:  # a command's lines are capped at the read cap too, so one endless line cannot grow past it
        return await spawn_child(server, meter.feed, read_cap)
    except OSError as exc:
        raise UpstreamUnavailable(f"its command could not be started ({exc.strerror or type(exc).__name__})") from None


async def _stop(channel: Channel, gently: bool) -> None:
    if isinstance(channel, ChildProcess) and not gently:
        await channel.stop(grace=STOP_GRACE)
    else:
        await channel.stop()


async def _end_words(channel: Channel | None, meter: _Meter) -> str | None:
    """How the upstream ended, if it did; a child's exit code is waited for a moment, since
    its stdout may close just before it exits."""
    conn = meter.conn
    if conn is None or conn.closed_reason is None or meter.over:
        return None
    if isinstance(channel, ChildProcess):
        with anyio.move_on_after(1.0):
            await channel.exited
        return channel.describe_end()
    return conn.closed_reason


async def _stderr_of(channel: Channel | None) -> list[str]:
    """A failed command's last stderr lines; a child that has exited gets a moment for its
    pipe to drain (a grandchild may hold it open, hence the bound)."""
    if not isinstance(channel, ChildProcess):
        return []
    if channel.exited.done():
        with anyio.move_on_after(STDERR_DRAIN_SECONDS):
            await channel.stderr_ended()
    return last_lines(channel.diagnostics())


def last_lines(text: str, keep: int = STDERR_LINES) -> list[str]:
    """The last `keep` non-blank lines, colour codes and control characters removed, each
    cut to STDERR_LINE_CHARS."""
    clean = _CONTROL.sub("", _ANSI.sub("", text))
    lines = [line.rstrip() for line in clean.splitlines() if line.strip()]
    return [line if len(line) <= STDERR_LINE_CHARS else line[:STDERR_LINE_CHARS] + "…" for line in lines[-keep:]]


def _failure(exc: SidecarError, meter: _Meter, closed: str | None, by_address: bool) -> _Failed:
    if meter.over:
        return _Failed("failed", f"it sent more than {meter.cap // (1024 * 1024)} MB before listing its tools; "
                                 "it was stopped")
    if isinstance(exc, SignInNeeded):  # by its type: the words are the person's to read
        return _Failed("sign-in", exc.detail)
    words = exc.message
    if by_address and isinstance(exc, Refused):
        return _Failed("refused", words, status=exc.status)
    if by_address and isinstance(exc, (Unreachable, TimedOut)):
        return _Failed("unreachable", words, late=isinstance(exc, TimedOut))
    if closed is not None and isinstance(exc, UpstreamUnavailable):
        return _Failed("failed", f"it {closed} before it finished the handshake")
    if isinstance(exc, UpstreamError):
        return _Failed("failed", f"its handshake failed: {words}")
    return _Failed("failed", words)


async def _explain(server: ServerConfig, failure: _Failed) -> CheckResult:
    name, kind = server.alias, failure.kind
    if kind == "sign-in":  # a `SignInNeeded`, by its type: signed in before, and that is not enough now
        return CheckResult(name=name, outcome="refused", reason=failure.words, sign_in=True)
    if kind == "refused":
        sign_in = await _points_to_sign_in(server)
        return CheckResult(name=name, outcome="refused", reason=_refusal(server, failure.status, sign_in),
                           sign_in=sign_in)
    if kind == "unreachable":
        where = _origin(server.url or "")
        how = "did not answer in time" if failure.late else "could not be reached"
        return CheckResult(name=name, outcome="unreachable", reason=f"{where} {how}; trying again may help")
    if kind == "timed-out":
        return CheckResult(name=name, outcome="timed-out", reason=failure.words)
    return CheckResult(name=name, outcome="failed", reason=failure.words)


def _refusal(server: ServerConfig, status: int, sign_in: bool) -> str:
    if server.headers:
        words = f"the server refused the keys (HTTP {status}): check the headers {', '.join(sorted(server.headers))}"
    else:
        words = f"the server refused the connection (HTTP {status}) and this entry sends no headers"
    if sign_in:
        words += "; it points to a sign-in (RFC 9728 protected resource metadata)"
    return words


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else "the server"


async def _points_to_sign_in(server: ServerConfig) -> bool:
    """Whether a refusing server names its sign-in: a `resource_metadata` challenge, or a
    protected resource metadata document at its well-known address (RFC 9728)."""
    if server.url is None:
        return False
    from sidecar_admin.signin import find_sign_in

    with anyio.move_on_after(PROBE_SECONDS):
        return await find_sign_in(server)
    return False


def poison_warnings(alias: str, tools: list[dict[str, Any]], others: Mapping[str, Iterable[str]]) -> list[str]:
    """One warning per tool the poisoning scan flags (such a tool is held until approved)."""
    from sidecar.trust.scan import foreign_names, scan_tool

    names = [t["name"] for t in tools if isinstance(t.get("name"), str)]
    foreign = foreign_names(alias, names, {a: list(n) for a, n in others.items()})
    found = []
    for tool in tools:
        rules_hit = sorted({f.rule for f in scan_tool(tool, foreign)})
        if rules_hit:
            found.append(f"tool '{tool.get('name')}' reads like instructions to the model ({', '.join(rules_hit)}): "
                         f"it is held until approved (`omb-sidecar servers review {alias}`)")
    return found


def tool_warnings(
    count: int, names: list[str], cap: int, others: Mapping[str, Iterable[str]], alias: str
) -> list[str]:
    """The cap warnings (over it, or half of it) and the names another server also offers."""
    warnings: list[str] = []
    if cap > 0 and count > cap:
        warnings.append(
            f"it alone has {count} tools, more than the {cap} an API-model bot takes in one turn: "
            "those bots reach its tools through a tool search"
        )
    elif cap > 0 and count * 2 >= cap:
        warnings.append(f"it has {count} tools, at least half of the {cap} an API-model bot takes in one turn")
    mine = set(names)
    for other, their_names in sorted(others.items()):
        if other == alias:
            continue
        shared = sorted(mine & set(their_names))
        if shared:
            shown = ", ".join(shared[:5]) + (f" and {len(shared) - 5} more" if len(shared) > 5 else "")
            warnings.append(f"its tool names collide with '{other}': {shown}")
    return warnings
