"""A log line about a server names it once, however many times the error's words did."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sidecar.upstream.supervisor import _unnamed

ALIASES = st.from_regex(r"[a-z][a-z0-9_-]{0,12}", fullmatch=True)


@given(ALIASES, st.integers(min_value=0, max_value=3), st.sampled_from([" ", ": "]),
       st.text(min_size=1, max_size=40).filter(lambda w: not w.startswith(("upstream", " ", ":"))))
def test_the_name_an_error_carries_is_said_once(alias: str, times: int, joint: str, words: str) -> None:
    named = "".join(f"upstream '{alias}'{joint}" for _ in range(times)) + words
    assert _unnamed(named, alias) == words


def test_another_servers_name_is_kept() -> None:
    assert _unnamed("upstream 'other' stopped", "mine") == "upstream 'other' stopped"
