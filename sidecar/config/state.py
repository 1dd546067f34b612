"""Where the sidecar keeps what it learns (server health, sign-in tokens) when the config
does not name a folder (`data.folder`).

Beside the config file when the file is the user's own. A config that lives inside an
installed package (the bundled examples, anything under site-packages) is not the user's:
its state goes to the user's state folder, `$XDG_STATE_HOME/omb-sidecar/<config name>`
(else `~/.local/state/omb-sidecar/<config name>`), so nothing is ever written beside the
installed code. Pure path arithmetic: nothing here creates a folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["inside_a_package", "packaged_state_folder", "user_state_folder"]

_PACKAGE_FOLDERS = ("site-packages", "dist-packages")
# The folder holding the sidecar's own packages (the checkout, or site-packages).
_CODE_ROOT = Path(__file__).resolve().parents[2]
_OWN_PACKAGES = ("sidecar", "sidecar_admin", "shims")


def user_state_folder(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_STATE_HOME/omb-sidecar`, else `~/.local/state/omb-sidecar` (the XDG default)."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_STATE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path(environ.get("HOME") or Path.home()) / ".local" / "state"
    return root / "omb-sidecar"


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
