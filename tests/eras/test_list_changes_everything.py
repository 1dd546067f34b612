"""Issue 24, list changes with the TypeScript SDK's reference server (npm
`@modelcontextprotocol/server-everything`, session era on stdio) behind the sidecar and
the `mcp` Python SDK's client at 2026-07-28 in front: a resource it registers mid-session
(`gzip-file-as-resource`) reaches the engine's `subscriptions/listen` stream as a
resources list change and its next `resources/list` shows it; the updates it sends for a
subscribed resource (`toggle-subscriber-updates`) reach the stream as
`notifications/resources/updated`, for that URI."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.eras.eras_support import MODERN, Person, sdk_client, sdk_wait_for_tools
from tests.http.http_support import open_http_sidecar

pytestmark = pytest.mark.e2e

DOCUMENT = "demo://resource/static/document/architecture.md"


async def test_server_everythings_changes_reach_a_stateless_engines_listen_stream(npm, write_config,
                                                                                 tmp_path: Path) -> None:
    config = write_config({"ev": {**npm.everything_entry(), "pinning": "off"}})
    async with open_http_sidecar(config, tmp_path) as sc:
        async with sdk_client(sc.url, sc.token, Person(), MODERN) as client:
            await sdk_wait_for_tools(client, "ev__toggle-subscriber-updates")
            with anyio.fail_after(60):
                async with client.listen(resources_list_changed=True, resource_subscriptions=[DOCUMENT]) as sub:
                    honored = sub.honored
                    await client.call_tool("ev__gzip-file-as-resource", {
                        "name": "hi.gz", "data": "data:text/plain;base64,aGk=", "outputType": "resourceLink"})
                    listed_after = await anext(sub)
                    uris = {str(resource.uri) for resource in (await client.list_resources()).resources}
                    await client.call_tool("ev__toggle-subscriber-updates", {})  # sends one at once, then every 5 s
                    updated = await anext(sub)
    assert honored.resources_list_changed is True and honored.resource_subscriptions == [DOCUMENT]
    assert type(listed_after).__name__ == "ResourcesListChanged" and "demo://resource/session/hi.gz" in uris
    assert type(updated).__name__ == "ResourceUpdated" and updated.uri == DOCUMENT
