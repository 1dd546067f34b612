"""The one writer of the figure files the documentation includes, for every bench.

Owns the shape of `docs/generated/`: each bench writes one JSON file of raw figures,
`<bench>.json`, and the markdown table(s) rendered from it, `<bench>-*.md`, which the
pages include with `--8<--`. The JSON names the module that renders it (`written_by`:
that module's `render_docs(figures) -> {file name: markdown}`) and when and how it was
measured (`measured`: command, commit, date), so a test can render every JSON again and
compare, and so each table ends with the line saying where its figures come from.

Measures nothing: the benches measure, this module stamps, writes and renders.

    python -m bench.doc_files            # render every generated markdown again from its JSON
"""

from __future__ import annotations

import datetime
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["DOCS_GENERATED", "measured_line", "render_file", "stamp", "table", "write"]

REPO = Path(__file__).resolve().parents[1]
DOCS_GENERATED = REPO / "docs" / "generated"


def _commit() -> str:
    """The checkout's short commit, with `+` when files are changed (the figures then come
    from code a little past that commit)."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=30)
        return done.stdout.strip() if done.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+" if git("status", "--porcelain", "--untracked-files=no") else "")


def stamp(command: str, *, commit: str | None = None, date: str | None = None, note: str = "") -> dict[str, str]:
    """When and how figures were measured: now and this checkout, unless told (a conversion
    of an earlier run's figures names that run's commit and date, and says so in `note`)."""
    said = {"command": command, "commit": commit or _commit(),
            "date": date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    if date is None:  # measured now: the machine's load says how far to trust the times
        said["load"] = f"{os.getloadavg()[0]:.1f}"
    return {**said, **({"note": note} if note else {})}


def measured_line(measured: dict[str, str]) -> str:
    """The last line of every generated table: the command, the commit and the date."""
    line = f"Measured with `{measured['command']}` at commit `{measured['commit']}` on {measured['date']}"
    line += f" (load average {measured['load']})." if measured.get("load") else "."
    return line + (f" {measured['note']}" if measured.get("note") else "")


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A markdown table's lines."""
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(row) + " |" for row in rows)]


def page(writer: str, lines: list[str], measured: dict[str, str]) -> str:
    """One generated markdown file: a comment naming its writer, the lines, the measured line."""
    return "\n".join([f"<!-- Written by {writer} from its JSON in docs/generated/: do not edit by hand. -->", "",
                      *lines, "", measured_line(measured)]) + "\n"


def write(name: str, written_by: str, figures: dict[str, Any], folder: Path = DOCS_GENERATED) -> list[Path]:
    """Writes `<name>.json` (the figures, with `written_by`) and every markdown file its
    renderer makes from it; returns the paths written."""
    body = {"written_by": written_by, **{k: v for k, v in figures.items() if k != "written_by"}}
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / f"{name}.json"
    source.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n")
    return [source, *_write_rendered(source)]


def publish(module: str, name: str, result: Any, argv: list[str], folder: Path = DOCS_GENERATED) -> list[Path]:
    """What a bench's `--docs DIR` does: its `result`, stamped with the command that measured
    it (`python -m <module> <argv>`), written as `<name>.json` and its tables into DIR (the
    argument after `--docs`, else `folder`); returns the paths written."""
    if "--docs" in argv:
        folder = Path(argv[argv.index("--docs") + 1])
    figures = {"measured": stamp(f"python -m {module} " + " ".join(argv)), "result": result}
    return write(name, module, figures, folder)


def render_file(source: Path) -> dict[str, str]:
    """The markdown files a generated JSON renders to, by file name."""
    figures = json.loads(source.read_text())
    module = importlib.import_module(figures["written_by"])
    rendered: dict[str, str] = module.render_docs(figures)
    return rendered


def _write_rendered(source: Path) -> list[Path]:
    written = []
    for file_name, text in render_file(source).items():
        (source.parent / file_name).write_text(text)
        written.append(source.parent / file_name)
    return written


def main(argv: list[str] | None = None) -> int:
    """Renders every `*.json` in the folder (default docs/generated/) to its markdown again."""
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0]) if args else DOCS_GENERATED
    for source in sorted(folder.glob("*.json")):
        for path in _write_rendered(source):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
