"""The HTTP listener's admission rules, as small pure decisions.

Owns: where the bearer tokens come from (a file, one a line, or a named environment
variable, never argv), comparing them in constant time, the caller identity a token
stands for, which bind addresses need `--allow-remote`, and
which `Host` and `Origin` values are acceptable. Refuses a missing or empty token, a
non-loopback bind without the flag, a `Host` that names another machine (the DNS
rebinding defence) and any `Origin` that is not one of the accepted hosts.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

from sidecar.private_files import warn_if_shared
from sidecar.settings import process_settings
from sidecar.upstream.proxying import is_loopback_host

__all__ = ["OPEN", "GuardError", "HostRule", "Refusal", "admit", "bearer_matches", "caller_identity", "check_bind", "load_token", "load_tokens",
           "split_bind"]

MIN_TOKEN_CHARS = 16
_HOST = re.compile(r"^(?:(?P<name>[A-Za-z0-9.-]+)|\[(?P<v6>[0-9A-Fa-f:.]+)\])(?::(?P<port>[0-9]{1,5}))?$")


class GuardError(Exception):
    """A start-up refusal, said in words for the operator."""


def load_tokens(token_file: str | None, token_env: str | None,
                environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The bearer tokens from `--token-file` (one a line; each is its own caller identity)
    or the one token in the variable `--token-env` names."""
    environ = process_settings().environ if environ is None else environ
    if token_file and token_env:
        raise GuardError("give either --token-file or --token-env, not both")
    if token_file:
        warn_if_shared(token_file, "the token file")
        try:
            text = Path(token_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise GuardError(f"cannot read the token file: {getattr(exc, 'strerror', None) or type(exc).__name__}")
        tokens = tuple(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))
    elif token_env:
        tokens = (environ.get(token_env, "").strip(),)
        if not tokens[0]:
            raise GuardError(f"the environment variable {token_env} holds no token")
    else:
        raise GuardError("the HTTP front needs a bearer token: --token-file PATH or --token-env NAME")
    if not tokens or any(len(t) < MIN_TOKEN_CHARS or any(ch.isspace() for ch in t) for t in tokens):
        raise GuardError(f"the token must be at least {MIN_TOKEN_CHARS} characters, with no spaces")
    return tokens


def load_token(token_file: str | None, token_env: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The first bearer token (see load_tokens)."""
    return load_tokens(token_file, token_env, environ)[0]


def bearer_matches(authorization: str | None, token: str) -> bool:
    """`Authorization: Bearer <token>`, compared in constant time."""
    scheme, _, presented = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        presented = ""
    return hmac.compare_digest(presented.strip().encode("utf-8", "replace"), token.encode())


def caller_identity(authorization: str | None, tokens: Iterable[str]) -> str | None:
    """Who is calling: `token:` and the first 128 bits of the SHA-256 of the token the
    request presents, or None when it presents none of them. Every token is compared (in
    constant time), so the time taken does not say which one matched."""
    scheme, _, presented = (authorization or "").partition(" ")  # read once, compared with each token
    offered = presented.strip().encode("utf-8", "replace") if scheme.lower() == "bearer" else b""
    matched: str | None = None
    for token in tokens:
        if hmac.compare_digest(offered, token.encode()):
            matched = token
    if matched is None:
        return None
    return _identity_of(matched)


@functools.lru_cache(maxsize=64)
def _identity_of(token: str) -> str:
    """A token's caller identity, hashed once per token, not once per request."""
    return "token:" + hashlib.sha256(token.encode()).hexdigest()[:32]


def split_bind(value: str) -> tuple[str, int]:
    """`HOST:PORT` (`[::1]:PORT` for IPv6) into its parts."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not host or int(port) > 65535:
        raise GuardError(f"--http wants HOST:PORT, got {value!r}")
    return host.strip("[]"), int(port)


def check_bind(host: str, allow_remote: bool) -> None:
    if not is_loopback_host(host) and not allow_remote:
        raise GuardError(f"{host} is not a loopback address: pass --allow-remote to listen there")


class Refusal(NamedTuple):
    """A request turned away before any handler: its status, words and headers."""

    status: int
    words: str
    headers: Mapping[str, str] | None = None


OPEN = ""  # `admit`'s answer for a path anyone may reach: admitted, no caller


def admit(rule: HostRule, tokens: Iterable[str], host: str | None, origin: str | None,
          authorization: str | None, open_path: bool) -> Refusal | str:
    """The one admission of an HTTP request (the single front's and the gateway's): a
    `Host` we serve, an `Origin` of ours or none, then a valid bearer token unless the
    path is open (`/health`, the console's own pages). The caller identity, `OPEN`, or
    the refusal."""
    if not rule.host_allowed(host):
        return Refusal(403, "Forbidden: this Host is not served here")
    if not rule.origin_allowed(origin):
        return Refusal(403, "Forbidden: this Origin is not allowed")
    if open_path:
        return OPEN
    caller = caller_identity(authorization, tokens)
    if caller is None:
        return Refusal(401, "Unauthorized: a valid bearer token is required", {"WWW-Authenticate": "Bearer"})
    return caller


class HostRule:
    """Loopback names always; the bind address and named extras when listening remotely."""

    def __init__(self, bind_host: str, extra: Iterable[str] = ()) -> None:
        names = {"localhost", "127.0.0.1", "::1"}
        if bind_host not in ("0.0.0.0", "::"):
            names.add(bind_host.lower())
        names.update(name.strip().lower().strip("[]") for name in extra if name.strip())
        self._names = frozenset(names)
        self._judged: dict[str, bool] = {}  # a client sends the same Host on every request

    def host_allowed(self, host_header: str | None) -> bool:
        header = host_header or ""
        known = self._judged.get(header)
        if known is None:
            known = self._judge_host(header)
            if len(self._judged) < 64:  # bounded: a caller inventing Host values gains nothing
                self._judged[header] = known
        return known

    def _judge_host(self, host_header: str) -> bool:
        found = _HOST.match(host_header)
        if found is None:
            return False
        name = (found.group("name") or found.group("v6") or "").lower()
        return name in self._names or is_loopback_host(name)

    def origin_allowed(self, origin: str | None) -> bool:
        """No Origin (not a browser) is fine; a present one must be one of ours."""
        if origin is None:
            return True
        try:
            parts = urlsplit(origin)
            parts.port  # noqa: B018 - a bad port raises
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and self.host_allowed(parts.netloc)
