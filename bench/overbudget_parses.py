"""How much of a held payload the over-budget path parses, and how long it takes.

    python -m bench.overbudget_parses [OLD_DIR]

Counts the bytes handed to every JSON decode while one over-budget result is charged
(the result itself, then the payload found in it), as multiples of the payload's size,
and the best of 15 timings. With OLD_DIR (a folder holding `old_budget.py` and
`old_shape.py`, an earlier `sidecar.gate.budget.charge`/`shape` whose shape import points at
`old_shape`) both are measured in the same process, interleaved, for a fair ratio.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from types import ModuleType
from typing import Any

import msgspec

from sidecar.gate.budget.held import HeldStore

RECORDS = 20000


def cases() -> dict[str, tuple[bytes, int]]:
    """name -> (the tools/call result, the size of the JSON payload held from it)."""
    records = [{"id": i, "name": f"n{i}", "tags": ["a", "b"], "note": "x" * 40} for i in range(RECORDS)]
    value = {"items": records, "total": len(records)}
    payload = json.dumps(value)
    return {
        "text block holding JSON": (msgspec.json.encode({"content": [{"type": "text", "text": payload}]}),
                                    len(payload.encode())),
        "structuredContent": (msgspec.json.encode({"content": [{"type": "text", "text": "see structuredContent"}],
                                                   "structuredContent": value}), len(msgspec.json.encode(value))),
    }


class Counted:
    """A decoder that adds the size of what it is given to a shared tally."""

    def __init__(self, inner: Any, tally: list[int]) -> None:
        self.inner, self.tally = inner, tally

    def decode(self, raw: Any) -> Any:
        self.tally.append(len(raw))
        return self.inner.decode(raw)


def parsed_bytes(budget: ModuleType, shape: ModuleType, raw: bytes) -> int:
    tally: list[int] = []
    saved = {name: getattr(shape, name) for name in ("_one_level", "_two_levels") if hasattr(shape, name)}
    real = msgspec.json.decode
    for name, decoder in saved.items():
        setattr(shape, name, Counted(decoder, tally))
    msgspec.json.decode = lambda data, *a, **k: (tally.append(len(data)), real(data, *a, **k))[1]  # type: ignore[assignment]
    try:
        store = HeldStore(1 << 30)
        charged = budget.charge_result(raw, 8000, 1 << 20, lambda p: store.hold("s", "u", "t", p))
        assert charged.kind == "shaped", charged.kind
    finally:
        msgspec.json.decode = real
        for name, decoder in saved.items():
            setattr(shape, name, decoder)
    return sum(tally)


def best_ms(budget: ModuleType, raw: bytes, rounds: int = 15) -> float:
    store = HeldStore(1 << 30)
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        budget.charge_result(raw, 8000, 1 << 20, lambda p: store.hold("s", "u", "t", p))
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main(argv: list[str]) -> None:
    versions = {"now": (importlib.import_module("sidecar.gate.budget.charge"), importlib.import_module("sidecar.gate.budget.shape"))}
    if argv:
        sys.path.insert(0, argv[0])
        versions = {"before": (importlib.import_module("old_budget"), importlib.import_module("old_shape")), **versions}
    for name, (raw, payload_size) in cases().items():
        for label, (budget, shape) in versions.items():
            parsed = parsed_bytes(budget, shape, raw)
            print(f"{name:24} {label:6} result {len(raw) / 1e6:.1f} MB, payload {payload_size / 1e6:.1f} MB: "
                  f"parsed {parsed / payload_size:.2f} x the payload, best {best_ms(budget, raw):.1f} ms")

if __name__ == "__main__":
    main(sys.argv[1:])
