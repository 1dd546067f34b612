"""Which authorization server a configured client credential belongs to (RELIABILITY rule 17).

A configured `oauth.clientSecret` or `oauth.privateKeyFile` is proof for one issuer only:
`oauth.issuer` when it is set, else the issuer of the first sign-in that used it, pinned
in the sealed token file beside the tokens (under a key no server address can take, so a
sign-out keeps it). `check_issuer` is asked before every grant that carries the
credential (authorization code, refresh, client credentials: `grants.proof_for` is the
only maker of such a proof), and refuses an issuer that differs in words naming both. A
client the authorization server registered for the sidecar needs no pin: its entry keeps
the token endpoint it was issued by.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, MutableMapping
from typing import Any

from sidecar.config import ServerConfig
from sidecar.upstream.oauth.discovery import canonical_resource
from sidecar.upstream.oauth.flow import SignInError

__all__ = ["IssuerMismatch", "carries_credential", "check_issuer", "pin_issuer", "pin_key"]

PIN_PREFIX = "issuer-pin "


class IssuerMismatch(SignInError):
    """Discovery named another authorization server than the credential's own."""


def carries_credential(server: ServerConfig) -> bool:
    oauth = server.oauth
    return oauth is not None and bool(oauth.client_id) and bool(oauth.client_secret or oauth.private_key_file)


def pin_key(server: ServerConfig) -> str:
    """The pin's key: the server's canonical address and the client ID, hashed (not a URL)."""
    client = server.oauth.client_id if server.oauth else ""
    words = f"{canonical_resource(server.url or '')}\n{client}"
    return PIN_PREFIX + hashlib.sha256(words.encode()).hexdigest()[:32]


def _same(first: str, second: str) -> bool:
    return first.rstrip("/") == second.rstrip("/")


def _bound(server: ServerConfig, pins: Mapping[str, Any]) -> tuple[str, str] | None:
    """The issuer the credential belongs to and how it came to, or None (not bound yet)."""
    configured = server.oauth.issuer if server.oauth else None
    if configured:
        return configured, "configured as oauth.issuer"
    pin = pins.get(pin_key(server))
    issuer = pin.get("issuer") if isinstance(pin, dict) else None
    return (issuer, "pinned at its first sign-in") if isinstance(issuer, str) else None


def check_issuer(server: ServerConfig, issuer: str, pins: Mapping[str, Any]) -> None:
    """Refuse to use the configured credential with any issuer but its own."""
    if not carries_credential(server):
        return
    bound = _bound(server, pins)
    if bound is not None and not _same(bound[0], issuer):
        raise IssuerMismatch(
            f"the authorization server {issuer} is not the one the configured client credential of "
            f"'{server.alias}' belongs to ({bound[0]}, {bound[1]}); the credential was not sent. If the "
            "server really moved, set oauth.issuer to the new address with `omb-sidecar servers edit`")


def pin_issuer(server: ServerConfig, issuer: str, servers: MutableMapping[str, Any]) -> None:
    """Pin the issuer of a first grant with the configured credential (the caller writes
    `servers` back under the token file's lock)."""
    if carries_credential(server) and _bound(server, servers) is None:
        servers[pin_key(server)] = {"alias": server.alias, "issuer": issuer, "pinnedAt": time.time()}
