"""Smoke run of `python -m bench.decode` with a tiny budget: every row is produced and
each path gives the same answer as its baseline. No timing is compared with a limit."""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # `bench` is a top-level package beside `sidecar`, not installed
    sys.path.insert(0, str(REPO))

from bench import decode  # noqa: E402
from sidecar.front.http.stateless import stamp_answer  # noqa: E402
from sidecar.wire import Answer, decode_engine_frame  # noqa: E402


def test_every_row_is_measured() -> None:
    found = decode.rows(budget=0.0)
    assert len(found) == 12 and all(now > 0 for _, now, _ in found)
    assert sum(1 for _, _, before in found if before > 0) == 6


def test_the_paths_measured_agree_with_their_baselines() -> None:
    for frame in (decode._small_call(), decode._large_call()):
        assert msgspec.structs.asdict(decode_engine_frame(frame)) == {  # type: ignore[arg-type]
            k: v for k, v in decode._two_pass_decode(frame).items() if k in ("id", "method", "params")}
    result = decode._large_result()
    spliced = msgspec.json.decode(stamp_answer("tools/call", Answer(1, msgspec.Raw(result))))
    assert spliced == msgspec.json.decode(decode._reencoded_stamp(decode.encode_result(1, result)))
