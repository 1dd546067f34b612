"""Pinned tool definitions: what a server's tools looked like when a person approved them,
and the judgement of each new listing against that.

Pure: digests, the comparison and the verdict; storage sits behind `PinStore`. A tool's
definition is its name, title, description, inputSchema, outputSchema and annotations,
encoded as compact JSON with sorted keys (so key order changes nothing); its `digest`
covers the name too, its `body` everything but the name (a rename keeps the body).

A listing is judged tool by tool: unchanged (same digest as its pin) passes; a changed
tool, a new tool and a renamed one (a new name whose body is a removed pin's body) are
changes; so is a pinned tool the poisoning scan flags, unless a person approved that
very definition (`reviewed`). Under `hold` a change is not listed; under `warn` it is
listed and reported; `off` judges nothing. A removed tool simply goes. An upstream with
no pins yet is trusted on its first listing (its flagged tools still count as changes).
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from typing import Any, Literal, Protocol

import msgspec

from sidecar.trust.findings import RULES_VERSION, Finding

__all__ = [
    "DEFINITION_KEYS",
    "PIECE",
    "Approval",
    "PinsNotKept",
    "Change",
    "ChangeKind",
    "Pin",
    "PinStore",
    "Pinning",
    "Memo",
    "Verdict",
    "clean_json",
    "definition_of",
    "digest_of",
    "encoding_steps",
    "hashed",
    "judge",
    "listed_bytes",
    "pin_tools",
    "without_definitions",
]

Pinning = Literal["hold", "warn", "off"]
ChangeKind = Literal["changed", "new", "renamed", "flagged"]
DEFINITION_KEYS = ("title", "description", "inputSchema", "outputSchema", "annotations")
_encode = msgspec.json.Encoder(order="sorted").encode


class Pin(msgspec.Struct, frozen=True, kw_only=True):
    digest: str  # of the whole definition, name included
    body: str  # of the definition without its name
    definition: str  # the canonical JSON, for `servers review`
    reviewed: bool = False  # a person approved exactly this definition, findings and all
    findings: tuple[Finding, ...] | None = None  # the scan's, by the rules of `scanned_by` (None: not kept)
    scanned_by: str = ""
    # The hex of `Memo`'s key of the tool's bytes as listed ("": not kept): a later start that
    # lists the same bytes knows the digest by that hash alone, without the sorted encoding.
    listed: str = ""


class Change(msgspec.Struct, frozen=True, kw_only=True):
    tool: str
    kind: ChangeKind
    old_digest: str | None
    new_digest: str
    renamed_from: str | None = None
    findings: tuple[Finding, ...] = ()


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    tools: list[dict[str, Any]]  # what may be listed
    held: dict[str, Change]  # upstream tool name -> why it is not listed
    changes: tuple[Change, ...]  # every change (held or listed)
    first: bool  # no pins existed: this listing was trusted on first sight


class Approval(msgspec.Struct, frozen=True):
    """The proof a person asked for a server's pins to change: every writer that can
    replace pins takes one. Made only by a person's act: the admin commands a person types
    (`servers approve`, `check`) and the console's Approve button (with the diff in view);
    no health record, schedule, restart, face or the console's Test makes one, and a test
    reads the source to keep it so (tests/trust/test_only_a_person.py)."""

    command: str  # what the person ran, for the record
    alias: str


class PinsNotKept(Exception):
    """The store could not keep first-sight pins (a read-only folder, say): the caller
    fails closed, as if nothing had ever been approved."""

    def __init__(self, where: str, why: str) -> None:
        super().__init__(f"{where}: {why}")
        self.where, self.why = where, why


class PinStore(Protocol):
    """Where pins live (the health file, or a shared store). A face may only pin what it
    sees first (`pin_first_sight`: written only where no pins exist, never over them);
    replacing pins is a person's act, through the store's own approval method."""

    def load_pins(self, alias: str) -> dict[str, Pin] | None: ...

    def pin_first_sight(self, alias: str, pins: Mapping[str, Pin]) -> dict[str, Pin]:
        """Keep `pins` unless the server has pins already; the pins kept now either way.
        Raises `PinsNotKept` when they cannot be written."""
        ...


def _canonical(tool: Mapping[str, Any], with_name: bool = True) -> bytes:
    """Every field of the definition as it is forwarded (`_meta`, `icons` and any other key
    too: what reaches the model is what a person approves). A definition with only the
    classic fields encodes as it always did, so pins kept before keep their digests."""
    definition = {key: tool[key] for key in DEFINITION_KEYS if key in tool}
    definition.update((key, value) for key, value in tool.items() if key not in _CLASSIC_FIELDS)
    if with_name:
        definition["name"] = tool.get("name", "")
    return _encode(definition)


def digest_of(tool: Mapping[str, Any]) -> str:
    """The digest of a definition, name included (one encoding, one hash)."""
    return _encoded_and_digest(tool)[1]


Encoded = tuple[bytes, str, str]  # a definition's canonical encoding, its digest and its body's digest


def _encoded_and_digest(tool: Mapping[str, Any]) -> Encoded:
    """The canonical encoding and digest of `tool`, and the digest of its body (the same
    encoding without the name): one encoding for both, as the name's member sits between the
    keys sorted before it and those after (`_canonical` of each, byte for byte), and one hash
    of what they share (the keys before the name: description and inputSchema, the bulk of a
    definition; a stdio process hashes with CPython's own SHA-256, without OpenSSL).
    `encoding_steps` is the same with pauses, for a definition of megabytes."""
    import hashlib  # loaded by the first digest, not by the mount plan before the early answer

    parts = _parts(tool)
    if parts is None:  # a key that is not a string (never from JSON): each encoded whole
        canonical, body = _canonical(tool), _canonical(tool, with_name=False)
        return canonical, hashlib.sha256(canonical).hexdigest(), hashlib.sha256(body).hexdigest()
    head, rest, tail = parts
    shared = hashlib.sha256(head)
    body_hash = shared.copy()
    shared.update(rest)
    body_hash.update(tail)
    return head + rest, shared.hexdigest(), body_hash.hexdigest()


def encoding_steps(tool: Mapping[str, Any]) -> Generator[None, None, Encoded]:
    """`_encoded_and_digest` with a pause after the encoding and after each `PIECE` bytes
    hashed: however large the definition, no hash reads more than a piece at a time (the
    encoding itself is one C call, about 2 ms a megabyte)."""
    import hashlib

    parts = _parts(tool)
    yield
    if parts is None:
        canonical, body = _canonical(tool), _canonical(tool, with_name=False)
        yield
        whole, bare = hashlib.sha256(), hashlib.sha256()
        yield from hashed(whole, canonical)
        yield from hashed(bare, body)
        return canonical, whole.hexdigest(), bare.hexdigest()
    head, rest, tail = parts
    shared = hashlib.sha256()
    yield from hashed(shared, head)
    body_hash = shared.copy()
    yield from hashed(shared, rest)
    yield from hashed(body_hash, tail)
    return head + rest, shared.hexdigest(), body_hash.hexdigest()


def _parts(tool: Mapping[str, Any]) -> tuple[bytes, bytes, bytes] | None:
    """The canonical encoding cut at the name's member: what both digests share (the keys
    sorted before the name), the rest of the whole one, and the rest of the body's (None:
    a key that is not a string)."""
    try:
        before = _encode({key: value for key, value in tool.items() if key < "name"})[1:-1]
        after = _encode({key: value for key, value in tool.items() if key > "name"})[1:-1]
    except TypeError:
        return None
    named = b'"name":' + _encode(tool.get("name", ""))
    rest = (b"," if before else b"") + named + (b"," + after if after else b"") + b"}"
    return b"{" + before, rest, (b"," if before and after else b"") + after + b"}"


PIECE = 1 << 16  # bytes hashed between two pauses of a stepped digest (a fraction of a ms)


class _Hasher(Protocol):
    def update(self, data: bytes | memoryview, /) -> None: ...


def hashed(hasher: _Hasher, data: bytes) -> Generator[None, None, None]:
    """`hasher` fed `data` `PIECE` bytes at a time, with a pause after each."""
    view = memoryview(data)
    for start in range(0, len(view), PIECE):
        hasher.update(view[start:start + PIECE])
        yield


def definition_of(tool: Mapping[str, Any], reviewed: bool = False,
                  findings: Mapping[str, tuple[Finding, ...]] | None = None, listed: bytes | None = None,
                  encoded: Encoded | None = None) -> Pin:
    """The pin of one tool as it is listed now (with its scan findings, when known by digest;
    `listed`: its bytes' key as a `Memo` already made it; `encoded`: its canonical encoding
    and digests, as `Memo.digest` made them on a first sight)."""
    canonical, digest, body = encoded if encoded is not None else _encoded_and_digest(tool)
    found = findings.get(digest) if findings is not None else None
    return Pin(digest=digest, body=body, definition=canonical.decode(), reviewed=reviewed, findings=found,
               scanned_by=RULES_VERSION if found is not None else "",
               listed=(listed if listed is not None else _listed_key(_plain(tool))).hex())


def without_definitions(pins: Mapping[str, Pin]) -> dict[str, Pin]:
    """The pins as a face judges by them: each without its canonical `definition`, which
    only a person's review reads (from where the pins are kept): ~2.8 KB a tool at rest."""
    return {name: msgspec.structs.replace(pin, definition="") if pin.definition else pin for name, pin in pins.items()}


def pin_tools(tools: Sequence[Mapping[str, Any]], reviewed: bool = False, before: Mapping[str, Pin] | None = None,
              findings: Mapping[str, tuple[Finding, ...]] | None = None) -> dict[str, Pin]:
    """Pins for a whole listing; a definition a person already reviewed stays reviewed.
    `findings` (digest -> the scan's findings) are kept with the pins, so a later start
    need not scan the same definitions again."""
    pins: dict[str, Pin] = {}
    for tool in tools:
        name = tool.get("name")
        if isinstance(name, str) and name:
            pin = definition_of(tool, reviewed, findings)
            old = before.get(name) if before else None
            if not reviewed and old is not None and old.reviewed and old.digest == pin.digest:
                pin = old
            pins[name] = pin
    return pins


listed_bytes = msgspec.json.Encoder().encode  # a tool's plain JSON, as the memo keys it (`Memo.digest`)
_plain = listed_bytes
_CLASSIC_FIELDS = frozenset((*DEFINITION_KEYS, "name"))


def clean_json(encoded: bytes) -> bool:
    """Whether no string or key of a definition holds a character below a space or DEL, told
    from its plain JSON (`listed_bytes`) at memchr speed: msgspec writes each character below
    a space as an escape (a backslash: `\\n`, `\\u0007`) and DEL as it is. For a definition
    as JSON decodes it (objects, arrays, strings, numbers, booleans, null): its JSON spells
    every string and key `sidecar.trust.plain_text.plain_strings` reads, and the copies that
    walk makes (a name's, a key's, `_` and `-` made spaces) add no other character."""
    return b"\\" not in encoded and b"\x7f" not in encoded


def _listed_key(listed: bytes) -> bytes:
    """What the memo keeps of a tool's bytes as listed: a 256-bit BLAKE2b of them (a whole
    catalog's bytes held as keys cost about 1.7 MB for 425 tools; the hash, 2 ms a listing)."""
    import hashlib

    return hashlib.blake2b(listed, digest_size=32).digest()


class Memo:
    """Per-upstream memory, so a definition seen before costs one plain encoding and a
    hash: its canonical digest by (a hash of) its exact bytes as listed (sorting keys costs
    three times more), and its scan findings by digest. Bounded: forgotten when it
    outgrows the listings."""

    LIMIT = 8192

    def __init__(self) -> None:
        self.digests: dict[bytes, str] = {}  # _listed_key(bytes as listed) -> digest
        self.by_name: dict[str, tuple[bytes, str]] = {}  # each tool's listed key and digest as last listed
        self.findings: dict[str, tuple[Finding, ...]] = {}  # every rule's but shadowing
        self.words: dict[str, frozenset[str]] = {}  # digest -> tool-name-like words, for shadowing
        # the last listing digested whole (the very list, and a digest per tool, "" for a nameless
        # one): its screen right after need not encode and hash it again (a few ms at 425 tools)
        self.listed: tuple[Sequence[Mapping[str, Any]], list[str]] | None = None
        # while a first sight is prepared: each new definition's canonical encoding, by digest,
        # for its pin (`definition_of(encoded=...)`), so it is encoded and hashed once
        self.encoded: dict[str, Encoded] | None = None
        # the last listing's words as `sidecar.trust.listing_words` read them (the very list, and
        # a superset of every tool's words): when none names a foreign tool, no tool can shadow one
        self.listing_words: tuple[Sequence[Mapping[str, Any]], frozenset[str]] | None = None

    def digests_of(self, tools: Sequence[Mapping[str, Any]]) -> list[str]:
        """A digest per tool ("" for a nameless one); remembered for this very list."""
        if self.listed is not None and self.listed[0] is tools and len(self.listed[1]) == len(tools):
            return self.listed[1]
        return [self.digest(t) if isinstance(t.get("name"), str) and t.get("name") else "" for t in tools]

    def remember(self, pins: Mapping[str, Pin] | None) -> None:
        """Take the scan results kept with pins (made by these rules), and each pinned tool's
        key of its bytes as listed: the same bytes listed again digest by that hash alone."""
        for name, pin in (pins or {}).items():
            if pin.findings is not None and pin.scanned_by == RULES_VERSION:
                self.findings.setdefault(pin.digest, pin.findings)
            if pin.listed and name not in self.by_name:
                try:
                    self.by_name[name] = (bytes.fromhex(pin.listed), pin.digest)
                except ValueError:  # not ours: this tool is digested in full
                    continue

    def listed_key(self, name: str) -> bytes | None:
        """The key of the bytes `name` was last digested from (None: not digested here)."""
        last = self.by_name.get(name)
        return last[0] if last is not None else None

    def digest(self, tool: Mapping[str, Any], encoded: bytes | None = None) -> str:
        """The tool's digest (`encoded`: its plain JSON, when the caller made it already)."""
        listed = _listed_key(_plain(tool) if encoded is None else encoded)
        found = self._known(tool, listed)
        return found if found is not None else self._learnt(tool, listed, _encoded_and_digest(tool))

    def digest_steps(self, tool: Mapping[str, Any], encoded: bytes) -> Generator[None, None, str]:
        """`digest` with a pause after each encoding and each `PIECE` bytes hashed, for a
        definition whose plain JSON (`encoded`) is over a piece: however large it is, no
        hash reads more than a piece between two pauses."""
        import hashlib

        key = hashlib.blake2b(digest_size=32)
        yield from hashed(key, encoded)
        listed = key.digest()
        found = self._known(tool, listed)
        if found is None:
            made = yield from encoding_steps(tool)
            found = self._learnt(tool, listed, made)
        return found

    def _known(self, tool: Mapping[str, Any], listed: bytes) -> str | None:
        """The digest of bytes listed before (as this tool last, or as any), else None."""
        name = tool.get("name")
        last = self.by_name.get(name) if isinstance(name, str) else None
        if last is not None and last[0] == listed:  # as this tool was listed last time: no hashing
            return last[1]
        found = self.digests.get(listed)
        if found is not None and isinstance(name, str):
            self.by_name[name] = (listed, found)
        return found

    def _learnt(self, tool: Mapping[str, Any], listed: bytes, made: Encoded) -> str:
        """Remember `made`, the digests of bytes not listed before."""
        if len(self.digests) >= self.LIMIT:
            self.digests.clear()
            self.by_name.clear()
        found = self.digests[listed] = made[1]
        if self.encoded is not None:
            self.encoded[found] = made
        name = tool.get("name")
        if isinstance(name, str):
            self.by_name[name] = (listed, found)
        return found

    def scan(self, listed: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        """Scan, in one batch, every (digest, tool) not scanned before."""
        for _ in self.scanning(listed):
            pass

    def scanning(self, listed: Sequence[tuple[str, Mapping[str, Any]]],
                 clean: Sequence[bool] | None = None) -> Generator[None, None, None]:
        """`scan` in steps bounded by the characters each reads (`sidecar.trust.scan.scan_steps`);
        `clean`: for tools as JSON decodes them, each listed tool's `clean_json` of its `listed_bytes`."""
        # the digest covers every forwarded field, as the scan reads them all: one key serves both
        unseen = {digest: index for index, (digest, _) in enumerate(listed) if digest not in self.findings}
        if not unseen:
            return
        from sidecar.trust.scan import scan_steps  # loaded by the first definition its kept findings lack

        found = yield from scan_steps([listed[index][1] for index in unseen.values()],
                                      [clean[index] for index in unseen.values()] if clean is not None else None)
        if len(self.findings) + len(unseen) > self.LIMIT:
            self.findings.clear()
            self.words.clear()
        self.findings.update(zip(unseen, found))

    def cannot_shadow(self, tools: Sequence[Mapping[str, Any]], foreign: Mapping[str, str]) -> bool:
        """True when no word of this very listing names a tool of `foreign` (so no tool of
        it needs its own words read for the shadowing rule)."""
        kept = self.listing_words
        return kept is not None and kept[0] is tools and foreign.keys().isdisjoint(kept[1])

    def findings_of(self, digest: str, tool: Mapping[str, Any], foreign: Mapping[str, str]) -> tuple[Finding, ...]:
        """The kept findings, and the shadowing one for today's other upstreams."""
        key = digest
        found = self.findings.get(key, ())
        if not foreign:
            return found
        from sidecar.trust.scan import identifiers, shadowing  # only with other upstreams to shadow

        words = self.words.get(key)
        if words is None:
            words = self.words[key] = identifiers(tool)
        shadow = shadowing(tool, words, foreign)
        return (*found, shadow) if shadow is not None else found


def _foreign(alias: str, names: list[str], others: Mapping[str, Sequence[str]] | None) -> dict[str, str]:
    """The shadowing rule's names of the other upstreams; none (and the scan not loaded for
    it) when this upstream is the only one."""
    if not others or all(other == alias for other in others):
        return {}
    from sidecar.trust.scan import foreign_names

    return foreign_names(alias, names, others)


def judge(
    alias: str,
    tools: Sequence[dict[str, Any]],
    pins: Mapping[str, Pin] | None,
    policy: Pinning,
    others: Mapping[str, Sequence[str]] | None = None,
    memo: Memo | None = None,
) -> Verdict:
    """The verdict on one upstream's listing against its pins: a digest per tool; the scan
    and the body digest (for renames) only for definitions not seen before."""
    if policy == "off":
        return Verdict(tools=list(tools), held={}, changes=(), first=False)
    memo = memo or Memo()
    names = [n for t in tools if isinstance(n := t.get("name"), str) and n]
    foreign = _foreign(alias, names, others)
    if foreign and memo.cannot_shadow(tools, foreign):
        foreign = {}
    listed = set(names)
    removed = {} if pins is None else {n: p for n, p in pins.items() if n not in listed}
    kept: list[dict[str, Any]] = []
    held: dict[str, Change] = {}
    changes: list[Change] = []
    digests = memo.digests_of(tools)
    memo.scan([(d, t) for d, t in zip(digests, tools) if d])
    for tool, digest in zip(tools, digests):
        name = tool.get("name")
        if not isinstance(name, str) or not digest:
            kept.append(tool)  # nameless: the merge skips it and counts it
            continue
        change = _change(name, digest, tool, pins, removed, memo.findings_of(digest, tool, foreign))
        if change is None:
            kept.append(tool)
            continue
        changes.append(change)
        if policy == "hold":
            held[change.tool] = change
        else:
            kept.append(tool)
    return Verdict(tools=kept, held=held, changes=tuple(changes), first=pins is None)


def _change(name: str, digest: str, tool: Mapping[str, Any], pins: Mapping[str, Pin] | None,
            removed: Mapping[str, Pin], findings: tuple[Finding, ...]) -> Change | None:
    old = pins.get(name) if pins is not None else None
    if pins is None or (old is not None and old.digest == digest):
        if findings and not (old is not None and old.reviewed):
            return Change(tool=name, kind="flagged", old_digest=old.digest if old else None, new_digest=digest,
                          findings=findings)
        return None
    if old is not None:
        return Change(tool=name, kind="changed", old_digest=old.digest, new_digest=digest, findings=findings)
    if removed:
        import hashlib

        body = hashlib.sha256(_canonical(tool, with_name=False)).hexdigest()
        source = next((n for n, p in removed.items() if p.body == body), None)
        if source is not None:
            return Change(tool=name, kind="renamed", old_digest=removed[source].digest, new_digest=digest,
                          renamed_from=source, findings=findings)
    return Change(tool=name, kind="new", old_digest=None, new_digest=digest, findings=findings)
