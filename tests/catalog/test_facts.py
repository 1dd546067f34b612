"""The per-server facts snapshot (issue 22, class 1): one pure function of the config and
the mounted set, whatever order servers joined in. Generated configs: budgets, env
secrets, pinning policies, consequential lists and deadlines; some servers left out at
start and mounted later, in any order, through the face's one door (`Face.mount`)."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidecar.catalog.facts import facts_for
from sidecar.config import parse_config
from tests.harness import FakeServer, in_memory, tool

ALIASES = ["alpha", "beta", "gamma", "delta"]
secret = st.text(alphabet="abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789", min_size=12, max_size=24)
entry = st.fixed_dictionaries({}, optional={
    "resultChars": st.integers(min_value=50, max_value=20_000),
    "env": st.dictionaries(st.sampled_from(["API_KEY", "TOKEN", "REGION", "MODE"]), secret, max_size=3),
    "headers": st.dictionaries(st.sampled_from(["Authorization", "X-Team"]), secret.map(lambda s: f"Bearer {s}"),
                               max_size=1),
    "pinning": st.sampled_from(["hold", "warn", "off"]),
    "consequential": st.lists(st.sampled_from(["send", "delete", "pay"]), unique=True, max_size=3),
    "callDeadlineSeconds": st.floats(min_value=0.5, max_value=600, allow_nan=False),
    "builtin": st.booleans(),
})
configs = st.dictionaries(st.sampled_from(ALIASES), entry, min_size=1, max_size=4)
top = st.fixed_dictionaries({"budgets": st.fixed_dictionaries({"resultChars": st.integers(100, 50_000)})})


def _document(entries: dict[str, dict[str, Any]], sections: dict[str, Any]) -> dict[str, Any]:
    return {"mcpServers": {a: {"command": f"in-memory-{a}", **e} for a, e in entries.items()}, **sections}


@given(configs, top, st.data())
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_snapshot_is_a_pure_function_of_the_mounted_set(entries: dict[str, dict[str, Any]],
                                                          sections: dict[str, Any], data: st.DataObject) -> None:
    config = parse_config(_document(entries, sections), {})
    shuffled = data.draw(st.permutations(list(config.servers)))
    assert facts_for(config, shuffled) == facts_for(config, config.servers)
    facts = facts_for(config, config.servers)
    assert facts.smallest_budget == min([config.budgets.result_chars,
                                         *(s.result_chars for s in config.servers if s.result_chars)])
    for server in config.servers:
        assert all(v in facts.log_secrets for v in server.secrets() if v)
        assert facts.pinning[server.alias] == server.pinning_policy
        assert facts.budget_of(server.alias) == (server.result_chars or config.budgets.result_chars)


@given(configs, top, st.data())
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_snapshot_after_late_mounts_equals_the_one_built_at_start(
        entries: dict[str, dict[str, Any]], sections: dict[str, Any], data: st.DataObject) -> None:
    aliases = list(entries)
    late = data.draw(st.lists(st.sampled_from(aliases), unique=True, min_size=1))
    order = data.draw(st.permutations(late))
    asyncio.run(_mount_late(entries, sections, order))


async def _mount_late(entries: dict[str, dict[str, Any]], sections: dict[str, Any], order: list[str]) -> None:
    servers = {alias: FakeServer([tool("echo")], name=alias) for alias in entries}
    async with in_memory(servers, entries=entries, left_out=order, **sections) as sidecar:
        await sidecar.settled()
        for alias in order:
            sidecar.mount_late(alias)
        assert sidecar.face.live.facts == facts_for(sidecar.whole, sidecar.whole.servers)
        await sidecar.settled()
        assert sidecar.face.live.facts == facts_for(sidecar.whole, sidecar.whole.servers)  # listings change nothing
