"""The Reference page names every command, every option and every config key.

The commands and options come from the CLI's own parsers (the serve/demo parser of
`sidecar/cli.py` and the admin parser of `sidecar_admin/commands.py`, walked down every
subcommand); the config keys from the msgspec types of `sidecar/config`. A command or key
added to the code without a line in the docs fails here.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import msgspec

from sidecar import cli
from sidecar import config as config_types
from sidecar_admin import commands

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference.md"


def _page() -> str:
    return REFERENCE.read_text()


def _subcommands(parser: argparse.ArgumentParser, prefix: str) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _subcommands(sub, f"{prefix} {name}")


def _all_parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    found = list(_subcommands(commands._parser(), "omb-sidecar"))[1:]  # the bare admin root is no command
    return [("omb-sidecar serve", cli._serve_parser()), ("omb-sidecar demo", cli._demo_parser()), *found]


def test_every_command_of_the_cli_is_on_the_reference_page() -> None:
    page = _page()
    named = [name for name, _ in cli.COMMANDS] + [command.split(" ", 1)[1] for command, _ in _all_parsers()]
    assert [name for name in named if f"omb-sidecar {name}" not in page and f"omb-sidecar [{name}]" not in page] == []


def test_every_option_of_the_cli_is_on_the_reference_page() -> None:
    page = _page()
    missing = [f"{command} {option}" for command, parser in _all_parsers() for action in parser._actions
               for option in action.option_strings
               if option.startswith("--") and option != "--help" and option not in page]
    assert missing == []


def _keys(struct: type[msgspec.Struct]) -> Iterator[tuple[str, type[msgspec.Struct] | None]]:
    for field in msgspec.structs.fields(struct):
        nested = [t for t in _struct_types(field.type)]
        yield field.encode_name, nested[0] if nested else None


def _struct_types(kind: object) -> Iterator[type[msgspec.Struct]]:
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        yield kind
    for arg in getattr(kind, "__args__", ()):
        yield from _struct_types(arg)


def _config_keys(struct: type[msgspec.Struct], prefix: str) -> Iterator[str]:
    for name, nested in _keys(struct):
        path = f"{prefix}.{name}" if prefix else name
        if nested is None:
            yield path
        else:
            yield from _config_keys(nested, path)


def test_every_config_key_is_on_the_reference_page() -> None:
    page = _page()
    sections = [key for section, struct in config_types._SECTIONS.items() for key in _config_keys(struct, section)]
    servers = [key for key in _config_keys(config_types.ServerConfig, "") if key != "alias"]  # alias: the entry's name
    # A key of a list's items (policy.rules[].tool) or a bot map (perBot.<id>.env) is named by its last parts.
    missing = [key for key in sections if not _named(page, key, whole=len(key.split(".")) - 1)]
    missing += [key for key in servers if not _named(page, key, whole=1)]
    assert missing == []


def _named(page: str, key: str, whole: int) -> bool:
    """`a.b.c` is named as `a.b.c` or `b.c` (up to `whole` leading parts may be dropped), or, as
    the key of a list's items or a map's values, its last part quoted in a JSON shape."""
    parts = key.split(".")
    tails = [".".join(parts[i:]) for i in range(min(whole, len(parts)))]
    # a map's key may stand between two parts, as in `perBot.<bot id>.env`
    spelt = [r"\.(<[^>]*>\.)?".join(re.escape(p) for p in tail.split(".")) for tail in tails]
    if any(re.search(rf"`(\S*\.)?{pattern}`", page) for pattern in spelt):
        return True
    return len(parts) > 2 and f'"{parts[-1]}"' in page
