"""Hostile JMESPath queries: a regression corpus and a generator over the grammar.

`REGRESSION` holds the cases an adversarial review found (shared references doubled by
pipes, few but expensive visits, deep brackets) and their near relatives. `hostile(rng)`
builds one expression from the constructs that cost the most: multi-selects of the
current node (logical doubling with no new memory), flattens and projections over them,
functions that make or compare big values, filters and pipes. Fed by a `random.Random`
(hypothesis passes its own, so failures shrink and replay).
"""

from __future__ import annotations

import random

FIELDS = ["id", "name", "tags", "nested", "nested.v", "missing"]

REGRESSION = [
    "contains({a: " + "|".join(["[@,@]"] * 25) + "}, `1`)",  # a type error whose words would repr 2^25 copies
    " | ".join(["[@,@]"] * 25),  # 150 characters; 2^25 logical copies of the payload
    " | ".join(["[@,@]"] * 40),
    "[" + ", ".join(["to_string(@)"] * 150) + "]",  # few visits, each one expensive
    "(" * 3000 + "@" + ")" * 3000,  # compile outside the guard once gave "internal error"
    "(" * 1300 + "@" + ")" * 1300,
    "[" * 2000 + "@" + "]" * 2000,
    "`" + "[" * 3000 + "]" * 3000 + "`",
    "{a: " + "|".join(["[@,@]"] * 30) + ", b: " + "|".join(["[@,@]"] * 30) + "} | a == b",
    "|".join(["[@,@]"] * 30) + " | contains(@, `1`)",
    "|".join(["[@,@]"] * 20) + " | to_string(@) | length(@)",
    "|".join(["[@,@]"] * 20) + " | [][][][][][][][][][][][][][][][][][][] | length(@)",
    "[*].[@,@,@,@,@,@,@,@][].[@,@,@,@,@,@,@,@][].[@,@,@,@,@,@,@,@][]",
    "join('', [" + ", ".join(["to_string(@)"] * 100) + "])",
    "|".join(["[@,@]"] * 22) + " | [*][*][*][*][*][*][*][*][*][*][*][*][*][*][*][*][*][*][*][*]",
    "|".join(["[@,@]"] * 16) + " | [] | [] | [] | sort_by(@, &to_string(@))",
    "|".join(["[@,@]"] * 22) + " | merge(@[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0], `{}`)",
    "not_null(" * 30 + "@" + ")" * 30,
    "a" + ".b" * 3000,
    "",
    "[?",
]


def _atom(rng: random.Random) -> str:
    return rng.choice(["@", "@", "@", "[*]", "*", "[]", "`1`", "'x'", "`[1,2,3]`", *FIELDS])


def hostile(rng: random.Random, depth: int = 4) -> str:
    """One expression, nested at most `depth` constructs deep."""
    if depth <= 0 or rng.random() < 0.15:
        return _atom(rng)
    inner = lambda: hostile(rng, depth - 1)  # noqa: E731 - a short local name reads best here
    kind = rng.randrange(16)
    if kind == 0:
        return "[" + ",".join(inner() for _ in range(rng.randint(2, 8))) + "]"
    if kind == 1:
        return " | ".join(["[@,@]"] * rng.randint(5, 40)) + " | " + inner()
    if kind == 2:
        return "{" + ",".join(f"k{i}: {inner()}" for i in range(rng.randint(2, 6))) + "}"
    if kind == 3:
        return f"{inner()} | {inner()}"
    if kind == 4:
        return f"({inner()})[]" + "[]" * rng.randint(0, 6)
    if kind == 5:
        return f"({inner()})[*]" + ".[@,@]" * rng.randint(0, 5)
    if kind == 6:
        return rng.choice(["to_string", "length", "type", "keys", "values", "reverse", "to_array",
                           "not_null", "sort", "max", "sum"]) + f"({inner()})"
    if kind == 7:
        return f"join(',', ({inner()})[*].to_string(@))"
    if kind == 8:
        return f"contains({inner()}, {inner()})"
    if kind == 9:
        return f"({inner()}) == ({inner()})"
    if kind == 10:
        return f"sort_by(({inner()})[*], &to_string(@))"
    if kind == 11:
        return f"map(&{inner()}, ({inner()})[*])"
    if kind == 12:
        return f"({inner()})[?{inner()} == {inner()}]"
    if kind == 13:
        return f"merge(`{{}}`, ({inner()})[0])"
    if kind == 14:
        return f"({inner()})[{rng.choice(['0', '-1', '::2', '::-1', '1:', ':3'])}]"
    return "[" + ",".join(["to_string(@)"] * rng.randint(2, 60)) + "]"
