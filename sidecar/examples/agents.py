"""Example upstream: a small slice of the platform's own "agents" catalog."""

from __future__ import annotations

import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mini_server import MiniServer, text  # noqa: E402

server = MiniServer("agents")
BOTS = [{"id": "iris", "engine": "api"}, {"id": "otto", "engine": "claude"}]
ROOM: list[str] = []


@server.tool("list_bots", "List the bots on this desktop with their engines.", {})
def list_bots(_: dict[str, Any]) -> Any:
    return BOTS


@server.tool(
    "post_to_room",
    "Post a message to the shared room so people and other bots can read it.",
    {"text": {"type": "string", "description": "What to post."}},
    ["text"],
)
def post_to_room(args: dict[str, Any]) -> Any:
    ROOM.append(str(args.get("text", "")))
    return text(f"posted message #{len(ROOM)}")


@server.tool(
    "read_room",
    "Read the most recent messages of the shared room.",
    {"limit": {"type": "integer", "description": "How many messages, newest last."}},
)
def read_room(args: dict[str, Any]) -> Any:
    return ROOM[-int(args.get("limit", 10)):]


server.prompt("greet", "A greeting for a bot.", lambda a: f"Say hello to {a.get('bot', 'everyone')}.",
              [{"name": "bot", "description": "Which bot", "required": False}])

if __name__ == "__main__":
    server.serve()
