"""Which proxy, if any, carries a request to a URL upstream: pure decisions, no I/O.

Owns the reading of `HTTPS_PROXY`, `HTTP_PROXY` (and their lower-case forms) and
`NO_PROXY`. An `https://` upstream goes through the https proxy (falling back to the
http one) as a CONNECT tunnel; an `http://` upstream goes through the http proxy in
absolute form. Refuses to proxy loopback: `localhost`, `127.0.0.0/8` and `[::1]` are
always reached directly, whatever `NO_PROXY` says.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from urllib.parse import urlsplit

__all__ = ["LOOPBACK_NAMES", "ProxyChoice", "choose_proxy", "is_loopback_host", "proxy_secrets"]

LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "127.0.0.1", "::1", "[::1]"})

ProxyChoice = str | None


def _env(environ: Mapping[str, str], name: str) -> str:
    """Lower-case first (the conventional form), then upper-case."""
    return (environ.get(name.lower()) or environ.get(name.upper()) or "").strip()


def is_loopback_host(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _bypass_entries(environ: Mapping[str, str]) -> list[str]:
    raw = _env(environ, "no_proxy")
    return [entry.strip().lower() for entry in raw.split(",") if entry.strip()]


def _matches(host: str, port: int | None, entry: str) -> bool:
    """One NO_PROXY entry: `*`, a host, `.suffix`, `host:port`, or an IP network."""
    if entry == "*":
        return True
    name, _, wanted_port = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
    if wanted_port and (not wanted_port.isdigit() or port != int(wanted_port)):
        return False
    name = name.strip("[]").lstrip("*")
    if "/" in name:
        return _in_network(host, name)
    if name.startswith("."):
        return host.endswith(name) or host == name[1:]
    return host == name or host.endswith("." + name)


def _in_network(host: str, network: str) -> bool:
    try:
        return ipaddress.ip_address(host) in ipaddress.ip_network(network, strict=False)
    except ValueError:
        return False


def choose_proxy(url: str, environ: Mapping[str, str]) -> ProxyChoice:
    """The proxy URL to use for `url`, or None to connect directly."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if not host or is_loopback_host(host):
        return None
    if any(_matches(host, parts.port, entry) for entry in _bypass_entries(environ)):
        return None
    if parts.scheme == "https":
        return _env(environ, "https_proxy") or _env(environ, "http_proxy") or None
    return _env(environ, "http_proxy") or None


def proxy_secrets(environ: Mapping[str, str]) -> list[str]:
    """Passwords written into proxy URLs: they are secrets like any header value."""
    found = []
    for name in ("https_proxy", "http_proxy"):
        password = urlsplit(_env(environ, name)).password if _env(environ, name) else None
        if password:
            found.append(password)
    return found
