"""`vyre-split-grid-sync`: each program with `vyre.barrier grid_sync` becomes its
parts, one dispatch each.

```
vyre-opt -p vyre-split-grid-sync in.mlir
```

A `grid_sync` synchronises the whole dispatch, which one wgpu dispatch cannot
do: the program is replaced in place by consecutive programs, one per part
between its barriers (the module's order is the dispatch order, so each part
runs after every invocation of the part before it finished). The named
pipeline runs this pass after fusion and before `vyre-privatize-atomics`;
`vyre-lower` applies the same split to a program that still has barriers.

- A `vyre.block` or `vyre.region` that holds a `grid_sync` is cut in one scope
  per side of it, so that every barrier is at the top level.
- Pure values (constants, ids, arithmetic) and loads of buffers the program
  never writes that a later part uses are recomputed in that part.
- Every other value live across a barrier (a load of a written buffer, an
  atomic's result, a value computed in a cut scope, a named local) is spilled:
  stored right after it is set to per-invocation scratch, one buffer per
  element type (`@__vyre_spill_ui32 read_write : ui32[K] {vyre.scratch}`: `K`
  elements per invocation, element `p * K + slot` of invocation `p`), and
  reloaded at the start of the part that uses it.

Part `K` of `@p` is `@p_partK {source = "p", part = K, count_buffers = [...]}`:
`count_buffers` keeps the buffers that size the whole program's dispatch, so
every part is launched on the whole program's grid (cut by `vyre-lower` to the
workgroups in which the part can have an effect) and keeps its workgroup size.

```mlir
// before
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[256]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @x[%i] = %i : ui32
  vyre.barrier grid_sync
  vyre.store @out[%i] = %v : ui32
}
// after
vyre.program @p_part0 {source = "p", part = 0 : i64, count_buffers = [@out, @x]} workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[256]
  vyre.buffer @out binding 1 write_only : ui32[256]
  vyre.buffer @__vyre_spill_ui32 read_write : ui32[1] {vyre.scratch}
  %0 = vyre.const 64 : ui32
  %1 = vyre.workgroup_id x
  %2 = vyre.mul %1, %0 : ui32
  %3 = vyre.local_id x
  %4 = vyre.add %2, %3 : ui32            // p, the invocation's linear index
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %5 = vyre.const 1 : ui32               // K
  %6 = vyre.const 0 : ui32               // the slot of %v
  %7 = vyre.mul %4, %5 : ui32
  %8 = vyre.add %7, %6 : ui32
  vyre.store @__vyre_spill_ui32[%8] = %v : ui32
  vyre.store @x[%i] = %i : ui32
}
vyre.program @p_part1 {source = "p", part = 1 : i64, count_buffers = [@out, @x]} workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[256]
  vyre.buffer @out binding 1 write_only : ui32[256]
  vyre.buffer @__vyre_spill_ui32 read_write : ui32[1] {vyre.scratch}
  ...                                     // %8 as above
  %9 = vyre.load @__vyre_spill_ui32[%8] : ui32
  %i = vyre.invocation_id x
  vyre.store @out[%i] = %9 : ui32
}
```

Refused, at the op: a `vyre.return` before a `grid_sync` (the later parts
would run for the invocations that returned); a buffer named with the spill
prefix `__vyre_spill_`; an indirect grid with values live across a barrier
(their scratch would be sized by a grid known only on the GPU); a derived
grid that cannot cover the whole program's static element count (checked on
the whole program: a part may no longer read `vyre.invocation_id`). A
`grid_sync` in a loop or an `if` is refused by the verifier.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.dialects.vyre import programs
from vyre_xdsl.lowering.split import has_grid_sync, split_dispatch


@dataclass(frozen=True)
class VyreSplitGridSyncPass(ModulePass):
    """Replace each program with grid_sync barriers by its parts (see the module
    docstring)."""

    name = "vyre-split-grid-sync"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        split_grid_syncs(op)

    def leaves_unchanged(self, op: ModuleOp) -> bool:
        """A module without grid_sync barriers has nothing to split."""
        return not any(has_grid_sync(program) for program in programs(op))


def split_grid_syncs(module: ModuleOp) -> None:
    """Replace every program of `module` that has grid_sync barriers by its
    parts, in place; every refusal of every program is reported at once."""
    errors: list[tuple[Operation | None, str]] = []
    block = module.body.block
    for program in programs(module):
        if not has_grid_sync(program):
            continue
        try:
            parts = split_dispatch(program)
        except VyreDiagnostic as error:
            errors.extend(error.errors)
            continue
        block.insert_ops_before(parts, program)
        block.erase_op(program)
    if errors:
        raise VyreDiagnostic(errors)
