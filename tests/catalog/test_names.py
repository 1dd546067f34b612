from hypothesis import given, strategies as st

from sidecar.catalog.names import PROVIDER_NAME, assign_names, name_budget


def test_plain_names_are_prefixed_with_the_alias() -> None:
    assert assign_names([("notes", "search"), ("agents", "list_bots")], 50) == ["notes__search", "agents__list_bots"]


def test_illegal_characters_become_underscores_and_collisions_get_a_digest() -> None:
    names = assign_names([("a", "x.y"), ("a", "x_y")], 50)
    assert names[0] == "a__x_y"
    assert names[1].startswith("a__x_y_") and len(names[1]) == len("a__x_y_") + 8


def test_long_names_are_cut_to_the_budget_deterministically() -> None:
    origin = [("server", "t" * 100)]
    first = assign_names(origin, name_budget("omb"))
    assert first == assign_names(origin, name_budget("omb"))
    assert len(first[0]) == name_budget("omb") == 64 - len("mcp__omb__")


def test_reserved_names_are_never_given() -> None:
    assert assign_names([("a", "use_tool")], 50, reserved={"use_tool"}, prefixed=False)[0] != "use_tool"


@given(st.lists(st.tuples(st.text(min_size=1, max_size=12), st.text(min_size=1, max_size=90)), max_size=40),
       st.text(alphabet="abcdefghijklmnopqrstuvwxyz-_", min_size=1, max_size=20))
def test_every_name_fits_provider_rules_and_all_are_distinct(origins: list[tuple[str, str]], face: str) -> None:
    names = assign_names(origins, name_budget(face), reserved={"find_tool"})
    assert len(set(names)) == len(names)
    for name in names:
        assert PROVIDER_NAME.match(f"mcp__{face}__{name}" if len(face) < 30 else name)
        assert len(name) <= name_budget(face)
    assert "find_tool" not in names
