"""Across protocol eras: a server's questions reach the engine whatever revision each side
speaks. `rounds` and `held`: a session-era upstream's question to a 2026-07-28 engine, as
input-required rounds of a call held open meanwhile; `asking`: a 2026-07-28 upstream's
questions put to the engine of the call (on its session, or as such a round). Import the
modules themselves: this package imports nothing, so `asking` loads without the rest."""
