"""Shared fixtures: reference upstreams, sidecar configs, a raw JSON-lines driver, an SDK client.

What is here, by fixture name:

* `sdk_server_path`, `fault_server_path`: the scripted upstreams in tests/upstreams/.
* `sdk_server_entry(...)`, `fault_server_entry(...)`: build an `mcpServers` entry for them.
* `npm`: the Node reference programs from tests/npm/node_modules (server-everything and
  the MCP Inspector CLI); skips, saying why, when `npm install` has not been run there.
* `write_config(servers, bot=..., **top)`: writes a sidecar config (SPEC §8) into tmp_path.
* `sidecar_argv(config)`: the command line that starts the sidecar on stdio.
* `raw_sidecar(config)`: `async with raw_sidecar(cfg) as sc:` a `RawPeer` speaking raw JSON
  lines to `python -m sidecar --config cfg` (write any bytes, await frames by id).
* `raw_process(argv)`: the same driver for any command (used on the upstreams themselves).
* `sidecar_client(config, sampling=..., elicitation=..., roots=..., logging=...)`:
  `async with sidecar_client(cfg) as c:` an initialized `mcp.ClientSession` (`c.session`)
  over stdio, plus helpers that wait, bounded, for late tools (`c.wait_for_tools`).
* `read_events(path)`, `await wait_event(path, predicate)`: an upstream's own record of what
  it received (`--events` of sdk_server, `record=` of fault_server).

Every wait is bounded (`anyio.fail_after`) and event driven: nothing sleeps to synchronise.
Driven child processes run in their own process group; at the end stdin is closed, then
SIGTERM, then SIGKILL for the group, so nothing outlives a test.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

# The suite's sidecars search lexically: with the `[semantic]` extra installed every face with
# a search layout would load the sentence model (CPU, ~140 MB each). Its own tests turn it on.
os.environ.setdefault("OMB_SIDECAR_SEMANTIC", "0")

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
UPSTREAMS = TESTS / "upstreams"
NPM_DIR = TESTS / "npm"
NODE_MODULES = NPM_DIR / "node_modules"
EVERYTHING_JS = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
# The MCP Inspector CLI in two generations, two different client stacks:
#   v1: @modelcontextprotocol/inspector-cli 1.0.3 (TypeScript SDK 1.x), bin build/cli.js
#   v2: @modelcontextprotocol/inspector 2.12.0 (TypeScript SDK 2.x), bin clients/launcher/build/index.js
# v2 declares Node >= 22.19 in `engines`, yet its `--cli` mode runs on Node 20 (checked with
# tools/list, tools/call, resources/read, prompts/get); both take `--cli --method ... -- target`.
INSPECTORS = {
    "v1": NODE_MODULES / "@modelcontextprotocol" / "inspector-cli" / "build" / "cli.js",
    "v2": NODE_MODULES / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js",
}
INSPECTOR_JS = INSPECTORS["v1"]

# Variables a child may inherit from the test run; everything else must be given explicitly.
PASS_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ", "SYSTEMROOT")

DEFAULT_WAIT = 10.0  # seconds for a single expected frame
STARTUP_WAIT = 30.0  # seconds for upstreams (node, the mcp SDK) to come up on a loaded 2-core box


def memory_kib(pid: int, field: str) -> int:
    """One memory figure of a live process (`VmRSS`, `VmHWM`, ...) in KiB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: os.environ[k] for k in PASS_ENV if k in os.environ}
    env.setdefault("PATH", os.defpath)
    env["PYTHONUNBUFFERED"] = "1"
    if extra:
        env.update(extra)
    return env


def id_key(rid: Any) -> str:
    """A dict key that keeps 1, "1" and 1.0 apart (JSON-RPC ids are compared by type too)."""
    return json.dumps(rid, sort_keys=True)


# ---------------------------------------------------------------------------------------------
# Raw JSON-lines driver
# ---------------------------------------------------------------------------------------------


class FrameTimeout(AssertionError):
    """A bounded wait for a frame ran out; the message says what was awaited and what came."""


@dataclass
class RawPeer:
    """A child process spoken to in newline-delimited JSON, byte for byte.

    `frames` holds every JSON value the child wrote on stdout, in order; `bad_lines`
    the stdout lines that were not JSON; `stderr` the tail of its stderr.
    """

    process: anyio.abc.Process
    argv: list[str]
    stderr_cap: int = 1 << 20
    frames: list[Any] = field(default_factory=list)
    bad_lines: list[bytes] = field(default_factory=list)
    stderr_bytes: bytearray = field(default_factory=bytearray)
    stderr_total: int = 0
    stdout_closed: bool = False
    shutdown_grace: float = 5.0  # seconds between closing stdin and SIGTERM at the end
    _changed: anyio.Event = field(default_factory=anyio.Event)
    _next_id: int = 0
    _by_id: dict[str, list[dict]] = field(default_factory=dict)

    # ---- io tasks ---------------------------------------------------------------------

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        buf = bytearray()
        try:
            async for chunk in self.process.stdout:
                buf += chunk
                start = 0
                while True:
                    nl = buf.find(b"\n", start)
                    if nl < 0:
                        break
                    self._take_line(bytes(buf[start:nl]))
                    start = nl + 1
                del buf[:start]
                self._wake()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            if buf:
                self._take_line(bytes(buf))
            self.stdout_closed = True
            self._wake()

    def _take_line(self, line: bytes) -> None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line.strip():
            return
        try:
            frame = json.loads(line)
        except ValueError:
            self.bad_lines.append(line[:4096])
            return
        self.frames.append(frame)
        if isinstance(frame, dict) and "id" in frame and "method" not in frame:
            try:
                self._by_id.setdefault(id_key(frame["id"]), []).append(frame)
            except TypeError:
                pass

    async def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        try:
            async for chunk in self.process.stderr:
                self.stderr_total += len(chunk)
                self.stderr_bytes += chunk
                if len(self.stderr_bytes) > self.stderr_cap:
                    del self.stderr_bytes[: len(self.stderr_bytes) - self.stderr_cap]
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    # ---- writing ----------------------------------------------------------------------

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def stderr(self) -> str:
        return self.stderr_bytes.decode("utf-8", errors="replace")

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(data)

    async def send(self, frame: Any) -> None:
        """Send one JSON value as a line (any value: the driver does not check it)."""
        await self.send_bytes(json.dumps(frame, separators=(",", ":")).encode() + b"\n")

    async def notify(self, method: str, params: Any = None) -> None:
        frame: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            frame["params"] = params
        await self.send(frame)

    async def send_request(self, method: str, params: Any = None, *, id: Any = None) -> Any:
        """Send a request without waiting; returns its id."""
        rid = self.new_id() if id is None else id
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            frame["params"] = params
        await self.send(frame)
        return rid

    async def request(self, method: str, params: Any = None, *, id: Any = None, timeout: float = DEFAULT_WAIT) -> dict:
        """Send a request and return its response frame (result or error)."""
        rid = await self.send_request(method, params, id=id)
        return await self.response(rid, timeout=timeout)

    async def call(self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float = DEFAULT_WAIT,
                   meta: dict[str, Any] | None = None) -> dict:
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if meta:
            params["_meta"] = meta
        return await self.request("tools/call", params, timeout=timeout)

    async def respond(self, rid: Any, result: Any = None, *, error: dict[str, Any] | None = None) -> None:
        """Answer a request the child sent us (sampling, elicitation, roots, ping)."""
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
        if error is not None:
            frame["error"] = error
        else:
            frame["result"] = {} if result is None else result
        await self.send(frame)

    async def close_stdin(self) -> None:
        if self.process.stdin is not None:
            try:
                await self.process.stdin.aclose()
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                pass

    # ---- reading ----------------------------------------------------------------------

    def _describe(self, what: str, start: int) -> str:
        seen = self.frames[start:][-8:]
        return (
            f"{what}; {len(self.frames) - start} frame(s) since, last: {json.dumps(seen)[:2000]}; "
            f"stdout closed={self.stdout_closed}, exit={self.process.returncode}; "
            f"stderr tail: {self.stderr[-1500:]!r}"
        )

    async def wait_for(self, predicate: Callable[[Any], bool], *, timeout: float = DEFAULT_WAIT, start: int = 0,
                       what: str = "a matching frame") -> Any:
        """Return the first frame at index >= start that satisfies predicate, waiting for it."""
        index = start
        try:
            with anyio.fail_after(timeout):
                while True:
                    while index < len(self.frames):
                        frame = self.frames[index]
                        index += 1
                        try:
                            if predicate(frame):
                                return frame
                        except (KeyError, TypeError, AttributeError):
                            pass
                    if self.stdout_closed:
                        raise FrameTimeout(self._describe(f"stdout closed while waiting for {what}", start))
                    await self._changed.wait()
        except TimeoutError:
            raise FrameTimeout(self._describe(f"no {what} within {timeout}s", start)) from None

    async def changed(self) -> None:
        """Wait until the child writes something more (or closes stdout)."""
        await self._changed.wait()

    def responses_to(self, rid: Any) -> list[dict]:
        """Every response (result or error) the child sent for this id, in order."""
        return list(self._by_id.get(id_key(rid), ()))

    async def response(self, rid: Any, *, timeout: float = DEFAULT_WAIT) -> dict:
        """The first response to this id, waiting for it (bounded)."""
        key = id_key(rid)
        mark = len(self.frames)
        try:
            with anyio.fail_after(timeout):
                while True:
                    found = self._by_id.get(key)
                    if found:
                        return found[0]
                    if self.stdout_closed:
                        raise FrameTimeout(self._describe(f"stdout closed while waiting for response to id {rid!r}",
                                                          mark))
                    await self._changed.wait()
        except TimeoutError:
            raise FrameTimeout(self._describe(f"no response to id {rid!r} within {timeout}s", mark)) from None

    async def notification(self, method: str, *, timeout: float = DEFAULT_WAIT, start: int = 0,
                           where: Callable[[dict], bool] | None = None) -> dict:
        return await self.wait_for(
            lambda f: isinstance(f, dict) and f.get("method") == method and "id" not in f and (where is None or where(f)),
            timeout=timeout,
            start=start,
            what=f"notification {method}",
        )

    async def peer_request(self, method: str, *, timeout: float = DEFAULT_WAIT, start: int = 0) -> dict:
        """A request the child sent us (it has an id and a method)."""
        return await self.wait_for(
            lambda f: isinstance(f, dict) and f.get("method") == method and "id" in f,
            timeout=timeout,
            start=start,
            what=f"request {method} from the child",
        )

    def notifications(self, method: str | None = None) -> list[dict]:
        return [
            f for f in self.frames
            if isinstance(f, dict) and "method" in f and "id" not in f and (method is None or f["method"] == method)
        ]

    async def initialize(self, *, capabilities: dict[str, Any] | None = None, protocol: str = "2025-11-25",
                         client_info: dict[str, Any] | None = None, timeout: float = DEFAULT_WAIT) -> dict:
        """The MCP handshake: initialize, then notifications/initialized. Returns the result."""
        resp = await self.request(
            "initialize",
            {
                "protocolVersion": protocol,
                "capabilities": capabilities or {},
                "clientInfo": client_info or {"name": "raw-test-driver", "version": "0"},
            },
            timeout=timeout,
        )
        assert "result" in resp, f"initialize failed: {resp}"
        await self.notify("notifications/initialized")
        return resp["result"]

    async def list_tools(self, *, timeout: float = DEFAULT_WAIT) -> list[dict]:
        """Every tool, following nextCursor."""
        tools: list[dict] = []
        cursor = None
        while True:
            resp = await self.request("tools/list", {"cursor": cursor} if cursor else {}, timeout=timeout)
            assert "result" in resp, f"tools/list failed: {resp}"
            tools += resp["result"]["tools"]
            cursor = resp["result"].get("nextCursor")
            if not cursor:
                return tools

    async def wait_for_tools(self, names: Iterable[str], *, timeout: float = STARTUP_WAIT) -> list[dict]:
        """List tools until every name is there, re-listing on each tools/list_changed."""
        wanted = set(names)
        tools: list[dict] = []
        try:
            with anyio.fail_after(timeout):
                while True:
                    mark = len(self.frames)
                    tools = await self.list_tools()
                    if wanted <= {t["name"] for t in tools}:
                        return tools
                    await self.notification("notifications/tools/list_changed", start=mark, timeout=timeout)
        except (TimeoutError, FrameTimeout):
            missing = wanted - {t["name"] for t in tools}
            raise FrameTimeout(
                f"tools {sorted(missing)} not listed within {timeout}s; listed: {sorted(t['name'] for t in tools)}; "
                f"stderr tail: {self.stderr[-1500:]!r}"
            ) from None

    async def wait_exit(self, timeout: float = DEFAULT_WAIT) -> int:
        with anyio.fail_after(timeout):
            return await self.process.wait()

    async def shutdown(self, grace: float | None = None) -> None:
        """Close stdin, wait; then SIGTERM; then SIGKILL the whole process group."""
        grace = self.shutdown_grace if grace is None else grace
        await self.close_stdin()
        with anyio.move_on_after(grace):
            await self.process.wait()
        if self.process.returncode is None:
            self.process.terminate()
            with anyio.move_on_after(3):
                await self.process.wait()
        if self.process.returncode is None:
            self.process.kill()
            with anyio.move_on_after(3):
                await self.process.wait()
        # Anything the child left behind in its group (upstreams it failed to reap) goes too.
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


@asynccontextmanager
async def open_raw(argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | str | None = None,
                   full_env: dict[str, str] | None = None) -> AsyncIterator[RawPeer]:
    """Start argv with pipes on stdin/stdout/stderr and drive it raw."""
    process = await anyio.open_process(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=full_env if full_env is not None else child_env(env),
        cwd=str(cwd or REPO),
        start_new_session=True,
    )
    peer = RawPeer(process=process, argv=list(argv))
    async with anyio.create_task_group() as tg:
        tg.start_soon(peer._read_stdout)
        tg.start_soon(peer._read_stderr)
        try:
            yield peer
        finally:
            with anyio.CancelScope(shield=True):
                await peer.shutdown()
            tg.cancel_scope.cancel()


# ---------------------------------------------------------------------------------------------
# mcp SDK client connected to the sidecar
# ---------------------------------------------------------------------------------------------


@dataclass
class SidecarClient:
    """An initialized `mcp.ClientSession` to the sidecar and what arrived on it."""

    session: Any
    init: Any
    stderr_path: Path
    notifications: list[Any] = field(default_factory=list)
    tools_changed: int = 0
    _changed: anyio.Event = field(default_factory=anyio.Event)

    async def _on_message(self, message: Any) -> None:
        import mcp_types

        self.notifications.append(message)
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self.tools_changed += 1
        self._changed.set()
        self._changed = anyio.Event()

    @property
    def stderr(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""

    async def list_all_tools(self) -> list[Any]:
        import mcp_types

        tools: list[Any] = []
        cursor = None
        while True:
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            res = await self.session.list_tools(params=params)
            tools += res.tools
            cursor = res.next_cursor
            if not cursor:
                return tools

    async def wait_for_tools(self, names: Iterable[str], *, timeout: float = STARTUP_WAIT) -> list[Any]:
        """List tools until every name is there; re-list on each notifications/tools/list_changed."""
        wanted = set(names)
        tools: list[Any] = []
        try:
            with anyio.fail_after(timeout):
                while True:
                    seen = self.tools_changed
                    tools = await self.list_all_tools()
                    if wanted <= {t.name for t in tools}:
                        return tools
                    while self.tools_changed == seen:
                        await self._changed.wait()
        except TimeoutError:
            have = {t.name for t in tools}
            raise AssertionError(
                f"tools {sorted(wanted - have)} not listed within {timeout}s "
                f"({self.tools_changed} list_changed seen); listed: {sorted(have)}; "
                f"sidecar stderr tail: {self.stderr[-1500:]!r}"
            ) from None

    async def wait_for_notification(self, kind: type, *, timeout: float = DEFAULT_WAIT,
                                    where: Callable[[Any], bool] | None = None) -> Any:
        index = 0
        try:
            with anyio.fail_after(timeout):
                while True:
                    while index < len(self.notifications):
                        n = self.notifications[index]
                        index += 1
                        if isinstance(n, kind) and (where is None or where(n)):
                            return n
                    await self._changed.wait()
        except TimeoutError:
            raise AssertionError(
                f"no {kind.__name__} within {timeout}s; got {[type(n).__name__ for n in self.notifications]}"
            ) from None


@asynccontextmanager
async def open_sidecar_client(
    argv: list[str],
    stderr_path: Path,
    *,
    sampling: Callable[..., Any] | None = None,
    elicitation: Callable[..., Any] | None = None,
    roots: Callable[..., Any] | None = None,
    logging: Callable[..., Any] | None = None,
    env: dict[str, str] | None = None,
    read_timeout: float = 60.0,
    init_timeout: float = DEFAULT_WAIT,
) -> AsyncIterator[SidecarClient]:
    warnings.simplefilter("ignore", DeprecationWarning)
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:], env=child_env(env), cwd=str(REPO))
    with open(stderr_path, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            holder: dict[str, SidecarClient] = {}

            async def on_message(message: Any) -> None:
                if "c" in holder:
                    await holder["c"]._on_message(message)

            async with ClientSession(
                read,
                write,
                read_timeout_seconds=read_timeout,
                sampling_callback=sampling,
                elicitation_callback=elicitation,
                list_roots_callback=roots,
                logging_callback=logging,
                message_handler=on_message,
            ) as session:
                try:
                    with anyio.fail_after(init_timeout):
                        init = await session.initialize()
                except TimeoutError:
                    raise AssertionError(
                        f"initialize not answered within {init_timeout}s; stderr: "
                        f"{stderr_path.read_text(errors='replace')[-1500:]!r}"
                    ) from None
                client = SidecarClient(session=session, init=init, stderr_path=stderr_path)
                holder["c"] = client
                yield client


# ---------------------------------------------------------------------------------------------
# Node reference programs
# ---------------------------------------------------------------------------------------------


@dataclass
class InspectorRun:
    returncode: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.stdout)
        except ValueError:
            raise AssertionError(
                f"Inspector CLI printed no JSON (exit {self.returncode}).\nstdout: {self.stdout[-2000:]}\n"
                f"stderr: {self.stderr[-2000:]}"
            ) from None


@dataclass
class NpmTools:
    node: str
    everything_js: Path
    inspectors: dict[str, Path]
    home: Path  # HOME for Inspector runs: v2 keeps a catalog file under ~/.mcp-inspector

    @property
    def inspector_js(self) -> Path:
        return self.inspectors["v1"]

    def everything_entry(self, env: dict[str, str] | None = None) -> dict[str, Any]:
        """An mcpServers entry running @modelcontextprotocol/server-everything on stdio."""
        entry: dict[str, Any] = {"command": self.node, "args": [str(self.everything_js), "stdio"]}
        if env:
            entry["env"] = env
        return entry

    async def inspector(self, target: list[str], method: str, *, tool_name: str | None = None,
                        tool_args: dict[str, Any] | None = None, extra: list[str] | None = None,
                        env: dict[str, str] | None = None, timeout: float = 60.0, cli: str = "v1") -> InspectorRun:
        """Run the Inspector CLI (`cli` = "v1" or "v2") once against a stdio command.

        The target goes after `--` so its own options (`--config`) are not taken by the
        Inspector; the last option before `--` is single-valued (`--method`) because a
        variadic one (`--tool-arg`) would swallow the target. The v1 CLI finds its own
        package.json relative to its working directory, hence cwd = its build/ folder.
        """
        js = self.inspectors.get(cli)
        if js is None:
            pytest.skip(f"Inspector CLI {cli} is not installed in {NODE_MODULES}")
        argv = [self.node, str(js), "--cli"]
        if tool_args:
            argv += ["--tool-arg", *(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in tool_args.items())]
        if tool_name:
            argv += ["--tool-name", tool_name]
        argv += list(extra or [])
        argv += ["--method", method, "--", *target]
        run_env = {"HOME": str(self.home), "MCP_CATALOG_PATH": str(self.home / "mcp-catalog.json"), **(env or {})}
        with anyio.fail_after(timeout):
            done = await anyio.run_process(
                argv,
                check=False,
                cwd=str(js.parent),
                env=child_env(run_env),
                stdin=subprocess.DEVNULL,
            )
        return InspectorRun(
            done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
        )


# ---------------------------------------------------------------------------------------------
# fixtures
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def sdk_server_path() -> Path:
    return UPSTREAMS / "sdk_server.py"


@pytest.fixture(scope="session")
def fault_server_path() -> Path:
    return UPSTREAMS / "fault_server.py"


@pytest.fixture(scope="session")
def npm(tmp_path_factory: pytest.TempPathFactory) -> NpmTools:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Node reference servers need Node 20+ (./dev test checks for npm)")
    missing = [p for p in (EVERYTHING_JS, INSPECTORS["v1"]) if not p.exists()]
    if missing:
        pytest.skip(
            f"{NODE_MODULES} is not installed ({', '.join(str(p.relative_to(NPM_DIR)) for p in missing)} missing): "
            f"run `cd tests/npm && npm install --no-audit --no-fund` (./dev test does it)"
        )
    inspectors = {name: js for name, js in INSPECTORS.items() if js.exists()}
    return NpmTools(node=node, everything_js=EVERYTHING_JS, inspectors=inspectors,
                    home=tmp_path_factory.mktemp("inspector-home"))


@pytest.fixture
def sdk_server_entry(sdk_server_path: Path) -> Callable[..., dict[str, Any]]:
    """`sdk_server_entry(name="sdk", prefix="", events=None, *extra_args, env=None)` -> mcpServers entry."""

    def make(name: str = "sdk", prefix: str = "", events: Path | str | None = None, *extra: str,
             env: dict[str, str] | None = None) -> dict[str, Any]:
        args = [str(sdk_server_path), "--name", name, "--prefix", prefix]
        if events is not None:
            args += ["--events", str(events)]
        args += list(extra)
        entry: dict[str, Any] = {"command": sys.executable, "args": args}
        if env:
            entry["env"] = env
        return entry

    return make


@pytest.fixture
def fault_server_entry(fault_server_path: Path) -> Callable[..., dict[str, Any]]:
    """`fault_server_entry("garbage=3", "crash-after=2", env=None)` -> mcpServers entry."""

    def make(*options: str, env: dict[str, str] | None = None) -> dict[str, Any]:
        entry: dict[str, Any] = {"command": sys.executable, "args": [str(fault_server_path), *options]}
        if env:
            entry["env"] = env
        return entry

    return make


DEFAULT_BOT = {"id": "test-bot", "engine": "claude", "selection": None}


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[..., Path]:
    """`write_config({"alias": entry, ...}, bot=None, name="sidecar.json", **top_level_keys)` -> path."""

    def write(servers: dict[str, Any], bot: dict[str, Any] | None = None, *, name: str = "sidecar.json",
              **top: Any) -> Path:
        config: dict[str, Any] = {"bot": dict(DEFAULT_BOT, **(bot or {})), **top, "mcpServers": servers}
        path = tmp_path / name
        path.write_text(json.dumps(config, indent=2))
        return path

    return write


@pytest.fixture(scope="session")
def sidecar_argv() -> Callable[..., list[str]]:
    """`sidecar_argv(config_path, *extra)` -> the stdio command line of the sidecar."""

    def argv(config: Path | str, *extra: str) -> list[str]:
        return [sys.executable, "-m", "sidecar", "--config", str(config), *extra]

    return argv


@pytest.fixture
def raw_process() -> Callable[..., Any]:
    """`async with raw_process(argv, env=None) as peer:` -> RawPeer on any command."""
    return open_raw


@pytest.fixture
def raw_sidecar(sidecar_argv: Callable[..., list[str]]) -> Callable[..., Any]:
    """`async with raw_sidecar(config, *extra_args, env=None) as sc:` -> RawPeer on the sidecar."""

    def start(config: Path | str, *extra: str, env: dict[str, str] | None = None) -> Any:
        return open_raw(sidecar_argv(config, *extra), env=env)

    return start


@pytest.fixture
def sidecar_client(sidecar_argv: Callable[..., list[str]], tmp_path: Path) -> Callable[..., Any]:
    """`async with sidecar_client(config, sampling=cb, elicitation=cb, roots=cb, logging=cb, env=None) as c:`.

    Callbacks follow the mcp SDK: sampling(ctx, CreateMessageRequestParams) -> CreateMessageResult,
    elicitation(ctx, ElicitRequestParams) -> ElicitResult, roots(ctx) -> ListRootsResult,
    logging(LoggingMessageNotificationParams). A capability is declared only when its callback is given.
    """
    counter = iter(range(1_000_000))

    def start(config: Path | str, *extra: str, **kw: Any) -> Any:
        stderr_path = tmp_path / f"sidecar-stderr-{next(counter)}.txt"
        return open_sidecar_client(sidecar_argv(config, *extra), stderr_path, **kw)

    return start


def read_event_file(path: Path | str) -> list[dict]:
    """An upstream's `--events` / `record=` file as a list (missing file: no events)."""
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


async def wait_until(check: Callable[[], Any], *, timeout: float = DEFAULT_WAIT, every: float = 0.01,
                     what: str = "the condition") -> Any:
    """Poll `check` (plain or async) until it returns something true, and return that.

    For facts only another process shows (its files, its log, its answers); a fact this
    process can be told of is awaited as an event instead. AssertionError naming `what`
    once `timeout` seconds pass without it.
    """
    try:
        with anyio.fail_after(timeout):
            while True:
                found = check()
                if isinstance(found, Awaitable):
                    found = await found
                if found:
                    return found
                await anyio.sleep(every)
    except TimeoutError:
        raise AssertionError(f"{what} did not come within {timeout}s") from None


async def await_event(path: Path | str, predicate: Callable[[dict], bool], *, timeout: float = DEFAULT_WAIT,
                      what: str = "a matching event") -> dict:
    """Wait (bounded) until an upstream's event file holds a matching event.

    The file is written by another process, so this polls it every 10 ms; use it only
    for facts that the wire does not show (an upstream saw a cancellation, its pid).
    """
    try:
        with anyio.fail_after(timeout):
            while True:
                for event in read_event_file(path):
                    if predicate(event):
                        return event
                await anyio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"no {what} in {path} within {timeout}s: {read_event_file(path)[-10:]}") from None


@pytest.fixture
def read_events() -> Callable[[Path], list[dict]]:
    """`read_events(path)` -> the upstream's recorded events."""
    return read_event_file


@pytest.fixture
def wait_event() -> Callable[..., Any]:
    """`await wait_event(path, predicate, timeout=10)` -> the first matching upstream event."""
    return await_event
