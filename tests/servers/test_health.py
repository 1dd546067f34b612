"""Health: the schedule, the file, and which servers a face leaves out (said once)."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from sidecar.config import Health, ServerConfig, SidecarConfig, load_config, parse_config, parse_server
from sidecar_admin.check import CheckResult
from sidecar.mounts.plan import leave_out, plan_mounts
from sidecar.mounts.health import HEALTH_FILE, HealthFile, HealthRecord, fingerprint, health_file_for, record_start
from sidecar_admin.health import RECHECK_STARTED_SECONDS, RETRY_FAILED_SECONDS, due, keep_checking, recheck_due

NOW = 1_800_000_000.0


def srv(name: str, **entry: Any) -> ServerConfig:
    return parse_server(name, entry or {"command": "x"})


def failed(reason: str = "it stopped (exit code 1) before it finished the handshake") -> CheckResult:
    return CheckResult(name="x", outcome="failed", reason=reason)


def passed(tools: int = 3) -> CheckResult:
    return CheckResult(name="x", outcome="connected", tools=tools, tool_names=[f"t{i}" for i in range(tools)])


def write_config(tmp_path: Path, servers: dict[str, Any], **top: Any) -> SidecarConfig:
    path = tmp_path / "sidecar.json"
    path.write_text(json.dumps({"mcpServers": servers, **top}))
    return load_config(path)


def test_the_schedule() -> None:
    server = srv("a")
    ok = HealthRecord(ok=True, checked_at=NOW, outcome="connected", fingerprint=fingerprint(server))
    bad = HealthRecord(ok=False, checked_at=NOW, outcome="failed", fingerprint=fingerprint(server))
    assert due(None, server, NOW)
    assert not due(ok, server, NOW + RECHECK_STARTED_SECONDS - 1) and due(ok, server, NOW + RECHECK_STARTED_SECONDS)
    assert not due(bad, server, NOW + RETRY_FAILED_SECONDS - 1) and due(bad, server, NOW + RETRY_FAILED_SECONDS)
    assert RETRY_FAILED_SECONDS == 30 * 60 and RECHECK_STARTED_SECONDS == 6 * 3600
    changed = srv("a", command="x", args=["--new"])
    assert due(ok, changed, NOW)  # another connection: the old record says nothing about it


def test_the_fingerprint_holds_names_never_values() -> None:
    one = srv("a", command="x", env={"TOKEN": "value-one"}, args=["y"])
    two = srv("a", command="x", env={"TOKEN": "value-two"}, args=["y"])
    assert fingerprint(one) == fingerprint(two)
    assert fingerprint(one) != fingerprint(srv("a", command="x", env={"OTHER": "value-one"}, args=["y"]))


def test_the_mount_plan() -> None:
    servers = [srv("p", command="x", args=["s"]), srv("q", command="x", args=["s"]),
               srv("web", url="https://a.example.com/mcp", headers={"K": "1"}),
               srv("web2", url="https://A.example.com:443/mcp", headers={"k": "1"}),
               srv("blank", command="y", env={"TOKEN": ""}), srv("down", command="z"), srv("fine", command="w")]
    down = HealthRecord(ok=False, checked_at=NOW, outcome="failed", reason="it stopped (exit code 1)",
                        fingerprint=fingerprint(servers[5]))
    plan = plan_mounts(servers, {"down": down})
    assert [s.alias for s in plan.mounted] == ["p", "web", "fine"]
    assert [(o.alias, o.reason, o.announce) for o in plan.left_out] == [
        ("q", "it is the same server as 'p' (same command, arguments and environment), mounted once", True),
        ("web2", "it is the same server as 'web' (same address and headers), mounted once", True),
        ("blank", "it still needs a value for env TOKEN", True),
        ("down", "it failed its last check: it stopped (exit code 1); `omb-sidecar check down` brings it back once "
                 "fixed", True),
    ]
    scheduled = plan_mounts(servers, {"down": down}, Health(retry_failed_seconds=45))  # the HTTP front's schedule
    assert scheduled.left_out[-1].reason == (
        "it failed its last check: it stopped (exit code 1); it is tried again in the background now and every "
        "45 seconds (health.retryFailedSeconds); `omb-sidecar check down` brings it back at once")


def test_a_failure_is_said_once_then_kept_quiet_until_it_passes(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"down": {"command": "z"}, "up": {"command": "w"}})
    health = health_file_for(config)
    assert health is not None and health.path == tmp_path / HEALTH_FILE
    down = config.servers[0]
    health.record(down, failed(), NOW)
    first = leave_out(config)
    assert [(o.alias, o.announce) for o in first.left_out] == [("down", True)]
    assert [s.alias for s in first.mounted] == ["up"]
    assert [(o.alias, o.announce) for o in leave_out(config).left_out] == [("down", False)]
    health.record(down, failed("again"), NOW + RETRY_FAILED_SECONDS)  # the same failure goes on: still quiet
    assert [(o.alias, o.announce) for o in leave_out(config).left_out] == [("down", False)]
    health.record(down, passed(), NOW + 2 * RETRY_FAILED_SECONDS)
    assert leave_out(config).left_out == ()
    health.record(down, failed(), NOW + 3 * RETRY_FAILED_SECONDS)  # a new failure is said again
    assert [(o.alias, o.announce) for o in leave_out(config).left_out] == [("down", True)]


def test_the_health_file_is_private_and_readable_back(tmp_path: Path) -> None:
    health = HealthFile(tmp_path / "data" / HEALTH_FILE)
    health.record(srv("a"), passed(2), NOW)
    assert stat.S_IMODE(health.path.stat().st_mode) == 0o600
    saved = json.loads(health.path.read_text())
    assert saved["a"]["ok"] is True and saved["a"]["toolNames"] == ["t0", "t1"] and saved["a"]["checkedAt"] == NOW
    health.forget("a")
    assert health.load() == {}
    health.path.write_text("{not json")
    assert health.load() == {}  # a damaged file starts afresh, it does not stop the sidecar


def test_the_data_folder_setting(tmp_path: Path) -> None:
    config = parse_config({"data": {"folder": str(tmp_path / "d")}}, {})
    health = health_file_for(config)
    assert health is not None and health.path == tmp_path / "d" / HEALTH_FILE
    assert health_file_for(parse_config({}, {})) is None


def test_a_face_records_its_own_starts(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"a": {"command": "x"}})
    record_start(config, config.servers[0], ok=False, reason="did not answer within 8s")
    health = health_file_for(config)
    assert health is not None
    record = health.load()["a"]
    assert (record.ok, record.outcome, record.reason) == (False, "failed", "did not answer within 8s")


async def test_due_checks_run_and_report(tmp_path: Path, fault_server_path: Path) -> None:
    entry = {"command": sys.executable, "args": [str(fault_server_path)]}
    config = write_config(tmp_path, {"flaky": entry, "steady": dict(entry, args=[*entry["args"], "name=steady"]),
                                     "unknown": {"command": "never-checked"}})
    health = health_file_for(config)
    assert health is not None
    flaky, steady = config.servers[0], config.servers[1]
    health.record(flaky, failed(), NOW - RETRY_FAILED_SECONDS)  # due
    health.record(steady, passed(), NOW - RECHECK_STARTED_SECONDS + 60)  # not yet
    seen: list[tuple[str, bool]] = []
    results = await recheck_due(config, now=NOW, on_result=lambda s, r: seen.append((s.alias, r.ok)))
    assert [(r.name, r.ok) for r in results] == [("flaky", True)] and seen == [("flaky", True)]
    assert health.load()["flaky"].ok and health.load()["flaky"].tools > 0
    assert await recheck_due(config, now=NOW + 30) == []  # steady is due only after six hours


async def test_the_loop_retries_a_failed_server(tmp_path: Path, fault_server_path: Path) -> None:
    config = write_config(tmp_path, {"flaky": {"command": sys.executable, "args": [str(fault_server_path)]}})
    health = health_file_for(config)
    assert health is not None
    health.record(config.servers[0], failed(), NOW)
    clock = [NOW + RETRY_FAILED_SECONDS]
    passed_again = anyio.Event()

    def on_result(server: ServerConfig, result: CheckResult) -> None:
        if result.ok:
            passed_again.set()

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: keep_checking(config, on_result=on_result, clock=lambda: clock[0]))
            await passed_again.wait()
            group.cancel_scope.cancel()
    assert health.load()["flaky"].ok


def test_records_decode_strictly() -> None:
    raw = msgspec.json.encode({"a": HealthRecord(ok=True, checked_at=1.0, outcome="connected")})
    assert b'"checkedAt"' in raw and b'"announced":false' in raw
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"a": {"ok": "yes"}}', type=dict[str, HealthRecord])


def test_a_face_reads_its_pins_without_their_definitions(tmp_path: Path) -> None:
    """A face judges by digests, bodies, reviews and kept findings: `HealthPins` decodes its
    pins without the canonical `definition` (only `servers review` reads it, from the file),
    everything else as kept; the file itself keeps every definition."""
    from sidecar.catalog.facts import facts_for
    from sidecar.catalog.live import LiveCatalog
    from sidecar.mounts.health import HealthPins
    from sidecar.trust.pins import digest_of, pin_tools
    from sidecar.trust.scan import scan_tools
    from tests.catalog.fixture_shop import shop_tools

    tools = shop_tools()
    config = write_config(tmp_path, {"shop": {"command": "x"}})
    health = health_file_for(config)
    assert health is not None
    findings = dict(zip((digest_of(t) for t in tools), scan_tools(tools)))
    pins = pin_tools(tools, reviewed=True, findings=findings)
    health.pin_first_sight(config.servers[0], pins)
    store = HealthPins(health, LiveCatalog(facts_for(config, config.servers)))
    judged = store.load_pins("shop")
    kept = health.load()["shop"].pins
    assert judged is not None and kept is not None and judged.keys() == kept.keys() == pins.keys()
    for name, pin in kept.items():
        assert pin.definition and judged[name].definition == ""
        assert msgspec.structs.replace(judged[name], definition=pin.definition) == pin == pins[name]
    assert store.load_pins("other") is None



def test_a_faces_servers_pins_come_from_one_read_of_the_file_as_each_loads_them(tmp_path: Path) -> None:
    """`each_pins` reads the file once and gives each server's pins as `load_pins` does."""
    from sidecar.catalog.facts import facts_for
    from sidecar.catalog.live import LiveCatalog
    from sidecar.mounts.health import HealthPins
    from sidecar.trust.pins import pin_tools

    config = write_config(tmp_path, {alias: {"command": alias} for alias in ("a", "b", "c")})
    health = health_file_for(config)
    assert health is not None
    for server in config.servers[:2]:
        health.pin_first_sight(server, pin_tools([{"name": f"{server.alias}_tool", "description": "A tool."}]))
    store = HealthPins(health, LiveCatalog(facts_for(config, config.servers)))
    reads = []
    raw_records = health.raw_records
    health.raw_records = lambda: reads.append(1) or raw_records()  # type: ignore[method-assign]
    assert dict(store.each_pins(["a", "b", "c"])) == {alias: store.load_pins(alias) for alias in ("a", "b", "c")}
    assert len(reads) == 1 + 3 and store.load_pins("c") is None
