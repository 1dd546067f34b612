"""Across protocol eras: a session-era upstream's questions reach a 2026-07-28 engine
as input-required rounds (`rounds`), the call held open meanwhile (`held`)."""

from sidecar.front.eras.held import HeldCall, Round
from sidecar.front.eras.rounds import HeldCalls, takes_rounds

__all__ = ["HeldCall", "HeldCalls", "Round", "takes_rounds"]
