"""`omb-sidecar`: argv -> config -> the app.

  omb-sidecar --config PATH      serve one engine over stdio (the default front)
  omb-sidecar demo               run the bundled example and show what an engine sees
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from sidecar.config import load_config
from sidecar.errors import ConfigError
from sidecar.redact import RedactingFilter, Redactor

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="omb-sidecar", description="An MCP proxy beside an AI agent engine.")
    parser.add_argument("command", nargs="?", choices=["serve", "demo"], default="serve")
    parser.add_argument("--config", help="the sidecar's JSON config file")
    parser.add_argument(
        "--log-level",
        default=os.environ.get("OMB_LOG_LEVEL", "WARNING"),
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="stderr log level (default WARNING, or $OMB_LOG_LEVEL)",
    )
    return parser


def _setup_logging(level: str, redactor: Redactor) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("omb-sidecar %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter(redactor))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def _run(coroutine_factory: object) -> None:
    import anyio

    try:
        import uvloop  # noqa: F401

        options = {"use_uvloop": True}
    except ImportError:
        options = {}
    anyio.run(coroutine_factory, backend="asyncio", backend_options=options)  # type: ignore[arg-type]


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    redactor = Redactor()
    _setup_logging(args.log_level, redactor)
    if args.command == "demo":
        from sidecar.examples.demo import run_demo

        return run_demo()
    if not args.config:
        print("omb-sidecar: --config PATH is required (or run `omb-sidecar demo`)", file=sys.stderr)
        return 2
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"omb-sidecar: config error: {exc.message}", file=sys.stderr)
        return 2
    redactor.add(config.secrets())
    from sidecar.app import run_stdio

    try:
        _run(lambda: run_stdio(config, redactor))
    except KeyboardInterrupt:
        pass
    return 0
