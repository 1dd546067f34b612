"""The face's current catalog, listing and per-server facts: one holder the hub writes
and the gate reads.

Owns nothing but the three. The hub swaps them at once on every rebuild (the facts,
`sidecar.catalog.facts`, change only when the mounted set does); every reader (the gate's
stages, the method handlers, traces) reads them through this one object, so no copy can
fall behind another.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from sidecar.catalog.facts import EMPTY_FACTS, ServerFacts
from sidecar.catalog.layouts import Listing, full_layout
from sidecar.catalog.merge import EMPTY_CATALOG, Catalog
from sidecar.redact import Redactor

if TYPE_CHECKING:
    from sidecar.catalog.merge import CatalogEntry

__all__ = ["LiveCatalog", "LiveRedactor", "ReadsLive"]


class LiveCatalog:
    """What the engine sees now: the merged catalog and its listing (empty until the first
    rebuild), and the facts of the servers mounted now."""

    __slots__ = ("catalog", "listing", "facts", "plain")

    def __init__(self, facts: ServerFacts = EMPTY_FACTS) -> None:
        self.catalog: Catalog = EMPTY_CATALOG
        self.listing: Listing = full_layout(EMPTY_CATALOG)
        self.facts: ServerFacts = facts
        # The tools a plain call runs as they are, by exposed name, as the three above say
        # (`sidecar.gate.stages.resolve.Resolve.plain_entry` fills it as names are called;
        # it holds catalog entries only, so no more than the catalog's tools): emptied on
        # every swap, so it never outlives the catalog, listing and facts it was read from.
        self.plain: dict[str, CatalogEntry] = {}

    def swap(self, catalog: Catalog, listing: Listing, facts: ServerFacts | None = None) -> None:
        """Replace them together: no reader sees a catalog beside another catalog's listing,
        nor a server's tools before its facts (`facts` None: the facts stay)."""
        if facts is not None:
            self.facts = facts
        self.catalog, self.listing = catalog, listing
        self.plain = {}


class ReadsLive:
    """For a holder of `live`: its catalog and listing, read through the one holder (the
    hub and the gate's shared tables both read this way, so neither keeps a copy)."""

    __slots__ = ()
    live: LiveCatalog

    @property
    def catalog(self) -> Catalog:
        return self.live.catalog

    @property
    def listing(self) -> Listing:
        return self.live.listing

    @property
    def facts(self) -> ServerFacts:
        return self.live.facts


class LiveRedactor(Redactor):
    """A redactor that is always the current snapshot's: answers' or logs' secrets of the
    servers mounted at the moment of each use. For the holders made once (the audit
    recorder, the confirmation form, the relay of upstream requests and progress), so a
    server mounted later is hidden there too without anyone keeping a copy."""

    def __init__(self, live: LiveCatalog, kind: Literal["answers", "logs"]) -> None:
        super().__init__()
        self._live, self._kind = live, kind

    def _now(self) -> Redactor:
        facts = self._live.facts
        return facts.answers if self._kind == "answers" else facts.logs

    def add(self, secrets: Iterable[str]) -> None:
        if list(secrets):
            raise TypeError("a live redactor takes its secrets from the snapshot, never added")

    def __call__(self, text: str) -> str:
        return self._now()(text)

    def __bool__(self) -> bool:
        return bool(self._now())

    def found_in(self, raw: bytes) -> bool:
        return self._now().found_in(raw)

    def json(self, raw: bytes) -> bytes:
        return self._now().json(raw)

    def clean(self, value: Any) -> Any:
        return self._now().clean(value)
