"""Pure rules of sign-in discovery: where to look, and what an answer means.

Owns the `WWW-Authenticate` challenge parser, the canonical resource address (RFC 8707),
the protected resource metadata addresses (RFC 9728 §3.1), the authorization server
metadata addresses in the MCP spec's order (RFC 8414 and OpenID discovery, for issuers
with and without a path), the scope choice, and the loopback port fixed for a server.
No network, no clock.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from sidecar.config import ServerConfig

__all__ = [
    "CALLBACK_PATH",
    "Challenge",
    "authorization_server_addresses",
    "app_callback_port",
    "callback_port",
    "canonical_resource",
    "choose_scopes",
    "parse_challenge",
    "protected_resource_addresses",
]

CALLBACK_PATH = "/mcp-oauth/callback"
# Below every common range of ports the system hands out for outgoing connections (Linux
# 32768-60999, macOS and Windows 49152-65535): a fixed port inside one can be held by any
# program's connection at the moment a person signs in.
_PORT_BASE, _PORT_SPAN = 20000, 12000
_PARAM = re.compile(r'([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*))')
_DEFAULT_PORTS = {"http": 80, "https": 443}


class Challenge:
    """The Bearer challenge of a 401/403: its parameters, lower-cased names."""

    def __init__(self, params: dict[str, str]) -> None:
        self.params = params

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata") or None

    @property
    def scope(self) -> str | None:
        return self.params.get("scope") or None

    @property
    def error(self) -> str | None:
        return self.params.get("error") or None


def parse_challenge(header: str) -> Challenge | None:
    """The Bearer challenge in a `WWW-Authenticate` value, or None when there is none."""
    match = re.search(r"(?:^|,)\s*bearer(?:\s+|$)", header, re.I)
    if match is None:
        return None
    rest = header[match.end():]
    params: dict[str, str] = {}
    position = 0
    for found in _PARAM.finditer(rest):
        if rest[position:found.start()].strip(" \t,"):
            break  # a bare token in between: the next scheme's challenge begins
        name, quoted, plain = found.group(1).lower(), found.group(2), found.group(3)
        value = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else plain
        params.setdefault(name, value)
        position = found.end()
    return Challenge(params)


def canonical_resource(url: str) -> str:
    """RFC 8707 / MCP: lower-case scheme and host, no default port, no fragment, no
    trailing slash; the path and query kept."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def protected_resource_addresses(url: str) -> list[str]:
    """RFC 9728 §3.1: the path-specific metadata address first, then the origin's."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    found = [urlunsplit((parts.scheme, parts.netloc, f"/.well-known/oauth-protected-resource{path}", "", ""))]
    if path:
        found.append(urlunsplit((parts.scheme, parts.netloc, "/.well-known/oauth-protected-resource", "", "")))
    return found


def authorization_server_addresses(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in the MCP spec's order."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(new_path: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, new_path, "", ""))

    if not path:
        return [at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")]
    return [
        at(f"/.well-known/oauth-authorization-server{path}"),
        at(f"/.well-known/openid-configuration{path}"),
        at(f"{path}/.well-known/openid-configuration"),
    ]


def choose_scopes(configured: str | None, challenged: str | None, supported: list[str] | None) -> str | None:
    """Configured scopes replace the advertised ones; else the challenge's, then the
    resource's `scopes_supported`; None leaves the parameter out."""
    for choice in (configured, challenged):
        if choice and choice.strip():
            return " ".join(choice.split())
    if supported:
        return " ".join(s for s in supported if isinstance(s, str) and s)
    return None


def union_scopes(*groups: str | None) -> str:
    """Every scope of every group, once, in first-seen order."""
    seen: dict[str, None] = {}
    for group in groups:
        for scope in (group or "").split():
            seen.setdefault(scope, None)
    return " ".join(seen)


def app_callback_port(server: ServerConfig) -> int:
    """The loopback port of a registered app's return address: the one the operator chose
    (`oauth.callbackPort`), else the one fixed for the server's address."""
    chosen = server.oauth.callback_port if server.oauth is not None else None
    return chosen if chosen is not None else callback_port(server.url or "")


def callback_port(resource: str) -> int:
    """The loopback port fixed for a server's canonical address (for a registered app)."""
    digest = hashlib.sha256(canonical_resource(resource).encode()).digest()
    return _PORT_BASE + int.from_bytes(digest[:4], "big") % _PORT_SPAN


def callback_uri(port: int) -> str:
    return f"http://127.0.0.1:{port}{CALLBACK_PATH}"
