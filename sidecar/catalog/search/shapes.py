"""The shapes of values, so that an id or a CIDR in a request reaches the tools that take it.

Owns one classifier for a value's shape (an address range, an address, a date, a timestamp,
a path, a glob, a cron line, an email, a URL, a domain, a port, an SQL statement, or an id
with a letter prefix such as `vol-09be77` -> `id:vol`) and the two ways of using it: on a
request's tokens, and on a tool's input schema (its property names, formats, descriptions
and example values say which shapes its fields take). Shapes are returned as marker words
(`#cidr`, `#id:vol`) that the word index treats as one more field. General rules only:
nothing here knows any catalog.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from sidecar.catalog.search.text import words

__all__ = ["MARK", "abbreviates", "query_shapes", "schema_shapes", "value_shapes"]

MARK = "#"
_CIDR = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}/\d{1,2}$")
_IP = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:\.\.\d{4}-\d{2}-\d{2})?$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_DOMAIN = re.compile(r"^(?:[a-z0-9-]+\.)+[a-z]{2,}$", re.I)
_PORT = re.compile(r"^\d{1,5}/(?:tcp|udp)$", re.I)
_ID = re.compile(r"^([A-Za-z]{1,8})[-_]([A-Za-z0-9][A-Za-z0-9-]*)$")
_FILE = re.compile(r"\.[A-Za-z0-9]{1,5}(?:::\S+)?$")
_CRON = re.compile(r"(?:^|[\s'\"])((?:[\d*/,-]+\s+){4}[\d*/,-]+)(?=$|[\s'\"])")
_SQL = re.compile(r"^\s*(?:select|insert|update|delete|with|alter|drop|create)\b.*\b(?:from|into|set|table|where)\b",
                  re.I | re.S)
_SIZE = re.compile(r"\b\d+(?:\.\d+)?\s*(?:[kmgtp]i?b|bytes)\b", re.I)
_FILTER = re.compile(r"^[A-Za-z_]+(?:[:<>]|[<>]=)[^\s:<>]+$")
_TRIM = "\"'`.,;:!?()[]{}<>"

# Words in a property's name or text that say which shape it takes.
_CUES = {
    "cidr": "cidr", "cron": "cron", "crontab": "cron", "glob": "glob", "wildcard": "glob",
    "path": "path", "file": "path", "filename": "path", "directory": "path", "folder": "path", "dir": "path",
    "ip": "ip", "ipv4": "ip", "email": "email", "url": "url", "uri": "url", "webhook": "url",
    "domain": "domain", "hostname": "domain", "fqdn": "domain", "port": "port", "sql": "sql",
    "date": "date", "day": "date", "timestamp": "datetime", "datetime": "datetime", "iso": "datetime",
    "at": "datetime", "since": "datetime", "until": "datetime", "yyyy": "date",
    "size": "size", "gb": "size", "gib": "size", "mb": "size", "mib": "size", "tb": "size", "bytes": "size",
}
# The ones that still say it inside a sentence ("at" or "file" there says nothing).
_TEXT_CUES = frozenset("cidr cron crontab glob wildcard sql ipv4 email url uri webhook hostname timestamp yyyy iso gb gib"
                       " mb mib tb".split())
_FORMATS = {"date": "date", "date-time": "datetime", "email": "email", "uri": "url", "url": "url",
            "ipv4": "ip", "ipv6": "ip", "hostname": "domain"}


def _mark(shape: str) -> str:
    return f"{MARK}{shape}"


@functools.lru_cache(maxsize=1 << 14)
def value_shapes(token: str) -> frozenset[str]:
    """The shapes one value (a whitespace-free token) has, as marker words."""
    value = token.strip(_TRIM)
    if len(value) < 3 or not any(c.isdigit() or c in "/*@.:<>" for c in value):
        return frozenset()
    found: set[str] = set()
    if _CIDR.match(value):
        found.add("cidr")
    elif _IP.match(value):
        found.add("ip")
    elif _DATETIME.match(value):
        found.update(("datetime", "date"))
    elif _DATE.match(value):
        found.add("date")
    elif _EMAIL.match(value):
        found.add("email")
    elif _URL.match(value):
        found.add("url")
    elif _PORT.match(value):
        found.add("port")
    elif "*" in value and ("/" in value or "." in value):
        found.update(("glob", "path"))
    elif value.startswith(("/", "./", "~/")) or ("/" in value and _FILE.search(value)):
        found.add("path")
    elif _DOMAIN.match(value) and not value.replace(".", "").isdigit():
        found.add("domain")
    elif _FILTER.match(value):
        found.add("filter")
    if found:
        found.add(f"={value.lower()}")  # the value itself: an example a schema gives matches whole
    identifier = _ID.match(value)
    if identifier and any(c.isdigit() for c in identifier.group(2)) and len(identifier.group(2)) >= 3:
        found.add(f"id:{identifier.group(1).lower()}")
    return frozenset(map(_mark, found))


@functools.lru_cache(maxsize=1 << 12)
def query_shapes(query: str) -> tuple[str, ...]:
    """The shapes of the values a request carries, in order of first appearance."""
    found: dict[str, None] = {}
    if _CRON.search(query):
        found[_mark("cron")] = None
    if _SQL.match(query):
        found[_mark("sql")] = None
    if _SIZE.search(query):
        found[_mark("size")] = None
    for token in query.split():
        found.update(dict.fromkeys(sorted(value_shapes(token))))
        if token.strip(_TRIM).isdigit():
            found[_mark("number")] = None
    return tuple(found)


_VALUE_CHAR = re.compile(r"[\d/*@:<>]")  # a token without one of these is a plain word


def _value_tokens(text: str) -> list[str]:
    """The space-separated tokens of `text` that hold a value character (found from those
    characters outward: most of a description is plain words)."""
    found: list[str] = []
    end = -1
    for match in _VALUE_CHAR.finditer(text):
        start = match.start()
        if start < end:
            continue
        left = max(text.rfind(" ", 0, start), text.rfind("\n", 0, start)) + 1
        end = min((i for i in (text.find(" ", start), text.find("\n", start)) if i >= 0), default=len(text))
        found.append(text[left:end])
    return found


def _values_shapes(text: str) -> set[str]:
    found: set[str] = set()
    for token in _value_tokens(text):
        found |= value_shapes(token)
    if "*" in text and _CRON.search(text):
        found.add(_mark("cron"))
    return found


def _text_shapes(text: str) -> set[str]:
    found = {_mark(_CUES[w]) for w in words(text.lower()) if w in _TEXT_CUES}
    return found | _values_shapes(text)


@functools.lru_cache(maxsize=1 << 13)
def _property_shapes(name: str, text: str, fmt: str) -> frozenset[str]:
    found = {_mark(_CUES[w]) for w in words(name) if w in _CUES}
    found |= _text_shapes(text)
    if fmt in _FORMATS:
        found.add(_mark(_FORMATS[fmt]))
    return frozenset(found)


def schema_shapes(
    properties: Iterable[tuple[str, str, str, bool]], description: str
) -> tuple[frozenset[str], frozenset[str]]:
    """The shapes a tool takes, (through required fields or its description's examples,
    through optional fields only): from each (property name, text, "type:format", required)."""
    needed: set[str] = set()
    optional: set[str] = set()
    for name, text, fmt, required in properties:
        kind, fmt = fmt.split(":", 1) if ":" in fmt else ("", fmt)
        (needed if required else optional).update(_property_shapes(name, text, fmt))
        if kind in ("integer", "number"):
            (needed if required else optional).add(_mark("number"))
        if required and _is_id(name):
            needed.add(_mark(f"res:{_resource(name)}"))
    needed |= _description_shapes(description)
    return frozenset(needed), frozenset(optional - needed)


@functools.lru_cache(maxsize=1 << 12)
def _description_shapes(description: str) -> frozenset[str]:
    return frozenset(_values_shapes(description))


def _is_id(name: str) -> bool:
    parts = words(name)
    return len(parts) > 1 and parts[-1] in ("id", "ids")


def _resource(name: str) -> str:
    return "_".join(words(name)[:-1])


@functools.lru_cache(maxsize=1 << 12)
def abbreviates(prefix: str, resource: str) -> bool:
    """True when an id prefix is a usual short form of a resource name: its initials
    (`asg`: auto_scaling_group), or its letters in order from the first (`trk`: track,
    `pl`: playlist, `vol`: volume)."""
    parts = resource.split("_")
    if prefix == "".join(p[0] for p in parts if p):
        return True
    whole = "".join(parts)
    if not whole or prefix[0] != whole[0] or len(prefix) < 2 or prefix[1] not in parts[0][1:]:
        return False
    position = 1
    for char in prefix[1:]:
        position = whole.find(char, position) + 1
        if position == 0:
            return False
    return True
