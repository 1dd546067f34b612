"""The upstream pool: every configured upstream, supervised side by side.

Owns the supervisors' task group. Each upstream starts at once and independently; the
pool reports every change of state or listing through one callback, so the face can
rebuild its catalog.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import anyio

from sidecar.config import ServerConfig
from sidecar.upstream.connection import PeerHandler
from sidecar.upstream.supervisor import Upstream

__all__ = ["Pool"]


class Pool:
    def __init__(
        self,
        servers: Sequence[ServerConfig],
        handler: PeerHandler,
        on_change: Callable[[Upstream], None],
        start_timeout: float,
    ) -> None:
        self.upstreams: dict[str, Upstream] = {
            s.alias: Upstream(s, handler, on_change, start_timeout) for s in servers
        }

    async def run(self) -> None:
        """Supervise every upstream until cancelled; on cancel, every child is stopped."""
        async with anyio.create_task_group() as group:
            for upstream in self.upstreams.values():
                group.start_soon(upstream.run, name=f"upstream {upstream.alias}")

    def get(self, alias: str) -> Upstream | None:
        return self.upstreams.get(alias)

    def __iter__(self) -> Iterator[Upstream]:
        return iter(self.upstreams.values())

    def ready(self) -> list[Upstream]:
        return [u for u in self.upstreams.values() if u.state == "ready"]

    def settled(self) -> bool:
        """True once no upstream is still on its first start."""
        return all(u.state != "starting" for u in self.upstreams.values())
