"""Policy over what a call does (issue 27): conditions on a call's arguments and the
shell-command risk classifier.

Owns the rules of `policy.rules` that read arguments: `when` conditions (JMESPath, run
by the metered interpreter of `query_result` with this room's own functions:
`path_outside`, `private_host`, `shell_level`), `classify` rules (`shell_risk`) and the
first-match decision over them (`rules`). Loaded only when a config has such a rule: a
config without one never imports this package.
"""

from __future__ import annotations

__all__: list[str] = []
