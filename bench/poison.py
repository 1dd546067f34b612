"""The poisoning scan's measurement: flags on a benign corpus, catch rate on a poisoned one.

    python -m bench.poison [--json] [--docs DIR]    # --docs: also write the docs' table (bench.doc_files)

Benign: the retrieval dev set's catalogs (when present), the catalog fixtures, the npm
reference servers and the bundled examples (`tests/trust/corpus.py`); each catalog is
scanned as one upstream beside all the others (so the shadowing rule sees every other
catalog's tool names). Poisoned: the definitions written in `tests/trust/corpus.py`, each
counted as caught when the scan names the rule it was written for.

First sight: the CPU time (the fastest of several runs, so a busy machine does not
inflate it) to scan the 425-tool shop catalog with nothing remembered, as a new process
does on its first listing.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["first_sight_ms", "measure", "render_docs"]


def first_sight_ms(repeats: int = 9) -> float:
    """CPU milliseconds to scan the 425-tool shop catalog with every cache empty (fastest run)."""
    import copy

    from sidecar.trust import scan as poison
    from tests.catalog.fixture_shop import shop_tools

    tools = shop_tools()
    times = []
    for _ in range(repeats):
        poison.forget_texts()  # every text cache (anchors per field too), as a new process starts
        fresh = copy.deepcopy(tools)
        start = time.process_time()
        poison.scan_tools(fresh)
        times.append(time.process_time() - start)
    return round(min(times) * 1000, 1)


def measure() -> dict[str, Any]:
    from sidecar.trust.scan import foreign_names, scan_tool
    from tests.trust.corpus import HELD_OUT, OTHER_SERVER, POISONED, benign_catalogs

    catalogs = benign_catalogs()
    names = {alias: [t["name"] for t in tools] for alias, tools in catalogs.items()}
    flagged: list[dict[str, Any]] = []
    started = time.perf_counter()
    for alias, tools in catalogs.items():
        foreign = foreign_names(alias, names[alias], names)
        for tool in tools:
            findings = scan_tool(tool, foreign)
            if findings:
                flagged.append({"catalog": alias, "tool": tool["name"], "rules": [f.rule for f in findings]})
    benign_seconds = time.perf_counter() - started
    missed: list[dict[str, Any]] = []
    by_rule: dict[str, list[int]] = {}
    for rule, tool in POISONED:
        found = {f.rule for f in scan_tool(tool, foreign_names("p", [tool["name"]], OTHER_SERVER))}
        caught = rule in found
        by_rule.setdefault(rule, [0, 0])[0 if caught else 1] += 1
        if not caught:
            missed.append({"tool": tool["name"], "rule": rule, "found": sorted(found)})
    held_out_missed = [{"tool": t["name"], "rule": rule} for rule, t in HELD_OUT
                       if rule not in {f.rule for f in scan_tool(t, foreign_names("p", [t["name"]], OTHER_SERVER))}]
    return {
        "held_out": len(HELD_OUT), "held_out_caught": len(HELD_OUT) - len(held_out_missed),
        "held_out_missed": held_out_missed,
        "benign_catalogs": len(catalogs), "benign_tools": sum(len(t) for t in catalogs.values()),
        "benign_flags": len(flagged), "flagged": flagged, "benign_scan_ms": round(benign_seconds * 1000, 1),
        "poisoned": len(POISONED), "caught": len(POISONED) - len(missed), "missed": missed,
        "by_rule": {rule: {"caught": c, "missed": m} for rule, (c, m) in sorted(by_rule.items())},
    }


def _share(caught: int, of: int) -> str:
    return f"{caught}/{of} caught ({100 * caught / of:.0f}%)"


def render_docs(figures: dict[str, Any]) -> dict[str, str]:
    """The corpus table of docs/trust.md, from what `main --docs` measured."""
    from bench import doc_files

    r = figures["result"]
    rows = [[f"benign: {r['benign_tools']:,} tools in {r['benign_catalogs']} catalogs (the retrieval dev set's, the "
             "catalog fixtures, the npm reference servers, the bundled examples)",
             f"**{r['benign_flags']} flags**" + (": " + ", ".join(f"{f['catalog']}/{f['tool']}" for f in r["flagged"])
                                               if r["flagged"] else "")],
            ["poisoned, written alongside the rules", _share(r["caught"], r["poisoned"])],
            ["poisoned, held out: written after the rules were settled and never tuned against",
             f"**{_share(r['held_out_caught'], r['held_out'])}**"],
            ["first sight of the 425-tool catalog, CPU (fastest of 9)", f"{r['first_sight_425_cpu_ms']} ms"]]
    return {"poison-corpus.md": doc_files.page("bench.poison", doc_files.table(["corpus", "result"], rows),
                                               figures["measured"])}


def _write_docs(result: dict[str, Any], argv: list[str]) -> None:
    from bench import doc_files

    folder = Path(argv[argv.index("--docs") + 1])
    figures = {"measured": doc_files.stamp("python -m bench.poison " + " ".join(argv)), "result": result}
    for path in doc_files.write("poison", "bench.poison", figures, folder):
        print(f"docs: {path}")


def main(argv: list[str]) -> int:
    result = {**measure(), "first_sight_425_cpu_ms": first_sight_ms()}  # timed here only: the suite calls measure()
    if "--docs" in argv:
        _write_docs(result, argv)
    if "--json" in argv:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    print(f"benign: {result['benign_flags']} flags on {result['benign_tools']} tools "
          f"({result['benign_catalogs']} catalogs, scanned in {result['benign_scan_ms']} ms)")
    print(f"first sight of 425 tools: {result['first_sight_425_cpu_ms']} ms of CPU (fastest of 9)")
    print(f"poisoned: {result['caught']}/{result['poisoned']} caught "
          f"({100 * result['caught'] / result['poisoned']:.0f}%)")
    print(f"held out (written after the rules, never tuned against): {result['held_out_caught']}/"
          f"{result['held_out']} caught ({100 * result['held_out_caught'] / result['held_out']:.0f}%)")
    for miss in result["held_out_missed"]:
        print(f"  held-out miss {miss['tool']} ({miss['rule']})")
    for rule, counts in result["by_rule"].items():
        print(f"  {rule}: {counts['caught']}/{counts['caught'] + counts['missed']}")
    for miss in result["missed"]:
        print(f"  missed {miss['tool']} ({miss['rule']}; found {miss['found'] or 'nothing'})")
    for flag in result["flagged"]:
        print(f"  false flag {flag['catalog']}/{flag['tool']}: {flag['rules']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
