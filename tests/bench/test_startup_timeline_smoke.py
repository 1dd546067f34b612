"""`bench.startup_timeline` runs, and its marks come in the order a start takes (tiny counts:
a smoke run, never a judgement of speed)."""

from __future__ import annotations

from bench.catalogs import TINY
from bench.startup_timeline import run_specs, summary


def test_the_timeline_marks_a_start_in_order() -> None:
    [marks] = run_specs((TINY,), 1)
    seen = [(who, what) for who, what, _, _ in marks]
    if ("sidecar", "tools/list answered from the snapshot ends") in seen:  # an earlier round kept the listing
        order = [("client", "Popen"), ("sidecar", "interpreter and site up"), ("sidecar", "spawn begins"),
                 ("gh", "answered tools/list"), ("client", "tools/list complete"), ("sidecar", "loop running begins"),
                 ("sidecar", "upstream tools/list read+decoded gh ends")]
    else:
        order = [("client", "Popen"), ("sidecar", "interpreter and site up"), ("sidecar", "spawn begins"),
                 ("sidecar", "loop running begins"), ("sidecar", "upstream tools/list read+decoded gh ends"),
                 ("client", "tools/list complete")]
    assert all(step in seen for step in order), seen
    assert [seen.index(step) for step in order] == sorted(seen.index(step) for step in order), seen
    assert ("gh", "answered tools/list") in seen  # the upstream's own marks, through its configured environment
    assert summary([marks])
