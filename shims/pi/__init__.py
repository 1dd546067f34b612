"""pi's shim: the face's tools through one TypeScript extension (`omb-sidecar.ts`), never bridged.

    python -m shims.pi --settings BOT.json [--pi PATH] [--url URL --token-file F] [--dry-run] -- PI ARGS...
"""

from shims.pi.launch import EXTENSION, LAUNCH_VARIABLE, PiOptions, prepare_pi

__all__ = ["EXTENSION", "LAUNCH_VARIABLE", "PiOptions", "prepare_pi"]
