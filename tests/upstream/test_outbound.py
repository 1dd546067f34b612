"""The outbound gate (sidecar/upstream/outbound.py): every address a server or its
metadata names is refused unless it is https to a public address (or loopback for a
loopback server), resolved once, and dialled at the address that was checked.

Hostile forms come from a corpus and from hypothesis (addresses drawn from every refused
range, as literals, as IPv4 inside IPv6 and as names a test resolver answers); the
connection rules are shown over real HTTP on 127.0.0.1, with names only the test's
resolver knows (no /etc/hosts, no network).
"""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidecar.errors import UpstreamUnavailable
from sidecar.upstream.outbound import Outbound, OutboundGate, OutboundRefused, address_refusal

PUBLIC_SERVER = "https://mcp.example.com/mcp"

NAMES = {
    "metadata.test": ["169.254.169.254"],
    "rebind.test": ["93.184.216.34", "10.0.0.1"],
    "mapped.test": ["::ffff:10.0.0.1"],
    "loop.test": ["127.0.0.1"],
    "six.test": ["fd00::1"],
    "public.test": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
    "localhost": ["127.0.0.1", "::1"],
}


async def resolver(host: str) -> list[str]:
    return list(NAMES.get(host, []))


HOSTILE = [
    # schemes
    "http://public.test/x", "ftp://public.test/x", "file:///etc/passwd", "gopher://public.test/",
    "javascript:alert(1)", "data:application/json,{}", "ws://public.test/", "//public.test/x", "public.test/x",
    # user information
    "https://user:pass@public.test/", "https://public.test@metadata.test/", "https://@public.test/",
    # what no URL holds
    "https://public.test\\@metadata.test/", "https://public .test/", "https://public.test/\r\nX: y",
    "https://pub\u0131ic.test/", "https://public.test:0/", "https://public.test:99999/", "https://public.test:x/",
    "https:///x", "https://[::1/x",
    # IPv4 in every spelling
    "https://127.0.0.1/", "https://2130706433/", "https://0177.0.0.1/", "https://0x7f.0.0.1/", "https://0x7f000001/",
    "https://127.1/", "https://017700000001/", "https://169.254.169.254/latest/meta-data/", "https://2852039166/",
    "https://0251.0376.0251.0376/", "https://10.0.0.1/", "https://192.168.1.1/", "https://172.16.0.1/",
    "https://100.64.0.1/", "https://0.0.0.0/", "https://224.0.0.1/", "https://240.0.0.1/", "https://192.0.0.8/",
    "https://255.255.255.255/", "https://169.254.169.254./",
    # IPv6 in every spelling
    "https://[::1]/", "https://[::ffff:127.0.0.1]/", "https://[::ffff:a9fe:a9fe]/", "https://[fe80::1%25eth0]/",
    "https://[fe80::1]/", "https://[fc00::1]/", "https://[::]/", "https://[64:ff9b::a9fe:a9fe]/",
    "https://[2002:a9fe:a9fe::1]/", "https://[::127.0.0.1]/", "https://[ff02::1]/", "https://[2001:db8::1]/",
    "https://[0:0:0:0:0:ffff:7f00:1]/",
    # names resolving where they must not
    "https://metadata.test/", "https://rebind.test/", "https://mapped.test/", "https://loop.test/",
    "https://six.test/", "https://nowhere.test/", "https://localhost/",
]


@pytest.mark.parametrize("url", HOSTILE)
async def test_every_hostile_address_is_refused_in_words(url: str) -> None:
    gate = OutboundGate(PUBLIC_SERVER, resolver)
    with pytest.raises(OutboundRefused) as refused:
        await gate.admit(url)
    assert refused.value.message.startswith("the sidecar refused to fetch ")
    assert "\n" not in refused.value.message and len(refused.value.message) < 400


async def test_a_public_address_passes_and_is_the_one_dialled() -> None:
    gate = OutboundGate(PUBLIC_SERVER, resolver)
    admitted = await gate.admit("https://public.test/.well-known/oauth-authorization-server")
    assert (admitted.host, admitted.address) == ("public.test", "93.184.216.34")
    assert (await gate.admit("https://93.184.216.34:8443/token")).address == "93.184.216.34"


async def test_a_loopback_server_keeps_its_sign_in_on_loopback() -> None:
    gate = OutboundGate("http://127.0.0.1:8123/mcp", resolver)
    for url in ("http://127.0.0.1:9000/token", "http://loop.test:9000/x", "https://[::1]:9000/x",
                "http://localhost:9000/x"):
        await gate.admit(url)
    for url in ("https://public.test/", "http://public.test/", "https://metadata.test/", "http://10.0.0.1/",
                "http://169.254.169.254/latest/meta-data/", "https://[::ffff:a9fe:a9fe]/"):
        with pytest.raises(OutboundRefused):
            await gate.admit(url)


async def test_resource_metadata_must_be_on_the_servers_own_origin() -> None:
    gate = OutboundGate("http://127.0.0.1:8123/mcp", resolver)
    await gate.admit("http://127.0.0.1:8123/.well-known/oauth-protected-resource/mcp", same_origin=True)
    for other in ("http://127.0.0.1:8124/.well-known/x", "http://loop.test:8123/x", "https://127.0.0.1:8123/x"):
        with pytest.raises(OutboundRefused, match="own origin"):
            await gate.admit(other, same_origin=True)


# -- hypothesis: addresses drawn from every refused range ------------------------------------

REFUSED_V4 = ["0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
              "192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4"]
REFUSED_V6 = ["::1/128", "::/128", "fe80::/10", "fc00::/7", "ff00::/8", "2001:db8::/32"]


def _in(networks: list[str]) -> st.SearchStrategy[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    def pick(network: str) -> st.SearchStrategy[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        net = ipaddress.ip_network(network)
        return st.integers(0, net.num_addresses - 1).map(lambda i: net[i])
    return st.sampled_from(networks).flatmap(pick)


def _forms(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> st.SearchStrategy[str]:
    """Ways one refused address can reach the gate: a literal, IPv4 inside IPv6, a name."""
    forms = [f"https://[{ip}]/" if ip.version == 6 else f"https://{ip}/"]
    if ip.version == 4:
        mapped = ipaddress.IPv6Address(f"::ffff:{ip}")
        six_to_four = ipaddress.IPv6Address((0x2002 << 112) | (int(ip) << 80) | 1)
        nat64 = ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | int(ip))
        forms += [f"https://[{mapped}]/", f"https://[{six_to_four}]/", f"https://[{nat64}]/",
                  f"https://{int(ip)}/", "https://" + ".".join(f"0{int(b):o}" for b in str(ip).split(".")) + "/"]
    return st.sampled_from(forms)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ip=_in(REFUSED_V4) | _in(REFUSED_V6), data=st.data())
async def test_generated_refused_addresses_never_pass(ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
                                                      data: st.DataObject) -> None:
    url = data.draw(_forms(ip))
    with pytest.raises(OutboundRefused):
        await OutboundGate(PUBLIC_SERVER, resolver).admit(url)

    async def names_it(host: str) -> list[str]:
        return ["93.184.216.34", str(ip)] if host == "mixed.test" else []

    with pytest.raises(OutboundRefused):  # one bad address among good ones is enough
        await OutboundGate(PUBLIC_SERVER, names_it).admit("https://mixed.test/")


@settings(max_examples=300, deadline=None)
@given(ip=st.ip_addresses())
def test_the_address_rule_agrees_with_the_ranges(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    refusal = address_refusal(str(ip), loopback_only=False)
    if ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast or not ip.is_global:
        assert refusal is not None
    inner = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    if inner is not None:
        assert (refusal is None) == (address_refusal(str(inner), loopback_only=False) is None)
    assert (address_refusal(str(ip), loopback_only=True) is None) == (inner or ip).is_loopback


@pytest.mark.parametrize("translated", ["64:ff9b::7f00:1", "64:ff9b:1::7f00:1", "2002:7f00:1::1",
                                        "2001:0:4136:e378:8000:63bf:80ff:fffe"])
def test_a_relayed_form_of_loopback_is_not_loopback_for_a_loopback_server(translated: str) -> None:
    # NAT64, 6to4 and Teredo forms carry 127.x, but they are dialled through a translator or relay
    assert address_refusal(translated, loopback_only=True) is not None
    assert address_refusal("::ffff:127.0.0.1", loopback_only=True) is None


@settings(max_examples=300, deadline=None)
@given(url=st.text(max_size=80) | st.builds(lambda a, b: f"https://{a}/{b}", st.text(max_size=30), st.text(max_size=10)))
async def test_any_text_is_admitted_or_refused_in_words(url: str) -> None:
    try:
        await OutboundGate(PUBLIC_SERVER, resolver).admit(url)
    except OutboundRefused as refused:
        assert refused.message.isprintable()


# -- real HTTP on 127.0.0.1: the checked address is the one connected to -----------------------


@asynccontextmanager
async def origin_server(routes: dict[str, Callable[[], web.StreamResponse]]) -> AsyncIterator[tuple[int, list[str]]]:
    """A small server on 127.0.0.1; each request's Host header is kept."""
    hosts: list[str] = []

    async def answer(request: web.Request) -> web.StreamResponse:
        hosts.append(request.headers.get("Host", ""))
        make = routes.get(request.path)
        return make() if make else web.json_response({"ok": True, "path": request.path})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield port, hosts
    finally:
        await runner.cleanup()


async def test_the_connection_goes_to_the_checked_address_under_the_name() -> None:
    calls: list[str] = []

    async def rebinding(host: str) -> list[str]:
        calls.append(host)  # a second lookup would have been told 169.254.169.254
        return ["127.0.0.1"] if len(calls) == 1 else ["169.254.169.254"]

    async with origin_server({}) as (port, hosts):
        outbound = Outbound(f"http://127.0.0.1:{port}/mcp", resolve=rebinding, environ={})
        try:
            answer = await outbound.fetch("GET", f"http://as.test:{port}/meta")
        finally:
            await outbound.close()
    assert answer.status == 200 and b'"/meta"' in answer.body
    assert calls == ["as.test"] and hosts == [f"as.test:{port}"]


async def test_hops_pass_the_gate_again_and_stay_on_the_origin() -> None:
    async with origin_server({}) as (port, _):
        routes = {
            "/same": lambda: web.Response(status=302, headers={"Location": "/landed"}),
            "/away": lambda: web.Response(status=302, headers={"Location": f"http://localhost:{port}/landed"}),
            "/metadata": lambda: web.Response(status=307,
                                              headers={"Location": "http://169.254.169.254/latest/meta-data/"}),
            "/loop": lambda: web.Response(status=302, headers={"Location": "/loop"}),
            "/broken": lambda: web.Response(status=302, headers={"Location": "http://[::1/x"}),
            "/port": lambda: web.Response(status=302, headers={"Location": "http://127.0.0.1:99999/x"}),
        }
        async with origin_server(routes) as (hostile, _):
            outbound = Outbound(f"http://127.0.0.1:{hostile}/mcp", resolve=resolver, environ={})
            try:
                assert (await outbound.fetch("GET", f"http://127.0.0.1:{hostile}/same")).status == 200
                for path, words in (("/away", "another address"), ("/metadata", "another address"),
                                    ("/loop", "too many"), ("/broken", "not a valid URL"),
                                    ("/port", "not a valid URL|another address")):
                    with pytest.raises(OutboundRefused, match=words):
                        await outbound.fetch("GET", f"http://127.0.0.1:{hostile}{path}")
            finally:
                await outbound.close()


async def test_a_huge_answer_is_refused_before_it_is_buffered() -> None:
    async def endless(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        for _ in range(4096):  # 64 MB if anyone read it all
            await response.write(b"x" * 16384)
        return response

    app = web.Application()
    app.router.add_get("/big", endless)
    async def declared(request: web.Request) -> web.Response:
        return web.Response(body=b"x" * 200_000)

    app.router.add_get("/declared", declared)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    outbound = Outbound(f"http://127.0.0.1:{port}/mcp", resolve=resolver, environ={})
    try:
        for path in ("/big", "/declared"):
            with pytest.raises(OutboundRefused, match="larger than 64 KB"):
                await outbound.fetch("GET", f"http://127.0.0.1:{port}{path}")
    finally:
        await outbound.close()
        await runner.cleanup()


def _certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A test CA and a certificate for the name `as.test` only (no IP address in it)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(name("outbound test CA")).issuer_name(name("outbound test CA"))
          .public_key(ca_key.public_key()).serial_number(1).not_valid_before(now - datetime.timedelta(days=1))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder().subject_name(name("as.test")).issuer_name(ca.subject)
            .public_key(leaf_key.public_key()).serial_number(2).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("as.test")]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = folder / "ca.pem", folder / "leaf.pem", folder / "leaf.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                serialization.NoEncryption()))
    return paths


async def test_tls_checks_the_name_while_the_checked_address_is_dialled(tmp_path: Path) -> None:
    ca, leaf, key = _certificates(tmp_path)
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(leaf, key)
    names: list[str | None] = []
    served.sni_callback = lambda sock, server_name, context: names.append(server_name)  # type: ignore[assignment,misc,func-returns-value]
    hosts: list[str] = []

    async def answer(request: web.Request) -> web.Response:
        hosts.append(request.headers.get("Host", ""))
        return web.json_response({"issuer": "https://as.test"})

    app = web.Application()
    app.router.add_get("/meta", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=served).start()
    port = runner.addresses[0][1]

    async def names_loopback(host: str) -> list[str]:
        return ["127.0.0.1"] if host in ("as.test", "other.test") else []

    outbound = Outbound("https://127.0.0.1:1/mcp", resolve=names_loopback, environ={},
                        trust=ssl.create_default_context(cafile=str(ca)))
    try:
        answer_ = await outbound.fetch("GET", f"https://as.test:{port}/meta")
        assert answer_.status == 200 and names == ["as.test"] and hosts == [f"as.test:{port}"]
        with pytest.raises(UpstreamUnavailable, match="could not be reached"):  # same address, wrong name
            await outbound.fetch("GET", f"https://other.test:{port}/meta")
        assert names[-1] == "other.test" and len(hosts) == 1  # it got as far as TLS, and no further
    finally:
        await outbound.close()
        await runner.cleanup()
