"""One gateway, many bots: the config each bot's face is built from.

Owns the cut of a gateway config for one bot: the servers it may mount (every shared
entry, and the entries marked `"bot": "<its id>"`), each with that bot's own env and
header values merged in (`perBot.<id>`; another bot's values are dropped, never merged),
its own bot settings, and its own health records (`<data>/bots/<id>/`). In boxed mode
(`gateway.boxRoot`), a command whose command, arguments, environment or working folder
reach into another bot's folder is refused for this bot, with the reason; the face
leaves it out and says so.

Refuses: a bot id that is not a valid name, a token variable that is missing or empty.
Nothing here starts a process; links are resolved to judge a path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

from sidecar.config import Data, GatewayBot, ServerConfig, SidecarConfig, rules
from sidecar.errors import ConfigError

__all__ = ["bot_token", "for_bot", "foreign_folder"]


def for_bot(config: SidecarConfig, bot: GatewayBot) -> SidecarConfig:
    """The config of `bot`'s face: its servers with its values, its health folder."""
    rules.check_name(bot.id, f"gateway.bots.{bot.id}")
    others = [b.id for b in config.gateway.bots if b.id != bot.id]
    servers: list[ServerConfig] = []
    skipped = list(config.skipped)
    for server in config.servers:
        if server.bot is not None and server.bot != bot.id:
            continue
        mine = _with_values_of(server, bot.id)
        refusal = foreign_folder(mine, config.gateway.box_root, others)
        if refusal is None:
            servers.append(mine)
        else:
            skipped.append((server.alias, refusal))
    return msgspec.structs.replace(config, bot=bot.as_bot(), servers=tuple(servers), skipped=tuple(skipped),
                                   data=Data(folder=str(_data_folder(config) / "bots" / bot.id)))


def _with_values_of(server: ServerConfig, bot: str) -> ServerConfig:
    values = server.per_bot.get(bot)
    env = {**server.env, **values.env} if values else dict(server.env)
    headers = {**server.headers, **values.headers} if values else dict(server.headers)
    return msgspec.structs.replace(server, env=env, headers=headers, per_bot={})


def foreign_folder(server: ServerConfig, box_root: str | None, others: list[str]) -> str | None:
    """Why `server` may not start for this bot (it reaches another bot's folder), or None."""
    if box_root is None or server.type != "stdio":
        return None
    root = os.path.realpath(box_root)
    for path in rules.paths_in(server.command, server.args, server.env, server.cwd):
        owner = rules.folder_owner(os.path.realpath(path), root, others)
        if owner is not None:
            return "its command, arguments, environment or working folder use another bot's folder (boxed mode)"
    return None


def _data_folder(config: SidecarConfig) -> Path:
    if config.data.folder:
        return Path(config.data.folder).expanduser()
    if config.source:
        return Path(config.source).resolve().parent
    return Path.cwd()


def bot_token(bot: GatewayBot, environ: Mapping[str, str]) -> str:
    """The bot's bearer from its variable; at least 16 characters."""
    token = environ.get(bot.token_env, "")
    if len(token) < 16:
        raise ConfigError(f"gateway.bots.{bot.id}.tokenEnv",
                          f"the variable {bot.token_env} must hold this bot's bearer token (16 characters or more)")
    return token
