"""The shims' shared command line: read the bot's settings, prepare the launch, run it.

    python -m shims.<engine> --settings BOT.json [engine options] [--dry-run] -- ENGINE ARGS...

`--settings` is a JSON document in the sidecar's config shape (SPEC §8). `--dry-run`
prints the launch (argv, the names of the environment variables set for the engine, the
files it would write) as JSON and leaves nothing behind (the turn's folder is removed even
when the reader stops early); otherwise the engine runs and the exit
code is the engine's. Secrets are never printed: the environment is shown by name only.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from shims.launch import Launch, run_launch

__all__ = ["shim_main"]

Prepare = Callable[[dict[str, Any], argparse.Namespace, list[str]], Launch]


def _parser(prog: str, add_options: Callable[[argparse.ArgumentParser], None]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=f"Launch an engine with omb-sidecar wired in ({prog}).")
    parser.add_argument("--settings", required=True, help="the bot's settings: a sidecar config document (JSON)")
    parser.add_argument("--sidecar", help="the sidecar's command, as a JSON array (default: omb-sidecar)")
    parser.add_argument("--timeout", type=float, help="stop the engine after this many seconds")
    parser.add_argument("--dry-run", action="store_true", help="print the launch as JSON instead of running it")
    add_options(parser)
    return parser


def _describe(launch: Launch) -> dict[str, Any]:
    return {
        "argv": launch.argv,
        "env_names": sorted(launch.env),
        "cwd": launch.cwd,
        "sidecar_config": str(launch.sidecar_config),
        "notes": list(launch.notes),
    }


def shim_main(prog: str, add_options: Callable[[argparse.ArgumentParser], None], prepare: Prepare,
              argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    engine_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, engine_args = argv[:cut], argv[cut + 1:]
    args = _parser(prog, add_options).parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format=f"{prog} %(levelname)s: %(message)s")
    settings = json.loads(Path(args.settings).read_text())
    if args.sidecar:
        args.sidecar = json.loads(args.sidecar)
    launch = prepare(settings, args, engine_args)
    if args.dry_run:
        return _dry_run(launch)
    return run_launch(launch, args.timeout)


def _dry_run(launch: Launch) -> int:
    """Print the launch, then remove every file it wrote, whatever happens to the printing
    (a reader that stops early, `| head`, must not leave the turn's folder behind)."""
    try:
        sys.stdout.write(json.dumps(_describe(launch), indent=1) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush must not fail again
    finally:
        launch.cleanup()
    return 0
