"""Engine launchers: a bot's settings in, an engine command line with the sidecar wired in out.

One subpackage per engine (`shims.claude`, `shims.codex`, `shims.pi`). Each turns the
bot's settings (a document in the sidecar's config shape, SPEC §8) and the engine's own
arguments into a `Launch`: the engine's argv and environment, and a private folder holding
the files written for the turn (the sidecar config, the engine's MCP registration). A
secret never goes on argv: it lives in those 0600 files or in the child's environment.

The shims depend on the sidecar's command-line contract (`omb-sidecar --config PATH` and
the config keys), never on its internals.
"""

from shims.launch import Launch, run_launch, sidecar_command

__all__ = ["Launch", "run_launch", "sidecar_command"]
