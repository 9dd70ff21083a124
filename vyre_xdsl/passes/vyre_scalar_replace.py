"""`vyre-scalar-replace`: a buffer element that only its invocation touches is
kept in a named local across the loops that load and store it.

```
vyre-opt -p vyre-scalar-replace in.mlir
vyre-opt -p vyre-scalar-replace,vyre-tile in.mlir   # PolyBench's CUDA gemm, then tiled
```

PolyBench's CUDA kernels accumulate in the output: each step of the loop
loads `C[i, j]`, adds to it and stores it back, two accesses of memory per
step. Where `vyre_xdsl.analysis.private_elements` proves that no other
invocation reads or writes that element, the pass replaces them (scalar
replacement): in the block that holds every access, the element's value is
followed from access to access; the first op that accesses it inside a loop
gets a `vyre.let` holding the value so far, the loads inside become
`vyre.var` and the stores `vyre.assign`; the loads after read the value
stored before; one `vyre.store` at the block's end writes the last value
(only where the program stored it at all).

```mlir
// before
vyre.if %inside {
  %c = vyre.load @C[%ic] : f32
  %cb = vyre.mul %c, %beta : f32
  vyre.store @C[%ic] = %cb : f32
  vyre.loop @k = %lo to %n {
    ...
    %cur = vyre.load @C[%ic] : f32
    %next = vyre.add %cur, %t : f32
    vyre.store @C[%ic] = %next : f32
  }
}
// after
vyre.if %inside {
  %c = vyre.load @C[%ic] : f32
  %cb = vyre.mul %c, %beta : f32
  vyre.let @C_elem = %cb : f32
  vyre.loop @k = %lo to %n {
    ...
    %cur = vyre.var @C_elem : f32
    %next = vyre.add %cur, %t : f32
    vyre.assign @C_elem = %next : f32
  }
  %last = vyre.var @C_elem : f32
  vyre.store @C[%ic] = %last : f32
}
```

This is the form `vyre-tile` recognizes: an accumulator, a loop, one store.
Every value the invocation computes is the same, in the same order: only
where it is kept changes. When a loop runs no step, the element is loaded
and stored back unchanged, which no other invocation can see.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from vyre_xdsl.analysis.locals import fresh_local_name
from vyre_xdsl.analysis.private_elements import PrivateElement, private_elements
from vyre_xdsl.dialects.vyre import AssignOp, LetOp, LoadOp, ProgramOp, StoreOp, VarOp, programs


@dataclass(frozen=True)
class VyreScalarReplacePass(ModulePass):
    """Keep each private buffer element in a named local across its loops
    (see the module docstring)."""

    name = "vyre-scalar-replace"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for program in programs(op):
            for element in private_elements(program):
                _replace(program, element)

    def leaves_unchanged(self, module: ModuleOp) -> bool:
        """No program has a private element accessed in a loop (nothing to replace)."""
        return not any(private_elements(program) for program in programs(module))


def _replace(program: ProgramOp, element: PrivateElement) -> None:
    """Follow `element`'s value through its block (module docstring)."""
    block = element.block
    accesses = set(element.accesses)
    local = fresh_local_name(program, f"{element.buffer}_elem")
    first = element.accesses[0]
    element_type = first.value.type if isinstance(first, StoreOp) else first.result.type
    current: SSAValue | None = None  # the element's value at this point of the block
    declared = in_local = stored = False
    for top in list(block.ops):
        if top in accesses:
            if isinstance(top, StoreOp):
                current, stored, in_local = top.value, True, False
                top.detach()
                top.erase()
            elif current is None:
                current = top.results[0]  # the first access loads: keep it
            else:
                top.results[0].replace_all_uses_with(current)
                top.detach()
                top.erase()
            continue
        inner = [op for op in top.walk() if op in accesses]
        if not inner:
            continue
        if current is None:
            load = LoadOp(element.buffer, _index_at(element, block, top), element_type)
            block.insert_op_before(load, top)
            current = load.results[0]
        if not declared:
            block.insert_op_before(LetOp(local, current), top)
            declared = True
        elif not in_local:
            block.insert_op_before(AssignOp(local, current), top)
        for op in inner:
            stored |= _to_local(op, local, element_type)
        read = VarOp(local, element_type)
        block.insert_op_after(read, top)
        current, in_local = read.result, True
    if stored and current is not None:
        block.add_op(StoreOp(element.buffer, _index_at(element, block, None), current))


def _to_local(op: Operation, local: str, element_type: Attribute) -> bool:
    """Turn a load of the element into a read of `local`, a store into an
    assignment; whether it was a store."""
    block = op.parent_block()
    assert block is not None
    if isinstance(op, StoreOp):
        block.insert_op_before(AssignOp(local, op.value), op)
        op.detach()
        op.erase()
        return True
    read = VarOp(local, element_type)
    block.insert_op_before(read, op)
    op.results[0].replace_all_uses_with(read.result)
    op.detach()
    op.erase()
    return False


def _index_at(element: PrivateElement, block: Block, before: Operation | None) -> SSAValue:
    """An index of the element usable before `before` in `block` (at its end
    when None): an access's own index where it is visible there, else a copy of
    its expression."""
    for access in element.accesses:
        index = access.index
        if _visible(index, block, before):
            return index
    return _copy(element.index, block, before, {})


def _visible(value: SSAValue, block: Block, before: Operation | None) -> bool:
    owner = value.owner
    if not isinstance(owner, Operation):
        return False
    home = owner.parent_block()
    if home is block:
        if owner.parent is None:
            return False
        return before is None or block.get_operation_index(owner) < block.get_operation_index(
            before
        )
    outer = block.parent_op()
    while outer is not None:
        if outer.parent_block() is home:
            return True
        outer = outer.parent_op()
    return False


def _copy(value: SSAValue, block: Block, before: Operation | None, memo: dict) -> SSAValue:
    """`value`'s expression (ids, constants, arithmetic) rebuilt before `before`."""
    if _visible(value, block, before):
        return value
    if value in memo:
        return memo[value]
    owner = value.owner
    assert isinstance(owner, Operation)
    operands = [_copy(v, block, before, memo) for v in owner.operands]
    new = owner.clone()
    new.operands = operands
    if before is None:
        block.add_op(new)
    else:
        block.insert_op_before(new, before)
    for old, result in zip(owner.results, new.results):
        memo[old] = result
    return memo[value]
