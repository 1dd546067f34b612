"""The action a request asks for, and whether a tool does it: a small lexicon of action verbs.

Owns the verb families (`FAMILIES`: words English uses for one kind of act, each family in
the project's own words), how a request's action is read (`request_action`: the first word
of an imperative request, or a verb and its particle such as "turn on", when the lexicon
knows it) and how a tool's are read (`tool_actions`: every family a word of its name, of
its description's summary or of its input's enum values belongs to). The verdict reads it: a request whose action no
top tool does is one nothing fits. A request the lexicon does not recognise (another
language, a question, a verb not listed) states no action, and the rule stays silent.
"""

from __future__ import annotations

import functools

from sidecar.catalog.search.summary import split_description
from sidecar.catalog.search.text import stem, words

__all__ = ["ACTS", "FAMILIES", "request_action", "tool_actions"]

# Each line: one family of acts. A word may sit in more than one family (its request reads
# as any of them). A verb and its particle are written joined by a hyphen.
FAMILIES = (
    "read: get read fetch retrieve show view display inspect describe look see check open lookup detail "
    "list browse enumerate search find query locate filter count summarize summary report return",
    "create: create add make new generate build provision spin launch insert compose draft write set-up",
    "update: update change edit modify set adjust alter tweak rename patch configure replace mark apply",
    "delete: delete remove erase drop destroy purge wipe discard trash clear uninstall unlink nuke",
    "send: send post message email mail notify ping reply forward broadcast publish announce",
    "restore: restore recover rollback roll-back revert undo undelete",
    "archive: archive unarchive",
    "enable: enable activate turn-on switch-on unblock allow unmute",
    "disable: disable deactivate turn-off switch-off block ban suspend mute silence",
    "revoke: revoke invalidate expire",
    "rotate: rotate renew regenerate refresh",
    "stop: cancel abort stop halt terminate kill end shut-down pause",
    "start: start run launch execute trigger begin boot resume invoke play",
    "restart: restart reboot reload",
    "copy: copy duplicate clone fork replicate",
    "move: move transfer migrate relocate",
    "export: download export save pull back-up backup snapshot",
    "import: upload import push attach",
    "buy: buy purchase order rent pay subscribe checkout",
    "book: book reserve schedule remind",
    "assign: assign allocate delegate hand reassign",
    "merge: merge combine join dedupe",
    "invite: invite share",
    "pin: pin star bookmark favorite",
    "print: print",
    "translate: translate",
    "convert: convert transform",
    "compress: compress zip unzip extract",
    "refund: refund reimburse",
    "ship: ship deliver",
    "approve: approve accept confirm reject deny decline",
    "resize: resize scale increase grow shrink decrease expand extend",
    "register: register enroll sign-up",
    "follow: follow unfollow subscribe watch",
)
_PARTICLES = frozenset("on off up down back in out".split())
# Polite openings before an imperative's verb ("please", "could you", "I want to"). A question
# ("is", "what", "who") is not stripped: it opens with no act the lexicon knows.
_POLITE = frozenset("please pls kindly can could would will you i we need want to let lets us go ahead just help me".split())
_OPENING = 12  # the words read for a request's act (polite openings are short)
ACTS = 3  # the tools, from the top of a ranking, whose acts the verdict reads


@functools.lru_cache(maxsize=1)
def _families() -> dict[str, frozenset[str]]:
    """Each word (a stem, or a verb's stem and its particle) -> the families it belongs to."""
    found: dict[str, set[str]] = {}
    for line in FAMILIES:
        family, members = line.split(": ")
        for word in members.split():
            verb, _, particle = word.partition("-")
            found.setdefault(f"{stem(verb)} {particle}" if particle else stem(verb), set()).add(family)
    return {word: frozenset(families) for word, families in found.items()}


@functools.lru_cache(maxsize=1 << 10)
def request_action(plain: tuple[str, ...]) -> tuple[frozenset[str], str]:
    """The families of the act an imperative request (its words as written, in order) opens
    with, past the polite words, and the verb's stem (or verb and particle); no families
    when the lexicon does not know that word."""
    said = [w.lower() for w in plain[:_OPENING]]
    while said and said[0] in _POLITE:
        said = said[1:]
    if not said:
        return frozenset(), ""
    known, verb = _families(), stem(said[0])
    if len(said) > 1 and said[1] in _PARTICLES and f"{verb} {said[1]}" in known:
        return known[f"{verb} {said[1]}"], f"{verb} {said[1]}"
    return known.get(verb, frozenset()), verb


def tool_actions(name: str, description: str, enums: str = "") -> frozenset[str]:
    """Every family a word of the tool's name, of its description's summary or of its input
    schema's enum values (a tool taking `APPROVE` or `archive` as a choice does that act)
    belongs to (`LexicalIndex.acts` keeps it per tool)."""
    known = _families()
    text = words(name) + words(split_description(description)[0].lower()) + words(enums.lower())
    found: set[str] = set()
    for word in text:
        found.update(known.get(stem(word), ()))
    for first, second in zip(text, text[1:]):
        if second in _PARTICLES:
            found.update(known.get(f"{stem(first)} {second}", ()))
    return frozenset(found)
