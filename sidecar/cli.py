"""`omb-sidecar`: argv -> config -> the app.

  omb-sidecar --config PATH                  serve one engine over stdio (the default front)
  omb-sidecar --config PATH --http H:P ...   serve Streamable HTTP on loopback
  omb-sidecar --examples [--http H:P ...]    serve the bundled example servers (no config file)
  omb-sidecar --version                      the installed version (from the package metadata)
  omb-sidecar demo                           run the bundled example, show what an engine sees
  omb-sidecar add|import|check|servers ...   bring your own servers (see `omb-sidecar add -h`)
  omb-sidecar signin|signout NAME ...        sign a URL server in with a browser (OAuth), or out

`omb-sidecar --help` lists every command (the table `COMMANDS`); run with nothing at all
from a terminal, it prints that help rather than wait for an engine on stdin.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Coroutine, Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from sidecar.lean_libraries import load_libraries_lean

load_libraries_lean()  # first: before anything below imports msgspec (start-up, issue 23)

from sidecar.config import SidecarConfig, load_config
from sidecar.errors import ConfigError
from sidecar.features import installed, log_missing, missing_module_words
from sidecar.logs import setup_logging
from sidecar.redact import Redactor
from sidecar.settings import Settings, process_settings, use_settings

if TYPE_CHECKING:
    import argparse

    from sidecar.front.gateway import WatchHealth
    from sidecar.front.http.console_door import MountConsole
    from sidecar.front.http.listener import FrontSettings
    from sidecar.wire.hello import Early
    from sidecar.wire.plain_hello import Ahead

__all__ = ["main", "setup_logging", "run_async"]

SERVER_COMMANDS = ("add", "import", "check", "servers", "signin", "signout")
# Every command, one line each: `omb-sidecar --help` prints this table.
COMMANDS = (
    ("serve", "serve one engine over stdio, or Streamable HTTP with --http (the default command)"),
    ("demo", "run the bundled example servers and show a scripted engine session"),
    ("add", "import servers from a paste (arguments or stdin); they come in off"),
    ("import", "bring in the servers Claude Code, Claude Desktop, Cursor, Gemini CLI and Codex use"),
    ("check", "test one server (\"Connected: 12 tools\", or why not); a pass turns it on"),
    ("servers", "list, show, edit, switch off or remove servers; run their health checks"),
    ("signin", "sign a URL server in with a browser (OAuth); --paste from another computer"),
    ("signout", "revoke a URL server's sign-in tokens where it offers that, then forget them"),
)
SERVE_EXAMPLE = "example:\n  omb-sidecar --config sidecar.json --http 127.0.0.1:8765 --token-file ~/.omb-token"
DESCRIPTION = "An MCP proxy beside an AI agent engine."
DEMO_EXAMPLE = "example:\n  omb-sidecar demo"


def _command_table() -> str:
    width = max(len(name) for name, _ in COMMANDS)
    rows = "\n".join(f"  {name.ljust(width)}  {said}" for name, said in COMMANDS)
    return f"commands (`omb-sidecar COMMAND --help` for each):\n{rows}"


def package_version() -> str:
    """The installed distribution's version; the source's own when run from a checkout that
    was never installed. Read only when asked: the metadata costs start-up time."""
    from importlib import metadata

    try:
        return metadata.version("omb-sidecar")
    except metadata.PackageNotFoundError:
        from sidecar import __version__

        return f"{__version__} (not installed)"


@functools.cache
def _parser_classes() -> tuple[type[argparse.ArgumentParser], type[argparse.Action]]:
    """The top-level parser (its help names the version, read only when the help is shown)
    and the `--version` action; argparse loads here, not for a plain `--config PATH` start."""
    import argparse

    class ServeParser(argparse.ArgumentParser):
        def format_help(self) -> str:
            self.description = f"omb-sidecar {package_version()}: {DESCRIPTION}\n\n{_command_table()}"
            return super().format_help()

    class VersionAction(argparse.Action):
        def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                     option_string: str | None = None) -> None:
            sys.stdout.write(f"omb-sidecar {package_version()}\n")
            parser.exit()

    return ServeParser, VersionAction


def _serve_parser(settings: Settings | None = None) -> argparse.ArgumentParser:
    import argparse

    settings = settings or process_settings()
    serve_parser, version_action = _parser_classes()
    parser = serve_parser(
        prog="omb-sidecar",
        usage="omb-sidecar [serve] --config PATH [--http HOST:PORT --token-file FILE]\n"
              "       omb-sidecar [serve] --examples [--http HOST:PORT --token-file FILE]\n"
              "       omb-sidecar COMMAND [options]",
        epilog=SERVE_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("command", nargs="?", choices=["serve", "demo"], default="serve", help=argparse.SUPPRESS)
    parser.add_argument("--version", nargs=0, action=version_action, help="print the version and stop")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--config", help="the sidecar's JSON config file")
    source.add_argument("--examples", action="store_true",
                        help="serve the bundled example servers (no config file; state goes to "
                             "$XDG_STATE_HOME/omb-sidecar)")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP instead of stdio")
    parser.add_argument("--token-file", help="file holding the HTTP bearer token")
    parser.add_argument("--token-env", metavar="NAME", help="environment variable holding the HTTP bearer token")
    parser.add_argument("--allow-remote", action="store_true", help="allow a non-loopback HTTP bind address")
    parser.add_argument(
        "--log-level",
        default=settings.log_level,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="stderr log level (default WARNING, or $OMB_LOG_LEVEL)",
    )
    return parser


def run_async(factory: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run a coroutine factory on asyncio, with uvloop where it is installed."""
    try:
        import uvloop
    except ImportError:
        import asyncio

        asyncio.run(factory())
    else:
        uvloop.run(factory())


def _load(path: str, settings: Settings) -> SidecarConfig | None:
    try:
        return load_config(path, settings.environ)
    except ConfigError as exc:
        print(f"omb-sidecar: config error: {exc.message}", file=sys.stderr)
        return None


def _examples(settings: Settings) -> SidecarConfig:
    """The bundled example config, its servers' paths resolved inside the installed package;
    what it learns goes to the user's state folder, never beside the package."""
    from sidecar.config import parse_config, placed
    from sidecar.examples.demo import HERE, demo_config

    return placed(parse_config(demo_config(), settings.environ), str(HERE / "demo.json"))


def _demo_parser(settings: Settings | None = None) -> argparse.ArgumentParser:
    import argparse

    settings = settings or process_settings()
    parser = argparse.ArgumentParser(
        prog="omb-sidecar demo", epilog=DEMO_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Start the sidecar on the bundled example servers (standard library only) and play\n"
                    "an engine: what it sees, calls going through, a large result shaped and then queried.",
    )
    parser.add_argument("command", choices=["demo"], help=argparse.SUPPRESS)
    parser.add_argument("--log-level", default=settings.log_level,
                        choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="stderr log level")
    return parser


def _stdin_is_a_terminal() -> bool:
    try:
        return os.isatty(sys.stdin.fileno())
    except (AttributeError, OSError, ValueError):
        return False


def _health_schedule(config: SidecarConfig) -> WatchHealth | None:
    """The health schedule for the HTTP front, only when `health.schedule` is set: the
    admin package loads here, never on the proxy's own path."""
    if not config.health.schedule:
        return None
    from sidecar_admin.health_schedule import HealthSchedule

    return HealthSchedule


def _console(config: SidecarConfig) -> MountConsole | None:
    """The operator's page for the HTTP front, only when `console.enabled` is set: its
    modules (in the admin package) load here, never otherwise."""
    if not config.console.enabled:
        return None
    from sidecar_admin.console import mount_console

    return mount_console


def _answer_waiting_initialize(upstreams: int, tracing: bool, ahead: Ahead | None = None) -> Early | None:
    """Answer the engine's `initialize` now if it is already waiting on stdin (a pipe or a
    socket), before the rest of the sidecar loads: an engine's start-up waits on that answer.
    None when nothing was read (the stdio front reads it all). Not with tracing on: the
    dispatcher's answer is the one traced. `ahead`: what the entry point read before this
    module loaded; when it answered already, the session's `Hello` is read from the same
    bytes and nothing is written again."""
    from sidecar.stdin_ahead import read_waiting, write_whole

    if ahead is not None and ahead.answered:
        return _answered_ahead(ahead.read, upstreams)
    before = ahead.read if ahead is not None else b""  # declined by the entry point's reader: judged again here
    waiting = None if tracing else read_waiting()
    if waiting is None and not before:
        return None
    from sidecar.wire.hello import Early, answer_waiting, starting_capabilities

    if tracing:
        return Early(None, before)
    early, answer = answer_waiting(before + (waiting or b""), starting_capabilities(upstreams))
    write_whole(answer)
    return early


def _answered_ahead(read: bytes, upstreams: int) -> Early:
    """The session's `Hello` for the `initialize` the entry point answered, read by the one
    answer function from the same bytes (a test holds both answers to the same bytes)."""
    from sidecar.wire.hello import Early, answer_waiting, starting_capabilities

    early, _ = answer_waiting(read, starting_capabilities(upstreams))
    if early.hello is None or not upstreams:  # never, while the test holds: say it, answer nothing twice
        import logging

        logging.getLogger(__name__).warning("the early initialize answer was not the dispatcher's (upstreams: %d)",
                                            upstreams)
        return Early(early.hello, read[read.find(b"\n") + 1:])
    return early


def _plain_serve(argv: Sequence[str], settings: Settings) -> SimpleNamespace | None:
    """`[serve] --config PATH`, the way every engine starts the sidecar, read without
    argparse (building the parser costs start-up time): what `_serve_parser` would
    return for it. None for anything else, which the parser reads."""
    from sidecar.upstream.plain_config import plain_config_path

    path = plain_config_path(argv)
    if path is None:
        return None
    return SimpleNamespace(command="serve", version=None, config=path, examples=False, http=None,
                           token_file=None, token_env=None, allow_remote=False, log_level=settings.log_level)


def main(argv: Sequence[str] | None = None, ahead: Ahead | None = None) -> int:
    """Run the command `argv` names. An upstream the entry point started early and that no
    supervisor adopted (the config was invalid, the command did not serve) is stopped on
    the way out. `ahead`: what the entry point read of stdin (and perhaps answered)."""
    try:
        return _main(list(sys.argv[1:] if argv is None else argv), ahead)
    finally:
        if "sidecar.upstream.spawn" in sys.modules:  # loaded by any early start
            from sidecar.upstream.spawn import discard_early

            discard_early()


def _main(argv: list[str], ahead: Ahead | None = None) -> int:
    if argv and argv[0] in SERVER_COMMANDS:
        from sidecar_admin.commands import main as servers_main

        return servers_main(argv)
    settings = use_settings(Settings.read())  # the environment, read once: everything below is given it
    if not argv and _stdin_is_a_terminal():
        sys.stdout.write(_serve_parser(settings).format_help())  # a person typed it: no engine will write to stdin
        return 0
    plain = _plain_serve(argv, settings)
    if plain is not None:
        args: argparse.Namespace | SimpleNamespace = plain
    else:
        parser = _demo_parser(settings) if argv and argv[0] == "demo" else _serve_parser(settings)
        args = parser.parse_args(argv)
    redactor = Redactor()
    setup_logging(args.log_level, redactor)
    if args.command == "demo":
        from sidecar.examples.demo import run_demo

        return run_demo()
    if not args.config and not args.examples:
        print("omb-sidecar: --config PATH is required (or `--examples` to serve the bundled example servers, or "
              "`omb-sidecar demo`; `omb-sidecar --help` lists every command)", file=sys.stderr)
        return 2
    config = _examples(settings) if args.examples else _load(args.config, settings)
    if config is None:
        return 2
    redactor.add(config.secrets())
    if args.http and not installed("aiohttp"):
        print(f"omb-sidecar: {missing_module_words('--http', 'aiohttp')}", file=sys.stderr)
        return 2
    try:
        early = None
        if not args.http:
            from sidecar.mounts.plan import mountable
            from sidecar.mounts.reach import reaches
            from sidecar.upstream.spawn import keep_early, start_early, started_early

            config = mountable(config)
            reached = [s for s in config.servers if reaches(config, s.alias)]
            keep_early(reached)  # what the entry point started that the plan leaves out stops now
            # their start-up overlaps the rest of ours; what the bot cannot reach never starts
            start_early(reached, config.face.start_timeout_seconds)
            # a command that could not start is no upstream "still starting" to the handshake
            early = _answer_waiting_initialize(sum(s.type != "stdio" or started_early(s) for s in reached),
                                               settings.tracing, ahead)
        log_missing()  # after the early answer: asking the import system costs start-up time
        from sidecar.mounts.health import record_start
        from sidecar.upstream.oauth import where

        where.use(config, redactor)  # a signed-in URL server's tokens join the redactor when read
        where.keep_refusals(record_start)  # a refused sign-in leaves the server out of the next start
        from sidecar.collector import settle_heap

        if args.http:
            from sidecar.app import run_http

            front = _http_settings(args, settings)
            watch_health = _health_schedule(config)
            settle_heap(settings.malloc_tuned)
            console = _console(config)
            run_async(lambda: run_http(config, front, redactor, settings, watch_health, console))
        else:
            from sidecar.loop import load_without_openssl

            load_without_openssl(config, settings)  # first: before anything loads asyncio (issue 23, idle RSS)
            from sidecar.app import run_stdio

            settle_heap(settings.malloc_tuned)
            listed = ahead.listed if ahead is not None else None  # keyed only for a plain start
            run_async(lambda: run_stdio(config, redactor, settings, early, listed))
    except KeyboardInterrupt:
        pass
    except ModuleNotFoundError as exc:  # a broken install: one line, not a traceback
        print(f"omb-sidecar: {missing_module_words('omb-sidecar', exc.name)}", file=sys.stderr)
        return 1
    return 0


def _http_settings(args: argparse.Namespace | SimpleNamespace, settings: Settings) -> FrontSettings:
    """The HTTP front's settings from the command line; a refusal ends the process in words."""
    from sidecar.front.http.listener import FrontSettings, GuardError

    try:
        return FrontSettings.chosen(args.http, allow_remote=bool(args.allow_remote), token_file=args.token_file,
                                    token_env=args.token_env, settings=settings)
    except GuardError as exc:
        raise SystemExit(f"omb-sidecar: {exc}") from None
