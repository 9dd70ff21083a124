"""`vyre-unroll`: full unrolling of `vyre.loop`s with constant bounds.

```
vyre-opt -p vyre-unroll input.mlir
vyre-opt -p 'vyre-unroll{max-trip-count=64}' input.mlir
```

A loop whose bounds are both `vyre.const` values and whose trip count
(`upper - lower`, or 0 when `upper <= lower`) is at most `max-trip-count`
(default 16) is replaced by one `vyre.block` per iteration, in order. Each
block is a copy of the body in which every read of the loop variable is the
iteration's constant; being a block, it is a fresh scope, so named locals
declared in the body stay scoped to their iteration exactly as in the loop. A
loop that runs zero times disappears. Bounds computed by other ops are left
alone: run `canonicalize` first to fold them into constants.

Every `vyre.var` of the loop's name inside the body reads the loop variable:
the verifier forbids any other declaration of that name to be visible there
(no shadowing).

```mlir
// before
%c0 = vyre.const 0 : ui32
%c2 = vyre.const 2 : ui32
vyre.loop @k = %c0 to %c2 {
  %k = vyre.var @k : ui32
  vyre.store @out[%k] = %k : ui32
}
// after
vyre.block {
  %0 = vyre.const 0 : ui32
  vyre.store @out[%0] = %0 : ui32
}
vyre.block {
  %1 = vyre.const 1 : ui32
  vyre.store @out[%1] = %1 : ui32
}
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from vyre_xdsl.analysis.loops import UNROLL_MAX_TRIPS, constant_trip_range
from vyre_xdsl.diagnostics import VyreError
from vyre_xdsl.dialects.vyre import BlockOp, ConstOp, LoopOp, VarOp, ui32

DEFAULT_MAX_TRIP_COUNT = UNROLL_MAX_TRIPS


def iteration_block(loop: LoopOp, k: int) -> BlockOp:
    """A copy of `loop`'s body for the iteration where the loop variable is `k`."""
    index = ConstOp(k, ui32)
    mapper: dict[SSAValue, SSAValue] = {}
    ops = [op.clone(value_mapper=mapper) for op in loop.body.block.ops]
    block = BlockOp([index, *ops])
    name = loop.var_name.data
    for read in [op for op in block.walk() if isinstance(op, VarOp) and op.var_name.data == name]:
        read.result.replace_all_uses_with(index.result)
        read.detach()
        read.erase()
    return block


@dataclass
class UnrollConstantLoop(RewritePattern):
    """Replace a constant-bound loop of at most `max_trip_count` iterations by its iterations."""

    max_trip_count: int = DEFAULT_MAX_TRIP_COUNT

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LoopOp, rewriter: PatternRewriter) -> None:
        trips = constant_trip_range(op)
        if trips is None or len(trips) > self.max_trip_count:
            return
        rewriter.replace(op, [iteration_block(op, k) for k in trips], new_results=[])


@dataclass(frozen=True)
class VyreUnrollPass(ModulePass):
    """Fully unroll constant-bound loops of at most `max_trip_count` iterations."""

    name = "vyre-unroll"

    max_trip_count: int = DEFAULT_MAX_TRIP_COUNT

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_trip_count < 0:
            raise VyreError(f"vyre-unroll: max-trip-count must be >= 0, got {self.max_trip_count}")
        PatternRewriteWalker(
            UnrollConstantLoop(self.max_trip_count), walk_regions_first=True
        ).rewrite_module(op)
