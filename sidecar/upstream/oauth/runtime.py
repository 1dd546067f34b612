"""Sign-in at run time: which token file this process uses, and a signed-in server's
bearer tokens, refreshed shortly before they expire and after a 401.

Owns the process's choice of token file (`use`, called once by the commands and the
serve path; nothing is read until a URL server opens), the redactor every token joins,
and `StoredTokens`, the WebClient's token source. A refresh takes the token file's lock
and reads the entry again first, so a sidecar that finds another already refreshed
adopts the new tokens (and a rotated refresh token is kept) instead of spending the old
one. A refused refresh marks the server "sign-in refused": its channel ends with words
naming `omb-sidecar signin NAME`, and the next start leaves it out until a person signs
in. Bots never sign in.
"""

from __future__ import annotations

import hashlib
import logging
import time
from typing import Any

from sidecar.config import ServerConfig, SidecarConfig
from sidecar.redact import Redactor
from sidecar.upstream.oauth import where
from sidecar.upstream.oauth.discovery import canonical_resource, parse_challenge, union_scopes
from sidecar.upstream.oauth.sealed import TokenFile, TokenFileError, entry_secrets, token_file_for
from sidecar.upstream.webclient import SignInNeeded, sign_in_words

__all__ = ["EARLY_SECONDS", "StoredTokens", "app_key", "entry_usable", "source_for", "use"]

log = logging.getLogger(__name__)

EARLY_SECONDS = 60.0  # refresh this long before the access token expires


def use(config: SidecarConfig, redactor: Redactor | None = None) -> TokenFile | None:
    """This process's token file (and the redactor tokens join); nothing is read yet."""
    where.use(config, redactor)
    return token_file_for(config)


def _token_file() -> TokenFile | None:
    config, _ = where.current()
    return token_file_for(config) if isinstance(config, SidecarConfig) else None


def remember(secrets: list[str]) -> None:
    """Every sink's redactor learns these token values."""
    _, redactor = where.current()
    if isinstance(redactor, Redactor) and secrets:
        redactor.add(secrets)


def app_key(server: ServerConfig) -> str:
    """What the tokens were issued for: the configured client ID and scopes. A change
    of either signs the server out; a new secret does not."""
    oauth = server.oauth
    words = f"{oauth.client_id or ''}\n{' '.join((oauth.scopes or '').split())}\n{oauth.grant}" if oauth else "\n\n"
    return hashlib.sha256(words.encode()).hexdigest()[:16]


def entry_usable(server: ServerConfig, entry: dict[str, Any] | None) -> bool:
    return bool(entry and entry.get("appKey") == app_key(server) and entry.get("state") == "signed-in"
                and isinstance(entry.get("accessToken"), str))


def source_for(server: ServerConfig) -> StoredTokens | None:
    """The token source for a URL server this process has tokens for; None when it has
    none (the server is reached as configured). Raises SignInNeeded when its sign-in was
    refused, so the server stays out until a person signs in."""
    token_file = _token_file()
    if token_file is None or server.url is None:
        return None
    unattended = server.oauth is not None and server.oauth.grant == "client_credentials"
    if not token_file.path.exists() and not unattended:
        return None
    resource = canonical_resource(server.url)
    try:
        entry = token_file.entry(resource)
    except TokenFileError as exc:
        log.warning("upstream '%s': %s", server.alias, exc.message)
        return None
    if entry is not None and entry.get("appKey") == app_key(server) and entry.get("state") != "signed-in":
        raise SignInNeeded(sign_in_words(server.alias, "refused to renew the sign-in"
                                         if entry.get("state") == "refused" else "needs sign-in"))
    if entry_usable(server, entry):
        assert entry is not None
        remember(entry_secrets(entry))
        return StoredTokens(token_file, server, resource, entry)
    if unattended:
        return StoredTokens(token_file, server, resource, None)
    return None


class StoredTokens:
    """One signed-in server's tokens (a webclient.TokenSource)."""

    def __init__(self, token_file: TokenFile, server: ServerConfig, resource: str,
                 entry: dict[str, Any] | None) -> None:
        self._file = token_file
        self._server = server
        self._resource = resource
        self._entry = entry

    def secrets(self) -> list[str]:
        return entry_secrets(self._entry) if self._entry else []

    def _fresh_enough(self, entry: dict[str, Any]) -> bool:
        expires = entry.get("expiresAt")
        return not isinstance(expires, (int, float)) or expires - time.time() > EARLY_SECONDS

    async def bearer(self) -> str:
        entry = self._entry
        if entry is None or not self._fresh_enough(entry):
            await self._refresh(entry.get("accessToken") if entry else None)
        assert self._entry is not None
        return str(self._entry["accessToken"])

    async def rejected(self, token: str, challenge: str) -> str:
        await self._refresh(token, forced=True)
        assert self._entry is not None
        return str(self._entry["accessToken"])

    def insufficient(self, challenge: str) -> None:
        """A 403 insufficient_scope: the server needs sign-in again, for the union of the
        scopes held and the scopes asked (or, when the challenge names none, every scope
        the server lists). One mark per call; the call itself is not retried."""
        found = parse_challenge(challenge)
        asked = found.scope if found else None
        wider = union_scopes((self._entry or {}).get("scope"), asked)
        with self._file.edit() as servers:
            entry = servers.get(self._resource)
            if entry is not None:
                entry["wantScope"] = union_scopes(entry.get("wantScope"), wider)
                entry["wantSupported"] = entry.get("wantSupported", False) or not asked
                entry["state"] = "needs-sign-in"
        words = (f"refused the call for lack of scope: a person must sign in again with "
                 f"`omb-sidecar signin {self._server.alias}` (it asks for the wider scope)")
        self._left_out(words)
        raise SignInNeeded(words)

    async def _refresh(self, stale: str | None, forced: bool = False) -> None:
        from sidecar.upstream.oauth.grants import refresh_entry

        refused = ""
        async with self._file.editing() as servers:
            entry = servers.get(self._resource)
            if entry is not None and entry.get("appKey") != app_key(self._server):
                entry = None
            if entry is not None and entry.get("state") != "signed-in":
                refused = sign_in_words(self._server.alias)
            elif entry is not None and entry.get("accessToken") != stale and self._fresh_enough(entry):
                self._entry = entry  # another sidecar refreshed it first
            else:
                refused = await refresh_entry(self._server, self._resource, servers, entry, app_key(self._server))
                self._entry = servers.get(self._resource)
        if self._entry is not None:
            remember(entry_secrets(self._entry))
        if refused:
            self._left_out(refused)
            raise SignInNeeded(refused)

    def _left_out(self, words: str) -> None:
        """The next start leaves the server out until a person signs in."""
        config, _ = where.current()
        log.warning("upstream '%s': %s", self._server.alias, words)
        keeper = where.refusal_keeper()
        if isinstance(config, SidecarConfig) and keeper is not None:
            keeper(config, self._server, ok=False, reason=words)
