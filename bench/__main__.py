"""`python -m bench`: run every benchmark once, print the table, write the JSON.

Owns the command line and the only printing in the package: progress lines go
to stderr as the run goes, the report to stdout at the end, the full results
(every round, medians, ratios, targets, machine) to `--out`
(default `bench/results/latest.json`).

    python -m bench                 # the full run (a few minutes on 2 cores)
    python -m bench --quick         # a smoke-sized run
    python -m bench --only sidecar --rounds 3
    python -m bench --only none --relay-modes     # which relay copy loop is the floor
    python -m bench.search          # the search section alone (also part of every run)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from bench.candidates import BENCH_DIR, all_candidates
from bench.cases import Settings
from bench.report import derive, render
from bench.runner import run


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round of small counts")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "latest.json")
    parser.add_argument("--rounds", type=int, help="override the number of rounds")
    parser.add_argument("--only", help="comma separated candidates (direct and relay are "
                        "always kept: every ratio needs them)")
    parser.add_argument("--relay-modes", action="store_true",
                        help="also measure the relay's select and uvloop copy loops")
    parser.add_argument("--checkout", action="store_true",
                        help="start every candidate from the checkout and this interpreter, not from the built wheel")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--no-search", action="store_true", help="skip the search section (bench.search)")
    parser.add_argument("--docs", type=Path, metavar="DIR",
                        help="write the docs' benchmark tables into DIR (a full run writes docs/generated/)")
    parser.add_argument("--no-docs", action="store_true", help="leave the docs' benchmark tables alone")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    settings = Settings.quick() if args.quick else Settings()
    if args.rounds:
        settings = dataclasses.replace(settings, rounds=args.rounds)
    candidates = all_candidates(relay_modes=args.relay_modes)
    if args.only:
        wanted = {"direct", "relay", *args.only.split(",")}
        wanted |= {"relay-select", "relay-uvloop"} if args.relay_modes else set()
        candidates = [c for c in candidates if c.name in wanted]

    def progress(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    results = derive(run(settings, candidates, progress, wheel=not args.checkout))
    if not args.no_search:
        from bench import search

        results["search"] = search.run_search(progress)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1, sort_keys=False) + "\n")
    print("\n".join(render(results)))
    if "search" in results:
        from bench import search

        print("\n" + "\n".join(search.render(results["search"])))
    print(f"\nresults: {args.out}")
    if (docs := _docs_folder(args)) is not None:
        from bench import doc_table

        command = "python -m bench" + "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
        print(f"docs tables: {doc_table.write(results, command, docs)}")
        if "modes" in results.get("search", {}):  # the search section ran: its tables too
            from bench import search, search_docs

            dev = search.dev_dir()
            for path in search_docs.write(results["search"], search.answer_sizes(dev), search.compact_figures(dev),
                                          command, docs):
                print(f"docs tables: {path}")
    return 0


def _docs_folder(args: argparse.Namespace) -> Path | None:
    """Where the docs' tables go: only a full run (or an explicit --docs) replaces them."""
    if args.no_docs:
        return None
    if args.docs is not None:
        return Path(args.docs)
    if args.quick or args.only or args.rounds:
        return None
    from bench.doc_table import DOCS_GENERATED

    return DOCS_GENERATED


if __name__ == "__main__":
    sys.exit(main())
