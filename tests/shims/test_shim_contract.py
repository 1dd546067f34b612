"""The shims depend on the sidecar's command-line contract, not on its internals: the only
sidecar module they import is `sidecar.config` (to validate what they write), and only
inside the function that does it."""

from __future__ import annotations

import ast
from pathlib import Path

SHIMS = Path(__file__).resolve().parents[2] / "shims"


def sidecar_imports(path: Path) -> list[tuple[str, bool]]:
    """(module, imported at module level) for every `sidecar...` import in a file."""
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    found: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
            [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        found += [(name, id(node) in top) for name in names if name == "sidecar" or name.startswith("sidecar.")]
    return found


def test_shims_import_only_the_config_of_the_sidecar_and_lazily() -> None:
    seen = {str(p.relative_to(SHIMS)): sidecar_imports(p) for p in SHIMS.rglob("*.py")}
    assert seen and all(module == "sidecar.config" and not top for found in seen.values() for module, top in found), seen
