"""A tool description's summary, apart from the rest (usage notes, examples, code).

Owns one split. Real servers write long descriptions: a sentence or two of what the tool
does, then "Best for", "Usage example", JSON call examples, warnings for the agent and
lists of options. All of that says less of what the tool *is* than its first sentences,
and it drowns them: in a sentence model's vector (one vector for the whole text) and in a
word index (a word of an example counts as much as a word of the summary). So search
reads the summary as the description, and the rest as a weaker field.

The summary is the text before the first fenced code block, markdown emphasis and
headings unmarked, cut after the sentence that passes `SUMMARY_CHARS`. A description of
that size or less is all summary. General rules only: no server or tool is named here.
"""

from __future__ import annotations

import functools
import re

__all__ = ["SUMMARY_CHARS", "split_description"]

SUMMARY_CHARS = 240  # the summary ends with the sentence that reaches this many characters
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_MARKUP = re.compile(r"[*_#>`]+|\|")
_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?:])\s+|\n\s*\n|\n\s*[-*\d]")


def _plain(text: str) -> str:
    return _SPACE.sub(" ", _MARKUP.sub(" ", text)).strip()


@functools.lru_cache(maxsize=1 << 12)
def split_description(description: str) -> tuple[str, str]:
    """(summary, rest) of a description; the rest is empty for a short one."""
    if len(description) <= SUMMARY_CHARS:
        return _plain(description), ""
    fence = _FENCE.search(description)
    head = description[: fence.start()] if fence else description
    end = len(head)
    for match in _SENTENCE_END.finditer(head):
        if match.start() >= SUMMARY_CHARS or (match.start() > 0 and head[match.start() - 1] == ":" and
                                               match.start() > SUMMARY_CHARS // 3):
            end = match.start()
            break
    summary = _plain(head[:end])
    if not summary:  # a description that opens with code: read it whole
        return _plain(description), ""
    return summary, description[end:] if end < len(description) else ""
