"""`sidecar.settings`: the environment read once into typed settings, and no other runtime
module reading it (a source scan), with the few named exceptions where an environment is
handed to something else rather than read for the sidecar's own behaviour."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sidecar.settings import VARIABLES, HttpTuning, Settings
from tests.conftest import REPO

RUNTIME = REPO / "sidecar"
# Where `os.environ` may still appear, and why (besides the settings, each builds a child
# process's environment: never a setting of the sidecar's own).
ALLOWED = {
    "sidecar/settings.py": "the one reader",
    "sidecar/upstream/spawn.py": "a stdio upstream's environment is built from the live one and passed to the child",
    "sidecar/examples/demo.py": "the demo starts the sidecar as a child with the bridge switch in its environment",
    "sidecar/entry.py": "before msgspec loads, the early answer asks whether traces are exported "
                        "(sidecar.stdin_ahead.otlp_export_wanted, held to the settings' answer by a test)",
}


def _environment_uses(path: Path) -> list[int]:
    """Lines of `path` that touch the process environment (`os.environ`, `os.getenv`,
    `from os import environ`), read from its syntax tree: comments and words do not count."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os" \
                and node.attr in ("environ", "getenv", "environb", "putenv"):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os" \
                and any(alias.name in ("environ", "getenv", "environb") for alias in node.names):
            lines.append(node.lineno)
    return sorted(lines)


def test_no_runtime_module_reads_the_environment_but_the_settings() -> None:
    found = {}
    for path in sorted(RUNTIME.rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        uses = _environment_uses(path)
        if uses and relative not in ALLOWED:
            found[relative] = uses
    assert not found, f"read the environment outside sidecar.settings: {found}"


def test_the_exceptions_are_still_needed() -> None:
    """An allowed module that no longer touches the environment leaves the list."""
    assert all(_environment_uses(REPO / path) for path in ALLOWED), \
        [path for path in ALLOWED if not _environment_uses(REPO / path)]


def test_the_scan_sees_every_form(tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    source.write_text("import os\nfrom os import environ\na = os.environ.get('X')\nb = os.getenv('Y')\n"
                      "# os.environ in a comment\nc = 'os.environ in words'\n", encoding="utf-8")
    assert _environment_uses(source) == [2, 3, 4]


def test_every_variable_read_by_name_is_on_the_reference_page() -> None:
    page = (REPO / "docs" / "reference.md").read_text(encoding="utf-8")
    missing = [name for name, *_ in VARIABLES if f"`{name}`" not in page]
    assert not missing, missing


def test_settings_are_a_copy_taken_once() -> None:
    environ = {"OMB_LOG_LEVEL": "DEBUG", "OMB_SIDECAR_SEMANTIC": "off", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}
    settings = Settings.read(environ)
    environ["OMB_LOG_LEVEL"] = "ERROR"  # a later change is not seen
    assert settings.log_level == "DEBUG" and settings.environ["OMB_LOG_LEVEL"] == "DEBUG"
    assert not settings.semantic and settings.tracing and not settings.service_named
    with pytest.raises(TypeError):
        settings.environ["X"] = "y"  # type: ignore[index]
    secret = Settings.read({"TOKEN": "s3cret-value-of-the-operator"})
    assert "s3cret" not in repr(secret) and "s3cret" not in str(secret.environ)  # a logged setting shows no value


@pytest.mark.parametrize(("environ", "wanted"), [
    ({}, False),
    ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://x"}, True),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "TRUE"}, False),
])
def test_tracing_is_wanted_only_with_an_endpoint_and_not_disabled(environ: dict[str, str], wanted: bool) -> None:
    assert Settings.read(environ).tracing is wanted


def test_folders_follow_the_xdg_rules() -> None:
    home = {"HOME": "/home/u"}
    assert Settings.read(home).cache_dir == Path("/home/u/.cache/omb-sidecar")
    assert Settings.read(home).state_dir == Path("/home/u/.local/state/omb-sidecar")
    relative = Settings.read({**home, "XDG_CACHE_HOME": "rel", "XDG_STATE_HOME": "rel"})  # not absolute: ignored
    assert relative.cache_dir == Path("/home/u/.cache/omb-sidecar")
    assert relative.state_dir == Path("/home/u/.local/state/omb-sidecar")
    chosen = Settings.read({**home, "XDG_CACHE_HOME": "/c", "OMB_SIDECAR_CACHE_DIR": "/v"})
    assert chosen.cache_dir == Path("/v")
    assert Settings.read({**home, "XDG_CACHE_HOME": "/c"}).cache_dir == Path("/c/omb-sidecar")


def test_http_limits_keep_only_positive_numbers_and_say_what_they_ignored() -> None:
    tuning = HttpTuning.read({"OMB_HTTP_BODY_BYTES": "1024", "OMB_HTTP_MAX_SESSIONS": "-3",
                              "OMB_HTTP_DRAIN_SECONDS": "soon", "OMB_HTTP_ALLOWED_HOSTS": "a.example, ,b.example"})
    assert tuning.body_bytes == 1024 and tuning.max_sessions is None and tuning.drain_seconds is None
    assert tuning.allowed_hosts == ("a.example", "b.example")
    assert tuning.notes == ("OMB_HTTP_DRAIN_SECONDS ignored: it must be a number",)


def test_the_http_front_takes_its_limits_from_the_settings(tmp_path: Path) -> None:
    from sidecar.front.http.listener import FrontSettings

    settings = Settings.read({"TOK": "0123456789abcdef-token", "OMB_HTTP_HEADER_SECONDS": "2.5",
                              "OMB_HTTP_MAX_SESSIONS": "3"})
    front = FrontSettings.chosen("127.0.0.1:0", token_env="TOK", settings=settings)
    assert front.token == "0123456789abcdef-token"
    assert (front.header_seconds, front.max_sessions, front.body_seconds) == (2.5, 3, FrontSettings.body_seconds)


def test_a_running_sidecar_reads_its_environment_once() -> None:
    """The CLI installs one `Settings`: a module asking later gets that copy, even after
    the process environment changed."""
    code = ("import os, sys\n"
            "from sidecar.settings import Settings, process_settings, use_settings\n"
            "use_settings(Settings.read())\n"
            "os.environ['OMB_SIDECAR_CACHE_DIR'] = '/elsewhere'\n"
            "from sidecar.catalog.search.vectors import cache_dir\n"
            "print(cache_dir())\n")
    env = {**os.environ, "OMB_SIDECAR_CACHE_DIR": "/first"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=str(REPO),
                         env=env, timeout=60).stdout
    assert out.strip() == "/first"
