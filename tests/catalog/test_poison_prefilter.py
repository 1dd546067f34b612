"""The poisoning scan reads each text once for every rule's anchors (`_anchors_held`) and
tries only the patterns an anchor it holds can start: its verdicts are the ones every
pattern with a search of the whole text for each anchor gives, on the scan's
corpora and on their definitions with anchors and look-alike letters spliced in anywhere,
across field boundaries too."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from sidecar.trust import scan as poison
from sidecar.trust.scan import Finding, scan_tools, tool_text
from tests.trust.corpus import POISONED, benign_catalogs

_CORPUS = [tool for tools in benign_catalogs().values() for tool in tools[:40]] + [t for _, t in POISONED]
_ANCHORS = sorted(poison._ANCHORS)
_SPLICE = st.one_of(st.sampled_from(_ANCHORS), st.sampled_from([a.upper() for a in _ANCHORS]),
                    st.text(alphabet="aeiouіоеѕ ._-@/:~ \u200b\uff41", max_size=12))


def _brute_held(text: str) -> frozenset[str]:
    return frozenset(a for a in poison._ANCHORS if a in text)


def _every_rule(text: str, starts: list[tuple[int, str]], live: list[tuple[str, Any]]) -> tuple[Finding, ...]:
    """Every pattern of every rule tried in order, its anchors searched in the whole text."""
    held = _brute_held(text)
    findings: list[Finding] = []
    for rule, (anchors, pattern) in live:
        if rule not in {f.rule for f in findings}:
            span = poison._search(anchors, pattern, text, held)
            if span is not None:
                findings.append(Finding(rule, poison._field_at(starts, span[0]), text[span[0]:span[1]][:80]))
    credential = poison._credential_path(text, starts, held) if text else None
    return (*findings, credential) if credential is not None else tuple(findings)


def _reference(tool: dict[str, Any]) -> tuple[Finding, ...]:
    """The scan as it ran before the prefilter and the anchor index."""
    pieces = tool_text(tool)
    text, starts = poison._joined(pieces)
    if text.isascii():
        return _every_rule(text, starts, poison._ASCII_LIVE)
    found = _every_rule(text, starts, poison._ALL_LIVE)
    folded, folded_starts = poison._joined(pieces, fold=True)
    if folded == text:
        return found
    fired = {f.rule for f in found}
    live = poison._ASCII_LIVE if folded.isascii() else poison._ALL_LIVE
    again = _every_rule(folded, folded_starts, live)
    return found + tuple(f for f in again if f.rule not in fired)


def _texts_of(tool: dict[str, Any]) -> list[tuple[str, list[str]]]:
    pieces = tool_text(tool)
    return [poison._joined_fields(pieces)[::2], poison._joined_fields(pieces, fold=True)[::2]]


def test_the_corpora_get_the_same_verdicts_and_anchors() -> None:
    for tool in _CORPUS:
        assert scan_tools([tool])[0] == _reference(tool), tool.get("name")
        for text, fields in _texts_of(tool):
            assert poison._anchors_held(text, fields) == _brute_held(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_CORPUS), st.lists(st.tuples(st.integers(0, 3), st.floats(0, 1), _SPLICE), max_size=6))
def test_spliced_definitions_get_the_same_verdicts(tool: dict[str, Any], splices: list[tuple[int, float, str]]) -> None:
    tool = copy.deepcopy(tool)
    for where, at, words in splices:
        target = _field(tool, where)
        found = target.get("description")
        text = found if isinstance(found, str) else ""
        cut = int(len(text) * at)
        target["description"] = text[:cut] + words + text[cut:]
    assert scan_tools([tool])[0] == _reference(tool)
    for text, fields in _texts_of(tool):
        assert poison._anchors_held(text, fields) == _brute_held(text)


def _field(tool: dict[str, Any], where: int) -> dict[str, Any]:
    """The tool itself, or one of its first properties (so an anchor may be cut across two fields)."""
    props = (tool.get("inputSchema") or {}).get("properties") or {}
    values = [v for v in props.values() if isinstance(v, dict)]
    return values[where - 1] if 0 < where <= len(values) else tool


_NEEDING = [pattern for rule in poison.RULES for _, pattern in rule.patterns if pattern.needs is not None]


def test_a_pattern_needs_a_piece_of_itself_and_no_match_goes_without_it() -> None:
    """`needs` is a contiguous piece of its pattern, so a window without it holds no match:
    on every text of the corpora (the poisoned ones, which these patterns catch, too)."""
    assert _NEEDING
    matched = 0
    for pattern in _NEEDING:
        assert pattern.needs is not None and pattern.needs.source in pattern.source
        for tool in _CORPUS:
            for text, _ in _texts_of(tool):
                if pattern.search(text) is not None:
                    matched += 1
                    assert pattern.needs.search(text) is not None, text
    assert matched  # the corpus holds texts these patterns match


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_NEEDING), st.sampled_from(_CORPUS), st.integers(0, 10_000), st.integers(20, 700))
def test_no_window_matches_a_pattern_without_its_piece(pattern: Any, tool: dict[str, Any], at: int, width: int) -> None:
    for text, _ in _texts_of(tool):
        window = text[at % max(1, len(text)):][:width]
        if pattern.search(window) is not None:
            assert pattern.needs.search(window) is not None


def test_the_anchors_stay_exact_when_the_words_remembered_are_forgotten_midway(monkeypatch: Any) -> None:
    """Past `_REMEMBERED` words the scan forgets them and reads them again: no anchor is lost."""
    monkeypatch.setattr(poison, "_REMEMBERED", 16)
    poison.forget_texts()
    try:
        for tool in _CORPUS:
            for text, fields in _texts_of(tool):
                assert poison._anchors_held(text, fields) == _brute_held(text)
            assert scan_tools([tool])[0] == _reference(tool)
    finally:
        poison.forget_texts()
