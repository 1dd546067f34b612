"""Pure judgements of what servers advertise: the protected resource metadata (RFC 9728),
the authorization server metadata (RFC 8414 / OpenID discovery), and the choices that
follow from them: the resource to ask for, S256 or refusal, how the client is known
(configured, Client ID Metadata Document, registration, or an app to register), and how
it authenticates at the token endpoint.

authlib's RFC 8414 model checks the endpoints and methods field by field; the issuer
rule is ours (https, or plain http on loopback for servers on this machine).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from sidecar.upstream.oauth.discovery import canonical_resource
from sidecar.upstream.oauth.flow import SignInError

__all__ = ["AuthServer", "ClientPlan", "ResourceInfo", "plan_client", "read_auth_server", "read_resource",
           "registration_method", "token_auth_method"]

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
Identity = Literal["configured", "metadata-document", "register", "none"]


@dataclass(frozen=True)
class ResourceInfo:
    resource: str
    authorization_servers: list[str]
    scopes_supported: list[str] | None


@dataclass(frozen=True)
class AuthServer:
    issuer: str
    authorization_endpoint: str | None
    token_endpoint: str
    registration_endpoint: str | None
    revocation_endpoint: str | None
    auth_methods: list[str]
    s256: bool
    iss_advertised: bool
    metadata_documents: bool
    scopes_supported: list[str] | None


def _is_web_address(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError on a port that is no number
    except ValueError:
        return False
    if parts.scheme == "https" and parts.hostname:
        return True
    return parts.scheme == "http" and (parts.hostname or "") in _LOOPBACK


def _strings(value: object) -> list[str] | None:
    if not isinstance(value, list):
        return None
    return [v for v in value if isinstance(v, str)]


def read_resource(document: object, server_url: str) -> ResourceInfo:
    """The protected resource metadata, checked: it must name this server and an
    authorization server."""
    if not isinstance(document, dict):
        raise SignInError("the server's sign-in details (RFC 9728) are not a JSON object")
    servers = [s for s in _strings(document.get("authorization_servers")) or [] if _is_web_address(s)]
    if not servers:
        raise SignInError("the server's sign-in details name no usable authorization server")
    resource = document.get("resource")
    wanted = canonical_resource(server_url)
    if isinstance(resource, str) and resource:
        named = _canonical_or_refuse(resource)
        if not (wanted == named or wanted.startswith(named.rstrip("/") + "/")):
            raise SignInError("the server's sign-in details are for another address (their `resource` differs); "
                              "not signed in")
    else:
        named = wanted
    return ResourceInfo(resource=named, authorization_servers=servers,
                        scopes_supported=_strings(document.get("scopes_supported")))


def _canonical_or_refuse(resource: str) -> str:
    if not _is_web_address(resource):
        raise SignInError("the server's sign-in details name a `resource` that is not a web address; not signed in")
    return canonical_resource(resource)


def read_auth_server(document: object, issuer: str) -> AuthServer:
    """The authorization server's metadata, checked against the issuer it was fetched for."""
    from authlib.oauth2.rfc8414 import AuthorizationServerMetadata

    if not isinstance(document, dict):
        raise SignInError("the authorization server's metadata is not a JSON object")
    said = document.get("issuer")
    if not isinstance(said, str) or said.rstrip("/") != issuer.rstrip("/") or not _is_web_address(said):
        raise SignInError("the authorization server's metadata names another issuer; not signed in")
    metadata = AuthorizationServerMetadata(document)
    try:
        metadata.validate_token_endpoint()
        metadata.validate_registration_endpoint()
        metadata.validate_revocation_endpoint()
        metadata.validate_code_challenge_methods_supported()
        metadata.validate_token_endpoint_auth_methods_supported()
    except ValueError as exc:
        raise SignInError(f"the authorization server's metadata is not usable ({_printable(str(exc))})") from None
    except (TypeError, AttributeError, KeyError):  # authlib meets a value of the wrong JSON type
        raise SignInError("the authorization server's metadata holds a value of the wrong type") from None
    token = document.get("token_endpoint")
    if not _is_web_address(token):
        raise SignInError("the authorization server names no usable token endpoint")
    assert isinstance(token, str)
    authorize = document.get("authorization_endpoint")

    def address(key: str) -> str | None:
        value = document.get(key)
        return value if _is_web_address(value) else None

    return AuthServer(
        issuer=said,
        authorization_endpoint=authorize if isinstance(authorize, str) and _is_web_address(authorize) else None,
        token_endpoint=token,
        registration_endpoint=address("registration_endpoint"),
        revocation_endpoint=address("revocation_endpoint"),
        auth_methods=_strings(document.get("token_endpoint_auth_methods_supported")) or ["client_secret_basic"],
        s256="S256" in (_strings(document.get("code_challenge_methods_supported")) or []),
        iss_advertised=document.get("authorization_response_iss_parameter_supported") is True,
        metadata_documents=document.get("client_id_metadata_document_supported") is True,
        scopes_supported=_strings(document.get("scopes_supported")),
    )


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in text[:120])


@dataclass(frozen=True)
class ClientPlan:
    identity: Identity
    client_id: str | None


def plan_client(server: AuthServer, configured_id: str | None, metadata_url: str | None) -> ClientPlan:
    """Who the sidecar signs in as, in order: a configured client ID (never registered),
    a Client ID Metadata Document the server accepts, a fresh registration, or nothing."""
    if configured_id:
        return ClientPlan("configured", configured_id)
    if server.metadata_documents and metadata_url and urlsplit(metadata_url).scheme == "https":
        return ClientPlan("metadata-document", metadata_url)
    if server.registration_endpoint:
        return ClientPlan("register", None)
    return ClientPlan("none", None)


def needs_s256(server: AuthServer) -> None:
    if not server.s256:
        raise SignInError("the authorization server does not advertise PKCE with S256 "
                          "(code_challenge_methods_supported); the sidecar signs in only with S256")


def token_auth_method(methods: list[str], has_secret: bool, has_key: bool = False) -> str:
    """How the client proves itself at the token endpoint: HTTP Basic by default, the form
    when the server lists only `client_secret_post`, a signed JWT with a key file."""
    if has_key:
        return "private_key_jwt"
    if not has_secret:
        return "none"
    if "client_secret_post" in methods and "client_secret_basic" not in methods:
        return "client_secret_post"
    return "client_secret_basic"


def registration_method(methods: list[str]) -> str:
    """How a freshly registered client proves itself: as a public native app when the
    server allows it, else with the secret it issues, in the form or by HTTP Basic."""
    for method in ("none", "client_secret_post", "client_secret_basic"):
        if method in methods:
            return method
    return "client_secret_basic"


def registration_request(redirect_uri: str, scope: str | None, method: str = "none") -> dict[str, Any]:
    """RFC 7591 client metadata for a native client on a loopback redirect."""
    body: dict[str, Any] = {
        "client_name": "omb-sidecar",
        "application_type": "native",  # a loopback redirect (OpenID registration; MCP SEP-837)
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
    }
    if scope:
        body["scope"] = scope
    return body


def app_to_register_words(issuer: str, redirect_uri: str) -> str:
    return (f"the authorization server ({issuer}) does not let apps register themselves: register an app "
            f"there with the redirect URI {redirect_uri}, then set its oauth.clientId (and oauth.clientSecret "
            "for a confidential app) with `omb-sidecar servers edit NAME`")
