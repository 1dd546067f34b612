"""pi with the sidecar's face as extension tools (`omb-sidecar.ts`, beside this file).

`prepare_pi(settings, options)` writes the sidecar config and the extension's launch file
(both 0600, in a private folder) and returns the `Launch`:

    pi -ne -e <shims/pi/omb-sidecar.ts> <engine args>      with OMB_SIDECAR_LAUNCH=<launch file>

`-ne` keeps the person's own extensions out of the turn. Never bridged; the sidecar's
layout for pi lists a big address (URL) server as its search/describe/call trio. With
`options.url`, the extension reaches a sidecar already serving Streamable HTTP instead of
starting one; its bearer token is read from `options.token_file`, never from argv.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shims.launch import (
    Launch,
    check_document,
    engine_document,
    face_name,
    private_folder,
    sidecar_command,
    write_private_json,
)

__all__ = ["EXTENSION", "LAUNCH_VARIABLE", "PiOptions", "prepare_pi"]

EXTENSION = Path(__file__).with_name("omb-sidecar.ts")
LAUNCH_VARIABLE = "OMB_SIDECAR_LAUNCH"


@dataclass(frozen=True)
class PiOptions:
    """The engine side of a pi turn."""

    args: Sequence[str] = ()  # the engine's own arguments: --provider, --model, -p, the prompt, ...
    executable: str = "pi"
    sidecar: Sequence[str] | None = None
    list_wait_seconds: float = 10.0
    environ: Mapping[str, str] | None = None
    url: str | None = None  # reach a sidecar serving Streamable HTTP here instead of starting one
    token_file: str | None = None  # its bearer token
    temp_parent: str | None = None


def prepare_pi(settings: Mapping[str, Any], options: PiOptions = PiOptions()) -> Launch:
    """Write the turn's files and return the pi launch (see the module's text)."""
    environ = dict(os.environ if options.environ is None else options.environ)
    folder = private_folder("omb-pi-", options.temp_parent)
    try:
        config: Path | None = None
        if options.url:
            launch: dict[str, Any] = {"url": options.url, **({"tokenFile": options.token_file} if options.token_file else {})}
        else:
            face_keys = {"name": face_name(settings), "layout": "auto", "listWaitSeconds": options.list_wait_seconds}
            document = engine_document(settings, "pi", face_keys, {"agentsToolBridge": False})
            check_document(document)
            config = write_private_json(folder / "sidecar.json", document)
            command = sidecar_command(options.sidecar)
            launch = {"command": command[0], "args": [*command[1:], "--config", str(config)]}
        launch_file = write_private_json(folder / "pi-launch.json", launch)
    except BaseException:
        Launch([], {}, None, folder, None).cleanup()
        raise
    argv = [options.executable, "-ne", "-e", str(EXTENSION), *options.args]
    env = {**environ, LAUNCH_VARIABLE: str(launch_file)}
    return Launch(argv, env, None, folder, config, (), {"launch_file": launch_file})
