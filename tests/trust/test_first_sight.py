"""`Trust.prepare` (sidecar.trust.first_sight): a listing's digests, scan and first pins made
ahead in slices change no verdict. Generated listings (benign and poisoned tools, renamed,
changed and new ones, pins absent, older or reviewed, one or two upstreams) are screened
twice on real health files: by the screen alone, and after `prepare`; what is listed, what
is held and why, and the pins written must be the same."""

from __future__ import annotations

import asyncio
import copy
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidecar.catalog import LiveCatalog, UpstreamListing
from sidecar.catalog.facts import facts_for
from sidecar.trust.pins import Approval, pin_tools, without_definitions
from sidecar.config import Audit, ServerConfig, parse_config
from sidecar.gate.observers.audit import AuditLog
from sidecar.trust.first_sight import SLICE_SECONDS
from sidecar.trust.screen import Trust
from sidecar.mounts.health import HealthFile, HealthPins
from tests.catalog.fixture_shop import shop_tools
from tests.trust.corpus import OTHER_SERVER, POISONED

SHOP = shop_tools()
BAD = [copy.deepcopy(tool) for _, tool in POISONED]


def _servers(two: bool) -> list[ServerConfig]:
    servers = [ServerConfig(alias="shop", command="x")]
    return [*servers, ServerConfig(alias="mail", command="y")] if two else servers


def _live(servers: list[ServerConfig]) -> LiveCatalog:
    config = parse_config({"mcpServers": {s.alias: {"command": s.command} for s in servers}}, {})
    return LiveCatalog(facts_for(config, config.servers))


def _screen(folder: Path, listings: dict[str, list[dict[str, Any]]], pins: dict[str, Any] | None,
            prepared: bool) -> tuple[Any, ...]:
    servers = _servers(len(listings) > 1)
    health = HealthFile(folder / "mcp-health.json")
    live = _live(servers)
    store = HealthPins(health, live)
    if pins is not None:  # pins kept before (a person's approval, or an earlier first sight)
        health.save_pins(servers[0], pins, Approval(command="test", alias="shop"))
    trust = Trust(servers, AuditLog(Audit()), store, live=live)
    copies = {alias: copy.deepcopy(tools) for alias, tools in listings.items()}

    async def run() -> list[UpstreamListing]:
        if prepared:
            for alias, tools in copies.items():
                await trust.prepare(alias, tools)
        return trust.screen([UpstreamListing(alias, tools) for alias, tools in copies.items()])

    screened = asyncio.run(run())
    held = {name: (alias, change.kind, change.renamed_from, tuple(f.rule for f in change.findings))
            for name, (alias, change) in trust.held.items()}
    saved = {alias: {n: (p.digest, p.reviewed, p.findings) for n, p in (record.pins or {}).items()}
             for alias, record in health.load().items()}
    return [[t["name"] for t in item.tools] for item in screened], held, saved


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any] | None]:
    base = draw(st.lists(st.sampled_from(SHOP[:60]), min_size=1, max_size=12, unique_by=lambda t: t["name"]))
    bad = draw(st.lists(st.sampled_from(BAD), max_size=4, unique_by=lambda t: t["name"]))
    listed = copy.deepcopy([*base, *[t for t in bad if t["name"] not in {b["name"] for b in base}]])
    pinned_from = copy.deepcopy(listed)
    for tool in draw(st.lists(st.sampled_from(listed), max_size=3)):  # changed since pinned
        tool["description"] = tool.get("description", "") + " Changed."
    if draw(st.booleans()) and len(listed) > 1:  # renamed since pinned
        listed[-1] = {**listed[-1], "name": listed[-1]["name"] + "_v2"}
    pins_kind = draw(st.sampled_from(["none", "older", "reviewed"]))
    pins = None if pins_kind == "none" else pin_tools(pinned_from, reviewed=pins_kind == "reviewed")
    listings = {"shop": listed}
    if draw(st.booleans()):
        listings["mail"] = [{"name": n, "description": "Mail.", "inputSchema": {"type": "object"}}
                            for n in OTHER_SERVER["mail"]]
    return listings, pins


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases())
def test_prepare_changes_no_verdict(tmp_path: Path, case: tuple[dict[str, Any], dict[str, Any] | None]) -> None:
    listings, pins = case
    alone, ahead = tmp_path / f"alone-{time.monotonic_ns()}", tmp_path / f"ahead-{time.monotonic_ns()}"
    alone.mkdir()
    ahead.mkdir()
    assert _screen(ahead, listings, pins, prepared=True) == _screen(alone, listings, pins, prepared=False)


def test_the_425_tool_first_sight_is_sliced_and_the_screen_finds_it_remembered(tmp_path: Path) -> None:
    """The loop gets a turn every few ms of the work (many turns, not one long stretch),
    the first pins are kept before the screen, and the screen after it scans and writes
    nothing again."""
    server = ServerConfig(alias="shop", command="x")
    health = HealthFile(tmp_path / "mcp-health.json")
    live = _live([server])
    trust = Trust([server], AuditLog(Audit()), HealthPins(health, live), live=live)
    tools = copy.deepcopy(SHOP)
    turns = 0

    async def count_turns(done: asyncio.Event) -> None:
        nonlocal turns
        while not done.is_set():
            await asyncio.sleep(0)
            turns += 1

    async def run() -> None:
        done = asyncio.Event()
        counter = asyncio.create_task(count_turns(done))
        started = time.process_time()
        await trust.prepare("shop", tools)
        spent = time.process_time() - started
        done.set()
        await counter
        assert turns >= spent / (SLICE_SECONDS * 4), (turns, spent)  # a turn at least every few slices

    asyncio.run(run())
    memo = trust.memos["shop"]
    assert len(memo.findings) == len(tools)
    kept_ahead = health.load()["shop"].pins  # made and kept ahead, in a turn of their own
    written = health.path.stat().st_mtime_ns
    found = dict(memo.findings)
    screened = trust.screen([UpstreamListing("shop", tools)])
    kept = health.load()["shop"].pins
    assert memo.findings == found and kept is not None and trust.pins_for_review("shop") == kept
    assert kept == kept_ahead and health.path.stat().st_mtime_ns == written  # the screen wrote nothing
    assert len(screened[0].tools) == len(tools) - len(trust.held)
    assert trust.pins["shop"] == without_definitions(kept)  # judged without them; the file keeps them


def _remembered() -> int:
    from sidecar.trust import scan

    return scan.remembered_texts()


def test_the_scans_texts_are_forgotten_in_a_turn_of_their_own_once_no_listing_is_being_prepared() -> None:
    """The texts the scan read serve a batch only: they are dropped after the last listing
    being prepared, not while another still is, and not on the tail of the last slice."""
    from sidecar.trust.first_sight import prepare_listing
    from sidecar.trust.pins import Memo

    async def run() -> None:
        other = asyncio.create_task(prepare_listing(copy.deepcopy(SHOP[:200]), Memo(), first_sight=True,
                                                    shadowing=False))
        await prepare_listing(copy.deepcopy(SHOP[:20]), Memo(), first_sight=True, shadowing=False)
        await asyncio.sleep(0)
        if not other.done():  # the big one is still being prepared: nothing forgotten under it
            assert _remembered() > 0
        await other
        await asyncio.sleep(0)
        assert _remembered() == 0
        await prepare_listing(copy.deepcopy(SHOP[:20]), Memo(), first_sight=True, shadowing=False)
        assert _remembered() > 0  # not on the tail of the last slice: in the next turn
        await asyncio.sleep(0)
        assert _remembered() == 0

    asyncio.run(run())


_SCAN_LOADED = """
import sys, json
from pathlib import Path
from sidecar.catalog import LiveCatalog
from sidecar.catalog.facts import facts_for
from sidecar.config import Audit, parse_config
from sidecar.gate.observers.audit import AuditLog
from sidecar.mounts.health import HealthFile, HealthPins
from sidecar.trust.screen import Trust
folder, policy = Path(sys.argv[1]), sys.argv[2]
config = parse_config({"mcpServers": {"shop": {"command": "x", "pinning": policy}}}, {})
live = LiveCatalog(facts_for(config, config.servers))
before = "sidecar.trust.scan" in sys.modules
Trust(config.servers, AuditLog(Audit()), HealthPins(HealthFile(folder / "mcp-health.json"), live), live=live)
print(before, "sidecar.trust.scan" in sys.modules)
"""


def test_the_scan_loads_as_the_trust_is_made_only_when_every_listing_will_be_a_first_sight(tmp_path: Path) -> None:
    """No health file yet: the scan's modules load with the trust (its first sights scan);
    a health file (pins perhaps kept), or no pinning at all: nothing loads until needed."""
    import subprocess
    import sys

    from tests.conftest import REPO

    def loaded(policy: str) -> list[str]:
        return subprocess.run([sys.executable, "-c", _SCAN_LOADED, str(tmp_path), policy], capture_output=True,
                              text=True, check=True, cwd=str(REPO)).stdout.split()

    assert loaded("hold") == ["False", "True"]
    assert loaded("off") == ["False", "False"]
    (tmp_path / "mcp-health.json").write_text("{}")
    assert loaded("hold") == ["False", "False"]


_RELAXED = """
import asyncio, sys
from pathlib import Path
from sidecar.catalog import LiveCatalog
from sidecar.catalog.facts import facts_for
from sidecar.config import Audit, parse_config
from sidecar.gate.observers.audit import AuditLog
from sidecar.mounts.health import HealthFile, HealthPins
from sidecar.trust import first_sight
from sidecar.trust.screen import Trust
folder, busy = Path(sys.argv[1]), sys.argv[2] == "busy"
config = parse_config({"mcpServers": {"shop": {"command": "x"}}}, {})
live = LiveCatalog(facts_for(config, config.servers))

async def main():
    if busy:
        first_sight._preparing += 1  # a listing being prepared as the trust is made
    Trust(config.servers, AuditLog(Audit()), HealthPins(HealthFile(folder / "mcp-health.json"), live), live=live)
    from sidecar.trust import sentences
    for _ in range(200):
        await asyncio.sleep(0)
    longest = [id(p) for p in sentences._BY_SOURCE_LENGTH]
    done = len(sentences._compiled_ahead)
    print(done, int(sentences._compiled_ahead == set(longest[:done])))

asyncio.run(main())
"""


def test_a_fresh_trust_compiles_the_sentences_patterns_while_the_loop_waits(tmp_path: Path) -> None:
    """No health file yet: relaxed patterns are compiled in loop turns of their own after the
    trust is made, the longest sources first, within a few ms of CPU, unless a listing is
    being prepared (it compiles what it needs); a health file: none is compiled ahead."""
    import subprocess
    import sys

    from tests.conftest import REPO

    def compiled(busy: bool) -> list[int]:
        out = subprocess.run([sys.executable, "-c", _RELAXED, str(tmp_path), "busy" if busy else "idle"],
                             capture_output=True, text=True, check=True, cwd=str(REPO)).stdout
        return [int(n) for n in out.split()]

    done, longest_first = compiled(busy=False)
    assert done >= 1 and longest_first == 1
    assert compiled(busy=True)[0] == 0
    (tmp_path / "mcp-health.json").write_text("{}")
    assert compiled(busy=False)[0] == 0


def test_relaxing_ahead_compiles_each_pattern_once_and_then_says_done() -> None:
    """Each pattern once, as judging reads it: the credential path by its two parts only (its
    whole relaxed form is never searched, so never compiled)."""
    from sidecar.trust import sentences
    from sidecar.trust.scan_rules import CREDENTIAL_AFTER, CREDENTIAL_BEFORE, CREDENTIAL_PATH

    saved = dict(sentences._relaxed_patterns), dict(sentences._relaxed_parts), set(sentences._compiled_ahead)
    sentences._relaxed_patterns.clear()
    sentences._relaxed_parts.clear()
    sentences._compiled_ahead.clear()
    try:
        steps = 0
        while sentences.relax_next():
            steps += 1
        assert steps == len(sentences._compiled_ahead) == len({id(p) for p in sentences._PATTERNS})
        assert id(CREDENTIAL_PATH) not in sentences._relaxed_patterns
        assert set(sentences._relaxed_parts) == {CREDENTIAL_BEFORE, CREDENTIAL_AFTER}
        assert len(sentences._relaxed_patterns) == steps - 1
        assert not sentences.relax_next()
    finally:
        sentences._relaxed_patterns.clear()
        sentences._relaxed_patterns.update(saved[0])
        sentences._relaxed_parts.clear()
        sentences._relaxed_parts.update(saved[1])
        sentences._compiled_ahead.clear()
        sentences._compiled_ahead.update(saved[2])
