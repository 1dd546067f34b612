"""The stdio upstreams a plain `[serve] --config PATH` start can launch before the config
module loads.

Owns the first moments of a stdio start: the argv shape every engine uses, and a read of
the config file with the standard library alone (`sidecar.plain_json`: the C scanner `json`
itself decodes with, without `json` and the `re` it loads: about 10 ms of an interpreter's start on this
machine, before the first spawn), so the upstreams' own start
(an interpreter or a Node process each) overlaps the sidecar's imports of msgspec, the
config and the runtime instead of following them. It starts only what the full config
and the mount plan certainly start, and refuses to guess otherwise:

- the file's sections are only `mcpServers` and sections that never change which servers
  start (`budgets`, `face`, `features`, `policy`, `audit`, a `bot` without `selection`,
  `grants` that allow and deny nothing): no organization, data folder, gateway;
- an entry holds only `command`, `args`, `env`, `cwd` and `type: "stdio"`, each of the
  expected type, its name, environment and arguments valid as the config's rules ask, and
  no blank left to fill;
- it is the first entry of its command, arguments, environment and folder;
- the health file beside the config records no failed server (a failed one is left out).

The CLI checks every early process against the mount plan it then makes
(`sidecar.upstream.spawn.keep_early`) and stops any that does not belong, and stops them
all when the config turns out invalid: what this module gets wrong costs a process killed
within milliseconds, never a server started that the sidecar serves.
"""

from __future__ import annotations

import os

from sidecar.plain_json import json_document
from sidecar.upstream.spawn import Launch, start_early_launches

TYPE_CHECKING = False  # neither `typing` nor `collections` loads before the first spawn
if TYPE_CHECKING:
    from collections.abc import Sequence

START_SECONDS = 8.0  # sidecar.config.Face.start_timeout_seconds's default (a test keeps them equal)
LIST_WAIT_SECONDS = 1.5  # sidecar.config.Face.list_wait_seconds's default (a test keeps them equal)

__all__ = ["PlainStart", "early_launches", "json_document", "list_wait_seconds", "plain_config_path", "plain_start",
           "records_a_failure", "start_named_in", "start_seconds", "valid_name"]

HEALTH_FILE = "mcp-health.json"  # sidecar.mounts.heads.HEALTH_FILE (a test keeps them equal)
NEEDS_VALUE = "<needs a value>"  # sidecar.config.rules.NEEDS_VALUE
# The config's own rules (sidecar.config.rules), for what an early start reads; a test
# compares this module's choices with the full config's and mount plan's on many configs.
_NAME_FIRST = frozenset("abcdefghijklmnopqrstuvwxyz")
_NAME_REST = _NAME_FIRST | frozenset("0123456789_-")
_MAX_NAME = 32  # sidecar.config.rules.MAX_NAME
_SPACE = b" \t\n\r\x0b\x0c"  # what `\s` matches in a bytes pattern
_OPEN = _SPACE + b":false"  # what may follow an `"ok"` still open at the end of a read
_HEALTH_READ = 1 << 16  # a read of the health file (a heap block, reused read after read)
_RESERVED_NAMES = frozenset({"agents", "browser", "composio", "computer", "data", "dweb", "mcp", "ogb", "omb",
                             "openmausbot", "phone", "sidecar"})
_SECTIONS = frozenset({"mcpServers", "budgets", "face", "features", "policy", "audit"})
_ENTRY_KEYS = frozenset({"command", "args", "env", "cwd", "type"})
_PACKAGE_FOLDERS = ("site-packages", "dist-packages")


def plain_config_path(argv: Sequence[str]) -> str | None:
    """The PATH of `[serve] --config PATH` (or `--config=PATH`), the way every engine starts
    the sidecar; None for any other command line."""
    rest = list(argv[1:] if argv[:1] == ["serve"] else argv)
    if len(rest) == 1 and rest[0].startswith("--config="):
        rest = ["--config", rest[0].removeprefix("--config=")]
    if len(rest) != 2 or rest[0] != "--config" or not rest[1] or rest[1].startswith("-"):
        return None
    return rest[1]


class PlainStart:
    """What the early start read: the config file's real path, its folder (the data
    folder), its bytes, and whether every server of the file started early (then the first listing
    is a function of what the entry point can see: `sidecar.listing_snapshot`)."""

    __slots__ = ("config", "every_server_early", "folder", "path")

    def __init__(self, path: str, config: bytes, every_server_early: bool) -> None:
        self.path, self.folder = path, os.path.dirname(path)
        self.config, self.every_server_early = config, every_server_early


_started: list[PlainStart] = []


def plain_start() -> PlainStart | None:
    """The last early start's `PlainStart`; None when none started anything."""
    return _started[-1] if _started else None


def start_named_in(argv: Sequence[str]) -> int:
    """Start now the stdio upstreams a plain start's config certainly mounts (see above);
    how many started (a command that cannot start is not counted)."""
    path = plain_config_path(argv)
    if path is None or path.startswith("~"):
        return 0
    real = os.path.realpath(path)
    if _inside_a_package(real):  # its state sits in the user's state folder: the CLI decides
        return 0
    data, document = _read(real)
    launches = early_launches(document)
    folder = os.path.dirname(real)
    if not launches or _health_records_a_failure(os.path.join(folder, HEALTH_FILE)):
        return 0
    started = start_early_launches(launches, start_seconds(document))
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    every = isinstance(servers, dict) and started == len(launches) == len(servers)
    _started.append(PlainStart(real, data, every))
    return started


def _read(path: str) -> tuple[bytes, object]:
    try:
        with open(path, "rb") as config:
            data = config.read()
        return data, json_document(data)
    except (OSError, ValueError, RecursionError):
        return b"", None


def start_seconds(document: object) -> float:
    """The face's start timeout as the config sets it (`face.startTimeoutSeconds`; else its default)."""
    return _face_seconds(document, "startTimeoutSeconds", START_SECONDS)


def list_wait_seconds(document: object) -> float:
    """How long a first listing waits for upstreams on their first start, as the config sets
    it (`face.listWaitSeconds`; else its default)."""
    return _face_seconds(document, "listWaitSeconds", LIST_WAIT_SECONDS)


def _face_seconds(document: object, name: str, default: float) -> float:
    face = document.get("face") if isinstance(document, dict) else None
    seconds = face.get(name) if isinstance(face, dict) else None
    valid = isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds > 0
    return float(seconds) if valid else default  # type: ignore[arg-type]


def _health_records_a_failure(path: str, read_size: int = _HEALTH_READ) -> bool:
    """Whether the health file at `path` records a failure (`records_a_failure`), read a
    piece at a time: a whole read of the file (over a megabyte with a server of 425 tools,
    three times that with three) lands in fresh pages, about 1 ms more before the first
    spawn than pieces in one reused heap block. Unreadable: True (nothing starts early)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    try:
        held = b""
        while True:
            piece = os.read(fd, read_size)
            data = held + piece if held else piece
            if records_a_failure(data):
                return True
            if not piece:
                return False
            held = _unsettled(data)
    except OSError:
        return True
    finally:
        os.close(fd)


def _unsettled(data: bytes) -> bytes:
    """What of `data` (holding no whole `"ok": false`) the next bytes may still complete into
    one, put shortly (its whitespace left out: what is held stays a few bytes): the last
    `"ok"` with the colon and the start of `false` after it, if that is all that follows it;
    else the last three bytes (a `"ok"` cut short). Only the tail is read: an open `"ok"` is
    followed by nothing but whitespace, a colon and letters of `false`, and no earlier one
    can be open (what follows it holds a later one's quote)."""
    at = len(data.rstrip(_OPEN)) - 4
    if at >= 0 and data.startswith(b'"ok"', at):
        after = _past_space(data, at + 4)
        if after == len(data):
            return b'"ok"'
        if data[after:after + 1] == b":":
            rest = data[_past_space(data, after + 1):]
            if b"false".startswith(rest):
                return b'"ok":' + rest
    return data[-3:]


def records_a_failure(health: bytes) -> bool:
    """Whether a health file's bytes hold a record with `"ok": false` (in JSON a quoted
    word followed by a colon is always a key: a string's own quotes are escaped): what
    `re.search(rb'"ok"\\s*:\\s*false', health)` finds, without `re`."""
    at = health.find(b'"ok"')
    while at >= 0:
        after = _past_space(health, at + 4)
        if health[after:after + 1] == b":" and health.startswith(b"false", _past_space(health, after + 1)):
            return True
        at = health.find(b'"ok"', at + 1)
    return False


def _past_space(data: bytes, at: int) -> int:
    while data[at:at + 1] and data[at] in _SPACE:
        at += 1
    return at


def _inside_a_package(real: str) -> bool:
    if any(part in _PACKAGE_FOLDERS for part in real.split(os.sep)):
        return True
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    return any(real.startswith(os.path.join(root, name) + os.sep) for name in ("sidecar", "sidecar_admin", "shims"))


def early_launches(document: object) -> list[tuple[str, Launch]]:
    """Pure: each (alias, launch) of `document` that the full config and mount plan
    certainly start (the health file aside), in file order."""
    if not isinstance(document, dict) or not all(_leaves_servers_alone(key, value) for key, value in document.items()):
        return []
    block = document.get("mcpServers", {})
    if not isinstance(block, dict):
        return []
    found: list[tuple[str, Launch]] = []
    seen: set[Launch] = set()
    for alias, entry in block.items():
        launch = _launch_of(entry)
        if launch is None:
            continue
        first = launch not in seen  # a later entry of the same launch is a duplicate, left out
        seen.add(launch)
        if first and _plain_entry(alias, entry):
            found.append((alias, launch))
    return found


def _leaves_servers_alone(section: str, value: object) -> bool:
    """A section that cannot change which servers start: one of `_SECTIONS`, a bot with no
    `selection`, grants with no `allow` and no `deny`."""
    if section in _SECTIONS:
        return True
    if section == "bot":
        return isinstance(value, dict) and value.get("selection") is None
    if section == "grants":
        return isinstance(value, dict) and value.get("allow") is None and not value.get("deny")
    return False


def _launch_of(entry: object) -> Launch | None:
    """The launch an entry names, when its command, arguments, environment and folder have
    the types the config asks (else it is nobody's duplicate: the config skips it)."""
    if not isinstance(entry, dict):
        return None
    command, args, env, cwd = entry.get("command"), entry.get("args", []), entry.get("env", {}), entry.get("cwd")
    if not (isinstance(command, str) and command and isinstance(args, list) and all(isinstance(a, str) for a in args)
            and isinstance(env, dict) and all(isinstance(v, str) for v in env.values())
            and (cwd is None or isinstance(cwd, str))):
        return None
    return Launch(command, tuple(args), tuple(sorted(env.items())), cwd)


def _plain_entry(alias: object, entry: dict[str, object]) -> bool:
    """An entry the config reads as a valid stdio server with nothing left to fill."""
    if not (isinstance(alias, str) and valid_name(alias) and "__" not in alias and alias not in _RESERVED_NAMES):
        return False
    if not set(entry) <= _ENTRY_KEYS or entry.get("type", "stdio") != "stdio":
        return False
    args, env = entry.get("args", []), entry.get("env", {})
    assert isinstance(args, list) and isinstance(env, dict)
    return NEEDS_VALUE not in args and all(_plain_variable(name, value) for name, value in env.items())


def valid_name(alias: str) -> bool:
    """What `re.match(r"^[a-z][a-z0-9_-]{0,31}$", alias)` (the config's name rule) accepts,
    without `re`: its `$` also matches before one final newline."""
    name = alias[:-1] if alias.endswith("\n") else alias
    return 0 < len(name) <= _MAX_NAME and name[0] in _NAME_FIRST and all(c in _NAME_REST for c in name[1:])


def _plain_variable(name: str, value: str) -> bool:
    """A variable the config accepts and that needs no value (sidecar.config.rules.check_env)."""
    return (bool(name) and "=" not in name and "\0" not in name and name.strip() == name
            and not name.upper().startswith(("OMB_", "OGB_")) and name != "ELECTRON_RUN_AS_NODE"
            and bool(value) and "\0" not in value)
