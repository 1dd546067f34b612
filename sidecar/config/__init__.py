"""The config contract (SPEC §8): one JSON file in, typed, validated settings out.

Owns: reading the file, checking every key with its path, the environment overrides
(`OMB_MCP_RESULT_BUDGET`, `OMB_AGENTS_TOOL_BRIDGE`), and the list of secret values the
log redactor must hide. Refuses: unknown keys (reported, ignored), bad values (fatal in
the top-level sections, a skipped entry under `mcpServers`).

Beside it: `rules` (the pure checks a server entry must pass wherever a config is read,
imported or edited), `bots` (a gateway config cut for one bot) and `file` (the file on
disk: a missing or empty one named as such, with the commands that make one, and where
what the sidecar learns is kept when `data.folder` is not set).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import msgspec

from sidecar.config import rules
from sidecar.config.file import empty_config_words, missing_config_words, packaged_state_folder, read_config_bytes
from sidecar.errors import ConfigError
from sidecar.settings import process_settings

__all__ = [
    "Audit",
    "Console",
    "Grants",
    "Policy",
    "PolicyRule",
    "Classify",
    "Bot",
    "Budgets",
    "Data",
    "Face",
    "Features",
    "Gateway",
    "GatewayBot",
    "BotValues",
    "Health",
    "Metrics",
    "Store",
    "Organization",
    "OAuthApp",
    "OAuthStore",
    "Selection",
    "ServerConfig",
    "SidecarConfig",
    "empty_config_words",
    "load_config",
    "missing_config_words",
    "read_config_bytes",
    "model_is_local",
    "parse_config",
    "parse_server",
    "placed",
]

log = logging.getLogger(__name__)

Transport = Literal["stdio", "http", "sse"]
LayoutName = Literal["auto", "full", "bridged", "trio", "cap", "compact"]


class Selection(msgspec.Struct, rename="camel", frozen=True):
    servers: list[str] | None = None
    tools: list[str] | None = None


class Bot(msgspec.Struct, rename="camel", frozen=True):
    id: str = "bot"
    engine: str = "claude"
    model_url: str | None = None
    selection: Selection | None = None


class Features(msgspec.Struct, rename="camel", frozen=True):
    agents_tool_bridge: bool = False
    compact_listing: bool = False  # list whole tools by description and signature (issue 25)


class Budgets(msgspec.Struct, rename="camel", frozen=True):
    result_chars: int = 8000
    held_bytes_per_server: int = 64 * 1024 * 1024
    tool_cap: int = 128
    binary_bytes: int = 1024 * 1024  # images, audio, blobs pass up to this; beyond, a note
    query_seconds: float = 5.0  # one query_result, at most
    query_depth: int = 40  # nesting of a query expression, at most
    tool_description_chars: int = 64 * 1024  # one tool's description, at most; the rest is cut
    tool_schema_bytes: int = 64 * 1024  # one tool's encoded inputSchema/outputSchema, at most


class Grants(msgspec.Struct, rename="camel", frozen=True):
    """Allow- and deny-lists of tool-name patterns (`alias__tool`); `*` is any run of characters."""

    allow: list[str] | None = None  # None: everything the selection leaves
    deny: list[str] = []


RuleAction = Literal["allow", "deny", "confirm"]
RiskLevel = Literal["safe", "review", "high"]


class Classify(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Which argument carries what: `{"argument": "command", "as": "shell"}` (issue 27)."""

    argument: str
    kind: Literal["shell"] = msgspec.field(default="shell", name="as")


class PolicyRule(msgspec.Struct, rename="camel", frozen=True):
    """A tool pattern, and optionally what the call's arguments must show (issue 27): a
    `when` condition (JMESPath over the arguments, compiled when the gate is built) or a
    `classify` rule whose `levels` map the rated risk to an action."""

    tool: str  # a pattern as in Grants
    action: RuleAction | None = None  # required unless `classify` is given
    reason: str = ""
    when: str | None = None
    classify: Classify | None = None
    levels: dict[RiskLevel, RuleAction] | None = None  # with `classify`; unnamed levels keep their default
    label: str = ""  # a short name for the record and audit line

    def __post_init__(self) -> None:
        if self.classify is None and self.action is None:
            raise ValueError("a rule needs `action` (or `classify` with `levels`)")
        if self.classify is None and self.levels is not None:
            raise ValueError("`levels` belongs to a rule with `classify`")
        if self.classify is not None and self.action is not None:
            raise ValueError("a `classify` rule takes its actions from `levels`, not `action`")
        if self.when is not None and not self.when.strip():
            raise ValueError("`when` is empty")

    @property
    def reads_arguments(self) -> bool:
        return self.when is not None or self.classify is not None


class Policy(msgspec.Struct, rename="camel", frozen=True):
    rules: list[PolicyRule] = []  # first match wins
    hook: str | None = None  # "module:function", loaded at start
    hook_timeout_seconds: float = 5.0
    require_confirmation: bool = False  # consequential calls need an approval (the hook)
    # Confirmation the gate asks of the person (issue 16)
    confirm_seconds: float = 120.0  # how long a person has to answer; no answer denies
    confirm_state_seconds: float = 300.0  # lifetime of a 2026-07-28 sealed confirmation state
    confirm_key_env: str | None = None  # a variable holding the sealing key (base64, 32 bytes); else one per process


class Audit(msgspec.Struct, rename="camel", frozen=True):
    file: str | None = None  # JSON lines; none: no audit file
    max_bytes: int = 10 * 1024 * 1024
    keep: int = 3


class Face(msgspec.Struct, rename="camel", frozen=True):
    """What the engine sees as one server: its registration name and layout."""

    name: str = "omb"
    layout: LayoutName = "auto"
    page_size: int = 1000
    # How long (from start) a `tools/list` may wait for upstreams still on their first
    # start. The default stays inside Claude Code's ~2 s start window; 0 answers at once
    # (upstreams that come later are announced with list_changed); a client that lists
    # only once (Codex, the Inspector CLI) wants as long as its own start timeout.
    list_wait_seconds: float = 1.5
    start_timeout_seconds: float = 8.0
    # A face with exactly one upstream may show its tools and prompts by their own names.
    bare_names: bool = False


class Organization(msgspec.Struct, rename="camel", frozen=True):
    """An organization's policy: with custom servers off, only approved names/addresses start."""

    name: str = ""
    custom_servers: bool = True
    approved: list[str] = []

    def admits(self, server: ServerConfig) -> bool:
        if self.custom_servers or server.builtin:
            return True
        return rules.approved(server.alias, server.url, self.approved)


class Data(msgspec.Struct, rename="camel", frozen=True):
    """Where the sidecar keeps what it learns (server health); default: the config's folder, or
    the user's state folder for a config inside an installed package (`file`)."""

    folder: str | None = None


class OAuthApp(msgspec.Struct, rename="camel", frozen=True):
    """A URL server's sign-in settings (`mcpServers.X.oauth`); every key is optional."""

    client_id: str | None = None  # an app registered in advance: never register one
    client_secret: str | None = None  # write-only like a header value; only the token endpoint gets it
    scopes: str | None = None  # space-separated; replaces the advertised scopes
    grant: Literal["authorization_code", "client_credentials"] = "authorization_code"
    private_key_file: str | None = None  # client_credentials with private_key_jwt (a PEM key)
    key_id: str | None = None  # the `kid` of that key, when the server wants one
    client_metadata_url: str | None = None  # an https Client ID Metadata Document
    issuer: str | None = None  # the one authorization server a configured secret or key is sent to
    # the port of the return address registered with the app (default: one fixed per server address)
    callback_port: Annotated[int, msgspec.Meta(ge=1024, le=65535)] | None = None


class OAuthStore(msgspec.Struct, rename="camel", frozen=True):
    """Where sign-in tokens are kept (top-level `oauth`): beside the config by default."""

    token_file: str | None = None
    key_file: str | None = None
    key_env: str | None = None  # an environment variable holding the base64 key instead


class Metrics(msgspec.Struct, rename="camel", frozen=True):
    """`GET /metrics` on the HTTP front (Prometheus text; the `[metrics]` extra)."""

    enabled: bool = False


class Health(msgspec.Struct, rename="camel", frozen=True):
    """The health schedule a long-lived front runs (seconds between checks)."""

    schedule: bool = True  # off: the HTTP front runs no checks of its own
    retry_failed_seconds: float = 30 * 60
    recheck_started_seconds: float = 6 * 60 * 60


class Console(msgspec.Struct, rename="camel", frozen=True):
    """The operator's page at `/console` on the HTTP front (off unless enabled)."""

    enabled: bool = False
    public_url: str | None = None  # https://…: where a browser reaches the console (sign-in comes back here)


class Store(msgspec.Struct, rename="camel", frozen=True):
    """Where held results live: in the process (no url), or in Redis shared by replicas."""

    url: str | None = None  # redis://host:port/db (rediss:// for TLS); its password is a secret
    prefix: str = "omb:"
    timeout_seconds: float = 2.0  # one store operation, at most
    ttl_seconds: float = 3600.0  # a shared held result lives this long (no session ends it)


class GatewayBot(msgspec.Struct, rename="camel", frozen=True):
    """One bot a shared gateway serves: its face at `/bots/<id>/mcp`, its own bearer."""

    id: str
    token_env: str  # the variable holding this bot's bearer token (never the token itself)
    engine: str = "claude"
    model_url: str | None = None
    selection: Selection | None = None

    def as_bot(self) -> Bot:
        return Bot(id=self.id, engine=self.engine, model_url=self.model_url, selection=self.selection)


class Gateway(msgspec.Struct, rename="camel", frozen=True):
    """One HTTP front for many bots: a face each, nothing shared by accident."""

    bots: list[GatewayBot] = []
    box_root: str | None = None  # boxed mode: `<boxRoot>/<bot id>` is each bot's own folder


class BotValues(msgspec.Struct, rename="camel", frozen=True):
    """A server's env and header values for one bot (merged over the entry's own)."""

    env: dict[str, str] = {}
    headers: dict[str, str] = {}


class ServerConfig(msgspec.Struct, rename="camel", frozen=True):
    """One upstream entry, in the shape Claude Code, Cursor and Claude Desktop write."""

    alias: str = ""
    type: Transport = "stdio"
    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = {}
    enabled: bool = True
    builtin: bool = False
    always_listed: list[str] = []
    direct_only: list[str] = []
    start_timeout_seconds: float | None = None
    # The gate, per upstream
    result_chars: int | None = None  # overrides budgets.resultChars for this upstream
    consequential: list[str] = []  # tool names whose calls have real side effects
    trust_destructive_hint: bool = False  # treat `destructiveHint: true` as consequential
    call_deadline_seconds: float | None = None  # none by default: engines set their own
    max_message_bytes: int | None = None  # one message from this upstream, at most (default: the line cap)
    # Pinned definitions (issue 16): "hold", "warn" or "off"; unset: "off" for builtin, else "hold"
    pinning: Literal["hold", "warn", "off"] | None = None
    oauth: OAuthApp | None = None  # sign-in settings for a URL server
    # One gateway, many bots
    bot: str | None = None  # mounted only for this bot's face
    per_bot: dict[str, BotValues] = {}  # bot id -> its own env and header values

    @property
    def pinning_policy(self) -> Literal["hold", "warn", "off"]:
        return self.pinning or ("off" if self.builtin else "hold")

    def secrets(self) -> list[str]:
        """Values that must never be shown: env values, header values, and the credential
        inside a header value (`Bearer X` -> X; Basic -> user:pass and pass), every bot's."""
        envs = [self.env, *(v.env for v in self.per_bot.values())]
        headers = [self.headers, *(v.headers for v in self.per_bot.values())]
        found = [v for block in (*envs, *headers) for v in block.values() if v]
        for block in headers:
            for value in block.values():
                found += _credentials_in(value)
        if self.oauth is not None and self.oauth.client_secret:
            found.append(self.oauth.client_secret)
        return found


def _credentials_in(header_value: str) -> list[str]:
    scheme, _, credential = header_value.strip().partition(" ")
    credential = credential.strip()
    if not credential:
        return []
    found = [credential]
    if scheme.lower() == "basic":
        import base64  # only a Basic header pays for it

        try:
            pair = base64.b64decode(credential, validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return found
        found += [pair, pair.partition(":")[2]]
    return [f for f in found if f]


class SidecarConfig(msgspec.Struct, frozen=True):
    bot: Bot = Bot()
    features: Features = Features()
    budgets: Budgets = Budgets()
    face: Face = Face()
    grants: Grants = Grants()
    policy: Policy = Policy()
    audit: Audit = Audit()
    organization: Organization = Organization()
    data: Data = Data()
    oauth: OAuthStore = OAuthStore()
    metrics: Metrics = Metrics()
    health: Health = Health()
    store: Store = Store()
    gateway: Gateway = Gateway()
    console: Console = Console()
    servers: tuple[ServerConfig, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    source: str | None = None  # the file it was read from, when it was read from one

    def secrets(self) -> list[str]:
        found = [s for server in self.servers for s in server.secrets()]
        password = urlsplit(self.store.url).password if self.store.url else None
        return [*found, password] if password else found


_SECTIONS: dict[str, type[msgspec.Struct]] = {
    "bot": Bot,
    "features": Features,
    "budgets": Budgets,
    "face": Face,
    "grants": Grants,
    "policy": Policy,
    "audit": Audit,
    "organization": Organization,
    "data": Data,
    "oauth": OAuthStore,
    "metrics": Metrics,
    "health": Health,
    "store": Store,
    "gateway": Gateway,
    "console": Console,
}


def load_config(path: str | Path, environ: Mapping[str, str] | None = None) -> SidecarConfig:
    """Read and validate the config file at `path`."""
    raw = read_config_bytes(path)
    if not raw.strip():
        raise ConfigError("", empty_config_words(path))
    try:
        document = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise ConfigError("", f"config file is not valid JSON ({exc})") from None
    config = parse_config(document, process_settings().environ if environ is None else environ)
    return placed(config, str(path))


def placed(config: SidecarConfig, source: str) -> SidecarConfig:
    """The config as read from `source`: its state beside that file, unless the file sits
    inside an installed package (then in the user's state folder, see `file`)."""
    config = msgspec.structs.replace(config, source=source)
    if config.data.folder:
        return config
    folder = packaged_state_folder(source)
    return config if folder is None else msgspec.structs.replace(config, data=Data(folder=folder))


def parse_config(document: object, environ: Mapping[str, str]) -> SidecarConfig:
    """Validate a decoded config document; env overrides applied last."""
    if not isinstance(document, dict):
        raise ConfigError("$", "the config must be a JSON object")
    sections: dict[str, Any] = {}
    for key, value in document.items():
        if key in _SECTIONS:
            sections[key] = _convert(value, _SECTIONS[key], key)
        elif key != "mcpServers":
            log.warning("config: unknown key %s ignored", key)
    policy = sections.get("policy")
    if policy is not None and any(rule.when is not None for rule in policy.rules):
        from sidecar.config.conditions import check_conditions  # jmespath only for a config with conditions

        check_conditions([(rule.tool, rule.when) for rule in policy.rules])
    organization = sections.get("organization", Organization())
    servers, skipped = _parse_servers(document.get("mcpServers", {}), organization)
    config = SidecarConfig(**sections, servers=servers, skipped=skipped)
    rules.check_spent_states_shared(config.policy.confirm_key_env, config.store.url)
    return _apply_environment(config, environ)


def _convert(value: object, kind: type[msgspec.Struct], path: str) -> Any:
    if isinstance(value, dict):
        known = {f.encode_name for f in msgspec.structs.fields(kind)}
        for key in value:
            if key not in known:
                log.warning("config: unknown key %s.%s ignored", path, key)
        value = {k: v for k, v in value.items() if k in known}
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as exc:
        raise ConfigError(path, _located(str(exc), path)) from None


def _located(message: str, path: str) -> str:
    """Turn msgspec's '... - at `$.x`' into '... at `path.x`'."""
    return message.replace("`$", f"`{path}")


def _parse_servers(
    block: object, organization: Organization
) -> tuple[tuple[ServerConfig, ...], tuple[tuple[str, str], ...]]:
    if not isinstance(block, dict):
        raise ConfigError("mcpServers", "must be an object of alias -> server entry")
    servers: list[ServerConfig] = []
    skipped: list[tuple[str, str]] = []
    for alias, entry in block.items():
        try:
            server = parse_server(alias, entry)
        except ConfigError as exc:
            log.warning("config: server entry skipped: %s", exc.message)
            skipped.append((alias, exc.message))
            continue
        if not server.enabled:
            continue
        if not organization.admits(server):
            reason = f"not on {organization.name or 'the organization'}'s approved list (managed by the organization)"
            log.warning("config: server '%s' is not started: %s", alias, reason)
            skipped.append((alias, reason))
            continue
        servers.append(server)
    return tuple(servers), tuple(skipped)


def parse_server(alias: str, entry: object) -> ServerConfig:
    """One `mcpServers` entry, checked by the rules of `sidecar.config.rules`."""
    path = f"mcpServers.{alias}"
    rules.check_name(alias, path, builtin=isinstance(entry, dict) and entry.get("builtin") is True)
    if not isinstance(entry, dict):
        raise ConfigError(path, "a server entry must be an object")
    entry = dict(entry, alias=alias)
    if entry.get("type") == "streamable-http":
        entry["type"] = "http"
    if "url" in entry and "type" not in entry:
        entry["type"] = "http"
    server: ServerConfig = _convert(entry, ServerConfig, path)
    if server.type == "stdio" and not server.command:
        raise ConfigError(path, "a stdio server needs `command`")
    if server.type != "stdio" and not server.url:
        raise ConfigError(path, f"a {server.type} server needs `url`")
    rules.check_env(server.env, f"{path}.env")
    if server.url is not None:
        rules.check_url(server.url, f"{path}.url")
    rules.check_headers(server.headers, f"{path}.headers")
    for bot, values in server.per_bot.items():
        rules.check_env(values.env, f"{path}.perBot.{bot}.env")
        rules.check_headers(values.headers, f"{path}.perBot.{bot}.headers")
    return server


def _apply_environment(config: SidecarConfig, environ: Mapping[str, str]) -> SidecarConfig:
    budget = environ.get("OMB_MCP_RESULT_BUDGET")
    if budget is not None:
        if not budget.isdigit() or int(budget) <= 0:
            log.warning("OMB_MCP_RESULT_BUDGET ignored: it must be a positive whole number")
        else:
            budgets = msgspec.structs.replace(config.budgets, result_chars=int(budget))
            config = msgspec.structs.replace(config, budgets=budgets)
    bridge = environ.get("OMB_AGENTS_TOOL_BRIDGE")
    if bridge in ("0", "1"):
        features = msgspec.structs.replace(config.features, agents_tool_bridge=bridge == "1")
        config = msgspec.structs.replace(config, features=features)
    return config


def model_is_local(url: str | None) -> bool:
    """True for a model URL on this machine or its network: loopback, private and
    link-local addresses, `localhost` and `.local` names. No name is looked up. (The
    bridge switch's rule; the sidecar and the Claude shim both ask it here.)"""
    import ipaddress  # only when a model URL is judged: not on every start-up

    if not url:
        return False
    host = urlsplit(url if "//" in url else f"//{url}").hostname
    if not host:
        return False
    host = host.rstrip(".").lower()
    if host == "localhost" or host.endswith((".localhost", ".local")):
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_private or address.is_link_local or address.is_unspecified
