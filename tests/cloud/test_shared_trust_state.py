"""Confirmation states and tool pins shared by replicas through a real redis-server:
a state redeemed on one replica is refused on another, Redis forgets spent ids at the
state's expiry, and a Redis that does not answer refuses states; pins saved by one
replica are loaded by another (and a listing judged again after another replica's save),
and a Redis that does not answer at listing time holds the tools, never trusts them."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Mapping
from pathlib import Path

import pytest
import redis

from sidecar.catalog.merge import UpstreamListing
from sidecar.trust.pins import Approval, Pin, PinsNotKept, pin_tools, without_definitions
from sidecar.config import Audit, ServerConfig, Store, load_config
from sidecar.gate.observers.audit import AuditLog
from sidecar.gate.confirmation.stage import ConfirmStage, Confirmer
from sidecar.gate.confirmation.sealed import Sealer
from sidecar.gate.budget.store import StoreUnavailable
from sidecar.trust.screen import Trust
from sidecar.trust.shared import RedisPins, RedisSpent, sync_client
from tests.cloud.cloud_support import open_redis
from tests.http.http_support import free_port

pytestmark = pytest.mark.timeout(60)

KEY = os.urandom(32)
CALL = {"bot": "cloud-bot", "face": "main", "tool": "alpha__delete", "arguments": {"path": "/tmp/x"}}
TOOLS = [{"name": "delete", "description": "Deletes a file.", "inputSchema": {"type": "object"}},
         {"name": "read", "description": "Reads a file.", "inputSchema": {"type": "object"}}]


def replica(port: int, **settings: float) -> Sealer:
    store = Store(url=f"redis://127.0.0.1:{port}/0", **settings)
    return Sealer(KEY, RedisSpent(sync_client(store), store.prefix))


async def test_a_state_redeemed_on_one_replica_is_refused_on_another(tmp_path: Path) -> None:
    async with open_redis(tmp_path) as (port, _):
        a, b = replica(port), replica(port)
        claim = a.new_claim(**CALL, seconds=60)
        state = a.seal(claim)
        assert b.redeem(state, **CALL)  # either replica opens it (the key is shared)...
        assert not a.redeem(state, **CALL)  # ...but only once across both
        assert not b.redeem(state, **CALL)
        other = b.seal(b.new_claim(**CALL, seconds=60))
        assert a.redeem(other, **CALL)  # a new state is a new id
        ttl = redis.Redis(port=port).pttl(f"omb:spent:{claim.id}")
        assert 0 < ttl <= 60_000  # kept only as long as the state lives


async def test_redis_forgets_a_spent_id_at_the_state_expiry(tmp_path: Path) -> None:
    async with open_redis(tmp_path) as (port, _):
        spent = RedisSpent(sync_client(Store(url=f"redis://127.0.0.1:{port}/0")), "omb:")
        assert spent.spend("id-1", time.time() + 0.3)
        assert not spent.spend("id-1", time.time() + 0.3)
        client = redis.Redis(port=port)
        deadline = time.monotonic() + 10
        while client.exists("omb:spent:id-1") and time.monotonic() < deadline:
            time.sleep(0.05)  # polling Redis's own expiry, bounded
        assert not client.exists("omb:spent:id-1")


def test_a_store_that_does_not_answer_refuses_the_state() -> None:
    sealer = replica(free_port(), timeout_seconds=0.5)
    state = sealer.seal(sealer.new_claim(**CALL, seconds=60))
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match="did not answer"):
        sealer.redeem(state, **CALL)
    assert time.monotonic() - started < 5

    class Policy:
        confirm_seconds, confirm_state_seconds, confirm_key_env = 30.0, 60.0, None

    stage = ConfirmStage(Policy(), "cloud-bot", "main", lambda text: text)
    stage._sealer = sealer
    confirmer = Confirmer(ask=None, stateless=True, state=state, responses={})
    settled = stage._stateless(confirmer, "alpha__delete", {"path": "/tmp/x"}, {})
    assert settled.outcome == "deny" and "shared store did not answer" in settled.reason


def listing() -> UpstreamListing:
    return UpstreamListing(alias="alpha", tools=[dict(t) for t in TOOLS])


def trust(store: RedisPins) -> Trust:
    return Trust([ServerConfig(alias="alpha", command="x", pinning="hold")], AuditLog(Audit()), store,
                 "cloud-bot", "main")


async def test_pins_saved_on_one_replica_are_loaded_by_another(tmp_path: Path) -> None:
    async with open_redis(tmp_path) as (port, _):
        url = f"redis://127.0.0.1:{port}/0"
        a = RedisPins(sync_client(Store(url=url)), "omb:", "cloud-bot/main")
        b = RedisPins(sync_client(Store(url=url)), "omb:", "cloud-bot/main")
        other_face = RedisPins(sync_client(Store(url=url)), "omb:", "cloud-bot/other")
        assert b.load_pins("alpha") is None
        first = trust(a)
        first.screen([listing()])  # replica A trusts the first listing and pins it
        shared = b.load_pins("alpha")
        assert shared is not None and shared == first.pins_for_review("alpha") and set(shared) == {"delete", "read"}
        assert first.pins["alpha"] == without_definitions(shared)  # a face judges without the definitions
        assert other_face.load_pins("alpha") is None  # pins are per bot and face
        changed = listing()
        changed.tools[0]["description"] = "Deletes a file or a whole folder."
        second = trust(b)
        screened = second.screen([changed])
        assert [t["name"] for t in screened[0].tools] == ["read"]  # replica B holds the change
        assert second.held_answer("alpha__delete") is not None
        approved = pin_tools(changed.tools)
        assert a.publish("alpha", approved, Approval(command="servers approve", alias="alpha"))  # approved on A...
        assert second.stale()  # ...B notices the shared version moved and judges again
        assert [t["name"] for t in second.screen([changed])[0].tools] == ["delete", "read"]


def test_pins_when_the_store_does_not_answer_hold_every_tool(tmp_path: Path) -> None:
    down = RedisPins(sync_client(Store(url=f"redis://127.0.0.1:{free_port()}/0", timeout_seconds=0.5)),
                     "omb:", "cloud-bot/main")
    assert down.load_pins("alpha") == {}  # no pins, not "none yet": nothing trusted on sight
    held = trust(down)
    screened = held.screen([listing()])
    assert screened[0].tools == []
    assert set(held.held) == {"alpha__delete", "alpha__read"}
    with pytest.raises(PinsNotKept):  # first-sight pins that cannot land: the trust fails closed
        down.pin_first_sight("alpha", pin_tools(TOOLS))


async def test_servers_review_and_approve_use_the_shared_pins(tmp_path: Path) -> None:
    from tests.cloud.cloud_support import write_config
    from tests.trust.test_pinning_e2e import BEFORE, cli, entry

    shifty = tmp_path / "shifty.json"
    shifty.write_text(json.dumps(BEFORE))
    async with open_redis(tmp_path) as (port, _):
        url = f"redis://127.0.0.1:{port}/0"
        config = write_config(tmp_path, {"s": entry(shifty)}, store={"url": url})
        namespace = f"cloud-bot/{load_config(config).face.name}"
        replica = RedisPins(sync_client(Store(url=url)), "omb:", namespace)
        older = [dict(t) for t in BEFORE]
        older[0] = dict(older[0], description="Look a word up.")
        assert replica.publish("s", pin_tools(older), Approval(command="servers approve", alias="s"))  # pinned by a replica before the change
        review = cli(config, "servers", "review", "s")
        assert "tool 'lookup'" in review.stdout and review.returncode == 0, review.stdout + review.stderr
        approved = cli(config, "servers", "approve", "s", "--tool", "lookup")
        assert approved.returncode == 0, approved.stderr
        shared = replica.load_pins("s")
        assert shared is not None and shared["lookup"].digest == pin_tools(BEFORE)["lookup"].digest
        after = cli(config, "servers", "review", "s").stdout
        assert "tool 'lookup'" not in after and "tool 'reload_tools': new" in after  # only the unapproved one


async def test_two_sidecar_processes_share_spent_states(tmp_path: Path) -> None:
    """End to end: a state asked for on replica A is honoured once on replica B, refused when
    replayed on A, and refused with the reason while Redis is down."""
    import base64

    import aiohttp

    from tests.cloud.cloud_support import fault_entry, write_config
    from tests.gate.test_confirm_e2e import _refused, _said, _stateless_call
    from tests.http.http_support import open_http_sidecar

    env = {"OMB_TEST_CONFIRM_KEY": base64.b64encode(KEY).decode()}
    async with open_redis(tmp_path) as (port, process):
        entry = {**fault_entry(), "consequential": ["echo"], "pinning": "off"}
        config = write_config(tmp_path, {"f": entry}, store={"url": f"redis://127.0.0.1:{port}/0", "timeoutSeconds": 1},
                              policy={"requireConfirmation": True, "confirmKeyEnv": "OMB_TEST_CONFIRM_KEY"})
        async with open_http_sidecar(config, tmp_path, env=env, log_level="INFO") as a, \
                open_http_sidecar(config, tmp_path, env=env, log_level="INFO") as b, aiohttp.ClientSession() as http:
            state = (await _stateless_call(http, a, {"nonce": "r-1"}))["requestState"]
            assert _said(await _stateless_call(http, b, {"nonce": "r-1"}, state)) == "r-1"
            replayed = await _stateless_call(http, a, {"nonce": "r-1"}, state)
            assert _refused(replayed)
            pending = (await _stateless_call(http, a, {"nonce": "r-2"}))["requestState"]
            process.send_signal(signal.SIGKILL)
            await process.wait()
            down = await _stateless_call(http, b, {"nonce": "r-2"}, pending)
            assert down["isError"] is True and "shared store did not answer" in _said(down)
            assert "r-2" not in _said(down)


class MemoryPins:
    """A local copy (the health file's role) in memory."""

    def __init__(self) -> None:
        self.kept: dict[str, dict[str, Pin]] = {}

    def load_pins(self, alias: str) -> dict[str, Pin] | None:
        return self.kept.get(alias)

    def pin_first_sight(self, alias: str, pins: Mapping[str, Pin]) -> dict[str, Pin]:
        return self.kept.setdefault(alias, dict(pins))


async def test_an_outage_judges_by_the_local_copy_and_again_once_redis_answers(tmp_path: Path) -> None:
    local = MemoryPins()
    async with open_redis(tmp_path) as (port, process):
        pins = RedisPins(sync_client(Store(url=f"redis://127.0.0.1:{port}/0", timeout_seconds=0.5)), "omb:",
                         "cloud-bot/main", local)
        pins.pin_first_sight("alpha", pin_tools(TOOLS))  # written to both
        assert local.kept["alpha"] == pins.load_pins("alpha")
        process.send_signal(signal.SIGKILL)
        await process.wait()
        changed = listing()
        changed.tools[1]["description"] = "Reads a file or a folder."
        judged = trust(pins)
        assert [t["name"] for t in judged.screen([changed])[0].tools] == ["delete"]  # by the local copy
        assert not judged.stale()  # the outage alone does not make every call judge again
    async with open_redis(tmp_path, port=port):  # Redis is back (empty), and another replica approves
        assert pins.publish("alpha", pin_tools(changed.tools), Approval(command="servers approve", alias="alpha"))
        assert judged.stale()
        assert [t["name"] for t in judged.screen([changed])[0].tools] == ["delete", "read"]
