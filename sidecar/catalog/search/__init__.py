"""Tool search: the index behind `find_tool`, every trio's search tool and `mcp_search_tools`.

`SearchIndex` (in `index`) is the one ranker: a word index (`lexical`, over `text`'s
tokens, `shapes` of argument values and a small `lexicon`) blended, when the optional
`[semantic]` extra is installed, with a sentence model's similarity (`semantic`, whose
vectors `vectors` caches on disk). The local answers built on it (`answer_meta`,
`resolve_meta_call`) live in `sidecar.catalog.answers`, above the layouts that import
this package.
"""

from sidecar.catalog.search.index import SearchIndex
from sidecar.catalog.search.text import query_terms, stem, words

__all__ = ["SearchIndex", "query_terms", "stem", "words"]
