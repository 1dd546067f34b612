"""What a plain stdio start imports before it serves (issue 23: start -> tools/list).

A real `python -m sidecar --config PATH` start over a stdio server: at the moment its
runtime is imported and its loop starts (the CLI's `run_async`), none of the modules
below is loaded, and a listing and a plain call load none of them either. Each is the
module of a way only some sessions take (confirmation, a 2026-07-28 round, tasks, a
server's questions, a frame to repair, a capped or compact layout, a held result, a query), or a library the start does without
(`typing_extensions` and `platform` for msgspec, OpenSSL for the loop). A change that pulls one back
onto the start path fails here; the ways themselves are run by their own tests, and the
lazy imports are checked below from fresh interpreters. The early path (the entry point up to
its `initialize` answer and its listing from the snapshot) is pinned whole: what it loads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

NOT_LOADED_AT_START = (
    "typing_extensions", "platform", "secrets", "base64", "argparse", "ssl", "_ssl",
    "sidecar.gate.confirmation", "sidecar.front.confirming", "sidecar.front.eras.relayed",
    "sidecar.front.eras.listen_resources", "sidecar.front.task_methods", "sidecar.front.task_bridge",
    "sidecar.catalog.layouts.cap", "sidecar.catalog.layouts.compact", "sidecar.gate.budget.query",
    "sidecar.gate.asked", "sidecar.upstream.input_required", "sidecar.hub.question_links", "sidecar.wire.repair",
)

# The start as `python -m sidecar` runs it; the CLI's `run_async` is wrapped as the CLI
# module loads (an import hook, so the order of the imports stays a real start's).
_BOOT = """
import sys
class Hook:
    def find_spec(self, name, path=None, target=None):
        if name != "sidecar.cli":
            return None
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module
        def exec_module(module):
            import gc
            held = not gc.isenabled()  # the collector as the CLI loads, and as the runtime starts
            run(module)
            start = module.run_async
            def ready(*args, **kwargs):
                open(out + ".gc", "w").write(f"{held} {gc.isenabled()}")
                open(out, "w").write(" ".join(sys.modules))
                return start(*args, **kwargs)
            module.run_async = ready
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, Hook())
out = sys.argv.pop(1)
import atexit
atexit.register(lambda: open(out + ".end", "w").write(" ".join(sys.modules)))
sys.argv[0] = "omb-sidecar"
from sidecar.entry import main
raise SystemExit(main())
"""


def _heavy(loaded: set[str]) -> list[str]:
    return sorted(m for m in loaded for lazy in NOT_LOADED_AT_START if m == lazy or m.startswith(lazy + "."))


async def test_a_plain_stdio_start_serves_without_the_modules_of_other_ways(tmp_path: Path) -> None:
    from tests.conftest import open_raw

    config = tmp_path / "sidecar.json"
    config.write_text(json.dumps({"mcpServers": {
        "notes": {"command": sys.executable, "args": [str(REPO / "sidecar" / "examples" / "notes.py")]}}}))
    ready = tmp_path / "modules.txt"
    async with open_raw([sys.executable, "-c", _BOOT, str(ready), "--config", str(config)]) as sc:
        await sc.initialize()
        await sc.wait_for_tools(["notes__search_notes"])
        answer = await sc.call("notes__search_notes", {"query": "milk"})
        assert "result" in answer, answer
    at_start = set(ready.read_text().split())
    assert "sidecar.app" in at_start and "asyncio" in at_start, "the runtime was not imported when it was read"
    assert not _heavy(at_start), f"loaded before the stdio runtime served: {_heavy(at_start)}"
    after_a_call = set(Path(f"{ready}.end").read_text().split())
    assert not _heavy(after_a_call), f"loaded by a listing and a plain call: {_heavy(after_a_call)}"
    # the collector held off while the CLI and the runtime load, and on again once the heap is settled
    assert Path(f"{ready}.gc").read_text().split() == ["True", "True"]


def _fresh(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=str(REPO)).stdout


def test_the_tasks_methods_load_when_first_asked_and_the_table_names_them_all() -> None:
    out = _fresh("import asyncio, sys; from sidecar.front.methods import METHODS, TASK_METHOD_NAMES; "
                 "before = 'sidecar.front.task_methods' in sys.modules; "
                 "from sidecar.front.task_methods import TASK_METHODS; "
                 "print(before, sorted(TASK_METHODS) == sorted(TASK_METHOD_NAMES), set(TASK_METHOD_NAMES) <= set(METHODS))")
    assert out.split() == ["False", "True", "True"]


def test_the_lazily_imported_names_resolve_from_a_fresh_interpreter() -> None:
    """Each module a start path function imports on first use, with the names it takes."""
    out = _fresh("from sidecar.front.confirming import caller_of, confirmer_for; "
                 "from sidecar.front.eras.relayed import relayed_round; "
                 "from sidecar.front.eras.listen_resources import watched_on_stateless; "
                 "from sidecar.catalog.layouts.cap import cap_warnings, fit_to_cap; "
                 "from sidecar.catalog.layouts.compact import compact_spec; "
                 "from sidecar.gate.budget.query import answer_query; "
                 "from sidecar.gate.budget.held import HeldStore; "
                 "from sidecar.wire.param_headers import header_value; "
                 "from sidecar.gate.asked import InputRefused; "
                 "from sidecar.hub.question_links import linked_session; "
                 "from sidecar.wire.repair import repair_frame; "
                 "h = HeldStore(1 << 20).hold(object(), 'a', 't', b'{}'); "
                 "print(h.startswith('h_'), header_value('caf\\u00e9').startswith('=?base64?'))")
    assert out.split() == ["True", "True"]


_LEAN = """
import sys
from sidecar.lean_libraries import load_libraries_lean as lean
print(lean(), "typing_extensions" in sys.modules, "platform" in sys.modules,
      type(sys.modules["textwrap"]).__name__, type(sys.modules["tokenize"]).__name__)
from typing import NotRequired, TypedDict
import msgspec, uuid
class Shape(TypedDict):
    a: int
    b: NotRequired[str]
class Point(msgspec.Struct):
    x: int
    y: "list[Point] | None" = None
print(msgspec.json.decode(b'{"a": 1}', type=Shape), msgspec.json.decode(b'{"x": 1, "y": [{"x": 2}]}', type=Point).y[0].x)
try:
    msgspec.json.decode(b'{"b": "x"}', type=Shape)
except msgspec.ValidationError:
    print("refused")
import platform, typing_extensions
print(uuid._LINUX == (platform.system() == "Linux"), hasattr(platform, "python_version"),
      msgspec.json.decode(msgspec.json.encode(uuid.UUID(int=7)), type=uuid.UUID).int)
class Doc(msgspec.Struct):
    '''  First line
      second line'''
import traceback
try:
    raise ExceptionGroup("both", [ValueError("inner")])
except ExceptionGroup:
    printed = traceback.format_exc()
print(repr(msgspec.json.schema(Doc)["$defs"]["Doc"]["description"]), "inner" in printed,
      type(sys.modules["textwrap"]).__name__)
import inspect
print(inspect.getsource(lean).startswith("def "), type(sys.modules["tokenize"]).__name__)
print(lean())
"""


def test_libraries_loaded_lean_still_do_all_they_did() -> None:
    """After `sidecar.lean_libraries`: msgspec (without `typing_extensions`) reads a
    TypedDict's required and optional keys and a struct's annotations; `uuid` (given a
    stand-in `platform`) knows the system as `platform` tells it; a schema's description
    is dedented and an exception group printed (the real `textwrap` loads then); a
    function's source is read (the real `tokenize` loads then); the modules kept out
    import as usual for whatever asks."""
    assert _fresh(_LEAN).split("\n")[:7] == [
        "True False False LoadedOnFirstUse LoadedOnFirstUse", "{'a': 1} 2", "refused", "True True 7",
        "'First line\\nsecond line' True module", "True module", "False"]


# The early path of a start whose listing snapshot is kept: from a bare interpreter (`-S`:
# no site, so no editable finder loading `re` and `enum` first), the modules loaded anew when
# the entry point writes the early `initialize` answer and the listing from the snapshot;
# the process ends there (the runtime, which needs site-packages, never loads).
_EARLY = """
import sys, os
before = set(sys.modules)
out = sys.argv.pop(1)
sys.argv[0] = "omb-sidecar"
write, writev = os.write, os.writev
def seen(fd, head):
    if fd == 1:
        what = "listing" if b'"tools":[' in head else "initialize"
        with open(out, "a") as into:
            into.write(what + " " + " ".join(sorted(set(sys.modules) - before)) + "\\n")
        if what == "listing":
            os._exit(0)
def noted(fd, data):
    done = write(fd, data)
    seen(fd, bytes(data[:200]))
    return done
def noted_parts(fd, parts):
    done = writev(fd, parts)
    seen(fd, b"".join(bytes(part[:200]) for part in parts)[:400])
    return done
os.write, os.writev = noted, noted_parts
from sidecar.entry import main
raise SystemExit(main())
"""
# What the early path loads, and nothing more of the sidecar: the config read, the spawns,
# the greetings, the early answers, the snapshot.
EARLY_SIDECAR = frozenset({
    "sidecar", "sidecar.entry", "sidecar.plain_json", "sidecar.collector", "sidecar.upstream",
    "sidecar.upstream.plain_config", "sidecar.upstream.spawn", "sidecar.upstream.greeting", "sidecar.stdin_ahead",
    "sidecar.listing_snapshot", "sidecar.wire", "sidecar.wire.plain_hello", "sidecar.wire.versions"})
# ... and of the standard library, beyond a bare interpreter's: the C scanner and encoder of
# `json`, the snapshot's digest and check, `select`, the collector and libc's mallopt. Not
# `json` and `re`, `typing`, `threading` with `functools` and `collections`, the `ctypes`
# package, msgspec or the runtime (each several ms of CPU on a small machine, competing with
# the upstreams' own start).
EARLY_LIBRARIES = frozenset({"__future__", "_blake2", "_ctypes", "_json", "gc", "select", "zlib"})


def test_the_early_answers_load_only_what_they_use(tmp_path: Path) -> None:
    from tests.conftest import child_env
    from tests.front.test_listing_snapshot import INITIALIZED, LIST, Folder, _init, _listed

    folder = Folder(tmp_path)
    _listed(folder)
    folder.kept()
    noted = tmp_path / "early.txt"
    read_end, write_end = os.pipe()
    os.write(write_end, b"".join(json.dumps(line).encode() + b"\n" for line in (_init(), INITIALIZED, LIST)))
    os.close(write_end)
    try:
        done = subprocess.run([sys.executable, "-S", "-c", _EARLY, str(noted), "--config", str(folder.config)],
                              stdin=read_end, capture_output=True, env=child_env(), cwd=str(REPO), timeout=60)
    finally:
        os.close(read_end)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    seen = {line.split()[0]: set(line.split()[1:]) for line in noted.read_text().splitlines()}
    assert set(seen) == {"initialize", "listing"}, seen  # both answered early
    assert seen["listing"] == EARLY_SIDECAR | EARLY_LIBRARIES, sorted(seen["listing"] ^ (EARLY_SIDECAR | EARLY_LIBRARIES))
    assert seen["initialize"] <= seen["listing"]
