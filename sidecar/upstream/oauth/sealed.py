"""The sealed token file: sign-in tokens kept apart from the config, under AES-GCM.

Owns the file (owner-only, beside the config unless `oauth.tokenFile` says otherwise),
its key (a 0600 key file made on first use, or base64 in the environment variable
`oauth.keyEnv` names), the lock that lets several sidecars share it, and the entries,
one per server's canonical address. Refuses to overwrite a file it cannot open with its
key: that is reported, and the file is left as it is. The configured client secret is
never written here; a secret a server issued at registration is.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import fcntl
import json
import os
import secrets
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

from sidecar.config import SidecarConfig
from sidecar.errors import SidecarError
from sidecar.private_files import warn_if_shared
from sidecar.settings import process_settings

__all__ = ["TOKEN_FILE", "KEY_FILE", "TokenFile", "TokenFileError", "token_file_for", "entry_secrets"]

TOKEN_FILE = "mcp-oauth.json"
KEY_FILE = "mcp-oauth.key"
_FORMAT = "omb-sidecar-tokens/1"
_SECRET_FIELDS = ("accessToken", "refreshToken", "clientSecret")


class TokenFileError(SidecarError):
    """The token file or its key cannot be used; the words say which and what to do."""


def entry_secrets(entry: Mapping[str, Any]) -> list[str]:
    return [str(entry[k]) for k in _SECRET_FIELDS if isinstance(entry.get(k), str) and entry[k]]


class TokenFile:
    """One sealed token file; `edit()` (sync) and `editing()` (async) are the only writers."""

    def __init__(self, path: Path, key_file: Path, key_env: str | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        self.path = path
        self.key_file = key_file
        self.key_env = key_env
        self._environ = process_settings().environ if environ is None else environ

    # -- the key ---------------------------------------------------------------------

    def _key(self, create: bool) -> bytes | None:
        if self.key_env:
            text = self._environ.get(self.key_env, "")
            if not text:
                raise TokenFileError(f"the token key variable {self.key_env} is not set")
            try:
                key = base64.b64decode(text, validate=True)
            except binascii.Error:
                key = b""
            if len(key) != 32:
                raise TokenFileError(f"{self.key_env} must hold 32 bytes in base64 (`openssl rand -base64 32`)")
            return key
        warn_if_shared(self.key_file, "the sign-in token key")
        try:
            key = self.key_file.read_bytes()
        except FileNotFoundError:
            if not create:
                return None
            return self._make_key()
        except OSError as exc:
            raise TokenFileError(f"the token key {self.key_file} cannot be read ({exc.strerror})") from None
        if len(key) != 32:
            raise TokenFileError(f"the token key {self.key_file} is not a key this sidecar made; left as it is")
        return key

    def _make_key(self) -> bytes:
        key = secrets.token_bytes(32)
        self.key_file.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(self.key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return self._key(create=False) or key
        with os.fdopen(fd, "wb") as handle:
            handle.write(key)
        return key

    # -- reading and writing ---------------------------------------------------------

    def read(self) -> dict[str, dict[str, Any]]:
        """Every entry by canonical address; {} when there is no file yet."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise TokenFileError(f"the token file {self.path} cannot be read ({exc.strerror})") from None
        key = self._key(create=False)
        if key is None:
            raise TokenFileError(f"the token file {self.path} exists but its key {self.key_file} is missing; "
                                 "it was left as it is (sign in again after moving it away)")
        return self._open(raw, key)

    def _open(self, raw: bytes, key: bytes) -> dict[str, dict[str, Any]]:
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        try:
            outer = json.loads(raw)
            nonce = base64.b64decode(outer["nonce"])
            sealed = base64.b64decode(outer["sealed"])
            plain = AESGCM(key).decrypt(nonce, sealed, _FORMAT.encode())
            document = json.loads(plain)
        except InvalidTag:
            raise TokenFileError(f"the token file {self.path} cannot be opened with its key (another key, or "
                                 "the file was changed); it was left as it is") from None
        except (ValueError, KeyError, TypeError, binascii.Error):
            raise TokenFileError(f"the token file {self.path} is not a sealed token file; left as it is") from None
        servers = document.get("servers") if isinstance(document, dict) else None
        return {k: v for k, v in (servers or {}).items() if isinstance(v, dict)}

    def _write(self, servers: dict[str, dict[str, Any]]) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        from sidecar.private_files import write_private

        key = self._key(create=True)
        assert key is not None
        nonce = secrets.token_bytes(12)
        plain = json.dumps({"servers": servers}, sort_keys=True).encode()
        sealed = AESGCM(key).encrypt(nonce, plain, _FORMAT.encode())
        outer = {"format": _FORMAT, "nonce": base64.b64encode(nonce).decode(),
                 "sealed": base64.b64encode(sealed).decode()}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_private(self.path, json.dumps(outer).encode())

    def _lock_fd(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(self.path.with_name(f".{self.path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o600)

    @contextlib.contextmanager
    def edit(self) -> Iterator[dict[str, dict[str, Any]]]:
        """Lock, read, let the caller change the entries, write back if they changed."""
        fd = self._lock_fd()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            with self._written_back() as servers:
                yield servers
        finally:
            os.close(fd)

    @contextlib.asynccontextmanager
    async def editing(self) -> AsyncIterator[dict[str, dict[str, Any]]]:
        """`edit()` for the event loop: the lock is waited for in a thread, and held while
        the caller talks to the authorization server (one refresh at a time)."""
        fd = self._lock_fd()
        try:
            await asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX)
            with self._written_back() as servers:
                yield servers
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def _written_back(self) -> Iterator[dict[str, dict[str, Any]]]:
        """The entries, read under the caller's lock and written back only if they changed."""
        servers = self.read()
        before = json.dumps(servers, sort_keys=True)
        yield servers
        if json.dumps(servers, sort_keys=True) != before:
            self._write(servers)

    def entry(self, resource: str) -> dict[str, Any] | None:
        return self.read().get(resource)

    def forget(self, resources: list[str]) -> None:
        if not self.path.exists() or not resources:
            return
        with self.edit() as servers:
            for resource in resources:
                servers.pop(resource, None)


def token_file_for(config: SidecarConfig) -> TokenFile | None:
    """The configured token file, else `mcp-oauth.json` beside the config (or in the data
    folder); None for a config never read from disk with no file named."""
    settings = config.oauth
    folder: Path | None = None
    if config.data.folder:
        folder = Path(config.data.folder).expanduser()
    elif config.source:
        folder = Path(config.source).resolve().parent
    if settings.token_file:
        path = Path(settings.token_file).expanduser()
    elif folder is not None:
        path = folder / TOKEN_FILE
    else:
        return None
    key = Path(settings.key_file).expanduser() if settings.key_file else path.with_name(KEY_FILE)
    return TokenFile(path, key, settings.key_env)
