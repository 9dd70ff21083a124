"""`vyre-elide-bounds-selects`: drop a bounds select whose value is only ever
stored where its condition already holds.

```
vyre-opt -p vyre-elide-bounds-selects input.mlir
```

A select `%s = select(lt(%i, N), %a, %b)` stands for `%a` wherever `%i < N`.
When every use of `%s`, followed through expressions that cannot trap, ends as
the stored value of a `vyre.store @buf[%j]` whose index `%j` is `%i` itself (or
the same id expression) and `@buf` is declared with at most N elements, the
value matters only where `%i < N`: anywhere else `%j >= N >= count(@buf)`, and
an out-of-bounds store does nothing (SPEC section 3.4). `%s` then becomes `%a`.

Fusion makes these selects. A consumer's load of an intermediate `t[%i]`
becomes `select(%i < count(t), stored value, 0)` (a load past the end gives 0)
whenever the fused grid launches invocations past the count, as a 2-D launch
grid of a large count does; a chain of K elementwise stages then carries K - 1
selects, each one compare and one select per element, all to produce values
that only a dropped store sees. User code with a CUDA-style
`select(i < n, x, 0)` before a store at `i` is treated the same way.

Left alone: a select whose value reaches a load index, an atomic, a loop or
branch operand, a call, a subgroup op, an op that may trap (`si32` `div`/`mod`:
running it with `%a` where it ran with `%b` could add a trap), a store at
another index, or a buffer declared with more than N elements or with a
run-time count (`?`).

```mlir
%n = vyre.const 1024 : ui32
%inside = vyre.lt %i, %n : ui32
%zero = vyre.const 0.0 : f32
%s = vyre.select %inside, %r, %zero : f32
%y = vyre.mul %s, %c : f32
vyre.store @out[%i] = %y : f32   // @out: f32[1024]
// becomes
%y = vyre.mul %r, %c : f32
vyre.store @out[%i] = %y : f32
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

from vyre_xdsl.analysis import is_speculatable
from vyre_xdsl.analysis.indices import structurally_equal
from vyre_xdsl.dialects.vyre import (
    CallEffect,
    ConstOp,
    SelectOp,
    StoreOp,
    enclosing_program,
    ui32,
)


def bounds_condition(select: SelectOp) -> tuple[SSAValue, int] | None:
    """`(%i, N)` when the select's condition is `lt(%i, N)` on `ui32` with N a constant."""
    cond = select.cond.owner
    if not isinstance(cond, Operation) or cond.name != "vyre.lt" or len(cond.operands) != 2:
        return None
    index, bound = cond.operands
    owner = bound.owner
    if index.type != ui32 or not isinstance(owner, ConstOp) or bound.type != ui32:
        return None
    return index, int(owner.literal())


def is_elidable(select: SelectOp) -> bool:
    """Whether `select` is a bounds select whose value only in-bounds stores see
    where its condition holds (so it may become its first value)."""
    condition = bounds_condition(select)
    if condition is None or enclosing_program(select) is None or not select.result.uses:
        return False
    index, bound = condition
    return stored_only_below(select.result, index, bound)


def stored_only_below(value: SSAValue, index: SSAValue, bound: int) -> bool:
    """Whether every use of `value`, followed through speculatable expressions,
    is the stored value of a store at `index` into a buffer of at most `bound`
    elements (so none of them is seen where `index >= bound`)."""
    pending = [value]
    seen: set[SSAValue] = set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        for use in current.uses:
            user = use.operation
            if isinstance(user, StoreOp):
                if use.index != 1 or not _store_below(user, index, bound):
                    return False
                continue
            if not is_speculatable(user) or user.has_trait(CallEffect):
                return False
            pending.extend(user.results)
    return True


def _store_below(store: StoreOp, index: SSAValue, bound: int) -> bool:
    """Whether `store` writes at `index` into a buffer declared with at most `bound` elements."""
    program = enclosing_program(store)
    buffer = None if program is None else program.buffer(store.buffer_name)
    if buffer is None or buffer.static_count is None or buffer.static_count > bound:
        return False
    return structurally_equal(store.index, index)


class ElideBoundsSelect(RewritePattern):
    """`select(lt(%i, N), %a, %b)` -> `%a` when only stores at `%i` into buffers of
    at most N elements see it."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SelectOp, rewriter: PatternRewriter) -> None:
        if not is_elidable(op):
            return
        operands = (op.cond, op.false_value)
        rewriter.replace(op, [], [op.true_value])
        for operand in operands:
            erase_if_dead(operand.owner, rewriter)


def erase_if_dead(op: object, rewriter: PatternRewriter) -> None:
    """Erase `op` when it is a speculatable op whose results have no use left, then
    its operands' definitions in turn (the bounds compare and its constants)."""
    if not isinstance(op, Operation) or not is_speculatable(op):
        return
    if any(result.uses for result in op.results):
        return
    operands = list(op.operands)
    rewriter.erase(op)
    for operand in operands:
        erase_if_dead(operand.owner, rewriter)


@dataclass(frozen=True)
class VyreElideBoundsSelectsPass(ModulePass):
    """Replace each bounds select that only out-of-bounds stores could tell apart
    from its first value by that value."""

    name = "vyre-elide-bounds-selects"

    def leaves_unchanged(self, module: ModuleOp) -> bool:
        """No select of `module` may be elided."""
        return not any(isinstance(op, SelectOp) and is_elidable(op) for op in module.walk())

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(ElideBoundsSelect(), apply_recursively=False).rewrite_module(op)
