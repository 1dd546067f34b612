"""Address rules for URL upstreams, as pure decisions: which URLs and headers are
acceptable, and which redirects may be followed.

Owns: refusing a URL with credentials in it or a scheme other than http/https,
refusing header names that are not HTTP field names and values that are not a single
line, and the redirect rule. Refuses every redirect that leaves the upstream's origin
(scheme, host and port), and every redirect that would change the method (a 301, 302
or 303 answer to a POST), so no configured header or body reaches another origin.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urljoin, urlsplit

from sidecar.errors import UpstreamUnavailable

__all__ = ["MAX_REDIRECTS", "check_headers", "check_url", "next_hop", "origin_of", "same_origin"]

MAX_REDIRECTS = 5
_FIELD_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_DEFAULT_PORTS = {"http": 80, "https": 443}
# Statuses whose redirect keeps the method and body for any method.
_KEEPS_METHOD = frozenset({307, 308})
# Statuses whose redirect keeps the method only when it is already bodiless.
_KEEPS_GET = frozenset({301, 302, 303})


def origin_of(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme, 0)


def same_origin(first: str, second: str) -> bool:
    return origin_of(first) == origin_of(second)


def check_url(url: str) -> None:
    """Refuse what must never be dialled; the words never repeat the URL itself."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise UpstreamUnavailable("its address is not a valid URL") from None
    if parts.scheme.lower() not in _DEFAULT_PORTS:
        raise UpstreamUnavailable("its address must start with http:// or https://")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise UpstreamUnavailable("its address carries credentials (user:password@); put them in headers instead")
    if not parts.hostname:
        raise UpstreamUnavailable("its address has no host")


def check_headers(headers: Mapping[str, str]) -> None:
    for name, value in headers.items():
        if not _FIELD_NAME.match(name):
            raise UpstreamUnavailable(f"header name {name!r} is not a valid HTTP field name")
        if any(ch in value for ch in "\r\n\0"):
            raise UpstreamUnavailable(f"the value of header {name} must be a single line")


def next_hop(current: str, method: str, status: int, location: str | None) -> str:
    """Where a redirect answer may be followed, or UpstreamUnavailable saying why not."""
    if not location:
        raise UpstreamUnavailable(f"it answered a redirect (HTTP {status}) without a location")
    target = urljoin(current, location)
    if not same_origin(current, target):
        raise UpstreamUnavailable(f"it redirected to another address (HTTP {status}); not followed")
    if status in _KEEPS_METHOD or (status in _KEEPS_GET and method in ("GET", "HEAD")):
        return target
    raise UpstreamUnavailable(f"it redirected a {method} with HTTP {status}, which would change the method; not followed")
