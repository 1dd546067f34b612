"""The HTTP client under URL upstreams (Streamable HTTP and legacy SSE).

Owns one aiohttp client session per upstream connection, the configured headers, the
proxy choice, same-origin redirects and the translation of every aiohttp failure into
plain, secret-free words. Refuses to send anything to a URL that fails the address
rules, and never lets a configured header or a body follow a redirect elsewhere.
aiohttp stays inside this module and the two channels built on it.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Protocol

import aiohttp

from sidecar.config import ServerConfig
from sidecar.errors import BrokeOff, Refused, SignInNeeded, TimedOut, Unreachable, UpstreamUnavailable, refusal
from sidecar.redact import Redactor
from sidecar.settings import process_settings
from sidecar.upstream.proxying import choose_proxy
from sidecar.upstream.redirects import (
    MAX_REDIRECTS,
    check_headers,
    check_url,
    next_hop,
    origin_of,
)

__all__ = ["BROKE_OFF", "CONNECT_SECONDS", "UNREACHABLE", "SignInNeeded", "TokenSource", "WebClient", "credential_parts", "refused", "refusal_words", "scrubber_for", "server_secrets",
           "sign_in_words"]

CONNECT_SECONDS = 10.0
UNREACHABLE = "could not be reached"
BROKE_OFF = "broke off its answer"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_ADDRESS = "[server address]"


def refusal_words(status: int, header_names: list[str]) -> str:
    """What a 401/403 means, naming the configured header names (never their values)."""
    if header_names:
        return f"refused the configured headers (HTTP {status}): check {', '.join(header_names)}"
    return f"refused the request (HTTP {status}): it needs a sign-in or headers"


def refused(status: int, header_names: list[str]) -> Refused:
    """A 401/403 in its own type, with the words of `refusal_words`."""
    return refusal(status, refusal_words(status, header_names))


def credential_parts(value: str) -> list[str]:
    """A header value, and the credential inside it (`Bearer X` -> X; `Basic b64` -> user:pass)."""
    parts = [value]
    scheme, _, rest = value.strip().partition(" ")
    rest = rest.strip()
    if rest and scheme.isalpha():
        parts.append(rest)
        if scheme.lower() == "basic":
            try:
                pair = base64.b64decode(rest, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                pair = ""
            parts += [p for p in (pair, pair.partition(":")[2]) if p]
    return parts


def server_secrets(server: ServerConfig) -> list[str]:
    """Every value to hide for this server: env and header values, and credentials inside them."""
    return [part for value in server.secrets() for part in credential_parts(value)]


def scrubber_for(server: ServerConfig) -> Redactor:
    """Hides every header and env value (and the credentials in them) in text from the server."""
    return Redactor(server_secrets(server))


_CREDENTIAL_WORDS = ("auth", "token", "key", "secret", "password", "cookie", "session", "credential")


def credential_scrubber(server: ServerConfig) -> Redactor:
    """Hides the values of credential headers (by name) in results, where other header
    values (an `Accept`, a tenant name) may rightly appear."""
    values = [v for name, v in server.headers.items() if any(w in name.lower() for w in _CREDENTIAL_WORDS)]
    return Redactor(part for value in values for part in credential_parts(value))


def sign_in_words(alias: str, why: str = "needs sign-in") -> str:
    """The words of a `SignInNeeded`: what happened, and the command a person runs."""
    return f"{why}: a person must run `omb-sidecar signin {alias}`"


class TokenSource(Protocol):
    """A signed-in server's bearer tokens (sidecar.upstream.oauth.runtime)."""

    async def bearer(self) -> str:
        """A current access token, refreshed first when it is about to expire."""
        ...

    async def rejected(self, token: str, challenge: str) -> str:
        """A 401 for `token`: refresh once and return the new one, or raise SignInNeeded."""
        ...

    def insufficient(self, challenge: str) -> None:
        """A 403 asking for more scope: mark the server for a wider sign-in (raises)."""
        ...

    def secrets(self) -> list[str]: ...


class _AddressScrubber:
    """Replaces the URL, its origin and its host with a neutral word."""

    def __init__(self, url: str) -> None:
        scheme, host, port = origin_of(url)
        forms = {url, url.rstrip("/"), f"{scheme}://{host}:{port}", f"{scheme}://{host}", f"{host}:{port}"}
        if len(host) >= 4:
            forms.add(host)
        self._forms = sorted((f for f in forms if f), key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for form in self._forms:
            if form in text:
                text = text.replace(form, _ADDRESS)
        return text


class WebClient:
    """Sends requests to one upstream's origin; answers come back as aiohttp responses."""

    def __init__(self, server: ServerConfig, environ: Mapping[str, str] | None = None,
                 tokens: TokenSource | None = None) -> None:
        assert server.url is not None
        check_url(server.url)
        check_headers(server.headers)
        self.url = server.url
        self.header_names = sorted(server.headers)
        self._headers = dict(server.headers)
        self._environ = dict(process_settings().environ if environ is None else environ)
        self._secrets = scrubber_for(server)
        self._credentials = credential_scrubber(server)
        self._address = _AddressScrubber(server.url)
        self._session: aiohttp.ClientSession | None = None
        self._tokens = tokens
        if tokens is not None:
            self.header_names = sorted(n for n in server.headers if n.lower() != "authorization")
            self._headers = {n: v for n, v in server.headers.items() if n.lower() != "authorization"}

    def _learn_secrets(self) -> None:
        if self._tokens is not None:
            fresh = self._tokens.secrets()
            self._secrets.add(fresh)
            self._credentials.add(fresh)

    def scrub(self, text: str) -> str:
        """Text from the server, fit for an error to the model: no address, no header value."""
        return self._address(self._secrets(text))

    def scrub_result(self, text: str) -> str:
        """A result from the server with any credential it echoed taken out."""
        return self._credentials(text)

    @property
    def scrubs_results(self) -> bool:
        return bool(self._credentials)

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            timeout = aiohttp.ClientTimeout(total=None, connect=CONNECT_SECONDS, sock_connect=CONNECT_SECONDS)
            self._session = aiohttp.ClientSession(
                timeout=timeout,
                trust_env=False,  # proxies are chosen here, loopback always direct
                auto_decompress=True,
                max_field_size=65536,
            )
        return self._session

    @asynccontextmanager
    async def request(
        self,
        method: str,
        url: str | None = None,
        *,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        read_timeout: float | None = None,
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        """One exchange, following same-origin redirects; failures become UpstreamUnavailable.
        A signed-in server's request carries its bearer token; a 401 refreshes it once and
        sends the request again (a 401 means it did not run)."""
        sent = {**self._headers, **(headers or {})}
        timeout = aiohttp.ClientTimeout(total=None, connect=CONNECT_SECONDS, sock_read=read_timeout)
        token = await self._bearer(sent)
        response = await self._open(method, url or self.url, body, sent, timeout)
        if self._tokens is not None and token is not None:
            response = await self._after_refusal(response, token, method, url or self.url, body, sent, timeout)
        try:
            yield response
        except (asyncio.TimeoutError, aiohttp.ClientError, OSError):
            raise BrokeOff(BROKE_OFF) from None
        finally:
            response.release()

    async def _bearer(self, headers: dict[str, str]) -> str | None:
        if self._tokens is None:
            return None
        token = await self._tokens.bearer()
        self._learn_secrets()
        headers["Authorization"] = f"Bearer {token}"
        return token

    async def _after_refusal(self, response: aiohttp.ClientResponse, token: str, method: str, target: str,
                             body: bytes | None, headers: dict[str, str],
                             timeout: aiohttp.ClientTimeout) -> aiohttp.ClientResponse:
        assert self._tokens is not None
        challenge = response.headers.get("WWW-Authenticate", "")
        if response.status == 403 and "insufficient_scope" in challenge:
            response.release()
            self._tokens.insufficient(challenge)
        if response.status != 401:
            return response
        response.release()
        fresh = await self._tokens.rejected(token, challenge)
        self._learn_secrets()
        headers["Authorization"] = f"Bearer {fresh}"
        return await self._open(method, target, body, headers, timeout)

    async def _open(self, method: str, target: str, body: bytes | None, headers: dict[str, str],
                    timeout: aiohttp.ClientTimeout) -> aiohttp.ClientResponse:
        """Send, following same-origin redirects, until an answer that is not a redirect."""
        try:
            for _ in range(MAX_REDIRECTS + 1):
                response = await self._client().request(
                    method, target, data=body, headers=headers, allow_redirects=False,
                    proxy=choose_proxy(target, self._environ), timeout=timeout,
                )
                if response.status not in _REDIRECTS:
                    return response
                response.release()
                target = next_hop(target, method, response.status, response.headers.get("Location"))
        except (asyncio.TimeoutError, aiohttp.ServerTimeoutError):
            raise TimedOut("timed out") from None
        except (aiohttp.ClientError, OSError):
            raise Unreachable(UNREACHABLE) from None
        raise UpstreamUnavailable("it redirected too many times; not followed")

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()
