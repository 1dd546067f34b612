"""The console's one door to the acts that change pins: `servers approve` and `check`.

Approve on the Held tools page is the very act `omb-sidecar servers approve NAME [--tool T]`
is: the server is started as `check` starts it, what it lists now is pinned as reviewed
(the health file, and `store.url` when replicas share pins), with an `Approval` naming the
console and the session. The Test button is `check` without an approval: it shows the
check's words and turns a passing server on, but a changed tool stays held until a person
approves it on the Held tools page, where its diff is in view. Owns also the audit line of
a console approval: which tools, by whom.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sidecar.trust.pins import Approval
from sidecar.errors import ConfigError
from sidecar.hub.face import Face
from sidecar.mounts.health import CheckResult
from sidecar_admin.approval import _listed_now, _scope, _shared_pins  # the command's own steps, not a copy
from sidecar_admin.review import approved_pins
from sidecar_admin.session import Session, check_and_apply

__all__ = ["approve", "check_as_person", "audit_approval"]


def check_as_person(session: Session, name: str) -> CheckResult:
    """`omb-sidecar check NAME`, pressed by a person on the page."""
    return check_and_apply(session, name, say=False)


def approve(session: Session, name: str, tools: Sequence[str], who: str) -> tuple[list[str], str]:
    """Pin what `name` lists now (or only `tools`): the names approved, and words when none were."""
    session.args.name, session.args.tool = name, list(tools) or None
    scope = _scope(session)
    server, result, known = _listed_now(session, scope)
    health = known["health"]
    if not result.ok or health is None:
        return [], result.headline if not result.ok else "the config was not read from a file"
    pins, missing = approved_pins(result.definitions, known["pins"], list(tools))
    if missing:
        raise ConfigError("", f"'{server.alias}' does not list {', '.join(repr(m) for m in missing)}")
    approval = Approval(command=f"console approve ({who})", alias=server.alias)  # a person pressed Approve
    health.save_pins(server, pins, approval)
    shared = _shared_pins(scope)
    if shared is not None and not shared.publish(server.alias, pins, approval):
        return [], "the shared store did not answer: approved in the health file only; approve again"
    return list(tools) or sorted(pins), ""


def audit_approval(faces: Mapping[str, Face], name: str, approved: Sequence[str], who: str) -> None:
    """One audit line in each face that runs the server: which tools, approved by whom."""
    for bot, face in faces.items():
        if name in face.pool.upstreams or any(s.alias == name for s in face.config.servers):
            face.gate.trust.audit.write({"event": "tool-approval", "bot": bot, "face": face.name, "upstream": name,
                                         "tools": list(approved), "by": who})
