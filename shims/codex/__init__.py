"""Codex CLI's shim: the sidecar registered by `-c` overrides, never bridged.

    python -m shims.codex --settings BOT.json [--signin api|chatgpt] [--approve ALIAS]
                          [--codex PATH] [--dry-run] -- CODEX ARGS...
"""

from shims.codex.dedupe import (
    drop_running,
    running_signatures,
    server_signature,
    user_config_path,
)
from shims.codex.launch import (
    FORWARDED_VARIABLES,
    CodexOptions,
    prepare_codex,
    toml_value,
)

__all__ = [
    "FORWARDED_VARIABLES",
    "CodexOptions",
    "drop_running",
    "prepare_codex",
    "running_signatures",
    "server_signature",
    "toml_value",
    "user_config_path",
]
