"""`bench.startup_timeline` runs, and its marks come in the order a start takes (tiny counts:
a smoke run, never a judgement of speed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.candidates import CHECKOUT, from_wheel, use
from bench.catalogs import TINY
from bench.startup_timeline import run_specs, summary


@pytest.mark.parametrize("installed", [False, True], ids=["checkout", "wheel"])
def test_the_timeline_marks_a_start_in_order(installed: bool, tmp_path: Path) -> None:
    """From the checkout, and from the built wheel as `python -m bench.startup_timeline`
    starts it by default (the installed `sidecar`, the wheel venv's interpreter)."""
    previous = use(from_wheel(tmp_path) if installed else CHECKOUT)
    try:
        [marks] = run_specs((TINY,), 1)
    finally:
        use(previous)
    seen = [(who, what) for who, what, _, _ in marks]
    if ("sidecar", "tools/list answered from the snapshot ends") in seen:  # an earlier round kept the listing
        # (the upstream marks its answer after writing it: the snapshot's answer may be marked first)
        order = [("client", "Popen"), ("sidecar", "interpreter and site up"), ("sidecar", "spawn begins"),
                 ("gh", "got tools/list"), ("client", "tools/list complete"), ("sidecar", "loop running begins"),
                 ("sidecar", "upstream tools/list read+decoded gh ends")]
    else:
        order = [("client", "Popen"), ("sidecar", "interpreter and site up"), ("sidecar", "spawn begins"),
                 ("sidecar", "loop running begins"), ("sidecar", "upstream tools/list read+decoded gh ends"),
                 ("client", "tools/list complete")]
    assert all(step in seen for step in order), seen
    assert [seen.index(step) for step in order] == sorted(seen.index(step) for step in order), seen
    assert ("gh", "answered tools/list") in seen  # the upstream's own marks, through its configured environment
    assert summary([marks])


def test_the_cpu_to_the_first_spawn_is_measured(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m bench.first_spawn` runs this tree's entry point to its first spawn, both
    launchers (a smoke run: no figure is judged)."""
    from bench.first_spawn import main

    main(["--rounds", "1", "--launcher", "script", "--launcher", "console"])
    out = capsys.readouterr().out
    assert "bare" in out and "(script)" in out and "(console)" in out


def test_trees_are_alternated_and_paired() -> None:
    """`--tree`: each tree starts once a round from its own sources (here the checkout twice,
    a new data folder each start), and the paired table reads every tree's starts."""
    from bench.candidates import REPO_ROOT
    from bench.startup_timeline import paired, run_trees

    results = run_trees((TINY,), 2, [REPO_ROOT, REPO_ROOT], fresh=True)
    assert [len(rounds) for rounds in results] == [2, 2]
    assert all(("client", "tools/list complete") in [(who, what) for who, what, _, _ in marks]
               for rounds in results for marks in rounds)
    lines = paired(results, ["a", "b"])
    assert lines[0] == "a" and any("after the answer" in line for line in lines)
    assert any("after the page" in line for line in lines)  # the runtime listed: a fresh folder
