"""Paths and small helpers shared by the test files (import with `from ..support import ...`)."""

import math
import os
import pathlib
import tempfile

from vyre_xdsl.dialects.vyre import BarrierOp

#: the repository root
ROOT = pathlib.Path(__file__).resolve().parent.parent
#: the bundled example programs
EXAMPLES = ROOT / "examples"


def child_environment(*, drop_adapter: bool = False, **extra: str) -> dict[str, str]:
    """The environment for a child process (a tool, `python -c`): this one, with an
    XDG_RUNTIME_DIR (the Vulkan loader wants one), without VYRE_ADAPTER when
    `drop_adapter`, then `extra`."""
    env = dict(os.environ)
    env["XDG_RUNTIME_DIR"] = env.get("XDG_RUNTIME_DIR") or tempfile.mkdtemp()
    if drop_adapter:
        env.pop("VYRE_ADAPTER", None)
    env.update(extra)
    return env


def grid_syncs(module) -> int:
    """How many `vyre.barrier grid_sync` ops `module` holds."""
    return sum(1 for op in module.walk() if isinstance(op, BarrierOp) and op.is_grid_sync)


def saturate(value: float, bits: int, signed: bool) -> int:
    """`value` converted to a `bits`-bit integer as SPEC's float-to-int cast does:
    truncated toward zero, clamped to the type's range, NaN to 0."""
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return hi if value > 0 else lo
    return min(max(math.trunc(value), lo), hi)
