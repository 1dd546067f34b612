"""The rank profile bench (`bench.search_ranks`), words only over the real catalogs: the
slice it is asked for, each query's rank in the shipped ranking, and its table."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import real_set, search_ranks  # noqa: E402


def test_plain_requests_of_the_real_set_rank_their_tool_in_the_top_three() -> None:
    result = search_ranks.profile("plain", use_model=False)
    real = result["real"]
    plain = [q for q in real_set.queries() if q["kind"] == "plain"]
    assert real["n"] == len(plain) > 0
    shipped = real["rankings"]["shipped"]
    assert set(real["rankings"]) == {"shipped"}  # words only: the model's rankings are not there
    assert shipped["r3"] == 1.0 and shipped["1-3"] == len(plain) and shipped["not ranked"] == 0


def test_a_query_whose_tool_no_ranking_scores_counts_as_not_ranked() -> None:
    index = real_set.merged_index(use_model=False)
    found = search_ranks.ranks(index, "list the files in my home folder", lambda e: False)
    assert found == {"shipped": search_ranks.UNRANKED}


def test_the_table_gives_every_bucket_per_ranking() -> None:
    row = {"r3": 0.5, "r10": 0.75, "1-3": 2, "4-5": 0, "6-10": 1, "11-30": 0, "31+": 0, "not ranked": 1}
    lines = search_ranks._lines({"kind": "paraphrase", "semantic": {"real": {"n": 4, "rankings": {
        "shipped": row, "words": row, "model": row, "either": row}}}})
    assert lines[0] == "Slice: paraphrase."
    assert lines[2].startswith("| mode | set (queries) | ranking | R@3 | R@10 | rank 1-3 |")
    assert lines[4] == "| with the model | real (4) | shipped ranking | 0.500 | 0.750 | 2 | 0 | 1 | 0 | 0 | 1 |"
    assert [line.split(" | ")[2] for line in lines[4:]] == ["shipped ranking", "words alone", "model alone",
                                                           "better of the two"]
