"""Deterministic benchmark data: tool catalogs and large JSON results.

Owns the shapes the benchmarks and tests agree on: a GitHub-sized catalog of
425 tools (about 1.2 MB of tool JSON), twelve servers of 100 tools, a small
"platform" catalog of 39 tools (about 50 KB), and an array-of-records JSON
payload of a chosen byte size. Every generator is a pure function of its
arguments (a seeded `random.Random`), so two processes that ask for the same
spec build byte-identical data. No I/O here.

Every catalog starts with two working tools, `echo` and `blob`, which the fast
upstream implements; the rest are realistic-looking but inert.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any

import msgspec

__all__ = [
    "GITHUB",
    "PLATFORM",
    "TINY",
    "CatalogSpec",
    "build_catalog",
    "catalog_bytes",
    "github_set",
    "records_json",
    "server_set",
]

Tool = dict[str, Any]

_RESOURCES = (
    "repos", "issues", "pulls", "actions", "checks", "git", "orgs", "users", "teams",
    "gists", "projects", "search", "code_scanning", "dependabot", "secret_scanning",
    "packages", "codespaces", "billing", "reactions", "activity", "apps", "migrations",
    "security_advisories", "interactions", "deployments",
)
_VERBS = (
    "list", "get", "create", "update", "delete", "add", "remove", "set", "check",
    "download", "rerun", "cancel", "merge", "lock", "unlock", "review", "sync",
)
_OBJECTS = (
    "for_org", "for_user", "for_authenticated_user", "comments", "labels", "assignees",
    "reviews", "review_comments", "collaborators", "webhooks", "deploy_keys", "releases",
    "release_assets", "branches", "branch_protection", "workflow_runs", "workflow_jobs",
    "artifacts", "secrets", "variables", "environments", "runners", "milestones",
    "commit_statuses", "invitations", "members", "topics", "tags", "alerts", "events",
)
_SENTENCES = (
    "Results are paginated; pass page and per_page to walk through them.",
    "The caller needs read access to the repository; private resources return 404 otherwise.",
    "Fine-grained tokens need the matching permission set to read or write this resource.",
    "Secondary rate limits apply when many write requests are sent in a short period.",
    "Timestamps are ISO 8601 in UTC, for example 2024-03-18T09:41:00Z.",
    "The response echoes the stored object, including server-assigned identifiers.",
    "Deleted objects cannot be restored; archive them instead if history matters.",
    "Use conditional requests with an ETag to avoid spending the rate limit on unchanged data.",
    "Large lists are sorted by creation time unless sort and direction say otherwise.",
    "When the organization enforces SAML single sign-on the token must be authorized first.",
    "Bodies accept GitHub-flavoured Markdown, and mentions notify the people named.",
    "Fields the caller may not see are omitted rather than returned empty.",
)
_PROPERTIES: tuple[tuple[str, str, str], ...] = (
    ("owner", "string", "The account owner of the repository; the name is not case sensitive."),
    ("repo", "string", "The name of the repository without the .git extension; not case sensitive."),
    ("org", "string", "The organization name; not case sensitive."),
    ("username", "string", "The handle of a GitHub user account."),
    ("per_page", "integer", "How many results to return per page, at most 100."),
    ("page", "integer", "The page number of the results to fetch, starting at 1."),
    ("state", "string", "Only return objects in this state: open, closed or all."),
    ("sort", "string", "What to sort results by: created, updated or a resource-specific key."),
    ("direction", "string", "The direction of the sort, asc or desc; defaults to desc when sorting by time."),
    ("since", "string", "Only show results updated at or after this time, as an ISO 8601 timestamp."),
    ("labels", "string", "A list of comma separated label names, for example bug,ui,@high."),
    ("assignee", "string", "Login of the user to filter by; none means unassigned, * means any."),
    ("milestone", "string", "Milestone number to filter by; * means any milestone, none means no milestone."),
    ("title", "string", "The title of the object, shown in lists and notifications."),
    ("body", "string", "The contents of the object, in GitHub-flavoured Markdown."),
    ("head", "string", "The name of the branch where the changes are implemented, as user:branch across forks."),
    ("base", "string", "The name of the branch the changes should be pulled into."),
    ("ref", "string", "The git reference: a branch name, a tag name or a commit SHA."),
    ("sha", "string", "The full SHA of the commit the operation applies to."),
    ("path", "string", "The path of the file inside the repository, relative to its root."),
    ("message", "string", "The commit message recorded for the change."),
    ("branch", "string", "The branch name; defaults to the repository's default branch."),
    ("run_id", "integer", "The unique identifier of the workflow run."),
    ("job_id", "integer", "The unique identifier of the job inside a workflow run."),
    ("team_slug", "string", "The slug of the team name, as shown in the team's URL."),
    ("visibility", "string", "Can be public, private or internal where the plan supports it."),
    ("affiliation", "string", "Comma separated list of owner, collaborator and organization_member."),
    ("q", "string", "The search query, with qualifiers such as repo:, is:open or author:."),
    ("draft", "boolean", "Whether the object is created as a draft that cannot be merged yet."),
    ("environment_name", "string", "The name of the deployment environment, URL-encoded if it has slashes."),
)


@dataclass(frozen=True)
class CatalogSpec:
    """What a fast upstream lists: tool count, bytes per tool, seed, name area."""

    tools: int
    tool_bytes: int
    seed: int
    area: str = ""

    def argv(self) -> list[str]:
        """The fast upstream's arguments that rebuild this catalog."""
        area = ["--area", self.area] if self.area else []
        return ["--tools", str(self.tools), "--tool-bytes", str(self.tool_bytes),
                "--seed", str(self.seed), *area]


GITHUB = CatalogSpec(tools=425, tool_bytes=2820, seed=425)
PLATFORM = CatalogSpec(tools=39, tool_bytes=1280, seed=39, area="agents")
TINY = CatalogSpec(tools=4, tool_bytes=300, seed=4)
_PLATFORM_NAMES = (
    "list_bots", "get_bot", "create_bot", "update_bot", "delete_bot", "post_to_room",
    "send_voice_note", "list_rooms", "get_room_history", "create_room", "invite_to_room",
    "leave_room", "list_tasks", "create_task", "update_task", "complete_task",
    "schedule_message", "list_schedules", "cancel_schedule", "read_memory", "write_memory",
    "search_memory", "list_files", "read_file", "write_file", "share_file", "list_models",
    "set_bot_model", "get_usage", "list_skills", "install_skill", "remove_skill", "run_skill",
    "list_connections", "test_connection", "get_settings", "update_settings",
)
_PLATFORM_VERBS = frozenset(n.split("_", 1)[0] for n in _PLATFORM_NAMES)
_STRUCTURED = frozenset(_RESOURCES)
_SET_AREAS = ("notes", "calendar", "tracker", "chat", "drive", "crm", "docs", "mail",
              "db", "cluster", "metrics", "billing")


def github_set(count: int = 3) -> list[CatalogSpec]:
    """`count` GitHub-sized upstreams; distinct seeds, so each is its own server.

    (The sidecar mounts two entries with the same command, arguments and
    environment once, so identical upstreams would not test a merge.)
    """
    return [replace(GITHUB, seed=GITHUB.seed + i) for i in range(count)]


def server_set(count: int = 12, tools: int = 100) -> list[CatalogSpec]:
    """The many-servers case: `count` upstreams of `tools` tools, each its own area."""
    return [CatalogSpec(tools=tools, tool_bytes=1200, seed=1000 + i,
                        area=_SET_AREAS[i % len(_SET_AREAS)]) for i in range(count)]


def _working_tools() -> list[Tool]:
    echo = {"name": "echo", "description": "Return the call's arguments as JSON text.",
            "inputSchema": {"type": "object", "properties": {
                "text": {"type": "string", "description": "Any text."}}}}
    blob = {"name": "blob", "description": "Return a JSON array of records of about `bytes` bytes.",
            "inputSchema": {"type": "object", "properties": {
                "bytes": {"type": "integer", "description": "Size of the JSON text."},
                "prepare": {"type": "boolean", "description": "Only build it; reply briefly."}},
                "required": ["bytes"]}}
    return [echo, blob]


def _names(rng: random.Random, count: int, area: str) -> list[str]:
    if area == "agents" and count <= len(_PLATFORM_NAMES):
        return list(_PLATFORM_NAMES[:count])
    resources = (area,) if area else _RESOURCES
    combos = [f"{r}_{v}_{o}" for r in resources for v in _VERBS for o in _OBJECTS]
    if count > len(combos):
        combos += [f"{c}_{n}" for n in range(2, 2 + count // len(combos) + 1) for c in combos]
    return rng.sample(combos, count)


def _description(rng: random.Random, name: str, target: int) -> str:
    if name.count("_") >= 2 and name.split("_", 1)[0] not in _PLATFORM_VERBS - _STRUCTURED:
        resource, verb, rest = name.split("_", 2)
        lead = f"{verb.capitalize()} {rest.replace('_', ' ')} of {resource.replace('_', ' ')}."
    else:
        lead = f"{name.replace('_', ' ').capitalize()} on the platform."
    sentences = rng.sample(_SENTENCES, len(_SENTENCES))
    parts = [lead]
    while sum(len(p) + 1 for p in parts) < target:
        parts.append(sentences[len(parts) % len(sentences)])
    return " ".join(parts)


def _property(rng: random.Random, key: str, kind: str, text: str) -> dict[str, Any]:
    prop: dict[str, Any] = {"type": kind, "description": f"{text} {rng.choice(_SENTENCES)}"}
    if kind == "integer":
        prop["minimum"] = 1
    if key in ("state", "direction", "visibility"):
        prop["enum"] = {"state": ["open", "closed", "all"], "direction": ["asc", "desc"],
                        "visibility": ["public", "private", "internal"]}[key]
    return prop


def _tool(rng: random.Random, name: str, tool_bytes: int) -> Tool:
    description = _description(rng, name, tool_bytes // 4)
    properties: dict[str, Any] = {}
    size = len(name) + len(description) + 90
    pool = list(_PROPERTIES)
    rng.shuffle(pool)
    for key, kind, text in pool:
        if size >= tool_bytes:
            break
        prop = _property(rng, key, kind, text)
        properties[key] = prop
        size += len(msgspec.json.encode(prop)) + len(key) + 4
    required = [k for k in properties if k in ("owner", "repo", "org", "q", "title")]
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return {"name": name, "description": description, "inputSchema": schema}


def build_catalog(spec: CatalogSpec) -> list[Tool]:
    """The spec's tools: `echo`, `blob`, then `tools - 2` generated ones."""
    rng = random.Random(spec.seed)
    generated = max(spec.tools - 2, 0)
    names = _names(rng, generated, spec.area)
    return _working_tools()[: spec.tools] + [_tool(rng, n, spec.tool_bytes) for n in names]


def catalog_bytes(spec: CatalogSpec) -> int:
    """Size of the catalog's tool array as compact JSON."""
    return len(msgspec.json.encode(build_catalog(spec)))


_STATES = ("open", "closed", "merged", "draft")
_LABELS = ('["bug"]', '["bug","ui"]', '["docs"]', "[]", '["perf","backend"]', '["triage"]')
_RECORD = (
    '"number":{n},"title":"Record {i}: adjust {w} handling in the {a} module",'
    '"state":"{s}","author":{{"login":"user-{u:04d}","id":{uid},"site_admin":false}},'
    '"labels":{l},"comments":{c},"score":{sc:.3f},"created_at":"2024-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:00Z",'
    '"url":"https://example.test/acme/widgets/issues/{n}","locked":{lk}}}'
)
_WORDS = ("cache", "token", "retry", "layout", "locale", "export", "search", "billing")
_AREAS = ("api", "cli", "sync", "auth", "render", "store")
_DISTINCT = 997  # record bodies repeat with this period; ids never do


def _record_body(i: int) -> str:
    h = (i * 2654435761) & 0xFFFFFFFF
    return _RECORD.format(
        i=i, n=1000 + i, w=_WORDS[h % 8], a=_AREAS[(h >> 3) % 6], s=_STATES[(h >> 6) % 4],
        u=h % 5000, uid=100000 + h % 5000, l=_LABELS[(h >> 9) % 6], c=(h >> 12) % 40,
        sc=((h >> 4) % 1000) / 1000, mo=1 + (h >> 14) % 12, d=1 + (h >> 18) % 28,
        h=(h >> 20) % 24, mi=(h >> 24) % 60, lk="true" if h % 11 == 0 else "false",
    )


_BODIES: list[str] = []


def records_json(size: int) -> bytes:
    """A JSON array of issue-like records, at least `size` bytes, ending on a record.

    Record `i` has id `i` and the body of record `i % 997`, so 20 MB is built
    in tens of milliseconds and still looks like varied data to a shaper.
    """
    if not _BODIES:
        _BODIES.extend(_record_body(i) for i in range(_DISTINCT))
    parts: list[str] = []
    total = 2
    i = 0
    while total < size:
        record = f'{{"id":{i},{_BODIES[i % _DISTINCT]}'
        parts.append(record)
        total += len(record) + 1
        i += 1
    return ("[" + ",".join(parts) + "]").encode()
