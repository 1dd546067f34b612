"""A listing's digests, scan and first pins made ahead, in slices that leave the loop free.

Owns the slow part of trusting a big listing, moved before the screen: each tool's digest,
the poisoning scan of the definitions not seen before (the whole listing at once, in steps
bounded by the characters each reads, however long a text: `sidecar.trust.scan.scan_steps`), the words the
shadowing rule reads when other upstreams exist, and, when the upstream has no pins yet,
the pins of its first sight (kept by `Trust.prepare` in a loop turn of their own, before the
screen, which fails closed when they could not be). The
work runs on the loop in slices of at most `SLICE_SECONDS`, with `await asyncio.sleep(0)`
between them, so calls in flight keep moving while a 425-tool server is judged.

Everything made here is what the screen would make itself (`sidecar.trust.pins.Memo`
caches, `pin_tools`): the screen then finds it remembered, and its verdict is the same.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Mapping
from typing import Any

from sidecar.trust.pins import PIECE, Memo, Pin, PinsNotKept, clean_json, definition_of, listed_bytes

# Cheap to import (the standard library's builtins, msgspec through `pins`): asyncio loads on
# the first listing prepared (the runtime has it loaded by then), no dataclass is built here.

__all__ = ["SLICE_SECONDS", "FirstSight", "prepare_listing", "preparing"]

SLICE_SECONDS = 0.0025  # the work of a slice; its last step may run up to ~2 ms past it (the target is 5 ms)
_WORDS_AT_ONCE = 100  # tools whose listing words are read in one go (about 2 ms)


class FirstSight:
    """The pins of a listing seen for the first time, made ahead of its screen."""

    __slots__ = ("tools", "pins", "kept")

    def __init__(self, tools: list[dict[str, Any]], pins: dict[str, Pin],
                 kept: dict[str, Pin] | PinsNotKept | None = None) -> None:
        self.tools = tools  # the very list they were made from (the screen checks identity)
        self.pins = pins
        # what the store answered when they were kept ahead (`Trust.prepare`, in a loop turn of its
        # own): the pins kept, or why they could not be; None: not tried (the screen keeps them)
        self.kept = kept


class _Slices:
    """Yields the loop once the current slice of work has run `SLICE_SECONDS`; the young
    collection the collector would have run meanwhile runs between slices, a turn of its own
    (`_collector_held`)."""

    def __init__(self) -> None:
        self.ends = time.perf_counter() + SLICE_SECONDS

    async def tick(self) -> None:
        if time.perf_counter() >= self.ends:
            await self.fresh()

    async def fresh(self) -> None:
        """End the slice now: the loop's turn, a young collection if one is due, a new slice."""
        import asyncio

        await asyncio.sleep(0)
        if gc.get_count()[0] >= gc.get_threshold()[0]:
            gc.collect(0)
            await asyncio.sleep(0)
        self.ends = time.perf_counter() + SLICE_SECONDS


_preparing = 0  # listings being prepared now, in this process (their slices interleave)


def preparing() -> bool:
    """Whether a listing is being prepared now, in this process."""
    return _preparing > 0


_collector_held = False  # the collector was on when the first of them began, and is off until the last ends


async def prepare_listing(tools: list[dict[str, Any]], memo: Memo, *, first_sight: bool,
                          shadowing: bool, foreign: Mapping[str, str] | None = None) -> FirstSight | None:
    """Fill `memo` for `tools` (digests, findings, shadowing words when `shadowing`); on
    `first_sight`, also the pins `pin_tools` would make. None when not first sight. The last
    listing prepared at a time lets the scan forget the texts it read (`forget_texts`).
    `foreign`: the shadowing rule's names of the other upstreams as known now (None: not
    known): when no word of the listing meets them, no tool's own words are read (the
    screen reads them only if the names it judges by meet the listing's words)."""
    global _preparing, _collector_held
    if not _preparing and gc.isenabled():
        gc.disable()  # no collection lands inside a slice: `_Slices.fresh` runs the due ones between
        _collector_held = True
    _preparing += 1
    try:
        return await _prepare(tools, memo, first_sight=first_sight, shadowing=shadowing, foreign=foreign)
    finally:
        _preparing -= 1
        if not _preparing:  # in a loop turn of its own: freeing megabytes is a stretch of its own
            if _collector_held:
                gc.enable()
                _collector_held = False
            import asyncio

            asyncio.get_running_loop().call_soon(_forget_when_idle)


def _forget_when_idle() -> None:
    scan = sys.modules.get("sidecar.trust.scan")  # not loaded: no text was read, nothing to forget
    if not _preparing and scan is not None:  # no listing began to be prepared meanwhile
        scan.forget_texts()


async def _prepare(tools: list[dict[str, Any]], memo: Memo, *, first_sight: bool,
                   shadowing: bool, foreign: Mapping[str, str] | None) -> FirstSight | None:
    import asyncio

    slices = _Slices()
    listed: list[tuple[str, Mapping[str, Any]]] = []
    listed_clean: list[bool] = []  # whether each listed tool's plain JSON holds no escape and no DEL (`Memo.scanning`)
    digests: list[str] = []
    words_first = shadowing and foreign is not None  # the listing's words: each tool's only if they meet a name
    if words_first:
        from sidecar.trust.listing_words import encoded, listing_words
    encodings: list[bytes] = []  # each tool's plain JSON, read for the digest and the listing's words alike
    memo.encoded = {} if first_sight else None  # the canonical encodings, kept for the pins below
    try:
        for tool in tools:
            name = tool.get("name")
            plain = encoded(tool) if words_first else listed_bytes(tool)
            if words_first:
                encodings.append(plain)
            if not (isinstance(name, str) and name):
                digests.append("")
            elif len(plain) <= PIECE:
                digests.append(memo.digest(tool, plain))
            else:  # megabytes of one definition: hashed a piece at a time, the loop's turns between
                steps = memo.digest_steps(tool, plain)
                try:
                    while True:
                        next(steps)
                        await slices.tick()
                except StopIteration as done:
                    digests.append(done.value)
            if digests[-1]:
                listed.append((digests[-1], tool))
                listed_clean.append(len(plain) <= PIECE and clean_json(plain))  # (a larger one: told by its text)
            await slices.tick()
        canonical, memo.encoded = memo.encoded, None
    finally:
        memo.encoded = None
    memo.listed = (tools, digests)
    memo.listing_words = None  # an older listing's words judge nothing now (and keep no old listing alive)
    if words_first and foreign is not None:
        words: set[str] = set()
        for start in range(0, len(tools), _WORDS_AT_ONCE):
            end = start + _WORDS_AT_ONCE
            words.update(listing_words(tools[start:end], encodings[start:end]))
            await slices.tick()
        encodings.clear()
        memo.listing_words = (tools, frozenset(words))
        shadowing = not foreign.keys().isdisjoint(words)
    await slices.fresh()  # the scan starts a slice of its own
    for _ in memo.scanning(listed, listed_clean):  # steps bounded by what they read (about 2 ms at most): the slice ends between two
        await slices.tick()
    if shadowing:
        from sidecar.trust.scan import identifiers  # only with other upstreams to shadow

        for digest, listed_tool in listed:
            if digest not in memo.words:
                memo.words[digest] = identifiers(listed_tool)
                await slices.tick()
    if not first_sight:
        await asyncio.sleep(0)
        return None
    pins: dict[str, Pin] = {}
    for tool, digest in zip(tools, digests):
        name = tool.get("name")
        if isinstance(name, str) and name:  # (a digest's canonical bytes are the same for every tool with it)
            pins[name] = definition_of(tool, False, memo.findings, memo.listed_key(name),
                                       canonical.get(digest) if canonical else None)
        await slices.tick()
    await asyncio.sleep(0)  # what follows (the screen, the first pins' write) starts a slice of its own
    return FirstSight(tools, pins)
