"""Which layout a face gets: SPEC §4's table per engine, the bridge switch, the override.

Owns `LayoutPlan` (what `build_listing` takes) and `choose_layout`, a pure function of
the config and the environment. The bridge switch is off by default; it is on for a bot
whose model is served from this machine or its network; `OMB_AGENTS_TOOL_BRIDGE` set to
exactly `1` or `0` wins over both. A bot with a tool selection is never bridged. A failure
while deciding means unbridged and one log line naming only the kind of error.

For Claude Code the shim alone can judge SPEC §6's refusal rules (they read files), so
it folds its decision into `features.agentsToolBridge`: the face is bridged exactly when
that says so. The shim owns the sidecar's environment, so it must not hand a refused turn
`OMB_AGENTS_TOOL_BRIDGE=1`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import msgspec

from sidecar.catalog.names import name_budget
from sidecar.config import SidecarConfig, model_is_local

__all__ = ["LayoutPlan", "choose_layout", "bridge_switch", "model_is_local", "URL_TRANSPORTS", "ALL_TRANSPORTS"]

log = logging.getLogger(__name__)

URL_TRANSPORTS = frozenset({"http", "sse"})
ALL_TRANSPORTS = frozenset({"stdio", "http", "sse"})
_MIN_CAP = 3  # the shared trio alone


class LayoutPlan(msgspec.Struct, frozen=True):
    """What the builder applies: the bridge over the built-ins, the trio for big upstreams
    of these transports, a tool cap. All off is the full layout."""

    bridged: bool = False
    trio: frozenset[str] = frozenset()  # transports whose big upstreams get a trio
    cap: int | None = None
    name_budget: int = 64  # what a meta-tool name may take (the engine adds its prefix)
    why: str = ""  # one line for the log: how the plan was reached
    compact: bool = False  # tools listed whole are listed by description and signature

    @property
    def name(self) -> str:
        applied = (("bridged", self.bridged), ("trio", bool(self.trio)), ("cap", self.cap is not None),
                   ("compact", self.compact))
        parts = [part for part, on in applied if on]
        return "+".join(parts) or "full"


# engine -> (bridge allowed, trio transports, capped); unknown engines get the last row.
_ENGINES: dict[str, tuple[bool, frozenset[str], bool]] = {
    "claude": (True, frozenset(), False),
    "codex": (False, frozenset(), False),
    "codex-chatgpt": (False, URL_TRANSPORTS, False),
    "pi": (False, URL_TRANSPORTS, False),
    "api": (True, ALL_TRANSPORTS, True),
}
_OTHER_ENGINE: tuple[bool, frozenset[str], bool] = (False, frozenset(), False)


def bridge_switch(config: SidecarConfig, environ: Mapping[str, str]) -> bool:
    """The switch alone (before the engine and selection rules): env, saved setting, local model."""
    forced = environ.get("OMB_AGENTS_TOOL_BRIDGE")
    if forced in ("0", "1"):
        return forced == "1"
    return config.features.agents_tool_bridge or model_is_local(config.bot.model_url)


def _bridged(config: SidecarConfig, environ: Mapping[str, str], allowed: bool) -> bool:
    if not allowed or config.bot.selection is not None:
        return False
    if config.bot.engine == "claude":
        return config.features.agents_tool_bridge  # the shim's decision (see above)
    return bridge_switch(config, environ)


def _bridged_safely(config: SidecarConfig, environ: Mapping[str, str], allowed: bool) -> bool:
    try:
        return _bridged(config, environ, allowed)
    except Exception as exc:  # any failure while deciding: unbridged, and say only what kind
        log.warning("bridge decision failed (%s): the face stays unbridged", type(exc).__name__)
        return False


def choose_layout(config: SidecarConfig, environ: Mapping[str, str] | None = None) -> LayoutPlan:
    """The plan for this face: `face.layout` when set, else the engine's row of the table;
    compact on top when the bot asks for it (`features.compactListing`)."""
    plan = _plan(config, {} if environ is None else environ)
    if config.features.compact_listing and not plan.compact:
        return msgspec.structs.replace(plan, compact=True, why=f"{plan.why}, compact listing asked for")
    return plan


def _plan(config: SidecarConfig, environ: Mapping[str, str]) -> LayoutPlan:
    budget = name_budget(config.face.name)
    cap = max(config.budgets.tool_cap, _MIN_CAP)
    override = config.face.layout
    if override == "full":
        return LayoutPlan(name_budget=budget, why="face.layout is full")
    if override == "bridged":
        # bridged without the switch, but never a bot with a selection
        return LayoutPlan(bridged=config.bot.selection is None, name_budget=budget, why="face.layout is bridged")
    if override == "trio":
        return LayoutPlan(trio=ALL_TRANSPORTS, name_budget=budget, why="face.layout is trio")
    if override == "cap":
        return LayoutPlan(cap=cap, name_budget=budget, why="face.layout is cap")
    if override == "compact":
        return LayoutPlan(compact=True, name_budget=budget, why="face.layout is compact")
    engine = config.bot.engine
    allowed, trio, capped = _ENGINES.get(engine, _OTHER_ENGINE)
    bridged = _bridged_safely(config, environ, allowed)
    return LayoutPlan(bridged, trio, cap if capped else None, budget, f"engine {engine}")

