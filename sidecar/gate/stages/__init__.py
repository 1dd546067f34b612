"""The gate's stages, one object each, in chain order: resolve, the checks (grant,
policy), the charge and the terminal run; `Gate` (`sidecar.gate.chain`) binds them once
and owns the call's ending. A feature's stage lives in that feature's room beside its
logic (the charge in `sidecar/gate/budget/stage.py`) and is named here with the rest."""

from sidecar.gate.stages.base import Current, Next, Stage
from sidecar.gate.budget.stage import ChargeResult
from sidecar.gate.stages.checks import CheckGrant, CheckPolicy
from sidecar.gate.stages.resolve import Resolve
from sidecar.gate.stages.terminal import RunCall

__all__ = ["ChargeResult", "CheckGrant", "CheckPolicy", "Current", "Next", "Resolve", "RunCall", "Stage"]
