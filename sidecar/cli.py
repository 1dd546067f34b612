"""`omb-sidecar`: argv -> config -> the app.

  omb-sidecar --config PATH                  serve one engine over stdio (the default front)
  omb-sidecar --config PATH --http H:P ...   serve Streamable HTTP on loopback
  omb-sidecar demo                           run the bundled example, show what an engine sees
  omb-sidecar add|check|servers ...          bring your own servers (see `omb-sidecar add -h`)
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from sidecar.config import SidecarConfig, load_config
from sidecar.errors import ConfigError
from sidecar.redact import RedactingFilter, Redactor

__all__ = ["main", "setup_logging", "run_async"]

SERVER_COMMANDS = ("add", "check", "servers")


def _serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="omb-sidecar", description="An MCP proxy beside an AI agent engine.")
    parser.add_argument("command", nargs="?", choices=["serve", "demo"], default="serve")
    parser.add_argument("--config", help="the sidecar's JSON config file")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP instead of stdio")
    parser.add_argument("--token-file", help="file holding the HTTP bearer token")
    parser.add_argument("--token-env", metavar="NAME", help="environment variable holding the HTTP bearer token")
    parser.add_argument("--allow-remote", action="store_true", help="allow a non-loopback HTTP bind address")
    parser.add_argument(
        "--log-level",
        default=os.environ.get("OMB_LOG_LEVEL", "WARNING"),
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="stderr log level (default WARNING, or $OMB_LOG_LEVEL)",
    )
    return parser


def setup_logging(level: str, redactor: Redactor) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("omb-sidecar %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter(redactor))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def run_async(factory: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run a coroutine factory on asyncio, with uvloop where it is installed."""
    try:
        import uvloop
    except ImportError:
        import asyncio

        asyncio.run(factory())
    else:
        uvloop.run(factory())


def _load(path: str) -> SidecarConfig | None:
    try:
        return load_config(path)
    except ConfigError as exc:
        print(f"omb-sidecar: config error: {exc.message}", file=sys.stderr)
        return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SERVER_COMMANDS:
        from sidecar.servers.commands import main as servers_main  # type: ignore[import-not-found,unused-ignore]

        return int(servers_main(argv))
    args = _serve_parser().parse_args(argv)
    redactor = Redactor()
    setup_logging(args.log_level, redactor)
    if args.command == "demo":
        from sidecar.examples.demo import run_demo

        return run_demo()
    if not args.config:
        print("omb-sidecar: --config PATH is required (or run `omb-sidecar demo`)", file=sys.stderr)
        return 2
    config = _load(args.config)
    if config is None:
        return 2
    redactor.add(config.secrets())
    try:
        if not args.http:
            from sidecar.servers.health import mountable
            from sidecar.upstream.spawn import start_early

            config = mountable(config)
            start_early(config.servers)  # their start-up overlaps the rest of ours
        if args.http:
            from sidecar.app import run_http

            run_async(lambda: run_http(config, args, redactor))
        else:
            from sidecar.app import run_stdio

            run_async(lambda: run_stdio(config, redactor))
    except KeyboardInterrupt:
        pass
    return 0
