"""A definition of megabytes is digested a piece at a time: the same digests and pins as in
one go, with no hash reading more than `PIECE` bytes between two pauses."""

from __future__ import annotations

import asyncio
import hashlib
import random
from typing import Any

import pytest

from sidecar.trust import pins
from sidecar.trust.first_sight import prepare_listing
from sidecar.trust.pins import PIECE, Memo, listed_bytes, pin_tools


def _big(seed: int, words: int) -> dict[str, Any]:
    rng = random.Random(seed)
    text = " ".join("".join(rng.choices("abcdefghij", k=rng.randint(2, 9))) for _ in range(words))
    return {"name": f"big_{seed}", "description": text, "inputSchema": {"type": "object"},
            "zeta": {"note": "é" * (PIECE + 7)}, "annotations": {"title": "t"}}


def _run(steps: Any) -> tuple[int, Any]:
    pauses = 0
    try:
        while True:
            next(steps)
            pauses += 1
    except StopIteration as done:
        return pauses, done.value


@pytest.mark.parametrize("shape", ["big", "named only", "keys after the name only"])
def test_the_encoding_in_steps_is_the_encoding_in_one_go(shape: str) -> None:
    tool = {"big": _big(1, 120_000), "named only": {"name": "n"},
            "keys after the name only": {"name": "n", "title": "x" * (3 * PIECE)}}[shape]
    _, stepped = _run(pins.encoding_steps(tool))
    assert stepped == pins._encoded_and_digest(tool)
    canonical, digest, body = stepped
    assert canonical == pins._canonical(tool) and digest == hashlib.sha256(canonical).hexdigest()
    assert body == hashlib.sha256(pins._canonical(tool, with_name=False)).hexdigest()


def test_no_hash_reads_more_than_a_piece_between_two_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    tool = _big(2, 200_000)
    fed: list[int] = []  # bytes hashed since the last pause
    real = pins.hashed

    def counting(hasher: Any, data: bytes) -> Any:
        class Counting:
            def update(self, piece: Any) -> None:
                fed[-1] += len(piece)
                hasher.update(piece)

        for _ in real(Counting(), data):
            yield
            fed.append(0)

    monkeypatch.setattr(pins, "hashed", counting)
    fed.append(0)
    plain = listed_bytes(tool)
    pauses, digest = _run(Memo().digest_steps(tool, plain))
    assert digest == Memo().digest(tool)
    assert max(fed) <= PIECE
    assert pauses >= 2 * (len(plain) // PIECE)  # the listed key, then the canonical bytes, a piece at a time


def test_a_memo_digests_the_same_bytes_again_by_their_key_alone() -> None:
    tool, memo = _big(3, 60_000), Memo()
    plain = listed_bytes(tool)
    _, first = _run(memo.digest_steps(tool, plain))
    memo.encoded = {}
    _, again = _run(memo.digest_steps(tool, plain))
    assert again == first and memo.encoded == {}  # known by its bytes' key: not encoded again
    assert memo.digest(tool) == first


def test_a_first_sight_with_a_big_definition_pins_as_in_one_go() -> None:
    tools = [_big(4, 150_000), {"name": "small", "description": "adds two numbers", "inputSchema": {"type": "object"}}]
    sight = asyncio.run(prepare_listing(tools, Memo(), first_sight=True, shadowing=False))
    assert sight is not None
    expected = pin_tools(tools, findings={pin.digest: pin.findings or () for pin in sight.pins.values()})
    assert {name: (pin.digest, pin.body, pin.definition, pin.listed) for name, pin in sight.pins.items()} == \
        {name: (pin.digest, pin.body, pin.definition, pin.listed) for name, pin in expected.items()}
