"""A face: what the engine sees as one MCP server, and the routing behind it.

Owns the face's catalog and listing (rebuilt whenever an upstream changes, with
`list_changed` sent only when what the engine sees really changed), the routing of
resources, prompts and completions by name or URI, and the relay of upstream
notifications and requests to the engine sessions, configured secrets hidden in them.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from sidecar.catalog import (
    Catalog,
    LiveCatalog,
    ToolCaps,
    ToolsEncoding,
    UpstreamListing,
    UpstreamTraits,
    build_catalog,
    build_listing,
    choose_layout,
    name_budget,
)
from sidecar.catalog.facts import ServerFacts, facts_for
from sidecar.catalog.live import ReadsLive
from sidecar.config import ServerConfig, SidecarConfig
from sidecar.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, EngineInputError
from sidecar.features import listable
from sidecar.gate import QUERY_RESULT_TOOL, Gate
from sidecar.gate.route import scrub_answer
from sidecar.hub.notices import UPDATED, NoticeFaults, cancel_relayed, decoded, subscribers, updated_uri
from sidecar.hub.session import CAPABILITY_OF_REQUEST, EngineSession
from sidecar.hub.tasks import RELATED_TASK, TaskTable
from sidecar.hub.url_elicitations import COMPLETE, UrlElicitations, url_mode
from sidecar.settings import process_settings
from sidecar.upstream import Connection, Pool, Upstream, lifecycle
from sidecar.wire import UpstreamFrame

__all__ = ["Face", "RESOURCE_NOT_FOUND"]

log = logging.getLogger(__name__)

RESOURCE_NOT_FOUND = -32002
RESERVED_TOOL_NAMES = frozenset({"find_tool", "use_tool", "query_result", "mcp_search_tools",
                                 "mcp_describe_tool", "mcp_call_tool"})  # the sidecar's own tools
_RELATED_BYTES = RELATED_TASK.encode()
_TEMPLATE_PART = re.compile(r"\{[^}]*\}")


def _template_pattern(template: str) -> re.Pattern[str]:
    """A URI template as a regex: each `{...}` matches any run of characters."""
    parts = _TEMPLATE_PART.split(template)
    return re.compile(".+?".join(re.escape(p) for p in parts) + r"\Z", re.DOTALL)


# A bigger page is encoded again at each list instead of held at rest (425 tools: 1.2 MB
# held, against about 0.6 ms to encode them again; an engine lists at start and on changes).
KEPT_PAGE_BYTES = 256 * 1024


class Face(ReadsLive):
    """The hub of one face. It is given its pool, gate and catalog holder (built together
    by `sidecar.hub.assemble.build_face`) and listens to the pool from here on."""

    def __init__(self, config: SidecarConfig, pool: Pool, gate: Gate, live: LiveCatalog,
                 environ: Mapping[str, str] | None = None, tracer: Any = None) -> None:
        self.config = config
        self.name = config.face.name
        self.sessions: list[EngineSession] = []
        self.pool, self.gate, self.live = pool, gate, live
        # a big listing's trust work in slices first; first starts that arrive together, one rebuild
        pool.listen(self, self._upstream_changed, self._prepare, self._take_in)
        self.plan = choose_layout(config, process_settings().environ if environ is None else environ)
        self.traits = [
            UpstreamTraits(s.alias, s.type, s.builtin, tuple(s.always_listed), tuple(s.direct_only))
            for s in config.servers
        ]
        log.info("face '%s': layout %s (%s)", self.name, self.plan.name, self.plan.why)
        self._resource_owner: dict[str, str] = {}
        self._templates: list[tuple[re.Pattern[str], str]] = []
        self._pages: dict[tuple[int, int], bytes] = {}
        self._encodings: dict[str, tuple[list[dict[str, Any]], ToolsEncoding]] = {}  # alias -> (its tools, theirs)
        self.closing = False  # set at shutdown: no more notifications to the engine
        self.stateless_scope = object()  # held results of 2026-07-28 requests live here
        self.watchers: list[Callable[[Upstream], None]] = []  # told of every upstream change (health schedule)
        self.tracer: Any = tracer  # a sidecar.gate.observers.tracing.Tracing when traces are on
        self.tasks = TaskTable()  # the tasks engine sessions made, by the upstream that owns each
        self.url_elicitations = UrlElicitations()  # who was asked each URL-mode question, for its completion
        self.notice_faults = NoticeFaults()  # upstream notifications that could not be handled, by upstream
        self.first_page_seen: Callable[[bytes], None] | None = None  # told the first page one listed (once)
        self._started = time.monotonic()
        self.rebuild()

    def close(self) -> None:
        """The sidecar is stopping: no more notifications or rebuilds for the engines."""
        self.closing = True

    # -- servers joining and leaving (the health schedule) ----------------------------

    def mount(self, server: ServerConfig) -> None:
        """Start one more upstream; its tools join with list_changed once it is ready. Its
        facts (budget, secrets, pinning, deadline) join the snapshot now, before any of its
        tools can be listed: the same door as at start."""
        if all(t.alias != server.alias for t in self.traits):
            self.traits.append(UpstreamTraits(server.alias, server.type, server.builtin,
                                              tuple(server.always_listed), tuple(server.direct_only)))
        self.pool.add(server)
        self._upstream_changed(None)  # the face's own change: rebuilt, and said if the engine sees a change

    async def unmount(self, alias: str) -> None:
        """Stop one upstream; its tools leave with list_changed, the others are untouched."""
        await self.pool.remove(alias)
        self.traits = [t for t in self.traits if t.alias != alias]
        self._upstream_changed(None)  # its facts leave the snapshot too (its tools left when it stopped)

    # -- catalog ----------------------------------------------------------------

    def _upstream_changed(self, upstream: Upstream | None) -> None:
        """One upstream's news, or None: the face's own change (pins, a mount)."""
        self._take_in(() if upstream is None else (upstream,))

    def _take_in(self, upstreams: Sequence[Upstream]) -> None:
        """Changes of `upstreams` (each told to the watchers), then one rebuild, and a
        list_changed for each list the engine sees changed."""
        if self.closing:
            return
        for upstream in upstreams:
            for watcher in self.watchers:
                watcher(upstream)
        before_tools, before_prompts = self.listing.tools, self.catalog.prompts
        before_resources = dict(self._resource_owner)
        self.rebuild()
        if self.listing.tools != before_tools:
            self._broadcast("notifications/tools/list_changed")
        if self.catalog.prompts != before_prompts:
            self._broadcast("notifications/prompts/list_changed")
        if self._resource_owner != before_resources:
            self._broadcast("notifications/resources/list_changed")

    def rebuild(self) -> None:
        facts = self._facts_now()  # swapped below with the catalog, in one step
        mounted = (facts or self.live.facts).servers
        ready = self.pool.ready()
        listings = self.gate.trust.screen(self._listings())  # pinned definitions and the poisoning scan (issue 16)
        bare = self.config.face.bare_names and len(self.config.servers) == 1
        budgets = self.config.budgets
        caps = ToolCaps(budgets.tool_description_chars, budgets.tool_schema_bytes)
        catalog = build_catalog(listings, name_budget(self.name), RESERVED_TOOL_NAMES, prefixed=not bare, caps=caps)
        granted = self._granted(catalog)
        # the face's own tool comes with the first server mounted, at start or later
        own_tools = [QUERY_RESULT_TOOL] if mounted and listable(QUERY_RESULT_TOOL["name"]) else []
        listing = build_listing(granted, self.traits, self.plan, face_tools=own_tools)
        if listing.notes != self.listing.notes:
            for note in listing.notes:
                log.info("face '%s': %s", self.name, note)
        self.live.swap(catalog, listing, facts)
        self._pages.clear()
        self._index_resources(ready)

    async def _prepare(self, alias: str, tools: list[dict[str, Any]]) -> None:
        """A new tool listing's trust work (`Trust.prepare`); while its first-sight pins are
        written in their thread (the loop would only wait: a 425-tool listing's pins, about
        9 ms with the fsyncs), what the rebuild reads of its encoding is made, so the
        rebuild that lists it does not make it after the write."""
        await self.gate.trust.prepare(alias, tools, meanwhile=lambda: self._encoding(alias, tools))

    def _encoding(self, alias: str, tools: list[dict[str, Any]]) -> ToolsEncoding:
        """What the merge reads of `tools`' encoding, made once per listing read (kept for
        `_listings` while `tools` is still the upstream's listing)."""
        kept = self._encodings.get(alias)
        if kept is not None and kept[0] is tools:
            return kept[1]
        encoding = ToolsEncoding.of(msgspec.json.encode(tools))
        self._encodings[alias] = (tools, encoding)
        return encoding

    def _listings(self) -> list[UpstreamListing]:
        """Each listed upstream's lists, with what the merge reads of its tools' encoding:
        encoded once per listing read, the bytes then let go (1.4 MB for 425 tools at rest)."""
        listed = self.pool.listed()
        for u in listed:
            self._encoding(u.alias, u.listing.tools)
        # only the listed upstreams' (one being prepared now makes its own again, if it was let go)
        self._encodings = {u.alias: self._encodings[u.alias] for u in listed}
        return [UpstreamListing(u.alias, u.listing.tools, u.listing.prompts, self._encodings[u.alias][1])
                for u in listed]

    def _facts_now(self) -> ServerFacts | None:
        """A new snapshot when the mounted set is not the one the holder's snapshot was made
        for; else None (a listing change costs no rebuild of the facts: building them
        hashes every form of every secret)."""
        mounted = [u.config for u in self.pool]
        held = self.live.facts.servers
        if len(mounted) == len(held) and all(held.get(server.alias) is server for server in mounted):
            return None
        return facts_for(self.config, mounted)

    def _granted(self, catalog: Catalog) -> Catalog:
        """The catalog less what the bot may not use: a tool it may not call is never listed."""
        grant = self.gate.grant
        if not grant.restricts:
            return catalog
        tools = tuple(e for e in catalog.tools if grant.allows(e.alias, e.name))
        return msgspec.structs.replace(catalog, tools=tools, by_tool={e.exposed: e for e in tools})

    def _index_resources(self, ready: list[Upstream]) -> None:
        owners: dict[str, str] = {}
        templates: list[tuple[re.Pattern[str], str]] = []
        for upstream in ready:
            for resource in upstream.listing.resources:
                uri = resource.get("uri")
                if isinstance(uri, str):
                    owners.setdefault(uri, upstream.alias)
            for template in upstream.listing.templates:
                pattern = template.get("uriTemplate")
                if isinstance(pattern, str):
                    templates.append((_template_pattern(pattern), upstream.alias))
        self._resource_owner, self._templates = owners, templates

    async def wait_for_first_start(self) -> None:
        """Hold a listing until upstreams settle, at most `listWaitSeconds` from start."""
        remaining = self._started + self.config.face.list_wait_seconds - time.monotonic()
        if remaining > 0 and not self.pool.settled():
            await self.pool.wait_first_start(None, remaining)
        await self.pool.wait_prepared()  # a first listing read in time is judged (in slices), then listed

    def tools_page(self, offset: int) -> bytes:
        """The encoded `tools/list` result from `offset` (cached until the next rebuild, when
        at most `KEPT_PAGE_BYTES`)."""
        if self.gate.trust.stale():  # a person approved held tools since: judge the listings again
            self._upstream_changed(None)
        size = self.config.face.page_size
        key = (offset, size)
        page = self._pages.get(key)
        if page is None:
            tools, following = self.listing.page(offset, size)
            result: dict[str, Any] = {"tools": tools}
            if following is not None:
                result["nextCursor"] = encode_cursor(following)
            page = msgspec.json.encode(result)
            if len(page) <= KEPT_PAGE_BYTES:
                self._pages[key] = page
        if offset == 0 and self.first_page_seen is not None:
            seen, self.first_page_seen = self.first_page_seen, None
            seen(page)
        return page

    def when_first_page(self, seen: Callable[[bytes], None]) -> None:
        """Tell `seen` the next page one this face lists (once)."""
        self.first_page_seen = seen

    def tools_pages(self, first: bytes | None = None) -> list[tuple[str | None, bytes]]:
        """Every page of the listing as an engine walks it: the cursor each is asked for
        with (None: page one) and its encoded result (`tools_page`). `first`: page one of
        this listing as the face just listed it (a 425-tool page is not encoded again)."""
        pages: list[tuple[str | None, bytes]] = []
        offset, cursor = 0, None
        while True:
            pages.append((cursor, first if offset == 0 and first is not None else self.tools_page(offset)))
            following = self.listing.page(offset, self.config.face.page_size)[1]
            if following is None:
                return pages
            offset, cursor = following, encode_cursor(following)

    def missing_upstreams(self) -> list[tuple[str, str]]:
        return [(u.alias, u.state) for u in self.pool if not lifecycle.is_ready(u.state)]

    # -- routing ------------------------------------------------------------------

    async def upstream_for_resource(self, uri: str) -> Upstream:
        """As `find_resource_upstream`, waiting first for upstreams still starting when no
        listing names the address yet (the one server offering resources so far may not be
        the one that owns it)."""
        if self._named_owner(uri) is None and not self.pool.settled():
            await self.pool.wait_first_start()
        return self.find_resource_upstream(uri)

    async def upstream_for_prompt(self, name: str) -> tuple[Upstream, str]:
        if name not in self.catalog.by_prompt and not self.pool.settled():
            await self.pool.wait_first_start(name.split("__", 1)[0] if "__" in name else None)
        return self.find_prompt_upstream(name)

    def _named_owner(self, uri: str) -> str | None:
        """The upstream whose resource listing or templates name `uri`, if one does."""
        alias = self._resource_owner.get(uri)
        return alias if alias is not None else next((a for pattern, a in self._templates if pattern.match(uri)), None)

    def find_resource_upstream(self, uri: str) -> Upstream:
        alias = self._named_owner(uri)
        if alias is None:
            offering = [u.alias for u in self.pool.ready() if "resources" in u.capabilities]
            alias = offering[0] if len(offering) == 1 else None
        upstream = self.pool.get(alias) if alias else None
        if upstream is None:
            raise EngineInputError(f"unknown resource '{uri}' at params.uri", code=RESOURCE_NOT_FOUND)
        return upstream

    def find_prompt_upstream(self, name: str) -> tuple[Upstream, str]:
        entry = self.catalog.by_prompt.get(name)
        upstream = self.pool.get(entry.alias) if entry else None
        if entry is None or upstream is None:
            raise EngineInputError(f"unknown prompt '{name}' at params.name", code=INVALID_PARAMS)
        return upstream, entry.name

    # -- from upstreams -------------------------------------------------------------

    def upstream_notification(self, conn: Connection, frame: UpstreamFrame) -> None:
        """Handle one notification from an upstream. A fault while handling it (params the
        sidecar cannot read, a handler's bug) ends that notification only: it is raised
        inside the connection's reader, where it would otherwise take the upstream down."""
        try:
            self._notification(conn, frame)
        except Exception as exc:
            self.notice_faults.failed(conn.alias, frame.method or "", exc)

    def _notification(self, conn: Connection, frame: UpstreamFrame) -> None:
        upstream = self.pool.get(conn.alias)
        if upstream is not None and upstream.notification(conn, frame):
            return
        method = frame.method or ""
        if method == "notifications/message":
            self._broadcast(method, self._clean(decoded(frame.params)))
        elif method == UPDATED:
            self._relay_updated(decoded(frame.params))
        elif method == "notifications/cancelled":
            cancel_relayed(self.sessions, conn, frame.params, self._clean)
        elif method == "notifications/tasks/status":
            self._relay_task_status(conn, frame)
        elif method == COMPLETE:
            self._relay_url_completed(conn, frame)

    def _relay_updated(self, params: Any) -> None:
        """A resource changed: told to the sessions that asked for that URI, only."""
        uri = updated_uri(params)
        if uri is not None:
            for session in subscribers(self.sessions, uri):
                session.notify(UPDATED, self._clean(params))

    def watched_by_another(self, uri: str, session: EngineSession) -> bool:
        """Whether a session other than `session` asks for updates of `uri`."""
        return any(other is not session for other in subscribers(self.sessions, uri))

    def _relay_url_completed(self, conn: Connection, frame: UpstreamFrame) -> None:
        """A URL-mode elicitation finished: told to the session that was asked it, only."""
        found = self.url_elicitations.completed(conn.alias, frame.params)
        if found is not None and found[0] in self.sessions:
            found[0].notify(COMPLETE, self._clean(found[1]))

    def _relay_task_status(self, conn: Connection, frame: UpstreamFrame) -> None:
        """A task's status, to the session that made it only, under the engine's id."""
        try:
            params = msgspec.json.decode(frame.params) if frame.params else None
        except msgspec.DecodeError:
            return
        if not isinstance(params, dict) or (record := self.tasks.by_upstream(conn.alias, params.get("taskId"))) is None:
            return
        for session in self.sessions:
            if session.held_scope == record.owner:
                session.notify("notifications/tasks/status", self._clean({**params, "taskId": record.exposed_id}))

    def upstream_request(self, conn: Connection, frame: UpstreamFrame) -> None:
        """Relay one server->client request. A fault while relaying it ends that request
        only, with an error answer: it is raised inside the connection's reader, where it
        would otherwise take the whole upstream down."""
        assert frame.id is not None and frame.method is not None
        try:
            self._relay(conn, frame)
        except Exception as exc:
            self._relay_failed(conn, frame.id, frame.method, exc)

    def _relay_failed(self, conn: Connection, ident: int | str, method: str, exc: Exception) -> None:
        """The request's kind of fault is logged (never its words or params: they may hold
        secrets); a relay it had begun is forgotten; the upstream hears one error answer."""
        log.warning("upstream '%s': relaying its %s failed (%s); that request was answered with an error",
                    conn.alias, method, type(exc).__name__)
        log.debug("the relay failed with this traceback", exc_info=exc)
        for session in self.sessions:
            for engine_id, (owner, upstream_id) in session.relayed.items():
                if owner is conn and upstream_id == ident:
                    session.relayed.release(engine_id)
        conn.respond_error(ident, INTERNAL_ERROR, f"the sidecar could not relay {method} to the client")

    def _relay(self, conn: Connection, frame: UpstreamFrame) -> None:
        assert frame.id is not None and frame.method is not None
        if frame.method == "ping":
            conn.respond(frame.id, {})
            return
        capability = CAPABILITY_OF_REQUEST.get(frame.method)
        if capability is None:
            conn.respond_error(frame.id, METHOD_NOT_FOUND, f"the sidecar does not relay {frame.method}")
            return
        from sidecar.hub.question_links import linked_session  # an upstream's first question loads it

        session = linked_session(conn, frame.params, self.sessions, capability) or self._asker_for(conn, capability)
        if session is None:
            conn.respond_error(frame.id, METHOD_NOT_FOUND, f"the client did not declare the {capability} capability")
            return
        if frame.method == "elicitation/create" and not session.declared_url_elicitation() and url_mode(frame.params):
            conn.respond_error(frame.id, METHOD_NOT_FOUND, "the client did not declare the elicitation capability's URL mode")
            return
        scrub = self.gate.answers  # what reaches the engine hides configured secrets, as answers do
        params = scrub_answer(frame.params, scrub) if scrub and frame.params else frame.params
        if params and len(self.tasks) and _RELATED_BYTES in bytes(params):
            params = self._task_question(conn.alias, params)
        if frame.method == "elicitation/create":
            self.url_elicitations.asked(conn.alias, frame.params, session)  # its completion notice goes there
        session.relay_request(conn, frame.id, frame.method, params)

    def _task_question(self, alias: str, params: msgspec.Raw) -> msgspec.Raw:
        """A question asked for a task names it by the id the engine holds."""
        try:
            return msgspec.Raw(msgspec.json.encode(self.tasks.outward_related(alias, msgspec.json.decode(params))))
        except msgspec.DecodeError:
            return params

    def _asker_for(self, conn: Connection, capability: str) -> EngineSession | None:
        """The session to relay an upstream's request to: one with a call in flight on that
        connection (the call that asked, as far as stdio lets us know), else any that
        declared the capability."""
        calling = [s for s in self.sessions
                   if any(sent is not None and sent[0] is conn for sent in s.in_flight.values())]
        # A call already waiting on an answer to this upstream's question is blocked there;
        # the new question is another call's (stdio links no server request to its call).
        free = [s for s in calling if not any(owner is conn for _, (owner, _) in s.relayed.items())]
        if free and not any(s.declared(capability) for s in free):
            return None  # the calls that can be asking did not declare it: refused, not queued behind another call
        able = [s for s in self.sessions if s.declared(capability)]
        waiting = [s for s in able if s in calling]
        chosen = [s for s in free if s.declared(capability)] or waiting or [s for s in able if not s.call_bound]
        return chosen[0] if chosen else None

    def _clean(self, value: Any) -> Any:
        return self.gate.answers.clean(value) if self.gate.answers else value

    def _broadcast(self, method: str, params: Any = None) -> None:
        for session in self.sessions:
            session.notify(method, params)


def encode_cursor(offset: int) -> str:
    return f"o{offset}"


def decode_cursor(cursor: object) -> int:
    if isinstance(cursor, str) and cursor[:1] == "o" and cursor[1:].isdigit():
        return int(cursor[1:])
    raise EngineInputError("invalid cursor at params.cursor", code=INVALID_PARAMS)
