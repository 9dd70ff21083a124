"""Buffer elements that only one invocation touches, so that a pass may keep
them in a named local (`vyre-scalar-replace`).

A buffer has a private element when every access of it in the program is a
`vyre.load` or a `vyre.store` at one index, and no two invocations that reach
those accesses compute the same index. Then no other invocation reads or
writes that element, and the invocation's own loads see only its own stores.
This is the form of PolyBench's CUDA kernels, which accumulate in the output:

```mlir
vyre.program @gemm workgroup_size [8, 8, 1] grid [2, 2, 1] {
  ...
  vyre.if %inside {
    %ic = vyre.add %rc, %col : ui32          // row * 16 + col
    %c = vyre.load @C[%ic] : f32
    %cb = vyre.mul %c, %beta : f32
    vyre.store @C[%ic] = %cb : f32
    vyre.loop @k = %lo to %n {
      ...
      %cur = vyre.load @C[%ic] : f32         // each step loads and stores C
      %next = vyre.add %cur, %t : f32
      vyre.store @C[%ic] = %next : f32
    }
  }
}
```

`private_elements(program)` returns one `PrivateElement` per such buffer that
is accessed inside a `vyre.loop` within the block below (the case where
keeping it in a local pays).
What it proves, for a buffer `@C`:

- `@C` is `read_write`, and the program has no atomic on it, no `vyre.call`
  and no `vyre.return` or `grid_sync` barrier in the block that holds the
  accesses (a local does not outlive them);
- every access is a load or a store whose index has one affine form in
  `invocation_id x` (the column) and `invocation_id y` (the row)
  (`tiling.affine_form`);
- the invocations that reach the block below are known: the explicit grid's
  rows and columns, bounded by the `lt` terms of the `vyre.if` conditions
  around the block; without an explicit grid, a workgroup of one row and
  layer and a guard `invocation_id x < N` around the block;
- over those invocations the form is injective (no two share an element) and
  stays below the buffer's declared element count. A load out of bounds
  gives zero whatever was stored there, and a store out of bounds does
  nothing, so a value kept in a local would differ from memory's there.

The block (`PrivateElement.block`) is the innermost one that holds every
access, left through the loops around it (their trip counts do not matter: a
private element loaded before a loop and stored after it keeps its value when
the loop runs no step), never through an `if` (the invocations outside its
guard may share indices).

As elsewhere, the proof is of the grid the program states: a grid given at
run time (`run(..., grid=...)`) that launches more rows or columns than the
guards allow voids it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Block, Operation, SSAValue

from vyre_xdsl.analysis.accesses import accesses_by_buffer
from vyre_xdsl.analysis.tiling import COL, ROW, affine_form, guard_bounds, injective_over
from vyre_xdsl.dialects.vyre import (
    AtomicOp,
    BarrierOp,
    CallOp,
    IfOp,
    LoadOp,
    LoopOp,
    ProgramOp,
    ReturnOp,
    StoreOp,
)


@dataclass(frozen=True)
class PrivateElement:
    """A buffer whose every access reads or writes the one element its invocation owns."""

    buffer: str
    #: the innermost block that holds every access (left through loops)
    block: Block
    #: the loads and stores of the buffer, in walk order
    accesses: tuple[LoadOp | StoreOp, ...]

    @property
    def index(self) -> SSAValue:
        """One access's index (every access computes the same value)."""
        return self.accesses[0].index


def private_elements(program: ProgramOp) -> list[PrivateElement]:
    """The buffers of `program` with a private element accessed in a loop
    (module docstring), in order of first access."""
    if any(isinstance(op, CallOp) for op in program.walk()):
        return []
    modes = {b.buffer_name: b.access_mode for b in program.buffers()}
    found = []
    for name, group in accesses_by_buffer(program.statements()).items():
        ops = tuple(access.op for access in group)
        if modes.get(name) != "read_write" or any(isinstance(op, AtomicOp) for op in ops):
            continue
        block = _holding_block(ops)
        if block is None or not any(_in_loop_below(op, block) for op in ops):
            continue
        if _ends_early(block) or not _same_index(ops):
            continue
        if not _owned_and_inside(program, name, ops[0].operands[0], block):
            continue
        found.append(PrivateElement(name, block, ops))  # type: ignore[arg-type]
    return found


def _in_loop_below(op: Operation, block: Block) -> bool:
    """Whether a `vyre.loop` inside `block` holds `op`."""
    parent = op.parent_op()
    while parent is not None and parent is not block.parent_op():
        if isinstance(parent, LoopOp):
            return True
        parent = parent.parent_op()
    return False


def _same_index(ops: tuple[Operation, ...]) -> bool:
    """Whether every access's index has one affine form."""
    form = affine_form(ops[0].operands[0])
    return form is not None and all(affine_form(op.operands[0]) == form for op in ops[1:])


def _bounds_around(block: Block) -> dict[str, int]:
    """The `lt` bounds on the row and column of the `vyre.if` then-branches
    around `block` (the invocations that reach it)."""
    bounds: dict[str, int] = {}
    region, parent = block.parent, block.parent_op()
    while parent is not None and not isinstance(parent, ProgramOp):
        if isinstance(parent, IfOp) and region is parent.then_region:
            for key, c in guard_bounds(parent.cond).items():
                bounds[key] = min(c, bounds.get(key, c))
        region, parent = parent.parent_region, parent.parent_op()
    return bounds


def _reach(program: ProgramOp, block: Block) -> tuple[int, int] | None:
    """How many rows and columns of invocations reach `block`, when known: the
    explicit grid's, or a derived grid's one row and its guard's columns."""
    wx, wy, wz = program.workgroup
    grid = program.explicit_grid
    bounds = _bounds_around(block)
    if grid is None:
        if wy != 1 or wz != 1 or COL not in bounds:
            return None
        return 1, bounds[COL]
    if grid[2] * wz != 1:
        return None
    rows, cols = grid[1] * wy, grid[0] * wx
    return min(rows, bounds.get(ROW, rows)), min(cols, bounds.get(COL, cols))


def _owned_and_inside(program: ProgramOp, name: str, index: SSAValue, block: Block) -> bool:
    """Whether no two invocations that reach `block` compute the same `index`,
    and every one computes an index inside the buffer `name`."""
    count = next(b.static_count for b in program.buffers() if b.buffer_name == name)
    reach = _reach(program, block)
    form = affine_form(index)
    if count is None or reach is None or form is None:
        return False
    rows, cols = reach
    if not injective_over(form, rows, cols):
        return False
    # injective_over also proved that the largest value does not wrap
    largest = form.get(ROW, 0) * (rows - 1) + form.get(COL, 0) * (cols - 1) + form.get("", 0)
    return largest < count


def _holding_block(ops: tuple[Operation, ...]) -> Block | None:
    """The innermost block that holds every op of `ops`, left through the loops around it."""
    chains = [_blocks_above(op) for op in ops]
    common = [b for b in chains[0] if all(b in chain for chain in chains[1:])]
    if not common:
        return None
    block = common[0]
    while isinstance(block.parent_op(), LoopOp):
        block = block.parent_op().parent_block()  # type: ignore[union-attr]
        if block is None:
            return None
    return block


def _blocks_above(op: Operation) -> list[Block]:
    """The blocks holding `op`, innermost first."""
    blocks = []
    block = op.parent_block()
    while block is not None:
        blocks.append(block)
        parent = block.parent_op()
        block = None if parent is None else parent.parent_block()
    return blocks


def _ends_early(block: Block) -> bool:
    """Whether an op in `block` may end the invocation or split the dispatch
    before the block's end (a `vyre.return`, a `grid_sync` barrier)."""
    for top in block.ops:
        for op in top.walk():
            if isinstance(op, ReturnOp):
                return True
            if isinstance(op, BarrierOp) and op.is_grid_sync:
                return True
    return False
