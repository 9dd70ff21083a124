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
#: ... and its unrolled body has at most this many ops (nested loops counted
#: unrolled, so the budget multiplies through a nest).
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


def unrolled_sizes(root: Operation, loop_type: type[Operation]) -> dict[Operation, int | None]:
    """Every loop of type `loop_type` in `root` (`root` included), mapped to the
    number of ops it prints as once unrolled, or to None when it stays a loop.

    One pass, innermost loops first: each op is visited once. A loop is
    unrolled when it has constant bounds, at most `UNROLL_MAX_TRIPS`
    iterations, every loop inside it is unrolled, and its body (with the loops
    inside counted unrolled: the budget multiplies through nests) times its
    trip count is at most `UNROLL_MAX_OPS` ops."""
    sizes: dict[Operation, int | None] = {}
    _printed_size(root, loop_type, sizes)
    return sizes


def _printed_size(
    op: Operation, loop_type: type[Operation], sizes: dict[Operation, int | None]
) -> int | None:
    """The ops `op` prints as (itself included), None when a loop in it stays rolled."""
    inner: int | None = 0
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                size = _printed_size(child, loop_type, sizes)
                inner = None if size is None or inner is None else inner + size
    if not isinstance(op, loop_type):
        return None if inner is None else 1 + inner
    size = _unrolled_loop_size(op, inner)
    sizes[op] = size
    return size


def _unrolled_loop_size(loop: Operation, body_size: int | None) -> int | None:
    """1 + trips x `body_size` when `loop` is unrolled, else None."""
    trips = constant_trip_range(loop)
    if body_size is None or trips is None or len(trips) > UNROLL_MAX_TRIPS:
        return None
    if body_size * len(trips) > UNROLL_MAX_OPS:
        return None
    return 1 + body_size * len(trips)


def unrolled_trips(loop: Operation) -> range | None:
    """The loop variable's values when `loop` is printed unrolled, else None
    (the rule of `unrolled_sizes`)."""
    if unrolled_sizes(loop, type(loop))[loop] is None:
        return None
    return constant_trip_range(loop)


def rolled_loops(op: Operation, loop_type: type[Operation]) -> list[Operation]:
    """The loops of type `loop_type` in `op` that stay loops (not unrolled)."""
    sizes = unrolled_sizes(op, loop_type)
    return [inner for inner in op.walk() if isinstance(inner, loop_type) and sizes[inner] is None]
