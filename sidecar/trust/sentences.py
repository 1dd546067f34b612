"""Whether any rule of the poisoning scan can fire in a plain text, judged sentence by sentence.

Owns the scan's shortcut for definitions with no finding (most of a big listing): a text is
cut into sentences, each distinct sentence of a listing is judged once (can any pattern of
the rules that read ASCII text, or a credential path, match in it?), and a text none of whose
sentences can is left alone. Listings repeat their sentences (the boilerplate of descriptions
and parameters): a 425-tool listing holds about 10,000 sentences, 750-1,350 distinct.

Why a sentence suffices (for `Rule.ascii_patterns` and `CREDENTIAL_PATH`):
  - No match of them holds a sentence end, ". " (a dot, then a space), but in one way: a
    name ending in a dot before a parameter's word (`as the x. param`, hide-in-argument).
    So the text is cut at each ". " not followed by one of those words (`sentences`), and
    every match lies whole in one piece, ". " at its ends included (`_judged_as`).
  - The scan searches windows of a few hundred characters, cut anywhere: at a window's edge
    `\\b` holds even inside a word. So a piece is searched with each pattern less its `\\b`s
    (`_relaxed`), which matches wherever the pattern matched in some window.
  - A pattern is searched in a piece only when the piece holds a literal of each of the
    pattern's gates (`sidecar.trust.scan_gates`: literals every match holds, read from the
    pattern's syntax tree by `required_groups`, whatever anchors its rule lists); the scan
    finds which literals a piece holds with its anchors, word by word.
The answer is only ever "maybe" or "no": a text that may fire is read again by the full scan,
which decides its findings (`sidecar.trust.scan.scan_tools`). `tests/trust/test_sentences.py`
holds it to that on the corpora and on generated texts, and the gates to their derivation.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import Any

from sidecar.trust.scan_gates import GATES
from sidecar.trust.scan_rules import CREDENTIAL_AFTER, CREDENTIAL_BEFORE, CREDENTIAL_PATH, RULES, LazyPattern

__all__ = ["BUDGET", "GATE_LITERALS", "LEDGER", "PIECE", "SLOW", "forget", "judged", "may_fire", "may_fire_steps",
           "pause", "read", "relax_next", "remembered", "required_groups", "sentences"]

# what may follow a sentence end inside a match: `[\w.-]+[`'"]?\s+(?:parameter|argument|field|param|arg|property|input)`
_PARAMETER_STARTS = ("param", "arg", "field", "property", "input")
_LONGEST = 4096  # characters of a sentence searched whole at most, as `_judged_as` (longer: left to the full scan)
_REMEMBERED = 16384  # sentences judged and kept at most; past it, forgotten and judged again

# What bounds a step of first sight (this module's steps and the scan's): what it reads. Each
# read is charged before it runs (`read`), in characters: one each when read at C speed (a
# split, a fold, a substring search), `SLOW` each when read by a regex or word by word (the
# words learnt, the needles searched, the patterns). No read is charged more than `BUDGET`
# (a longer text is read in pieces), and a step ends (`pause`, a yield) before its charges
# would pass `BUDGET`: about 0.3 ms of C-speed reading, 4,096 characters of words learnt.
BUDGET = 65536
SLOW = 16
PIECE = BUDGET // SLOW  # characters of a long text read slowly in one go (its pieces)


class _Ledger:
    """What the current step has read; `steps`, when a list, gets each step's count (a test's hook)."""

    __slots__ = ("spent", "steps")

    def __init__(self) -> None:
        self.spent = 0
        self.steps: list[int] | None = None


LEDGER = _Ledger()


def pause() -> Generator[None, None, None]:
    """End the step: its count recorded, the loop's turn (a yield), a fresh count."""
    if LEDGER.steps is not None:
        LEDGER.steps.append(LEDGER.spent)
    LEDGER.spent = 0
    yield


def read(chars: int) -> Generator[None, None, None]:
    """Charge a read of `chars` (at most `BUDGET`), the step ended first when it would pass `BUDGET`."""
    if LEDGER.spent and LEDGER.spent + chars > BUDGET:
        yield from pause()
    LEDGER.spent += chars


Gates = tuple[tuple[str, ...], ...]
_PATTERNS: tuple[LazyPattern, ...] = (*dict.fromkeys(p for rule in RULES for _, p in rule.ascii_patterns),
                                      CREDENTIAL_PATH)
GATE_LITERALS = frozenset(literal for pattern in _PATTERNS for gate in GATES.get(pattern.source, ())
                          for literal in gate)
_UNGATED = tuple(index for index, pattern in enumerate(_PATTERNS) if not GATES.get(pattern.source))


def _opening() -> dict[str, tuple[int, ...]]:
    """A literal of a pattern's first gate -> the patterns (by index) it opens."""
    opening: dict[str, tuple[int, ...]] = {}
    for index, pattern in enumerate(_PATTERNS):
        for literal in (GATES.get(pattern.source) or ((),))[0]:
            opening[literal] = (*opening.get(literal, ()), index)
    return opening


_OPENING = _opening()
_REST = tuple(tuple(frozenset(gate) for gate in GATES.get(pattern.source, ())[1:]) for pattern in _PATTERNS)

_dirty: dict[str, bool] = {}  # a sentence judged -> whether a pattern may match in it
_relaxed_patterns: dict[int, re.Pattern[str]] = {}


def sentences(text: str) -> list[str]:
    """`text` (one line) cut at each ". " that no match can run across, the cuts dropped:
    `". ".join` of the pieces is `text`. Each piece stands for the text's stretch between two
    cuts, ". " included at its ends (`_judged_as`)."""
    return _CUT.split(text)


# a cut: ". " not followed by a parameter's word (one split at C speed; the same pieces as
# `_joined_across` of a split at every ". ", which a test compares)
_CUT = re.compile(r"\. (?!" + "|".join(map(re.escape, _PARAMETER_STARTS)) + ")")


def _joined_across(pieces: list[str]) -> list[str]:
    """The pieces of a text split at every ". ", joined again where a parameter's word follows."""
    if len(pieces) == 1 or not any(piece.startswith(_PARAMETER_STARTS) for piece in pieces[1:]):
        return pieces
    joined = [pieces[0]]
    for piece in pieces[1:]:
        if piece.startswith(_PARAMETER_STARTS):
            joined[-1] += ". " + piece
        else:
            joined.append(piece)
    return joined


def _judged_as(piece: str) -> str:
    """What a piece is searched as: with a space before it and a dot after, as it sits between
    two cuts (the text's first piece has no space before it, its last no dot after: a pattern
    matching without them matches with them, as none looks behind at a space or ahead for the
    end of the text)."""
    return " " + piece + "."


LiteralsOf = Callable[[list[str]], Sequence[frozenset[str]]]


def may_fire(texts: Sequence[str], literals_of: LiteralsOf) -> list[bool]:
    """For each plain text (one line), whether a pattern may match in one of its sentences
    (each distinct sentence of `texts` judged once; `literals_of` gives the gate literals each
    of those not judged yet holds, among others)."""
    steps = may_fire_steps(texts, literals_of)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            found: list[bool] = done.value
            return found


def may_fire_steps(texts: Sequence[str], literals_of: LiteralsOf) -> Generator[None, None, list[bool]]:
    """`may_fire` in steps (`read`: each text of at most `BUDGET` characters), its answer
    returned: the texts cut, then the distinct sentences not judged yet judged in batches of
    at most `PIECE` characters (each batch's new words read at once, `literals_of`; a sentence
    longer than `_LONGEST` may fire unread)."""
    cut: list[set[str]] = []
    pieces: set[str] = set()
    split = _CUT.split
    for text in texts:
        yield from read(len(text))
        cut.append(set(split(text)))
        pieces |= cut[-1]
    if len(_dirty) + len(pieces) > _REMEMBERED:
        _dirty.clear()
    # this listing's verdicts, its own (another listing's steps may run between these and clear `_dirty`)
    verdicts = {piece: _dirty[piece] for piece in pieces if piece in _dirty}
    fresh = [piece for piece in pieces if piece not in verdicts]
    batch: list[str] = []
    size = 0
    for piece in [*fresh, None]:
        if piece is not None and len(piece) + 2 > _LONGEST:  # (as searched: `_judged_as`)
            verdicts[piece] = _dirty[piece] = True
            continue
        if batch and (piece is None or size + len(piece) + 2 > PIECE):
            yield from read(size * SLOW)  # its words learnt, then its sentences searched
            verdicts.update(_judge(batch, [_judged_as(one) for one in batch], literals_of))
            batch, size = [], 0
        if piece is not None:
            batch.append(piece)
            size += len(piece) + 2
    dirty = {piece for piece, may in verdicts.items() if may}
    return [not text_pieces.isdisjoint(dirty) for text_pieces in cut]


def judged(pieces: set[str], literals_of: LiteralsOf) -> dict[str, bool]:
    """Every one of `pieces` judged (those not judged yet, at once: `literals_of` gives the
    gate literals each holds, among others); the verdicts, by piece."""
    if len(_dirty) + len(pieces) > _REMEMBERED:
        _dirty.clear()
    fresh = [piece for piece in pieces if piece not in _dirty]
    _dirty.update((piece, True) for piece in fresh if len(piece) + 2 > _LONGEST)  # may fire: its words not read
    fresh = [piece for piece in fresh if len(piece) + 2 <= _LONGEST]
    _judge(fresh, [_judged_as(piece) for piece in fresh], literals_of)
    return _dirty


def _judge(fresh: list[str], searched: list[str], literals_of: LiteralsOf) -> dict[str, bool]:
    """`fresh` judged, each as `searched` (`_judged_as`); remembered in `_dirty` too."""
    if not fresh:
        return {}
    verdicts = {piece: _may_match(text, held)
                for piece, text, held in zip(fresh, searched, literals_of(searched), strict=True)}
    _dirty.update(verdicts)
    return verdicts


def _may_match(piece: str, held: frozenset[str]) -> bool:
    """Whether a pattern (less its `\\b`s) whose every gate `held` meets matches in `piece`;
    True for a piece longer than `_LONGEST` (the full scan reads it in windows, as before)."""
    if len(piece) > _LONGEST:
        return True
    opened = set(_UNGATED)
    for literal in held:
        indices = _OPENING.get(literal)
        if indices is not None:
            opened.update(indices)
    for index in opened:
        for gate in _REST[index]:
            if held.isdisjoint(gate):
                break
        else:
            pattern = _PATTERNS[index]
            if (_credential_relaxed(piece) if pattern is CREDENTIAL_PATH
                    else _relaxed(pattern).search(piece) is not None):
                return True
    return False


_KEY_FILE = LazyPattern(r"[\w-]\.(?:pem|p12|pfx|keystore|jks|ppk)")
_KEY_RUN = LazyPattern(r"(?<![\w-])[\w-]+(?=\.key)")  # a whole word before `.key` (tried once a word)
_KEY_NAMES = ("server", "private", "client", "secret")


def _credential_relaxed(piece: str) -> bool:
    """Whether the credential path less its `\\b`s matches in `piece`, in time linear in its
    length: less its `\\b`s, `[\\w-]+\\.pem` is tried from every character of a word to the
    word's end (a 4 KB sentence of `a-a-…`: 90-180 ms); it matches when a word character
    or dash stands before `.pem`, and its `server[\\w-]*\\.key` when the word before `.key`
    holds one of those names. The other alternatives are searched as they are."""
    if _relaxed_part(CREDENTIAL_BEFORE).search(piece) or _relaxed_part(CREDENTIAL_AFTER).search(piece):
        return True
    if _KEY_FILE.search(piece):
        return True
    return any(name in word.group() for word in _KEY_RUN.compiled.finditer(piece) for name in _KEY_NAMES)


_relaxed_parts: dict[str, re.Pattern[str]] = {}


def _relaxed_part(source: str) -> re.Pattern[str]:
    found = _relaxed_parts.get(source)
    if found is None:
        found = _relaxed_parts[source] = re.compile(_relaxed_source(source))
    return found


def _relaxed(pattern: LazyPattern) -> re.Pattern[str]:
    """The pattern without its word-boundary assertions (compiled once)."""
    found = _relaxed_patterns.get(id(pattern))
    if found is None:
        found = _relaxed_patterns[id(pattern)] = re.compile(_relaxed_source(pattern.source))
    return found


def relax_next() -> bool:
    """Compile one more pattern's relaxed form ahead of the sentences that need it (the
    longest source not compiled yet first: the costliest compile, 0.1-1.7 ms here); False
    when every one is compiled. The credential path is judged by its two parts
    (`_credential_relaxed`), so those are what is compiled for it. A judgement compiles what
    it needs itself: this only moves that work to a moment with nothing else to do
    (`sidecar.trust.screen`)."""
    for pattern in _BY_SOURCE_LENGTH:
        if id(pattern) not in _compiled_ahead:
            _compiled_ahead.add(id(pattern))
            if pattern is CREDENTIAL_PATH:
                _relaxed_part(CREDENTIAL_BEFORE)
                _relaxed_part(CREDENTIAL_AFTER)
            else:
                _relaxed(pattern)
            return True
    return False


_compiled_ahead: set[int] = set()  # the patterns `relax_next` has compiled what judging needs of


_BY_SOURCE_LENGTH = tuple(sorted(_PATTERNS, key=lambda pattern: -len(pattern.source)))


def _relaxed_source(source: str) -> str:
    if "\\\\b" in source or "[\\b" in source:  # a literal backslash, or a backspace: no boundary to drop
        raise ValueError(f"cannot relax {source[:40]!r}")
    return source.replace("\\b", "")


def forget() -> None:
    """Drop the sentences judged."""
    _dirty.clear()


def remembered() -> int:
    return len(_dirty)


# -- the gates' derivation (the writer of `sidecar.trust.scan_gates` and its test; not run when scanning)

_GATES_KEPT = 3  # gates kept per pattern: the most telling (longest shortest literal) first
_SHORTEST = 3  # a gate with an ASCII literal shorter than this opens too much to be worth reading


def required_groups(source: str) -> Gates:
    """Groups of literals such that every match of `source` (less its `\\b`s) holds one
    literal of each group, each literal without spaces and at least `_SHORTEST` long; the
    most telling `_GATES_KEPT` of them. None at all (an empty tuple) when the pattern cannot
    be read so (a flag such as IGNORECASE)."""
    parser: Any = importlib.import_module("re._parser")  # the standard library's own reading of a pattern
    constants: Any = importlib.import_module("re._constants")
    parsed = parser.parse(_relaxed_source(source))
    if parsed.state.flags & constants.SRE_FLAG_IGNORECASE:
        return ()
    usable = [group for group in _required(list(parsed), constants)
              if all(len(literal) >= _SHORTEST or not literal.isascii() for literal in group)
              and not any(c.isspace() for literal in group for c in literal)]
    usable = list(dict.fromkeys(usable))
    return tuple(sorted(usable, key=lambda group: (-min(map(len, group)), group))[:_GATES_KEPT])


def _required(items: list[tuple[Any, Any]], c: Any) -> list[tuple[str, ...]]:
    """The required groups of a sequence of parsed items: each run of literal characters one
    after another is a group of one; a branch whose every alternative requires a group gives
    the union of one group from each; a repeat at least once, its body's; anything else (a
    class, a wildcard, an assertion, an optional part, a group with flags) requires nothing
    and ends a run."""
    groups: list[tuple[str, ...]] = []
    run: list[str] = []
    for op, value in [*items, (None, None)]:
        if op is c.LITERAL:
            run.append(chr(value))
            continue
        if run:
            groups.append(("".join(run),))
            run = []
        if op is c.SUBPATTERN:
            _, added, removed, body = value
            if not added and not removed:
                groups.extend(_required(list(body), c))
        elif op is c.BRANCH:
            each = [_required(list(alternative), c) for alternative in value[1]]
            if each and all(each):
                groups.append(tuple(sorted({literal for alternative in each
                                            for literal in max(alternative, key=_telling)})))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT) and value[0] >= 1:
            groups.extend(_required(list(value[2]), c))
    return groups


def _telling(group: tuple[str, ...]) -> int:
    return min(map(len, group))


def derived_gates() -> dict[str, Gates]:
    """Every gated pattern's gates, as `sidecar.trust.scan_gates` must hold them."""
    return {pattern.source: required_groups(pattern.source) for pattern in _PATTERNS}


def _write(into: Iterable[str]) -> str:
    lines = [*into, "GATES: dict[str, tuple[tuple[str, ...], ...]] = {"]
    for source, gates in derived_gates().items():
        lines.append(f"    {source!r}:")
        lines.append(f"        {gates!r},")
    lines.append("}")
    return "\n".join(lines) + "\n"


_HEADER = (
    '"""The poisoning scan\'s pattern gates: for each pattern that reads ASCII text (and the',
    "credential paths), groups of literals every match holds one of. Written by",
    "`python -m sidecar.trust.sentences` from the patterns themselves (`required_groups`); read",
    'by `sidecar.trust.sentences`. Regenerate with any rule change (a test compares)."""',
    "",
    "from __future__ import annotations",
    "",
    '__all__ = ["GATES"]',
    "",
)

if __name__ == "__main__":
    from pathlib import Path

    Path(__file__).with_name("scan_gates.py").write_text(_write(_HEADER))
