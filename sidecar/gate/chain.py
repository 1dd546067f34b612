"""The gate: the single ordered path every tool call takes.

A stage is `async (call, call_next) -> ToolCall`; it ends a call by finishing the record
(completed or failed), never by raising. The chain:

    record -> resolve -> grant -> policy -> budget -> call (upstream route or local answer)

`record` wraps everything so it sees the final outcome; `budget` wraps the call so it
charges whatever came back. A direct call, `use_tool`, a trio's call tool and
`query_result` all take this one path.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import msgspec

from sidecar.catalog import EMPTY_CATALOG, Catalog, CatalogEntry, Listing, full_layout
from sidecar.config import ServerConfig, SidecarConfig
from sidecar.errors import SidecarError
from sidecar.gate.audit import AuditLog
from sidecar.gate.budget import charge_result
from sidecar.gate.call import ToolCall
from sidecar.gate.grants import Grant
from sidecar.gate.held import HeldStore
from sidecar.gate.policy import CallView, Decision, PolicyEngine
from sidecar.gate.query import QueryLimits
from sidecar.gate.route import answer_locally, answer_redactor, route_upstream, tool_error, unknown_tool
from sidecar.gate.store import SharedHeldStore
from sidecar.gate.trust import Trust
from sidecar.redact import Redactor
from sidecar.upstream import Pool

__all__ = ["Gate", "Observer", "Stage", "Next", "QUERY_RESULT", "QUERY_RESULT_TOOL", "compose"]

log = logging.getLogger(__name__)

Next = Callable[[ToolCall], Awaitable[ToolCall]]
Stage = Callable[[ToolCall, Next], Awaitable[ToolCall]]
Observer = Callable[[ToolCall], None]  # sees each finished call in the record stage (metrics, traces)
QUERY_RESULT = "query_result"
QUERY_RESULT_TOOL: dict[str, Any] = {
    "name": QUERY_RESULT,
    "description": (
        "Read part of a large tool result that the sidecar is holding. When a result is too big to "
        "show whole, you get its shape, its first records and a handle; pass that handle and a "
        "JMESPath expression (for example `items[?status=='open'].{id: id, title: title}` or "
        "`length(items)`) to get just what you need. Read-only."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "handle": {"type": "string", "description": "The handle from the shaped result."},
            "query": {"type": "string", "description": "A JMESPath expression over the held JSON."},
        },
        "required": ["handle", "query"],
    },
    "annotations": {"readOnlyHint": True},
}
LARGE_RESULT = 1 << 20  # charged in a worker thread above this size
_META_CALLS = ("use_tool", "call_tool")


async def _end_of_chain(call: ToolCall) -> ToolCall:
    return call


def compose(stages: Sequence[Stage]) -> Next:
    """Bind each stage to the next once, so a call costs no closure per stage."""
    following: Next = _end_of_chain
    for stage in reversed(stages):
        following = _bind(stage, following)
    return following


def _bind(stage: Stage, following: Next) -> Next:
    async def bound(call: ToolCall) -> ToolCall:
        return await stage(call, following)

    return bound


class Gate:
    """Runs calls through the stages; the catalog and listing are swapped in as they change."""

    def __init__(self, config: SidecarConfig, pool: Pool, audit: AuditLog | None = None) -> None:
        self.config = config
        self.pool = pool
        self.catalog: Catalog = EMPTY_CATALOG
        self.listing: Listing = full_layout(EMPTY_CATALOG)
        self.grant = Grant(config.bot.selection, config.grants)
        self.policy = PolicyEngine(config.policy)
        self.held: HeldStore | SharedHeldStore = HeldStore(config.budgets.held_bytes_per_server)
        self.audit = audit or AuditLog(config.audit)
        self.limits = QueryLimits(config.budgets.query_seconds, config.budgets.query_depth)
        self.servers: dict[str, ServerConfig] = {s.alias: s for s in config.servers}
        self.redact = Redactor(config.secrets())
        self.answers = answer_redactor(config)  # secrets fit to hide in answers (redact.answer_secrets)
        budgets = [config.budgets.result_chars, *(s.result_chars for s in config.servers if s.result_chars)]
        self._smallest_budget = min(budgets)
        self.confirm: Any = None  # the confirmation stage, made on the first call that needs it
        self.trust = Trust(config.servers, self.audit, _pin_store(config), config.bot.id, config.face.name)
        self.observers: list[Observer] = []
        self._around_call: list[Stage] = []
        self._entry = compose(self.stages())

    def around_call(self, stage: Stage) -> None:
        """Add a stage right around the upstream call (a client span); none by default."""
        self._around_call.append(stage)
        self._entry = compose(self.stages())

    def observe(self, observer: Observer) -> None:
        """Add a watcher of finished calls; the record stage joins the chain only now, so a
        gate nobody watches pays nothing for it."""
        self.observers.append(observer)
        self._entry = compose(self.stages())

    def stages(self) -> list[Stage]:
        """The chain in order; a stage with nothing to decide for this config is left out,
        so the hot path pays only for what is switched on."""
        chain: list[Stage] = []
        if self.audit.path is not None or self.observers or log.isEnabledFor(logging.DEBUG):
            chain.append(self.record)
        chain.append(self.resolve)
        if self.grant.restricts:
            chain.append(self.check_grant)
        if self.policy.active:
            chain.append(self.check_policy)
        return [*chain, self.charge, *self._around_call, self.call]

    async def run(self, call: ToolCall) -> ToolCall:
        try:
            return await self._entry(call)
        except SidecarError as exc:  # a stage broke its promise; the call still ends once
            return call if call.outcome else call.fail(exc)

    def allowed(self, exposed: str) -> bool:
        entry = self.catalog.tool(exposed)
        return entry is not None and self.grant.allows(entry.alias, entry.name)

    # -- stages ---------------------------------------------------------------------

    async def resolve(self, call: ToolCall, call_next: Next) -> ToolCall:
        call.asked_for = call.name
        if call.name == QUERY_RESULT:
            call.local = "query_result"
            return await call_next(call)
        meta = self.listing.meta.get(call.name)
        if meta is None:
            entry = self.catalog.tool(call.name) or await self._after_first_start(call.name)
            if entry is None:
                return self._held_or_unknown(call, call.name)
            call.target = entry
            return await call_next(call)
        if meta.kind not in _META_CALLS:
            call.local = meta.kind  # type: ignore[assignment]
            return await call_next(call)
        return await self._resolve_through(call, call_next)

    async def _after_first_start(self, name: str) -> CatalogEntry | None:
        """A name of an upstream still on its first start: wait for it, then look again."""
        alias = name.split("__", 1)[0]
        if "__" not in name or not self.pool.starting(alias):
            return None
        await self.pool.wait_first_start(alias)
        return self.catalog.tool(name)

    async def _resolve_through(self, call: ToolCall, call_next: Next) -> ToolCall:
        from sidecar.catalog.answers import resolve_meta_call

        asked = call.arguments.get("name")
        call.via, call.asked_for = call.name, asked if isinstance(asked, str) else ""
        resolved = resolve_meta_call(self.listing, call.name, call.arguments)
        meta = self.listing.meta[call.name]
        exposed = meta.targets.get(call.asked_for)
        if exposed is None or self.catalog.tool(exposed) is None:
            return self._held_or_unknown(call, call.asked_for, call.name)
        if isinstance(resolved, str):
            call.decide("resolve", "refuse", resolved)
            return call.complete(tool_error(resolved))
        target_name, inner = resolved
        call.target = self.catalog.tool(target_name)
        if call.target is None:
            return call.fail(unknown_tool(call.asked_for))
        call.arguments = inner
        return await call_next(call)

    def _held_or_unknown(self, call: ToolCall, name: str, via: str = "") -> ToolCall:
        """A held tool the bot may use is answered with how to review it; else unknown.
        Through an upstream's own `<alias>__call_tool`, its own tool names count too."""
        alias = via[: -len("__call_tool")] if via.endswith("__call_tool") else ""
        held_as = next((n for n in (name, f"{alias}__{name}" if alias else "") if self.trust.held_target(n)), name)
        held = self.trust.held_target(held_as)
        if held is not None and self.grant.allows(*held):
            words = self.trust.held_answer(held_as) or ""
            call.decide("trust", "hold", words)
            return call.complete(tool_error(words))
        signin = self._needs_sign_in(name)
        if signin:
            call.decide("resolve", "refuse", signin)
            return call.complete(tool_error(signin))
        return call.fail(unknown_tool(name))

    def _needs_sign_in(self, name: str) -> str:
        """Words for a call to a tool of a server that left the list to wait for a sign-in:
        the server by its alias prefix, only when the bot may use that server at all."""
        alias = name.partition("__")[0]
        upstream = self.pool.upstreams.get(alias) if "__" in name else None
        if upstream is None or upstream.state != "needs-sign-in":
            return ""
        if self.grant.servers is not None and alias not in self.grant.servers:
            return ""
        return f"upstream '{alias}' needs sign-in: a person runs `omb-sidecar signin {alias}`"

    async def check_grant(self, call: ToolCall, call_next: Next) -> ToolCall:
        target = call.target
        if target is not None and not self.grant.allows(target.alias, target.name):
            call.decide("grant", "deny")
            return call.fail(unknown_tool(call.asked_for))
        return await call_next(call)

    async def check_policy(self, call: ToolCall, call_next: Next) -> ToolCall:
        target = call.target
        if target is None or not self.policy.active:
            return await call_next(call)
        view = CallView(
            tool=call.ran, upstream=target.alias, arguments=_copy(call.arguments), bot=self.config.bot.id,
            engine=self.config.bot.engine, consequential=self._consequential(call), confirmation_required=False,
        )
        decision = await self._decide(call, view)
        if decision is None:  # the person is being asked (2026-07-28): the question is the result
            return call
        call.decide("policy", decision.action, decision.reason)
        if decision.action == "allow":
            return await call_next(call)
        if decision.action == "confirm":
            return call.complete(tool_error(f"Confirmation required: {decision.reason}. The call was not run."))
        return call.complete(tool_error(f"The sidecar's policy refused this call: {decision.reason or 'denied'}"))

    async def _decide(self, call: ToolCall, view: CallView) -> Decision | None:
        """The policy's decision; a call that needs a confirmation is first put to the
        person when the engine can ask (the confirmation stage, `sidecar.gate.confirm`)."""
        if call.confirmer is None or not self.policy.wants_confirmation(view):
            return await self.policy.decide(view)
        if self.confirm is None:
            from sidecar.gate.confirm import ConfirmStage

            self.confirm = ConfirmStage(self.config.policy, self.config.bot.id, self.config.face.name, self.redact)
        rule = self.policy.rule_for(view.tool)
        settled = await self.confirm.settle(call.confirmer, call.ran, view.upstream, call.arguments,
                                            rule.reason if rule is not None else "")
        call.decide("confirm", settled.outcome, settled.reason)
        if settled.outcome == "ask":
            assert settled.result is not None
            call.complete(msgspec.Raw(settled.result))
            return None
        if settled.outcome == "deny":
            return Decision("deny", settled.reason, "confirmation")
        return await self.policy.decide(view, confirmed=True)

    def _consequential(self, call: ToolCall) -> bool:
        assert call.target is not None
        server = self.servers.get(call.target.alias)
        if server is None:
            return False
        if call.target.name in server.consequential:
            return True
        hints = call.target.spec.get("annotations")
        return server.trust_destructive_hint and isinstance(hints, dict) and hints.get("destructiveHint") is True

    async def charge(self, call: ToolCall, call_next: Next) -> ToolCall:
        await call_next(call)
        if call.outcome != "completed" or call.result is None:
            return call
        size = len(call.result)
        if size <= self._smallest_budget:  # under every budget: untouched, undecoded, uncopied
            call.charge, call.bytes_in, call.bytes_out = "pass", size, size
            return call
        raw = bytes(call.result)
        alias = call.target.alias if call.target is not None else call.held_under
        server = self.servers.get(alias)
        budget = (server.result_chars if server and server.result_chars else None) or self.config.budgets.result_chars
        session, name = call.session, call.ran

        def hold(payload: bytes) -> str:
            return self.held.hold(session, alias or "sidecar", name, payload)

        if len(raw) > LARGE_RESULT:
            charged = await asyncio.to_thread(charge_result, raw, budget, self.config.budgets.binary_bytes, hold)
        else:
            charged = charge_result(raw, budget, self.config.budgets.binary_bytes, hold)
        call.result, call.charge, call.handle = charged.result, charged.kind, charged.handle
        call.bytes_in, call.bytes_out = charged.bytes_in, charged.bytes_out
        if call.handle is not None:
            await self._settle(call)
        return call

    async def _settle(self, call: ToolCall) -> None:
        """A shared store writes the held payload now; when it cannot, the model gets a
        clear error in place of the shape (the payload is never shown whole)."""
        from sidecar.gate.store import StoreUnavailable

        assert call.handle is not None
        try:
            await self.held.settle(call.handle)
        except StoreUnavailable as exc:
            call.handle, call.charge = None, "store_down"
            call.result = tool_error(f"The result was too large to show and could not be held: {exc.message}")
            call.bytes_out = len(call.result)

    async def call(self, call: ToolCall, call_next: Next) -> ToolCall:
        try:
            if call.target is not None:
                server = self.servers.get(call.target.alias)
                return await route_upstream(call, self.pool, server.call_deadline_seconds if server else None,
                                            self.answers)
            return await answer_locally(call, self.catalog, self.listing, self.held, self.allowed, self.limits)
        except SidecarError as exc:
            return call.fail(exc)

    async def record(self, call: ToolCall, call_next: Next) -> ToolCall:
        await call_next(call)
        self.audit.write({
            "bot": self.config.bot.id, "face": self.config.face.name,
            "upstream": call.target.alias if call.target else None, "tool": call.ran,
            "via": call.via, "outcome": call.outcome,
            "decisions": [{"stage": s, "action": a, "reason": self.redact(r)} for s, a, r in call.decisions],
            "bytesIn": call.bytes_in, "bytesOut": call.bytes_out, "charge": call.charge or None,
            "held": call.handle is not None, "ms": round(call.seconds * 1000, 2),
            "error": type(call.error).__name__ if call.error else None,
        })
        if log.isEnabledFor(logging.DEBUG):
            log.debug("call %s -> %s %s %s in %.1f ms", call.name, call.ran, call.outcome, call.charge, call.seconds * 1000)
        for observer in self.observers:
            try:
                observer(call)
            except Exception:  # a watcher's bug must not change the call's answer
                log.warning("a call observer failed", exc_info=log.isEnabledFor(logging.DEBUG))
        return call


def _pin_store(config: SidecarConfig) -> Any:
    """Pins live in the health file beside the config (none for a config never read from disk)."""
    if not any(s.pinning_policy != "off" for s in config.servers):
        return None
    from sidecar.mounts.health import HealthPins, health_file_for

    health = health_file_for(config)
    return HealthPins(health, config.servers) if health is not None else None


def _copy(arguments: dict[str, Any]) -> dict[str, Any]:
    import msgspec

    copied: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(arguments))
    return copied


