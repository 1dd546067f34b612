"""Words out of text, for the word index: splitting, folding, stemming.

Owns the one tokenizer both sides of a search use. Words are Unicode letters and digits:
identifiers split further on `_`, `-`, `.` and case changes; every word is case-folded
and stripped of accents (`Lösche` and `losche` are one word); a run of Chinese or
Japanese characters, which has no spaces, becomes its overlapping character pairs; and a
light English suffix stemmer folds plural and inflected forms together. All functions
are pure and cached: catalogs repeat their words, sentences and names.
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["cjk_runs", "fold", "is_cjk", "name_stems", "plain_words", "prose_stems", "query_terms", "query_words", "stem", "words"]

_WORD = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_HAS_UPPER = re.compile(r"[A-Z]")
# Han, kana and the CJK punctuation-free blocks: text written without spaces.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]+")

STOP = frozenset(
    "a an and any are as at be by can could do does for from has have how i in into is it its "
    "me my of on or our please should some that the their them then this to tool tools was we "
    "what when where which who will with would you your just now all need want let get's "
    "there here so up out about again also only very".split()
)
_UNSTEMMED = frozenset(
    "string thing nothing something anything everything during bring king ring wing ping sing "
    "spring morning evening ceiling status address access alias canvas news series".split()
)
SHORT_NUMBER = 4  # bare numbers up to this many digits are amounts, not identifiers


def _undouble(word: str) -> str:
    if len(word) > 2 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        return word[:-1]
    return word


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """Fold a lowercase word to a stem shared by its plural and inflected forms."""
    w = word
    if len(w) <= 3 or not w.isascii() or not w.isalpha() or w in _UNSTEMMED:
        return w
    if w.endswith(("ies", "ied")) and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith(("ches", "shes", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w.endswith("ing") and len(w) >= 5:
        w = _undouble(w[:-3])
    elif w.endswith("ed") and len(w) >= 4:
        w = _undouble(w[:-2])
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


@functools.lru_cache(maxsize=1 << 16)
def fold(word: str) -> str:
    """Case-folded, accents removed (`Répond` -> `repond`, `Straße` -> `strasse`)."""
    if word.isascii():
        return word.lower()
    return "".join(map(_plain, word.casefold()))


@functools.lru_cache(maxsize=1 << 12)
def _plain(char: str) -> str:
    """One character without its accents; only Latin, Greek and Cyrillic letters carry
    marks that people drop (kana and Hangul decompose into other letters)."""
    if ord(char) >= 0x0700:
        return char
    return "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))


def is_cjk(word: str) -> bool:
    return _CJK.search(word) is not None


def cjk_runs(text: str) -> list[str]:
    """The runs of space-less CJK characters in `text`."""
    return _CJK.findall(text)


def _pairs(run: str) -> list[str]:
    return [run] if len(run) < 2 else [run[i : i + 2] for i in range(len(run) - 1)]


def _split(token: str) -> list[str]:
    if token.isascii():
        if _HAS_UPPER.search(token):
            return [p.lower() for p in _CAMEL.findall(token)]
        return [token.lower()]
    if not is_cjk(token):
        return [fold(token)]
    found: list[str] = []
    for piece in re.split(f"({_CJK.pattern})", token):
        if piece:
            found.extend(_pairs(piece) if is_cjk(piece) else [fold(piece)])
    return found


def plain_words(text: str) -> list[str]:
    """The folded words of `text` as written (no identifier splitting, CJK runs whole)."""
    return [fold(token) for token in _WORD.findall(text)]


_ASCII_LOWER_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """The folded words of `text`, split on punctuation and case changes, in order."""
    if text.isascii() and not _HAS_UPPER.search(text):
        return _ASCII_LOWER_WORD.findall(text)
    return [p for token in _WORD.findall(text) for p in _split(token)]


def _kept(word: str) -> bool:
    return word not in STOP and not (word.isdigit() and len(word) <= SHORT_NUMBER)


def query_terms(query: str) -> list[str]:
    """The distinct stems of a query, in order; stop words and short numbers left out
    (unless that is all there is)."""
    found = words(query)
    kept = [w for w in found if _kept(w)] or found
    return list(dict.fromkeys(stem(w) for w in kept))


def query_words(query: str) -> list[tuple[str, str]]:
    """(stem, the word as written) for each distinct stem of a query, in order; stop words
    and short numbers left out (unless that is all there is)."""
    found = words(query)
    kept = [w for w in found if _kept(w)] or found
    pairs: dict[str, str] = {}
    for word in kept:
        pairs.setdefault(stem(word), word)
    return list(pairs.items())


@functools.lru_cache(maxsize=1 << 16)
def name_stems(name: str) -> frozenset[str]:
    parts = words(name)
    return frozenset(stem(p) for p in parts if p not in STOP or len(parts) == 1)


@functools.lru_cache(maxsize=1 << 14)
def _sentence_stems(sentence: str) -> frozenset[str]:
    # Prose is lowered whole: its case changes are not identifiers.
    return frozenset(map(stem, set(words(sentence.lower()))))


@functools.lru_cache(maxsize=1 << 13)
def prose_stems(text: str) -> frozenset[str]:
    """Every stem of a description, sentence by sentence (catalogs repeat sentences)."""
    found: set[str] = set()
    for sentence in text.split(". "):
        found.update(_sentence_stems(sentence))
    return frozenset(found)
