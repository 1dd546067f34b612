from hypothesis import given, strategies as st

from sidecar.config import Grants, Selection
from sidecar.gate.grants import Grant, glob_match


def test_glob_has_one_special_character() -> None:
    assert glob_match("notes__*", "notes__search")
    assert glob_match("*__delete_*", "files__delete_all")
    assert not glob_match("*__delete_*", "files__undelete")
    assert glob_match("a*b*c", "abc") and glob_match("a*b*c", "a-x-b-y-c")
    assert not glob_match("a*b*c", "acb")
    assert glob_match("x.y", "x.y") and not glob_match("x.y", "xzy")  # no regex meaning
    assert not glob_match("[a]*", "a") and glob_match("[a]*", "[a]z")
    assert glob_match("*", "") and not glob_match("ab*ba", "aba")


@given(st.text(alphabet="ab*", max_size=8), st.text(alphabet="ab", max_size=10))
def test_glob_agrees_with_a_reference_matcher(pattern: str, name: str) -> None:
    import fnmatch

    reference = fnmatch.fnmatchcase(name, pattern)  # same semantics for these alphabets
    assert glob_match(pattern, name) == reference


def test_selection_then_allow_then_deny_and_deny_wins() -> None:
    grant = Grant(Selection(servers=["notes", "files"]), Grants(allow=["notes__*", "files__read_*"], deny=["notes__delete"]))
    assert grant.allows("notes", "search")
    assert not grant.allows("notes", "delete")
    assert grant.allows("files", "read_file")
    assert not grant.allows("files", "write_file")
    assert not grant.allows("agents", "list_bots")


def test_selection_tools_may_name_full_or_bare_names() -> None:
    grant = Grant(Selection(tools=["notes__search", "list_bots"]), Grants())
    assert grant.allows("notes", "search") and grant.allows("agents", "list_bots")
    assert not grant.allows("notes", "add_note")


def test_no_selection_and_no_lists_allows_everything() -> None:
    grant = Grant(None, Grants())
    assert grant.allows("any", "tool") and not grant.restricts
