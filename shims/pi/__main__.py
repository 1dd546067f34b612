"""`python -m shims.pi`: launch pi with the sidecar's extension (see `shims.cli`)."""

from __future__ import annotations

import argparse
from typing import Any

from shims.cli import shim_main
from shims.launch import Launch
from shims.pi.launch import PiOptions, prepare_pi


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pi", default="pi", help="the pi executable")
    parser.add_argument("--list-wait", type=float, default=10.0, help="seconds the first tools/list may wait")
    parser.add_argument("--url", help="reach a sidecar serving Streamable HTTP here instead of starting one")
    parser.add_argument("--token-file", help="the file holding that sidecar's bearer token")


def _prepare(settings: dict[str, Any], args: argparse.Namespace, engine_args: list[str]) -> Launch:
    options = PiOptions(args=engine_args, executable=args.pi, sidecar=args.sidecar, list_wait_seconds=args.list_wait,
                        url=args.url, token_file=args.token_file)
    return prepare_pi(settings, options)


if __name__ == "__main__":
    raise SystemExit(shim_main("shims.pi", _options, _prepare))
