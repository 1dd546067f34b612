"""The `omb-sidecar` command's entry point, and `python -m sidecar`'s.

Owns the order of the first milliseconds: the stdio upstreams a plain `--config PATH`
start names are launched first (`sidecar.upstream.plain_config`, standard library only);
when at least one started, an engine's `initialize` already waiting on stdin is answered
next (`sidecar.stdin_ahead`, standard library only: before msgspec, the config and the CLI
load); when every server of the config started early and a listing snapshot is kept for
it (`sidecar.listing_snapshot`), the engine's first `tools/list` is answered from it once
the upstreams' own listings match its key; then the CLI loads, is handed what was read of
stdin (and what this start's listing depends on), and reads the command line as it always
did.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # `typing` (with what it loads, about 6 ms) waits until after the first spawn
if TYPE_CHECKING:
    from sidecar.wire.plain_hello import Ahead

__all__ = ["main"]


def main() -> int:
    from sidecar.upstream.plain_config import start_named_in

    started = start_named_in(sys.argv[1:])
    ahead = None
    if started:  # a plain stdio start: the CLI goes on to serve, and `settle_heap` resumes the collector
        from sidecar.collector import hold_for_start

        hold_for_start()
        from sidecar.stdin_ahead import answer_ahead, otlp_export_wanted

        # the one look at the environment before the settings read it (whether traces are exported)
        ahead = answer_ahead(started, otlp_export_wanted(os.environ))
        if ahead is not None and ahead.answered:
            ahead = _listing_ahead(ahead)
    from sidecar.cli import main as cli_main

    try:
        return cli_main(ahead=ahead)
    finally:
        from sidecar.collector import resume

        resume()  # when the CLI ended before it settled the heap (a config error, say)


def _listing_ahead(ahead: Ahead) -> Ahead:
    """The engine's first listing answered from the snapshot when it can be (see above), and
    this start's listing inputs handed on in any case where they can be keyed."""
    from sidecar.listing_snapshot import ListingInputs, listing_environment
    from sidecar.plain_json import json_document
    from sidecar.stdin_ahead import answer_listing_ahead
    from sidecar.upstream.plain_config import list_wait_seconds, plain_start, start_seconds
    from sidecar.upstream.spawn import early_greetings
    from sidecar.wire.versions import MODERN_VERSION

    plain = plain_start()
    greetings = early_greetings()
    params = json_document(ahead.read[:ahead.read.find(b"\n")]).get("params", {})  # read plainly: answered
    if (plain is None or not plain.every_server_early or params.get("protocolVersion") == MODERN_VERSION
            or not all(greeting is not None for _, greeting in greetings)):
        return ahead
    environment = listing_environment(os.environ, plain.config)
    inputs = ListingInputs(plain.folder, plain.path, plain.config, environment, params,
                           [(alias, greeting) for alias, greeting in greetings if greeting is not None])
    document = json_document(plain.config)
    # a first listing waits for the upstreams this long at most, in the runtime too (face.listWaitSeconds)
    return answer_listing_ahead(ahead, inputs, min(list_wait_seconds(document), start_seconds(document)))
