"""A classifier's answer: a level and a short reason, and how two answers combine (the
higher level wins)."""

from __future__ import annotations

from typing import Literal, NamedTuple

__all__ = ["Level", "Rating", "SAFE", "worst"]

Level = Literal["safe", "review", "high"]
_ORDER = {"safe": 0, "review": 1, "high": 2}


class Rating(NamedTuple):
    level: Level
    why: str  # the classifier's own words, never the command's text


SAFE = Rating("safe", "read-only inspection")


def worst(*ratings: Rating) -> Rating:
    """The highest of `ratings` (the first of equals); SAFE for none."""
    found = SAFE
    for rating in ratings:
        if _ORDER[rating.level] > _ORDER[found.level]:
            found = rating
    return found
