"""Recognize the loop nests that `vyre-tile` tiles: one output per invocation,
computed by a `vyre.loop` that accumulates over two affine loads.

The shape is the naive matrix product as it is usually written, by hand or by
`convert-to-vyre` from an `scf.parallel` over `(i, j)` with an `scf.for`
reduction inside:

```mlir
vyre.program @gemm workgroup_size [16, 16, 1] grid [4, 4, 1] {
  vyre.buffer @A binding 0 read_only : f32[4096]
  vyre.buffer @B binding 1 read_only : f32[4096]
  vyre.buffer @C binding 2 write_only : f32[4096]
  %col = vyre.invocation_id x
  %row = vyre.invocation_id y
  %zero = vyre.const 0.0 : f32
  %lo = vyre.const 0 : ui32
  %n = vyre.const 64 : ui32
  vyre.let @acc = %zero : f32
  vyre.loop @k = %lo to %n {
    %k = vyre.var @k : ui32
    %ra = vyre.mul %row, %n : ui32
    %ia = vyre.add %ra, %k : ui32
    %a = vyre.load @A[%ia] : f32          // depends on (row, k) only
    %rb = vyre.mul %k, %n : ui32
    %ib = vyre.add %rb, %col : ui32
    %b = vyre.load @B[%ib] : f32          // depends on (k, col) only
    %p = vyre.mul %a, %b : f32
    %acc = vyre.var @acc : f32
    %s = vyre.add %acc, %p : f32
    vyre.assign @acc = %s : f32
  }
  %r = vyre.var @acc : f32
  %rc = vyre.mul %row, %n : ui32
  %ic = vyre.add %rc, %col : ui32
  vyre.store @C[%ic] = %r : f32
}
```

`recognize(program)` returns a `TileNest` (the parts a tiled rewrite needs) or
a `NotTileable` whose `reason` says, in a sentence, why the program does not
have this shape. What it proves:

- the program has an explicit grid, a workgroup of one layer (`z` = 1) and a
  grid of one layer; it reads `invocation_id x` (the column) and
  `invocation_id y` (the row) and no other id, no `num_workgroups`, no local
  ids, no subgroup op, no atomic, no barrier, and calls nothing;
- its statements are expressions, then optionally one `vyre.if` (no else)
  whose condition is an expression of the ids and constants (the bounds
  guard), holding: one `vyre.let @acc`, one `vyre.loop @k` with
  dispatch-uniform bounds, one `vyre.store` after it;
- the loop body is expressions and one `vyre.assign @acc` (the update); it
  makes exactly two loads, of buffers that the program never writes (one
  buffer twice, as in `A A^T`, is allowed): one at an index affine in
  `(row, k)` with no column term (the row operand), one at an index affine in
  `(k, col)` with no row term (the column operand), both varying with `k`;
- the store writes a buffer at an index affine in `(row, col)` that is
  injective over the guarded rows and columns: each output is written once,
  by one invocation; the stored value and the initial value of `@acc` are
  expressions of the ids, constants and loads (and of `@acc` for the stored
  value); a load reads a buffer the program never writes, or the stored
  buffer at the store's own index (`C = beta * C + alpha * acc`): only the
  invocation that writes an element reads it;
- nothing may trap (`si32` division), so computing an output that the guard
  would not store is harmless.

The affine forms (`affine_form`) are over the 32-bit integers: `add`,
`sub`, `mul` by a constant and `shl` by a constant of the ids, the loop
variable and constants.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from vyre_xdsl.analysis.expressions import is_expression, may_trap
from vyre_xdsl.analysis.locals import locals_assigned_in
from vyre_xdsl.analysis.uniformity import is_dispatch_uniform
from vyre_xdsl.dialects.vyre import (
    AndOp,
    AssignOp,
    AtomicOp,
    BarrierOp,
    CallOp,
    ConstOp,
    IfOp,
    InvocationIdOp,
    LetOp,
    LoadOp,
    LocalIdOp,
    LoopOp,
    LtOp,
    NumWorkgroupsOp,
    ProgramOp,
    StoreOp,
    SubgroupBallotOp,
    SubgroupLocalIdOp,
    SubgroupReduceOp,
    SubgroupShuffleOp,
    SubgroupSizeOp,
    VarOp,
    WorkgroupIdOp,
    ui32,
)

U32 = 1 << 32

#: symbols of an affine form
ROW, COL, K = "row", "col", "k"


@dataclass(frozen=True)
class NotTileable:
    """Why a program is not a tileable nest (one sentence)."""

    reason: str


@dataclass(frozen=True)
class TileNest:
    """The parts of a recognized nest (ops of the original program)."""

    program: ProgramOp
    guard: IfOp | None
    acc: LetOp
    loop: LoopOp
    update: AssignOp
    store: StoreOp
    #: the loads in the loop body that depend on the row (and k), on the column (and k)
    row_load: LoadOp
    col_load: LoadOp
    #: affine forms {symbol: coefficient, "": constant} of the three indices
    row_form: dict[str, int]
    col_form: dict[str, int]
    store_form: dict[str, int]
    #: how many rows (y) and columns (x) the naive program covers (grid x workgroup)
    rows: int
    cols: int

    @property
    def acc_name(self) -> str:
        return self.acc.var_name.data

    @property
    def k_name(self) -> str:
        return self.loop.var_name.data


def _owner(value: SSAValue) -> Operation | None:
    owner = value.owner
    return owner if isinstance(owner, Operation) else None


def _const(value: SSAValue) -> int | None:
    op = _owner(value)
    if isinstance(op, ConstOp) and value.type == ui32:
        return int(op.literal())
    return None


def affine_form(
    value: SSAValue,
    k_name: str | None = None,
    leaf: Callable[[Operation], str | None] | None = None,
) -> dict[str, int] | None:
    """`value` as `{ROW: a, COL: b, K: c, "": d}` (coefficients mod 2^32, zero
    terms, a zero constant included, left out) when it is affine in `invocation_id y`, `invocation_id x`
    and the loop variable `k_name`, else None. `leaf(op)` names further
    variables: the key of an op's term, or None for an op that is none."""
    if value.type != ui32:
        return None
    op = _owner(value)
    if op is None:
        return None
    if isinstance(op, ConstOp):
        constant = int(op.literal()) % U32
        return {"": constant} if constant else {}
    if isinstance(op, InvocationIdOp):
        return {COL: 1} if op.axis_index == 0 else {ROW: 1} if op.axis_index == 1 else None
    if isinstance(op, VarOp):
        return {K: 1} if k_name is not None and op.var_name.data == k_name else None
    key = None if leaf is None else leaf(op)
    if key is not None:
        return {key: 1}
    name = op.name.removeprefix("vyre.")
    if name not in ("add", "sub", "mul", "shl") or len(op.operands) != 2:
        return None
    a, b = (affine_form(v, k_name, leaf) for v in op.operands)
    if a is None or b is None:
        return None
    if name == "add":
        return _combine(a, b, 1)
    if name == "sub":
        return _combine(a, b, -1)
    if name == "shl":
        if set(b) - {""}:
            return None
        return _scale(a, 1 << (b.get("", 0) & 31))
    for x, y in ((a, b), (b, a)):
        if not set(y) - {""}:
            return _scale(x, y.get("", 0))
    return None


def _combine(a: dict[str, int], b: dict[str, int], sign: int) -> dict[str, int]:
    out = dict(a)
    for key, c in b.items():
        out[key] = (out.get(key, 0) + sign * c) % U32
    return {key: c for key, c in out.items() if c}


def _scale(a: dict[str, int], c: int) -> dict[str, int]:
    out = {key: (v * c) % U32 for key, v in a.items()}
    return {key: v for key, v in out.items() if v}


_REFUSED_OPS = (
    AtomicOp,
    BarrierOp,
    CallOp,
    LocalIdOp,
    WorkgroupIdOp,
    NumWorkgroupsOp,
    SubgroupSizeOp,
    SubgroupLocalIdOp,
    SubgroupReduceOp,
    SubgroupShuffleOp,
    SubgroupBallotOp,
)


def guard_bounds(cond: SSAValue) -> dict[str, int]:
    """Upper bounds the guard puts on the row and column: `lt id, c` terms of a
    conjunction (`and`)."""
    op = _owner(cond)
    bounds: dict[str, int] = {}
    if isinstance(op, AndOp):
        for operand in op.operands:
            for key, c in guard_bounds(operand).items():
                bounds[key] = min(c, bounds.get(key, c))
    elif isinstance(op, LtOp):
        form, c = affine_form(op.operands[0]), _const(op.operands[1])
        if c is not None and form in ({ROW: 1}, {COL: 1}):
            bounds[next(iter(form))] = c
    return bounds


def injective_over(form: dict[str, int], rows: int, cols: int) -> bool:
    """Whether `form` (in ROW and COL) takes distinct values on [0, rows) x
    [0, cols) without wrapping."""
    if set(form) - {ROW, COL, ""} or rows < 1 or cols < 1:
        return False
    a, b, d = form.get(ROW, 0), form.get(COL, 0), form.get("", 0)
    if a * (rows - 1) + b * (cols - 1) + d >= U32:
        return False
    if rows == 1:
        return b != 0 or cols == 1
    if cols == 1:
        return a != 0
    return (b != 0 and a >= b * cols) or (a != 0 and b >= a * rows)


#: which loads an expression of the ids may make
Readable = Callable[[LoadOp], bool]


def _no_loads(load: LoadOp) -> bool:
    return False


def _is_ids_only(value: SSAValue, readable: Readable, seen: dict[SSAValue, bool]) -> bool:
    """Whether `value` is computed by expressions (and loads that `readable`
    allows) from ids, constants, `buf_len` and `repetition` alone."""
    if value in seen:
        return seen[value]
    op = _owner(value)
    ok = op is not None and (
        (is_expression(op) and not isinstance(op, (VarOp, CallOp, *_REFUSED_OPS)))
        or (isinstance(op, LoadOp) and readable(op))
    )
    ok = ok and all(_is_ids_only(v, readable, seen) for v in op.operands)
    seen[value] = ok
    return ok


def recognize(program: ProgramOp) -> TileNest | NotTileable:
    """The tileable nest of `program`, or why it has none (module docstring)."""
    grid = program.explicit_grid
    if grid is None:
        return NotTileable("the program has no explicit grid")
    wx, wy, wz = program.workgroup
    if wz != 1 or grid[2] != 1:
        return NotTileable("the workgroup or the grid has more than one layer (z)")
    for op in program.walk():
        if isinstance(op, _REFUSED_OPS):
            return NotTileable(f"the program uses '{op.name}'")
        if isinstance(op, InvocationIdOp) and op.axis_index == 2:
            return NotTileable("the program reads invocation_id z")
        if may_trap(op):
            return NotTileable(f"'{op.name}' may trap")
    written = {op.buffer_name for op in program.walk() if isinstance(op, StoreOp | AtomicOp)}
    unwritten = {b.buffer_name for b in program.buffers()} - written
    if any(b.access_mode == "workgroup" for b in program.buffers()):
        return NotTileable("the program already uses workgroup memory")
    statements = list(program.statements())
    nested = [op for op in statements if op.regions]
    guard = None
    body = statements
    if len(nested) == 1 and isinstance(nested[0], IfOp):
        guard = nested[0]
        if guard.has_else:
            return NotTileable("the guard 'vyre.if' has an else branch")
        if not _is_ids_only(guard.cond, _no_loads, {}):
            return NotTileable("the guard is not an expression of the ids and constants")
        outside = [op for op in statements if op is not guard]
        body = list(guard.then_region.block.ops)
    else:
        outside = []
    for op in outside:
        if not (is_expression(op) or isinstance(op, LoadOp)):
            return NotTileable(f"'{op.name}' beside the guard")
    lets = [op for op in body if isinstance(op, LetOp)]
    loops = [op for op in body if isinstance(op, LoopOp)]
    stores = [op for op in body if isinstance(op, StoreOp)]
    if len(loops) != 1 or len(lets) != 1 or len(stores) != 1:
        return NotTileable(
            "the nest is not one 'vyre.let' accumulator, one 'vyre.loop' and one 'vyre.store' "
            f"(found {len(lets)}, {len(loops)} and {len(stores)})"
        )
    (acc,), (loop,), (store,) = lets, loops, stores
    acc_name, k_name = acc.var_name.data, loop.var_name.data
    for op in body:
        if isinstance(op, VarOp) and op.var_name.data == acc_name:
            continue
        if op not in (acc, loop, store) and not (is_expression(op) or isinstance(op, LoadOp)):
            return NotTileable(f"'{op.name}' in the nest")
    order = body.index
    if not order(acc) < order(loop) < order(store):
        return NotTileable("the accumulator, the loop and the store are not in that order")
    for op in program.walk():
        if isinstance(op, VarOp) and op.var_name.data == acc_name:
            if not loop.is_ancestor(op) and order_of(op, body) < order(loop):
                return NotTileable(f"@{acc_name} is read before the loop")
    if not (is_dispatch_uniform(loop.lower) and is_dispatch_uniform(loop.upper)):
        return NotTileable("the loop bounds are not the same in every invocation")
    # the loop body: expressions, loads, one assignment of the accumulator
    inner = list(loop.body.block.ops)
    assigns = [op for op in inner if isinstance(op, AssignOp)]
    if len(assigns) != 1 or assigns[0].var_name.data != acc_name:
        return NotTileable(f"the loop does not assign @{acc_name} exactly once")
    (update,) = assigns
    if locals_assigned_in(loop) != {acc}:
        return NotTileable("the loop assigns other named locals")
    for op in inner:
        if op is not update and not (is_expression(op) or isinstance(op, LoadOp | VarOp)):
            return NotTileable(f"'{op.name}' in the loop body")
        if isinstance(op, VarOp) and op.var_name.data not in (acc_name, k_name):
            return NotTileable(f"the loop body reads named local @{op.var_name.data}")
    loads = [op for op in inner if isinstance(op, LoadOp)]
    if len(loads) != 2:
        return NotTileable(
            "the loop body does not make exactly two loads "
            f"(loads: {', '.join('@' + load.buffer_name for load in loads) or 'none'})"
        )
    row_load = col_load = None
    forms: dict[LoadOp, dict[str, int]] = {}
    for load in loads:
        if load.buffer_name not in unwritten:
            return NotTileable(f"@{load.buffer_name} is written by the program")
        form = affine_form(load.index, k_name)
        if form is None:
            return NotTileable(
                f"the index of @{load.buffer_name} is not affine in the ids and @{k_name}"
            )
        if not form.get(K):
            return NotTileable(f"the load of @{load.buffer_name} does not vary with @{k_name}")
        forms[load] = form
        if COL not in form:
            row_load = load if row_load is None else row_load
        elif ROW not in form:
            col_load = load if col_load is None else col_load
    if row_load is None or col_load is None:
        return NotTileable(
            "the loads are not one of (row, k) and one of (k, column): nothing to share "
            "between neighbouring invocations"
        )
    # the store: injective over the covered rows and columns
    rows, cols = grid[1] * wy, grid[0] * wx
    bounds = guard_bounds(guard.cond) if guard is not None else {}
    store_form = affine_form(store.index)
    if store_form is None or K in store_form:
        return NotTileable("the store index is not affine in the row and the column")
    if not injective_over(
        store_form, min(rows, bounds.get(ROW, rows)), min(cols, bounds.get(COL, cols))
    ):
        return NotTileable("the store index may give two invocations the same element")
    readable = _readable(unwritten, store, store_form)
    for op in (*outside, *body):
        if isinstance(op, LoadOp) and not readable(op):
            return NotTileable(
                f"@{op.buffer_name} is written by the program and read outside the loop "
                "other than at the store's index"
            )
    if not _is_ids_only(acc.value, readable, {}):
        return NotTileable(
            f"the initial value of @{acc_name} is not an expression of the ids "
            "(and of loads of unwritten buffers, or of the output at the store's index)"
        )
    if not _stored_value_ok(store.value, acc_name, readable, {}):
        return NotTileable("the stored value is not an expression of the accumulator and the ids")
    if not _update_ok(update.value, loop, acc_name, k_name, {row_load, col_load}, unwritten):
        return NotTileable("the update reads something other than the loads, @acc and the ids")
    return TileNest(
        program,
        guard,
        acc,
        loop,
        update,
        store,
        row_load,
        col_load,
        forms[row_load],
        forms[col_load],
        store_form,
        rows,
        cols,
    )


def _readable(unwritten: set[str], store: StoreOp, store_form: dict[str, int]) -> Readable:
    """Loads outside the loop that tiling keeps: of a buffer the program never
    writes, or of the stored buffer at the store's own index, which only the
    invocation that stores there reads (the store is injective)."""

    def readable(load: LoadOp) -> bool:
        if load.buffer_name in unwritten:
            return True
        return load.buffer_name == store.buffer_name and affine_form(load.index) == store_form

    return readable


def order_of(op: Operation, body: list[Operation]) -> int:
    """The position in `body` of `op` or of its ancestor there."""
    while op not in body:
        parent = op.parent_op()
        if parent is None:
            return -1
        op = parent
    return body.index(op)


def _stored_value_ok(
    value: SSAValue, acc_name: str, readable: Readable, seen: dict[SSAValue, bool]
) -> bool:
    op = _owner(value)
    if isinstance(op, VarOp):
        return op.var_name.data == acc_name
    if op is None:
        return False
    if isinstance(op, LoadOp):
        return readable(op) and _is_ids_only(op.index, readable, seen)
    if not is_expression(op) or isinstance(op, _REFUSED_OPS):
        return False
    return all(_stored_value_ok(v, acc_name, readable, seen) for v in op.operands)


def _update_ok(
    value: SSAValue,
    loop: LoopOp,
    acc_name: str,
    k_name: str,
    staged: set[LoadOp],
    unwritten: set[str],
) -> bool:
    op = _owner(value)
    if op is None:
        return False
    if op in staged:
        return True
    if isinstance(op, VarOp):
        return op.var_name.data in (acc_name, k_name)
    if isinstance(op, LoadOp):
        return not loop.is_ancestor(op) and op.buffer_name in unwritten
    if not is_expression(op) or isinstance(op, _REFUSED_OPS):
        return False
    return all(_update_ok(v, loop, acc_name, k_name, staged, unwritten) for v in op.operands)
