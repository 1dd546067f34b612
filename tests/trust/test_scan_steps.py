"""The scan in steps (`sidecar.trust.scan.scan_steps`, which `prepare` drives a few steps a
slice): two listings prepared at once, their steps interleaved one by one while the scan's
shared caches are forgotten again and again under them, each keep the findings the scan of
that listing alone gives."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from sidecar.trust import first_sight, scan as poison, sentences
from sidecar.trust.first_sight import prepare_listing
from sidecar.trust.pins import Memo
from tests.catalog.fixture_shop import shop_tools
from tests.trust.corpus import POISONED

SHOP = shop_tools()
BAD = [copy.deepcopy(tool) for _, tool in POISONED]


def _alone(tools: list[dict[str, Any]]) -> list[Any]:
    poison.forget_texts()
    found = poison.scan_tools(copy.deepcopy(tools))
    poison.forget_texts()
    return found


def test_listings_prepared_at_once_keep_their_own_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    one = copy.deepcopy(SHOP[:90]) + BAD[: len(BAD) // 2]
    two = BAD[len(BAD) // 2:] + copy.deepcopy(SHOP[300:380]) + BAD[:5]
    expected = [_alone(one), _alone(two)]
    assert any(expected[0]) and any(expected[1])
    monkeypatch.setattr(first_sight, "SLICE_SECONDS", 0.0)  # a loop turn after every step
    monkeypatch.setattr(poison, "_REMEMBERED", 50)  # the words and fields forgotten over and over
    monkeypatch.setattr(sentences, "_REMEMBERED", 50)  # and the sentences judged
    memos = [Memo(), Memo()]

    async def both() -> None:
        await asyncio.gather(*(prepare_listing(tools, memo, first_sight=False, shadowing=False)
                               for tools, memo in zip((one, two), memos)))

    asyncio.run(both())
    for tools, memo, found in zip((one, two), memos, expected):
        assert [memo.findings[memo.digest(tool)] for tool in tools] == found


def test_the_steps_give_what_the_scan_at_once_gives() -> None:
    tools = copy.deepcopy(SHOP[:60]) + BAD
    expected = _alone(tools)
    steps = poison.scan_steps(tools)
    count = 0
    while True:
        try:
            next(steps)
            count += 1
        except StopIteration as done:
            assert done.value == expected
            break
    assert count > len(tools) // 8  # many steps, not one
