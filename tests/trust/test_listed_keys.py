"""A pin keeps the key of its tool's bytes as listed, so a later start that lists the same
bytes knows each digest by that hash alone (no sorted encoding); anything else listed is
digested in full, to the same digest as ever."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.catalogs import GITHUB, build_catalog
from sidecar.mounts.health import HealthFile, HealthRecord
from sidecar.trust.pins import Memo, digest_of, pin_tools

_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                       max_leaves=8)
_TOOL = st.fixed_dictionaries({"name": st.sampled_from(["a", "b", "c"]), "description": st.text(max_size=20)},
                              optional={"inputSchema": _VALUES, "annotations": _VALUES, "_meta": _VALUES})


@settings(max_examples=300, deadline=None)
@given(st.lists(_TOOL, max_size=3), st.lists(_TOOL, max_size=3))
def test_a_memo_seeded_from_pins_digests_as_a_fresh_one(pinned: list[dict[str, Any]],
                                                        listed: list[dict[str, Any]]) -> None:
    memo = Memo()
    memo.remember(pin_tools(pinned))
    assert [memo.digest(tool) for tool in listed] == [digest_of(tool) for tool in listed]


def test_a_kept_listing_listed_again_costs_no_full_digest(tmp_path: Path) -> None:
    tools = build_catalog(GITHUB)
    pins = pin_tools(tools)
    path = tmp_path / "mcp-health.json"
    with HealthFile(path).edit() as records:
        records["gh"] = HealthRecord(ok=True, checked_at=1.0, outcome="connected", pins=pins)
    judged = HealthFile(path).load_judged_pins("gh")  # as a face reads them: without definitions
    assert judged is not None and all(pin.listed for pin in judged.values())
    memo = Memo()
    memo.remember(judged)
    assert [memo.digest(tool) for tool in tools] == [pins[tool["name"]].digest for tool in tools]
    assert memo.digests == {}  # the full digest (sorted encoding and sha256) never ran


def test_a_changed_tool_is_digested_in_full() -> None:
    tools = build_catalog(GITHUB)[:3]
    memo = Memo()
    memo.remember(pin_tools(tools))
    changed = dict(tools[1], description="something else")
    assert memo.digest(changed) == digest_of(changed) != pin_tools(tools)[tools[1]["name"]].digest
    assert len(memo.digests) == 1
