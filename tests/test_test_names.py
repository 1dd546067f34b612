"""Test modules are collected by basename (rootdir import mode): two files of one name in
different folders stop the whole run at collection, so every name is kept unique."""

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_test_modules_share_a_name() -> None:
    names = Counter(p.name for p in TESTS.rglob("test_*.py") if "node_modules" not in p.parts)
    assert [n for n, count in names.items() if count > 1] == []
