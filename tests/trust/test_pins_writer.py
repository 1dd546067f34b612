"""First-sight pins kept off the loop (sidecar.trust.writer): on real health files, two
upstreams seen at once keep both their pins before anything is listed; a write once begun
runs to its end when its task is cancelled (a quick exit); writes take turns in one thread;
the collector is held while listings are prepared and given back after."""

from __future__ import annotations

import asyncio
import copy
import gc
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sidecar.catalog import LiveCatalog, UpstreamListing
from sidecar.catalog.facts import facts_for
from sidecar.config import Audit, parse_config
from sidecar.gate.observers.audit import AuditLog
from sidecar.mounts.health import HealthFile, HealthPins
from sidecar.trust.pins import pin_tools
from sidecar.trust.screen import Trust
from sidecar.trust.writer import off_loop
from tests.catalog.fixture_shop import shop_tools

SHOP = shop_tools()


def _trust(folder: Path) -> tuple[Trust, HealthFile]:
    config = parse_config({"mcpServers": {"shop": {"command": "x"}, "mail": {"command": "y"}}}, {})
    live = LiveCatalog(facts_for(config, config.servers))
    health = HealthFile(folder / "mcp-health.json")
    return Trust(config.servers, AuditLog(Audit()), HealthPins(health, live), live=live), health


def test_two_first_sights_at_once_keep_both_pins_before_the_screen(tmp_path: Path) -> None:
    trust, health = _trust(tmp_path)
    listings = {"shop": copy.deepcopy(SHOP[:200]), "mail": copy.deepcopy(SHOP[200:])}
    turns = 0

    async def run() -> list[UpstreamListing]:
        nonlocal turns
        preparing = asyncio.gather(*(trust.prepare(alias, tools) for alias, tools in listings.items()))
        while not preparing.done():  # the loop keeps turning while both are prepared and kept
            turns += 1
            await asyncio.sleep(0)
        await preparing
        kept = health.load()
        assert {alias: set(kept[alias].pins or {}) for alias in listings} == {
            alias: {t["name"] for t in tools} for alias, tools in listings.items()}
        return trust.screen([UpstreamListing(alias, tools) for alias, tools in listings.items()])

    screened = asyncio.run(run())
    assert turns > 10
    assert [len(item.tools) for item in screened] == [200, len(SHOP) - 200] and not trust.held
    pins = health.load()
    for alias, tools in listings.items():
        assert {n: p.digest for n, p in (pins[alias].pins or {}).items()} == {
            n: p.digest for n, p in pin_tools(tools).items()}


def test_a_write_begun_runs_to_its_end_when_its_task_is_cancelled() -> None:
    ended: list[str] = []

    def slow_write(name: str) -> str:
        time.sleep(0.2)
        ended.append(name)
        return name

    async def run() -> None:
        task = asyncio.create_task(off_loop(slow_write, "first"))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert ended == ["first"]  # the cancel came after the write had ended

    asyncio.run(run())


def test_writes_take_turns_in_one_thread_in_the_order_asked() -> None:
    spans: list[tuple[str, int, float, float]] = []

    def write(name: str) -> str:
        began = time.perf_counter()
        time.sleep(0.03)
        spans.append((name, threading.get_ident(), began, time.perf_counter()))
        return name

    async def run() -> list[str]:
        return list(await asyncio.gather(*(off_loop(write, name) for name in ("a", "b", "c"))))

    assert asyncio.run(run()) == ["a", "b", "c"]
    assert [s[0] for s in spans] == ["a", "b", "c"] and len({s[1] for s in spans}) == 1
    assert threading.get_ident() not in {s[1] for s in spans}
    assert all(before[3] <= after[2] for before, after in zip(spans, spans[1:]))


def test_the_collector_is_held_while_listings_are_prepared_and_given_back(tmp_path: Path) -> None:
    trust, _ = _trust(tmp_path)
    seen: set[bool] = set()

    async def run() -> None:
        preparing = asyncio.ensure_future(trust.prepare("shop", copy.deepcopy(SHOP)))
        while not preparing.done():
            seen.add(gc.isenabled())
            await asyncio.sleep(0)
        await preparing

    assert gc.isenabled()
    asyncio.run(run())
    assert False in seen and gc.isenabled()


def test_meanwhile_runs_on_the_loop_while_the_first_pins_are_written(tmp_path: Path) -> None:
    """`Trust.prepare(meanwhile=...)`: the caller's work runs on the loop's thread once the
    first-sight pins are handed to their thread, before their write ends; prepare returns
    with them kept (the screen then judges by them, as without it)."""
    trust, health = _trust(tmp_path)
    store = trust.store
    assert store is not None
    write = store.pin_first_sight
    spans: dict[str, tuple[float, float, int]] = {}

    def slow_write(alias: str, pins: dict[str, Any]) -> dict[str, Any]:
        began = time.perf_counter()
        time.sleep(0.05)
        kept = write(alias, pins)
        spans["write"] = (began, time.perf_counter(), threading.get_ident())
        return kept

    def meanwhile() -> None:
        now = time.perf_counter()
        spans["meanwhile"] = (now, now, threading.get_ident())

    store.pin_first_sight = slow_write  # type: ignore[method-assign]
    tools = copy.deepcopy(SHOP)
    asyncio.run(trust.prepare("shop", tools, meanwhile=meanwhile))
    assert set(health.load()["shop"].pins or {}) == {t["name"] for t in tools}  # kept before prepare returned
    _, ended, writer = spans["write"]
    at, _, caller = spans["meanwhile"]
    assert at < ended and caller == threading.get_ident() != writer  # (the thread may begin it a moment later)
    screened = trust.screen([UpstreamListing("shop", tools)])
    assert len(screened[0].tools) == len(tools) and not trust.held


def test_meanwhile_is_not_called_without_a_write(tmp_path: Path) -> None:
    """Pins kept already (a later start): nothing is written, and `meanwhile` is not called."""
    trust, _ = _trust(tmp_path)
    tools = copy.deepcopy(SHOP)
    asyncio.run(trust.prepare("shop", tools))
    trust.screen([UpstreamListing("shop", tools)])
    later, _ = _trust(tmp_path)
    called: list[int] = []
    asyncio.run(later.prepare("shop", copy.deepcopy(SHOP), meanwhile=lambda: called.append(1)))
    assert called == []


def test_a_failing_meanwhile_still_leaves_the_pins_kept(tmp_path: Path) -> None:
    trust, health = _trust(tmp_path)

    def fails() -> None:
        raise RuntimeError("the caller's own work failed")

    with pytest.raises(RuntimeError):
        asyncio.run(trust.prepare("shop", copy.deepcopy(SHOP), meanwhile=fails))
    assert set(health.load()["shop"].pins or {}) == {t["name"] for t in SHOP}
