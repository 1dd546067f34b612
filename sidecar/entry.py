"""The `omb-sidecar` command's entry point, and `python -m sidecar`'s.

Owns the order of the first milliseconds: the stdio upstreams a plain `--config PATH`
start names are launched first (`sidecar.upstream.plain_config`, standard library only);
when at least one started, an engine's `initialize` already waiting on stdin is answered
next (`sidecar.stdin_ahead`, standard library only: before msgspec, the config and the CLI
load); then the CLI loads, is handed what was read of stdin, and reads the command line
as it always did.
"""

from __future__ import annotations

import os
import sys

__all__ = ["main"]


def main() -> int:
    from sidecar.upstream.plain_config import start_named_in

    started = start_named_in(sys.argv[1:])
    ahead = None
    if started:
        from sidecar.stdin_ahead import answer_ahead, otlp_export_wanted

        # the one look at the environment before the settings read it (whether traces are exported)
        ahead = answer_ahead(started, otlp_export_wanted(os.environ))
    from sidecar.cli import main as cli_main

    return cli_main(ahead=ahead)
