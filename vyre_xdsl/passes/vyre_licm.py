"""`vyre-licm`: loop-invariant code motion out of `vyre.loop`.

```
vyre-opt -p vyre-licm input.mlir
```

An op at the top level of a loop body moves to just before the loop when every
operand is defined outside the loop and running it once before the loop gives
what every iteration computed:

- a speculatable op (an expression that cannot trap, see
  `vyre_xdsl.analysis.is_speculatable`): running it even when the loop runs
  zero times changes nothing. An op that may trap (`si32` `div`/`mod`) never
  moves: the loop might not have run it;
- a `vyre.load` of a buffer that nothing in the loop writes (no store, no
  atomic): loads never trap (out of bounds gives zero), and the element cannot
  change while the loop runs;
- a `vyre.var` of a named local declared outside the loop that no
  `vyre.assign` in the loop mutates (the loop's own variable changes every
  iteration and never moves).

Ops are considered in order, so an op whose operands were just hoisted can
follow them; nested loops are handled inside out.

```mlir
// before
vyre.loop @k = %lo to %hi {
  %s = vyre.mul %a, %b : ui32      // %a, %b defined outside
  %x = vyre.load @in[%s] : ui32    // @in is never written in the loop
  %k = vyre.var @k : ui32
  %t = vyre.add %x, %k : ui32
  vyre.store @out[%k] = %t : ui32
}
// after
%s = vyre.mul %a, %b : ui32
%x = vyre.load @in[%s] : ui32
vyre.loop @k = %lo to %hi {
  %k = vyre.var @k : ui32
  %t = vyre.add %x, %k : ui32
  vyre.store @out[%k] = %t : ui32
}
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from vyre_xdsl.analysis import buffers_written, declaration_of, is_speculatable, locals_assigned_in
from vyre_xdsl.dialects.vyre import LoadOp, LoopOp, VarOp


def defined_outside(value: SSAValue, loop: LoopOp) -> bool:
    """Whether `value` is defined outside `loop` (so it is the same in every iteration)."""
    return not loop.is_ancestor(value.owner)


def is_invariant(op: Operation, loop: LoopOp, written: set[str], assigned: set[Operation]) -> bool:
    """Whether `op`, at the top level of `loop`'s body, computes the same value in
    every iteration and may run once before the loop instead."""
    if op.regions or not all(defined_outside(v, loop) for v in op.operands):
        return False
    if is_speculatable(op):
        return True
    if isinstance(op, LoadOp):
        return op.buffer_name not in written
    if isinstance(op, VarOp):
        declaration = declaration_of(op)
        return (
            declaration is not None
            and not loop.is_ancestor(declaration)
            and declaration not in assigned
        )
    return False


class HoistLoopInvariants(RewritePattern):
    """Move the invariant ops of a `vyre.loop` body to just before the loop."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LoopOp, rewriter: PatternRewriter) -> None:
        written = buffers_written(op)
        assigned = locals_assigned_in(op)
        for inner in list(op.body.block.ops):
            if is_invariant(inner, op, written, assigned):
                inner.detach()
                rewriter.insert(inner, InsertPoint.before(op))


@dataclass(frozen=True)
class VyreLicmPass(ModulePass):
    """Hoist loop-invariant ops out of every `vyre.loop` (see the module docstring)."""

    name = "vyre-licm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(HoistLoopInvariants(), walk_regions_first=True).rewrite_module(op)
