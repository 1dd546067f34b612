"""Several small servers a person might add: notes, calendar, tracker, mail, drive.

Written for these tests: short tools with plain inputs, 6 to 14 tools per server.
"""

from __future__ import annotations

from typing import Any

Tool = dict[str, Any]
# (name, description, ((property, type, description, required), ...))
Spec = tuple[str, str, tuple[tuple[str, str, str, bool], ...]]

_ID = "The id returned by the list or search tool."
_LIMIT = ("limit", "integer", "At most this many results (default 20).", False)

SERVERS: dict[str, tuple[Spec, ...]] = {
    "notes": (
        ("search_notes", "Find notes whose title or text contains the words.", (("query", "string", "Words to find.", True), _LIMIT)),
        ("read_note", "Read one note in full, as Markdown.", (("note_id", "string", _ID, True),)),
        ("create_note", "Create a note in a notebook.", (("title", "string", "The note's title.", True),
                                                         ("body", "string", "Markdown text.", False),
                                                         ("notebook", "string", "Notebook name; default Inbox.", False))),
        ("append_to_note", "Add text to the end of a note.", (("note_id", "string", _ID, True), ("text", "string", "Markdown to add.", True))),
        ("list_notebooks", "List notebooks with their note counts.", ()),
        ("tag_note", "Add or remove tags on a note.", (("note_id", "string", _ID, True),
                                                      ("add", "array", "Tags to add.", False), ("remove", "array", "Tags to remove.", False))),
    ),
    "calendar": (
        ("list_events", "List calendar events between two times.", (("start", "string", "ISO 8601 start.", True),
                                                                    ("end", "string", "ISO 8601 end.", True),
                                                                    ("calendar", "string", "Calendar id; default primary.", False))),
        ("get_event", "Get one event with attendees and conferencing link.", (("event_id", "string", _ID, True),)),
        ("create_event", "Create an event and invite attendees.", (("title", "string", "Event title.", True),
                                                                   ("start", "string", "ISO 8601 start.", True),
                                                                   ("end", "string", "ISO 8601 end.", True),
                                                                   ("attendees", "array", "Email addresses to invite.", False),
                                                                   ("location", "string", "A place or a video link.", False))),
        ("update_event", "Move or edit an event; attendees are told of changes.", (("event_id", "string", _ID, True),
                                                                                  ("start", "string", "New start.", False),
                                                                                  ("end", "string", "New end.", False),
                                                                                  ("title", "string", "New title.", False))),
        ("delete_event", "Delete an event and send cancellations.", (("event_id", "string", _ID, True),)),
        ("find_free_time", "Find times when all the given people are free.", (("attendees", "array", "Email addresses.", True),
                                                                             ("duration_minutes", "integer", "Meeting length.", True),
                                                                             ("within_days", "integer", "Look this many days ahead (default 7).", False))),
        ("respond_to_invitation", "Accept, decline or tentatively accept an invitation.", (("event_id", "string", _ID, True),
                                                                                          ("response", "string", "accepted, declined or tentative.", True))),
        ("list_calendars", "List the calendars this account can see.", ()),
        ("set_reminder", "Set a reminder before an event.", (("event_id", "string", _ID, True),
                                                             ("minutes_before", "integer", "When to remind.", True))),
    ),
    "tracker": (
        ("list_issues", "List issues in a project, filtered by state, assignee or label.", (("project", "string", "Project key, e.g. WEB.", True),
                                                                                           ("state", "string", "open, closed or all.", False),
                                                                                           ("assignee", "string", "A username.", False), _LIMIT)),
        ("get_issue", "Get an issue with its description, comments and links.", (("issue_key", "string", "Like WEB-123.", True),)),
        ("create_issue", "Create an issue in a project.", (("project", "string", "Project key.", True), ("title", "string", "Summary line.", True),
                                                           ("description", "string", "Markdown details.", False),
                                                           ("priority", "string", "low, medium, high or urgent.", False))),
        ("update_issue", "Change an issue's title, description, priority or state.", (("issue_key", "string", "Like WEB-123.", True),
                                                                                    ("state", "string", "New state.", False),
                                                                                    ("priority", "string", "New priority.", False))),
        ("assign_issue", "Assign an issue to someone, or unassign it.", (("issue_key", "string", "Like WEB-123.", True),
                                                                         ("assignee", "string", "A username; empty to unassign.", True))),
        ("comment_on_issue", "Add a comment to an issue.", (("issue_key", "string", "Like WEB-123.", True), ("body", "string", "Markdown.", True))),
        ("search_issues", "Search issues across projects by words.", (("query", "string", "Words to find.", True), _LIMIT)),
        ("list_projects", "List projects with their keys and leads.", ()),
        ("list_sprints", "List a project's sprints, current first.", (("project", "string", "Project key.", True),)),
        ("move_to_sprint", "Move issues into a sprint.", (("sprint_id", "string", _ID, True), ("issue_keys", "array", "Issues to move.", True))),
        ("link_issues", "Link two issues (blocks, relates to, duplicates).", (("from_key", "string", "Issue key.", True),
                                                                              ("to_key", "string", "Issue key.", True),
                                                                              ("kind", "string", "blocks, relates or duplicates.", True))),
        ("log_work", "Log time spent on an issue.", (("issue_key", "string", "Like WEB-123.", True), ("minutes", "integer", "Time spent.", True))),
        ("list_labels", "List the labels used in a project.", (("project", "string", "Project key.", True),)),
        ("close_issue", "Close an issue with a resolution.", (("issue_key", "string", "Like WEB-123.", True),
                                                              ("resolution", "string", "done, won't do or duplicate.", False))),
    ),
    "mail": (
        ("search_mail", "Search mail by words, sender, date or label.", (("query", "string", "Search words and operators like from:.", True), _LIMIT)),
        ("read_message", "Read one email with its headers and text.", (("message_id", "string", _ID, True),)),
        ("send_email", "Send an email.", (("to", "array", "Recipients.", True), ("subject", "string", "Subject.", True),
                                          ("body", "string", "Plain text or Markdown.", True), ("cc", "array", "Copy to.", False))),
        ("reply_to_message", "Reply to an email, keeping the thread.", (("message_id", "string", _ID, True), ("body", "string", "Reply text.", True),
                                                                        ("reply_all", "boolean", "Reply to everyone.", False))),
        ("create_draft", "Save an email as a draft without sending.", (("to", "array", "Recipients.", True), ("subject", "string", "Subject.", True),
                                                                      ("body", "string", "Text.", True))),
        ("label_message", "Add or remove labels on an email.", (("message_id", "string", _ID, True), ("add", "array", "Labels to add.", False),
                                                                ("remove", "array", "Labels to remove.", False))),
        ("archive_message", "Archive an email (remove it from the inbox).", (("message_id", "string", _ID, True),)),
        ("list_labels", "List mail labels with unread counts.", ()),
    ),
    "drive": (
        ("search_files", "Search files by name and content.", (("query", "string", "Words to find.", True), _LIMIT)),
        ("list_folder", "List a folder's files and subfolders.", (("folder_id", "string", "Folder id; root if left out.", False),)),
        ("read_document", "Read a document, spreadsheet or text file as text.", (("file_id", "string", _ID, True),)),
        ("upload_file", "Upload a file from text or base64 content.", (("name", "string", "File name.", True),
                                                                      ("content", "string", "Text, or base64 for binary.", True),
                                                                      ("folder_id", "string", "Target folder.", False))),
        ("create_folder", "Create a folder.", (("name", "string", "Folder name.", True), ("parent_id", "string", "Parent folder.", False))),
        ("move_file", "Move a file to another folder.", (("file_id", "string", _ID, True), ("folder_id", "string", "Target folder.", True))),
        ("rename_file", "Rename a file or folder.", (("file_id", "string", _ID, True), ("name", "string", "New name.", True))),
        ("share_file", "Share a file with people, as viewer or editor.", (("file_id", "string", _ID, True), ("emails", "array", "People.", True),
                                                                         ("role", "string", "viewer or editor.", False))),
        ("delete_file", "Move a file to the trash.", (("file_id", "string", _ID, True),)),
        ("list_recent_files", "List files changed recently.", (_LIMIT,)),
    ),
}


def _tool(spec: Spec) -> Tool:
    name, description, props = spec
    properties: dict[str, Any] = {}
    for key, kind, text, _ in props:
        properties[key] = {"type": kind, "description": text}
        if kind == "array":
            properties[key]["items"] = {"type": "string"}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [key for key, _, _, needed in props if needed]
    if required:
        schema["required"] = required
    return {"name": name, "description": description, "inputSchema": schema}


def small_tools(alias: str) -> list[Tool]:
    return [_tool(spec) for spec in SERVERS[alias]]
