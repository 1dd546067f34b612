"""The one gate for fetches made on an upstream's word (RELIABILITY rule 17).

A URL that an MCP server or its sign-in metadata names (protected resource metadata, the
`resource_metadata` of a 401, authorization server metadata, registration, token and
revocation endpoints, and every redirect hop of each) is fetched only through
`Outbound.fetch`. Owns the rules such a URL must pass, in order:

- its form: https only (plain http only to a loopback host, and only when the MCP server
  itself is loopback), no user:password@, no control characters, spaces, backslashes or
  non-ASCII, a port that is a number, and no numeric host in a non-standard form
  (`2130706433`, `0177.0.0.1`, `0x7f.1`: browsers and resolvers read those differently);
- its host, resolved once: every address must be public (not loopback, private,
  link-local, shared, reserved, multicast or unspecified; IPv4 inside IPv6 is judged as
  the IPv4 it carries), or, for a loopback MCP server, loopback;
- the connection goes to that checked address (an aiohttp resolver that knows only the
  addresses this gate admitted), while TLS and the Host header keep the name;
- a redirect is followed only to the same origin, and only through this gate again; a
  `resource_metadata` address must be on the MCP server's own origin;
- an answer is refused past its size cap before it is buffered.

Refusals are `OutboundRefused`, in words naming the origin and the reason. The MCP
server's own address is the operator's word, not an upstream's: the upstream clients
(`webclient`) reach it as configured and keep every hop on its origin.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from sidecar.errors import UpstreamUnavailable
from sidecar.settings import process_settings
from sidecar.upstream.proxying import choose_proxy, is_loopback_host
from sidecar.upstream.redirects import next_hop, origin_of

__all__ = ["Answer", "BODY_CAP", "Outbound", "OutboundGate", "OutboundRefused", "Resolve", "address_refusal"]

BODY_CAP = 64 * 1024
MAX_HOPS = 3
RESOLVE_SECONDS = 10.0
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")
_FORBIDDEN_CHARS = re.compile(r"[\x00-\x20\x7f\\]")
# Ranges Python's `is_global` still calls global, or that carry an IPv4 address inside.
_IETF_V4 = ipaddress.ip_network("192.0.0.0/24")
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))

Resolve = Callable[[str], Awaitable[list[str]]]


class OutboundRefused(UpstreamUnavailable):
    """The gate refused a URL an upstream named; the words say which origin and why."""


@dataclass(frozen=True)
class Admitted:
    url: str
    host: str
    address: str


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def _shown(url: str) -> str:
    """The origin of a URL, short and printable, for the words of a refusal."""
    try:
        scheme, host, port = origin_of(url)
    except ValueError:
        return "an unreadable address"
    text = f"{scheme}://{host}:{port}" if host else "an address with no host"
    text = "".join(ch if ch.isascii() and ch.isprintable() else "?" for ch in text)
    return text if len(text) <= 80 else text[:77] + "..."


def _embedded_v4(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (v4-mapped, 6to4, Teredo, NAT64)."""
    if isinstance(ip, ipaddress.IPv4Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if any(ip in network for network in _NAT64):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_refusal(text: str, loopback_only: bool) -> str | None:
    """Why this address may not be dialled on an upstream's word; None when it may."""
    try:
        ip = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return "it is not an IP address"
    if loopback_only:
        # only an address this host answers itself: a 6to4, Teredo or NAT64 form of 127.x is
        # dialled through a relay or translator, not to this host's loopback
        here = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped else ip
        return None if here.is_loopback else "a loopback server's sign-in must stay on loopback"
    inner = _embedded_v4(ip)
    if inner is not None:
        refusal = address_refusal(str(inner), loopback_only)
        return f"it carries the IPv4 address {inner}, and {refusal}" if refusal else None
    for refused, words in ((ip.is_loopback, "loopback"), (ip.is_unspecified, "unspecified"),
                           (ip.is_link_local, "link-local (cloud metadata lives there)"),
                           (ip.is_multicast, "multicast"), (ip.is_private, "private"),
                           (ip.is_reserved, "reserved"), (ip in _IETF_V4, "reserved"),
                           (not ip.is_global, "not a public address")):
        if refused:
            return f"it is {words}"
    return None


async def system_resolve(host: str) -> list[str]:
    """Every address the system resolver gives for a name (one lookup)."""
    found = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))


class OutboundGate:
    """The decisions, for the sign-in of one MCP server (`server_url`, the operator's word)."""

    def __init__(self, server_url: str, resolve: Resolve | None = None) -> None:
        self.server_url = server_url
        self.loopback_only = is_loopback_host(urlsplit(server_url).hostname or "")
        self._resolve = resolve or system_resolve

    def refuse(self, url: str, why: str) -> OutboundRefused:
        return OutboundRefused(f"the sidecar refused to fetch {_shown(url)}, which the server named: {why}")

    def check_form(self, url: str, same_origin: bool = False) -> tuple[str, int]:
        """The host and port of a URL whose form passes; OutboundRefused otherwise."""
        if not isinstance(url, str) or not url.isascii() or _FORBIDDEN_CHARS.search(url):
            raise self.refuse(str(url)[:200], "it holds spaces, control characters, backslashes or non-ASCII")
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            raise self.refuse(url, "it is not a valid URL") from None
        host, scheme = (parts.hostname or "").lower(), parts.scheme.lower()
        if "@" in parts.netloc:
            raise self.refuse(url, "it carries user:password@")
        if not host or "%" in host or port == 0:
            raise self.refuse(url, "it has no usable host or port")
        # a loopback server's sign-in is confined to loopback addresses below, so http is safe there
        if scheme != "https" and not (scheme == "http" and self.loopback_only):
            raise self.refuse(url, "only https is fetched (plain http only on loopback, for a loopback server)")
        self._check_numeric(url, host)
        if same_origin and origin_of(url) != origin_of(self.server_url):
            raise self.refuse(url, "a `resource_metadata` address must be on the server's own origin")
        return host, port or (443 if scheme == "https" else 80)

    def _check_numeric(self, url: str, host: str) -> None:
        if ":" in host:
            return  # an IPv6 literal: judged by its address
        if _NUMERIC_LABEL.match(host.rstrip(".").rsplit(".", 1)[-1]):
            try:
                canonical = str(ipaddress.IPv4Address(host))
            except ValueError:
                canonical = ""
            if canonical != host:
                raise self.refuse(url, "its host is a number in a non-standard form")

    async def admit(self, url: str, same_origin: bool = False) -> Admitted:
        """Check the form, resolve the host once, check every address; the first is the one dialled."""
        host, _ = self.check_form(url, same_origin)
        try:
            ipaddress.ip_address(host)
            addresses = [host]
        except ValueError:
            addresses = await self._lookup(url, host)
        for address in addresses:
            refusal = address_refusal(address, self.loopback_only)
            if refusal:
                raise self.refuse(url, f"its host resolves to {address}: {refusal}")
        return Admitted(url, host, addresses[0])

    async def _lookup(self, url: str, host: str) -> list[str]:
        try:
            found = await asyncio.wait_for(self._resolve(host), RESOLVE_SECONDS)
        except (OSError, asyncio.TimeoutError, UnicodeError, ValueError):
            found = []
        if not found:
            raise self.refuse(url, "its host could not be resolved")
        return found


class _PinnedResolver(AbstractResolver):
    """aiohttp's resolver for the gate's session: a name resolves only to the address the
    gate admitted for it (no second lookup); a configured proxy's name resolves normally."""

    def __init__(self) -> None:
        self.pins: dict[str, str] = {}
        self.proxies: set[str] = set()
        self._system = aiohttp.ThreadedResolver()

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        address = self.pins.get(host.lower())
        if address is None:
            if host.lower() in self.proxies:
                return await self._system.resolve(host, port, family)
            raise OSError(f"{host} was not admitted by the outbound gate")
        kind = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [{"hostname": host, "host": address, "port": port, "family": kind, "proto": 0,
                 "flags": socket.AI_NUMERICHOST | socket.AI_NUMERICSERV}]

    async def close(self) -> None:
        await self._system.close()


class Outbound:
    """The door: `fetch` is the only way a URL an upstream named is dialled; `close()` when done."""

    def __init__(self, server_url: str, *, resolve: Resolve | None = None,
                 environ: Mapping[str, str] | None = None, seconds: float = 20.0,
                 trust: ssl.SSLContext | None = None) -> None:
        self.gate = OutboundGate(server_url, resolve)
        self._trust: ssl.SSLContext | bool = trust if trust is not None else True  # True: the system's roots
        self._environ = dict(process_settings().environ if environ is None else environ)
        self._seconds = seconds
        self._resolver: _PinnedResolver | None = None
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._resolver = _PinnedResolver()
            connector = aiohttp.TCPConnector(resolver=self._resolver, use_dns_cache=False)
            timeout = aiohttp.ClientTimeout(total=self._seconds, connect=10.0)
            self._session = aiohttp.ClientSession(connector=connector, timeout=timeout, trust_env=False,
                                                  max_field_size=16384)
        return self._session

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def fetch(self, method: str, url: str, *, same_origin: bool = False, cap: int = BODY_CAP,
                    **send: Any) -> Answer:
        """One exchange; each redirect hop is admitted again (same origin only)."""
        target = url
        for _ in range(MAX_HOPS + 1):
            admitted = await self.gate.admit(target, same_origin)
            status, headers, body = await self._once(method, admitted, cap, **send)
            if status not in _REDIRECTS:
                return Answer(status, headers, body)
            try:
                target = next_hop(target, method, status, headers.get("Location"))
            except UpstreamUnavailable as exc:
                raise self.gate.refuse(target, exc.message) from None
            except ValueError:  # a Location no URL parser reads (a broken IPv6 literal, a port past 65535)
                raise self.gate.refuse(target, "it redirected to an address that is not a valid URL") from None
        raise self.gate.refuse(url, "it redirected too many times")

    async def _once(self, method: str, admitted: Admitted, cap: int, **send: Any) -> tuple[int, dict[str, str], bytes]:
        session = self._client()
        assert self._resolver is not None
        self._resolver.pins[admitted.host] = admitted.address
        proxy = choose_proxy(admitted.url, self._environ)
        if proxy:
            self._resolver.proxies.add((urlsplit(proxy).hostname or "").lower())
        try:
            async with session.request(method, admitted.url, allow_redirects=False, proxy=proxy,
                                       ssl=self._trust, **send) as response:
                if response.status in _REDIRECTS:
                    return response.status, dict(response.headers), b""
                return response.status, dict(response.headers), await _read_capped(self.gate, admitted, response, cap)
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError, ValueError):
            raise UpstreamUnavailable(f"{_shown(admitted.url)} could not be reached") from None


async def _read_capped(gate: OutboundGate, admitted: Admitted, response: aiohttp.ClientResponse, cap: int) -> bytes:
    """The body, refused before more than `cap` bytes are buffered."""
    if response.content_length is not None and response.content_length > cap:
        raise gate.refuse(admitted.url, f"its answer is larger than {cap // 1024} KB")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_any():
        size += len(chunk)
        if size > cap:
            raise gate.refuse(admitted.url, f"its answer is larger than {cap // 1024} KB")
        chunks.append(chunk)
    return b"".join(chunks)
