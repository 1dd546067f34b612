"""The HTTP listener's admission rules, as small pure decisions.

Owns: where the bearer token comes from (a file or a named environment variable, never
argv), comparing it in constant time, which bind addresses need `--allow-remote`, and
which `Host` and `Origin` values are acceptable. Refuses a missing or empty token, a
non-loopback bind without the flag, a `Host` that names another machine (the DNS
rebinding defence) and any `Origin` that is not one of the accepted hosts.
"""

from __future__ import annotations

import hmac
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from sidecar.upstream.proxying import is_loopback_host

__all__ = ["GuardError", "HostRule", "bearer_matches", "check_bind", "load_token", "split_bind"]

MIN_TOKEN_CHARS = 16
_HOST = re.compile(r"^(?:(?P<name>[A-Za-z0-9.-]+)|\[(?P<v6>[0-9A-Fa-f:.]+)\])(?::(?P<port>[0-9]{1,5}))?$")


class GuardError(Exception):
    """A start-up refusal, said in words for the operator."""


def load_token(token_file: str | None, token_env: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The bearer token from `--token-file` or the variable `--token-env` names."""
    environ = os.environ if environ is None else environ
    if token_file and token_env:
        raise GuardError("give either --token-file or --token-env, not both")
    if token_file:
        try:
            token = Path(token_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise GuardError(f"cannot read the token file: {getattr(exc, 'strerror', None) or type(exc).__name__}")
    elif token_env:
        token = environ.get(token_env, "").strip()
        if not token:
            raise GuardError(f"the environment variable {token_env} holds no token")
    else:
        raise GuardError("the HTTP front needs a bearer token: --token-file PATH or --token-env NAME")
    if len(token) < MIN_TOKEN_CHARS or any(ch.isspace() for ch in token):
        raise GuardError(f"the token must be at least {MIN_TOKEN_CHARS} characters, with no spaces")
    return token


def bearer_matches(authorization: str | None, token: str) -> bool:
    """`Authorization: Bearer <token>`, compared in constant time."""
    scheme, _, presented = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        presented = ""
    return hmac.compare_digest(presented.strip().encode("utf-8", "replace"), token.encode())


def split_bind(value: str) -> tuple[str, int]:
    """`HOST:PORT` (`[::1]:PORT` for IPv6) into its parts."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not host or int(port) > 65535:
        raise GuardError(f"--http wants HOST:PORT, got {value!r}")
    return host.strip("[]"), int(port)


def check_bind(host: str, allow_remote: bool) -> None:
    if not is_loopback_host(host) and not allow_remote:
        raise GuardError(f"{host} is not a loopback address: pass --allow-remote to listen there")


class HostRule:
    """Loopback names always; the bind address and named extras when listening remotely."""

    def __init__(self, bind_host: str, extra: Iterable[str] = ()) -> None:
        names = {"localhost", "127.0.0.1", "::1"}
        if bind_host not in ("0.0.0.0", "::"):
            names.add(bind_host.lower())
        names.update(name.strip().lower().strip("[]") for name in extra if name.strip())
        self._names = frozenset(names)

    def host_allowed(self, host_header: str | None) -> bool:
        found = _HOST.match(host_header or "")
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
