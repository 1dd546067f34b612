"""Rooms by feature (issue 23): move the modules of the result budget, trust, confirmation
and the observers into one folder each, and rewrite every reference to their old homes.

    python tools/rooms.py            # move what is still in its old place, rewrite everything
    python tools/rooms.py --check    # change nothing; exit 1 and list what a run would change

Re-runnable: a module already in its new home is not moved again, and a reference already
written the new way is left as it is, so a second run changes nothing. Run it again after
merging branches that were written against the old layout: it then only rewrites what they
added (imports, dotted names in strings and docs, `sidecar/...py` paths).

What it rewrites, in the tracked files under sidecar/, sidecar_admin/, shims/, tests/,
bench/, docs/ and in mkdocs.yml, pyproject.toml and README.md:
- `from sidecar.gate import confirm` (a moved module imported by name from its parent)
  becomes `from sidecar.gate.confirmation import stage as confirm`;
- every dotted name `sidecar.gate.confirm[.anything]`, in code, strings and docs;
- every path `sidecar/gate/confirm.py` (and `gate/confirm.py` written without the
  `sidecar/` in front).
Nothing is left behind at an old path: no module that re-exports a moved one.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# old module -> new module (the one table; a new package gets its __init__ from ROOMS)
TABLE: dict[str, str] = {
    # the result budget: what a result may cost the model, and where an oversized one waits
    "sidecar.gate.budget": "sidecar.gate.budget.charge",
    "sidecar.gate.stages.charge": "sidecar.gate.budget.stage",
    "sidecar.gate.shape": "sidecar.gate.budget.shape",
    "sidecar.gate.held": "sidecar.gate.budget.held",
    "sidecar.gate.store": "sidecar.gate.budget.store",
    "sidecar.gate.query": "sidecar.gate.budget.query",
    "sidecar.gate.query_interpreter": "sidecar.gate.budget.query_interpreter",
    "sidecar.gate.query_meter": "sidecar.gate.budget.query_meter",
    # trust in what upstreams list: pins, the scan, the screen before the merge, shared pins
    "sidecar.catalog.pins": "sidecar.trust.pins",
    "sidecar.catalog.poison": "sidecar.trust.scan",
    "sidecar.catalog.poison_rules": "sidecar.trust.scan_rules",
    "sidecar.gate.first_sight": "sidecar.trust.first_sight",
    "sidecar.gate.trust": "sidecar.trust.screen",
    "sidecar.gate.shared_trust": "sidecar.trust.shared",
    # confirmation: the stage, the form a person reads, the sealed state of the stateless revision
    "sidecar.gate.confirm": "sidecar.gate.confirmation.stage",
    "sidecar.gate.confirm_text": "sidecar.gate.confirmation.form",
    "sidecar.gate.sealed": "sidecar.gate.confirmation.sealed",
    # observers: the audit file, the call's record, /metrics, traces, and their labels
    "sidecar.gate.audit": "sidecar.gate.observers.audit",
    "sidecar.gate.record": "sidecar.gate.observers.record",
    "sidecar.front.metrics": "sidecar.gate.observers.metrics",
    "sidecar.front.tracing": "sidecar.gate.observers.tracing",
    "sidecar.front.labels": "sidecar.gate.observers.labels",
}

# new package -> the docstring of its __init__ (written once, when the package is new)
ROOMS: dict[str, str] = {
    "sidecar.gate.budget": (
        "The result budget: what a result may cost the model, and what happens to one too big.\n\n"
        "`stage` is the chain's charge stage; `charge` judges a result's bytes against the budget;\n"
        "`shape` is the view the model sees of a payload too big to show whole; `held` keeps such\n"
        "payloads for `query_result`, and `store` shares them between replicas; `query` (with its\n"
        "interpreter and meter) answers `query_result` within its own limits.\n"
        "Nothing is imported here: each module loads when it is used (`query` needs jmespath)."),
    "sidecar.trust": (
        "Trust in what upstreams list, before the catalog merges it.\n\n"
        "`pins` is the pure judgement of a listing against what a person approved; `scan` (with\n"
        "its rules as data) finds text in a definition that speaks to the model; `first_sight`\n"
        "does the slow part of a big listing ahead, in slices, and `listing_words` reads a listing's\n"
        "words for the shadowing rule in one pass; `screen` is the I/O around the\n"
        "judgement (pins loaded and kept, each change said once); `shared` keeps pins and spent\n"
        "confirmation states in Redis for every replica (`store.url`). Below the gate and the\n"
        "mount plan, above the catalog: the mount plan and the admin commands read pins too.\n"
        "Nothing is imported here: `shared` loads redis only when a store is configured."),
    "sidecar.gate.confirmation": (
        "Confirmation: a consequential call is put to the person before the policy lets it run.\n\n"
        "`stage` asks (through the engine's elicitation) and remembers what was spent; `form` is\n"
        "the one rendering of what the person reads; `sealed` carries a pending confirmation in\n"
        "the stateless revision, where the sidecar cannot ask mid-call. The engine's side (which\n"
        "way this engine can be asked) is `sidecar.front.confirming`.\n"
        "Nothing is imported here: `sealed` loads cryptography only when a state is sealed."),
    "sidecar.gate.observers": (
        "Observation of the gate's calls: the audit file, the record of each ended call, the\n"
        "Prometheus `/metrics` families and the OpenTelemetry traces, and the one door their\n"
        "label values pass.\n\n"
        "`record` is called once per ended call by the chain and hands the call to the\n"
        "observers attached with `Gate.observe`; `metrics` and `tracing` attach from outside\n"
        "(the fronts), so the gate never imports them. Nothing is imported here: prometheus_client\n"
        "and opentelemetry load only with the module that needs them."),
}

ROOTS = ("sidecar", "sidecar_admin", "shims", "tests", "bench", "docs")
SINGLE_FILES = ("mkdocs.yml", "pyproject.toml", "README.md")
SUFFIXES = {".py", ".md", ".yml", ".yaml", ".toml", ".txt", ".json", ".cfg", ".ini", ".sh", ".ts"}
FROM_IMPORT = re.compile(r"^(?P<indent>[ \t]*)from (?P<parent>[\w.]+) import (?P<names>[\w ,]+?)(?P<tail>[ \t]*(#.*)?)$",
                         re.MULTILINE)


def path_of(module: str) -> Path:
    return Path(*module.split(".")).with_suffix(".py")


def _children(old: str) -> list[str]:
    """New modules that live under `old` as a package: `old.child` is then already new."""
    return sorted({new[len(old) + 1:].split(".")[0] for new in TABLE.values() if new.startswith(old + ".")})


def _dotted_pattern() -> re.Pattern[str]:
    alternatives = []
    for old in sorted(TABLE, key=len, reverse=True):
        children = _children(old)
        names = "|".join(children)
        guard = rf"(?!\.(?:{names})\b)(?! import (?:{names})\b)" if children else ""
        alternatives.append(rf"{re.escape(old)}(?![\w]){guard}")
    return re.compile(rf"(?<![\w.])(?:{'|'.join(alternatives)})")


def _path_pattern() -> tuple[re.Pattern[str], dict[str, str]]:
    paths = {path_of(old).as_posix(): path_of(new).as_posix() for old, new in TABLE.items()}
    short = {old.removeprefix("sidecar/"): new.removeprefix("sidecar/") for old, new in paths.items()}
    every = {**paths, **short}
    alternatives = "|".join(re.escape(p) for p in sorted(every, key=len, reverse=True))
    return re.compile(rf"(?<![\w/.])(?:{alternatives})(?![\w])"), every


DOTTED = _dotted_pattern()
PATHS, PATH_TABLE = _path_pattern()


def _from_import(match: re.Match[str]) -> str:
    """`from parent import a, b as c`: the names that are moved modules get lines of their own."""
    parent, indent, tail = match["parent"], match["indent"], match["tail"]
    kept: list[str] = []
    moved: list[str] = []
    for item in (part.strip() for part in match["names"].split(",")):
        name, _, alias = (w.strip() for w in item.partition(" as "))
        old = f"{parent}.{name}"
        if old not in TABLE or _is_new_child(parent, name):
            kept.append(item)
            continue
        new_parent, _, new_name = TABLE[old].rpartition(".")
        bound = alias or name
        moved.append(f"{indent}from {new_parent} import {new_name}" + ("" if bound == new_name else f" as {bound}"))
    if not moved:
        return match[0]
    lines = ([f"{indent}from {parent} import {', '.join(kept)}"] if kept else []) + moved
    lines[0] += tail
    return "\n".join(lines)


def _is_new_child(parent: str, name: str) -> bool:
    """`from sidecar.gate.budget import stage` names a new module, not the old `budget`."""
    return f"{parent}.{name}" in TABLE.values()


def rewrite(text: str) -> str:
    text = FROM_IMPORT.sub(_from_import, text)
    text = DOTTED.sub(lambda m: TABLE[m[0]], text)
    return PATHS.sub(lambda m: PATH_TABLE[m[0]], text)


OWN_TEST = "tests/test_rooms_script.py"


def tracked_files() -> Iterable[Path]:
    listed = subprocess.run(["git", "ls-files", "--", *ROOTS, *SINGLE_FILES], cwd=REPO, check=True,
                            capture_output=True, text=True).stdout.split("\n")
    me = Path(__file__).resolve()
    for name in listed:
        path = REPO / name
        if name == OWN_TEST:  # its old names are test data, never references to rewrite
            continue
        if name and path.suffix in SUFFIXES and path.is_file() and path.resolve() != me:
            yield path


def move(check: bool) -> list[str]:
    """`git mv` each module still at its old path; the new packages get their __init__."""
    done: list[str] = []
    for package, doc in ROOMS.items():
        init = REPO / Path(*package.split(".")) / "__init__.py"
        if not init.exists():
            done.append(f"create {init.relative_to(REPO)}")
            if not check:
                init.parent.mkdir(parents=True, exist_ok=True)
                init.write_text(f'"""{doc}\n"""\n')
                subprocess.run(["git", "add", str(init)], cwd=REPO, check=True)
    for old, new in TABLE.items():
        source, target = REPO / path_of(old), REPO / path_of(new)
        if source.exists() and target.exists():
            raise SystemExit(f"both {path_of(old)} and {path_of(new)} exist: merge them by hand, then run again")
        if source.exists():
            done.append(f"git mv {path_of(old)} {path_of(new)}")
            if not check:
                target.parent.mkdir(parents=True, exist_ok=True)
                subprocess.run(["git", "mv", str(source), str(target)], cwd=REPO, check=True)
    return done


def rewrite_all(check: bool) -> list[str]:
    changed: list[str] = []
    for path in tracked_files():
        try:
            text = path.read_text()
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        new = rewrite(text)
        if new != text:
            changed.append(f"rewrite {path.relative_to(REPO)}")
            if not check:
                path.write_text(new)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a run would change something")
    args = parser.parse_args(argv)
    work = move(args.check) + rewrite_all(args.check)
    for line in work:
        print(line)
    if not work:
        print("rooms: nothing to move or rewrite")
    return 1 if args.check and work else 0


if __name__ == "__main__":
    sys.exit(main())
