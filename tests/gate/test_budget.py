import json

import msgspec
import pytest

from sidecar.gate.budget.charge import charge_result
from sidecar.gate.budget.held import HeldStore, TooBigToHold
from sidecar.gate.budget.shape import cut_text, shaped_view


def result(*blocks: dict, **extra: object) -> bytes:
    return msgspec.json.encode({"content": list(blocks), **extra})


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def holder(store: HeldStore):
    return lambda payload: store.hold("session", "up", "tool", payload)


def test_under_budget_passes_untouched_byte_for_byte() -> None:
    raw = b'{"content": [ {"type":"text","text":"hi"} ],  "isError":false}'
    charged = charge_result(raw, 8000, 1 << 20, lambda p: "never")
    assert charged.kind == "pass" and bytes(charged.result) == raw


def test_json_over_budget_is_shaped_and_held_whole() -> None:
    records = [{"id": i, "name": f"n{i}", "tags": ["a"]} for i in range(5000)]
    payload = json.dumps({"items": records, "total": 5000})
    store = HeldStore(64 << 20)
    charged = charge_result(result(text(payload)), 8000, 1 << 20, holder(store))
    assert charged.kind == "shaped" and charged.handle
    view = json.loads(json.loads(bytes(charged.result))["content"][0]["text"])
    assert len(json.loads(bytes(charged.result))["content"][0]["text"]) <= 8000
    assert view["shape"] == {"items": {"array": 5000, "itemKeys": ["id", "name", "tags"]}, "total": "number"}
    assert view["records"]["first"][:2] == records[:2] and view["records"]["total"] == 5000
    assert store.get("session", charged.handle).payload == payload.encode()  # type: ignore[union-attr]


def test_structured_content_is_preferred_as_the_payload() -> None:
    structured = {"rows": list(range(10000))}
    store = HeldStore(64 << 20)
    charged = charge_result(result(text("see structured"), structuredContent=structured), 1000, 1 << 20, holder(store))
    assert charged.kind == "shaped"
    assert json.loads(store.get("session", charged.handle).payload) == structured  # type: ignore[union-attr]


def test_plain_text_is_cut_with_a_marker() -> None:
    charged = charge_result(result(text("a" * 6000 + "MIDDLE" + "z" * 6000)), 8000, 1 << 20, lambda p: "never")
    shown = json.loads(bytes(charged.result))["content"][0]["text"]
    assert charged.kind == "cut" and len(shown) <= 8000
    assert shown.startswith("aaa") and shown.endswith("zzz") and "characters left out" in shown


def test_binary_over_the_cap_becomes_a_note_and_small_binary_passes() -> None:
    big = {"type": "image", "data": "A" * 40_000, "mimeType": "image/png"}
    small = {"type": "audio", "data": "B" * 100, "mimeType": "audio/wav"}
    charged = charge_result(result(big, small), 8000, 10_000, lambda p: "never")
    content = json.loads(bytes(charged.result))["content"]
    assert "image/png of 30,000 bytes left out" in content[0]["text"] and content[1] == small


def test_a_single_result_over_the_hold_cap_says_its_size() -> None:
    payload = json.dumps(list(range(200_000)))
    charged = charge_result(result(text(payload)), 8000, 1 << 20, lambda p: HeldStore(1000).hold("s", "u", "t", p))
    shown = json.loads(bytes(charged.result))
    assert charged.kind == "too_big" and shown["isError"] and f"{len(payload):,} bytes" in shown["content"][0]["text"]


def test_held_store_evicts_oldest_and_binds_handles_to_sessions() -> None:
    store = HeldStore(100)
    first = store.hold("s1", "up", "t", b"x" * 60)
    second = store.hold("s1", "up", "t", b"y" * 60)
    assert store.get("s1", first) is None and store.get("s1", second) is not None
    assert store.get("s2", second) is None  # a foreign handle looks missing
    assert store.held_bytes("up") == 60
    with pytest.raises(TooBigToHold):
        store.hold("s1", "up", "t", b"z" * 101)


def test_cut_text_and_shaped_view_fit_their_budget() -> None:
    assert len(cut_text("q" * 100_000, 500)) <= 500
    huge_keys = msgspec.json.encode({f"key_{i}": i for i in range(10_000)})
    assert len(shaped_view(huge_keys, "h_x", 10**6, 600)) <= 600


@pytest.mark.parametrize("where", ["text", "structuredContent"])
def test_an_over_budget_payload_is_parsed_once(where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the decode of the result that carries it, the payload is opened once: the
    shape and the records shown read the levels that one parse left (it was five times)."""
    import sidecar.gate.budget.shape as shape

    records = [{"id": i, "name": f"n{i}", "tags": ["a"]} for i in range(3000)]
    payload = json.dumps({"items": records, "total": len(records)})
    raw = result(text(payload)) if where == "text" else result(text("see below"), structuredContent=json.loads(payload))
    parsed: list[int] = []

    class Counted:
        def __init__(self, inner: msgspec.json.Decoder) -> None:
            self.inner = inner

        def decode(self, data: bytes) -> object:
            parsed.append(len(data))
            return self.inner.decode(data)

    real = msgspec.json.decode
    monkeypatch.setattr(shape, "_one_level", Counted(shape._one_level))
    monkeypatch.setattr(shape, "_two_levels", Counted(shape._two_levels))
    monkeypatch.setattr(msgspec.json, "decode", lambda data, *a, **k: (parsed.append(len(data)), real(data, *a, **k))[1])
    charged = charge_result(raw, 8000, 1 << 20, holder(HeldStore(64 << 20)))
    assert charged.kind == "shaped"
    assert len(raw) <= sum(parsed) < len(raw) + 1.2 * len(payload)  # the result once, then the payload once
