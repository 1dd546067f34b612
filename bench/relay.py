"""A bare byte relay: the physical floor of one extra process hop.

Owns nothing but copying: it spawns the upstream command given after `--`,
then moves bytes from its own stdin to the child's stdin and from the child's
stdout to its own stdout, unparsed, until either side closes. What it costs
is what any stdio proxy must pay at least (one more process, two more pipe
crossings per message), so the report measures every proxy against it.

Three copy strategies are kept so the fastest can be shown, not assumed:

- `splice`: one thread per direction blocked in `os.splice`, pipe to pipe, no
  copy through user space (Linux);
- `select`: one thread, `select` plus `os.read`/`os.write`;
- `uvloop`: asyncio protocols on uvloop, writes straight from `data_received`.

`python bench/relay.py [--mode splice|select|uvloop] -- CMD ARG...`
"""

from __future__ import annotations

import argparse
import os
import select
import subprocess
import sys
import threading

__all__ = ["MODES", "main"]

_CHUNK = 1 << 20


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _splice_pump(src: int, dst: int) -> None:
    try:
        while os.splice(src, dst, _CHUNK):
            pass
    except OSError:
        pass
    finally:
        os.close(dst)


def relay_splice(child: subprocess.Popen[bytes], to_child: int, from_child: int) -> None:
    """Each direction in its own thread, bytes moved by the kernel."""
    up = threading.Thread(target=_splice_pump, args=(0, to_child), daemon=True)
    up.start()
    _splice_pump(from_child, 1)


def relay_select(child: subprocess.Popen[bytes], to_child: int, from_child: int) -> None:
    """One thread: read whichever side is ready, write it through whole."""
    route = {0: to_child, from_child: 1}
    buffer = bytearray(_CHUNK)  # reused: a fresh 1 MB bytes per read costs more than the hop
    view = memoryview(buffer)
    while route:
        for src in select.select(list(route), [], [])[0]:
            size = os.readv(src, [buffer])
            if not size:
                os.close(route.pop(src))
                if src == from_child:
                    return
                continue
            try:
                _write_all(route[src], view[:size])
            except OSError:
                return


def relay_uvloop(child: subprocess.Popen[bytes], to_child: int, from_child: int) -> None:
    """asyncio protocols on uvloop: each received chunk is written at once."""
    import asyncio  # late: the splice and select relays must not pay for it at start-up

    import uvloop

    class Forward(asyncio.Protocol):
        """Writes what it reads to one transport; sets `done` at end of input."""

        def __init__(self, sink: asyncio.WriteTransport, done: asyncio.Future[None] | None) -> None:
            self.sink, self.done = sink, done

        def data_received(self, data: bytes) -> None:
            self.sink.write(data)

        def eof_received(self) -> bool | None:
            if not self.sink.is_closing():
                self.sink.close()
            if self.done is not None and not self.done.done():
                self.done.set_result(None)
            return None

        def connection_lost(self, exc: Exception | None) -> None:
            self.eof_received()

    async def run() -> None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        up_w, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(to_child, "wb"))
        down_w, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(1, "wb"))
        await loop.connect_read_pipe(lambda: Forward(up_w, None), os.fdopen(0, "rb"))
        await loop.connect_read_pipe(lambda: Forward(down_w, done), os.fdopen(from_child, "rb"))
        await done

    uvloop.run(run())


MODES = {"splice": relay_splice, "select": relay_select, "uvloop": relay_uvloop}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="bare stdio byte relay")
    parser.add_argument("--mode", choices=sorted(MODES), default="splice")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the upstream command after --")
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert child.stdin is not None and child.stdout is not None
    to_child, from_child = os.dup(child.stdin.fileno()), os.dup(child.stdout.fileno())
    child.stdin.close()
    child.stdout.close()
    MODES[args.mode](child, to_child, from_child)
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
