"""The poisoning scan: text in a tool definition that speaks to the model instead of
describing the tool.

Pure. Reads exactly what the forwarder can pass on: every key and every string value
of a definition at any depth (name, title, description, both schemas, annotations,
`_meta`, and any other field; inside them `$comment`, `x-*` keys, `pattern`, enum values,
object-valued defaults and examples, property names), joined into one text so an
instruction split across fields is read as one sentence. The text is folded first (NFKC,
so fullwidth and styled letters are plain; invisible format characters removed), and
when it holds letters of other scripts that imitate Latin ones, the rules run a second
time on it with those read as Latin. Each rule is
general (a kind of instruction, in several languages), and each finding names its rule:

  conceal           keep something from the person ("do not tell the user", "sin que el
                    usuario lo sepa", "不要告诉用户", ...)
  override          set aside earlier instructions ("ignore previous instructions", a
                    `<IMPORTANT>` or `<system>` tag, "this takes precedence over", ...)
  credential-path   a path where credentials live (~/.ssh, id_rsa, ~/.aws, .env, .netrc,
                    key files, /etc/shadow, ...)
  exfiltrate        send data to an address (a URL, an e-mail address, an IP)
  hide-in-argument  put secrets, file contents or the conversation into a parameter
  shadowing         name another upstream's tool (its own name or its `alias__tool` name)

Refuses nothing itself: the caller decides what a finding means (the pinning policy).
Cost: a printable ASCII definition is first judged by its sentences, each distinct sentence
of a listing once (`sidecar.trust.sentences`); only one that may hold a match is read as
below. There each text is read once for every rule's anchor words (field by field, a field
repeated across a listing read once); a rule's regexes run only on text holding its anchors.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from typing import Any

import msgspec

from sidecar.trust.scan_rules import (
    CONFUSABLES,
    CREDENTIAL_ANCHORS,
    CREDENTIAL_PATH,
    JSON_TYPES,
    READ_BEFORE,
    RULES,
    RULES_VERSION,
    SCHEMA_WORDS,
    VALUE_FIELDS,
    Anchored,
    LazyPattern,
    Rule,
)
from sidecar.catalog.sanitize import strip_invisible
from sidecar.trust.findings import Finding
from sidecar.trust.plain_text import plain_text
from sidecar.trust.sentences import GATE_LITERALS, may_fire_steps
from sidecar.trust.sentences import forget as forget_sentences, remembered as sentences_remembered

__all__ = ["Finding", "RULES", "RULES_VERSION", "Rule", "forget_texts", "foreign_names", "identifiers", "scan_tool",
           "remembered_texts", "scan_steps", "scan_tools", "shadowing", "tool_text"]

_TEXT_KEYS = ("description", "title")


_WINDOW = 320  # characters either side of an anchor a match may reach (patterns are shorter)

# Every anchor of every rule (and of the credential paths), and what the scan holds of a
# text: the set of those anchors it contains, exactly as one substring search per anchor
# would find them. Found through words, not through each text: a normalised field is
# words joined by single spaces, so an anchor without a space lies inside one word, and a
# listing's distinct words are few (the 425-tool shop catalog: 1,600 words, 13 KB, in
# 420 KB of distinct fields). Each word new to the scan is read once for every anchor
# (`_learn`: gram by gram for a short word, one substring search per anchor over the long
# words joined by line ends); a field's anchors are then the union of its words'. An anchor with a space can run across
# words and fields: it is searched in the joined text only when each of its space-free
# parts lies in a word of it (a necessary condition, read from the same word table).
_ANCHORS = frozenset({a for rule in RULES for groups, _ in rule.patterns for group in groups for a in group}
                     | set(CREDENTIAL_ANCHORS))
_ACROSS = tuple(sorted(a for a in _ANCHORS if " " in a))
_WITHIN = frozenset(a for a in _ANCHORS if " " not in a)
_PARTS = {a: frozenset(part for part in a.split(" ") if part) for a in _ACROSS}
# what a word is searched for: the anchors without a space and the parts of those with one
# (and the literals of the patterns' gates, which `sentences` judges a sentence by)
_NEEDLES = tuple(sorted(_WITHIN | {part for parts in _PARTS.values() for part in parts} | GATE_LITERALS))
_ACROSS_PARTS = tuple((a, _PARTS[a]) for a in _ACROSS)
_REMEMBERED = 8192  # words, and fields, remembered at most (as the text caches); past it, forgotten and read again

_words_seen: set[str] = set()  # every word read (with or without needles)
_word_needles: dict[str, frozenset[str]] = {}  # a word read -> the needles it holds (only words holding some)
_field_needles: dict[str, frozenset[str]] = {}  # a field read -> the needles its words hold


_GRAM = 3  # a needle this long or longer is found in a short word by its first characters


def _by_gram() -> dict[str, tuple[str, ...]]:
    """The needles of `_GRAM` characters or more, by their first `_GRAM`."""
    starting: dict[str, tuple[str, ...]] = {}
    for needle in _NEEDLES:
        if len(needle) >= _GRAM:
            starting[needle[:_GRAM]] = (*starting.get(needle[:_GRAM], ()), needle)
    return starting


_BY_GRAM = _by_gram()
_SHORT_NEEDLES = tuple(n for n in _NEEDLES if len(n) < _GRAM)
_GRAMMED = 40  # words this long at most are read gram by gram; a longer one, for each needle at C speed


def _learn(words: Iterable[str]) -> None:
    """Read words new to the scan for every needle: each needle of `_GRAM` characters or more
    in a short word at each of the word's grams; the others in the words joined by line ends,
    where no needle is found across two words, as none holds a line end."""
    ordered = list(words)
    short = [word for word in ordered if len(word) <= _GRAMMED]
    found: dict[str, list[str]] = {}
    grams = _BY_GRAM.get
    for word in short:
        for at in range(len(word) - _GRAM + 1):
            starting = grams(word[at:at + _GRAM])
            if starting is not None:
                for needle in starting:
                    if word.startswith(needle, at):
                        found.setdefault(word, []).append(needle)
    _search_joined(short, _SHORT_NEEDLES, found)
    _search_long([word for word in ordered if len(word) > _GRAMMED], found)
    _words_seen.update(ordered)
    for word, needles in found.items():
        _word_needles[word] = frozenset(needles)


_PIECE = 4096  # a long word is searched in overlapping pieces this long, each distinct piece once
_LONGEST = max(len(needle) for needle in _NEEDLES)


def _search_long(words: list[str], found: dict[str, list[str]]) -> None:
    """Add to `found` the needles each of the long `words` holds. Each word is cut into
    pieces that overlap by a needle's length, so every needle lies whole in one piece, and
    the distinct pieces are searched: a hostile word that repeats itself (five million
    `w`s) costs a few pieces, not a search of every needle through all of it."""
    step = _PIECE - _LONGEST + 1
    pieces_of = {word: {word[at:at + _PIECE] for at in range(0, len(word), step)} for word in words}
    held: dict[str, list[str]] = {}
    _search_joined(list(set().union(*pieces_of.values())), _NEEDLES, held)
    for word, pieces in pieces_of.items():
        needles = [needle for piece in pieces for needle in held.get(piece, ())]
        if needles:
            found.setdefault(word, []).extend(needles)


def _search_joined(words: list[str], needles: Sequence[str], found: dict[str, list[str]]) -> None:
    """Add to `found` the `needles` each of `words` holds, searched in the words joined by line ends."""
    if not words:
        return
    joined = "\n".join(words)
    ends: list[int] = []  # where each word ends in `joined`
    at = -1
    for word in words:
        at += len(word) + 1
        ends.append(at)
    find = joined.find
    for needle in [n for n in needles if n in joined]:  # most are in none of them: told apart at C speed
        at = find(needle)
        while at != -1:
            index = bisect.bisect_right(ends, at)  # the word `at` lies in (`ends[index]` is its line end)
            found.setdefault(words[index], []).append(needle)
            at = find(needle, ends[index] + 1)


def _needles_of(fields: list[str]) -> frozenset[str]:
    """The needles the words of `fields` hold (each field's read once, its new words learnt at once)."""
    _read_fields(fields)
    return frozenset().union(*[_field_needles[field] for field in fields])


def _read_fields(fields: Iterable[str]) -> None:
    """Learn the words of the fields not read yet and remember each field's needles (every
    one of `fields` is remembered on return, however many there are)."""
    if len(_field_needles) >= _REMEMBERED:  # forgotten before the unread are told apart: read again
        _field_needles.clear()
    unread = {field: set(field.split(" ")) for field in set(fields) if field not in _field_needles}
    if not unread:
        return
    if len(_words_seen) >= _REMEMBERED:  # likewise for the words
        _words_seen.clear()
        _word_needles.clear()
    new = set().union(*unread.values()) - _words_seen
    if new:
        _learn(new)
    holding = _word_needles.keys()
    for field, words in unread.items():
        _field_needles[field] = frozenset().union(*[_word_needles[w] for w in holding & words])


def _anchors_held(text: str, fields: list[str]) -> frozenset[str]:
    """The anchors `text` (the `fields` joined by single spaces) holds, exactly."""
    needles = _needles_of(fields)
    across = [a for a, parts in _ACROSS_PARTS if parts <= needles and a in text]
    return _WITHIN.intersection(needles).union(across)


def _search(groups: tuple[tuple[str, ...], ...], pattern: LazyPattern, text: str,
            held: frozenset[str]) -> tuple[int, int] | None:
    """The pattern's first match near an occurrence of its first group's anchors, when
    every group has an anchor in the text (`held`: the anchors the text holds): the regex
    runs on windows, not on the whole."""
    for group in groups:
        if held.isdisjoint(group):
            return None
    for anchor in groups[0]:
        if anchor not in held:
            continue
        at = text.find(anchor)
        while at != -1:
            low, high = max(0, at - _WINDOW), at + len(anchor) + _WINDOW
            span = _window_search(pattern, text[low:high])
            if span is not None:
                return low + span[0], low + span[1]
            at = text.find(anchor, high - len(anchor))
    return None


@functools.lru_cache(maxsize=32768)  # listings repeat sentences: the same window is searched once
def _window_search(pattern: LazyPattern, window: str) -> tuple[int, int] | None:
    if pattern.needs is not None and pattern.needs.search(window) is None:  # a piece of it is not there
        return None
    match = pattern.search(window)
    return match.span() if match is not None else None



def _credential_path(text: str, starts: list[tuple[int, str]], held: frozenset[str]) -> Finding | None:
    if held.isdisjoint(CREDENTIAL_ANCHORS):
        return None
    for match in CREDENTIAL_PATH.finditer(text):
        field = _field_at(starts, match.start())
        offered = any(part in field for part in VALUE_FIELDS)
        if offered or READ_BEFORE.search(text, max(0, match.start() - 80), match.start()):
            return Finding("credential-path", field, match.group(0)[:80])
    return None


def foreign_names(alias: str, own: Iterable[str], others: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """What the shadowing rule looks for in `alias`'s text: distinctive names of other
    upstreams' tools (own names and `other__name`, lowercase) -> that upstream. Build once
    per upstream and list, not per tool."""
    mine = {n.lower() for n in own}
    found: dict[str, str] = {}
    for other, names in others.items():
        if other == alias:
            continue
        for name in names:
            if name.lower() not in mine and _distinctive(name):
                found[name.lower()] = other
                found[f"{other}__{name}".lower()] = other
    return found


def _distinctive(name: str) -> bool:
    """A name a description would not use as a plain word: `send_email`, `createIssue`."""
    return len(name) >= 6 and ("_" in name or "-" in name or any(c.isupper() for c in name[1:]))


def _walk(tool: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every key and every string value of `tool` at any depth, with where it sits, in
    listed order: whatever the forwarder passes on is read, whichever key holds it
    (`$comment`, `x-*`, `pattern`, `_meta`, an object-valued `default`...). The name
    (as its words) and the text fields come first, so a sentence split across them
    still joins. Not read as text: keys of JSON Schema's own vocabulary and a `type` naming
    a JSON type (fixed words, nothing an upstream chose)."""
    out: list[tuple[str, str]] = []
    name = tool.get("name")
    if isinstance(name, str):  # first: a tool's text ends in boilerplate, which the window cache shares
        out.append(("name", name.replace("_", " ").replace("-", " ")))
    for key in [k for k in _TEXT_KEYS if k in tool] + [k for k in tool if k not in _TEXT_KEYS and k != "name"]:
        if key not in SCHEMA_WORDS:
            _key_text(str(key), str(key), out)
        _collect(tool[key], str(key), str(key), out, 0)
    return out


def _key_text(path: str, key: str, out: list[tuple[str, str]]) -> None:
    """A key as written, and, when it is a phrase joined by `_` or `-` (three words or
    more: `do_not_tell_the_user`), as its words too."""
    out.append((path, key))
    if key.count("_") + key.count("-") >= 2:
        out.append((path, key.replace("_", " ").replace("-", " ")))


_DEEP = 64  # nesting past this is walked with an explicit stack (a frame may nest 512 deep)


def _may_hide(text: str) -> bool:
    """False when `strip_invisible` would change nothing: printable ASCII, tabs and line
    ends (the usual case, answered at C speed)."""
    return not (text.isascii() and (text.isprintable() or text.replace("\n", "").replace("\t", "").replace("\r", "")
                                    .isprintable()))


def _collect(value: Any, path: str, key: str, out: list[tuple[str, str]], depth: int) -> None:
    if isinstance(value, str):
        if not (key == "type" and value in JSON_TYPES):
            out.append((path, value))
    elif depth > _DEEP:
        out.extend(_walk_deep(value, path, key))
    elif isinstance(value, dict):
        for inner_key, inner in value.items():
            inner_key = str(inner_key)
            inner_path = f"{path}.{inner_key}"
            if inner_key not in SCHEMA_WORDS:
                _key_text(inner_path, inner_key, out)
            _collect(inner, inner_path, inner_key, out, depth + 1)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            _collect(inner, f"{path}[{index}]", key, out, depth + 1)


def _walk_deep(value: Any, path: str, key: str) -> Iterator[tuple[str, str]]:
    """`_collect` without recursion, in the same order."""
    stack: list[tuple[str, str, Any, bool]] = [(path, key, value, False)]
    while stack:
        path, key, value, is_key = stack.pop()
        if is_key:
            yield path, key
        elif isinstance(value, str):
            if not (key == "type" and value in JSON_TYPES):
                yield path, value
        elif isinstance(value, dict):
            for inner_key, inner in reversed(value.items()):
                inner_key = str(inner_key)
                stack.append((f"{path}.{inner_key}", inner_key, inner, False))
                if inner_key not in SCHEMA_WORDS:
                    words: list[tuple[str, str]] = []
                    _key_text(f"{path}.{inner_key}", inner_key, words)
                    stack.extend((where, text, None, True) for where, text in reversed(words))
        elif isinstance(value, list):
            stack.extend((f"{path}[{index}]", key, inner, False) for index, inner in reversed(list(enumerate(value))))


def forget_texts() -> None:
    """Drop what the scan remembers of texts it read (windows searched, strings normalised,
    anchors per field). They serve a batch, where boilerplate repeats; the findings are kept
    by digest (`Memo.findings`), so kept at rest they only hold memory: about 4.5 MB after
    the first sight of a 425-tool server."""
    for cache in (_window_search, _normal, _folded, _piece_words):
        cache.cache_clear()
    forget_sentences()
    _words_seen.clear()
    _word_needles.clear()
    _field_needles.clear()


def remembered_texts() -> int:
    """How many texts, windows and words the scan remembers now (0 once `forget_texts` ran)."""
    return (sum(cache.cache_info().currsize for cache in (_window_search, _normal, _folded, _piece_words))
            + len(_words_seen) + len(_field_needles) + sentences_remembered())


def tool_text(tool: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every piece of text in a definition that can reach the model, with where it sits."""
    return _walk(tool)


@functools.lru_cache(maxsize=8192)  # listings repeat their boilerplate: normalise each string once
def _normal(text: str) -> str:
    if _may_hide(text):  # what the merge strips before forwarding, the scan strips before reading
        text = strip_invisible(text)[0]
    if text.isascii():
        return " ".join(text.lower().split())
    text = unicodedata.normalize("NFKC", text).replace("\u2019", "'").replace("\u2018", "'")
    if not text.isascii():
        text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return " ".join(text.lower().split())


@functools.lru_cache(maxsize=8192)
def _folded(text: str) -> str:
    """`_normal` text with look-alike letters of other scripts read as the Latin letters
    they imitate (`іgnоrе`, with a Cyrillic і, о and е, reads `ignore`) and combining
    marks dropped (`i̇` reads `i`)."""
    normal = _normal(text)
    if normal.isascii():
        return normal
    folded = unicodedata.normalize("NFD", normal.translate(CONFUSABLES))
    return unicodedata.normalize("NFC", "".join(c for c in folded if not unicodedata.combining(c)))


def _joined(pieces: list[tuple[str, str]], fold: bool = False) -> tuple[str, list[tuple[int, str]]]:
    """One text (fields joined by a space, so a sentence may run across them) and where
    each field starts in it; `fold`: with look-alike letters read as Latin ones."""
    text, starts, _ = _joined_fields(pieces, fold)
    return text, starts


def _joined_fields(pieces: list[tuple[str, str]], fold: bool = False) -> tuple[str, list[tuple[int, str]], list[str]]:
    """`_joined`, and the read fields it joined."""
    read = _folded if fold else _normal
    starts: list[tuple[int, str]] = []
    parts: list[str] = []
    at = 0
    for field, text in pieces:
        normal = read(text)
        if not normal:
            continue
        starts.append((at, field))
        parts.append(normal)
        at += len(normal) + 1
    return " ".join(parts), starts, parts


def _field_at(starts: list[tuple[int, str]], offset: int) -> str:
    field = starts[0][1] if starts else ""
    for start, name in starts:
        if start > offset:
            break
        field = name
    return field


_IDENT = re.compile(r"[a-z][a-z0-9_-]{4,}(?:__[a-z0-9_-]+)?")


def scan_tool(tool: Mapping[str, Any], foreign: Mapping[str, str] | None = None) -> tuple[Finding, ...]:
    """Every rule that finds an instruction to the model in this definition (one finding per rule)."""
    found = scan_tools([tool])[0]
    shadow = shadowing(tool, identifiers(tool), foreign) if foreign else None
    return (*found, shadow) if shadow is not None else found


def identifiers(tool: Mapping[str, Any]) -> frozenset[str]:
    """The tool-name-like words of a definition (what the shadowing rule compares, kept by
    digest: the other upstreams change, the definition's words do not). Read piece by
    piece: no word runs across the space that joins two pieces, and listings repeat their
    pieces, so each distinct piece is read once."""
    return frozenset().union(*[_piece_words(text) for _, text in tool_text(tool)])


@functools.lru_cache(maxsize=8192)
def _piece_words(text: str) -> frozenset[str]:
    return frozenset(_IDENT.findall(_folded(text)))


def shadowing(tool: Mapping[str, Any], words: frozenset[str], foreign: Mapping[str, str]) -> Finding | None:
    """The shadowing finding: a word of this definition that names another upstream's tool."""
    # from the foreign side: a dict's keys view walks the smaller side (a tool's few dozen
    # words), where `frozenset.isdisjoint(dict)` walks every foreign name (1,700 for 3 x 425)
    if foreign.keys().isdisjoint(words):
        return None
    text, starts = _joined(tool_text(tool), fold=True)
    return _shadowing(text, starts, foreign)


class _Live(list[tuple[str, Anchored]]):
    """Rule patterns in rule order, and which of them each anchor of their first group can
    start: a text is tried only on the patterns an anchor it holds can start."""

    def __init__(self, patterns: Iterable[tuple[str, Anchored]]) -> None:
        super().__init__(patterns)
        starting: dict[str, list[int]] = {}
        for index, (_, (groups, _)) in enumerate(self):
            for anchor in groups[0]:
                starting.setdefault(anchor, []).append(index)
        self.starting = {anchor: tuple(indices) for anchor, indices in starting.items()}

    def candidates(self, held: frozenset[str]) -> list[tuple[str, Anchored]]:
        """The patterns whose first group `held` meets, in rule order."""
        found: set[int] = set()
        for anchor in held:
            found.update(self.starting.get(anchor, ()))
        return [self[index] for index in sorted(found)]


_ASCII_LIVE = _Live((rule.name, pattern) for rule in RULES for pattern in rule.ascii_patterns)
_ALL_LIVE = _Live((rule.name, pattern) for rule in RULES for pattern in rule.patterns)


def scan_tools(tools: Sequence[Mapping[str, Any]]) -> list[tuple[Finding, ...]]:
    """The findings of every rule but shadowing (which depends on the other upstreams), per tool.

    A printable ASCII definition is first read as its plain text (`plain_text`: the same text,
    without each field's path), cut into `sentences`: when none of them can hold a match of a
    rule or a credential path, it has no finding. Else, and for any other definition, the scan
    reads it field by field (a finding names its field). A listing repeats its sentences:
    each distinct one is read for literals (as a field: `_read_fields`) and judged once."""
    steps = scan_steps(tools)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            found: list[tuple[Finding, ...]] = done.value
            return found


_AT_ONCE = 8  # tools read as plain text, or read in full, in one step of `scan_steps`


def scan_steps(tools: Sequence[Mapping[str, Any]]) -> Generator[None, None, list[tuple[Finding, ...]]]:
    """`scan_tools` in steps of a fraction of a ms each (a yield between them), its findings
    returned: the whole listing's plain texts, their distinct sentences judged, then the full
    read of each definition that may hold a finding, one at a time."""
    texts: list[str | None] = []
    for start in range(0, len(tools), _AT_ONCE):
        texts.extend(plain_text(tool) for tool in tools[start:start + _AT_ONCE])
        yield
    fires = iter((yield from may_fire_steps([text for text in texts if text is not None], _literals_of)))
    found: list[tuple[Finding, ...] | None] = [None if text is None or next(fires) else () for text in texts]
    unread = [index for index, seen in enumerate(found) if seen is None]
    for start in range(0, len(unread), _AT_ONCE):
        chunk = unread[start:start + _AT_ONCE]
        pieces_of = {index: tool_text(tools[index]) for index in chunk}
        if len(unread) > 1:  # their fields' new words learnt together
            _read_fields([_normal(text) for listed in pieces_of.values() for _, text in listed])
            yield
        for index in chunk:
            found[index] = _scan_pieces(pieces_of[index])
            yield
    return [seen if seen is not None else () for seen in found]


def _literals_of(pieces: list[str]) -> list[frozenset[str]]:
    """The needles each piece holds (its words learnt, all at once)."""
    _read_fields(pieces)
    return [_field_needles[piece] for piece in pieces]


def _scan_pieces(pieces: list[tuple[str, str]]) -> tuple[Finding, ...]:
    """The rules on the text as written, then, when other scripts' look-alike letters are in
    it, on the folded text too (the rules a first pass did not fire)."""
    text, starts, fields = _joined_fields(pieces)
    if text.isascii():
        return _scan_one(text, starts, _ASCII_LIVE, _anchors_held(text, fields))
    found = _scan_one(text, starts, _ALL_LIVE, _anchors_held(text, fields))
    folded, folded_starts, folded_fields = _joined_fields(pieces, fold=True)
    if folded == text:
        return found
    fired = {f.rule for f in found}
    again = _scan_one(folded, folded_starts, _ASCII_LIVE if folded.isascii() else _ALL_LIVE,
                      _anchors_held(folded, folded_fields))
    return found + tuple(f for f in again if f.rule not in fired)


def _scan_one(text: str, starts: list[tuple[int, str]], live: _Live,
              held: frozenset[str]) -> tuple[Finding, ...]:
    if not text or not held:  # no anchor of any rule: nothing can fire
        return ()
    findings: list[Finding] = []
    done: set[str] = set()
    for rule, (anchors, pattern) in live.candidates(held):
        if rule in done:
            continue
        span = _search(anchors, pattern, text, held)
        if span is not None:
            findings.append(Finding(rule, _field_at(starts, span[0]), text[span[0]:span[1]][:80]))
            done.add(rule)
    credential = _credential_path(text, starts, held)
    if credential is not None:
        findings.append(credential)
    return tuple(findings)


def _shadowing(text: str, starts: list[tuple[int, str]], foreign: Mapping[str, str]) -> Finding | None:
    for match in _IDENT.finditer(text):
        other = foreign.get(match.group(0))
        if other is not None:
            return Finding("shadowing", _field_at(starts, match.start()),
                           f"names '{match.group(0)}' of upstream '{other}'")
    return None
