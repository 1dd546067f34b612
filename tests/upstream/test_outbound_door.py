"""The outbound gate stays the only door (RELIABILITY rule 17): no module but the gate and
the upstream client (which reaches only the operator's configured origin) opens an HTTP
client, and every sign-in request goes through `OAuthHttp`, which holds only the gate."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

DOORS = {"sidecar/upstream/outbound.py", "sidecar/upstream/webclient.py"}
CLIENTS = {"ClientSession", "TCPConnector", "request", "urlopen", "create_connection", "open_connection"}


def _opens_a_client(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if node.func.attr in CLIENTS and isinstance(owner, ast.Name) and owner.id in {
                    "aiohttp", "urllib", "request", "asyncio", "socket", "http"}:
                found.append(f"{owner.id}.{node.func.attr} at line {node.lineno}")
    return found


def test_only_the_doors_open_http_clients() -> None:
    opened = {}
    for path in [*REPO.joinpath("sidecar").rglob("*.py"), *REPO.joinpath("sidecar_admin").rglob("*.py")]:
        name = str(path.relative_to(REPO))
        found = _opens_a_client(ast.parse(path.read_text()))
        if found and name not in DOORS:
            opened[name] = found
    assert opened == {}, f"an HTTP client outside the outbound gate: {opened}"


def test_the_sign_in_client_holds_only_the_gate() -> None:
    source = Path(REPO, "sidecar/upstream/oauth/exchange.py").read_text()
    assert "import aiohttp" not in source and "Outbound(" in source
