"""Trust in what upstreams list: each listing judged against its pins before the merge,
every change said once (a log line and an audit record), and the answer a held tool gets.

Owns the I/O around the pure judgement of `sidecar.trust.pins`: loading pins from the
store (once per upstream), pinning a listing seen for the first time (trust on first
use), and remembering which changes were already reported. Refuses: listing a held tool
(a call to it is answered with what to run to review and approve it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

import msgspec

from sidecar.catalog import LiveCatalog, ToolsEncoding, UpstreamListing
from sidecar.trust.pins import (Change, Memo, Pin, Pinning, PinsNotKept, PinStore, Verdict, judge, pin_tools,
                                 without_definitions)
from sidecar.trust.first_sight import FirstSight, prepare_listing
from sidecar.trust.writer import off_loop
from sidecar.config import ServerConfig

__all__ = ["Trust", "held_words"]

log = logging.getLogger(__name__)


class AuditSink(Protocol):
    """Where each change is recorded: the gate's audit file (`sidecar/gate/observers/audit.py`,
    given by the gate, which sits above this room)."""

    def write(self, record: dict[str, Any]) -> None: ...

_KIND_WORDS = {
    "changed": "changed since it was approved",
    "new": "is new since the server was approved",
    "renamed": "is a renamed tool (the definition of '{source}' under a new name)",
    "flagged": "reads like instructions to the model ({rules})",
}


def held_words(alias: str, change: Change) -> str:
    """What a call to a held tool gets: which tool, why, and the commands to review it."""
    why = _KIND_WORDS[change.kind].format(source=change.renamed_from or "", rules=_rules(change))
    if change.kind != "flagged" and change.findings:
        why += f", and reads like instructions to the model ({_rules(change)})"
    return (f"The tool '{alias}__{change.tool}' is held by the sidecar: its definition {why}. A person can review "
            f"it with `omb-sidecar servers review {alias}` and approve it with "
            f"`omb-sidecar servers approve {alias} --tool {change.tool}`. The call was not run.")


def _rules(change: Change) -> str:
    return ", ".join(sorted({f.rule for f in change.findings}))


def _load_the_scan() -> None:
    """The poisoning scan's modules loaded now (its rules and tables: about 5 ms of CPU),
    for a trust whose store was never written (version 0: `HealthPins` with no health file
    yet, as a new data folder starts): every listing it meets is a first sight, which the
    scan reads whole. A face makes its trust while its upstreams still start, so the load
    is off the way from their listings to the engine's; a store with pins loads nothing.
    Then, on a running loop, the sentences' patterns are compiled while the face waits for
    those listings (`_relax_ahead`)."""
    import sidecar.trust.scan  # noqa: F401  (loaded for the first sight's `prepare`)

    try:
        asyncio.get_running_loop().call_soon(_relax_ahead)
    except RuntimeError:  # no loop (a trust made outside one): each is compiled when first needed
        pass


_AHEAD_CPU_SECONDS = 0.005  # what compiling ahead may cost at most (all 42 patterns: about 13 ms here)


def _relax_ahead(spent: float = 0.0) -> None:
    """One of the sentence judgement's patterns compiled (`sidecar.trust.sentences.relax_next`:
    the longest source first, 0.1-1.7 ms each) per loop turn, until a listing is being
    prepared, `_AHEAD_CPU_SECONDS` of this thread's CPU are spent, or all are compiled: what a
    first sight would otherwise compile on its way to the engine (a 425-tool listing: about
    5 ms here) is compiled while the upstreams still start. Bounded, as it may be CPU that
    an upstream starting on a busy machine wanted. A listing prepared meanwhile compiles
    what it needs itself, as without this."""
    from sidecar.trust.first_sight import preparing
    from sidecar.trust.sentences import relax_next

    if preparing() or spent >= _AHEAD_CPU_SECONDS:
        return
    began = time.thread_time()
    if relax_next():
        asyncio.get_running_loop().call_soon(_relax_ahead, spent + time.thread_time() - began)


class Trust:
    def __init__(self, servers: Iterable[ServerConfig], audit: AuditSink, store: PinStore | None,
                 bot: str = "", face: str = "", live: LiveCatalog | None = None) -> None:
        # With `live`, each server's policy is the current snapshot's (a server mounted late
        # is judged as at start); `servers` then only serves a trust made without a face.
        self._fixed: dict[str, Pinning] = {s.alias: s.pinning_policy for s in servers}
        self._live = live
        self.audit = audit
        self.store = store
        self.bot, self.face = bot, face
        self.pins: dict[str, dict[str, Pin] | None] = {}
        self.memos: dict[str, Memo] = {}
        self.held: dict[str, tuple[str, Change]] = {}  # "alias__tool" -> (alias, why)
        self._reported: set[tuple[str, str, str, str]] = set()
        self._last: tuple[tuple[str, int], ...] = ()
        self._screened: list[UpstreamListing] = []
        self._version = self._store_version()
        self._verdicts: dict[str, tuple[ToolsEncoding | None, object, object, Verdict]] = {}
        self._unkept: dict[str, str] = {}  # alias -> the folder that could not keep its pins
        self._first: dict[str, FirstSight] = {}  # pins made ahead by `prepare` (not yet kept)
        if self._version == 0 and any(policy != "off" for policy in self.policies.values()):
            _load_the_scan()

    @property
    def policies(self) -> Mapping[str, Pinning]:
        return self._live.facts.pinning if self._live is not None else self._fixed

    async def prepare(self, alias: str, tools: list[dict[str, Any]],
                      meanwhile: Callable[[], object] | None = None) -> None:
        """Before a listing reaches the face: its digests, scan findings and (on first
        sight) pins, made in slices of a few ms with the loop free in between, so the
        screen that follows finds them all remembered. Judges nothing: the verdict is the
        screen's, the same as without this step. `meanwhile`: called on the loop while the
        first-sight pins are being written in their thread (the caller's own work for this
        listing, which the write would otherwise only delay); not called when there is no
        write. The pins are kept, or known not kept, before this returns either way."""
        if self.policies.get(alias, "hold") == "off":
            return
        shadowing = len(self.policies) > 1
        if shadowing:  # every upstream's pins (the rule reads the others' names), from one read
            await self._load_together(list(self.policies))
        memo = self.memos.setdefault(alias, Memo())
        pins = self._loaded(alias)
        first = await prepare_listing(tools, memo, first_sight=pins is None, shadowing=shadowing,
                                      foreign=await self._foreign_by_pins(alias, tools) if shadowing else None)
        if first is None:
            return
        self._first[alias] = first  # judged by the screen's `_pin_first_sight` (PinsNotKept: fail closed)
        if self.store is not None:  # kept now, off the loop: the screen's stretch is the judgement only
            keeping = asyncio.ensure_future(off_loop(self._keep_first_sight, alias, first.pins))
            try:
                if meanwhile is not None:
                    await asyncio.sleep(0)  # the write is handed to its thread before the loop is busy again
                    meanwhile()
            finally:
                first.kept = await keeping  # awaited to its end whatever happened meanwhile

    async def _foreign_by_pins(self, alias: str, tools: list[dict[str, Any]]) -> dict[str, str] | None:
        """The shadowing rule's names of the other upstreams as their kept pins list them
        (what the screen will judge by when they list what a person approved), or None when
        one of them has no pins yet. Each store read is a loop turn of its own."""
        await self._load_together([other for other in self.policies if other != alias])
        others: dict[str, list[str]] = {}
        for other in self.policies:
            if other != alias:
                pins = self._loaded(other)
                if pins is None:
                    return None
                others[other] = list(pins)
        from sidecar.trust.scan import foreign_names  # only with other upstreams to shadow

        return foreign_names(alias, [n for t in tools if isinstance(n := t.get("name"), str) and n], others)

    @property
    def active(self) -> bool:
        return any(policy != "off" for policy in self.policies.values())

    def screen(self, listings: Sequence[UpstreamListing]) -> list[UpstreamListing]:
        """The listings less what is held (the same objects again while nothing changed)."""
        if not self.active:
            return list(listings)
        key = tuple((item.alias, id(item.tools)) for item in listings)
        if key == self._last:  # the same tools: the same verdicts, on today's prompts and resources
            return [_screened_again(item, before) for item, before in zip(listings, self._screened, strict=True)]
        others = {item.alias: [n for t in item.tools if isinstance(n := t.get("name"), str)] for item in listings}
        held: dict[str, tuple[str, Change]] = {}
        screened = []
        for item in listings:
            context = tuple((other.alias, id(other.tools)) for other in listings if other is not item)
            verdict = self._judge(item, others, context)
            held.update({f"{item.alias}__{name}": (item.alias, why) for name, why in verdict.held.items()})
            screened.append(item if len(verdict.tools) == len(item.tools)
                            else msgspec.structs.replace(item, tools=verdict.tools, encoding=None))
        self.held, self._last, self._screened = held, key, screened
        return screened

    def _judge(self, item: UpstreamListing, others: Mapping[str, Sequence[str]], context: object) -> Verdict:
        policy = self.policies.get(item.alias, "hold")
        if policy == "off":
            return Verdict(tools=item.tools, held={}, changes=(), first=False)
        memo = self.memos.setdefault(item.alias, Memo())
        pins = self._loaded(item.alias)
        last = self._verdicts.get(item.alias)
        # The same bytes as the last listing, the same pins and the same other upstreams: the
        # same verdict (already reported). A re-list after list_changed usually is exactly that.
        if last is not None and item.encoding and last[0] == item.encoding and last[1] is pins and last[2] == context:
            return last[3]
        verdict = judge(item.alias, item.tools, pins, policy, others, memo)
        if verdict.first:
            kept = self._pin_first_sight(item.alias, item.tools, memo)
            if kept is not None:  # not kept as seen (another process pinned first, or nowhere to keep them)
                pins = self.pins[item.alias] = kept
                verdict = judge(item.alias, item.tools, pins, policy, others, memo)
        self._verdicts[item.alias] = (item.encoding, pins, context, verdict)
        for change in verdict.changes:
            self._report(item.alias, change, held=change.tool in verdict.held)
        return verdict

    async def _load_together(self, aliases: Sequence[str]) -> None:
        """The pins of `aliases` not read yet, from one read of a store that can (`each_pins`),
        each in a loop turn of its own; else each as `_loaded` reads it, a turn each."""
        missing = [alias for alias in aliases if alias not in self.pins]
        if not missing:
            return
        each = getattr(self.store, "each_pins", None)
        for alias, pins in each(missing) if callable(each) else ((a, self._loaded(a)) for a in missing):
            if alias not in self.pins:  # another listing's preparation may have read it meanwhile
                self.pins[alias] = pins
                self.memos.setdefault(alias, Memo()).remember(pins)
            await asyncio.sleep(0)

    def _loaded(self, alias: str) -> dict[str, Pin] | None:
        """The upstream's pins, read from the store once (their scan results remembered)."""
        if alias not in self.pins:
            self.pins[alias] = self.store.load_pins(alias) if self.store is not None else None
            self.memos.setdefault(alias, Memo()).remember(self.pins[alias])
        return self.pins[alias]

    def _pin_first_sight(self, alias: str, tools: Sequence[Mapping[str, object]], memo: Memo) -> dict[str, Pin] | None:
        """Trust on first use, kept where the next process reads it. None when the pins are
        the listing's; else the pins to judge by instead: another process's, or none at all
        ({}: every tool is a change) when the store cannot keep them, so nothing is trusted
        that the next process could not check (RELIABILITY.md rule 16)."""
        ahead = self._first.pop(alias, None)
        if ahead is not None and ahead.tools is tools:
            pins, kept = ahead.pins, ahead.kept
        else:  # not prepared, or prepared from another listing (whose pins the store may hold now)
            pins, kept = pin_tools(tools, findings=memo.findings), None
        self.pins[alias] = pins
        if self.store is None:  # a config never read from disk: pins live as long as the process
            log.info("upstream '%s': %d tool definitions pinned on first sight", alias, len(pins))
            return None
        if kept is None:
            kept = self._keep_first_sight(alias, pins)
        if isinstance(kept, PinsNotKept):
            self._say_not_kept(alias, kept)
            return {}
        if kept == pins:
            log.info("upstream '%s': %d tool definitions pinned on first sight", alias, len(pins))
            self.pins[alias] = without_definitions(pins)  # kept whole by the store; judged without them
            return None
        return kept

    def _keep_first_sight(self, alias: str, pins: Mapping[str, Pin]) -> dict[str, Pin] | PinsNotKept:
        """The store's answer to keeping first-sight pins: the pins kept, or why it could not."""
        assert self.store is not None
        try:
            return self.store.pin_first_sight(alias, pins)
        except PinsNotKept as exc:
            return exc

    def pins_for_review(self, alias: str) -> Mapping[str, Pin]:
        """The upstream's pins with their definitions, for a person's review (the console's
        diff of a held tool): the face keeps them without (`without_definitions`), so they
        are read again, whole, from the store that keeps them."""
        pins = self.pins.get(alias) or {}
        if all(pin.definition for pin in pins.values()):
            return pins
        load = getattr(self.store, "load_reviewable", None)
        return (load(alias) if callable(load) else None) or pins

    def _say_not_kept(self, alias: str, exc: PinsNotKept) -> None:
        """One WARNING per folder (the others at INFO): the folder, why, and what to do."""
        said = exc.where in self._unkept.values()
        self._unkept[alias] = exc.where
        if said:
            log.info("upstream '%s': its tools are held too: pins cannot be kept in %s", alias, exc.where)
            return
        log.warning("upstream '%s': tool pins cannot be kept in %s (%s): every tool seen for the first time is "
                    "held. Give the sidecar a writable data folder (data.folder), then approve with "
                    "`omb-sidecar servers approve %s`", alias, exc.where, exc.why, alias)

    def _report(self, alias: str, change: Change, held: bool) -> None:
        key = (alias, change.tool, change.kind, change.new_digest)
        if key in self._reported:
            return
        self._reported.add(key)
        action = "held" if held else "listed"
        log.warning("upstream '%s': tool '%s' %s (%s); %s. Review: omb-sidecar servers review %s", alias,
                    change.tool, change.kind, _rules(change) or "no scan finding", action, alias)
        self.audit.write({
            "event": "tool-definition", "bot": self.bot, "face": self.face, "upstream": alias, "tool": change.tool,
            "change": change.kind, "action": action, "oldDigest": change.old_digest, "newDigest": change.new_digest,
            "renamedFrom": change.renamed_from, "findings": [{"rule": f.rule, "field": f.field} for f in change.findings],
        })

    def _store_version(self) -> object:
        version = getattr(self.store, "version", None)
        return version() if callable(version) else None

    def stale(self) -> bool:
        """The store changed since the pins were read (an approval, say): forget them, so
        the next screen judges again. Cheap: one stat of the health file."""
        if not self.held or self.store is None:
            return False
        version = self._store_version()
        if version == self._version:
            return False
        self._version = version
        self.pins.clear()
        self._last = ()
        return True

    def held_answer(self, name: str) -> str | None:
        """The words for a call to a held tool, or None when `name` is not held."""
        found = self.held.get(name)
        if found is None:
            return None
        folder = self._unkept.get(found[0])
        why = (f" The sidecar could not keep tool pins in {folder}, so it trusts nothing it sees for the first "
               "time: give it a writable data folder (data.folder).") if folder else ""
        return held_words(*found) + why

    def held_target(self, name: str) -> tuple[str, str] | None:
        found = self.held.get(name)
        return (found[0], found[1].tool) if found is not None else None


def _screened_again(item: UpstreamListing, before: UpstreamListing) -> UpstreamListing:
    """`item` with the tools its last screening kept (its other lists are its own)."""
    if before is item or before.tools is item.tools:
        return item
    return msgspec.structs.replace(item, tools=before.tools, encoding=None)
