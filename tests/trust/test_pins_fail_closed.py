"""Pins that cannot be kept fail closed (issue 22, class 3; RELIABILITY.md rule 16).

A health file in a folder nothing can write (under /proc/sys, unwritable even by root):
whatever a generated set of upstreams lists on first sight, `hold` keeps every tool out
and `warn` lists each one as a change, never trusted; one WARNING names the folder,
however many upstreams there are. A writable folder keeps the same listings trusted.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidecar.catalog import LiveCatalog, UpstreamListing
from sidecar.catalog.facts import facts_for
from sidecar.config import Audit, SidecarConfig, parse_config
from sidecar.gate.observers.audit import AuditLog
from sidecar.trust.screen import Trust
from sidecar.mounts.health import HEALTH_FILE, HealthFile, HealthPins
from tests.trust.test_pinning_e2e import tool

UNWRITABLE = Path("/proc/sys/omb-sidecar-pins")  # procfs: no file can be made here, root or not

names = st.lists(st.sampled_from(["read", "write", "search", "send", "list", "delete"]), min_size=1, max_size=6,
                 unique=True)
upstreams = st.dictionaries(st.sampled_from(["alpha", "beta", "gamma"]), names, min_size=1, max_size=3)


def _trust(tools_of: dict[str, list[str]], folder: Path, policy: str) -> tuple[Trust, list[UpstreamListing]]:
    config: SidecarConfig = parse_config({"mcpServers": {a: {"command": f"c-{a}", "pinning": policy}
                                                         for a in tools_of}}, {})
    live = LiveCatalog(facts_for(config, config.servers))
    store = HealthPins(HealthFile(folder / HEALTH_FILE), live)
    trust = Trust(config.servers, AuditLog(Audit()), store, live=live)
    listings = [UpstreamListing(a, [tool(n, f"The {n} tool.") for n in tools], []) for a, tools in tools_of.items()]
    return trust, listings


def _listed(screened: list[UpstreamListing]) -> dict[str, list[Any]]:
    return {item.alias: [t["name"] for t in item.tools] for item in screened}


async def _prepare(trust: Trust, listings: list[UpstreamListing]) -> None:
    for item in listings:
        await trust.prepare(item.alias, item.tools)


@given(upstreams, st.sampled_from(["hold", "warn"]), st.booleans())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_store_that_cannot_keep_pins_trusts_nothing_on_first_sight(caplog: pytest.LogCaptureFixture,
                                                                     tools_of: dict[str, list[str]], policy: str,
                                                                     prepared: bool) -> None:
    """The same whether the pins were made and kept ahead (`Trust.prepare`, as a face runs
    it) or by the screen itself."""
    caplog.clear()
    trust, listings = _trust(tools_of, UNWRITABLE, policy)
    with caplog.at_level(logging.INFO, logger="sidecar.trust.screen"):
        if prepared:
            asyncio.run(_prepare(trust, listings))
        listed = _listed(trust.screen(listings))
    every = {f"{a}__{n}" for a, tools in tools_of.items() for n in tools}
    if policy == "hold":
        assert all(tools == [] for tools in listed.values())
        assert set(trust.held) == every
        words = trust.held_answer(next(iter(every))) or ""
        assert "omb-sidecar servers approve" in words and f"could not keep tool pins in {UNWRITABLE}" in words
    else:
        assert listed == tools_of
        assert not trust.held
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "cannot be kept" in r.getMessage()]
    assert len(warnings) == 1 and str(UNWRITABLE) in warnings[0] and "data.folder" in warnings[0]
    assert not any("pinned on first sight" in r.getMessage() for r in caplog.records)


@given(upstreams, st.booleans())
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_writable_folder_keeps_first_sight_pins(tmp_path_factory: pytest.TempPathFactory,
                                                  tools_of: dict[str, list[str]], prepared: bool) -> None:
    folder = tmp_path_factory.mktemp("data")
    trust, listings = _trust(tools_of, folder, "hold")
    if prepared:
        asyncio.run(_prepare(trust, listings))
    assert _listed(trust.screen(listings)) == tools_of
    kept = HealthFile(folder / HEALTH_FILE).load()
    assert {a: sorted(r.pins or {}) for a, r in kept.items()} == {a: sorted(t) for a, t in tools_of.items()}
    again, _ = _trust(tools_of, folder, "hold")  # the next process judges by them
    assert _listed(again.screen(listings)) == tools_of
