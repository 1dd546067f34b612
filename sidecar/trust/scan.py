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
In steps (`scan_steps`), each read is charged before it runs and a step ends before passing
`sentences.BUDGET`: a long text is folded, learnt, searched and its credential paths read in
pieces that give what the whole gives (`tests/trust/test_hostile_steps.py`).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import unicodedata
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import msgspec

from sidecar.trust.scan_rules import (
    CONFUSABLES,
    CREDENTIAL_AFTER,
    CREDENTIAL_ANCHORS,
    CREDENTIAL_BEFORE,
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
from sidecar.trust.plain_text import plain_join, plain_strings
from sidecar.trust.sentences import BUDGET, GATE_LITERALS, PIECE, SLOW, may_fire_steps, read
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


_T = TypeVar("_T")


def _drained(steps: Generator[None, None, _T]) -> _T:
    """What a generator of steps returns, its steps run at once."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            found: _T = done.value
            return found


def _needles_of(fields: list[str]) -> frozenset[str]:
    """The needles the words of `fields` hold (each field's read once, its new words learnt at once)."""
    return _drained(_needles_steps(fields))


def _needles_steps(fields: list[str]) -> Generator[None, None, frozenset[str]]:
    """`_needles_of` in steps: a field longer than `PIECE` read in pieces (`_field_pieces`),
    the new words learnt in batches of at most `PIECE` characters (`read`, `SLOW` each)."""
    pieces: list[str] = []
    for field in fields:
        if len(field) <= PIECE:
            pieces.append(field)
        else:
            pieces.extend((yield from _field_pieces(field)))
    held: set[str] = set()
    batch: list[str] = []
    size = 0
    for piece in [*pieces, None]:
        known = _field_needles.get(piece) if piece is not None else None
        if known is not None:
            held.update(known)
            continue
        if batch and (piece is None or size + len(piece) > PIECE):
            yield from read(size * SLOW)
            _read_fields(batch)  # no step between this and the next line: `batch` is remembered
            held.update(*[_field_needles[one] for one in batch])
            batch, size = [], 0
        if piece is not None:
            batch.append(piece)
            size += len(piece)
    return frozenset(held)


def _field_pieces(field: str) -> Generator[None, None, list[str]]:
    """`field` (a normalised text: words joined by single spaces) cut into pieces of at most
    `PIECE` characters whose words together hold the needles its words hold: cut at a space
    where there is one, else inside a long word, the next piece then starting a needle's length
    back (no needle holds a space, so each one found lies in a piece)."""
    pieces: list[str] = []
    at, end = 0, len(field)
    while at < end:
        yield from read(PIECE)
        if at + PIECE >= end:
            pieces.append(field[at:])
            break
        cut = field.rfind(" ", at + 1, at + PIECE)
        if cut > at:
            pieces.append(field[at:cut])
            at = cut + 1
        else:
            pieces.append(field[at:at + PIECE])
            at += PIECE - _LONGEST + 1
    return pieces


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
    return _drained(_held_steps(text, fields))


def _held_steps(text: str, fields: list[str]) -> Generator[None, None, frozenset[str]]:
    """`_anchors_held` in steps."""
    needles = yield from _needles_steps(fields)
    across = []
    for anchor, parts in _ACROSS_PARTS:
        if parts <= needles and (yield from _find_steps(text, anchor, 0)) != -1:
            across.append(anchor)
    return _WITHIN.intersection(needles).union(across)


def _find_steps(text: str, needle: str, start: int) -> Generator[None, None, int]:
    """`text.find(needle, start)`, reading at most `BUDGET` characters a step."""
    end = len(text)
    while start < end:
        stop = min(end, start + BUDGET)
        yield from read(stop - start)
        at = text.find(needle, start, stop)
        if at != -1 or stop == end:
            return at
        start = stop - len(needle) + 1
    return -1


def _search(groups: tuple[tuple[str, ...], ...], pattern: LazyPattern, text: str,
            held: frozenset[str]) -> tuple[int, int] | None:
    """The pattern's first match near an occurrence of its first group's anchors, when
    every group has an anchor in the text (`held`: the anchors the text holds): the regex
    runs on windows, not on the whole."""
    return _drained(_search_steps(groups, pattern, text, held))


_WINDOW_COST = 4 * SLOW  # a window's regex reads up to about 5 us a character (3.8 ms for 700 of `aaaa…` and an @)


def _search_steps(groups: tuple[tuple[str, ...], ...], pattern: LazyPattern, text: str,
                  held: frozenset[str]) -> Generator[None, None, tuple[int, int] | None]:
    """`_search` in steps: each window charged (`SLOW` a character), each find too."""
    for group in groups:
        if held.isdisjoint(group):
            return None
    for anchor in groups[0]:
        if anchor not in held:
            continue
        at = yield from _find_steps(text, anchor, 0)
        while at != -1:
            low, high = max(0, at - _WINDOW), at + len(anchor) + _WINDOW
            yield from read((min(high, len(text)) - low) * _WINDOW_COST)
            span = _window_search(pattern, text[low:high])
            if span is not None:
                return low + span[0], low + span[1]
            at = yield from _find_steps(text, anchor, high - len(anchor))
    return None


@functools.lru_cache(maxsize=32768)  # listings repeat sentences: the same window is searched once
def _window_search(pattern: LazyPattern, window: str) -> tuple[int, int] | None:
    if pattern.needs is not None and pattern.needs.search(window) is None:  # a piece of it is not there
        return None
    match = pattern.search(window)
    return match.span() if match is not None else None


def _credential_path(text: str, starts: list[tuple[int, str]], held: frozenset[str]) -> Finding | None:
    return _drained(_credential_steps(text, starts, held))


_SPACES = LazyPattern(" *")
_BEFORE = LazyPattern(CREDENTIAL_BEFORE)
_AFTER = LazyPattern(CREDENTIAL_AFTER)
_KEY_FILE = LazyPattern(r"\.(?:pem|p12|pfx|keystore|jks|ppk)\b")  # where `CREDENTIAL_RUN` ends, less its word
_KEY_NAMED = LazyPattern(r"\.key\b")  # where `CREDENTIAL_NAMED` ends, less its word
_NAMED = LazyPattern(r"\b(?:server|private|client|secret)")
_BOUNDARY = LazyPattern(r"\b")
_RUN = LazyPattern(r"[\w-]*")  # (the patterns here compile on their first use, not with the scan)


class _Runs:
    """The first match of `CREDENTIAL_RUN` (or `CREDENTIAL_NAMED`, `named`) starting at or after
    a position, as the whole pattern would find it there, without its cost: tried from every
    word boundary of a word to the word's end, `\\b[\\w-]+\\.pem` reads a word of letters and
    dashes (`a-a-a-…`) its length squared times. Here each `.pem` (or `.key`) is found once and
    the word before it read back once (no `.` is in the word: the match is the word from its
    first boundary, or from its first `server`... word, to the extension); the answer for a
    position holds for every later one up to its start."""

    __slots__ = ("ends", "named", "text", "found", "since", "end")

    def __init__(self, text: str, pos: int, reach: int, named: bool) -> None:
        self.text, self.named = text, named
        self.ends = (_KEY_NAMED if named else _KEY_FILE).compiled.finditer(text, pos, reach)
        self.found: tuple[int, int] | None = None
        self.since = -1  # `found` is the first at or after `since`, and after any position up to its start
        self.end: re.Match[str] | None = None

    def first(self, pos: int) -> tuple[int, int] | None:
        if 0 <= self.since <= pos and (self.found is None or self.found[0] >= pos):
            return self.found
        self.since, self.found = pos, None
        while True:
            while self.end is None or self.end.start() <= pos:
                self.end = next(self.ends, None)
                if self.end is None:
                    return None
            end = self.end.start()
            word = max(pos, _run_start(self.text, pos, end))
            start = (_NAMED if self.named else _BOUNDARY).search(self.text, word, end)
            if start is not None and start.start() < end:
                self.found = start.start(), self.end.end()
                return self.found
            self.end = None  # (this one starts no match from `pos` on, nor from a later one)


class _First:
    """A pattern's first match at or after a position (searched again only once passed)."""

    __slots__ = ("search", "text", "reach", "found", "since")

    def __init__(self, pattern: LazyPattern, text: str, reach: int) -> None:
        self.search, self.text, self.reach = pattern.compiled.search, text, reach
        self.found: tuple[int, int] | None = None
        self.since = -1

    def first(self, pos: int) -> tuple[int, int] | None:
        if 0 <= self.since <= pos and (self.found is None or self.found[0] >= pos):
            return self.found
        match = self.search(self.text, pos, self.reach)
        self.since, self.found = pos, match.span() if match is not None else None
        return self.found


def _run_start(text: str, pos: int, end: int) -> int:
    """Where the run of word characters and dashes ending at `end` starts (`pos` at the earliest)."""
    at = end
    while at > pos:
        low = max(pos, at - 256)
        back = _RUN.compiled.match(text[low:at][::-1])
        size = back.end() if back is not None else 0
        if size < at - low:
            return at - size
        at = low
    return pos


def _credential_matches(text: str, pos: int, reach: int) -> Iterator[tuple[int, int]]:
    """The spans `CREDENTIAL_PATH.compiled.finditer(text, pos, reach)` gives, in order: at each
    position the leftmost of its four parts' first matches, the earlier part first on a tie
    (as the alternatives are tried in order)."""
    parts: tuple[_First | _Runs, ...] = (_First(_BEFORE, text, reach), _Runs(text, pos, reach, False),
                                         _Runs(text, pos, reach, True), _First(_AFTER, text, reach))
    while pos <= reach:
        found = [(span[0], order, span[1]) for order, part in enumerate(parts)
                 if (span := part.first(pos)) is not None]
        if not found:
            return
        start, _, end = min(found)
        yield start, end
        pos = end


_AFTER_SPACES = 8  # what a credential path may read past the spaces after its word ("key", "ключ", then `\b`)


def _credential_steps(text: str, starts: list[tuple[int, str]],
                      held: frozenset[str]) -> Generator[None, None, Finding | None]:
    """The first credential path read or offered in `text`, its matches in order (as
    `finditer` gives them), read in pieces of about `PIECE // 4`-`PIECE // 2` characters ending at a
    space: a match holds at most one run of spaces (`private key`, `приватный ключ`) and reads
    no further past it than `_AFTER_SPACES` characters, so a match starting in a piece lies in
    the piece, the spaces after it and that many characters (the search's `endpos`: what lies
    beyond it reads as the text's end, as a space does to `\b` and the lookahead). A single word
    longer than that is one piece."""
    if held.isdisjoint(CREDENTIAL_ANCHORS):
        return None
    at, end = 0, len(text)
    while at < end:
        cut = text.find(" ", min(end, at + PIECE // 4), at + PIECE // 2)
        if cut == -1:
            cut = text.rfind(" ", at + 1, at + PIECE // 4)
        if cut == -1:
            cut = end if at + PIECE // 2 >= end else text.find(" ", at + PIECE // 2)  # (a long word: to its end)
            cut = end if cut == -1 else cut
        spaces = _SPACES.compiled.match(text, cut)
        after = spaces.end() if spaces is not None else cut
        reach = min(end, after + _AFTER_SPACES)
        yield from read((reach - at) * SLOW)
        for start, stop in _credential_matches(text, at, reach):
            if start >= cut:
                break
            field = _field_at(starts, start)
            offered = any(part in field for part in VALUE_FIELDS)
            if offered or READ_BEFORE.search(text, max(0, start - 80), start):
                return Finding("credential-path", field, text[start:stop][:80])
            at = stop
        at = max(at, cut)
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


def _walk_lazily(tool: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """`_walk`, one item at a time (an explicit stack of iterators: no container is read whole
    at once), with an empty text for each value that holds none (a number, a container): the
    full read charges each item it takes, so a definition of a million small values is walked
    in steps too."""
    name = tool.get("name")
    if isinstance(name, str):
        yield "name", name.replace("_", " ").replace("-", " ")
    keys = itertools.chain((k for k in _TEXT_KEYS if k in tool),
                           (k for k in tool if k not in _TEXT_KEYS and k != "name"))
    for key in keys:
        key = str(key)
        if key not in SCHEMA_WORDS:
            words: list[tuple[str, str]] = []
            _key_text(key, key, words)
            yield from words
        stack: list[Iterator[tuple[str | None, str, Any]]] = [iter([(key, key, tool[key])])]
        while stack:
            action = next(stack[-1], None)
            if action is None:
                stack.pop()
                continue
            inner_key, path, value = action
            if inner_key is None:  # a key's text
                yield path, value
            elif isinstance(value, str):
                yield path, "" if inner_key == "type" and value in JSON_TYPES else value
            else:
                yield path, ""
                if isinstance(value, dict):
                    stack.append(_dict_actions(path, value))
                elif isinstance(value, list):
                    stack.append(_list_actions(inner_key, path, value))


def _list_actions(key: str, path: str, value: list[Any]) -> Iterator[tuple[str | None, str, Any]]:
    for index, inner in enumerate(value):
        yield key, f"{path}[{index}]", inner


def _dict_actions(path: str, value: Mapping[Any, Any]) -> Iterator[tuple[str | None, str, Any]]:
    for inner_key, inner in value.items():
        inner_key = str(inner_key)
        inner_path = f"{path}.{inner_key}"
        if inner_key not in SCHEMA_WORDS:
            yield None, inner_path, inner_key
            if inner_key.count("_") + inner_key.count("-") >= 2:
                yield None, inner_path, inner_key.replace("_", " ").replace("-", " ")
        yield inner_key, inner_path, inner


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
    return _drained(_joined_steps(pieces, fold))


_ITEM = 64  # what taking one more piece of a definition is charged, beyond its characters (about a us)


def _joined_steps(pieces: Iterable[tuple[str, str]], fold: bool = False, kept: list[tuple[str, str]] | None = None
                  ) -> Generator[None, None, tuple[str, list[tuple[int, str]], list[str]]]:
    """`_joined_fields` in steps: each piece charged `_ITEM`, and its field read at C speed
    when ASCII (one a character), else `SLOW` a character; one longer than a step reads, in
    pieces (`_long_normal_parts`; the fields are then the text, one field, whose words hold
    the same needles). `kept`: where the pieces taken are kept (their non-empty ones)."""
    reader = _folded if fold else _normal
    starts: list[tuple[int, str]] = []
    parts: list[str] = []
    chunks: list[str] = []  # the text, joined once (a long field's pieces are not joined on their own)
    whole = False
    at = 0
    for field, text in pieces:
        if not text:
            yield from read(_ITEM)
            continue
        if kept is not None:
            kept.append((field, text))
        if len(text) <= PIECE or (len(text) <= BUDGET and text.isascii()):
            yield from read(_ITEM + (len(text) if text.isascii() else len(text) * SLOW))
            normal = [reader(text)] if text else []
        else:
            normal = yield from _long_normal_parts(text, reader)
            whole = True
        size = sum(map(len, normal))
        if not size:
            continue
        starts.append((at, field))
        if chunks:
            chunks.append(" ")
        chunks.extend(normal)
        if not whole:
            parts.append(normal[0])
        at += size + 1
    text = "".join(chunks)  # (one copy of what was read: about 1 ms a MB, page faults included)
    return text, starts, [text] if whole else parts


# where a long text that is not ASCII is cut: a space between two letters or digits (the
# text folds piece by piece as it does whole, its pieces joined by a space: no character
# composes with, or changes the case of, one across a space, and each piece keeps a letter);
# failing that, inside a word between two basic Latin or Cyrillic letters or digits (joined
# without one: neither composes with the other, and a sigma's case is decided on its side)
_SAFE_CUT = LazyPattern(r"(?<=[^\W_]) (?=[^\W_])")
_WORD_CUT = LazyPattern(r"(?<=[0-9A-Za-z\u0410-\u044f])(?=[0-9A-Za-z\u0410-\u044f])")


def _long_normal(text: str, reader: Any) -> Generator[None, None, str]:
    """`reader(text)`, in steps (`_long_normal_parts`, joined)."""
    return "".join((yield from _long_normal_parts(text, reader)))


def _long_normal_parts(text: str, reader: Any) -> Generator[None, None, list[str]]:
    """`reader(text)` (`_normal` or `_folded`) of a text longer than a step reads, in pieces
    (whose concatenation it is):
    an ASCII text in pieces of `BUDGET` characters cut anywhere (case folds character by
    character; a run of whitespace across a cut is one space still); another at `_SAFE_CUT`s
    or `_WORD_CUT`s about `PIECE // 2`-`PIECE` characters apart (a stretch without either is
    one piece: the one read a step does not bound, a run of other scripts' letters or marks
    longer than `PIECE // 2`)."""
    end = len(text)
    if text.isascii():  # (`_folded` of ASCII is `_normal`)
        out: list[str] = []
        space = False
        for at in range(0, end, BUDGET):
            yield from read(min(BUDGET, end - at))
            piece = text[at:at + BUDGET]
            if _may_hide(piece):
                piece = strip_invisible(piece)[0]
            words = " ".join(piece.lower().split())
            if not words:
                space = space or bool(piece)  # all whitespace (what was invisible is gone)
                continue
            if out and (space or piece[0].isspace()):
                out.append(" ")
            out.append(words)
            space = piece[-1].isspace()
        return out
    parts: list[str] = []
    at, joiner = 0, ""
    while at < end:
        cut, after = end, ""
        if at + PIECE < end:
            found = _SAFE_CUT.search(text, at + PIECE // 2, at + PIECE)
            if found is None:
                found, after = _WORD_CUT.search(text, at + PIECE // 2, at + PIECE), "in a word"
            if found is None:
                found, after = _SAFE_CUT.search(text, at + PIECE), ""  # (none near: the stretch is one piece)
            cut = found.start() if found is not None else end
        yield from read((cut - at) * SLOW)
        normal = reader(text[at:cut])
        if normal:
            if parts and joiner:
                parts.append(joiner)
            parts.append(normal)
        joiner = "" if after else " "
        at = cut
    return parts


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
    return _drained(scan_steps(tools))


_PLAIN_STRINGS = 1024  # strings a plain text is made of at most (the walk stops past it: `plain_strings`)
_PLAIN_WALK = 4 * _PLAIN_STRINGS * 4  # what that walk is charged (at most 4 x as many strings, a few units each)


def scan_steps(tools: Sequence[Mapping[str, Any]], clean: Sequence[bool] | None = None
               ) -> Generator[None, None, list[tuple[Finding, ...]]]:
    """`scan_tools` in steps (a yield between them), its findings returned: the whole
    listing's plain texts, their distinct sentences judged, then the full read of each
    definition that may hold a finding, one at a time. What bounds a step is what it reads
    (`sidecar.trust.sentences.read`): a definition whose strings hold more than `BUDGET`
    characters, or are more than `_PLAIN_STRINGS`, gets no plain text (the full read walks it
    one item at a time, `_walk_lazily`, and takes a long field in pieces). `clean`: for tools
    as JSON decodes them, whether each one's plain JSON holds no escape and no DEL
    (`sidecar.trust.pins.clean_json`): such a plain text is told printable without
    reading it (`plain_join`'s `clean`)."""
    texts: list[str | None] = []
    for index, tool in enumerate(tools):
        yield from read(_PLAIN_WALK)
        strings = plain_strings(tool, _PLAIN_STRINGS)
        size = sum(map(len, strings)) if strings is not None else 0
        if strings is None or size > BUDGET:
            texts.append(None)
            continue
        yield from read(size)
        texts.append(plain_join(strings, clean is not None and clean[index]))
    fires = iter((yield from may_fire_steps([text for text in texts if text is not None], _literals_of)))
    found: list[tuple[Finding, ...] | None] = [None if text is None or next(fires) else () for text in texts]
    for index, seen in enumerate(found):
        if seen is None:
            found[index] = yield from _scan_pieces_steps(_walk_lazily(tools[index]))
    return [seen if seen is not None else () for seen in found]


def _literals_of(pieces: list[str]) -> list[frozenset[str]]:
    """The needles each piece holds (its words learnt, all at once)."""
    _read_fields(pieces)
    return [_field_needles[piece] for piece in pieces]


def _scan_pieces(pieces: list[tuple[str, str]]) -> tuple[Finding, ...]:
    """The rules on the text as written, then, when other scripts' look-alike letters are in
    it, on the folded text too (the rules a first pass did not fire)."""
    return _drained(_scan_pieces_steps(pieces))


def _scan_pieces_steps(walked: Iterable[tuple[str, str]]) -> Generator[None, None, tuple[Finding, ...]]:
    """`_scan_pieces` in steps (`walked`: its pieces, taken one at a time)."""
    pieces: list[tuple[str, str]] = []
    text, starts, fields = yield from _joined_steps(walked, kept=pieces)
    if text.isascii():
        held = yield from _held_steps(text, fields)
        return (yield from _scan_one_steps(text, starts, _ASCII_LIVE, held))
    found = yield from _scan_one_steps(text, starts, _ALL_LIVE, (yield from _held_steps(text, fields)))
    folded, folded_starts, folded_fields = yield from _joined_steps(pieces, fold=True)
    if folded == text:
        return found
    fired = {f.rule for f in found}
    again = yield from _scan_one_steps(folded, folded_starts, _ASCII_LIVE if folded.isascii() else _ALL_LIVE,
                                       (yield from _held_steps(folded, folded_fields)))
    return found + tuple(f for f in again if f.rule not in fired)


def _scan_one(text: str, starts: list[tuple[int, str]], live: _Live,
              held: frozenset[str]) -> tuple[Finding, ...]:
    return _drained(_scan_one_steps(text, starts, live, held))


def _scan_one_steps(text: str, starts: list[tuple[int, str]], live: _Live,
                    held: frozenset[str]) -> Generator[None, None, tuple[Finding, ...]]:
    if not text or not held:  # no anchor of any rule: nothing can fire
        return ()
    findings: list[Finding] = []
    done: set[str] = set()
    for rule, (anchors, pattern) in live.candidates(held):
        if rule in done:
            continue
        span = yield from _search_steps(anchors, pattern, text, held)
        if span is not None:
            findings.append(Finding(rule, _field_at(starts, span[0]), text[span[0]:span[1]][:80]))
            done.add(rule)
    credential = yield from _credential_steps(text, starts, held)
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
