"""Example upstream: a notes server with search, add and a readable resource."""

from __future__ import annotations

import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mini_server import MiniServer, text  # noqa: E402

server = MiniServer("notes")
NOTES = {
    "welcome": "omb-sidecar keeps every engine's tool list small and every call on one path.",
    "groceries": "milk, rye bread, coffee",
}


@server.tool(
    "search_notes",
    "Find notes whose title or text contains a word.",
    {"query": {"type": "string", "description": "A word to look for."}},
    ["query"],
)
def search_notes(args: dict[str, Any]) -> Any:
    query = str(args.get("query", "")).lower()
    return [title for title, body in NOTES.items() if query in title or query in body.lower()]


@server.tool(
    "add_note",
    "Save a note under a title.",
    {"title": {"type": "string"}, "text": {"type": "string"}},
    ["title", "text"],
)
def add_note(args: dict[str, Any]) -> Any:
    NOTES[str(args["title"])] = str(args["text"])
    return text(f"saved '{args['title']}' ({len(NOTES)} notes)")


@server.tool(
    "export_notes",
    "Export the notes archive as JSON records (large: thousands of entries).",
    {"year": {"type": "integer", "description": "Which year's archive."}},
)
def export_notes(args: dict[str, Any]) -> Any:
    year = int(args.get("year", 2026))
    topics = ("groceries", "meeting", "travel", "books", "garden", "recipes")
    return [
        {"id": n, "year": year, "topic": topics[n % len(topics)], "title": f"note {n}", "words": 40 + n % 300}
        for n in range(3000)
    ]


server.resource("notes://welcome", "welcome note", lambda: NOTES["welcome"])

if __name__ == "__main__":
    server.serve()
