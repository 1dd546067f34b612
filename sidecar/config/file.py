"""The config file on disk: its bytes, a missing or empty file named as such (with the
commands that make one), and where the sidecar keeps what it learns (server health,
approved tools, sign-in tokens) when the config does not name a folder (`data.folder`).

Beside the config file when the file is the user's own. A config that lives inside an
installed package (the bundled examples, anything under site-packages) is not the user's:
its state goes to the user's state folder, `$XDG_STATE_HOME/omb-sidecar/<config name>`
(else `~/.local/state/omb-sidecar/<config name>`), so nothing is ever written beside the
installed code. Nothing here creates a file or a folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from sidecar.errors import ConfigError
from sidecar.settings import Settings, process_settings

__all__ = ["empty_config_words", "inside_a_package", "missing_config_words", "packaged_state_folder",
           "read_config_bytes", "user_state_folder"]

_PACKAGE_FOLDERS = ("site-packages", "dist-packages")
# The folder holding the sidecar's own packages (the checkout, or site-packages).
_CODE_ROOT = Path(__file__).resolve().parents[2]
_OWN_PACKAGES = ("sidecar", "sidecar_admin", "shims")


def user_state_folder(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_STATE_HOME/omb-sidecar`, else `~/.local/state/omb-sidecar` (the XDG default),
    as `sidecar.settings` read it (from `environ` when given)."""
    return (process_settings() if environ is None else Settings.read(environ)).state_dir


def inside_a_package(path: str | Path) -> bool:
    """True for a file under site-packages, or inside the sidecar's own package folders."""
    real = Path(os.path.realpath(Path(path).expanduser()))
    if any(part in _PACKAGE_FOLDERS for part in real.parts):
        return True
    return any(real.is_relative_to(_CODE_ROOT / name) for name in _OWN_PACKAGES)


def packaged_state_folder(source: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The state folder for a config read from `source` when that file sits inside a
    package; None when it is the user's own (its state stays beside it)."""
    if not inside_a_package(source):
        return None
    return str(user_state_folder(environ) / Path(source).stem)


def read_config_bytes(path: str | Path) -> bytes:
    """The file's bytes; a missing file is named as missing, with the commands that make one."""
    try:
        return Path(path).expanduser().read_bytes()
    except FileNotFoundError:
        raise ConfigError("", missing_config_words(path)) from None
    except OSError as exc:
        raise ConfigError("", f"cannot read config file {path}: {exc.strerror}") from None


def missing_config_words(path: str | Path) -> str:
    return (f"the config file {path} does not exist (make one with `omb-sidecar import --config {path}` "
            f"or `omb-sidecar add --config {path} ...`)")


def empty_config_words(path: str | Path) -> str:
    return (f"the config file {path} is empty (write {{\"mcpServers\": {{}}}} in it, or add servers with "
            f"`omb-sidecar add --config {path} ...`)")
