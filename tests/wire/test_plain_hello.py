"""`sidecar.wire.plain_hello`: the standard library's answer to a waiting `initialize`, held
to the strict one (`sidecar.wire.hello.answer_waiting`, msgspec) byte for byte. Whatever the
plain reader answers, the strict reader answers with the same bytes and leaves the same
rest; a frame the plain reader is not certain of is left to the strict one. The
capabilities while every upstream starts are the dispatcher's (`server_capabilities` of a
real face whose pool has not run yet)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.config import parse_config
from sidecar.front.methods import server_capabilities
from sidecar.hub import build_face
from sidecar.settings import Settings
from sidecar.stdin_ahead import otlp_export_wanted
from sidecar.wire.hello import answer_waiting
from sidecar.wire.plain_hello import PLAIN_DEPTH, answer_plainly, starting_capabilities
from sidecar.wire.versions import HANDSHAKE_VERSIONS, MODERN_VERSION

REST = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
JSON_SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(1 << 70), max_value=1 << 70)
                | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12))
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=12)
VERSIONS = st.sampled_from([*HANDSHAKE_VERSIONS, MODERN_VERSION, "1999-01-01", ""]) | JSON_VALUES
IDS = st.integers(min_value=-(1 << 66), max_value=1 << 66) | st.text(max_size=10) | JSON_SCALARS


def _frame(ident: Any, params: Any, extra: dict[str, Any]) -> dict[str, Any]:
    frame: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": "initialize", **extra}
    if params is not None:
        frame["params"] = params
    return frame


PARAMS = st.fixed_dictionaries({}, optional={
    "protocolVersion": VERSIONS, "capabilities": JSON_VALUES, "clientInfo": JSON_VALUES,
    "_meta": JSON_VALUES, "other": JSON_VALUES})
EXTRA = st.sampled_from([{}, {}, {}, {"jsonrpc": "1.0"}, {"method": "ping"}, {"more": 1}])


def _same(line: bytes, upstreams: int) -> None:
    """The plain answer, when there is one, is the strict answer to the same bytes."""
    waiting = line + b"\n" + REST
    capabilities = starting_capabilities(upstreams)
    plain = answer_plainly(waiting, capabilities)
    early, strict = answer_waiting(waiting, capabilities)
    if plain is not None:
        assert plain[0] == strict, (line, plain[0], strict)
        assert waiting[plain[1]:] == early.rest == REST


@settings(max_examples=400)
@given(IDS, PARAMS | JSON_VALUES, EXTRA, st.sampled_from([0, 1, 3]))
def test_what_the_plain_reader_answers_the_strict_one_answers_the_same(
        ident: Any, params: Any, extra: dict[str, Any], upstreams: int) -> None:
    try:
        line = json.dumps(_frame(ident, params, extra), ensure_ascii=False).encode("utf-8", "surrogatepass")
    except ValueError:
        return
    _same(line, upstreams)


@given(st.binary(max_size=200))
def test_any_bytes_answered_plainly_are_answered_the_same(line: bytes) -> None:
    _same(line.replace(b"\n", b" "), 1)


@given(st.sampled_from(HANDSHAKE_VERSIONS + (MODERN_VERSION, "2099-01-01")),
       st.integers(min_value=-(1 << 63), max_value=(1 << 64) - 1) | st.text(max_size=20).filter(
           lambda t: all(not 0xD800 <= ord(c) <= 0xDFFF for c in t)))
def test_an_engine_initialize_is_answered_plainly_for_every_revision(version: str, ident: int | str) -> None:
    """What engines send (each revision, any id msgspec takes) is answered on the plain path."""
    params = {"protocolVersion": version, "capabilities": {"roots": {"listChanged": True}, "elicitation": {}},
              "clientInfo": {"name": "claude-code", "version": "2.1.0"}}
    line = json.dumps(_frame(ident, params, {}), ensure_ascii=False).encode()
    plain = answer_plainly(line + b"\r\n" + REST, starting_capabilities(2))
    assert plain is not None
    assert json.loads(plain[0])["result"]["protocolVersion"] == (version if version in HANDSHAKE_VERSIONS
                                                                 else HANDSHAKE_VERSIONS[-1])
    _same(line, 2)


ODD = [
    b"",  # nothing
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}',  # no newline: partial
    b'{"jsonrpc":"2.0","id":1,"id":2,"method":"initialize","params":{}}\n',  # a duplicate key
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":NaN}}\n',  # NaN
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":1e400}}\n',  # out of range
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"\\ud800"}}\n',  # a lone surrogate
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"\xff"}}\n',  # not UTF-8
    b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n',  # a BOM
    b'{"jsonrpc":"2.0","id":true,"method":"initialize","params":{}}\n',  # a boolean id
    b'{"jsonrpc":"2.0","id":99999999999999999999,"method":"initialize"}\n',  # an id msgspec refuses
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}\n',  # the wrong type
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":[]}\n',  # params not an object
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":'
    + b"[" * (PLAIN_DEPTH + 1) + b"]" * (PLAIN_DEPTH + 1) + b"}}\n",  # deeper than the plain reader goes
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":' + b"[" * 100_000 + b"\n",  # huge and deep
    b'[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}]\n',  # a batch
    b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n',  # another method
    b"\n",  # a blank line
]


def test_anything_uncertain_is_left_to_the_strict_reader() -> None:
    for waiting in ODD:
        assert answer_plainly(waiting + REST, starting_capabilities(1)) is None, waiting
        _same(waiting.rstrip(b"\n"), 1)


def test_the_capabilities_while_starting_are_the_dispatchers() -> None:
    """A real face whose pool has not run: every upstream is on its first start."""
    for count in range(4):
        servers = {f"s{n}": {"command": "no-such-command", "args": [str(n)]} for n in range(count)}
        face = build_face(parse_config({"mcpServers": servers}, {}))
        assert server_capabilities(face) == starting_capabilities(count), count


@given(st.dictionaries(st.sampled_from(["OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_ENDPOINT",
                                        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTHER"]),
                       st.sampled_from(["", "true", " TRUE ", "false", "http://127.0.0.1:4318", "x"])))
def test_the_early_reader_asks_about_traces_as_the_settings_do(environ: dict[str, str]) -> None:
    assert otlp_export_wanted(environ) == Settings.read(environ).tracing


def test_the_tasks_extensions_name_is_task_shapes_own() -> None:
    from sidecar.wire import plain_hello, task_shapes

    assert plain_hello.TASKS_EXTENSION == task_shapes.TASKS_EXTENSION
