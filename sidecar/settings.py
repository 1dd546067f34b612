"""The process environment, read once into typed settings.

Owns every environment variable the runtime reads: its name, its type, its default and
what it means (`VARIABLES`, the table the reference page mirrors). The entry point
(`sidecar.cli`) builds one `Settings` with `Settings.read()` before anything else runs
and passes it down through the composition root (`sidecar.hub.assemble.compose_face`);
no other runtime module reads `os.environ` (`tests/test_settings.py` scans for it).

Two kinds of variable:

- **Named here**: fixed names with a type (`OMB_LOG_LEVEL`, the `OMB_HTTP_*` limits,
  OpenTelemetry's switch, the search model's switch and cache folder, the state folder,
  glibc's mmap threshold). A value that does not parse is ignored with a note (`notes`),
  logged by whoever uses it, once logging is set up.
- **Named elsewhere**: variables the operator names in the config or on the command line
  (`--token-env`, `gateway.bots[].tokenEnv`, `policy.confirmKeyEnv`, a sign-in key's
  variable), the config's own overrides (`OMB_MCP_RESULT_BUDGET`, `OMB_AGENTS_TOOL_BRIDGE`,
  read by `sidecar.config` where the file's keys are checked) and the proxy variables
  (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`, either case). They are looked up in
  `environ`, a frozen copy taken at the same moment.

The one other reader is `sidecar.upstream.spawn`, which builds a stdio upstream's
environment from the live process environment: that environment is passed to a child,
never read for the sidecar's own behaviour (the bundled demo starts the sidecar itself as
a child the same way). `hand_to_libraries` writes the variables a native library reads
as it loads (the semantic model's thread counts), never reading them back.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import msgspec

__all__ = ["EnvironCopy", "HttpTuning", "Settings", "VARIABLES", "hand_to_libraries", "process_settings",
           "use_settings"]

log = logging.getLogger(__name__)

# (name, type, default, meaning): the variables read by name; the reference page lists each.
VARIABLES: tuple[tuple[str, str, str, str], ...] = (
    ("OMB_LOG_LEVEL", "DEBUG|INFO|WARNING|ERROR", "WARNING", "the stderr log level when --log-level is not given"),
    ("OMB_MCP_RESULT_BUDGET", "positive int", "(the file's)", "overrides budgets.resultChars (sidecar.config)"),
    ("OMB_AGENTS_TOOL_BRIDGE", "0|1", "(the file's)", "overrides features.agentsToolBridge (sidecar.config)"),
    ("OMB_SIDECAR_SEMANTIC", "off switch", "on", "0, off, false or no turns the [semantic] search model off"),
    ("OMB_SIDECAR_CACHE_DIR", "path", "$XDG_CACHE_HOME/omb-sidecar", "where search vectors are cached"),
    ("XDG_CACHE_HOME", "absolute path", "~/.cache", "the cache root when OMB_SIDECAR_CACHE_DIR is unset"),
    ("XDG_STATE_HOME", "absolute path", "~/.local/state", "the state root of a config inside a package"),
    ("HOME", "path", "(the user's)", "the home folder the XDG defaults sit under"),
    ("OMB_HTTP_BODY_BYTES", "positive number", "16777216", "the HTTP front's request body cap"),
    ("OMB_HTTP_MAX_SESSIONS", "positive number", "64", "the HTTP front's open sessions, at most"),
    ("OMB_HTTP_SESSION_IDLE_SECONDS", "positive number", "1800", "an idle HTTP session is closed after this"),
    ("OMB_HTTP_HEADER_SECONDS", "positive number", "10", "a connection's first headers must arrive within this"),
    ("OMB_HTTP_BODY_SECONDS", "positive number", "30", "a request body must arrive within this"),
    ("OMB_HTTP_DRAIN_SECONDS", "positive number", "10", "calls in flight may finish for this long at SIGTERM"),
    ("OMB_HTTP_ALLOWED_HOSTS", "comma list", "(none)", "more Host names the HTTP front accepts"),
    ("OMB_RELIST_SECONDS", "positive number", "60", "a 2026-07-28 server without subscriptions/listen is re-listed this often"),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "URL", "(unset)", "set (or the _TRACES_ one): traces are exported"),
    ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "URL", "(unset)", "as above, for traces only"),
    ("OTEL_SDK_DISABLED", "true", "(unset)", "true turns trace export off"),
    ("OTEL_SERVICE_NAME", "name", "omb-sidecar", "the service name on spans (else omb-sidecar)"),
    ("MALLOC_MMAP_THRESHOLD_", "glibc's", "(unset)", "set: the sidecar leaves glibc's mmap threshold alone"),
)
_OFF = ("0", "off", "false", "no")


def _positive(environ: Mapping[str, str], name: str, notes: list[str]) -> float | None:
    """A positive number from `name`; None when unset, or (with a note) when it is not one."""
    raw = environ.get(name, "")
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        notes.append(f"{name} ignored: it must be a number")
        return None
    return value if value > 0 else None


class HttpTuning(msgspec.Struct, frozen=True, kw_only=True):
    """The `OMB_HTTP_*` limits as given; None: the HTTP front's own default."""

    body_bytes: float | None = None
    max_sessions: float | None = None
    idle_seconds: float | None = None
    header_seconds: float | None = None
    body_seconds: float | None = None
    drain_seconds: float | None = None
    allowed_hosts: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # values ignored, in words (logged when the HTTP front starts)

    @classmethod
    def read(cls, environ: Mapping[str, str]) -> HttpTuning:
        notes: list[str] = []
        numbers = {key: _positive(environ, f"OMB_HTTP_{name}", notes) for key, name in (
            ("body_bytes", "BODY_BYTES"), ("max_sessions", "MAX_SESSIONS"), ("idle_seconds", "SESSION_IDLE_SECONDS"),
            ("header_seconds", "HEADER_SECONDS"), ("body_seconds", "BODY_SECONDS"),
            ("drain_seconds", "DRAIN_SECONDS"))}
        hosts = tuple(h for h in environ.get("OMB_HTTP_ALLOWED_HOSTS", "").split(",") if h.strip())
        return cls(**numbers, allowed_hosts=hosts, notes=tuple(notes))


class EnvironCopy(Mapping[str, str]):
    """A frozen copy of an environment whose repr names no value (it holds secrets)."""

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, str]) -> None:
        self._values = dict(values)

    def __getitem__(self, name: str) -> str:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"<the environment at start: {len(self._values)} variables>"


def _home(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("HOME") or Path.home())


def _xdg(environ: Mapping[str, str], name: str, fallback: Path) -> Path:
    value = environ.get(name, "")
    return Path(value) if os.path.isabs(value) else fallback


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """What the environment said at start, typed; `environ` keeps the copy for the
    variables named elsewhere (see the module's words)."""

    environ: Mapping[str, str] = msgspec.field(default_factory=lambda: EnvironCopy({}))
    log_level: str = "WARNING"
    http: HttpTuning = HttpTuning()
    tracing: bool = False  # an OTLP endpoint is set and the SDK is not disabled
    service_named: bool = False  # OTEL_SERVICE_NAME is set: spans keep the operator's name
    semantic: bool = True  # the [semantic] model may load (when installed)
    cache_dir: Path = Path.home() / ".cache" / "omb-sidecar"
    state_dir: Path = Path.home() / ".local" / "state" / "omb-sidecar"
    malloc_tuned: bool = False  # MALLOC_MMAP_THRESHOLD_ is set: glibc's own, left alone

    @classmethod
    def read(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings of `environ` (the process environment when None), copied once."""
        frozen = EnvironCopy(os.environ if environ is None else environ)
        home = _home(frozen)
        chosen_cache = frozen.get("OMB_SIDECAR_CACHE_DIR")
        return cls(
            environ=frozen,
            log_level=frozen.get("OMB_LOG_LEVEL", "WARNING"),
            http=HttpTuning.read(frozen),
            tracing=_tracing_wanted(frozen),
            service_named=bool(frozen.get("OTEL_SERVICE_NAME")),
            semantic=frozen.get("OMB_SIDECAR_SEMANTIC", "").strip().lower() not in _OFF,
            cache_dir=Path(chosen_cache) if chosen_cache else _xdg(frozen, "XDG_CACHE_HOME", home / ".cache") / "omb-sidecar",
            state_dir=_xdg(frozen, "XDG_STATE_HOME", home / ".local" / "state") / "omb-sidecar",
            malloc_tuned="MALLOC_MMAP_THRESHOLD_" in frozen,
        )


def _tracing_wanted(environ: Mapping[str, str]) -> bool:
    """OTLP export configured the standard way and not switched off (nothing of
    opentelemetry loads to answer it)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return bool(environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def hand_to_libraries(defaults: Mapping[str, str]) -> None:
    """Set variables a library loaded in this process reads as it loads (the semantic
    model's thread counts), unless the operator set them: written, never read back."""
    for name, value in defaults.items():
        os.environ.setdefault(name, value)


_process: Settings | None = None


def use_settings(settings: Settings) -> Settings:
    """Make `settings` the process's (the entry point does this once, first)."""
    global _process
    _process = settings
    return settings


def process_settings() -> Settings:
    """The settings the entry point gave (`use_settings`). Without an entry point (the
    sidecar used as a library: tests, benchmarks) the environment is read at each call,
    so a caller that changes it sees the change. Only for the leaves the composition root
    does not construct (an upstream transport's proxy lookup, the search cache, a config
    loaded without settings); everything the root builds is given its settings."""
    return _process if _process is not None else Settings.read()
