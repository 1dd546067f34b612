"""Starting a stdio upstream's process, with no event loop and no config types needed.

Owns the command's launch: its own process group, an explicit environment (an
allow-list of the parent's variables plus the server's own, RELIABILITY rule 12), and a
death signal should the sidecar die without cleaning up. It imports only the standard
library, so the entry point (`sidecar.entry`) starts the upstreams a plain config names
before even the config module loads, and the CLI starts any others once the mount plan
is made; the supervisor then adopts each early process for its first start.

The death signal: `setpriv --pdeathsig TERM -- COMMAND` (util-linux) where it is
installed and knows the option; the process is then started with `os.posix_spawn` (a
`Spawned`: pipes from `os.pipe`, its own session, SIGPIPE and SIGXFSZ back to their
defaults, every other descriptor the sidecar could hand on closed), so an early start
never imports `subprocess` (about 4 ms of the first spawn's wait). Else (no setpriv, the
command not found, a `cwd`, which `os.posix_spawn` cannot set) `subprocess.Popen`, the
child asking for the death signal itself through `preexec_fn` when setpriv is missing.
Both give a `Process`.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # `typing` (2 ms to import) loads after the first spawn, not before
if TYPE_CHECKING:
    import signal as _signals
    from collections.abc import Iterable, Mapping
    from typing import IO, Any, NamedTuple, Protocol

    from sidecar.config import ServerConfig
    from sidecar.upstream.greeting import Greeting

    class _LaunchFields(NamedTuple):
        command: str
        args: tuple[str, ...]
        env: tuple[tuple[str, str], ...]  # sorted by name
        cwd: str | None

    class Process(Protocol):
        """A started upstream process as the sidecar uses it (`subprocess.Popen` or `Spawned`)."""

        @property
        def pid(self) -> int: ...

        @property
        def stdin(self) -> IO[bytes] | None: ...

        @property
        def stdout(self) -> IO[bytes] | None: ...

        @property
        def stderr(self) -> IO[bytes] | None: ...

        @property
        def returncode(self) -> int | Any: ...

        def poll(self) -> int | None: ...

        def wait(self, timeout: float | None = None) -> int: ...
else:
    # `signal`'s numbers without its enums, and the NamedTuple above without `collections`:
    # neither `enum` nor `collections` (about 5 ms together here) loads before the first spawn
    import _signal as _signals

    class _LaunchFields(tuple):
        __slots__ = ()
        _fields = ("command", "args", "env", "cwd")

        def __new__(cls, command, args, env, cwd):
            return tuple.__new__(cls, (command, args, env, cwd))

        def __getnewargs__(self):
            return tuple(self)

        def __repr__(self):
            return f"{type(self).__name__}(command={self[0]!r}, args={self[1]!r}, env={self[2]!r}, cwd={self[3]!r})"

        command = property(lambda self: self[0], doc="the command")
        args = property(lambda self: self[1], doc="its arguments")
        env = property(lambda self: self[2], doc="its own environment, sorted by name")
        cwd = property(lambda self: self[3], doc="its folder (None: the sidecar's)")

__all__ = ["INHERITED_VARIABLES", "Launch", "Spawned", "child_environment", "discard_early", "early_greetings",
           "keep_early", "start_early", "start_early_launch", "start_early_launches", "start_launch", "start_process", "stop_process",
           "started_early", "take_early"]

INHERITED_VARIABLES = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE",
    "TERM", "TMPDIR", "TZ", "SYSTEMROOT", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE",
    "SSL_CERT_DIR", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME",
    "VIRTUAL_ENV",
)
_PR_SET_PDEATHSIG = 1
_SETPRIV_PLACES = ("/usr/bin/setpriv", "/bin/setpriv")


class Launch(_LaunchFields):
    """What starts one stdio upstream: its command, arguments, own environment (sorted by
    name) and folder. Two entries with the same launch run the same process (an early one
    is adopted by it)."""

    __slots__ = ()

    @classmethod
    def of(cls, server: ServerConfig) -> Launch:
        assert server.command is not None
        return cls(server.command, tuple(server.args), tuple(sorted(server.env.items())), server.cwd)


class Spawned:
    """A process started with `os.posix_spawn`: its pid, its three pipes (unbuffered) and
    its exit, read once (`poll` never blocks; `wait` may, from one thread at a time)."""

    def __init__(self, argv: list[str], pid: int, stdin: IO[bytes], stdout: IO[bytes], stderr: IO[bytes]) -> None:
        self.args = argv
        self.pid, self.stdin, self.stdout, self.stderr = pid, stdin, stdout, stderr
        import _thread  # built in: `threading` (about 1 ms) waits for the greeting

        self.returncode: int | None = None
        self._reaping = _thread.allocate_lock()

    def poll(self) -> int | None:
        if self.returncode is None and self._reaping.acquire(blocking=False):
            try:
                self._reap(os.WNOHANG)
            finally:
                self._reaping.release()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Until the process exits; past `timeout` seconds (when given) `TimeoutExpired`, as
        Popen raises it."""
        if timeout is not None:
            import time

            deadline, pause = time.monotonic() + timeout, 0.0005
            while self.poll() is None:
                if time.monotonic() >= deadline:
                    import subprocess

                    raise subprocess.TimeoutExpired(self.args, timeout)
                time.sleep(pause)
                pause = min(pause * 2, 0.05)
        with self._reaping:
            if self.returncode is None:
                self._reap(0)
        assert self.returncode is not None
        return self.returncode

    def _reap(self, flags: int) -> None:
        try:
            pid, status = os.waitpid(self.pid, flags)
        except ChildProcessError:  # reaped elsewhere: its code is lost (0, as Popen says then)
            self.returncode = 0
            return
        if pid == self.pid:
            self.returncode = os.waitstatus_to_exitcode(status)


_early: dict[str, tuple[Launch, Process, Greeting | None]] = {}


def child_environment(own: Iterable[tuple[str, str]], parent: Mapping[str, str]) -> dict[str, str]:
    """The allow-listed parent variables, then the server's own configured ones (`own`)."""
    env = {k: parent[k] for k in INHERITED_VARIABLES if k in parent}
    env.update(own)
    return env


def start_process(server: ServerConfig) -> Process:
    """Start the server's command with pipes on stdin, stdout and stderr. OSError if it cannot."""
    return start_launch(Launch.of(server))


def start_launch(launch: Launch) -> Process:
    """Start `launch` in a session of its own, pipes on its standard streams, with a death
    signal on Linux. OSError if it cannot start (a missing command raises, as Popen does)."""
    env = child_environment(launch.env, os.environ)
    argv: list[str] = [launch.command, *launch.args]
    preexec: Any = None
    if sys.platform == "linux":
        setpriv = _setpriv()
        if setpriv is not None and _runnable(launch.command, env, launch.cwd):
            argv = [setpriv, "--pdeathsig", "TERM", "--", *argv]
            if launch.cwd is None:
                spawned = _posix_spawn(argv, env)
                if spawned is not None:
                    return spawned
        else:  # no setpriv, or the command is not found: Popen raises its usual error for it
            preexec = _die_with_parent_hook()
    import subprocess

    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, cwd=launch.cwd, start_new_session=True, preexec_fn=preexec)


def _posix_spawn(argv: list[str], env: dict[str, str]) -> Spawned | None:
    """`argv` (its first an absolute path) started with `os.posix_spawn` as `Popen` would
    start it (see above); None where this platform or these descriptors do not allow it
    (then Popen does). OSError if it cannot start."""
    pipes = [os.pipe() for _ in range(3)]  # (read, write) each, not inheritable
    ends = [pipes[0][0], pipes[1][1], pipes[2][1]]  # the child's stdin, stdout, stderr
    ours = [pipes[0][1], pipes[1][0], pipes[2][0]]
    try:
        if min(ends) < 3:  # a standard stream of ours was closed: dup2 onto itself would keep CLOEXEC
            return None
        actions: list[tuple[int, ...]] = [(os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(ends)]
        actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inheritable_descriptors()]
        pid = os.posix_spawn(argv[0], argv, env, file_actions=actions, setsid=True,
                             setsigdef=(_signals.SIGPIPE, _signals.SIGXFSZ))
    except (NotImplementedError, AttributeError, TypeError):  # no setsid support, say
        for fd in (*ends, *ours):
            os.close(fd)
        return None
    except BaseException:
        for fd in (*ends, *ours):
            os.close(fd)
        raise
    for fd in ends:
        os.close(fd)
    return Spawned(argv, pid, open(ours[0], "wb", buffering=0), open(ours[1], "rb", buffering=0),
                   open(ours[2], "rb", buffering=0))


def _inheritable_descriptors() -> list[int]:
    """Our descriptors past the standard three that a child would inherit (Popen closes
    them all in the child; here they are named to the spawn to close)."""
    try:
        listed = [int(name) for name in os.listdir("/proc/self/fd") if name.isdigit()]
    except OSError:
        return []
    found = []
    for fd in listed:
        try:
            if fd > 2 and os.get_inheritable(fd):
                found.append(fd)
        except OSError:  # the listing's own descriptor, closed by now
            continue
    return found


_found: list[str | None] = []


def _setpriv() -> str | None:
    """util-linux's setpriv when installed with `--pdeathsig` (2.33 and later); read once."""
    if not _found:
        _found.append(next((path for path in _SETPRIV_PLACES if _knows_pdeathsig(path)), None))
    return _found[0]


def _knows_pdeathsig(path: str) -> bool:
    try:
        with open(path, "rb") as binary:
            return os.access(path, os.X_OK) and b"pdeathsig" in binary.read()
    except OSError:
        return False


def _runnable(command: str, env: Mapping[str, str], cwd: str | None) -> bool:
    """Whether `command` resolves, as Popen resolves it (the child's PATH; a path with a
    slash from the child's folder), to an executable file: else Popen itself must run it,
    so that a missing command raises the same error at the same place."""
    if "/" in command:
        candidates = [os.path.join(cwd or "", command)]
    else:
        candidates = [os.path.join(folder, command) for folder in os.get_exec_path(dict(env))]
    return any(os.path.isfile(path) and os.access(path, os.X_OK) for path in candidates)


def _die_with_parent_hook() -> Any:
    """The `preexec_fn` that asks for SIGTERM when the sidecar dies (libc resolved here, in
    the parent, so the child only makes the call)."""
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def die_with_parent() -> None:
        prctl(_PR_SET_PDEATHSIG, _signals.SIGTERM)

    return die_with_parent


def start_early(servers: Iterable[ServerConfig], start_seconds: float) -> None:
    """Start every stdio upstream of `servers` not already started early with the same
    launch; one started early with another launch is stopped first. One that cannot start
    is left to its supervisor. `start_seconds`: the face's start timeout."""
    for server in servers:
        if server.type != "stdio" or not server.command:
            continue
        launch = Launch.of(server)
        found = _early.get(server.alias)
        if found is not None and found[0] == launch:
            continue
        if found is not None:
            _stop_early(_early.pop(server.alias))
        start_early_launch(server.alias, launch, server.start_timeout_seconds or start_seconds)


def start_early_launch(alias: str, launch: Launch, start_seconds: float) -> bool:
    """Start `launch` now for `alias`, and greet it (`sidecar.upstream.greeting`) for at most
    `start_seconds`; kept for its supervisor. False (nothing kept) if it cannot start."""
    return start_early_launches([(alias, launch)], start_seconds) == 1


def start_early_launches(launches: Iterable[tuple[str, Launch]], start_seconds: float) -> int:
    """`start_early_launch` for each of `launches`: every process started first, then each
    greeted (what greeting loads and its threads do not delay the next spawn); how many
    started."""
    started: list[tuple[str, Launch, Process]] = []
    for alias, launch in launches:
        try:
            started.append((alias, launch, start_launch(launch)))
        except OSError:
            continue
    if not started:
        return 0
    from sidecar.upstream.greeting import Greeting  # after the spawns
    from sidecar.collector import give_back_large_blocks

    # before the greetings' threads read a big listing (see sidecar.collector)
    give_back_large_blocks(malloc_tuned="MALLOC_MMAP_THRESHOLD_" in os.environ)
    for alias, launch, popen in started:
        try:
            greeting: Greeting | None = Greeting(popen, start_seconds)
        except RuntimeError:  # no thread could start: the supervisor greets it itself
            greeting = None
        _early[alias] = (launch, popen, greeting)
    return len(started)


def early_greetings() -> list[tuple[str, Greeting | None]]:
    """Each early process's alias and greeting (None: it greets nothing), in start order."""
    return [(alias, greeting) for alias, (_, _, greeting) in _early.items()]


def keep_early(servers: Iterable[ServerConfig]) -> None:
    """Stop every early process that is not one of `servers`' launches (the mount plan
    left its entry out, or the entry changed)."""
    wanted = {server.alias: Launch.of(server) for server in servers if server.type == "stdio" and server.command}
    for alias in [alias for alias, (launch, _, _) in _early.items() if wanted.get(alias) != launch]:
        _stop_early(_early.pop(alias))


def started_early(server: ServerConfig) -> bool:
    """Whether this entry's process was started early (not yet taken by its supervisor)."""
    found = _early.get(server.alias)
    return found is not None and server.command is not None and found[0] == Launch.of(server)


def take_early(server: ServerConfig) -> tuple[Process, Greeting | None] | None:
    """The process started early for exactly this entry's launch and its greeting, once;
    None otherwise."""
    if not started_early(server):
        return None
    _, popen, greeting = _early.pop(server.alias)
    return popen, greeting


def discard_early() -> None:
    """Stop every early process no supervisor adopted (the sidecar is leaving first)."""
    while _early:
        _stop_early(_early.popitem()[1])


def _stop_early(entry: tuple[Launch, Process, Greeting | None]) -> None:
    _, popen, greeting = entry
    stop_process(popen, greeting)


_GREETING_STOPS = 1.0  # seconds: a greeting reading a killed process sees its end within one poll


def stop_process(popen: Process, greeting: Greeting | None = None) -> None:
    """Kill a started process's group, reap it and close its pipes (one no supervisor owns).
    Its `greeting`'s thread, reading those pipes by number, is let finish first (the killed
    process's output ends, so it stops within a poll): a number closed under a thread still
    reading it could be reused by a file opened meanwhile, and read as the server's."""
    try:
        os.killpg(popen.pid, _signals.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    popen.wait()
    if greeting is not None:
        greeting.finished(_GREETING_STOPS)
    for stream in (popen.stdin, popen.stdout, popen.stderr):
        if stream is not None:
            stream.close()
