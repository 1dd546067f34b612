"""`sidecar.root`: one composition root builds every face, its gate given its collaborators
at construction; the listener start-up and the admission are written once. Source scans
for the rules, and a face built by the root that counts and traces a real call."""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from sidecar.config import parse_config
from sidecar.gate.call import ToolCall
from sidecar.root import Root
from sidecar.settings import Settings
from tests.conftest import REPO

SOURCES = [*(REPO / "sidecar").rglob("*.py"), *(REPO / "sidecar_admin").rglob("*.py")]


def _relative(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


@cache
def _nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of one source file, parsed once for all the scans of this module."""
    return tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def _calls(name: str) -> Iterator[tuple[str, int]]:
    """Where a function or method called `name` is called, in the runtime and admin code."""
    for path in SOURCES:
        for node in _nodes(path):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                if called == name:
                    yield _relative(path), node.lineno


def _sets_an_attribute_of(target: ast.expr, names: tuple[str, ...]) -> bool:
    """`gate.x = ...`, `self.gate.x = ...`, `face.gate.x.y = ...`: an attribute of a gate
    (or of one of its parts) assigned from outside; the same for a face."""
    node = target
    while isinstance(node, ast.Attribute):
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id in names or isinstance(owner, ast.Attribute) and owner.attr in names:
            return True
        node = owner
    return False


def _assignments(path: Path) -> Iterator[tuple[int, ast.expr]]:
    for node in _nodes(path):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        yield from ((node.lineno, target) for target in targets)


def test_nothing_sets_a_gate_or_face_attribute_from_outside() -> None:
    found = []
    for path in SOURCES:
        if path.parent.name == "gate" and path.parent.parent.name == "sidecar":
            continue  # the gate's own modules build it
        found += [f"{_relative(path)}:{line}" for line, target in _assignments(path)
                  if _sets_an_attribute_of(target, ("gate", "face"))]
    assert not found, found


def test_the_scan_sees_each_form_of_an_outside_assignment() -> None:
    def sets(code: str) -> bool:
        statement = ast.parse(code).body[0]
        assert isinstance(statement, (ast.Assign, ast.AugAssign))
        target = statement.targets[0] if isinstance(statement, ast.Assign) else statement.target
        return _sets_an_attribute_of(target, ("gate", "face"))

    assert sets("gate.held = x") and sets("self.face.gate.confirm.spent = x") and sets("front.face.closing = True")
    assert sets("gate.recorder.observers += [x]")
    assert not sets("self.held = x") and not sets("gates = x") and not sets("face = x")


def test_only_the_root_builds_a_face() -> None:
    """`build_face` is the assembly; `Root.face` the one door the fronts use."""
    assert {where for where, _ in _calls("build_face")} == {"sidecar/root.py"}


def test_the_listener_and_the_admission_are_written_once() -> None:
    assert {where for where, _ in _calls("Listener")} == {"sidecar/front/http/listener.py"}
    assert {where for where, _ in _calls("serve_listening")} == {"sidecar/app.py", "sidecar/front/gateway.py"}
    for check in ("host_allowed", "origin_allowed"):
        assert {where for where, _ in _calls(check)} == {"sidecar/front/http/admission.py"}, check
    # the console's sign-in page names its operator by the token pasted there, not a request's header
    assert {where for where, _ in _calls("caller_identity")} == {"sidecar/front/http/admission.py",
                                                                  "sidecar_admin/console/guard.py"}
    importers = {_relative(path) for path in SOURCES for node in _nodes(path)
                 if isinstance(node, ast.ImportFrom) and node.module == "sidecar.front.http.admission"
                 and any(alias.name == "admit" for alias in node.names)}
    assert importers == {"sidecar/front/http/routes.py"}  # whose `admitted` both fronts' middlewares call
    assert {where for where, _ in _calls("admitted")} == {"sidecar/front/http/routes.py", "sidecar/front/gateway.py"}


def test_a_face_from_the_root_is_counted_by_the_metrics_it_was_built_with() -> None:
    """Metrics on: the counter is in the gate from its construction (no `observe` later);
    a call that ends shows on /metrics under the face's label."""
    root = Root(Settings.read({}), "tcp", metrics=True)
    face = root.face(parse_config({"bot": {"id": "iris"}}, {}), "iris")
    root.show(face, lambda: 0, "iris")
    assert len(face.gate.recorder.observers) == 1 and face.gate.recording
    call = asyncio.run(face.gate.run(ToolCall(name="nowhere__tool", arguments={})))
    assert call.outcome == "failed"
    page = root.metrics.render().decode()
    assert 'omb_tool_calls_total{face="iris",outcome="failed"' in page, page


def test_without_observers_a_face_pays_for_no_recording() -> None:
    root = Root(Settings.read({}), "pipe")
    face = root.face(parse_config({}, {}), mounted=True)
    assert root.tracing is None and root.metrics is None and face.tracer is None
    assert not face.gate.recording and face.gate.stages()[-1] is face.gate.call


def test_traces_on_give_the_gate_its_client_stage_at_construction() -> None:
    root = Root(Settings.read({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}), "pipe")
    try:
        face = root.face(parse_config({}, {}), mounted=True)
        assert face.tracer is root.tracing is not None
        stages = face.gate.stages()
        assert len(stages) == 4 and stages[-1] is face.gate.call  # resolve, charge, the client span, the call
        assert face.gate.recording  # the decision goes on the server span
    finally:
        root.shutdown()
