"""Question states and confirmation states are sealed with one key for different purposes:
neither opens as the other, so a question's state can never stand in for the person's
"Allow once", nor a confirmation's for a held call; both bind the same fields."""

from __future__ import annotations

from sidecar.front.eras.rounds import ASK_PURPOSE
from sidecar.gate.confirmation.sealed import Sealer

KEY = bytes(range(32))
CALL = {"bot": "b", "face": "f", "tool": "tools/call s__form", "arguments": {"m": 1}}


def test_purposes_never_open_as_each_other() -> None:
    sealer = Sealer(KEY)
    claim = sealer.new_claim(**CALL, seconds=60, caller="caller:x")  # type: ignore[arg-type]
    question = sealer.seal(claim, ASK_PURPOSE)
    confirmation = sealer.seal(claim)
    assert sealer.open(question) is None and sealer.open(confirmation, ASK_PURPOSE) is None
    assert not sealer.redeem(question, **CALL, caller="caller:x")  # type: ignore[arg-type]
    assert sealer.redeem_claim(question, **CALL, caller="caller:x", purpose=ASK_PURPOSE) == claim  # type: ignore[arg-type]
    assert sealer.redeem_claim(question, **CALL, caller="caller:x", purpose=ASK_PURPOSE) is None  # once  # type: ignore[arg-type]


def test_a_question_state_is_bound_like_a_confirmation() -> None:
    sealer = Sealer(KEY)
    token = sealer.seal(sealer.new_claim(**CALL, seconds=60, caller="caller:x"), ASK_PURPOSE)  # type: ignore[arg-type]
    for other in ({"bot": "c"}, {"face": "g"}, {"tool": "tools/call s__other"}, {"arguments": {"m": 2}},
                  {"caller": "caller:y"}):
        fields = {**CALL, "caller": "caller:x", **other}
        assert sealer.redeem_claim(token, **fields, purpose=ASK_PURPOSE) is None, other  # type: ignore[arg-type]
    expired = sealer.seal(sealer.new_claim(**CALL, seconds=0, caller="caller:x"), ASK_PURPOSE)  # type: ignore[arg-type]
    assert sealer.redeem_claim(expired, **CALL, caller="caller:x", purpose=ASK_PURPOSE) is None  # type: ignore[arg-type]
    assert Sealer(bytes(32)).open(token, ASK_PURPOSE) is None  # another key: another replica's, or forged
