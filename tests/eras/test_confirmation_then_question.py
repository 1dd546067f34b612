"""Item 3 of issue 24: the gate's own confirmation composes with an upstream's question.
A consequential call whose upstream also asks gets both, confirmation first (the gate
decides before the call runs; only a running call can ask), on every path: stdio, an
HTTP session (2025-11-25), and the stateless revision (three rounds: the confirmation,
the upstream's question, the result)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from tests.eras.eras_support import MODERN, Person, era_entry, said, sdk_client, sdk_wait_for_tools
from tests.http.http_support import open_http_sidecar

pytestmark = pytest.mark.e2e


def _config(write_config, tmp_path: Path) -> tuple[Path, Path]:
    audit = tmp_path / "audit.jsonl"
    config = write_config({"era": era_entry(consequential=["form"])}, policy={"requireConfirmation": True},
                          audit={"file": str(audit)})
    return config, audit


def _steps(audit: Path) -> list[tuple[str, str]]:
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    return [(d["stage"], d["action"]) for r in records if r.get("tool") == "era__form" for d in r["decisions"]]


def _order(person: Person) -> list[str]:
    """What the person was asked, in order: the gate's confirmation or the upstream's form."""
    return ["confirm" if "era__form" in params.message else "upstream" for _, params in person.asked]


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_confirmation_first_then_the_upstreams_question_over_http(write_config, tmp_path: Path,
                                                                        mode: str) -> None:
    config, audit = _config(write_config, tmp_path)
    person = Person("kim")
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc:
        async with sdk_client(sc.url, sc.token, person, mode) as client:
            await sdk_wait_for_tools(client)
            with anyio.fail_after(60):
                result = await client.call_tool("era__form", {"message": "Your name?"})
    assert json.loads(said(result))["content"] == {"name": "kim"}
    assert _order(person) == ["confirm", "upstream"]
    assert ("confirm", "allow") in _steps(audit)


async def test_a_denied_confirmation_never_reaches_the_upstream(write_config, tmp_path: Path) -> None:
    config, _ = _config(write_config, tmp_path)
    person = Person("kim", decision="deny")
    async with open_http_sidecar(config, tmp_path, log_level="INFO") as sc:
        async with sdk_client(sc.url, sc.token, person, MODERN) as client:
            await sdk_wait_for_tools(client)
            with anyio.fail_after(60):
                result = await client.call_tool("era__form", {"message": "Your name?"})
    assert result.is_error and _order(person) == ["confirm"]


async def test_confirmation_first_then_the_upstreams_question_on_stdio(write_config, sidecar_client,
                                                                       tmp_path: Path) -> None:
    config, _ = _config(write_config, tmp_path)
    person = Person("kim")
    async with sidecar_client(config, elicitation=person.elicit) as c:
        await c.wait_for_tools({"era__form"})
        with anyio.fail_after(60):
            result = await c.session.call_tool("era__form", {"message": "Your name?"})
    assert json.loads(said(result))["content"] == {"name": "kim"}
    assert _order(person) == ["confirm", "upstream"]
