"""`python -m shims.claude`: launch Claude Code with the sidecar (see `shims.cli`)."""

from __future__ import annotations

import argparse
from typing import Any

from shims.claude.launch import ClaudeOptions, prepare_claude
from shims.cli import shim_main
from shims.launch import Launch


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--folder", help="the turn's folder (default: the home folder)")
    parser.add_argument("--tools", action="append", default=[], help="a --tools entry for the CLI (repeatable)")
    parser.add_argument("--disallowed-tools", action="append", default=[], help="a --disallowedTools entry (repeatable)")
    parser.add_argument("--inherit-user-config", action="store_true", help="also use this machine's Claude Code setup")
    parser.add_argument("--claude", default="claude", help="the claude executable")
    parser.add_argument("--list-wait", type=float, default=10.0, help="seconds the first tools/list may wait")


def _prepare(settings: dict[str, Any], args: argparse.Namespace, engine_args: list[str]) -> Launch:
    options = ClaudeOptions(
        args=engine_args, tools=args.tools, disallowed_tools=args.disallowed_tools, folder=args.folder,
        inherit_user_config=args.inherit_user_config, executable=args.claude, sidecar=args.sidecar,
        list_wait_seconds=args.list_wait,
    )
    return prepare_claude(settings, options)


if __name__ == "__main__":
    raise SystemExit(shim_main("shims.claude", _options, _prepare))
