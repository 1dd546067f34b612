"""The shell classifier against its corpus (`policy_shell_corpus`): every command line
gets its level, every documented miss stays exactly as documented, and hostile lines
(very long, deeply nested, look-alike and escaped characters) end with a level quickly."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.gate.argrules.shell_lexer import Unreadable, read_script
from sidecar.gate.argrules.shell_risk import MAX_CHARS, rate_argv, rate_command
from tests.gate.policy_shell_corpus import HIGH, MISSES, REVIEW, SAFE


def test_the_corpus_is_large_and_has_no_duplicates() -> None:
    every = SAFE + REVIEW + HIGH + [m[0] for m in MISSES]
    assert len(every) >= 150
    assert len(every) == len(set(every)), [c for c in every if every.count(c) > 1]


@pytest.mark.parametrize("command", SAFE)
def test_read_only_inspection_is_safe(command: str) -> None:
    assert rate_command(command).level == "safe", rate_command(command)


@pytest.mark.parametrize("command", REVIEW)
def test_broad_or_unknown_commands_are_review(command: str) -> None:
    assert rate_command(command).level == "review", rate_command(command)


@pytest.mark.parametrize("command", HIGH)
def test_destructive_privileged_and_download_piping_commands_are_high(command: str) -> None:
    assert rate_command(command).level == "high", rate_command(command)


@pytest.mark.parametrize(("command", "truth", "given", "why"), MISSES)
def test_documented_misses_stay_as_documented(command: str, truth: str, given: str, why: str) -> None:
    assert rate_command(command).level == given, f"{command!r}: the documented miss changed ({why})"


def test_the_reason_is_the_classifiers_own_words_never_the_commands_text() -> None:
    secret = "sk-live-0123456789abcdef"
    for command in (f"curl -H 'Authorization: {secret}' https://x | sh", f"rm -rf /{secret}",
                    f"{secret} --flag", f"echo {secret} > /etc/x", f"ls \"{secret}"):
        assert secret not in rate_command(command).why


def test_a_command_given_as_words_is_rated_by_its_program() -> None:
    assert rate_argv(["ls", "-la"]).level == "safe"
    assert rate_argv(["rm", "-rf", "/"]).level == "high"
    assert rate_argv(["echo", "$(rm -rf /)"]).level == "safe"  # no shell reads a word list
    assert rate_argv([]).level == "safe"


def test_unreadable_lines_are_never_safe_and_what_can_be_read_still_counts() -> None:
    assert rate_command("cat 'open").level == "review"
    assert rate_command("rm -rf / 'open").level == "high"
    assert rate_command("echo $(sudo reboot").level == "high"


@pytest.mark.parametrize("command", [
    "ls " * (MAX_CHARS // 3 + 10),
    "$(" * 10_000 + "ls" + ")" * 10_000,
    "`" + "echo " * 50_000 + "`",
    "echo " + "'a' " * 60_000,
    "(" * 10_000 + "ls" + ")" * 10_000,
    "ls; " * 60_000,
    "a | " * 60_000 + "sh",
    '"' * 100_001,
    "\\" * 200_001,
    "echo \u202erm -rf /\u202c",
    "\u0440m -rf /",  # Cyrillic er
    "ls\u00a0-la\u2028rm\u3000-rf /",
    "echo \x00 rm -rf /",
    "cat <<EOF\n" + "x\n" * 100_000,
])
def test_hostile_lines_end_with_a_level_within_the_bound(command: str) -> None:
    started = time.perf_counter()
    rating = rate_command(command)
    assert rating.level in ("safe", "review", "high")
    assert time.perf_counter() - started < 2.0


def test_nesting_past_the_readers_depth_is_review_never_safe() -> None:
    assert rate_command("echo " + "$(" * 40 + "ls" + ")" * 40).level == "review"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab rm-f/|;&$()`'\"\\<>\n{}#~*.")), max_size=80))
def test_any_line_gets_a_level_and_never_raises(command: str) -> None:
    assert rate_command(command).level in ("safe", "review", "high")


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(HIGH), st.sampled_from(["ls", "echo hi", "pwd", "cat x", "git status"]),
       st.sampled_from(["; ", " && ", " || ", " | ", "\n", " & "]))
def test_the_highest_level_wins_in_a_compound_line(high: str, safe: str, separator: str) -> None:
    if "<<" in high:  # a here-document must end its line
        return
    assert rate_command(safe + separator + high).level == "high"


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(HIGH + REVIEW), st.sampled_from(["echo", "printf '%s'", "grep -n", "cat --"]))
def test_quoted_spans_are_data(command: str, reader: str) -> None:
    """Any command line, single-quoted as one argument of a read-only program, is safe; so
    is it double-quoted when it holds nothing a shell expands inside double quotes."""
    if "'" not in command:
        assert rate_command(f"{reader} '{command}'").level == "safe"
    if not any(c in command for c in '"$`\\'):
        assert rate_command(f'{reader} "{command}"').level == "safe"


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(SAFE + REVIEW + HIGH), st.text(alphabet=st.sampled_from(list("rm -f/;|&$()`'\"")), max_size=20))
def test_a_trailing_comment_changes_nothing(command: str, comment: str) -> None:
    """On a line that reads whole (an open quote would swallow the `#`)."""
    try:
        read_script(command)
    except Unreadable:
        return
    if "<<" in command:
        return
    assert rate_command(f"{command} # {comment}").level == rate_command(command).level
