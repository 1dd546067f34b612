"""The compact listing through the real sidecar on stdio: a bot that asks for it sees each
tool by description and signature; a call that fits runs as before, one that does not
gets the real schema back and never reaches the upstream."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


@pytest.mark.parametrize("how", ["features", "face"])
async def test_a_compact_face_lists_signatures_and_answers_a_misfit_with_the_schema(
    how: str, raw_sidecar: Any, write_config: Any, fault_server_entry: Any
) -> None:
    asks: dict[str, Any] = {"features": {"compactListing": True}} if how == "features" else {"face": {"layout": "compact"}}
    config = write_config({"fault": fault_server_entry()}, **asks)
    async with raw_sidecar(config) as sc:
        await sc.initialize()
        tools = {t["name"]: t for t in await sc.wait_for_tools(["fault__echo", "fault__sleep"])}
        echo, sleep = tools["fault__echo"], tools["fault__sleep"]
        assert echo["description"].endswith("Arguments: (nonce: string)") and echo["inputSchema"] == {"type": "object"}
        assert "Arguments: (seconds: number, nonce?: string)" in sleep["description"]
        assert tools["query_result"]["inputSchema"] != {"type": "object"}  # the face's own tools stay whole
        fits = await sc.call("fault__echo", {"nonce": "n-1"})
        assert "n-1" in json.dumps(fits["result"]) and not fits["result"].get("isError")
        misfit = (await sc.call("fault__echo", {"nonse": "n-2"}))["result"]
        text = misfit["content"][0]["text"]
        assert misfit["isError"] and "missing 'nonce'" in text and '"required":["nonce"]' in text
        wrong_type = (await sc.call("fault__sleep", {"seconds": "soon"}))["result"]
        assert wrong_type["isError"] and "'seconds' must be number" in wrong_type["content"][0]["text"]
