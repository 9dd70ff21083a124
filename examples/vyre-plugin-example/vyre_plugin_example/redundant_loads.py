"""`example-redundant-loads`: a load that repeats an earlier load of the same
element in the same block, with nothing in between that could change the
element, takes the earlier load's value.

```mlir
%a = vyre.load @x[%i] : f32
%s = vyre.mul %a, %a : f32
%b = vyre.load @x[%i] : f32     // replaced by %a
```

"Nothing in between" comes from `vyre_xdsl.analysis`: no op between the two
loads (or nested in one) writes the buffer (`buffers_written`: stores and
atomics), and no barrier separates them (after a barrier another invocation's
write may be visible). "The same element" means the same index value, or an
index computed the same way from ids and constants (`structurally_equal`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from vyre_xdsl.analysis import buffers_written, structurally_equal
from vyre_xdsl.dialects.vyre import BarrierOp, LoadOp


def same_element(a: LoadOp, b: LoadOp) -> bool:
    """Whether `a` and `b` load the same element of the same buffer."""
    return a.buffer_name == b.buffer_name and (
        a.index is b.index or structurally_equal(a.index, b.index)
    )


def may_change(op: Operation, buffer: str) -> bool:
    """Whether `buffer`'s elements may differ after `op` from before it."""
    if any(isinstance(inner, BarrierOp) for inner in op.walk()):
        return True
    return buffer in buffers_written(op)


def earlier_load(load: LoadOp) -> LoadOp | None:
    """The nearest earlier load of the same element in `load`'s block whose value is still current."""
    op = load.prev_op
    while op is not None:
        if isinstance(op, LoadOp) and same_element(op, load):
            return op
        if may_change(op, load.buffer_name):
            return None
        op = op.prev_op
    return None


class ReuseEarlierLoad(RewritePattern):
    """Replace a load by an earlier load of the same, unchanged element."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LoadOp, rewriter: PatternRewriter) -> None:
        earlier = earlier_load(op)
        if earlier is not None:
            rewriter.replace(op, [], [earlier.result])


@dataclass(frozen=True)
class RedundantLoadsPass(ModulePass):
    """Reuse the value of an earlier load of the same unchanged element."""

    name = "example-redundant-loads"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(ReuseEarlierLoad()).rewrite_module(op)
