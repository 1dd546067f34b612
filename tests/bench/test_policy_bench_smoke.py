"""Smoke run of the argument-rules benchmark (`bench.argrules`): every figure is produced
and the ten rules really run on every call (the last one decides). Never a timing limit."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # `bench` is a top-level package beside `sidecar`, not installed
    sys.path.insert(0, str(REPO))

from bench.argrules import TEN_RULES, time_argument_rules  # noqa: E402


def test_the_argument_rules_benchmark_produces_every_figure() -> None:
    figures = time_argument_rules(repeats=1, calls=20)
    assert "error" not in figures, figures
    assert set(figures) == {"gate_no_policy_us", "gate_name_rule_us", "gate_ten_argument_rules_us",
                            "match_ten_rules_us", "classify_command_us", "ten_rules_added_us"}
    assert all(isinstance(v, float) for v in figures.values())
    assert len(TEN_RULES) == 10
