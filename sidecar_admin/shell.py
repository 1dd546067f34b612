"""Command lines people paste: `claude mcp add …`, `claude mcp add-json …`, `codex mcp add …`,
an `npx`/`uvx`/`docker run`/… line, or a bare server address; and the name a server gets
when the paste does not give one.

Owns turning one logical line into a raw entry (the `mcpServers` shape) with its explicit
name, and guessing a short name from a package, an image, a path or an address. Refuses
lines it cannot read (returned as `Unreadable` with the reason). Nothing is run or
expanded: `$X` stays `$X`, for the importer to notice.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from sidecar_admin import jsonish

__all__ = ["Candidate", "Unreadable", "read_line", "logical_lines", "name_from_entry", "RUNNERS"]

RUNNERS = frozenset({
    "npx", "uvx", "docker", "node", "python", "python3", "uv", "bunx", "bun", "deno", "pipx",
    "pnpm", "yarn", "java", "go", "dotnet", "ruby", "php", "podman",
})
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_HEADER_ITEM = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+:")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://\S+$")
_PROMPT = re.compile(r"^(?:\$|>|%|PS>)\s+(?=\S)")


@dataclass
class Candidate:
    """One server found in a paste, before naming and checking."""

    label: str  # how messages name it: "'notes'", "line 3", "the paste"
    raw: dict[str, Any]  # an entry in the `mcpServers` shape, as pasted
    name: str | None = None  # the name the paste gave, if any
    notes: list[str] = field(default_factory=list)


@dataclass
class Unreadable:
    label: str
    reason: str


# -- lines ------------------------------------------------------------------------------


def logical_lines(text: str) -> list[tuple[int, str]]:
    """Physical lines joined where a `\\` continues one or a quote is still open."""
    found: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
            if not line.strip() or line.lstrip().startswith(("#", "//")):
                continue
        stripped = line.rstrip()
        if stripped.endswith(("\\", "^", "`")) and not stripped.endswith("\\\\"):
            pending.append(stripped[:-1])
            continue
        pending.append(line)
        joined = "\n".join(pending)
        if _quotes_open(joined):
            continue
        found.append((start, joined))
        pending = []
    if pending:
        found.append((start, "\n".join(pending)))
    return found


def _quotes_open(text: str) -> bool:
    try:
        shlex.split(text)
    except ValueError:
        return True
    return False


def read_line(number: int, line: str) -> Candidate | Unreadable:
    label = f"line {number}"
    try:
        words = shlex.split(_PROMPT.sub("", line.strip()))
    except ValueError:
        return Unreadable(label, "its quotes are not closed")
    if not words:
        return Unreadable(label, "it is empty")
    if words[:3] in (["claude", "mcp", "add-json"], ["claude", "mcp", "add-from-json"]):
        return _claude_add_json(label, words[3:])
    if words[:3] == ["claude", "mcp", "add"]:
        return _claude_add(label, words[3:])
    if words[:3] == ["codex", "mcp", "add"]:
        return _codex_add(label, words[3:])
    if len(words) == 1 and _URL.match(words[0]):
        return _address(label, words[0])
    return _command_line(label, words)


def _address(label: str, url: str) -> Candidate | Unreadable:
    if not url.lower().startswith(("http://", "https://")):
        return Unreadable(label, "only http:// and https:// addresses can be added")
    return Candidate(label, {"url": url})


def _command_line(label: str, words: list[str]) -> Candidate | Unreadable:
    env: dict[str, str] = {}
    while words and _ENV_ASSIGNMENT.match(words[0]):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    if not words:
        return Unreadable(label, "it sets variables but runs nothing")
    runner = words[0].rsplit("/", 1)[-1]
    if runner in ("docker", "podman") and words[1:2] != ["run"]:
        return Unreadable(label, f"only `{runner} run` starts a server")
    if runner not in RUNNERS and not words[0].startswith(("/", "./", "../", "~/")) and ":\\" not in words[0]:
        return Unreadable(
            label, f"it is not an address, a `claude mcp add` command or a command line this can read "
            f"(it starts with {words[0][:40]!r})"
        )
    raw: dict[str, Any] = {"command": words[0], "args": words[1:]}
    if env:
        raw["env"] = env
    return Candidate(label, raw)


# -- claude mcp add / add-json, codex mcp add ---------------------------------------------

_CLAUDE_VALUE_OPTIONS = {"-s", "--scope", "--callback-port", "--client-id"}
_CLAUDE_FLAGS = {"--client-secret"}
_CLAUDE_SIGN_IN = {"--client-id", "--client-secret", "--callback-port"}


def _claude_add(label: str, words: list[str]) -> Candidate | Unreadable:
    transport: str | None = None
    env: dict[str, str] = {}
    headers: dict[str, str] = {}
    positional: list[str] = []
    notes: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if len(positional) >= 2 and not _URL.match(positional[1]):
            positional.append(word)  # the command's own arguments, taken as they are
        elif word == "--":
            positional.extend(words[i + 1 :])
            break
        elif word in ("-t", "--transport") or word.startswith("--transport="):
            transport, i = _option_value(words, i)
        elif word in ("-e", "--env") or word.startswith("--env="):
            i = _variadic(words, i, _ENV_ASSIGNMENT, lambda item: _put_env(env, item))
        elif word in ("-H", "--header") or word.startswith("--header="):
            i = _variadic(words, i, _HEADER_ITEM, lambda item: _put_header(headers, item))
        elif word.split("=")[0] in _CLAUDE_VALUE_OPTIONS | _CLAUDE_FLAGS:
            if word.split("=")[0] in _CLAUDE_SIGN_IN:
                _note_once(notes, "its sign-in app settings (--client-id, --client-secret) are not kept")
            if word.split("=")[0] in _CLAUDE_VALUE_OPTIONS:
                _, i = _option_value(words, i)
        elif word.startswith("-"):
            return Unreadable(label, f"`claude mcp add` option {word.split('=')[0]} is not one this can read")
        else:
            positional.append(word)
        i += 1
    if len(positional) < 2:
        return Unreadable(label, "`claude mcp add` needs a name and then a command or an address")
    name, target, rest = positional[0], positional[1], positional[2:]
    raw = _target_entry(target, rest, transport)
    if isinstance(raw, str):
        return Unreadable(label, raw)
    if env:
        raw["env"] = env
    if headers:
        raw["headers"] = headers
    return Candidate(label, raw, name, notes)


def _target_entry(target: str, rest: list[str], transport: str | None) -> dict[str, Any] | str:
    is_url = bool(_URL.match(target))
    if transport in ("http", "sse") or (transport is None and is_url):
        if not is_url:
            return f"--transport {transport} needs an address, not {target[:40]!r}"
        if rest:
            return "an address takes no arguments after it"
        raw: dict[str, Any] = {"url": target}
        if transport:
            raw["type"] = transport
        return raw
    if transport not in (None, "stdio"):
        return f"unknown transport {transport!r} (stdio, http or sse)"
    return {"command": target, "args": rest}


def _claude_add_json(label: str, words: list[str]) -> Candidate | Unreadable:
    positional = []
    i = 0
    while i < len(words):
        if words[i] in ("-s", "--scope"):
            i += 1
        elif not words[i].startswith("--scope=") and words[i] != "--client-secret":
            positional.append(words[i])
        i += 1
    if len(positional) != 2:
        return Unreadable(label, "`claude mcp add-json` needs a name and one JSON entry")
    try:
        entry = jsonish.loads(positional[1])
    except jsonish.JSONProblem as exc:
        return Unreadable(label, f"its JSON could not be read ({exc})")
    if not isinstance(entry, dict):
        return Unreadable(label, "its JSON must be one server entry (an object)")
    return Candidate(label, entry, positional[0])


def _codex_add(label: str, words: list[str]) -> Candidate | Unreadable:
    env: dict[str, str] = {}
    raw: dict[str, Any] = {}
    name: str | None = None
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            raw["command"], raw["args"] = (words[i + 1], words[i + 2 :]) if i + 1 < len(words) else (None, [])
            break
        if word == "--env" or word.startswith("--env="):
            value, i = _option_value(words, i)
            _put_env(env, value or "")
        elif word == "--url" or word.startswith("--url="):
            raw["url"], i = _option_value(words, i)
        elif word == "--bearer-token-env-var" or word.startswith("--bearer-token-env-var="):
            variable, i = _option_value(words, i)
            raw["headers"] = {"Authorization": f"Bearer ${variable}"}
        elif word.startswith("-"):
            return Unreadable(label, f"`codex mcp add` option {word.split('=')[0]} is not one this can read")
        elif name is None:
            name = word
        else:
            return Unreadable(label, "`codex mcp add` takes its command after `--`")
        i += 1
    if name is None or not (raw.get("command") or raw.get("url")):
        return Unreadable(label, "`codex mcp add` needs a name and then `--url ADDRESS` or `-- COMMAND`")
    if env:
        raw["env"] = env
    return Candidate(label, raw, name)


def _option_value(words: list[str], i: int) -> tuple[str | None, int]:
    if "=" in words[i] and words[i].startswith("--"):
        return words[i].split("=", 1)[1], i
    return (words[i + 1], i + 1) if i + 1 < len(words) else (None, i)


def _variadic(words: list[str], i: int, shape: re.Pattern[str], put: Any) -> int:
    """`-e A=1 B=2`: an option that takes every following item of its shape."""
    if words[i].startswith("--") and "=" in words[i]:
        put(words[i].split("=", 1)[1])
        return i
    while i + 1 < len(words) and shape.match(words[i + 1]):
        i += 1
        put(words[i])
    return i


def _put_env(env: dict[str, str], item: str) -> None:
    key, has_value, value = item.partition("=")
    env[key] = value if has_value else ""


def _put_header(headers: dict[str, str], item: str) -> None:
    key, _, value = item.partition(":")
    headers[key.strip()] = value.strip()


def _note_once(notes: list[str], note: str) -> None:
    if note not in notes:
        notes.append(note)


# -- names from what a server runs or where it lives ---------------------------------------

_GENERIC_LABELS = frozenset({"mcp", "api", "www", "server", "servers", "sse", "remote", "gateway", "app"})
_PUBLIC_SECOND_LEVEL = frozenset({"co", "com", "org", "net", "gov", "ac", "edu"})
_AFFIXES = re.compile(r"^(?:mcp[-_]server[-_]|server[-_]mcp[-_]|server[-_]|mcp[-_])+|(?:[-_.]mcp[-_.]server|[-_.]server[-_.]mcp|[-_.]mcp|[-_.]server)+$")
_PLAIN_FILES = frozenset({"index", "main", "server", "app", "cli", "__main__", "run", "start", "mcp"})
_BUILD_DIRS = frozenset({"build", "dist", "src", "bin", "lib", "out", "target", "release"})
_VALUE_OPTIONS = {
    "npx": {"-p", "--package", "--registry", "-c", "--call", "--cache"},
    "uvx": {"--from", "--with", "--python", "-p", "--index-url", "--extra-index-url", "--with-editable"},
    "pipx": {"--spec", "--python", "--pip-args", "--index-url"},
    "docker": {"-e", "--env", "-v", "--volume", "--name", "-p", "--publish", "--network", "--mount",
               "-w", "--workdir", "--user", "-u", "--entrypoint", "--platform", "--label", "-l",
               "--add-host", "--env-file", "--pull", "--cpus", "--memory", "-m", "--hostname", "-h"},
    "uv": {"--directory", "--with", "--from", "--python", "-p", "--project", "--index-url"},
}


def name_from_entry(raw: dict[str, Any]) -> str:
    """A short name for an entry the paste did not name (rules applied later)."""
    url = raw.get("url")
    if isinstance(url, str):
        return _name_from_url(url)
    command = raw.get("command")
    args = [a for a in raw.get("args") or [] if isinstance(a, str)]
    return _name_from_command(command if isinstance(command, str) else "", args) or "server"


def _name_from_url(url: str) -> str:
    try:
        host = (urllib.parse.urlsplit(url).hostname or "").rstrip(".")
    except ValueError:
        return "server"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return "local" if address.is_loopback else "server"
    labels = host.split(".")
    if len(labels) == 1:
        return "local" if labels[0] == "localhost" else labels[0] or "server"
    labels = labels[:-1]
    if len(labels) > 1 and labels[-1] in _PUBLIC_SECOND_LEVEL:
        labels = labels[:-1]
    main, rest = labels[-1], [lab for lab in labels[:-1] if lab not in _GENERIC_LABELS]
    return f"{main}-{rest[0]}" if rest else main


def _name_from_command(command: str, args: list[str]) -> str:
    runner = command.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".exe").removesuffix(".cmd")
    if runner in ("pnpm", "yarn") and args[:1] == ["dlx"]:
        runner, args = "npx", args[1:]
    if runner in ("uv", "pipx") and args[:1] in (["run"], ["tool"]):
        args = args[1:] if args[:1] == ["run"] or args[1:2] != ["run"] else args[2:]
    first = _first_positional(args, _VALUE_OPTIONS.get(runner, set()), skip_run=runner in ("docker", "podman"))
    if runner in ("npx", "bunx", "uvx", "pipx", "pnpm", "yarn"):
        if first and first.split("@")[0] == "mcp-remote":
            remote = next((a for a in args if _URL.match(a)), None)
            return _name_from_url(remote) if remote else "remote"
        return _package_name(first) if first else ""
    if runner in ("docker", "podman"):
        return _image_name(first) if first else ""
    if runner.startswith("python") or runner in ("uv",):
        if "-m" in args and args.index("-m") + 1 < len(args):
            return _trim(args[args.index("-m") + 1].rsplit(".", 1)[-1])
        if "-c" in args:
            return ""  # inline code names nothing
    if runner in RUNNERS:
        return _path_name(first) if first else ""
    return _path_name(command)


def _first_positional(args: list[str], value_options: set[str], skip_run: bool) -> str | None:
    i = 1 if skip_run and args[:1] == ["run"] else 0
    while i < len(args):
        arg = args[i]
        if arg in value_options:
            i += 2
            continue
        if not arg.startswith("-"):
            return arg
        i += 1
    return None


def _package_name(package: str) -> str:
    scope, _, rest = package.lstrip("@").partition("/") if package.startswith("@") else ("", "", package)
    rest = re.split(r"(?<=.)@|==|>=|<=|~=", rest)[0]
    return _trim(rest) or _trim(scope)


def _image_name(image: str) -> str:
    image = image.split("@", 1)[0]
    last = image.rsplit("/", 1)[-1].split(":", 1)[0]
    owner = image.rsplit("/", 2)[-2] if image.count("/") >= 1 else ""
    return _trim(last) or _trim(owner)


def _path_name(path: str) -> str:
    parts = [p for p in path.replace("\\", "/").split("/") if p and p not in (".", "..", "~")]
    while parts:
        stem = parts[-1].rsplit(".", 1)[0] if "." in parts[-1][1:] else parts[-1]
        if stem.lower() not in _PLAIN_FILES and stem.lower() not in _BUILD_DIRS:
            return _trim(stem)
        parts.pop()
    return ""


def _trim(name: str) -> str:
    """`mcp-server-fetch` -> `fetch`, `github-mcp-server` -> `github`."""
    trimmed = _AFFIXES.sub("", name.lower())
    return "" if trimmed in _GENERIC_LABELS else trimmed
