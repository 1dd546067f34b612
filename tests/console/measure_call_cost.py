"""What the console adds to each tool call: the gate's record, which runs only when someone
watches, plus the console's ring (`python tests/console/measure_call_cost.py`)."""

from __future__ import annotations

import timeit

import msgspec

from sidecar.config import Audit, SidecarConfig
from sidecar.gate.observers.audit import AuditLog
from sidecar.gate.call import ToolCall
from sidecar.gate.observers.record import Recorder
from sidecar.redact import Redactor
from sidecar_admin.console.state import CallRing

ROUNDS = 200_000


def main() -> None:
    recorder = Recorder(AuditLog(Audit()), SidecarConfig(), Redactor())
    ring = CallRing()
    recorder.observers.append(ring._observer("iris"))  # what `CallRing.watch` adds to a gate
    call = ToolCall(name="notes__search_notes", arguments={"query": "milk"})
    call.decide("resolve", "route", "")
    call.complete(msgspec.Raw(b"{}"))
    took = timeit.timeit(lambda: recorder.record(call), number=ROUNDS) / ROUNDS * 1e6
    print(f"the record of one call with the console watching: {took:.2f} us ({ROUNDS} calls; "
          f"with the console off and no audit file the gate skips recording)")


if __name__ == "__main__":
    main()
