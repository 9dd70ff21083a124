"""Recompute fusion: a load of a producer's output at another index takes the
producer's expression evaluated at that index (Halide's compute-inline,
Inductor's pointwise fusion), instead of a dispatch split.

A producer arm stores `t[i] = E(i)` with `i = invocation_id x`. When `E` is a
*pure function of the module's inputs*, the value `t` holds at any element `j`
is `E(j)`, whichever invocation computed it, so a consumer's
`vyre.load @t[%j]` may become

    select(j < count(t), E(j), 0)

`E` qualifies when the backward slice of the stored value (`recomputable_slice`)
holds only:

- constants, `vyre.buf_len`, `vyre.invocation_id x` (which becomes `j`);
- expression ops that cannot trap (semantics-table ops, `select`, `fma`,
  `cast`, `bitcast`; no si32 `div`/`mod`, which may trap, so computing them at
  another index could add or move a trap);
- loads of host buffers that no arm of the fused group writes or updates
  atomically (so the load reads the same value wherever it runs), and that the
  caller accepts (`loadable`: the buffer's view is the same in both arms).

Anything else makes `E` depend on more than the index: named locals (they may
hold loop state), workgroup memory, workgroup or local ids, subgroup ops,
atomics, calls. The slice is at most `MAX_RECOMPUTED_OPS` ops, so recomputing
never multiplies a long chain.

The caller (`vyre_xdsl.fusion.fuse`) proves the rest: the store is the
producer's only write of `t`, at its top level, indexed by `invocation_id x`;
the producer's own dispatch launched an invocation for every element of `t`
(so every in-bounds `t[j]` holds `E(j)`, and an out-of-bounds load gives 0 as
unfused); no write of `t` comes between; the consumer sees `t` with the same
count as the producer.

```python
slice_ops = recomputable_slice(store.value, written={"t"}, loadable=lambda load: True)
value = recompute_at(slice_ops, store.value, j, bound, before=load)
```
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from xdsl.ir import Operation, SSAValue

from vyre_xdsl.analysis import may_trap
from vyre_xdsl.dialects.vyre import (
    TABLE_OPS,
    BitcastOp,
    BufLenOp,
    CastOp,
    ConstOp,
    FmaOp,
    InvocationIdOp,
    LoadOp,
    SelectOp,
    TableOpEffect,
    f32,
    i1,
)

#: The largest producer expression (in ops) that is recomputed per use.
MAX_RECOMPUTED_OPS = 64


def _is_pure_leaf(op: Operation) -> bool:
    if isinstance(op, ConstOp | BufLenOp):
        return True
    return isinstance(op, InvocationIdOp) and op.axis_index == 0


def _is_pure_expression(op: Operation) -> bool:
    """A computation from its operands alone that cannot trap."""
    if may_trap(op) or op.regions:
        return False
    return op.has_trait(TableOpEffect) or isinstance(op, SelectOp | FmaOp | CastOp | BitcastOp)


def recomputable_slice(
    value: SSAValue,
    written: Collection[str],
    loadable: Callable[[LoadOp], bool],
) -> list[Operation] | None:
    """The ops computing `value`, definitions first, when `value` is a pure
    function of `invocation_id x` and unwritten buffers; else None.

    `written`: the buffers some arm of the fused group writes or updates
    atomically. `loadable(load)`: whether the caller can clone this load.
    """
    order: list[Operation] = []
    seen: set[Operation] = set()
    stack: list[tuple[Operation, bool]] = []
    owner = value.owner
    if not isinstance(owner, Operation):
        return None
    stack.append((owner, False))
    while stack:
        op, expanded = stack.pop()
        if expanded:
            order.append(op)
            continue
        if op in seen:
            continue
        seen.add(op)
        if len(seen) > MAX_RECOMPUTED_OPS or not _clonable(op, written, loadable):
            return None
        stack.append((op, True))
        for operand in reversed(op.operands):  # the first operand comes out first
            producer = operand.owner
            if not isinstance(producer, Operation):
                return None  # a block argument: not an expression of the index
            if producer not in seen:
                stack.append((producer, False))
    return order


def _clonable(op: Operation, written: Collection[str], loadable: Callable[[LoadOp], bool]) -> bool:
    if _is_pure_leaf(op) or _is_pure_expression(op):
        return True
    return isinstance(op, LoadOp) and op.buffer_name not in written and loadable(op)


def recompute_at(
    slice_ops: Sequence[Operation],
    value: SSAValue,
    index: SSAValue,
    bound: Operation | None,
    before: Operation,
) -> SSAValue:
    """Insert, before `before`, `select(index < bound, value at index, 0)`.

    `slice_ops` is `recomputable_slice(value, ...)`; every `invocation_id x` in
    it is replaced by `index`. `bound` (a new, unattached op computing the
    buffer's count) is inserted too; None when `index` is known to be in
    bounds, which leaves just the value at `index`.
    """
    block = before.parent
    assert block is not None, "the load being replaced is in a block"
    mapping: dict[SSAValue, SSAValue] = {}
    for op in slice_ops:
        if isinstance(op, InvocationIdOp):
            mapping[op.result] = index
            continue
        clone = op.clone(value_mapper=mapping)
        block.insert_op_before(clone, before)
        for old, new in zip(op.results, clone.results):
            mapping[old] = new
    recomputed = mapping.get(value, value)
    if bound is None:
        return recomputed
    inside = TABLE_OPS["lt"](index, bound.results[0])
    zero = ConstOp(_zero_literal(value.type), value.type)
    select = SelectOp(inside.results[0], recomputed, zero.result)
    for new in (bound, inside, zero, select):
        block.insert_op_before(new, before)
    return select.result


def _zero_literal(ty) -> int | float | bool:
    if ty == f32:
        return 0.0
    if ty == i1:
        return False
    return 0
