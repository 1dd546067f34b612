"""The requests that reach every surface a bot's selection governs (tools, prompts,
resources, templates, completions, subscriptions), by label: shared by the in-memory and
the real-process selection tests, so both ask the same things."""

from typing import Any

SURFACE_REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "tools/list": ("tools/list", {}),
    "prompts/list": ("prompts/list", {}),
    "resources/list": ("resources/list", {}),
    "resources/templates/list": ("resources/templates/list", {}),
    "read alpha": ("resources/read", {"uri": "sdk://alpha/static/hello"}),
    "get alpha": ("prompts/get", {"name": "alpha__greet", "arguments": {"name": "x"}}),
    "complete alpha": ("completion/complete", {"ref": {"type": "ref/prompt", "name": "alpha__greet"},
                                               "argument": {"name": "name", "value": "al"}}),
    "get beta": ("prompts/get", {"name": "beta__greet", "arguments": {"name": "x"}}),
    "read beta": ("resources/read", {"uri": "sdk://beta/static/hello"}),
    "complete beta prompt": ("completion/complete", {"ref": {"type": "ref/prompt", "name": "beta__greet"},
                                                     "argument": {"name": "name", "value": "al"}}),
    "complete beta template": ("completion/complete", {"ref": {"type": "ref/resource", "uri": "sdk://beta/items/{id}"},
                                                       "argument": {"name": "id", "value": "1"}}),
    "subscribe beta": ("resources/subscribe", {"uri": "sdk://beta/static/hello"}),
}
