"""The operator's page at `/console` (issue 26; SPEC section 11): servers and their health,
adding by paste, signing in from any browser, reviewing and approving held tools, and
the calls as they pass.

Loaded only when `console.enabled` is set: the CLI hands `mount_console` to the HTTP
front (`sidecar.front.http.console_door`), which calls it once with the running faces.
Off, nothing here is imported and no `/console` route exists. Never shows a secret.
"""

from __future__ import annotations

from sidecar.front.http.console_door import ConsoleScene, ConsoleSite

__all__ = ["mount_console"]


def mount_console(scene: ConsoleScene) -> ConsoleSite:
    """The console for these faces; its routes join the front's application."""
    from sidecar_admin.console.site import Console

    return Console(scene)
