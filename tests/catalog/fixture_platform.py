"""A platform's own agents catalog: 39 tools, about 50 KB of tool JSON.

Written for these tests (not taken from any product). The first fourteen are the ones a
bridged face keeps listed; `post_to_room` and `send_voice_note` are sends, recognised by
their own names, so they are `directOnly`. The listed ones are the everyday tools with
small inputs; the hidden ones are the rarer, larger ones (bots, triggers, files, usage).
"""

from __future__ import annotations

from typing import Any

Tool = dict[str, Any]

ALWAYS_LISTED = (
    "tool_result_read", "list_room_targets", "coordinate_bots", "list_bots", "list_rooms",
    "select_computer", "attach_file", "post_to_room", "request_credential", "request_sign_in",
    "fill_login", "memory_update", "send_voice_note", "create_options_card",
)
DIRECT_ONLY = ("post_to_room", "send_voice_note")


def _s(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def _i(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "integer", "description": description, **extra}


def _b(description: str) -> dict[str, Any]:
    return {"type": "boolean", "description": description}


def _tool(name: str, description: str, properties: dict[str, Any], required: tuple[str, ...] = (),
          output: dict[str, Any] | None = None) -> Tool:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    more = GUIDANCE.get(name)
    tool: Tool = {"name": name, "description": f"{description}\n\n{more}" if more else description,
                  "inputSchema": schema}
    if output is not None:
        tool["outputSchema"] = output
    return tool


def _object(description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "description": description, "properties": properties}


def _page_of(item: dict[str, Any], key: str) -> dict[str, Any]:
    return {"type": "object", "properties": {
        key: {"type": "array", "items": item},
        "next_cursor": _s("Pass this as cursor to get the next page; absent on the last page.")},
        "required": [key]}


# What a listed tool's description adds after its first paragraph: when to use it, what comes back.
GUIDANCE = {
    "tool_result_read": "Returns the text of the window, the total size, and the offset to continue from. "
                        "Reading a result does not run the tool again, so it is cheap; results are kept for "
                        "the rest of the conversation.",
    "list_room_targets": "Returns, for each target, its id, kind, display name and whether this bot may post "
                         "there with attachments. Call it before posting to a room you have not posted to yet.",
    "coordinate_bots": "Returns each bot's reply text and the id of its message, and lists the bots that did "
                       "not answer in time. Bots that are paused are skipped and named in the answer.",
    "list_bots": "Returns at most 200 bots; a workspace rarely has more. Pass a bot's id to the bot tools.",
    "list_rooms": "Returns the room's id, name, topic, kind, member count and the time of its last message.",
    "select_computer": "Returns the computer's name and system. Fails if the computer is offline; list the "
                       "computers first to see which are online.",
    "attach_file": "Returns the attachment's id. Files larger than 100 MB are refused. An attachment not "
                   "posted within the conversation is dropped.",
    "post_to_room": "Returns the new message's id and its link. Posting is what people see: do not post "
                    "drafts or tool output they did not ask for.",
    "request_credential": "Returns whether the person provided the secret; the value itself is never "
                          "returned. Other tools of this bot can then use it by the service's name.",
    "request_sign_in": "Returns whether the person signed in. Do not ask for passwords in the conversation; "
                       "use this or request_credential.",
    "fill_login": "Returns whether a saved login was found and filled. It does not press the sign-in button.",
    "memory_update": "Returns the entry as saved. Keep entries short and factual; they are read at the start "
                     "of every later conversation in the scope.",
    "send_voice_note": "Returns the new message's id and the note's length in seconds.",
    "create_options_card": "Returns the chosen option labels and who chose them, or a timeout after 30 minutes "
                           "without an answer.",
    "list_triggers": "Triggers of bots you do not manage are not listed. The last run's error, if any, is "
                     "included so a failing trigger can be fixed.",
    "create_trigger": "Schedules fire at most once a minute. A schedule that has not fired for 30 days because "
                      "its bot was paused is disabled and noted in the bot's home room.",
    "get_bot": "Secrets the bot holds are listed by service name only, never by value.",
    "create_bot": "The workspace's plan limits how many bots can be active; the error says so when the "
                  "limit is reached.",
    "read_room_history": "Messages deleted by their authors are listed as deleted, without text.",
    "get_usage_report": "Costs are estimates in US dollars, computed from each model's published prices.",
}


ROOM_ID = _s("The room's id, as list_rooms or list_room_targets returns it (for example 'rm_7Qx2'). "
             "Omit it to use the room this conversation is happening in.")
BOT_ID = _s("The bot's id, as list_bots returns it (for example 'bot_iris'). Omit it to mean the bot "
            "making this call.")
THREAD_ID = _s("The id of a thread inside the room. Omit it to address the room's main timeline.")
LIMIT = _i("How many items to return at most. Defaults to 25; the largest accepted value is 200.",
           minimum=1, maximum=200)
CURSOR = _s("The opaque cursor from the previous page's next_cursor, to continue a listing where it "
            "stopped. Leave it out for the first page.")
PATH = _s("A path inside the bot's workspace folder, relative to its root, using forward slashes "
          "('reports/march.md'). Paths that leave the workspace are refused.")
TRIGGER_ID = _s("The trigger's id, as list_triggers returns it (for example 'trg_51ab').")
SINCE = _s("Start of the period, as an ISO 8601 date or timestamp in UTC ('2025-03-01' or "
           "'2025-03-01T08:00:00Z'). Inclusive.")
UNTIL = _s("End of the period, as an ISO 8601 date or timestamp in UTC. Exclusive; defaults to now.")

WHEN = _s("An ISO 8601 timestamp in UTC.")
TRIGGER = _object("One trigger, as stored.", {
    "id": _s("The trigger's id; pass it to update_trigger, delete_trigger and run_trigger_now."),
    "bot_id": _s("The bot the trigger starts."),
    "kind": _s("What starts it.", enum=["schedule", "webhook", "email", "room_message"]),
    "schedule": _s("The cron expression, for schedule triggers; read in time_zone."),
    "time_zone": _s("The IANA time zone the schedule is read in."),
    "pattern": _s("The words or regular expression a message must match, for room_message triggers."),
    "prompt": _s("The instructions the bot receives when the trigger fires."),
    "room_id": _s("The room the bot answers in."),
    "address": _s("For webhook triggers the private URL to call; for email triggers the address to write to. "
                  "Treat it as a secret: anyone who has it can start the bot."),
    "enabled": _b("Whether it fires."),
    "created_at": WHEN, "next_fire_at": _s("When a schedule trigger fires next, as an ISO 8601 timestamp."),
    "last_run": _object("The most recent run, absent if it never fired.", {
        "started_at": WHEN, "finished_at": WHEN,
        "status": _s("How it ended.", enum=["succeeded", "failed", "skipped", "running"]),
        "test": _b("Whether it was a test run started by run_trigger_now."),
        "error": _s("What went wrong, for a failed or skipped run, in words meant for people."),
        "message_id": _s("The bot's answer in the room, if it posted one.")}),
})
BOT = _object("One bot's settings.", {
    "id": _s("The bot's id."), "name": _s("The display name."),
    "engine": _s("The engine that runs it.", enum=["claude", "codex", "pi", "api"]),
    "model": _s("The model id, or absent for the engine's default."),
    "model_url": _s("For the api engine, the endpoint's base URL."),
    "instructions": _s("The standing instructions, as written."),
    "home_room_id": _s("The room created with the bot, where it answers by default."),
    "rooms": {"type": "array", "items": {"type": "string"}, "description": "Ids of the other rooms it is in."},
    "paused": _b("Whether it is paused."),
    "owner": _s("The user id of the person who created it."),
    "trigger_count": _i("How many triggers start it."),
    "secrets": {"type": "array", "items": {"type": "string"},
                "description": "Names of the services it holds secrets for; never the values."},
    "tool_selection": _object("The servers and tools it may use; absent when it may use every enabled server.", {
        "servers": {"type": "array", "items": {"type": "string"}},
        "tools": {"type": "array", "items": {"type": "string"}}}),
    "created_at": WHEN, "updated_at": WHEN,
})
MESSAGE = _object("One message.", {
    "id": _s("The message's id; pass it as before to page further back."),
    "room_id": _s("The room it was posted in."), "thread_id": _s("The thread, if it was posted in one."),
    "author": _object("Who posted it.", {"id": _s("A user id or bot id."), "name": _s("The display name."),
                                         "is_bot": _b("Whether a bot posted it.")}),
    "text": _s("The text, in Markdown; empty for deleted messages."),
    "posted_at": WHEN, "edited_at": WHEN,
    "attachments": {"type": "array", "description": "Files posted with it.", "items": _object("A file.", {
        "name": _s("The file name."), "size": _i("Bytes."), "url": _s("A link valid for one hour.")})},
    "deleted": _b("Whether its author deleted it."),
})
FILE_ENTRY = _object("A file or folder.", {
    "path": _s("The path from the workspace root."), "folder": _b("Whether it is a folder."),
    "size": _i("Bytes; absent for folders."), "modified_at": WHEN})
MEMORY_ENTRY = _object("A saved memory entry.", {
    "key": _s("The entry's key."), "content": _s("What was saved."),
    "scope": _s("Who shares it.", enum=["bot", "room", "workspace"]), "saved_at": WHEN,
    "saved_by": _s("The bot that saved it.")})
INTEGRATION = _object("An integration.", {
    "id": _s("The integration's id; pass it to connect_integration."), "name": _s("The service's name."),
    "category": _s("Its category.", enum=["mail", "calendar", "code", "chat", "storage"]),
    "connected": _b("Whether the workspace is connected."),
    "scopes": {"type": "array", "items": {"type": "string"}, "description": "The scopes granted, when connected."},
    "connected_by": _s("Who connected it.")})
USAGE_ROW = _object("Figures for one group.", {
    "group": _s("The bot id, the day (YYYY-MM-DD) or the model id, by group_by."),
    "input_tokens": _i("Tokens sent to models."), "output_tokens": _i("Tokens models produced."),
    "cost_usd": {"type": "number", "description": "Estimated cost in US dollars."},
    "tool_calls": _i("Tool calls made."), "turns": _i("Turns run.")})
COMPUTER = _object("A computer.", {
    "id": _s("The computer's id; pass it to select_computer."), "name": _s("Its name."),
    "system": _s("Its operating system.", enum=["macos", "windows", "linux"]),
    "online": _b("Whether it is online now."), "last_seen_at": WHEN})


def _listed() -> list[Tool]:
    return [
        _tool("tool_result_read",
              "Read part of a large tool result that was saved instead of being shown in full. When a tool's "
              "answer is too long for the conversation you get a result id and its size; use this to read a "
              "window of it, or to pull out the lines that contain some words.",
              {"result_id": _s("The id given in place of the long result (for example 'res_2f9c')."),
               "offset": _i("Where to start reading, in characters from the beginning. Defaults to 0.", minimum=0),
               "length": _i("How many characters to read. Defaults to 4000; at most 20000.", minimum=1, maximum=20000),
               "grep": _s("Only return lines containing this text (case-insensitive). Combine with offset to page.")},
              ("result_id",)),
        _tool("list_room_targets",
              "List the rooms and people this bot may post to right now, with the id to pass to post_to_room. "
              "Rooms the bot was removed from, or that are archived, are left out unless asked for.",
              {"include_archived": _b("Also list archived rooms (they can be read but not posted to)."),
               "kind": _s("Only list one kind of target.", enum=["room", "direct", "thread"])}),
        _tool("coordinate_bots",
              "Hand parts of a task to other bots and collect their answers. Each named bot receives the task "
              "text in the given room and replies there; the call returns once all have answered or the "
              "deadline passes, with each bot's reply.",
              {"bots": {"type": "array", "items": {"type": "string"},
                        "description": "The ids of the bots to ask, as list_bots returns them."},
               "task": _s("What each bot should do, in plain words. Include everything they need to know."),
               "room_id": ROOM_ID,
               "deadline_minutes": _i("How long to wait for answers. Defaults to 10; at most 120.", minimum=1, maximum=120)},
              ("bots", "task")),
        _tool("list_bots",
              "List the bots in this workspace: id, name, engine, model, and whether each is paused.",
              {"include_paused": _b("Also list paused bots. Defaults to true."),
               "owner": _s("Only list bots owned by this person (their user id or email).")}),
        _tool("list_rooms",
              "List the rooms this bot is a member of, most recently active first, with each room's id, name, "
              "topic and member count.",
              {"limit": LIMIT, "cursor": CURSOR,
               "kind": _s("Only list rooms of this kind.", enum=["group", "direct", "project"])}),
        _tool("select_computer",
              "Choose which of the person's computers later computer and browser tools act on. The choice "
              "lasts for the rest of this conversation.",
              {"computer_id": _s("The computer's id, as list_computers returns it.")},
              ("computer_id",)),
        _tool("attach_file",
              "Attach a file from the workspace to the next message this bot posts. Attach first, then post.",
              {"path": PATH,
               "display_name": _s("The file name people will see. Defaults to the file's own name.")},
              ("path",)),
        _tool("post_to_room",
              "Post a message to a room or thread as this bot. Markdown is rendered; mentions with @name "
              "notify the person or bot named. Files attached with attach_file go with this message.",
              {"room_id": ROOM_ID, "thread_id": THREAD_ID,
               "text": _s("The message, in Markdown. At most 16000 characters."),
               "silent": _b("Post without notifying the room's members.")},
              ("text",)),
        _tool("request_credential",
              "Ask the person for a secret this bot needs (an API key, a token, a password). They are shown "
              "a secure form; the value is stored for this bot and never shown in the conversation.",
              {"service": _s("What the secret is for, as people would name it ('Stripe', 'the office VPN')."),
               "reason": _s("One sentence on why it is needed now."),
               "fields": {"type": "array", "items": {"type": "string"},
                          "description": "Names of the values to ask for. Defaults to ['secret']."}},
              ("service", "reason")),
        _tool("request_sign_in",
              "Ask the person to sign in to a website in the browser of the selected computer, for a site this "
              "bot cannot sign in to by itself. Returns once they have finished or declined.",
              {"url": _s("The page where signing in starts."),
               "reason": _s("One sentence on why it is needed now.")},
              ("url",)),
        _tool("fill_login",
              "Fill a saved login into the sign-in form open in the selected computer's browser. The saved "
              "password is typed by the computer and never returned to the conversation.",
              {"site": _s("The site whose saved login to use, as its domain ('github.com').")},
              ("site",)),
        _tool("memory_update",
              "Save something this bot should remember in later conversations: a fact, a preference, a "
              "decision. Saving under an existing key replaces that entry.",
              {"key": _s("A short stable name for the entry ('weekly-report-format')."),
               "content": _s("What to remember, in plain words. At most 2000 characters."),
               "scope": _s("Who the memory is shared with.", enum=["bot", "room", "workspace"])},
              ("key", "content")),
        _tool("send_voice_note",
              "Speak a short message into a room as a voice note, in this bot's voice.",
              {"room_id": ROOM_ID, "thread_id": THREAD_ID,
               "text": _s("What to say. At most 1500 characters; long notes are cut."),
               "speed": {"type": "number", "description": "Speaking speed, from 0.5 to 2. Defaults to 1."}},
              ("text",)),
        _tool("create_options_card",
              "Post a card that asks the room to choose between options, and wait for the choice. Returns "
              "the option picked and who picked it.",
              {"room_id": ROOM_ID,
               "question": _s("The question above the options."),
               "options": {"type": "array", "items": {"type": "string"}, "description": "Two to eight short labels."},
               "allow_multiple": _b("Let people pick more than one option.")},
              ("question", "options")),
    ]


def _triggers() -> list[Tool]:
    kind = _s("What starts the trigger: a schedule, a call to its webhook address, an email to its "
              "address, or a message in a room that matches a pattern.",
              enum=["schedule", "webhook", "email", "room_message"])
    schedule = _s("For schedule triggers: a cron expression with five fields, read in the bot's time zone "
                  "('0 9 * * 1-5' is nine in the morning on weekdays). Seconds are not supported.")
    prompt = _s("The instructions the bot receives each time the trigger fires. The event that fired it "
                "(the webhook body, the email, the message) is added after these instructions.")
    pattern = _s("For room_message triggers: words or a regular expression a message must match. Matching "
                 "ignores case; messages from bots never fire a trigger.")
    enabled = _b("Whether the trigger fires. A disabled trigger keeps its settings and history.")
    return [
        _tool("list_triggers",
              "List the triggers that start this bot (or another bot you manage) on their own: schedules, "
              "webhooks, incoming email and room messages. Each entry has its id, kind, settings, whether it "
              "is enabled, when it last fired and whether that run succeeded. Use it before changing or "
              "deleting a trigger, to find its id.",
              {"bot_id": BOT_ID, "kind": kind, "enabled": _b("Only list enabled (true) or disabled (false) triggers."),
               "limit": LIMIT, "cursor": CURSOR},
              output=_page_of(TRIGGER, "triggers")),
        _tool("create_trigger",
              "Create a trigger that starts a bot on its own. A schedule trigger runs on a cron schedule; a "
              "webhook trigger gets a private address that starts the bot when called; an email trigger gets "
              "an address that starts it when mail arrives; a room_message trigger starts it when a message "
              "in a room matches a pattern. The answer includes the new trigger's id and, for webhook and "
              "email triggers, the address to give out. Creating a trigger does not run it.",
              {"bot_id": BOT_ID, "kind": kind, "schedule": schedule, "pattern": pattern, "prompt": prompt,
               "room_id": _s("The room the bot answers in when the trigger fires. Defaults to the bot's home room."),
               "time_zone": _s("An IANA time zone for the schedule ('Europe/Berlin'). Defaults to the bot's own."),
               "enabled": enabled},
              ("kind", "prompt"),
              output=TRIGGER),
        _tool("update_trigger",
              "Change a trigger's settings: its schedule, pattern, instructions, room or whether it is enabled. "
              "Fields left out keep their value. A webhook or email trigger keeps its address.",
              {"trigger_id": TRIGGER_ID, "schedule": schedule, "pattern": pattern, "prompt": prompt,
               "room_id": _s("The room the bot answers in when the trigger fires."),
               "time_zone": _s("An IANA time zone for the schedule."), "enabled": enabled},
              ("trigger_id",),
              output=TRIGGER),
        _tool("delete_trigger",
              "Delete a trigger for good. Its webhook or email address stops working at once and its run "
              "history is removed. To stop a trigger for a while, update it with enabled false instead.",
              {"trigger_id": TRIGGER_ID,
               "reason": _s("Why it is being deleted; kept in the workspace's activity log.")},
              ("trigger_id",)),
        _tool("run_trigger_now",
              "Fire a trigger once, now, as if its event had happened, to test it. The run is marked as a "
              "test in the trigger's history and does not move its schedule.",
              {"trigger_id": TRIGGER_ID,
               "sample_event": _s("For webhook, email and room_message triggers: the body, email text or "
                                  "message to pretend arrived. Defaults to an empty event.")},
              ("trigger_id",),
              output=TRIGGER),
    ]


def _bots() -> list[Tool]:
    engine = _s("The engine that runs the bot.", enum=["claude", "codex", "pi", "api"])
    model = _s("The model id the engine should use ('claude-sonnet-4', 'gpt-5', a local model's name). "
               "Leave it out to keep the engine's default.")
    instructions = _s("The bot's standing instructions: who it is, what it does, how it should answer. "
                      "Plain text or Markdown, at most 20000 characters.")
    return [
        _tool("get_bot",
              "Get one bot's full settings: name, engine, model, instructions, rooms, triggers, tool "
              "selection, and whether it is paused.",
              {"bot_id": BOT_ID},
              output=BOT),
        _tool("create_bot",
              "Create a new bot in this workspace. It starts in its own home room and in any rooms listed, "
              "with the given instructions and model. A new bot has no triggers; add them with "
              "create_trigger. The answer holds the new bot's id.",
              {"name": _s("The bot's display name, unique in the workspace, at most 40 characters."),
               "engine": engine, "model": model, "instructions": instructions,
               "rooms": {"type": "array", "items": {"type": "string"},
                         "description": "Ids of rooms the bot joins besides its home room."},
               "tool_selection": {"type": "object", "description":
                                  "Limit the bot to some servers and tools: {\"servers\": [...], \"tools\": [...]}. "
                                  "Leave it out to give the bot every enabled server.",
                                  "properties": {"servers": {"type": "array", "items": {"type": "string"}},
                                                 "tools": {"type": "array", "items": {"type": "string"}}}},
               "avatar_emoji": _s("One emoji shown as the bot's picture.")},
              ("name", "engine"),
              output=BOT),
        _tool("update_bot",
              "Change a bot's name, instructions, rooms or tool selection, or pause and resume it. Fields "
              "left out keep their value. A paused bot does not answer and its triggers do not fire.",
              {"bot_id": BOT_ID, "name": _s("A new display name."), "instructions": instructions,
               "paused": _b("Pause (true) or resume (false) the bot."),
               "rooms": {"type": "array", "items": {"type": "string"},
                         "description": "The complete list of rooms the bot should be in, besides its home room."}},
              ("bot_id",),
              output=BOT),
        _tool("set_bot_model",
              "Switch the engine or model a bot runs on, from its next turn. Conversations keep their history; "
              "a change of engine starts a fresh session in each room.",
              {"bot_id": BOT_ID, "engine": engine, "model": model,
               "model_url": _s("For the api engine: the base URL of an OpenAI-compatible endpoint, such as a "
                               "model served on this machine ('http://127.0.0.1:11434/v1')."),
               "reasoning_effort": _s("How hard the model should think, where the model supports it.",
                                      enum=["low", "medium", "high"])},
              ("bot_id",),
              output=BOT),
    ]


def _rooms() -> list[Tool]:
    members = {"type": "array", "items": {"type": "string"},
               "description": "People (user ids or emails) and bots (bot ids) to add."}
    return [
        _tool("read_room_history",
              "Read earlier messages in a room or thread, newest first, with author, time, text and "
              "attachments. Tool calls made in the room are left out unless asked for. Use before to page "
              "further back.",
              {"room_id": ROOM_ID, "thread_id": THREAD_ID, "limit": LIMIT,
               "before": _s("Only messages older than this message id or ISO 8601 timestamp."),
               "include_tool_calls": _b("Also return the tool calls bots made, with their inputs.")},
              output=_page_of(MESSAGE, "messages")),
        _tool("search_messages",
              "Search messages in every room this bot can read, by words, author and date. Each hit has "
              "the room, the message id, the author, the time and the text around the match.",
              {"query": _s("Words to look for. Quoted phrases match exactly."),
               "room_id": _s("Only search this room."),
               "author": _s("Only messages by this person or bot (user id, email or bot id)."),
               "since": SINCE, "until": UNTIL, "limit": LIMIT},
              ("query",),
              output=_page_of(MESSAGE, "messages")),
        _tool("create_room",
              "Create a room and add people and bots to it. This bot joins it and becomes its first "
              "moderator. The answer holds the new room's id.",
              {"name": _s("The room's name, at most 80 characters."), "topic": _s("A line shown under the name."),
               "members": members, "private": _b("Only members can find and read the room. Defaults to true.")},
              ("name",)),
        _tool("invite_to_room",
              "Add people or bots to a room this bot moderates. They can read its history from the start.",
              {"room_id": ROOM_ID, "members": members,
               "message": _s("A note shown to the people invited.")},
              ("members",)),
        _tool("rename_room",
              "Change a room's name or topic. Members see the change in the room's timeline.",
              {"room_id": ROOM_ID, "name": _s("The new name."), "topic": _s("The new topic; empty clears it.")}),
        _tool("archive_room",
              "Archive a room: it is kept and can be read, but nobody can post in it and its triggers stop. "
              "An archived room can be restored from the app.",
              {"room_id": ROOM_ID, "reason": _s("Why; shown in the room's last message.")}),
    ]


def _files_and_memory() -> list[Tool]:
    return [
        _tool("list_workspace_files",
              "List files and folders in the bot's workspace folder, with size and modification time.",
              {"path": PATH, "recursive": _b("List every level below the path, not just its direct content."),
               "pattern": _s("Only names matching this glob ('*.csv')."), "limit": LIMIT, "cursor": CURSOR},
              output=_page_of(FILE_ENTRY, "files")),
        _tool("read_workspace_file",
              "Read a text file from the bot's workspace. Long files are read in windows of lines; binary "
              "files are refused (attach them instead).",
              {"path": PATH, "offset": _i("The first line to read, from 1.", minimum=1),
               "limit": _i("How many lines to read. Defaults to 400.", minimum=1, maximum=5000)},
              ("path",)),
        _tool("write_workspace_file",
              "Write a text file in the bot's workspace, replacing it or adding to its end. Missing folders "
              "are created. People in the bot's rooms can open the file from the workspace panel.",
              {"path": PATH, "content": _s("The text to write."),
               "mode": _s("Replace the file or add to its end.", enum=["replace", "append"])},
              ("path", "content")),
        _tool("share_file",
              "Make a link to a workspace file that people outside the workspace can open, for a limited time.",
              {"path": PATH, "expires_hours": _i("How long the link works. Defaults to 24; at most 720.",
                                                 minimum=1, maximum=720)},
              ("path",)),
        _tool("memory_search",
              "Search what this bot (or its room or workspace) has saved with memory_update, by words. "
              "Returns matching entries with their key, content, scope and when they were saved.",
              {"query": _s("Words to look for in keys and content."),
               "scope": _s("Where to search.", enum=["bot", "room", "workspace"]), "limit": LIMIT},
              ("query",),
              output=_page_of(MEMORY_ENTRY, "entries")),
        _tool("memory_forget",
              "Delete a saved memory entry by its key. It is gone for every conversation of the bot.",
              {"key": _s("The entry's key."), "scope": _s("Where the entry lives.", enum=["bot", "room", "workspace"])},
              ("key",)),
    ]


def _account() -> list[Tool]:
    return [
        _tool("list_integrations",
              "List the integrations this workspace can connect (mail, calendars, code hosts, chat services) "
              "and which ones are connected, with the scopes each connection granted.",
              {"connected": _b("Only connected (true) or only available (false) integrations."),
               "category": _s("Only one category.", enum=["mail", "calendar", "code", "chat", "storage"])},
              output=_page_of(INTEGRATION, "integrations")),
        _tool("connect_integration",
              "Start connecting an integration. The person gets a card in the room to approve the connection "
              "with the service; the call returns once they approve or decline.",
              {"integration": _s("The integration's id, as list_integrations returns it."),
               "scopes": {"type": "array", "items": {"type": "string"},
                          "description": "The scopes to ask for. Defaults to the integration's basic read scopes."},
               "room_id": ROOM_ID},
              ("integration",)),
        _tool("get_usage_report",
              "Report what bots have used over a period: model tokens, cost, tool calls and turns, in total "
              "and grouped by bot, by day or by model.",
              {"bot_id": _s("Only this bot. Leave it out for the whole workspace."), "since": SINCE,
               "until": UNTIL, "group_by": _s("How to group the figures.", enum=["bot", "day", "model"])},
              output=_page_of(USAGE_ROW, "rows")),
        _tool("list_computers",
              "List the person's computers this bot may use, with name, system, and whether each is online.",
              {"include_offline": _b("Also list computers that are not online now.")},
              output=_page_of(COMPUTER, "computers")),
    ]


def platform_tools() -> list[Tool]:
    """The 39 tools, listed ones first (the order the platform lists them in)."""
    return [*_listed(), *_triggers(), *_bots(), *_rooms(), *_files_and_memory(), *_account()]
