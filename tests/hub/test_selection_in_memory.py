"""The bot's selection governs every surface, in memory, and what it leaves out is never
started: absent from every list, unknown to every read, get, completion and subscription,
and its server never opened (RELIABILITY rule 13). The HTTP sessions and the stateless
revision keep their real-process test in tests/front/test_selection_surfaces.py."""

from __future__ import annotations

import json

import pytest

from tests.front.test_selection_surfaces import CUTS
from tests.harness import FakeServer, echo, in_memory, tool
from tests.selection_cases import SURFACE_REQUESTS


def _serving(alias: str) -> FakeServer:
    """Tools, two prompts, a resource, a template, completions and subscriptions, all naming `alias`."""
    answers = {
        "resources/read": lambda p: {"contents": [{"uri": p.get("uri"), "text": f"hello from {alias}"}]},
        "prompts/get": lambda p: {"messages": [{"role": "user", "content": {"type": "text", "text": f"{alias} says hi"}}]},
        "completion/complete": lambda p: {"completion": {"values": [f"{alias}-1"]}},
        "resources/subscribe": lambda p: {},
    }
    return FakeServer([tool("echo"), tool("add")], name=alias, on_call=echo, answers=answers,
                      prompts=[{"name": "greet", "arguments": [{"name": "name"}]}, {"name": "plain"}],
                      resources=[{"uri": f"sdk://{alias}/static/hello", "name": "hello"}],
                      templates=[{"uriTemplate": f"sdk://{alias}/items/{{id}}", "name": "item"}])


@pytest.mark.parametrize("cut", list(CUTS))
async def test_what_the_bot_cannot_reach_is_nowhere_and_never_started(cut: str) -> None:
    servers = {"alpha": _serving("alpha"), "beta": _serving("beta"), "gamma": FakeServer([tool("echo")], name="gamma")}
    bot, top = CUTS[cut]
    async with in_memory(servers, bot=bot, **top) as sidecar:
        engine = await sidecar.engine()
        answers = {label: await engine.roundtrip(method, params) for label, (method, params) in SURFACE_REQUESTS.items()}
    assert [p["name"] for p in answers["prompts/list"]["result"]["prompts"]] == ["alpha__greet", "alpha__plain"]
    assert [r["uri"] for r in answers["resources/list"]["result"]["resources"]] == ["sdk://alpha/static/hello"]
    assert [t["uriTemplate"] for t in answers["resources/templates/list"]["result"]["resourceTemplates"]] == [
        "sdk://alpha/items/{id}"]
    names = [t["name"] for t in answers["tools/list"]["result"]["tools"]]
    assert "alpha__echo" in names and not [n for n in names if n.startswith(("beta__", "gamma__"))]
    for alpha in ("read alpha", "get alpha", "complete alpha"):
        assert "alpha" in json.dumps(answers[alpha]["result"]), answers[alpha]
    for refused in ("get beta", "complete beta prompt"):
        assert "error" in answers[refused], (refused, answers[refused])
    # A URI nobody lists may go to the one upstream that offers resources (alpha): it
    # answers for itself, and nothing of beta's comes back.
    for by_uri in ("read beta", "complete beta template", "subscribe beta"):
        assert "error" in answers[by_uri] or "from beta" not in json.dumps(answers[by_uri]["result"]), answers[by_uri]
    assert servers["alpha"].starts == 1
    assert servers["beta"].starts == servers["gamma"].starts == 0  # never opened: no process, no connection
