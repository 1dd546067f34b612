"""Sealed confirmation states, without processes: what opens, what is refused."""

from __future__ import annotations

import base64

from sidecar.gate.confirmation.sealed import Sealer, key_from


def make(sealer: Sealer, seconds: float = 60, **override: object) -> str:
    fields = {"bot": "b", "face": "f", "tool": "s__delete", "arguments": {"id": 1}, "seconds": seconds, **override}
    return sealer.seal(sealer.new_claim(**fields))  # type: ignore[arg-type]


def redeem(sealer: Sealer, token: object, **override: object) -> bool:
    fields = {"bot": "b", "face": "f", "tool": "s__delete", "arguments": {"id": 1}, **override}
    return sealer.redeem(token, **fields)  # type: ignore[arg-type]


def test_a_state_is_good_once_for_exactly_its_call() -> None:
    sealer = Sealer(bytes(range(32)))
    for other in ({"bot": "c"}, {"face": "g"}, {"tool": "s__create"}, {"arguments": {"id": 2}}):
        assert not redeem(sealer, make(sealer), **other), other
    token = make(sealer)
    assert redeem(sealer, token, arguments={"id": 1}) and not redeem(sealer, token)  # once
    assert not redeem(sealer, make(sealer, seconds=0))  # expired
    assert not redeem(Sealer(bytes(32)), make(sealer))  # another key
    for bad in (None, 5, "", "x" * 40, make(sealer)[:-3] + "AAA", "=" * 30):
        assert not redeem(sealer, bad)


def test_the_key_comes_from_the_named_variable_or_is_made_per_process() -> None:
    key = bytes(range(32))
    assert key_from({"K": base64.b64encode(key).decode()}, "K") == key
    assert len(key_from({"K": "short"}, "K")) == 32 and key_from({}, None) != key_from({}, None)
    shared = Sealer(key_from({"K": base64.b64encode(key).decode()}, "K"))
    assert redeem(Sealer(key), make(shared))  # two replicas with one configured key
