"""The on-disk cache of tool vectors, so that a restart with the same catalog embeds nothing.

Owns where the cache lives (`OMB_SIDECAR_CACHE_DIR`, else `$XDG_CACHE_HOME/omb-sidecar`,
else `~/.cache/omb-sidecar`; vectors under `vectors/`), its permissions (the folder 0700,
files 0600: tool texts of private servers shape the keys), and its format: one file per
model version, a msgpack map from a tool's key (a hash of the text the model embeds, which
the tool's definition determines, and of the model version) to the vector's float32 bytes.
Writes are atomic (a temporary file renamed over the old one); a broken or unreadable file
counts as empty. Bounded: past `MAX_VECTORS` the oldest entries are dropped.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from pathlib import Path

import msgspec

from sidecar.settings import process_settings

__all__ = ["MAX_VECTORS", "VectorCache", "cache_dir", "tool_key"]

MAX_VECTORS = 50_000


def cache_dir() -> Path:
    """The sidecar's cache folder (configurable with OMB_SIDECAR_CACHE_DIR; read once, by
    `sidecar.settings`)."""
    return process_settings().cache_dir


def tool_key(model_version: str, text: str) -> str:
    return hashlib.sha256(f"{model_version}\0{text}".encode()).hexdigest()[:32]


def _safe_name(model_version: str) -> str:
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in model_version)[:80] + ".vec"


class VectorCache:
    """Vectors by key for one model version, loaded on first use, saved on `save`."""

    def __init__(self, model_version: str, directory: Path | None = None) -> None:
        self.path = (directory or cache_dir() / "vectors") / _safe_name(model_version)
        self._lock = threading.Lock()
        self._vectors: dict[str, bytes] | None = None
        self._dirty = False

    def _loaded(self) -> dict[str, bytes]:
        if self._vectors is None:
            try:
                raw = self.path.read_bytes()
                found = msgspec.msgpack.decode(raw, type=dict[str, bytes])
            except (OSError, msgspec.DecodeError, msgspec.ValidationError):
                found = {}
            self._vectors = found
        return self._vectors

    def get(self, keys: list[str]) -> dict[str, bytes]:
        with self._lock:
            vectors = self._loaded()
            return {k: vectors[k] for k in keys if k in vectors}

    def put(self, found: dict[str, bytes]) -> None:
        if not found:
            return
        with self._lock:
            vectors = self._loaded()
            vectors.update(found)
            for key in list(vectors)[: max(len(vectors) - MAX_VECTORS, 0)]:
                del vectors[key]
            self._dirty = True

    def save(self) -> bool:
        """Write the cache if it changed; False when it could not be written (search goes on)."""
        with self._lock:
            if not self._dirty or self._vectors is None:
                return True
            body = msgspec.msgpack.encode(self._vectors)
            try:
                self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                os.chmod(self.path.parent, 0o700)
                handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".vec-")
                try:
                    with os.fdopen(handle, "wb") as out:  # mkstemp makes it 0600
                        out.write(body)
                    os.replace(temporary, self.path)
                except BaseException:
                    os.unlink(temporary)
                    raise
            except OSError:
                return False
            self._dirty = False
            return True
