"""The gate: the single ordered path every tool call takes, and its one ending.

The chain, each stage an object with its contract in its own module (`sidecar.gate.stages`):

    resolve -> grant -> policy -> charge -> [around_call...] -> run (upstream or local)

`charge` charges whatever the terminal brought back: with nothing between them it marks the
call and `Gate.run` charges it once the chain returns (no frame of its own waits while the
call is upstream); with `around_call` stages it wraps them and the terminal. A direct call, `use_tool`,
a trio's call tool and `query_result` all take this one path. `Gate.run` owns the
ending: whatever a stage does (returns without ending, raises a `SidecarError`, raises
anything else, or is cancelled) the call leaves it ended exactly once and recorded
exactly once (`sidecar.gate.observers.record`); a cancellation is recorded, then propagates.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Mapping, Sequence
from types import FunctionType, MethodType
from typing import Any

from sidecar.catalog import Catalog, Listing, LiveCatalog
from sidecar.catalog.facts import facts_for
from sidecar.catalog.live import LiveRedactor
from sidecar.config import ServerConfig, SidecarConfig
from sidecar.errors import CallCancelled, SidecarError
from sidecar.gate.observers.audit import AuditLog
from sidecar.gate.call import ToolCall
from sidecar.gate.inline import Started, stage_broke
from sidecar.gate.grants import Grant
from sidecar.gate.budget.held import HeldStore
from sidecar.gate.parts import GateParts, SharedState
from sidecar.gate.policy import PolicyEngine
from sidecar.gate.budget.query_meter import QueryLimits
from sidecar.gate.observers.record import Observer, Recorder
from sidecar.gate.stages.base import Current, Next, Stage
from sidecar.gate.budget.stage import LARGE_RESULT, ChargeResult
from sidecar.gate.stages.checks import CheckGrant, CheckPolicy
from sidecar.gate.stages.resolve import QUERY_RESULT, Resolve
from sidecar.gate.stages.terminal import RunCall
from sidecar.gate.budget.store import SharedHeldStore
from sidecar.trust.screen import Trust
from sidecar.redact import Redactor
from sidecar.upstream import Pool
from sidecar.wire.versions import MODERN_VERSION

__all__ = ["Gate", "GateParts", "LARGE_RESULT", "Observer", "Stage", "Next", "QUERY_RESULT", "QUERY_RESULT_TOOL", "compose"]

log = logging.getLogger(__name__)

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


async def _end_of_chain(call: ToolCall) -> ToolCall:
    return call


def compose(stages: Sequence[Stage]) -> Next:
    """Bind each stage to the next once, so a call costs no closure per stage."""
    first, following = _linked(stages)
    return _bind(first, following)


def _linked(stages: Sequence[Stage]) -> tuple[Stage, Next]:
    """The first stage and what follows it, bound (the chain runs as `first(call, following)`,
    with no binding frame around the first stage)."""
    following: Next = _end_of_chain
    for stage in reversed(stages[1:]):
        following = _bind(stage, following)
    return _step_of(stages[0]), following


def _step_of(stage: Stage) -> Stage:
    plain = isinstance(stage, (FunctionType, MethodType))
    return stage if plain else getattr(stage, "__call__")  # once, not per call


def _bind(stage: Stage, following: Next) -> Next:
    step = _step_of(stage)

    def bound(call: ToolCall) -> Awaitable[ToolCall]:  # plain: the stage's own coroutine, no frame around it
        return step(call, following)

    return bound


class Gate:
    """Owns the chain: builds the stages once from the config and the parts it is given
    (`GateParts`: the catalog holder, the shared store, observers), runs each call through
    them and ends it. The catalog and listing are read from `live`, the one holder the hub
    swaps them in (a gate alone gets an empty one)."""

    def __init__(self, config: SidecarConfig, pool: Pool, audit: AuditLog | None = None,
                 live: LiveCatalog | None = None, parts: GateParts = GateParts()) -> None:
        self.config = config
        self.pool = pool
        live = live if live is not None else parts.live
        live = live if live is not None else LiveCatalog(facts_for(config, config.servers))
        self.redact: Redactor = LiveRedactor(live, "logs")  # the mounted servers' secrets, as they are now
        self.answers: Redactor = LiveRedactor(live, "answers")  # fit to hide in answers (redact.answer_secrets)
        self.audit = audit or parts.audit or AuditLog(config.audit)
        self.grant = Grant(config.bot.selection, config.grants)  # per bot: the mounted set does not change it
        self.trust = Trust(config.servers, self.audit, _pin_store(config, live, parts.shared), config.bot.id,
                           config.face.name, live=live)
        self.current = Current(_held_store(config, parts.shared), live)
        self.recorder = Recorder(self.audit, config, self.redact)
        self.recorder.observers.extend(parts.observers)
        self.resolve = Resolve(self.current, pool, self.trust, self.grant)
        self.check_grant = CheckGrant(self.grant)
        spent = parts.shared.spent if parts.shared is not None else None
        self.check_policy = CheckPolicy(PolicyEngine(config.policy), config, self.current, self.redact,
                                        spent, parts.environ)
        if parts.shared is not None:  # a shared spent store: the stage is made now to carry it
            self.check_policy.confirm_stage()
        self.charge = ChargeResult(self.current, config.budgets)
        limits = QueryLimits(config.budgets.query_seconds, config.budgets.query_depth)
        self.call = RunCall(self.current, pool, self.grant, limits)
        self._around_call: list[Stage] = list(parts.around_call)
        self._build()

    @property
    def servers(self) -> Mapping[str, ServerConfig]:
        """The mounted servers' entries, as the current snapshot has them (read-only)."""
        return self.current.facts.servers

    # -- what the face and the fronts swap in or add ----------------------------------

    @property
    def catalog(self) -> Catalog:
        return self.current.catalog

    @catalog.setter
    def catalog(self, catalog: Catalog) -> None:  # a gate driven alone (tests); the hub swaps `live`
        self.current.live.swap(catalog, self.current.live.listing)

    @property
    def listing(self) -> Listing:
        return self.current.listing

    @listing.setter
    def listing(self, listing: Listing) -> None:
        self.current.live.swap(self.current.live.catalog, listing)

    @property
    def held(self) -> HeldStore | SharedHeldStore:
        return self.current.held

    @property
    def policy(self) -> PolicyEngine:
        return self.check_policy.policy

    @property
    def confirm(self) -> Any:
        """The confirmation stage (`sidecar.gate.confirmation.stage.ConfirmStage`), once made."""
        return self.check_policy.confirm

    def confirm_stage(self) -> Any:
        """The confirmation stage, made now if no call needed it yet (the seal of a
        stateless round uses the same one)."""
        return self.check_policy.confirm_stage()

    @property
    def observers(self) -> list[Observer]:
        return self.recorder.observers

    def around_call(self, stage: Stage) -> None:
        """Add a stage right around the terminal (a client span); none by default."""
        self._around_call.append(stage)
        self._build()

    def observe(self, observer: Observer) -> None:
        """Add a watcher of finished calls; recording starts only now, so a gate nobody
        watches pays nothing for it."""
        self.recorder.observers.append(observer)
        self._build()

    def stages(self) -> list[Stage]:
        """The chain in order; a stage with nothing to decide for this config is left out,
        so the hot path pays only for what is switched on."""
        chain: list[Stage] = [self.resolve]
        if self.grant.restricts:
            chain.append(self.check_grant)
        if self.check_policy.policy.active:
            chain.append(self.check_policy)
        return [*chain, self.charge, *self._around_call, self.call]

    def _build(self) -> None:
        stages = self.stages()
        self.confirms = self.check_policy in stages  # only the policy stage reads how to ask the person
        # With nothing between the charge and the terminal, the charge only marks the call
        # and `run` charges it once the chain returns: one coroutine frame less per call.
        if stages[-2] is self.charge:
            stages[-2] = self.charge.mark
        self._first, self._following = _linked(stages)
        self.recording = self.recorder.wanted
        # Resolve, the charge's mark and the terminal, nothing else: a call may `start`.
        self.plain = len(stages) == 3 and stages[1] == self.charge.mark

    def allowed(self, exposed: str) -> bool:
        return self.call.allowed(exposed)

    # -- the one ending ----------------------------------------------------------------

    def start(self, call: ToolCall, modern_engine: bool = False) -> Started | None:
        """A plain call (no `_meta` beyond a 2026-07-28 engine's envelope, no task, no
        relayed round) started with no coroutine: resolved in place to a listed tool and
        sent upstream now (its `on_sent` told where, when it has one), to be ended by
        `Started.end` when its answer comes (`sidecar.gate.inline`). Its server has no call
        deadline (`asyncio.timeout` needs a task): `Resolve.plain_entry` resolves only such
        a server's tools. None when its way is not plain, its upstream is not ready, or a
        2026-07-28 engine (`modern_engine`) calls a 2026-07-28 server (its round is relayed:
        `sidecar.gate.route`): nothing was sent or decided, and `run` takes it from the start."""
        if not self.plain:
            return None
        live = self.current.live
        name = call.asked_for = call.name
        target = live.plain.get(name)  # the one look-up of a name called before (`LiveCatalog.plain`)
        if target is None:
            target = Resolve.plain_entry(live, name)
            if target is None:
                return None
        call.target = target  # as `Resolve.__call__` sets it
        upstream = self.pool.upstreams.get(target.alias)
        if upstream is None:
            return None
        if modern_engine and upstream.info is not None and upstream.info.protocol_version == MODERN_VERSION:
            return None
        try:
            conn = upstream.ready_connection()
        except SidecarError:
            return None
        params: dict[str, Any] = {"name": target.name, "arguments": call.arguments}
        started = Started(call, conn, params, live.facts.scrubbing, self)
        ident = started.ident = conn.send_call(params, started)
        if call.on_sent is not None:
            call.on_sent(conn, ident)
        return started

    async def run(self, call: ToolCall, tail: Awaitable[Any] | None = None) -> ToolCall:
        """Run `call` through the chain (or, `tail` given, finish a started call's way with
        it); it comes back ended once and recorded once."""
        try:
            await (self._first(call, self._following) if tail is None else tail)
            if call.charge_due:
                call.charge_due = False
                over = self.charge.after(call)
                if over is not None:
                    await over
        except SidecarError as exc:  # a stage broke its promise not to raise: the call still ends once
            if call.outcome is None:
                call.fail(exc)
        except asyncio.CancelledError:
            if call.outcome is None:
                call.fail(CallCancelled("the call was cancelled before it ended"))
            raise
        except Exception as exc:  # a stage bug: logged, the call failed with it
            stage_broke(call, exc)
        finally:
            self.close(call)
        return call

    def close(self, call: ToolCall) -> None:
        """The one ending's guard and the one record, whichever way the call ran."""
        if call.outcome is None:  # a stage returned without ending the call
            call.fail(SidecarError("the call ended without a result"))
        if self.recording:
            self.recorder.record(call)


def _pin_store(config: SidecarConfig, live: LiveCatalog, shared: SharedState | None) -> Any:
    """Pins live in the health file beside the config (none for a config never read from
    disk). Made even when no server mounted now pins: one mounted later may. With a shared
    store, pins are shared too when a server mounted now pins."""
    from sidecar.mounts.health import HealthPins, health_file_for

    health = health_file_for(config)
    local = HealthPins(health, live) if health is not None else None
    if shared is not None and any(policy != "off" for policy in live.facts.pinning.values()):
        return shared.pins(local)
    return local


def _held_store(config: SidecarConfig, shared: SharedState | None) -> HeldStore | SharedHeldStore:
    """Held results in this process; with a shared store, the stateless callers' in Redis."""
    local = HeldStore(config.budgets.held_bytes_per_server)
    return shared.held(local) if shared is not None else local
