"""The rules a server entry must pass wherever a config is read, imported or edited.

Owns: server names (and the names the sidecar keeps for itself), environment variable
names, addresses, header names and values, the organization's approved list, what an
entry still needs before it can start, and the key two entries share when they would
mount the same server. Pure functions over plain values: no I/O, no config types, so
`sidecar.config` can call them while it reads a file.

Every refusal is a `ConfigError` whose words never repeat a header or environment value,
nor an address that carries a credential.
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence

from sidecar.errors import ConfigError

__all__ = [
    "MAX_NAME",
    "RESERVED_NAMES",
    "check_name",
    "check_env_name",
    "check_env",
    "check_url",
    "check_header",
    "check_headers",
    "is_https",
    "approved",
    "url_matches",
    "missing_values",
    "NEEDS_VALUE",
    "mount_key",
    "paths_in",
    "folder_owner",
]

MAX_NAME = 32
SEPARATOR = "__"  # between a server's name and its tool's name
_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
# Names the platform's own tool surfaces use: a custom entry may never shadow them.
RESERVED_NAMES = frozenset({
    "agents", "browser", "composio", "computer", "data", "dweb", "mcp", "ogb", "omb",
    "openmausbot", "phone", "sidecar",
})
_RESERVED_ENV_PREFIXES = ("OMB_", "OGB_")
_ELECTRON = "ELECTRON_RUN_AS_NODE"
# RFC 9110 `token`: the characters a field name may hold.
_FIELD_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_FIELD_VALUE_BAD = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
# Headers the HTTP client sets itself; a configured value would fight with it.
_HEADERS_OF_THE_CLIENT = frozenset({
    "host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer",
    "keep-alive", "proxy-connection", "mcp-session-id", "mcp-protocol-version",
})
# Query parameter names that carry a credential: tokens belong in headers. Compiled by the
# first URL server's check (a case-blind pattern costs start-up time to compile).
_CREDENTIAL_PARAMS = (
    r"^(?:.*[_-])?(?:api[_-]?key|apikey|key|token|access[_-]?token|auth|authorization|secret|"
    r"password|passwd|pwd|sig|signature|session)$"
)


def check_name(name: str, path: str = "", *, builtin: bool = False) -> None:
    """Lowercase letters, digits, `_`, `-`; a letter first; at most 32; no `__`; not a
    reserved name."""
    where = path or f"mcpServers.{name}"
    if not _NAME.match(name):
        raise ConfigError(
            where, f"the name must start with a letter and hold only lowercase letters, digits, '_' or '-' "
            f"(at most {MAX_NAME})"
        )
    if SEPARATOR in name:
        # `files__b__x` would read as tool `b__x` of `files` or tool `x` of `files__b`:
        # tool names and grant patterns must mean one server.
        raise ConfigError(where, f"the name must not contain '{SEPARATOR}', which separates a server's name "
                                 "from its tools' names")
    if name in RESERVED_NAMES and not builtin:
        raise ConfigError(where, f"the name '{name}' is kept for the sidecar's own tools")


def check_env_name(name: str, path: str) -> None:
    if not name or "=" in name or "\0" in name or name.strip() != name:
        raise ConfigError(path, f"invalid environment variable name {name!r}")
    if name.upper().startswith(_RESERVED_ENV_PREFIXES):
        raise ConfigError(path, f"the environment variable {name} is refused: OMB_* and OGB_* belong to the platform")


def check_env(env: Mapping[str, str], path: str) -> None:
    """Every name valid and not the platform's; ELECTRON_RUN_AS_NODE only as `1`."""
    for name, value in env.items():
        check_env_name(name, path)
        if name == _ELECTRON and value not in ("1", ""):
            raise ConfigError(path, f"{_ELECTRON} is accepted only as 1")
        if "\0" in value:
            raise ConfigError(path, f"the value of {name} holds a NUL character")


def check_url(url: str, path: str) -> urllib.parse.SplitResult:
    """A full http(s) address with a host and no credentials in it (names only in errors)."""
    if url != url.strip() or any(c.isspace() or ord(c) < 0x20 or c == "\x7f" for c in url):
        raise ConfigError(path, "the address holds spaces or control characters")
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ConfigError(path, "the address is not a valid URL") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ConfigError(path, "the address must be a full http:// or https:// URL")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ConfigError(path, "the address holds a user name or password: put tokens in a header instead")
    for key, _ in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        if re.match(_CREDENTIAL_PARAMS, key, re.IGNORECASE):  # `re` keeps the compiled pattern
            raise ConfigError(path, f"the address carries a credential ({key}=…): put tokens in a header instead")
    return parts


def is_https(url: str) -> bool:
    return urllib.parse.urlsplit(url).scheme.lower() == "https"


def check_header(name: str, value: str, path: str) -> None:
    if not _FIELD_NAME.match(name):
        raise ConfigError(path, f"{name!r} is not a valid HTTP header name")
    if name.lower() in _HEADERS_OF_THE_CLIENT:
        raise ConfigError(path, f"the header {name} is set by the sidecar itself")
    if _FIELD_VALUE_BAD.search(value):
        raise ConfigError(path, f"the value of header {name} must be a single line without control characters")


def check_headers(headers: Mapping[str, str], path: str) -> None:
    seen: set[str] = set()
    for name, value in headers.items():
        check_header(name, value, path)
        if name.lower() in seen:
            raise ConfigError(path, f"the header {name} is given twice")
        seen.add(name.lower())


# -- the organization's approved list ---------------------------------------------------


def approved(name: str, url: str | None, allowed: Iterable[str]) -> bool:
    """On the list by name, or (HTTPS only) by an address pattern."""
    for item in allowed:
        if "://" not in item:
            if item == name:
                return True
        elif url is not None and url_matches(url, item):
            return True
    return False


def url_matches(url: str, pattern: str) -> bool:
    """HTTPS only; host label by label (`*` = one or more whole labels); path with `*` = anything."""
    try:
        have, want = urllib.parse.urlsplit(url), urllib.parse.urlsplit(pattern)
        have_port, want_port = have.port or 443, want.port or 443
    except ValueError:
        return False
    if have.scheme.lower() != "https" or want.scheme.lower() != "https":
        return False
    if have.username is not None or have.password is not None or have_port != want_port:
        return False
    if want.username is not None or not want.hostname:
        return False
    return _labels_match(_labels(have.hostname or ""), _labels(want.hostname)) and _path_matches(
        have.path or "/", want.path or "/"
    )


def _labels(host: str) -> list[str]:
    return host.lower().rstrip(".").split(".")


def _labels_match(host: Sequence[str], pattern: Sequence[str]) -> bool:
    if not pattern:
        return not host
    head, rest = pattern[0], pattern[1:]
    if head == "*":
        return any(_labels_match(host[taken:], rest) for taken in range(1, len(host) + 1))
    if "*" in head or not host:
        return False  # a star inside a label is not a pattern this list understands
    return host[0] == head and _labels_match(host[1:], rest)


def _path_matches(path: str, pattern: str) -> bool:
    regex = ".*".join(re.escape(piece) for piece in pattern.split("*"))
    return re.fullmatch(regex, path, re.DOTALL) is not None


# -- what an entry still needs, and what makes two entries one ---------------------------


# An argument the paste left to fill. Not "": an empty argument is a real value (`--prefix ""`).
NEEDS_VALUE = "<needs a value>"


def missing_values(
    command: str | None, args: Sequence[str], env: Mapping[str, str], headers: Mapping[str, str]
) -> list[str]:
    """The blanks an entry must have filled before it can start: 'env X', 'header Y', 'argument N'."""
    needs = [f"env {k}" for k, v in env.items() if v == ""]
    needs += [f"header {k}" for k, v in headers.items() if v == ""]
    needs += [f"argument {i}" for i, a in enumerate(args, 1) if a == NEEDS_VALUE]
    if command == "":
        needs.insert(0, "command")
    return needs


def mount_key(
    command: str | None,
    args: Sequence[str],
    env: Mapping[str, str],
    cwd: str | None,
    url: str | None,
    headers: Mapping[str, str],
) -> tuple[object, ...]:
    """Equal for two entries that would run the same server (compared, never shown)."""
    if url is not None:
        host_folded = _fold_url(url)
        return ("url", host_folded, tuple(sorted((k.lower(), v) for k, v in headers.items())))
    return ("command", command, tuple(args), tuple(sorted(env.items())), cwd)


def _fold_url(url: str) -> str:
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return url
    try:
        host = str(ipaddress.ip_address(host))
    except ValueError:
        host = host.rstrip(".")
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    netloc = host if port in (None, default) else f"{host}:{port}"
    return urllib.parse.urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", parts.query, ""))


# -- boxed bots: whose folder a command reaches ------------------------------------------


def paths_in(command: str | None, args: Sequence[str], env: Mapping[str, str], cwd: str | None) -> list[str]:
    """Every path a command entry names: the command, each argument (and the part after
    `=` of `--flag=value`), each piece of an env value split on `:`, and the working
    folder. A relative piece counts relative to `cwd` when there is one. Normalised, not
    resolved (no I/O here: the caller resolves links)."""
    import posixpath

    pieces = [command or "", *args, *(p for v in env.values() for p in v.split(":"))]
    pieces += [a.partition("=")[2] for a in args if "=" in a]
    found = [posixpath.normpath(cwd)] if cwd else []
    for piece in pieces:
        if piece.startswith("/"):
            found.append(posixpath.normpath(piece))
        elif cwd and piece:
            found.append(posixpath.normpath(posixpath.join(cwd, piece)))
    return found


def folder_owner(path: str, root: str, bots: Iterable[str]) -> str | None:
    """The bot whose folder (`<root>/<bot>`) holds `path`, if any."""
    import posixpath

    root = posixpath.normpath(root)
    for bot in bots:
        folder = posixpath.join(root, bot)
        if path == folder or path.startswith(folder + "/"):
            return bot
    return None


def check_spent_states_shared(key_env: str | None, store_url: str | None) -> None:
    """A configured sealing key (`policy.confirmKeyEnv`) exists to let several processes
    honour each other's 2026-07-28 confirmation states; "Allow once" then holds only if
    they also share the record of used states (`store.url`). Without it each process
    remembers only its own, so one state runs once per replica, or again after a restart.
    No single-replica switch: even one replica restarting forgets its used states while
    an env key outlives it, so the key alone is never safe. Raises ConfigError."""
    if key_env and not store_url:
        raise ConfigError("policy.confirmKeyEnv", (
            "policy.confirmKeyEnv is set but store.url is not: a shared sealing key needs a shared record "
            "of used confirmation states; without store.url each process remembers only its own, so one "
            "'Allow once' could run once on every replica "
            "(or again after a restart). Set store.url to the Redis every replica uses, or remove "
            "policy.confirmKeyEnv (each process then seals with its own key)"))
