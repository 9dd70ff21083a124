"""`vyre-tile`: tiling with register blocking for the naive matrix product.

```
vyre-opt -p vyre-tile gemm.mlir
vyre-opt -p 'vyre-tile{reg-m=4 reg-n=4 tile-k=16}' gemm.mlir
vyre-opt -p 'vyre-tile{remarks=true}' gemm.mlir     # say why a program is left alone
```

A program that computes one output per invocation with a loop that
accumulates over a row operand and a column operand (`C[row, col] = sum over
k of A[row, k] * B[k, col]`, as `vyre_xdsl.analysis.tiling` recognizes it)
loads the same `A[row, k]` in every invocation of a row and the same
`B[k, col]` in every invocation of a column. The pass rewrites it so that:

- each invocation computes a block of `reg-m x reg-n` outputs, strided by the
  workgroup (rows `row0 + ly + i * threads-m`, columns `col0 + lx + j *
  threads-n`), in `reg-m * reg-n` named locals;
- a workgroup of `threads-n x threads-m` invocations covers a tile of
  `threads-m * reg-m` rows and `threads-n * reg-n` columns, so the grid
  shrinks by those factors;
- for each slice of `tile-k` values of the loop variable, the workgroup loads
  the slice of the row operand and of the column operand it needs into
  workgroup memory once (each invocation a few elements, coalesced along the
  index's unit stride), a barrier, then every invocation updates its block
  from workgroup memory (the slice unrolled), a barrier;
- a last partial slice (when the trip count is not a multiple of `tile-k`)
  loads only the values inside the loop's range (zero elsewhere) and runs
  only those iterations;
- the outputs are stored under the program's own guard (and, where the tiles
  overhang the naive grid, a check that the output is inside it); an initial
  value that reads memory (`beta * C[row, col]`) is read under the same
  condition, so no invocation reads an element that another one writes.

Each output still starts from the same initial value and is updated in the
same order of `k` by the same expression: no float is reassociated, and the
results are bit-identical to the naive program's on the reference interpreter
(on a GPU, up to where its compiler contracts `a*b+c` into an `fma`). The
rows and columns past the edge of the grid are computed from whatever their
loads give and never stored.

A program the analysis does not recognize is left as it is; with
`remarks=true` the pass prints a located `remark:` saying why. A program
whose tiles would need more workgroup memory than `max-workgroup-storage`
bytes is left alone too (and says so).

The grid of a tiled program is its own: a grid given at run time
(`run(..., grid=...)`) replaces it, so run the pass on the module whose grid
is final.

```mlir
// before (one invocation per output, 16 x 16 workgroups, 4 x 4 of them)
vyre.program @gemm workgroup_size [16, 16, 1] grid [4, 4, 1] { ... }
// after (vyre-tile{reg-m=4 reg-n=4}: 4 x 4 outputs per invocation)
vyre.program @gemm workgroup_size [16, 16, 1] grid [1, 1, 1] {
  ...
  vyre.buffer @A_tile workgroup : f32[...]
  vyre.buffer @B_tile workgroup : f32[...]
  ...
  vyre.loop @tile_t = %c0 to %slices {
    ...
    vyre.barrier
    ...
    vyre.barrier
  }
  ...
}
```
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass

from vyre_xdsl.analysis.loops import constant_ui32
from vyre_xdsl.analysis.tiling import (
    COL,
    ROW,
    K,
    NotTileable,
    TileNest,
    guard_bounds,
    recognize,
)
from vyre_xdsl.builder import ProgramBuilder
from vyre_xdsl.diagnostics import VyreError
from vyre_xdsl.dialects.vyre import (
    ELEMENT_TYPES,
    ConstOp,
    InvocationIdOp,
    LoadOp,
    ProgramOp,
    VarOp,
    is_expression,
    ui32,
)
from vyre_xdsl.passes.vyre_fuse import print_remark

#: the leaves of a cloned expression besides the ids and the loop variable
ACC, ROW_VALUE, COL_VALUE = "acc", "a", "b"

#: WebGPU's default limit on workgroup memory, bytes
DEFAULT_WORKGROUP_STORAGE = 16384


@dataclass
class _Cloner:
    """Copies expressions of the naive program into the tiled one, with the
    ids, the loop variable, the accumulator and the two staged loads replaced
    by the values of one output (a context). What depends on none of those is
    copied once, into `prelude` (placed at the top of the program)."""

    b: ProgramBuilder
    nest: TileNest
    prelude: list[Operation] = field(default_factory=list)
    _invariant: dict[SSAValue, SSAValue] = field(default_factory=dict)
    _constants: dict[tuple[int, Attribute], SSAValue] = field(default_factory=dict)
    _leaves: dict[SSAValue, frozenset[str]] = field(default_factory=dict)

    def const(self, value: int, ty: Attribute = ui32) -> SSAValue:
        key = (value, ty)
        if key not in self._constants:
            op = ConstOp(value if ty == ui32 else _zero_literal(ty, value), ty)
            self.prelude.append(op)
            self._constants[key] = op.results[0]
        return self._constants[key]

    def leaf(self, value: SSAValue) -> str | None:
        op = value.owner
        nest = self.nest
        if isinstance(op, InvocationIdOp):
            return COL if op.axis_index == 0 else ROW
        if isinstance(op, VarOp):
            name = op.var_name.data
            return ACC if name == nest.acc_name else K if name == nest.k_name else None
        if op is nest.row_load:
            return ROW_VALUE
        if op is nest.col_load:
            return COL_VALUE
        return None

    def is_invariant(self, value: SSAValue) -> bool:
        op = value.owner
        if not isinstance(op, Operation) or self.leaf(value) is not None:
            return False
        if not (is_expression(op) or isinstance(op, LoadOp)):
            return False
        return all(self.is_invariant(v) for v in op.operands)

    def invariant(self, value: SSAValue) -> SSAValue:
        if value not in self._invariant:
            op = value.owner
            assert isinstance(op, Operation)
            operands = [self.invariant(v) for v in op.operands]
            new = op.clone()
            new.operands = operands
            self.prelude.append(new)
            for old, result in zip(op.results, new.results):
                self._invariant[old] = result
        return self._invariant[value]

    def clone(self, value: SSAValue, env: dict[str, SSAValue], memo: dict | _Memos) -> SSAValue:
        """`value` computed for the context `env` (at the builder's insertion point)."""
        kind = self.leaf(value)
        if kind is not None:
            return env[kind]
        if self.is_invariant(value):
            return self.invariant(value)
        table = memo.table(value, self) if isinstance(memo, _Memos) else memo
        if value in table:
            return table[value]
        op = value.owner
        assert isinstance(op, Operation)
        operands = [self.clone(v, env, memo) for v in op.operands]
        new = op.clone()
        new.operands = operands
        self.b.insert(new)
        for old, result in zip(op.results, new.results):
            table[old] = result
        return table[value]

    def leaves(self, value: SSAValue) -> frozenset[str]:
        """The context leaves `value` depends on (none when it is invariant)."""
        if value not in self._leaves:
            kind = self.leaf(value)
            op = value.owner
            if kind is not None:
                found = frozenset({kind})
            elif self.is_invariant(value) or not isinstance(op, Operation):
                found = frozenset()
            else:
                found = frozenset().union(*(self.leaves(v) for v in op.operands))
            self._leaves[value] = found
        return self._leaves[value]


@dataclass
class _Memos:
    """The copies made for one output of the block, filed where they can be
    shared: a part of the update that reads only the row's operand (and k) is
    the same for the whole row of outputs, and is copied once per row; one that
    reads only the column's, once per column (`alpha * A[i, k]` in `acc +
    alpha * A[i, k] * B[k, j]`)."""

    row: dict
    col: dict
    own: dict = field(default_factory=dict)

    def table(self, value: SSAValue, cl: _Cloner) -> dict:
        leaves = cl.leaves(value)
        if leaves <= {ROW, ROW_VALUE, K}:
            return self.row
        if leaves <= {COL, COL_VALUE, K}:
            return self.col
        return self.own


def _zero_literal(ty: Attribute, value: int) -> int | float:
    name = str(ty)
    return float(value) if name.startswith(("f", "bf")) else value


def _reads_k(value: SSAValue, k_name: str, staged: set[Operation]) -> bool:
    """Whether `value` reads the loop variable other than through a staged load."""
    op = value.owner
    if op in staged:
        return False
    if isinstance(op, VarOp):
        return op.var_name.data == k_name
    return isinstance(op, Operation) and any(_reads_k(v, k_name, staged) for v in op.operands)


def _reads_memory(value: SSAValue) -> bool:
    """Whether the expression `value` loads from a buffer."""
    op = value.owner
    if isinstance(op, LoadOp):
        return True
    return isinstance(op, Operation) and any(_reads_memory(v) for v in op.operands)


@dataclass(frozen=True)
class _Staging:
    """Where each invocation's share of one operand's slice comes from and goes:
    per slot, the (k offset, row-or-column offset) it loads and the index in
    workgroup memory it stores, computed once per invocation."""

    buffer: str  # workgroup buffer
    stride: int  # elements between two values of k in workgroup memory
    slots: list[tuple[SSAValue, SSAValue, SSAValue, SSAValue | None]]  # kk, r, index, in range


@dataclass(frozen=True)
class VyreTilePass(ModulePass):
    """Tile the naive matrix product through workgroup memory with register
    blocking (see the module docstring)."""

    name = "vyre-tile"

    #: invocations of a workgroup along the rows (y) and the columns (x)
    threads_m: int = 16
    threads_n: int = 16
    #: outputs each invocation computes along the rows and the columns
    reg_m: int = 8
    reg_n: int = 8
    #: values of the loop variable staged per slice
    tile_k: int = 16
    #: lanes of a workgroup-memory element: 4 (vector<4xf32> loads, f32 operands,
    #: register blocks of multiples of 4) or 1
    vector_width: int = 4
    #: the workgroup memory one tiled program may use, bytes
    max_workgroup_storage: int = DEFAULT_WORKGROUP_STORAGE
    #: print a located remark for each program left alone, and why
    remarks: bool = False

    def check_options(self) -> None:
        for label, value in (
            ("threads-m", self.threads_m),
            ("threads-n", self.threads_n),
            ("reg-m", self.reg_m),
            ("reg-n", self.reg_n),
            ("tile-k", self.tile_k),
        ):
            if value < 1 or value & (value - 1):
                raise VyreError(f"vyre-tile: {label} must be a power of two >= 1, got {value}")
        if self.vector_width not in (1, 4):
            raise VyreError(f"vyre-tile: vector-width must be 1 or 4, got {self.vector_width}")
        if self.threads_m * self.threads_n > 1024:
            raise VyreError(
                f"vyre-tile: threads-m x threads-n is {self.threads_m * self.threads_n}; "
                "a workgroup has at most 1024 invocations"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        for program in [p for p in op.ops if isinstance(p, ProgramOp)]:
            found = recognize(program)
            if isinstance(found, NotTileable):
                self._remark(program, f"not tiled: {found.reason}")
                continue
            needed = self.storage_bytes(found)
            if needed > self.max_workgroup_storage:
                self._remark(
                    program,
                    f"not tiled: the tiles need {needed} bytes of workgroup memory, "
                    f"more than max-workgroup-storage={self.max_workgroup_storage}",
                )
                continue
            tiled = self.tiled(found)
            tiled.location = program.location
            program.parent.insert_op_before(tiled, program)
            program.detach()
            program.erase()
            self._remark(
                tiled,
                f"tiled: {self.reg_m}x{self.reg_n} outputs per invocation, "
                f"{self.tile_m}x{self.tile_n} per workgroup, slices of {self.tile_k}",
            )

    def _remark(self, program: ProgramOp, message: str) -> None:
        if self.remarks:
            print_remark(program, message)

    @property
    def tile_m(self) -> int:
        return self.threads_m * self.reg_m

    @property
    def tile_n(self) -> int:
        return self.threads_n * self.reg_n

    def width(self, nest: TileNest) -> int:
        """The lanes of one workgroup-memory element: 4 (`vector<4xf32>`, one
        wide load gives four operands) when asked for, both operands are f32 and
        the register block is a multiple of 4 each way; else 1."""
        if self.vector_width != 4 or self.reg_m % 4 or self.reg_n % 4:
            return 1
        types = {str(nest.row_load.result.type), str(nest.col_load.result.type)}
        return 4 if types == {"f32"} else 1

    def _strides(self, nest: TileNest) -> tuple[int, int, bool, bool]:
        """The workgroup-memory strides (in elements of `width` lanes) of the two
        slices between two values of k, and whether each is loaded with k as the
        fastest-varying index (its unit stride is along k)."""
        w = self.width(nest)
        a_k_fast = nest.row_form.get(K) == 1 or nest.row_form.get(ROW) != 1
        b_k_fast = nest.col_form.get(COL) != 1 and nest.col_form.get(K) == 1
        # padding a k-fast slice spreads the stores of one k-column over the banks
        pad = 4 if w == 1 else 1
        sa = self.tile_m // w + (pad if a_k_fast else 0)
        sb = self.tile_n // w + (pad if b_k_fast else 0)
        size = _byte_size(nest.row_load.result.type) * w
        if self.tile_k * (sa + sb) * size > self.max_workgroup_storage:
            sa, sb = self.tile_m // w, self.tile_n // w  # no room for the padding
        return sa, sb, a_k_fast, b_k_fast

    def storage_bytes(self, nest: TileNest) -> int:
        sa, sb, _, _ = self._strides(nest)
        w = self.width(nest)
        size_a = _byte_size(nest.row_load.result.type) * w
        size_b = _byte_size(nest.col_load.result.type) * w
        return self.tile_k * (sa * size_a + sb * size_b)

    # ---------------------------------------------------------------- the rewrite

    def tiled(self, nest: TileNest) -> ProgramOp:
        program = nest.program
        tm, tn, rm, rn, bk = self.threads_m, self.threads_n, self.reg_m, self.reg_n, self.tile_k
        bm, bn = self.tile_m, self.tile_n
        w = self.width(nest)
        grid = (math.ceil(nest.cols / bn), math.ceil(nest.rows / bm), 1)
        b = ProgramBuilder(program.sym_name.data, (tn, tm, 1), grid=grid)
        b.program.attributes.update(program.attributes)
        names = {buffer.buffer_name for buffer in program.buffers()}
        for buffer in program.buffers():
            b.insert(buffer.clone())
        sa, sb, a_k_fast, b_k_fast = self._strides(nest)
        tile_a = _fresh(f"{nest.row_load.buffer_name}_tile", names)
        tile_b = _fresh(f"{nest.col_load.buffer_name}_tile", names)
        type_a, type_b = nest.row_load.result.type, nest.col_load.result.type
        wide_a = ELEMENT_TYPES["vector<4xf32>"] if w == 4 else type_a
        wide_b = ELEMENT_TYPES["vector<4xf32>"] if w == 4 else type_b
        b.buffer(tile_a, "workgroup", wide_a, bk * sa)
        b.buffer(tile_b, "workgroup", wide_b, bk * sb)
        cl = _Cloner(b, nest)
        c = cl.const

        lx = b.local_id("x", name="lx")
        ly = b.local_id("y", name="ly")
        wx = b.workgroup_id("x", name="wx")
        wy = b.workgroup_id("y", name="wy")
        base_row = b.mul(wy, c(bm), name="tile_row")
        base_col = b.mul(wx, c(bn), name="tile_col")
        # output i of the block: group h = i / w of w adjacent rows, lane i % w
        row0 = b.add(base_row, b.mul(ly, c(w)) if w > 1 else ly, name="row0")
        col0 = b.add(base_col, b.mul(lx, c(w)) if w > 1 else lx, name="col0")

        def spread(base: SSAValue, threads: int, count: int, label: str) -> list[SSAValue]:
            out = []
            for i in range(count):
                offset = (i // w) * threads * w + i % w
                out.append(base if offset == 0 else b.add(base, c(offset), name=f"{label}{i}"))
            return out

        rows = spread(row0, tm, rm, "row")
        cols = spread(col0, tn, rn, "col")
        linear = b.add(b.mul(ly, c(tn)), lx, name="lin")
        accs = [[f"tile_acc_{i}_{j}" for j in range(rn)] for i in range(rm)]
        bounds = _guard_limits(nest)

        def output_guard(i: int, j: int) -> SSAValue | None:
            """Whether output (i, j) of the block is one the naive program stores:
            its guard, and where the tiles overhang the naive grid, inside it."""
            env = {ROW: rows[i], COL: cols[j]}
            conds = []
            if nest.guard is not None:
                conds.append(cl.clone(nest.guard.cond, env, {}))
            if nest.rows % bm and bounds.get(ROW, nest.rows + 1) > nest.rows:
                conds.append(b.lt(rows[i], c(nest.rows)))
            if nest.cols % bn and bounds.get(COL, nest.cols + 1) > nest.cols:
                conds.append(b.lt(cols[j], c(nest.cols)))
            cond = conds[0] if conds else None
            for extra in conds[1:]:
                cond = b.op("and", cond, extra)
            return cond

        # an initial value that reads memory (`beta * C`) is read only for the
        # outputs that are stored: past the edge, the index is another output's
        acc_type = nest.acc.value.type
        reads = _reads_memory(nest.acc.value)
        for i in range(rm):
            for j in range(rn):
                env = {ROW: rows[i], COL: cols[j]}
                cond = output_guard(i, j) if reads else None
                if cond is None:
                    b.let(accs[i][j], cl.clone(nest.acc.value, env, {}))
                    continue
                b.let(accs[i][j], c(0, acc_type))
                with b.if_(cond):
                    b.assign(accs[i][j], cl.clone(nest.acc.value, env, {}))

        stage_a = self._staging(b, cl, linear, tile_a, bm // w, sa, a_k_fast)
        stage_b = self._staging(b, cl, linear, tile_b, bn // w, sb, b_k_fast)
        uses_k = _reads_k(nest.update.value, nest.k_name, {nest.row_load, nest.col_load})

        lo, hi = nest.loop.lower, nest.loop.upper
        lo_c, hi_c = constant_ui32(lo), constant_ui32(hi)
        lo_v = cl.clone(lo, {}, {})
        if lo_c is not None and hi_c is not None:
            trips = max(hi_c - lo_c, 0)
            full_v: SSAValue = c(trips // bk)
            rem_static: int | None = trips % bk
            rem_v = c(trips % bk)
        else:
            hi_v = cl.clone(hi, {}, {})
            count = b.select(b.gt(hi_v, lo_v), b.sub(hi_v, lo_v), c(0), name="trips")
            full_v = b.shr(count, c(bk.bit_length() - 1), name="slices")
            rem_v = b.bit_and(count, c(bk - 1), name="rest")
            rem_static = None

        def load_slices(k0: SSAValue, rest: SSAValue | None) -> None:
            """Each invocation's share of the two slices, from k0 on: `w` rows (or
            columns) at one k per slot, packed into one workgroup-memory element."""
            for stage, load, base, row_like in (
                (stage_a, nest.row_load, base_row, ROW),
                (stage_b, nest.col_load, base_col, COL),
            ):
                for kk, r, index, in_range in stage.slots:

                    def fill(kk=kk, r=r, index=index, load=load, base=base, row_like=row_like):
                        k = b.add(k0, kk)
                        first = b.add(base, b.mul(r, c(w)) if w > 1 else r)
                        lanes = []
                        for lane in range(w):
                            env = {row_like: b.add(first, c(lane)) if lane else first, K: k}
                            index_v = cl.clone(load.index, env, {})
                            lanes.append(b.load(load.buffer_name, index_v))
                        value = lanes[0] if w == 1 else b.from_elements(lanes, wide_a)
                        b.store(stage.buffer, index, value)

                    def slot(kk=kk, index=index, load=load, fill=fill):
                        if rest is None:
                            fill()
                            return
                        # the last, partial slice: zero past the loop's range
                        with b.if_(b.lt(kk, rest)):
                            fill()
                        with b.else_():
                            zero = c(0, load.result.type)
                            if w > 1:
                                zero = b.from_elements([zero] * w, wide_a)
                            b.store(stage.buffer, index, zero)

                    if in_range is None:
                        slot()
                    else:
                        with b.if_(in_range):
                            slot()

        def operands(tile: str, stride: int, lane0: SSAValue, threads: int, count: int, kk, kk_c):
            """The `count` operands of one k from workgroup memory: group h at
            tile[kk * stride + lane0 + h * threads], lanes extracted."""
            row = b.add(c(kk_c * stride) if kk_c is not None else b.mul(kk, c(stride)), lane0)
            values = []
            for h in range(count // w):
                wide = b.load(tile, b.add(row, c(h * threads)) if h else row)
                values += [wide] if w == 1 else [b.extract(wide, lane) for lane in range(w)]
            return values

        def update(kk: SSAValue, kk_c: int | None, k0: SSAValue) -> None:
            """One value of k: every output of the block updated from workgroup memory."""
            a_values = operands(tile_a, sa, ly, tm, rm, kk, kk_c)
            b_values = operands(tile_b, sb, lx, tn, rn, kk, kk_c)
            k_value = b.add(k0, kk) if uses_k else None
            by_row: list[dict] = [{} for _ in range(rm)]
            by_col: list[dict] = [{} for _ in range(rn)]
            for i in range(rm):
                for j in range(rn):
                    env = {
                        ROW: rows[i],
                        COL: cols[j],
                        ACC: b.var(accs[i][j], nest.acc.value.type),
                        ROW_VALUE: a_values[i],
                        COL_VALUE: b_values[j],
                    }
                    if k_value is not None:
                        env[K] = k_value
                    memos = _Memos(by_row[i], by_col[j])
                    b.assign(accs[i][j], cl.clone(nest.update.value, env, memos))

        with b.loop("tile_t", c(0), full_v):
            t = b.var("tile_t", ui32)
            k0 = b.add(lo_v, b.mul(t, c(bk)), name="k0")
            load_slices(k0, None)
            b.barrier()
            for kk in range(bk):
                update(c(kk), kk, k0)
            b.barrier()

        def remainder() -> None:
            k0 = b.add(lo_v, b.mul(full_v, c(bk)), name="k_rest")
            load_slices(k0, rem_v)
            b.barrier()
            if rem_static is not None:
                for kk in range(rem_static):
                    update(c(kk), kk, k0)
            else:
                with b.loop("tile_r", c(0), rem_v):
                    update(b.var("tile_r", ui32), None, k0)

        if rem_static is None:
            with b.if_(b.gt(rem_v, c(0))):
                remainder()
        elif rem_static:
            remainder()

        # the stores, under the naive program's guard and inside its grid
        for i in range(rm):
            for j in range(rn):
                env = {ROW: rows[i], COL: cols[j]}
                cond = output_guard(i, j)

                def store(env=env, i=i, j=j) -> None:
                    memo: dict = {}
                    env = dict(env, **{ACC: b.var(accs[i][j], nest.acc.value.type)})
                    index = cl.clone(nest.store.index, env, memo)
                    value = cl.clone(nest.store.value, env, memo)
                    b.store(nest.store.buffer_name, index, value)

                if cond is None:
                    store()
                else:
                    with b.if_(cond):
                        store()

        tiled = b.build()
        first = next(iter(tiled.statements()))
        for op in cl.prelude:
            tiled.body.block.insert_op_before(op, first)
        return tiled

    def _staging(
        self,
        b: ProgramBuilder,
        cl: _Cloner,
        linear: SSAValue,
        buffer: str,
        extent: int,
        stride: int,
        k_fast: bool,
    ) -> _Staging:
        """The slots of one operand's slice: `extent` elements (groups of rows or
        columns) by `tile-k` values of k, spread over the workgroup."""
        c = cl.const
        bk = self.tile_k
        threads = self.threads_m * self.threads_n
        total = extent * bk
        slots = []
        for s in range(math.ceil(total / threads)):
            e = b.add(linear, c(s * threads)) if s else linear
            fast = bk if k_fast else extent
            low = b.bit_and(e, c(fast - 1))
            high = b.shr(e, c(fast.bit_length() - 1))
            kk, r = (low, high) if k_fast else (high, low)
            index = b.add(b.mul(kk, c(stride)), r)
            in_range = b.lt(e, c(total)) if (s + 1) * threads > total else None
            slots.append((kk, r, index, in_range))
        return _Staging(buffer, stride, slots)


def _guard_limits(nest: TileNest) -> dict[str, int]:
    return guard_bounds(nest.guard.cond) if nest.guard is not None else {}


def _fresh(name: str, taken: set[str]) -> str:
    candidate, n = name, 0
    while candidate in taken:
        n += 1
        candidate = f"{name}{n}"
    taken.add(candidate)
    return candidate


def _byte_size(ty: Attribute) -> int:
    name = str(ty)
    for prefix, size in (("vector<4x", 16), ("vector<2x", 8)):
        if name.startswith(prefix):
            return size
    digits = "".join(ch for ch in name if ch.isdigit())
    return max(1, int(digits) // 8) if digits else 4
