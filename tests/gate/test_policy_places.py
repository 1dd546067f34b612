"""The ready-made judgements on where an argument points: a path outside given roots
(after `~`, `..` and symbolic links) and a URL whose host is not a public address, in
every spelling an address parser accepts."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.gate.argrules.places import host_is_private, path_outside

PRIVATE = [
    "http://127.0.0.1/", "http://127.0.0.1:8080/admin", "http://localhost/", "http://LOCALHOST./x",
    "http://2130706433/", "http://0x7f000001/", "http://0x7f.1/", "http://0177.0.0.1/", "http://0177.1/",
    "http://127.1/", "http://0/", "http://0.0.0.0:80/", "http://[::1]/", "http://[0:0:0:0:0:0:0:1]/",
    "http://[::]/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/", "http://[::ffff:a9fe:a9fe]/",
    "http://[64:ff9b::a9fe:a9fe]/", "http://[::127.0.0.1]/", "http://169.254.169.254/latest/meta-data/",
    "http://[fe80::1%25eth0]/", "http://10.0.0.1/", "http://172.16.5.4/", "http://192.168.1.1/",
    "http://100.64.0.1/", "http://[fd00::1]/", "http://%31%32%37.0.0.1/", "http://１２７．０．０．１/",
    "http://metadata.google.internal/computeMetadata/v1/", "http://printer.local/", "http://api.internal/",
    "http://intranet/", "https://a.localhost/", "http://evil.com\\@127.0.0.1/", "127.0.0.1:6379",
    "localhost:5432/db", "http://224.0.0.1/", "http://[ff02::1]/", "not a url at all",
]
PUBLIC = [
    "https://example.com/", "https://api.github.com/repos", "http://8.8.8.8/", "http://134744072/",
    "https://[2606:4700:4700::1111]/", "https://user@example.com/", "example.com/path", "https://1.1.1.1:443/x",
    "https://sub.domain.example.org/a?b=c", "http://93.184.216.34/",
]


@pytest.mark.parametrize("url", PRIVATE)
def test_loopback_private_link_local_and_local_names_are_private(url: str) -> None:
    assert host_is_private(url)


@pytest.mark.parametrize("url", PUBLIC)
def test_public_addresses_and_names_are_not(url: str) -> None:
    assert not host_is_private(url)


@settings(max_examples=300, deadline=None)
@given(st.ip_addresses(v=4))
def test_every_spelling_of_an_ipv4_address_is_judged_as_the_address(address: ipaddress.IPv4Address) -> None:
    number = int(address)
    spellings = [str(address), str(number), hex(number), ".".join(oct(int(p)).replace("0o", "0") for p in str(address).split(".")),
                 f"[::ffff:{address}]"]
    expected = not address.is_global or address.is_multicast
    for spelling in spellings:
        assert host_is_private(f"http://{spelling}/") == expected, spelling


def test_what_is_not_text_is_private_and_empty_is_not() -> None:
    assert host_is_private(["http://x"])  # type: ignore[arg-type]
    assert not host_is_private("")


def test_a_path_is_judged_after_dots_home_and_links(tmp_path: Path) -> None:
    root = tmp_path / "work"
    (root / "sub").mkdir(parents=True)
    outside = tmp_path / "secret"
    outside.mkdir()
    (root / "link").symlink_to(outside)
    roots = [str(root)]
    assert not path_outside(str(root / "sub" / "new.txt"), roots)
    assert not path_outside(str(root), roots)
    assert path_outside(str(root / ".." / "secret" / "x"), roots)
    assert path_outside(str(root / "link" / "x"), roots)  # the link leads out
    assert path_outside(str(root) + "-other/x", roots)  # a sibling with the root's name as prefix
    assert path_outside("/etc/passwd", roots)
    assert path_outside("~/.ssh/id_rsa", roots)
    assert not path_outside("sub/x", roots, str(root))  # relative: from the base
    assert path_outside("../secret", roots, str(root))
    assert path_outside("sub/x", roots)  # relative with no base: outside
    assert path_outside("", roots) and path_outside("a\0b", roots) and path_outside("/" + "a/" * 3000, roots)
    assert not path_outside(f"file://{root}/sub/x", roots)
    assert not path_outside(os.path.join(str(root), "sub", "..", "sub", "x"), roots)


def test_a_loop_of_links_is_judged_without_hanging(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    assert not path_outside(str(tmp_path / "a" / "x"), [str(tmp_path)])
    assert path_outside(str(tmp_path / "a" / "x"), ["/nowhere"])


def test_numbers_too_long_for_an_address_are_names_not_crashes() -> None:
    assert host_is_private("http://" + "1" * 5000 + "/")  # one label: an intranet name
    assert not host_is_private("http://" + "1" * 5000 + ".example.com/")
