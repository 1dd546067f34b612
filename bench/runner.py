"""Rounds, interleaving and medians: turns cases into one run's results.

Owns the order of work: every round runs each case for every candidate in
turn (A B C D, A B C D, ...), so a noisy stretch of the machine lands on all
candidates alike, and each figure is reported as the median over rounds. The
per-call figures are taken side by side instead, every candidate's session open
at once (`bench.paired_calls`, once per round), and pooled over every round's
cycles. A
candidate that cannot start is recorded as missing with its reason; one that
fails a case in the first round sits that case out (its reason kept), and a
later failure is kept beside the rounds that worked. Nothing here raises for
a candidate's fault.

Returns plain dicts ready for JSON; formatting is `report`'s job.
"""

from __future__ import annotations

import statistics
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.candidates import CHECKOUT, Candidate, Launch, compile_sidecar, from_wheel, launch, use
from bench.cases import Figures, Settings, measure_catalog, measure_fresh, measure_session
from bench.client import ConnectionFailed
from bench.gate import time_gate
from bench.http_calls import HTTP_CANDIDATES, measure_http
from bench.layouts import time_layout_build
from bench.paired_calls import CallsRound, measure_round, summarize
from bench.probes import load_average, machine
from bench.report import NOT_IN_CASE

__all__ = ["CASES", "Case", "run"]

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Case:
    """A named measurement; `multi` cases need a candidate that can reach several upstreams;
    `only`, when set, names the candidates the case applies to."""

    name: str
    title: str
    multi: bool
    measure: Callable[[Candidate, Settings, Path, Path], Figures]
    only: tuple[str, ...] = ()


CASES = (
    Case("session", "one upstream of 425 tools", False, measure_session),
    Case("fresh", "one upstream of 425 tools, a data folder never used", False, measure_fresh,
         ("direct", "sidecar")),
    Case("many", "12 upstreams x 100 tools", True,
         lambda c, s, w, log: measure_catalog(c, s.many, s, w, log)),
    Case("three", "3 upstreams x 425 tools", True,
         lambda c, s, w, log: measure_catalog(c, s.three, s, w, log)),
    Case("http", "tools/call over Streamable HTTP (session, stateless)", False, measure_http, HTTP_CANDIDATES),
)


@dataclass
class Outcome:
    """Every round of one case for one candidate."""

    rounds: list[Figures] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    skipped: str | None = None
    calls: Figures = field(default_factory=dict)  # the per-call figures, pooled over every round's cycles

    def summary(self) -> dict[str, Any]:
        if self.skipped is not None:
            return {"status": "missing", "reason": self.skipped, "errors": self.errors}
        keys = sorted({key for figures in self.rounds for key in figures})
        medians = {k: statistics.median(f[k] for f in self.rounds if k in f) for k in keys} | self.calls
        status = "ok" if not self.errors else ("partial" if self.rounds else "missing")
        return {"status": status, "median": medians, "rounds": self.rounds,
                "errors": self.errors, **({"reason": self.errors[0]} if not self.rounds else {})}


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ConnectionFailed):
        return str(exc)
    frame = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" at {Path(frame[0].filename).name}:{frame[0].lineno}" if frame else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _run_one(case: Case, candidate: Candidate, settings: Settings, workdir: Path,
             outcome: Outcome, round_no: int) -> str:
    log = workdir / f"{case.name}-{candidate.name}-r{round_no}.stderr"
    try:
        outcome.rounds.append(case.measure(candidate, settings, workdir, log))
        return "ok"
    except Exception as exc:  # noqa: BLE001 (a candidate's failure is a result, not a crash)
        outcome.errors.append(f"round {round_no + 1}: {_describe(exc)}")
        if not outcome.rounds and round_no == 0:
            outcome.skipped = outcome.errors[-1]
        return "FAILED: " + _describe(exc)[:200]


def _applies(case: Case, candidate: Candidate) -> str | None:
    if candidate.missing:
        return candidate.missing
    if case.multi and candidate.single_only:
        return "serves one upstream only"
    if case.only and candidate.name not in case.only:
        return NOT_IN_CASE
    return None


def run(settings: Settings, candidates: list[Candidate], progress: Progress,
        workdir: Path | None = None, *, wheel: bool = True) -> dict[str, Any]:
    """Measure every case for every candidate, interleaved; return the JSON-ready results.
    With `wheel` (the default) every candidate starts from the checkout's built wheel
    (`bench.candidates.from_wheel`), as a user installs it; else from the checkout."""
    started = time.time()
    outcomes = {case.name: {c.name: Outcome() for c in candidates} for case in CASES}
    for case in CASES:
        for candidate in candidates:
            if (why := _applies(case, candidate)) is not None:
                outcomes[case.name][candidate.name].skipped = why
    with tempfile.TemporaryDirectory(prefix="omb-bench-") as tmp:
        work = workdir or Path(tmp)
        previous = use(_launch_for(candidates, wheel, work, progress))
        try:
            launched = launch().where
            load_before = load_average()
            paired = _rounds(settings, candidates, outcomes, work, progress)
        finally:
            use(previous)
    calls = summarize(paired, settings.windows)
    _into_session(calls, outcomes)
    return {
        "machine": machine() | {"loadavg": load_before, "loadavg_end": load_average(), "launched": launched},
        "settings": _settings_json(settings),
        "started_unix": round(started, 1),
        "duration_s": round(time.time() - started, 1),
        "candidates": [c.name for c in candidates],
        "cases": {case.name: {"title": case.title, "results": {
            name: outcome.summary() for name, outcome in outcomes[case.name].items()}}
            for case in CASES},
        "calls": calls,
        "layout_build": _in_memory("layout build", time_layout_build, settings, candidates, progress),
        "gate": _in_memory("gate", time_gate, settings, candidates, progress),
        "trust": _in_memory("trust", _time_trust, settings, candidates, progress),
        "first_sight": _in_memory("first sight", _time_first_sight, settings, candidates, progress),
        "imports": _in_memory("imports", _time_imports, settings, candidates, progress),
    }


def _launch_for(candidates: list[Candidate], wheel: bool, work: Path, progress: Progress) -> Launch:
    """How this run starts its candidates: from the built wheel when asked and anything is
    to be started, else from the checkout (its bytecode written first, as pip writes it)."""
    if wheel and any(not c.missing for c in candidates):
        t0 = time.perf_counter()
        how = from_wheel(work / "wheel")
        progress(f"wheel built and installed {time.perf_counter() - t0:6.1f}s: {how.where}")
        return how
    if any(c.name == "sidecar" and not c.missing for c in candidates):
        compile_sidecar()
    return CHECKOUT


def _rounds(settings: Settings, candidates: list[Candidate], outcomes: dict[str, dict[str, Outcome]],
            work: Path, progress: Progress) -> list[CallsRound]:
    """Every round: each case for every candidate in turn, then the per-call cycles."""
    paired: list[CallsRound] = []
    for round_no in range(settings.rounds):
        for case in CASES:
            for candidate in candidates:
                outcome = outcomes[case.name][candidate.name]
                if outcome.skipped is not None:
                    continue
                t0 = time.perf_counter()
                status = _run_one(case, candidate, settings, work, outcome, round_no)
                progress(f"round {round_no + 1}/{settings.rounds} {case.name:8} "
                         f"{candidate.name:10} {time.perf_counter() - t0:6.1f}s {status}")
        paired.append(_calls_round(settings, candidates, outcomes, work, round_no, progress))
    return paired


def _calls_round(settings: Settings, candidates: list[Candidate], outcomes: dict[str, dict[str, Outcome]],
                 work: Path, round_no: int, progress: Progress) -> CallsRound:
    """This round's per-call cycles (`bench.paired_calls`), every candidate of the session
    case side by side."""
    side_by_side = [c for c in candidates if outcomes["session"][c.name].skipped is None]
    t0 = time.perf_counter()
    found = measure_round(side_by_side, settings, work)
    status = "ok" if not found.errors else "FAILED: " + "; ".join(f"{n}: {w}" for n, w in found.errors.items())[:200]
    progress(f"round {round_no + 1}/{settings.rounds} calls    {len(side_by_side)} side by side "
             f"{time.perf_counter() - t0:6.1f}s {status}")
    return found


def _into_session(calls: dict[str, Any], outcomes: dict[str, dict[str, Outcome]]) -> None:
    """The per-call figures join each candidate's session medians (the table's rows), and
    a candidate whose calls failed says so beside its session rounds."""
    for name, figures in calls["figures"].items():
        outcomes["session"][name].calls = figures
    for name, why in calls["errors"].items():
        if name in outcomes["session"]:
            outcomes["session"][name].errors += [f"calls: {w}" for w in why]


def _time_first_sight(repeats: int) -> dict[str, Any]:
    from bench.first_sight import time_first_sight

    return dict(time_first_sight(repeats))


def _time_imports(repeats: int) -> dict[str, Any]:
    from bench.imports import time_imports

    return dict(time_imports(repeats))


def _time_trust(repeats: int) -> dict[str, Any]:
    from bench.trust import time_trust

    return dict(time_trust(repeats))


def _in_memory(title: str, measure: Callable[[int], dict[str, Any]], settings: Settings,
               candidates: list[Candidate], progress: Progress) -> dict[str, Any]:
    """A benchmark of the sidecar's own code without processes; only when the sidecar runs."""
    sidecar = next((c for c in candidates if c.name == "sidecar"), None)
    if sidecar is None or sidecar.missing:
        return {"error": sidecar.missing if sidecar else "sidecar not in this run"}
    t0 = time.perf_counter()
    figures = measure(settings.layout_repeats)
    progress(f"{title} (in memory) {time.perf_counter() - t0:6.1f}s "
             f"{'ok' if 'error' not in figures else 'FAILED: ' + str(figures['error'])}")
    return figures


def _settings_json(settings: Settings) -> dict[str, Any]:
    raw = asdict(settings)
    raw["session_catalog"] = asdict(settings.session_catalog)
    raw["many"] = f"{len(settings.many)} x {settings.many[0].tools} tools" if settings.many else ""
    raw["three"] = f"{len(settings.three)} x {settings.three[0].tools} tools" if settings.three else ""
    return raw
