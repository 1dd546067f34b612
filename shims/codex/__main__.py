"""`python -m shims.codex`: launch Codex with the sidecar (see `shims.cli`)."""

from __future__ import annotations

import argparse
from typing import Any

from shims.cli import shim_main
from shims.codex.launch import CodexOptions, prepare_codex
from shims.launch import Launch


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--signin", choices=["api", "chatgpt"], default="api", help="how Codex signs in")
    parser.add_argument("--approve", action="append", default=[], help="a server whose tools are approved (repeatable)")
    parser.add_argument("--codex", default="codex", help="the codex executable")
    parser.add_argument("--list-wait", type=float, default=10.0, help="seconds the first tools/list may wait")


def _prepare(settings: dict[str, Any], args: argparse.Namespace, engine_args: list[str]) -> Launch:
    options = CodexOptions(args=engine_args, signin=args.signin, approved_servers=args.approve,
                           executable=args.codex, sidecar=args.sidecar, list_wait_seconds=args.list_wait)
    return prepare_codex(settings, options)


if __name__ == "__main__":
    raise SystemExit(shim_main("shims.codex", _options, _prepare))
