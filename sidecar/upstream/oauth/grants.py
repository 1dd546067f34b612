"""The token grants the sidecar makes, and the token file entry each one leaves.

Owns the refresh grant (with `resource`, keeping the old refresh token when the server
does not rotate it), the client credentials grant for unattended boxes (a client secret,
or private_key_jwt with a key file), the client's proof at the token endpoint, and the
entry's shape. The configured client secret is read from the config each time and never
written to the entry; a secret the server issued at registration is kept there. A proof
with the configured credential is made only for the issuer it belongs to (`issuers`);
the first grant with it pins that issuer beside the tokens.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sidecar.config import ServerConfig
from sidecar.private_files import warn_if_shared
from sidecar.upstream.oauth.choices import AuthServer, token_auth_method
from sidecar.upstream.oauth.exchange import ClientProof, OAuthHttp, TokenRefused, Tokens
from sidecar.upstream.oauth.flow import SignInError
from sidecar.upstream.oauth.issuers import check_issuer, pin_issuer
from sidecar.upstream.webclient import SignInNeeded, sign_in_words

__all__ = ["client_credentials", "new_entry", "proof_for", "refresh_entry", "revocation_proof", "server_of"]


def server_of(entry: dict[str, Any]) -> AuthServer:
    """The authorization server as the entry remembers it (enough for refresh and revoke)."""
    return AuthServer(issuer=str(entry.get("issuer", "")), authorization_endpoint=None,
                      token_endpoint=str(entry["tokenEndpoint"]), registration_endpoint=None,
                      revocation_endpoint=entry.get("revocationEndpoint"),
                      auth_methods=list(entry.get("authMethods") or []), s256=True, iss_advertised=False,
                      metadata_documents=False, scopes_supported=None)


def _key_pem(server: ServerConfig) -> bytes | None:
    path = server.oauth.private_key_file if server.oauth else None
    if not path:
        return None
    warn_if_shared(Path(path).expanduser(), "the key file (oauth.privateKeyFile)")
    try:
        return Path(path).expanduser().read_bytes()
    except OSError as exc:
        raise SignInError(f"the key file oauth.privateKeyFile cannot be read ({exc.strerror})") from None


def proof_for(server: ServerConfig, entry: dict[str, Any] | None, auth: AuthServer,
              pins: Mapping[str, Any]) -> ClientProof:
    """How the client proves itself to `auth`: the configured app (its secret from the
    config, or its key file: only for the issuer it belongs to, see `issuers`), else the
    client the server registered for this sign-in."""
    oauth = server.oauth
    methods = auth.auth_methods
    if oauth is not None and oauth.client_id:
        check_issuer(server, auth.issuer, pins)
        key = _key_pem(server)
        method = token_auth_method(methods, bool(oauth.client_secret), key is not None)
        return ClientProof(oauth.client_id, method, oauth.client_secret, key, oauth.key_id)
    assert entry is not None
    secret = entry.get("clientSecret")
    if not isinstance(secret, str) or not secret:
        return ClientProof(str(entry["clientId"]), "none")
    method = str(entry.get("clientAuth") or token_auth_method(methods, True))
    return ClientProof(str(entry["clientId"]), method, secret)


def revocation_proof(server: ServerConfig, entry: dict[str, Any]) -> ClientProof:
    """The configured secret goes only to the token endpoint: a configured app revokes by
    its client ID alone; a registered client with the secret it was issued."""
    oauth = server.oauth
    if oauth is not None and oauth.client_id:
        return ClientProof(oauth.client_id, "none")
    return proof_for(server, entry, server_of(entry), {})


def new_entry(*, alias: str, auth: AuthServer, client_id: str, issued_secret: str | None, tokens: Tokens,
              app: str, previous: dict[str, Any] | None = None, client_auth: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "alias": alias, "state": "signed-in", "appKey": app, "issuer": auth.issuer,
        "tokenEndpoint": auth.token_endpoint, "revocationEndpoint": auth.revocation_endpoint,
        "authMethods": auth.auth_methods, "clientId": client_id, "accessToken": tokens.access_token,
        "expiresAt": tokens.expires_at, "scope": tokens.scope, "signedInAt": time.time(),
    }
    refresh = tokens.refresh_token or (previous or {}).get("refreshToken")
    if refresh:
        entry["refreshToken"] = refresh
    if issued_secret:
        entry["clientSecret"] = issued_secret
        entry["clientAuth"] = client_auth or (previous or {}).get("clientAuth") or "client_secret_basic"
    return entry


async def client_credentials(server: ServerConfig, http: OAuthHttp, auth: AuthServer, resource: str,
                             pins: Mapping[str, Any]) -> Tokens:
    oauth = server.oauth
    if oauth is None or not oauth.client_id:
        raise SignInError("oauth.grant client_credentials needs oauth.clientId (and a secret or a key file)")
    proof = proof_for(server, None, auth, pins)
    if proof.method == "none":
        raise SignInError("oauth.grant client_credentials needs oauth.clientSecret or oauth.privateKeyFile")
    form = {"grant_type": "client_credentials", "resource": resource}
    if oauth.scopes:
        form["scope"] = " ".join(oauth.scopes.split())
    return await http.token(auth, form, proof, form.get("scope"))


async def refresh_entry(server: ServerConfig, resource: str, servers: dict[str, dict[str, Any]],
                        entry: dict[str, Any] | None, app: str) -> str:
    """Get new tokens into `servers[resource]`; returns the words of a refusal ("" when
    the server has tokens again). Network trouble raises UpstreamUnavailable instead:
    the tokens may still be good."""
    from sidecar.errors import UpstreamUnavailable

    unattended = server.oauth is not None and server.oauth.grant == "client_credentials"
    http = OAuthHttp(server.url or "")
    try:
        if unattended:
            auth = server_of(entry) if entry else await _located(server, http)
            tokens = await client_credentials(server, http, auth, resource, servers)
            pin_issuer(server, auth.issuer, servers)
            servers[resource] = new_entry(alias=server.alias, auth=auth, client_id=str(server.oauth.client_id),  # type: ignore[union-attr]
                                          issued_secret=None, tokens=tokens, app=app)
            return ""
        if entry is None or not entry.get("refreshToken"):
            if entry is not None:
                entry["state"] = "needs-sign-in"
            return sign_in_words(server.alias, "needs sign-in again (the sign-in expired)")
        auth = server_of(entry)
        form = {"grant_type": "refresh_token", "refresh_token": str(entry["refreshToken"]), "resource": resource}
        try:
            tokens = await http.token(auth, form, proof_for(server, entry, auth, servers), entry.get("scope"))
        except TokenRefused:
            entry["state"] = "refused"
            return sign_in_words(server.alias, "refused to renew the sign-in")
        fresh = new_entry(alias=server.alias, auth=auth, client_id=str(entry["clientId"]),
                          issued_secret=entry.get("clientSecret"), tokens=tokens, app=app, previous=entry)
        fresh["signedInAt"] = entry.get("signedInAt", fresh["signedInAt"])
        servers[resource] = fresh
        pin_issuer(server, auth.issuer, servers)  # a sign-in made before pins existed is pinned now
        return ""
    except SignInNeeded:
        raise
    except SignInError as exc:
        raise UpstreamUnavailable(f"could not renew its sign-in: {exc.words}") from None
    finally:
        await http.close()


async def _located(server: ServerConfig, http: OAuthHttp) -> AuthServer:
    from sidecar.upstream.oauth.locate import locate

    return (await locate(server, http)).auth
