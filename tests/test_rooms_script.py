"""`tools/rooms.py`, the table of moves to rooms by feature: what it rewrites, and that a
second run changes nothing (the lead re-runs it after merging branches written against the
old layout). Generated texts mix old references, new ones and look-alikes that must stay."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import REPO


def _rooms() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rooms_script", REPO / "tools" / "rooms.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


rooms = _rooms()
OLD = sorted(rooms.TABLE)
NEW = sorted(rooms.TABLE.values())
# look-alikes of old names that are not references to a moved module
KEPT = ["sidecar.gate.answer", "sidecar.catalog.sanitize", "self.gate.trust.store", "sidecar.gate.confirming",
        "tests/gate/held.py", "sidecar.gate.stages.checks", "front.metrics_port", "sidecar.gate.budget import stage"]


def test_old_references_in_each_form_are_rewritten() -> None:
    cases = {
        "from sidecar.catalog import poison": "from sidecar.trust import scan as poison",
        "    from sidecar.catalog import poison, sanitize  # why": (
            "    from sidecar.catalog import sanitize  # why\n    from sidecar.trust import scan as poison"),
        "from sidecar.gate import ToolCall, audit": "from sidecar.gate import ToolCall\nfrom sidecar.gate.observers import audit",
        "from sidecar.gate.budget import Charge": "from sidecar.gate.budget.charge import Charge",
        "import sidecar.gate.sealed as s, sidecar.gate.trust": "import sidecar.gate.confirmation.sealed as s, sidecar.trust.screen",
        "'sidecar.front.tracing.Tracing'": "'sidecar.gate.observers.tracing.Tracing'",
        "see `sidecar/gate/stages/charge.py` and (gate/confirm_text.py)": (
            "see `sidecar/gate/budget/stage.py` and (gate/confirmation/form.py)"),
    }
    for old, new in cases.items():
        assert rooms.rewrite(old) == new, old


def test_new_references_and_look_alikes_stay() -> None:
    for text in NEW + KEPT + [rooms.path_of(n).as_posix() for n in NEW]:
        assert rooms.rewrite(text) == text, text


PIECES = st.sampled_from(OLD + NEW + KEPT + [rooms.path_of(m).as_posix() for m in OLD + NEW]) | st.text(
    alphabet=" .,:;()`'\"\n_/abc", max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=12))
def test_a_second_run_changes_nothing_and_no_old_reference_survives(pieces: list[str]) -> None:
    text = " ".join(pieces)
    once = rooms.rewrite(text)
    assert rooms.rewrite(once) == once
    assert rooms.DOTTED.search(once) is None and rooms.PATHS.search(once) is None, once


def test_the_table_is_done_here() -> None:
    """On this tree every module is in its new home (the script's --check is in test_imports)."""
    assert all((REPO / rooms.path_of(new)).is_file() for new in NEW)
    assert not any((REPO / rooms.path_of(old)).is_file() for old in OLD)
