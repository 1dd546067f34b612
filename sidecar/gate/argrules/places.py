"""Where an argument points: a path outside given roots, a URL whose host is not public.

Owns the two ready-made judgements behind the condition functions `path_outside` and
`private_host`. A path is made absolute, its `..` taken out and its symbolic links
resolved as far as this machine can see them (the upstream may see another file
system: the sidecar judges what it can see). A host is read the way address parsers
that reach the network read it: IPv4 in every form `inet_aton` takes (`2130706433`,
`0x7f.1`, `0177.0.0.1`, `127.1`), IPv6 with a zone, v4-mapped, v4-compatible and NAT64
forms, percent-escapes and full-width digits folded first; no name is looked up (a
name that resolves to a private address later is not seen: a tripwire, not a
firewall). Whatever cannot be judged counts against the call: fail closed.
"""

from __future__ import annotations

import ipaddress
import os
import posixpath
import re
import unicodedata
import urllib.parse

__all__ = ["MAX_PATH", "host_is_private", "path_outside", "url_host"]

MAX_PATH = 4096  # a longer path is not resolved: it counts as outside
_LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", "metadata",
                "metadata.google.internal", "instance-data", "kubernetes.default")
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa", ".intranet", ".corp")
_IPV4_PART = re.compile(r"^(?:0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*)$")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def path_outside(path: str, roots: list[str], base: str | None = None) -> bool:
    """True when `path` (relative ones against `base`; with no base, a relative path is
    outside) is in none of `roots`, after `~`, `..` and symbolic links."""
    if not path or "\0" in path or len(path) > MAX_PATH:
        return True
    if path.startswith("file://"):
        path = urllib.parse.unquote(urllib.parse.urlsplit(path).path)
    path = os.path.expanduser(path)
    if not posixpath.isabs(path):
        if base is None or not posixpath.isabs(base):
            return True
        path = posixpath.join(base, path)
    seen = _resolved(path)
    return not any(_inside(seen, _resolved(root)) for root in roots if posixpath.isabs(os.path.expanduser(root)))


def _resolved(path: str) -> str:
    try:
        return os.path.realpath(os.path.expanduser(path))
    except (OSError, ValueError):  # a loop or a name the system refuses: judged as written
        return posixpath.normpath(path)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def url_host(url: str, backslash_is_slash: bool = True) -> str | None:
    """The host a URL (or a bare `host[:port][/path]`) names, folded; None when it has none.
    Browsers and WHATWG parsers read `\\` as `/`; others do not (`backslash_is_slash`)."""
    text = unicodedata.normalize("NFKC", url.strip())
    if "//" not in text[:12]:
        text = "//" + text
    try:
        host = urllib.parse.urlsplit(text.replace("\\", "/") if backslash_is_slash else text).hostname
    except ValueError:
        return None
    if not host:
        return None
    host = urllib.parse.unquote(host)
    host = unicodedata.normalize("NFKC", host).strip().rstrip(".").lower()
    return host.replace("\u3002", ".").replace("\uff0e", ".").replace("\uff61", ".")


def host_is_private(url: str) -> bool:
    """True for a loopback, private, link-local, unspecified, shared or otherwise
    non-public address, and for local names; False for a public address or name. An
    address that does not parse at all is private (fail closed)."""
    if not isinstance(url, str):
        return True
    readings = {url_host(url), url_host(url, backslash_is_slash=False)}
    if "@" in url:  # parsers disagree on which `@` ends the user part: judge each reading
        scheme, _, rest = url.partition("//")
        readings.add(url_host(scheme + "//" + rest.split("@", 1)[1]) if "//" in url else None)
    if readings == {None}:
        return bool(url.strip())  # text with no host in it cannot be judged
    return any(_host_is_private(host) for host in readings if host is not None)


def _host_is_private(host: str) -> bool:
    address = _address(host)
    if address is not None:
        return not address.is_global or address.is_multicast
    if host in _LOCAL_NAMES or host.endswith(_LOCAL_SUFFIXES):
        return True
    return "." not in host  # a one-label name resolves in the local search domain: an intranet name


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    if ":" in host:
        try:
            address = ipaddress.IPv6Address(host.split("%", 1)[0])
        except ValueError:
            return None
        return _embedded_v4(address) or address
    return _loose_ipv4(host)


def _embedded_v4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if int(address) >> 32 == 0 and int(address) > 1:  # v4-compatible (::a.b.c.d), deprecated but parsed
        return ipaddress.IPv4Address(int(address))
    return None


def _loose_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """An IPv4 address in any form `inet_aton` accepts: 1 to 4 parts, each decimal, octal
    (a leading 0) or hex (0x); the last part fills the remaining bytes."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or len(host) > 64 or not all(_IPV4_PART.match(p) for p in parts):
        return None
    values = [int(p, 16) if p[:2].lower() == "0x" and len(p) > 2 else int(p, 8) if p.startswith("0") and p != "0"
              else 0 if p.lower() == "0x" else int(p) for p in parts]
    head, last = values[:-1], values[-1]
    if any(v > 255 for v in head) or last >= 256 ** (4 - len(head)):
        return None
    number = 0
    for value in head:
        number = number * 256 + value
    return ipaddress.IPv4Address(number * 256 ** (4 - len(head)) + last)
