"""Trust in what upstreams list, timed in memory: what pinning and the poisoning scan add
to a 425-tool listing, and what they add to a call.

Measured on the 425-tool shop catalog (the test fixture), each a median:
  merge_425_ms            the merge alone (`build_catalog`), for scale
  screen_first_sight_ms   the first listing: every definition pinned and scanned
  screen_next_start_ms    the first listing of a later start: pins (with their scan results) in the store
  screen_relist_ms        a re-list after list_changed, the same bytes as before (new objects)
  screen_relist_each_tool_ms  a re-list whose bytes differ (another tool changed, keys reordered):
                          each tool judged again by its digest, none scanned again
  screen_one_changed_ms   a re-list where one tool changed (held, reported)
  screen_same_ms          a rebuild for another upstream's change (this listing untouched)
  confirmer_for_us        the only step a tools/call gains when no confirmation applies
"""

from __future__ import annotations

import copy
import statistics
import time
from collections.abc import Callable
from typing import Any

__all__ = ["time_trust"]


def _median_ms(work: Callable[[], object], repeats: int, setup: Callable[[], None] | None = None) -> float:
    times = []
    for _ in range(repeats):
        if setup is not None:
            setup()
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1e3, 3)


class _Kept:
    """A pin store that already holds the pins (a later start of the same sidecar)."""

    def __init__(self, pins: Any) -> None:
        self.pins = pins

    def load_pins(self, alias: str) -> Any:
        return self.pins

    def pin_first_sight(self, alias: str, pins: Any) -> Any:
        if self.pins is None:
            self.pins = pins
        return self.pins


def _trust(store: Any = None) -> Any:
    from sidecar.config import Audit, ServerConfig
    from sidecar.gate.observers.audit import AuditLog
    from sidecar.trust.screen import Trust

    return Trust([ServerConfig(alias="shop", command="x")], AuditLog(Audit()), store)


def time_trust(repeats: int = 5) -> dict[str, float | str]:
    try:
        return _figures(max(repeats, 5))
    except Exception as exc:  # the report names the failure; the run goes on
        return {"error": f"{type(exc).__name__}: {exc}"}


def _figures(repeats: int) -> dict[str, float | str]:
    import msgspec

    from sidecar.catalog import ToolsEncoding, UpstreamListing, build_catalog
    from sidecar.front.confirming import confirmer_for
    from sidecar.hub.session import EngineSession
    from sidecar.wire import Request
    from tests.catalog.fixture_shop import shop_tools

    tools = shop_tools()
    encoded = ToolsEncoding.of(msgspec.json.encode(tools))
    copies = [copy.deepcopy(tools) for _ in range(repeats * 3 + 2)]
    figures: dict[str, float | str] = {
        "merge_425_ms": _median_ms(lambda: build_catalog([UpstreamListing("shop", tools, [], encoded)], 64), repeats)}
    holder: dict[str, Any] = {}

    def fresh() -> None:  # a new process: nothing remembered
        from sidecar.trust import scan as poison

        poison.forget_texts()
        holder["trust"] = _trust()

    figures["screen_first_sight_ms"] = _median_ms(
        lambda: holder["trust"].screen([UpstreamListing("shop", copies.pop())]), repeats, fresh)
    kept = _Kept(None)
    _trust(kept).screen([UpstreamListing("shop", tools)])

    def restart() -> None:
        fresh()
        holder["trust"] = _trust(kept)

    figures["screen_next_start_ms"] = _median_ms(
        lambda: holder["trust"].screen([UpstreamListing("shop", copies.pop())]), repeats, restart)
    def _listed(listed: list[dict[str, Any]]) -> Any:  # as the face hands it in: with its encoding read
        return UpstreamListing("shop", listed, [], ToolsEncoding.of(msgspec.json.encode(listed)))

    trust = _trust()
    trust.screen([_listed(tools)])
    relists = [_listed(copy.deepcopy(tools)) for _ in range(repeats * 2 + 1)]
    trust.screen([relists.pop()])  # the pins saved on first sight are now the ones judged against
    figures["screen_relist_ms"] = _median_ms(lambda: trust.screen([relists.pop()]), repeats)
    figures["screen_relist_each_tool_ms"] = _median_ms(lambda: trust.screen([relists.pop()]), repeats,
                                                       trust._verdicts.clear)
    changed = copy.deepcopy(tools)
    changed[7] = {**changed[7], "description": changed[7].get("description", "") + " Changed."}
    listings = [UpstreamListing("shop", changed)]
    figures["screen_one_changed_ms"] = _median_ms(lambda: trust.screen(listings), 1)
    figures["screen_same_ms"] = _median_ms(lambda: trust.screen(listings), repeats)
    session = EngineSession(lambda frame: None)
    request = Request(id=1, method="tools/call", params={"name": "shop__x", "arguments": {}})
    start = time.perf_counter()
    for _ in range(10_000):
        confirmer_for(session, request)
    figures["confirmer_for_us"] = round((time.perf_counter() - start) / 10_000 * 1e6, 3)
    return figures


ROWS = (
    ("a re-list after `list_changed` with the same bytes (the usual case): the verdict is reused", "screen_relist_ms", "ms"),
    ("a re-list whose bytes differ: each tool judged by its digest, none scanned again", "screen_relist_each_tool_ms", "ms"),
    ("a re-list with one tool changed (that one scanned)", "screen_one_changed_ms", "ms"),
    ("a rebuild for another upstream's change (this listing untouched)", "screen_same_ms", "ms"),
    ("the first listing of a later start (pins and their scan results kept in the health file)", "screen_next_start_ms", "ms"),
    ("the very first sight of 425 definitions (every one pinned and scanned)", "screen_first_sight_ms", "ms"),
    ("a `tools/call` to a listed tool: no added stage; the front builds its confirmation handle", "confirmer_for_us", "us"),
    ("for scale: merging the same 425 tools into a catalog", "merge_425_ms", "ms"),
)


def render_docs(figures: dict[str, Any]) -> dict[str, str]:
    """The cost table of docs/trust.md, from what `--docs` measured."""
    from bench import doc_files

    result = figures["result"]
    if "error" in result:
        lines = [f"Not measured: {result['error']}"]
    else:
        lines = doc_files.table(["what (the 425-tool catalog)", "median"],
                                [[label, f"{float(result[key]):g} {unit}"] for label, key, unit in ROWS])
    return {"trust-cost.md": doc_files.page("bench.trust", lines, figures["measured"])}


def main(argv: list[str]) -> int:
    """`python -m bench.trust [--docs DIR]`: print the figures; with --docs also write the docs' table."""
    import json

    result = time_trust()
    print(json.dumps(result, indent=2))
    if "--docs" in argv:
        from bench import doc_files

        for path in doc_files.publish("bench.trust", "trust", result, argv):
            print(f"docs: {path}")
    return 0 if "error" not in result else 1


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
