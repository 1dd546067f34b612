"""The upstream lifecycle table: every allowed move passes, every other one fails loudly."""

from __future__ import annotations

import asyncio
import itertools
import re
from typing import Any

import pytest

from sidecar.config import parse_server
from sidecar.errors import SidecarError
from sidecar.upstream import Upstream, lifecycle
from sidecar.upstream.lifecycle import ALLOWED, STATES, IllegalTransition, UpstreamState, move


def test_every_allowed_move_passes_and_every_other_is_refused() -> None:
    allowed = refused = 0
    for current, new in itertools.product(STATES, STATES):
        if new in ALLOWED[current]:
            assert move("u", current, new) == new
            allowed += 1
        else:
            with pytest.raises(IllegalTransition, match=f"no transition from '{current}' to '{new}'"):
                move("u", current, new)
            refused += 1
    assert allowed == sum(map(len, ALLOWED.values())) and allowed + refused == len(STATES) ** 2


def test_the_table_covers_every_state_and_only_stopped_ends() -> None:
    assert set(ALLOWED) == set(STATES)
    assert [s for s in STATES if not ALLOWED[s]] == ["stopped"]
    assert all("stopped" in ALLOWED[s] for s in STATES if s != "stopped")
    assert not any("starting" in ALLOWED[s] for s in STATES)  # the first start happens once
    reached, frontier = {"starting"}, ["starting"]
    while frontier:
        for new in ALLOWED[frontier.pop()]:
            if new not in reached:
                reached.add(new)
                frontier.append(new)
    assert reached == set(STATES)


def test_the_docstring_table_is_the_table() -> None:
    """The table written in the module's docstring says exactly what ALLOWED holds."""
    rows = re.findall(r"^    (starting|ready|restarting|failed|paused|needs-sign-in|stopped) {2,}(.+)$",
                      lifecycle.__doc__ or "", re.MULTILINE)
    written = {state: set() if targets.startswith("(none") else set(targets.split(", ")) for state, targets in rows}
    assert written == {state: set(targets) for state, targets in ALLOWED.items()}


def test_an_illegal_transition_is_a_bug_not_an_upstream_fault() -> None:
    """Not a SidecarError: the supervisor's handlers for upstream trouble never catch it."""
    assert not issubclass(IllegalTransition, SidecarError)


def test_the_predicates_read_the_states() -> None:
    def holding(predicate: Any) -> set[UpstreamState]:
        return {s for s in STATES if predicate(s)}

    assert holding(lifecycle.is_ready) == {"ready"}
    assert holding(lifecycle.is_starting) == {"starting"}
    assert holding(lifecycle.coming_back) == {"restarting", "paused", "failed"}
    assert holding(lifecycle.needs_sign_in) == {"needs-sign-in"}


def _upstream(changes: list[UpstreamState], changed: asyncio.Event | None = None) -> Upstream:
    def noticed(upstream: Upstream) -> None:
        changes.append(upstream.state)
        if changed is not None:
            changed.set()

    config = parse_server("gone", {"command": "/nonexistent/omb-test-command"})
    return Upstream(config, handler=None, on_change=noticed, start_timeout=5.0)  # type: ignore[arg-type]


def test_the_state_is_read_only_outside_the_table() -> None:
    upstream = _upstream([])
    with pytest.raises(AttributeError):
        upstream.state = "ready"  # type: ignore[misc]
    assert upstream.state == "starting"


async def test_the_supervisor_moves_through_the_table_and_an_illegal_move_surfaces() -> None:
    """A command that cannot start: starting -> failed; cancelled: -> stopped. Run again, the
    stopped upstream would have to move back to failed: IllegalTransition comes out of run()."""
    changes: list[UpstreamState] = []
    changed = asyncio.Event()
    upstream = _upstream(changes, changed)
    task = asyncio.create_task(upstream.run())
    async with asyncio.timeout(10):
        await changed.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert changes == ["failed", "stopped"]
    with pytest.raises(IllegalTransition) as raised:
        async with asyncio.timeout(10):
            await upstream.run()
    seen = [raised.value, raised.value.__context__]
    assert ("stopped", "failed") in [(e.current, e.new) for e in seen if isinstance(e, IllegalTransition)]
