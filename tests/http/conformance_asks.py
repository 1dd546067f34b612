"""The conformance fixture's input-required tools and prompt (the 2026-07-28 revision's
way for a server to ask its client something before it can finish a request), as the
suite's `input-required-result-*` scenarios name them. Each answers with the SDK's
`InputRequiredResult` until the answers it wants have come, then finishes; the states
are sealed by the SDK's `RequestStateBoundary` (installed by `conformance_server`), so
an altered state is refused before a handler runs and every round's state differs.

Tools: `test_input_required_result_elicitation` (key `user_name`), `..._sampling`
(`capital_question`), `..._list_roots` (`client_roots`), `..._request_state` (`confirm`,
its state checked), `..._multiple_inputs` (all three at once), `..._multi_round`
(`step1`, then `step2`), `..._tampered_state`, `..._capabilities` (asks only what the
client declared); prompt `test_input_required_result_prompt` (`user_context`).
A session-era fixture asks the same questions mid-call instead (`asked_in_session`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

__all__ = ["ASKING_PROMPTS", "ASKING_TOOLS", "DIAGNOSTIC_TOOLS", "PREFIX", "asked_in_session", "asking_prompt", "asking_tool",
           "diagnostic_in_session", "diagnostic_tool"]

PREFIX = "test_input_required_result_"
NAMES = ("elicitation", "sampling", "list_roots", "request_state", "multiple_inputs", "multi_round",
         "tampered_state", "capabilities")
ASKING_TOOLS = [{"name": PREFIX + n, "description": f"Asks its client for input first ({n})",
                 "inputSchema": {"type": "object", "properties": {}}} for n in NAMES]
DIAGNOSTIC_TOOLS = [  # the stateless scenario's probes (server-stateless)
    {"name": "test_missing_capability", "description": "Needs the sampling capability",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "test_streaming_elicitation", "description": "Asks for input on its response stream",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "test_logging_tool", "description": "Logs only when the request set a log level",
     "inputSchema": {"type": "object", "properties": {}}},
]
PROMPT = PREFIX + "prompt"
ASKING_PROMPTS = [{"name": PROMPT, "title": "Prompt That Asks", "description": "Asks for its context first"}]
STATE = "fixture-state"  # the plaintext each round's state carries; the boundary seals it


def _form(message: str, field: str, kind: str = "string") -> types.ElicitRequest:
    schema = {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}
    return types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema))


def _sampling(prompt: str, tokens: int) -> types.CreateMessageRequest:
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
    return types.CreateMessageRequest(params=types.CreateMessageRequestParams(messages=[message], max_tokens=tokens))


def _roots() -> types.ListRootsRequest:
    return types.ListRootsRequest()


def _done(words: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=words)])


def _asked(requests: dict[str, Any], state: str | None = None) -> types.InputRequiredResult:
    return types.InputRequiredResult(input_requests=requests, request_state=state)


def _dump(value: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def _declared(ctx: ServerRequestContext) -> set[str]:
    """The client capabilities this request declared (the 2026-07-28 envelope)."""
    caps: Any = getattr(ctx.session, "client_capabilities", None)
    if caps is None:
        return set()
    raw = caps if isinstance(caps, dict) else caps.model_dump(exclude_none=True)
    return {name for name, value in raw.items() if value is not None}


def diagnostic_tool(ctx: ServerRequestContext,
                    params: types.CallToolRequestParams) -> types.CallToolResult | types.InputRequiredResult:
    """The stateless scenario's probes: a tool that needs sampling refuses a client that did
    not declare it (-32021, naming it), one asks with an input-required result rather than
    a request of its own, one does its work without logging when no log level was set."""
    if params.name == "test_missing_capability":
        if "sampling" not in _declared(ctx):
            raise _missing("sampling")
        return _done("sampling was declared")
    if params.name == "test_streaming_elicitation":
        if "user_name" not in (params.input_responses or {}):
            return _asked({"user_name": _form("What is your name?", "name")})
        return _done("answered")
    return _done("done, and nothing logged: the request set no log level")


def _missing(capability: str) -> MCPError:
    return MCPError(code=-32021, message=f"this tool needs the {capability} capability",
                    data={"requiredCapabilities": {capability: {}}})


def asking_tool(ctx: ServerRequestContext,
                params: types.CallToolRequestParams) -> types.CallToolResult | types.InputRequiredResult:
    """One round of an asking tool: its questions, or its result once answered."""
    answers = {key: _dump(value) for key, value in (params.input_responses or {}).items()}
    state = params.request_state
    name = params.name[len(PREFIX):]
    if name in ("elicitation", "tampered_state"):
        if "user_name" not in answers:
            return _asked({"user_name": _form("What is your name?", "name")}, STATE if name != "elicitation" else None)
        return _done(f"Hello, {answers['user_name'].get('content', {}).get('name')}!")
    if name == "sampling":
        if "capital_question" not in answers:
            return _asked({"capital_question": _sampling("What is the capital of France?", 100)})
        return _done(f"The model said: {answers['capital_question'].get('content', {}).get('text')}")
    if name == "list_roots":
        if "client_roots" not in answers:
            return _asked({"client_roots": _roots()})
        uris = [root.get("uri") for root in answers["client_roots"].get("roots", [])]
        return _done(f"Roots: {json.dumps(uris)}")
    if name == "request_state":
        if "confirm" not in answers or state != STATE:
            return _asked({"confirm": _form("Please confirm", "ok", "boolean")}, STATE)
        return _done("state-ok: the request state came back as it was sent")
    if name == "multiple_inputs":
        return _multiple(answers, state)
    if name == "multi_round":
        return _multi_round(answers, state)
    if name == "capabilities":
        return _capabilities(ctx, answers)
    raise ValueError(name)


def _multiple(answers: dict[str, Any], state: str | None) -> types.CallToolResult | types.InputRequiredResult:
    wanted = {"user_name": _form("What is your name?", "name"), "greeting": _sampling("Generate a greeting", 50),
              "client_roots": _roots()}
    if state != STATE or not set(wanted) <= set(answers):
        return _asked(wanted, STATE)
    return _done(f"All three answered: {', '.join(sorted(wanted))}")


def _multi_round(answers: dict[str, Any], state: str | None) -> types.CallToolResult | types.InputRequiredResult:
    if state == "round-2" and "step2" in answers:
        return _done(f"Done in three rounds: {answers['step2'].get('content', {}).get('color')}")
    if state == "round-1" and "step1" in answers:
        return _asked({"step2": _form("Step 2: What is your favorite color?", "color")}, "round-2")
    return _asked({"step1": _form("Step 1: What is your name?", "name")}, "round-1")


def _capabilities(ctx: ServerRequestContext,
                  answers: dict[str, Any]) -> types.CallToolResult | types.InputRequiredResult:
    declared = _declared(ctx)
    wanted: dict[str, Any] = {}
    if "elicitation" in declared:
        wanted["user_name"] = _form("What is your name?", "name")
    if "sampling" in declared:
        wanted["greeting"] = _sampling("Generate a greeting", 50)
    missing = {key: ask for key, ask in wanted.items() if key not in answers}
    if missing:
        return _asked(missing)
    return _done(f"Asked only what the client declared: {', '.join(sorted(wanted)) or 'nothing'}")


def asking_prompt(params: types.GetPromptRequestParams) -> types.GetPromptResult | types.InputRequiredResult:
    answers = {key: _dump(value) for key, value in (params.input_responses or {}).items()}
    if "user_context" not in answers:
        return _asked({"user_context": _form("What context should the prompt use?", "context")})
    context = answers["user_context"].get("content", {}).get("context")
    message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=f"Context: {context}"))
    return types.GetPromptResult(messages=[message])


Ask = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]  # (method, params) -> the client's answer


async def asked_in_session(params: Any, one_round: Callable[[Any], Any], ask: Ask) -> dict[str, Any]:
    """A session-era server's way to the same answer: every round's questions are sent to
    the client as requests in the middle of the call, and the round is run again with
    the answers, until it finishes (the fixture's `--era session`)."""
    answers: dict[str, Any] = {}
    state: str | None = None
    for _ in range(4):
        again = type(params).model_validate({**params.model_dump(by_alias=True, exclude_none=True),
                                             "inputResponses": answers, "requestState": state})
        result = one_round(again)
        if not isinstance(result, types.InputRequiredResult):
            dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
            return dumped
        for key, request in (result.input_requests or {}).items():
            question = request.model_dump(mode="json", by_alias=True, exclude_none=True)
            answers[key] = await ask(question["method"], question.get("params") or {})
        state = result.request_state
    raise ValueError("the rounds did not end")


async def diagnostic_in_session(ctx: ServerRequestContext, params: types.CallToolRequestParams,
                                ask: Ask) -> dict[str, Any]:
    """The probes as a session-era server has them: it learns that sampling is missing by
    asking for it mid-call and being refused, and asks its question mid-call."""
    if params.name == "test_missing_capability":
        message = {"role": "user", "content": {"type": "text", "text": "ping"}}
        try:
            await ask("sampling/createMessage", {"messages": [message], "maxTokens": 16})
        except MCPError:
            raise _missing("sampling") from None
        return _done("sampling answered").model_dump(mode="json", by_alias=True, exclude_none=True)
    return await asked_in_session(params, lambda again: diagnostic_tool(ctx, again), ask)
