"""What the poisoning scan finds, as kept with pins: the `Finding` record and the version
of the rules that made it.

Apart from `sidecar.trust.scan` so that pins kept with their findings decode, and are
judged, without the scan loading: a face whose pins already hold the findings of today's
rules (every start after the first, with one upstream) never runs a rule, and the rules'
tables, their anchor sets and `unicodedata` stay out of its memory (issue 23, idle RSS).
"""

from __future__ import annotations

import msgspec

__all__ = ["Finding", "RULES_VERSION"]

# Change with any rule of `sidecar.trust.scan_rules`, so scan results kept with pins are redone.
RULES_VERSION = "3"  # 2: every key and string of a definition read, look-alike letters folded; 3: anchors every spelling a pattern takes


class Finding(msgspec.Struct, frozen=True):
    rule: str
    field: str  # where the match starts: "description", "inputSchema.properties.note.default", ...
    excerpt: str  # the matched words, cut to 80 characters
