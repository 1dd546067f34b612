"""Across protocol eras: a server's questions reach the engine whatever revision each side
speaks. `rounds` and `held`: a session-era upstream's question to a 2026-07-28 engine, as
input-required rounds of a call held open meanwhile; `asking`: a 2026-07-28 upstream's
questions put to a session engine of the call; `relayed`: a 2026-07-28 upstream's rounds
passed to a 2026-07-28 engine as they are, its state sealed inside the sidecar's. Import
the modules themselves: this package imports nothing, so `asking` loads without the rest."""
