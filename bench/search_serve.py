"""A scorer command for the retrieval development set: the product's ranker over stdin.

Speaks the protocol of `score.py --run CMD`: reads every `{"catalog": PATH, "query": ...}`
line, answers `{"names": [...]}` per line, in order, ten names each. Each catalog is loaded
as one upstream and searched with the same `SearchIndex` the search tools use.

    python3 ../shared/retrieval-dev/score.py --run '.venv/bin/python -m bench.search_serve'
    ... --run '.venv/bin/python -m bench.search_serve --semantic'      # with the extra
    ... --run '.venv/bin/python -m bench.search_serve --semantic --lexical-weight 0.3'
    ... --run '.venv/bin/python -m bench.search_serve --semantic --model minilm'

`--semantic` waits until each catalog's vectors are ready, so every query is blended.
`--model NAME` swaps the sentence model for a candidate of `bench.search_models`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sidecar.catalog import SearchIndex, UpstreamListing, build_catalog
from sidecar.catalog.search import index as ranking
from sidecar.catalog.search import semantic

ANSWER = 10


def load_index(path: str, use_model: bool) -> SearchIndex:
    data = json.loads(Path(path).read_text())
    catalog = build_catalog([UpstreamListing(str(data["server"]), list(data["tools"]))], 64, prefixed=False)
    index = SearchIndex(catalog.tools, use_model=use_model)
    index.build()
    if use_model:
        assert index.semantic is not None
        if not index.semantic.wait(600):
            raise SystemExit(f"the model did not embed {path} (state: {semantic.model_state()})")
    return index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.search_serve", description=__doc__.splitlines()[0])
    parser.add_argument("--semantic", action="store_true", help="blend in the sentence model")
    parser.add_argument("--lexical-weight", type=float, help="the lexical share of the blend (0..1)")
    parser.add_argument("--model", help="a candidate model of bench.search_models")
    args = parser.parse_args(argv)
    if args.lexical_weight is not None:
        ranking.LEXICAL_WEIGHT = args.lexical_weight
    if args.model:
        from bench.search_models import candidate

        semantic.set_loader(candidate(args.model))
    indexes: dict[str, SearchIndex] = {}
    for line in sys.stdin.read().splitlines():
        if not line.strip():
            continue
        request = json.loads(line)
        path = request["catalog"]
        if path not in indexes:
            indexes[path] = load_index(path, args.semantic)
        found = indexes[path].search(request["query"], ANSWER)
        print(json.dumps({"names": [entry.name for entry in found]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
