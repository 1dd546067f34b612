"""The per-server facts a call depends on, as one frozen snapshot (RELIABILITY.md rule 15).

Owns `ServerFacts` and `facts_for`, the one pure function that makes it from the config
and the set of mounted servers: each server's entry, the result budgets and the smallest
of them, the secrets to hide in answers and in logs (with their redactors), the pinning
policy, the consequential tools and the per-call deadlines. The face swaps a new snapshot
into its `LiveCatalog` whenever the mounted set changes (start-up, a late mount by the
health schedule, a server leaving), together with the catalog; every stage reads the
snapshot of the moment per call, so no stage keeps a copy made at construction and a
server mounted late gets exactly what it would have got at start.

Refuses nothing; knows nothing of processes or files. Order does not matter: a snapshot
is the same whatever order the servers were mounted in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Literal

from sidecar.config import ServerConfig, SidecarConfig
from sidecar.redact import Redactor, answer_secrets, url_credentials

__all__ = ["EMPTY_FACTS", "ServerFacts", "facts_for", "server_answer_secrets"]

class ServerFacts:
    """What the gate knows of the mounted servers, at one moment. Equal snapshots hold
    the same facts (the redactors are made from the secrets, so they are not compared).
    A plain class (a dataclass would generate and compile its methods at import)."""

    __slots__ = ("servers", "default_budget", "smallest_budget", "answer_secrets", "log_secrets", "pinning",
                 "consequential", "deadlines", "answers", "logs", "scrubbing")

    def __init__(self, *, servers: Mapping[str, ServerConfig], default_budget: int, smallest_budget: int,
                 answer_secrets: tuple[str, ...], log_secrets: tuple[str, ...],
                 pinning: Mapping[str, Literal["hold", "warn", "off"]], consequential: Mapping[str, frozenset[str]],
                 deadlines: Mapping[str, float | None], answers: Redactor, logs: Redactor) -> None:
        self.servers = servers
        self.default_budget = default_budget
        self.smallest_budget = smallest_budget  # under this, no result is even decoded
        self.answer_secrets = answer_secrets
        self.log_secrets = log_secrets
        self.pinning = pinning  # a `Pinning` of sidecar/trust/pins.py (trust sits above the catalog)
        self.consequential = consequential
        self.deadlines = deadlines
        self.answers = answers
        self.logs = logs
        # `answers` when it hides something, else None: a plain call asks this instead of the
        # redactor's truth (a call of its own) on every answer
        self.scrubbing: Redactor | None = answers if answers else None

    def _compared(self) -> tuple[object, ...]:
        return (self.servers, self.default_budget, self.smallest_budget, self.answer_secrets, self.log_secrets,
                self.pinning, self.consequential, self.deadlines)

    def __eq__(self, other: object) -> bool:
        return type(other) is ServerFacts and self._compared() == other._compared()

    def budget_of(self, alias: str | None) -> int:
        """The result budget of `alias` (its own `resultChars`, else the face's)."""
        server = self.servers.get(alias) if alias is not None else None
        return (server.result_chars if server is not None and server.result_chars else None) or self.default_budget

    def deadline_of(self, alias: str) -> float | None:
        return self.deadlines.get(alias)

    def __hash__(self) -> int:  # a snapshot is a value, but its mappings are not hashable
        return hash((self.answer_secrets, self.log_secrets, tuple(sorted(self.servers))))

    def __repr__(self) -> str:  # the secrets and their redactors stay out
        return f"ServerFacts(servers={sorted(self.servers)}, default_budget={self.default_budget})"


def server_answer_secrets(server: ServerConfig) -> list[str]:
    """The values of one server to hide in answers: credential-like env and header
    values, and the credentials inside its address."""
    found = answer_secrets({**server.env, **server.headers})
    return found + (url_credentials(server.url) if server.url else [])


def _frozen(mapping: dict[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(sorted(mapping.items())))


def facts_for(config: SidecarConfig, mounted: Iterable[ServerConfig]) -> ServerFacts:
    """The snapshot for the servers in `mounted`, under the face-level settings of
    `config` (budgets; the config's own secrets, such as the store's password, count for
    the logs). Pure: the same config and the same set give an equal snapshot."""
    servers = {s.alias: s for s in mounted}
    default = config.budgets.result_chars
    smallest = min([default, *(s.result_chars for s in servers.values() if s.result_chars)])
    answers = sorted({v for s in servers.values() for v in server_answer_secrets(s)})
    logs = sorted({*config.secrets(), *(v for s in servers.values() for v in s.secrets())})
    return ServerFacts(
        servers=_frozen(servers),
        default_budget=default,
        smallest_budget=smallest,
        answer_secrets=tuple(answers),
        log_secrets=tuple(logs),
        pinning=_frozen({a: s.pinning_policy for a, s in servers.items()}),
        consequential=_frozen({a: frozenset(s.consequential) for a, s in servers.items()}),
        deadlines=_frozen({a: s.call_deadline_seconds for a, s in servers.items()}),
        answers=Redactor(answers),
        logs=Redactor(logs),
    )


EMPTY_FACTS = facts_for(SidecarConfig(), ())
