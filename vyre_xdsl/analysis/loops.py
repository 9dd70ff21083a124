"""Loops with constant bounds, and which of them a backend prints unrolled.

`unrolled_trips` is the one rule: the WGSL printer unrolls exactly these
loops, and the fusion cost model counts only the loops left rolled. It takes a
`vyre.loop` or a `kernel.for` (both have `lower`, `upper` and a `body`).

```python
from vyre_xdsl.analysis.loops import unrolled_trips

trips = unrolled_trips(loop)  # range(0, 16) for `vyre.loop @k = %c0 to %c16`
```
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from vyre_xdsl.dialects.vyre import ConstOp, ui32

#: A loop with constant bounds is unrolled when it runs at most this many
#: iterations ...
UNROLL_MAX_TRIPS = 16
#: ... and its unrolled body has at most this many ops (nested ones included).
UNROLL_MAX_OPS = 1024


def constant_ui32(value: SSAValue) -> int | None:
    """The value of a `vyre.const` of type ui32, else None."""
    owner = value.owner
    if isinstance(owner, ConstOp) and value.type == ui32:
        return int(owner.literal())
    return None


def constant_trip_range(loop: Operation) -> range | None:
    """The values the loop variable of `loop` takes, when both bounds are
    constants (empty when `upper <= lower`)."""
    lower, upper = constant_ui32(loop.lower), constant_ui32(loop.upper)
    if lower is None or upper is None:
        return None
    return range(lower, upper)


def unrolled_trips(loop: Operation) -> range | None:
    """The loop variable's values when `loop` is printed unrolled, else None:
    constant bounds, at most `UNROLL_MAX_TRIPS` iterations, at most
    `UNROLL_MAX_OPS` ops once unrolled, and every loop inside unrolled too."""
    trips = constant_trip_range(loop)
    if trips is None or len(trips) > UNROLL_MAX_TRIPS:
        return None
    size = 0
    for inner in loop.body.walk():
        if isinstance(inner, type(loop)) and unrolled_trips(inner) is None:
            return None
        size += 1
    if size * len(trips) > UNROLL_MAX_OPS:
        return None
    return trips


def rolled_loops(op: Operation, loop_type: type[Operation]) -> list[Operation]:
    """The loops of type `loop_type` in `op` that stay loops (not unrolled)."""
    return [
        inner
        for inner in op.walk()
        if isinstance(inner, loop_type) and unrolled_trips(inner) is None
    ]
