"""Run the sidecar as its `omb-sidecar` command does, leaving timed marks along its start-up.

The instrument of `bench.startup_timeline`, never part of the product: it is started as
`python bench/timeline_boot.py --config PATH` with `BENCH_TIMELINE` naming a file, and
appends one line per mark to it (`who<TAB>what<TAB>perf_counter<TAB>process CPU`). The
clock is CLOCK_MONOTONIC, the one the client and the upstreams read too.

It imports only `os`, `sys` and `time` before the sidecar (the installed command's script
imports `sys` alone), and patches each watched
module the moment it finishes loading (an import hook), so the order and cost of the
sidecar's own imports are the ones a real start has. The sidecar imported is the one the
interpreter has installed, unless `BENCH_TIMELINE_SOURCES=checkout` puts the checkout first.
"""

from __future__ import annotations

import os
import sys
import time

_FD = os.open(os.environ["BENCH_TIMELINE"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)


def mark(what: str) -> None:
    os.write(_FD, f"sidecar\t{what}\t{time.perf_counter():.6f}\t{time.process_time():.6f}\n".encode())


mark("interpreter and site up")


def _label(label: str, args: tuple[object, ...]) -> str:
    """`label`, with the upstream's alias when the first argument names one."""
    alias = getattr(args[0], "alias", None) if args else None
    return f"{label} {alias}" if isinstance(alias, str) else label


def _wrapped(function, label: str, ends: str):  # type: ignore[no-untyped-def]
    """`function` marking its begin and/or end (`ends`: 'begin', 'end' or 'both'). Named as
    `function` by hand: `functools` (with `collections`) would load before the first spawn,
    which a real start no longer does."""
    if function.__code__.co_flags & 0x80:  # CO_COROUTINE
        async def timed_async(*args, **kwargs):  # type: ignore[no-untyped-def]
            named = _label(label, args)
            if ends != "end":
                mark(f"{named} begins")
            try:
                return await function(*args, **kwargs)
            finally:
                if ends != "begin":
                    mark(f"{named} ends")
        return _named(timed_async, function)

    def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
        named = _label(label, args)
        if ends != "end":
            mark(f"{named} begins")
        try:
            return function(*args, **kwargs)
        finally:
            if ends != "begin":
                mark(f"{named} ends")
    return _named(timed, function)


def _named(wrapper, function):  # type: ignore[no-untyped-def]
    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(wrapper, attribute, getattr(function, attribute))
    wrapper.__wrapped__ = function
    return wrapper


# module -> (attribute path, label, which ends are marked)
WATCHED = {
    "sidecar.cli": [("_main", "sidecar.cli imported", "begin"), ("_load", "config read", "end"), ("_answer_waiting_initialize", "early answer", "end"),
                    ("run_async", "runtime imported, loop starting", "begin")],
    "sidecar.upstream.spawn": [("start_launch", "spawn", "both")],
    "sidecar.upstream.greeting": [("Greeting._digest", "greeting's listing digest", "both")],
    "sidecar.listing_snapshot": [("read_kept", "snapshot read", "both"), ("write_snapshot", "snapshot written", "both")],
    "sidecar.stdin_ahead": [("answer_ahead", "early answer before the CLI", "end"),
                            ("write_listing", "tools/list answered from the snapshot", "end")],
    "sidecar.app": [("run_stdio", "loop running", "begin")],
    "sidecar.upstream.stdio": [("spawn_child", "early child adopted", "both")],
    "sidecar.upstream.handshake": [("answer_of", "an answer line decoded as a frame", "both"),
                                   ("_decode_page", "a list page decoded", "both")],
    "sidecar.upstream.supervisor": [("handshake", "upstream initialize", "both"),
                                    ("read_listing", "upstream tools/list read+decoded", "both"),
                                    ("Upstream._prepared", "prepare (digests, scan, pins)", "both")],
    "sidecar.trust.screen": [("Trust._keep_first_sight", "pins write (thread)", "both")],
    "sidecar.trust.first_sight": [("prepare_listing", "prepare_listing", "both")],
    "sidecar.entry": [("_listing_ahead", "entry listing ahead", "both")],
    "sidecar.hub.face": [("Face.rebuild", "rebuild (screen, merge, listing)", "both"),
                         ("Face.wait_for_first_start", "tools/list held", "both"),
                         ("Face.tools_page", "page encoded", "end")],
}


def _patch(module: object, name: str) -> None:
    for path, label, ends in WATCHED.get(name, []):
        owner = module
        *parents, attribute = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        setattr(owner, attribute, _wrapped(getattr(owner, attribute), label, ends))


class _PatchAfterLoad:
    """A meta-path finder that lets the real finders load a watched module, then patches it."""

    def find_spec(self, name, path=None, target=None):  # type: ignore[no-untyped-def]
        if name not in WATCHED:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            spec = getattr(finder, "find_spec", lambda *a: None)(name, path, target)
            if spec is not None and spec.loader is not None:
                _wrap_loader(spec.loader, name)
                return spec
        return None


def _wrap_loader(loader, name: str) -> None:  # type: ignore[no-untyped-def]
    run = loader.exec_module

    def exec_module(module):  # type: ignore[no-untyped-def]
        run(module)
        _patch(module, name)

    loader.exec_module = exec_module


def main() -> None:
    sys.meta_path.insert(0, _PatchAfterLoad())
    sys.argv[0] = "omb-sidecar"
    from sidecar.entry import main as sidecar_main  # what the `omb-sidecar` command runs

    code = sidecar_main()
    mark("exit")
    raise SystemExit(code)


if __name__ == "__main__":
    sys.path.pop(0)  # bench/, which a launcher of the installed command does not have
    if os.environ.get("BENCH_TIMELINE_SOURCES") == "checkout":
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    main()
