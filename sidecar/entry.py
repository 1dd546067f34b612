"""The `omb-sidecar` command's entry point, and `python -m sidecar`'s.

Owns the order of the first milliseconds: the stdio upstreams a plain `--config PATH`
start names are launched first (`sidecar.upstream.plain_config`, standard library only),
then the CLI loads and reads the command line as it always did.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> int:
    from sidecar.upstream.plain_config import start_named_in

    start_named_in(sys.argv[1:])
    from sidecar.cli import main as cli_main

    return cli_main()
