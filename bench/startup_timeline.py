"""Where start -> a complete `tools/list` goes, mark by mark, for 425 tools and 3 x 425.

Starts the sidecar through `bench/timeline_boot.py` (the product as its `omb-sidecar`
command runs it, with timed marks patched in as its modules load) against the bench's fast
upstreams, which mark their own steps when `BENCH_TIMELINE` is in their configured
environment; the bench client marks the spawn, the `initialize` answer and the complete
listing. Every mark is CLOCK_MONOTONIC, shown in ms from the client's `Popen`; the
sidecar's marks also carry its own CPU time so far. Nothing here is on in the product.

By default everything starts from the checkout's built wheel in the bench's venv outside the
checkout (`bench.candidates.from_wheel`), as `python -m bench` measures it; `--checkout`
starts from the checkout and this interpreter instead.

  python -m bench.startup_timeline                       # 425 and 3x425, pins kept, 5 rounds
  python -m bench.startup_timeline --case fresh --rounds 3   # a data folder never used
  python -m bench.startup_timeline --checkout            # the dev venv and the checkout's sources
  python -m bench.startup_timeline --case fresh --tree /tmp/old --tree .   # trees alternated

Prints, per case, each mark's median over rounds (and its range). With `--tree` (twice or
more), each round starts every tree once, in turn (from its sources, by this interpreter, as
`--checkout` does; the order rotates round by round), and a last table gives, per tree, the
median of "tools/list complete", of that less the upstreams' answer, of the sidecar's CPU
at its last mark before it and (when the runtime answered the listing) of that less its first
page's encoding, and each tree's median paired difference from the first tree's in the same
round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.candidates import BENCH_DIR, CHECKOUT, REPO_ROOT, compile_sidecar, from_wheel, launch, upstream_argv, use
from bench.catalogs import GITHUB, CatalogSpec, github_set
from bench.client import Connection

__all__ = ["CASES", "paired", "run_case", "run_specs", "run_trees", "summary"]

CASES: dict[str, tuple[CatalogSpec, ...]] = {"425": (GITHUB,), "3x425": tuple(github_set(3)), "fresh": (GITHUB,)}
Mark = tuple[str, str, float, float]  # who, what, ms from Popen, CPU ms (sidecar's own; 0 for others)


def _config(specs: tuple[CatalogSpec, ...], folder: Path, marks: Path) -> Path:
    servers = {}
    for i, spec in enumerate(specs):
        alias = f"s{i + 1}" if len(specs) > 1 else "gh"
        argv = upstream_argv(spec)
        servers[alias] = {"command": argv[0], "args": argv[1:],
                          "env": {"BENCH_TIMELINE": str(marks), "BENCH_TIMELINE_WHO": alias}}
    path = folder / "config.json"
    path.write_text(json.dumps({"mcpServers": servers, "budgets": {"resultChars": 8000}}))
    return path


def _one_start(config: Path, marks: Path, expected: int, tree: Path | None = None) -> list[Mark]:
    """One timed start; `tree`: a source tree whose `bench/timeline_boot.py` (and so whose
    `sidecar`) starts, from its sources (else this checkout's, as `launch` says)."""
    marks.write_bytes(b"")
    how = CHECKOUT if tree is not None else launch()
    boot = (tree / "bench" if tree is not None else BENCH_DIR) / "timeline_boot.py"
    argv = [how.python, str(boot), "--config", str(config)]
    # the checkout's sources only when candidates start from the checkout; else the installed package
    env = dict(os.environ, BENCH_TIMELINE=str(marks), BENCH_TIMELINE_SOURCES="checkout" if how == CHECKOUT else "installed")
    with Connection(argv, env=env, cwd=str(REPO_ROOT), stderr_path=config.parent / "stderr.log") as conn:
        start = conn.started
        conn.initialize(30.0)
        initialized = time.perf_counter()
        conn.list_tools_until(expected, 60.0)
        listed = time.perf_counter()
    found: list[Mark] = [("client", "Popen", 0.0, 0.0), ("client", "initialize answered", (initialized - start) * 1e3, 0.0),
                         ("client", "tools/list complete", (listed - start) * 1e3, 0.0)]
    for line in marks.read_text().splitlines():
        who, what, at, cpu = line.split("\t")
        found.append((who, what, (float(at) - start) * 1e3, float(cpu) * 1e3 if who == "sidecar" else 0.0))
    return sorted(found, key=lambda m: m[2])


def run_case(case: str, rounds: int) -> list[list[Mark]]:
    """`rounds` timed starts of `case`; the cached cases start once untimed first (pins kept)."""
    return run_specs(CASES[case], rounds, fresh=case == "fresh")


def run_specs(specs: tuple[CatalogSpec, ...], rounds: int, *, fresh: bool = False) -> list[list[Mark]]:
    """`rounds` timed starts of one sidecar over an upstream per spec (a new data folder each
    time when `fresh`; else one untimed start first, so the pins are kept)."""
    return run_trees(specs, rounds, [None], fresh=fresh)[0]


def run_trees(specs: tuple[CatalogSpec, ...], rounds: int, trees: list[Path | None], *,
              fresh: bool = False) -> list[list[list[Mark]]]:
    """`run_specs` for each of `trees` (None: as `launch` says), alternated: each round starts
    every tree once, the order rotated round by round; each tree keeps its own data folder
    (or a new one per start when `fresh`). The marks per tree, per round."""
    expected = sum(spec.tools for spec in specs)
    results: list[list[list[Mark]]] = [[] for _ in trees]
    with tempfile.TemporaryDirectory(prefix="timeline-") as tmp:
        base = Path(tmp)
        marks = base / "marks.tsv"
        configs = []
        for t, tree in enumerate(trees):
            if not fresh:
                folder = base / f"kept{t}"
                folder.mkdir()
                configs.append(_config(specs, folder, marks))
                _one_start(configs[t], marks, expected, tree)
        for n in range(rounds):
            for k in range(len(trees)):
                t = (n + k) % len(trees)
                if fresh:
                    folder = base / f"fresh{n}-{t}"
                    folder.mkdir()
                    config = _config(specs, folder, marks)
                else:
                    config = configs[t]
                results[t].append(_one_start(config, marks, expected, trees[t]))
    return results


def _keyed(marks: list[Mark]) -> dict[tuple[str, str, int], Mark]:
    """Each mark under (who, what, its occurrence number): a repeated step stays apart."""
    seen: dict[tuple[str, str], int] = {}
    keyed = {}
    for mark in marks:
        n = seen[mark[:2]] = seen.get(mark[:2], 0) + 1
        keyed[(mark[0], mark[1], n)] = mark
    return keyed


def summary(results: list[list[Mark]]) -> list[str]:
    """One line per mark: median ms from Popen [min-max], the sidecar's median CPU ms."""
    keyed = [_keyed(r) for r in results]
    order = sorted(keyed[0], key=lambda k: statistics.median(r[k][2] for r in keyed if k in r))
    lines = []
    for key in order:
        times = [r[key][2] for r in keyed if key in r]
        cpus = [r[key][3] for r in keyed if key in r]
        cpu = f"  cpu {statistics.median(cpus):6.1f}" if key[0] == "sidecar" else ""
        what = key[1] + (f" #{key[2]}" if key[2] > 1 else "")
        lines.append(f"{statistics.median(times):7.1f} ms [{min(times):6.1f}-{max(times):6.1f}]  "
                     f"{key[0]:8s} {what}{cpu}")
    return lines


def _complete(marks: list[Mark]) -> tuple[float, float, float, float]:
    """A start's "tools/list complete" (ms from Popen), the last upstream's "answered
    tools/list", the time between the two (what the sidecar adds after the listing it waits
    for), and the sidecar's CPU at its last mark before the listing was complete."""
    done = next(at for who, what, at, _ in marks if (who, what) == ("client", "tools/list complete"))
    answered = max((at for who, what, at, _ in marks if who not in ("client", "sidecar") and what == "answered tools/list"),
                   default=0.0)
    cpu = max((c for who, _, at, c in marks if who == "sidecar" and at <= done), default=0.0)
    return done, answered, done - answered, cpu


def _after_page(marks: list[Mark]) -> float | None:
    """From the runtime's first page encoded to the client's complete listing (what the
    answer's way to the engine costs, and whatever the loop does meanwhile); None when the
    listing was not the runtime's (answered from the snapshot)."""
    done = next(at for who, what, at, _ in marks if (who, what) == ("client", "tools/list complete"))
    page = next((at for who, what, at, _ in marks if (who, what) == ("sidecar", "page encoded ends")), None)
    return done - page if page is not None and page <= done else None


def paired(results: list[list[list[Mark]]], names: list[str]) -> list[str]:
    """Per tree and figure (complete, the upstreams' answer, the time after it, CPU, and from
    the runtime's first page when every round has one): the median [range] over rounds, and
    the median [range] of its paired differences from the first tree's in the same round."""
    pages = [[_after_page(marks) for marks in rounds] for rounds in results]
    with_page = all(page is not None for rounds in pages for page in rounds)
    figures = [[(*_complete(marks), page or 0.0) for marks, page in zip(rounds, own, strict=True)]
               for rounds, own in zip(results, pages, strict=True)]
    labels = ("complete", "upstream answered", "after the answer", "sidecar cpu") + (("after the page",) if with_page else ())
    lines = []
    for name, own in zip(names, figures, strict=True):
        lines.append(name)
        for index, label in enumerate(labels):
            values = [f[index] for f in own]
            diff = [a[index] - b[index] for a, b in zip(own, figures[0], strict=True)]
            lines.append(f"  {label:17s} {statistics.median(values):6.1f} ms [{min(values):6.1f}-{max(values):6.1f}]"
                         f"  paired vs tree 1: {statistics.median(diff):+6.1f} [{min(diff):+6.1f}..{max(diff):+6.1f}]")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="default: 425 and 3x425")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--raw", action="store_true", help="also print every round's marks")
    parser.add_argument("--checkout", action="store_true",
                        help="start from the checkout and this interpreter, not from the built wheel")
    parser.add_argument("--tree", action="append", type=Path, default=[],
                        help="a source tree to start from (twice or more: alternated round by round)")
    args = parser.parse_args(argv)
    if args.tree:
        _print_trees(args.case or ["fresh"], args.rounds, [tree.resolve() for tree in args.tree])
        return
    if args.checkout:
        compile_sidecar()
    with tempfile.TemporaryDirectory(prefix="timeline-wheel-") as tmp:
        use(CHECKOUT if args.checkout else from_wheel(Path(tmp)))
        print(f"started from {launch().where}")
        _print_cases(args.case or ["425", "3x425"], args.rounds, args.raw)


def _print_trees(cases: list[str], rounds: int, trees: list[Path]) -> None:
    import compileall

    for tree in trees:  # their bytecode written, as `pip install` does (see `compile_sidecar`)
        compileall.compile_dir(str(tree / "sidecar"), quiet=1)
    names = [f"tree {n + 1} ({tree})" for n, tree in enumerate(trees)]
    for case in cases:
        results = run_trees(CASES[case], rounds, list(trees), fresh=case == "fresh")
        for name, own in zip(names, results, strict=True):
            print(f"== {case}, {name}: {rounds} rounds (median [min-max] ms from Popen; sidecar CPU ms so far)")
            print("\n".join(summary(own)))
        print(f"== {case}: trees alternated")
        print("\n".join(paired(results, names)))
        sys.stdout.flush()


def _print_cases(cases: list[str], rounds: int, raw: bool) -> None:
    for case in cases:
        results = run_case(case, rounds)
        print(f"== {case}: {rounds} rounds (median [min-max] ms from Popen; sidecar CPU ms so far)")
        if raw:
            for n, marks in enumerate(results):
                print(f"-- round {n + 1}")
                print("\n".join(f"{at:7.1f}  {who:8s} {what}" for who, what, at, _ in marks))
        print("\n".join(summary(results)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
