"""Trust in what upstreams list, before the catalog merges it.

`pins` is the pure judgement of a listing against what a person approved; `scan` (with
its rules as data) finds text in a definition that speaks to the model; `first_sight`
does the slow part of a big listing ahead, in slices (`writer` keeps its first pins off
the loop), and `listing_words` reads a listing's words for the shadowing rule in one pass;
`screen` is the I/O around the judgement (pins loaded and kept, each change said once);
`shared` keeps pins and spent confirmation states in Redis for every replica
(`store.url`). Below the gate and the
mount plan, above the catalog: the mount plan and the admin commands read pins too.
Nothing is imported here: `shared` loads redis only when a store is configured.
"""
