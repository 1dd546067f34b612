"""Sealed confirmation states for the 2026-07-28 revision, where the sidecar cannot ask the
engine a question mid-call and the pending confirmation travels in `requestState`.

Owns sealing (AES-GCM from `cryptography`, loaded only when a state is first made or
read) and the checks on the way back: the state opens under this process's key (or the
configured one), names this bot and face, the caller it was made for (the identity held
results are bound to: a bearer token's digest, or one engine session), the tool that
will really run and a digest of exactly these arguments, has not expired, and has not
been used before. Another caller's state is refused exactly like a forged one. Any failure
is one answer, "not valid", so a caller learns nothing about which check failed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import time
from collections.abc import Mapping
from typing import Any, Protocol

import msgspec

__all__ = ["SpentStates", "MemorySpent", "Sealer", "StateClaim", "arguments_digest", "caller_digest", "key_from"]

_AAD = b"omb-sidecar/confirm/1"
_NONCE = 12
MAX_TOKEN = 65536  # a relayed round's state carries the upstream's own inside it
_encode = msgspec.json.Encoder(order="sorted").encode


class StateClaim(msgspec.Struct, frozen=True):
    """What a sealed state says: who, what, with which arguments, until when, and its id."""

    bot: str
    face: str
    caller: str  # a digest of the caller identity (see `caller_digest`)
    tool: str
    arguments: str  # digest
    expires: float
    id: str
    inner: str | None = None  # a relayed round's: the upstream's own state (sidecar.front.eras.relayed)
    confirmed: bool = False  # a relayed round's: the person allowed the call before the upstream asked


_claim = msgspec.json.Decoder(StateClaim)


def caller_digest(identity: str) -> str:
    """What a state keeps of its caller: enough to compare, nothing to read back."""
    return hashlib.sha256(b"omb-sidecar/confirm-caller\0" + identity.encode()).hexdigest()[:32]


def arguments_digest(arguments: Mapping[str, Any]) -> str:
    return hashlib.sha256(_encode(arguments)).hexdigest()


class SpentStates(Protocol):
    """Where used state ids are remembered until they expire (this process; later a shared store)."""

    def spend(self, ident: str, expires: float) -> bool: ...


class MemorySpent:
    """Used state ids in memory, each forgotten once its state would have expired anyway."""

    def __init__(self) -> None:
        self._spent: dict[str, float] = {}

    def spend(self, ident: str, expires: float) -> bool:
        now = time.time()
        if len(self._spent) > 1024:
            self._spent = {i: e for i, e in self._spent.items() if e > now}
        if ident in self._spent:
            return False
        self._spent[ident] = expires
        return True


def key_from(environ: Mapping[str, str], name: str | None) -> bytes:
    """The sealing key: 32 bytes, base64, from the variable `name`; else one for this process."""
    if name:
        value = environ.get(name, "")
        try:
            key = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            key = b""
        if len(key) == 32:
            return key
    return os.urandom(32)


class Sealer:
    def __init__(self, key: bytes, spent: SpentStates | None = None) -> None:
        self._key = key
        self._aead: Any = None
        self.spent = spent or MemorySpent()

    def _cipher(self) -> Any:
        if self._aead is None:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # only when a state is made or read

            self._aead = AESGCM(self._key)
        return self._aead

    def seal(self, claim: StateClaim, purpose: bytes = _AAD) -> str:
        """`purpose` is bound under the tag: a state sealed for one purpose (a confirmation,
        a held question) never opens as another."""
        nonce = os.urandom(_NONCE)
        sealed = self._cipher().encrypt(nonce, msgspec.json.encode(claim), purpose)
        return base64.urlsafe_b64encode(nonce + sealed).decode().rstrip("=")

    def open(self, token: object, purpose: bytes = _AAD) -> StateClaim | None:
        """The claim of a state this sealer made, or None (altered, foreign, not a state)."""
        if not isinstance(token, str) or not 16 < len(token) < MAX_TOKEN:
            return None
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            plain = self._cipher().decrypt(raw[:_NONCE], raw[_NONCE:], purpose)
            return _claim.decode(plain)
        except Exception:  # InvalidTag, bad base64, bad JSON: all the same to the caller
            return None

    def redeem(self, token: object, *, bot: str, face: str, tool: str, arguments: Mapping[str, Any],
               caller: str = "") -> bool:
        """True once for a state made for exactly this call of this caller and still fresh."""
        return self.redeem_claim(token, bot=bot, face=face, tool=tool, arguments=arguments, caller=caller) is not None

    def redeem_claim(self, token: object, *, bot: str, face: str, tool: str, arguments: Mapping[str, Any],
                     caller: str = "", purpose: bytes = _AAD) -> StateClaim | None:
        """`redeem`, with the claim itself (its id names what the state stands for)."""
        claim = self.open(token, purpose)
        if claim is None or (claim.bot, claim.face, claim.caller, claim.tool) != (bot, face, caller_digest(caller), tool):
            return None
        if claim.arguments != arguments_digest(arguments) or claim.expires <= time.time():
            return None
        return claim if self.spent.spend(claim.id, claim.expires) else None

    def new_claim(self, *, bot: str, face: str, tool: str, arguments: Mapping[str, Any], seconds: float,
                  caller: str = "", inner: str | None = None, confirmed: bool = False) -> StateClaim:
        return StateClaim(bot=bot, face=face, caller=caller_digest(caller), tool=tool, arguments=arguments_digest(arguments),
                          expires=time.time() + seconds, id=os.urandom(16).hex(), inner=inner, confirmed=confirmed)
