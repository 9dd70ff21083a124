"""One `func.func` of standard MLIR as a list of `vyre.program`s.

The function body is read top to bottom:

- an outermost parallel loop (`scf.parallel`, a `linalg.generic` with a
  parallel iterator, or a `gpu.launch_func`, whose threads are the iterations)
  becomes one program whose invocations are its iterations (`parallel_indices`);
- a run of other effectful ops (stores, sequential loops, branches) between
  them becomes one program that a single invocation runs;
- pure ops at the top level (constants, arithmetic, `memref.dim`) are computed
  again at the top of each program that uses them.

Inside a program, sequential loops and branches run per invocation: `scf.for`,
`scf.while`, nested `scf.parallel` and the reduction iterators of `linalg`
become `vyre.loop`s, and loop-carried values and branch results become named
locals (`vyre.let`/`vyre.assign`/`vyre.var`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
)

from vyre_xdsl.context import source_name
from vyre_xdsl.conversion.arith_math import RULES, index_arithmetic
from vyre_xdsl.conversion.checks import kernel_of
from vyre_xdsl.conversion.emitter import BufferUse, ProgramEmitter, i1, ui32
from vyre_xdsl.conversion.types import vyre_type
from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.dialects import vyre

#: the most iterations one `scf.while` may take (two nested loops of 256)
WHILE_LIMIT_STEP = 256

#: top-level ops that have no effect: computed in each program that uses them
TOP_LEVEL_PURE = ("memref.dim",)

TERMINATORS = (
    "scf.yield",
    "scf.reduce.return",
    "scf.condition",
    "scf.reduce",
    "linalg.yield",
    "func.return",
    "gpu.return",
)

#: the gpu ids of a kernel: the dimension order of the flattened launch is
#: (grid z, y, x, block z, y, x), so thread x varies fastest
GPU_IDS = ("gpu.thread_id", "gpu.block_id", "gpu.block_dim", "gpu.grid_dim", "gpu.global_id")


def fail(op: Operation | None, message: str) -> VyreDiagnostic:
    return VyreDiagnostic([(op, message)])


@dataclass(frozen=True)
class Argument:
    """A function argument as a buffer."""

    name: str
    binding: int
    element: Attribute
    #: the memref's shape (None for a dynamic dimension); None for a scalar
    shape: tuple[int | None, ...] | None

    @property
    def count(self) -> int | None:
        if self.shape is None:
            return 1
        if None in self.shape:
            return None
        return math.prod(self.shape)


def is_top_level_pure(op: Operation) -> bool:
    return op.dialect_name() in ("arith", "math") or op.name in TOP_LEVEL_PURE


def is_parallel_nest(op: Operation) -> bool:
    """Whether `op` at the top of a function becomes a program of its own (an
    `scf.parallel` with reductions runs in order in a one-invocation program)."""
    if op.name == "scf.parallel":
        return not op.initVals
    if op.name == "gpu.launch_func":
        return True
    if op.name == "linalg.generic":
        return any(str(it.data) == "parallel" for it in op.iterator_types)
    return False


def written_memrefs(op: Operation) -> list[SSAValue]:
    """The memrefs that `op` (and the ops inside it) store to, in order."""
    found: list[SSAValue] = []
    for inner in op.walk():
        targets: Sequence[SSAValue] = ()
        if inner.name == "memref.store":
            targets = (inner.memref,)
        elif inner.name == "linalg.generic":
            targets = tuple(inner.outputs)
        for target in targets:
            if target not in found:
                found.append(target)
    return found


class FunctionConverter:
    """Converts one `func.func` (already checked by `conversion.checks`)."""

    def __init__(self, func: Operation):
        self.func = func
        self.name = func.sym_name.data
        self.arguments: dict[SSAValue, Argument] = {}
        for position, arg in enumerate(func.body.block.args):
            self.arguments[arg] = self._argument(arg, position)
        self.lazy = self._lazy_ops()

    def _lazy_ops(self) -> set[Operation]:
        """The top-level pure ops that depend only on arguments and on each
        other: computed again at the top of each program that uses them. A
        `memref.load` from a memref argument that the function never writes
        (no store, no `linalg` output, not passed to a GPU kernel) is one: it
        reads the same value wherever it is computed."""
        written = set(written_memrefs(self.func))
        for op in self.func.walk():
            if op.name == "gpu.launch_func":
                written.update(v for v in op.operands if isinstance(v.type, MemRefType))
        lazy: set[Operation] = set()
        for op in self.func.body.block.ops:
            unwritten_load = (
                op.name == "memref.load"
                and op.memref in self.arguments
                and op.memref not in written
            )
            if (is_top_level_pure(op) or unwritten_load) and all(
                v in self.arguments or v.owner in lazy for v in op.operands
            ):
                lazy.add(op)
        return lazy

    def _argument(self, arg: BlockArgument, position: int) -> Argument:
        name = source_name(arg) or f"arg{position}"
        if isinstance(arg.type, MemRefType):
            shape = tuple(None if d < 0 else d for d in arg.type.get_shape())
            return Argument(name, position, vyre_type(arg.type.element_type), shape)
        return Argument(name, position, vyre_type(arg.type), None)

    # ------------------------------------------------------------------ programs

    def programs(self) -> list[vyre.ProgramOp]:
        """The programs in the function's order; every argument is a buffer of
        the first program that uses it (one that none uses: of the first)."""
        emitters = self._emitters()
        if emitters:
            for arg, info in self.arguments.items():
                if not any(info.name in em.buffers for em in emitters):
                    self.buffer(emitters[0], arg, write=False)
        for number, em in enumerate(emitters):
            em.name = f"{self.name}_{number}"
        return [em.build() for em in emitters]

    def _emitters(self) -> list[ProgramEmitter]:
        programs: list[ProgramEmitter | None] = []
        segment: list[Operation] = []
        for op in self.func.body.block.ops:
            if op.name == "func.return" or op in self.lazy:
                continue
            if not is_parallel_nest(op):
                segment.append(op)
                continue
            if segment:
                programs.append(self._sequential(segment, len(programs)))
                segment = []
            programs.append(self._parallel(op, len(programs)))
        if segment:
            programs.append(self._sequential(segment, len(programs)))
        return [p for p in programs if p is not None]

    def _sequential(self, ops: list[Operation], index: int) -> ProgramEmitter | None:
        """One invocation runs `ops` (nothing when they write no memref)."""
        if not any(written_memrefs(op) for op in ops):
            return None
        em = ProgramEmitter(f"{self.name}_{index}")
        em.location = ops[0].location
        first = em.op("eq", em.invocation_id(), em.zero(ui32))
        with em.if_(first):
            for op in ops:
                self.emit_op(em, op)
        return em

    def _parallel(self, op: Operation, index: int) -> ProgramEmitter | None:
        """The program of one outermost parallel nest (none when it writes no memref)."""
        kernel = kernel_of(self.func.parent_op(), op) if op.name == "gpu.launch_func" else None
        if not written_memrefs(kernel or op):
            return None
        em = ProgramEmitter(f"{self.name}_{index}")
        em.location = op.location
        if op.name == "scf.parallel":
            self.emit_parallel(em, op, top=True)
        elif op.name == "gpu.launch_func":
            self.emit_launch(em, op)
        else:
            self.emit_generic(em, op, top=True)
        return em

    # ------------------------------------------------------------------ the mapping

    def parallel_indices(
        self,
        em: ProgramEmitter,
        extents: list[SSAValue],
        writes: list[SSAValue],
        covered: bool,
        static: list[int | None] | None = None,
    ):
        """Map an iteration space of `extents` onto invocations; a context
        manager yielding the zero-based iteration counters, one per dimension.

        Grid axes: when `static` (the extents as integers, given only for a
        nest that is not elementwise, see `_elementwise_scf`) has two or three
        dimensions above 1, all known, and `grid_geometry` fits them, each of
        them is one axis of an explicit grid (`_grid_mapping`).

        Otherwise the space is flattened row-major onto `vyre.invocation_id x`
        and decomposed with div/mod. The derived grid launches one invocation
        per element of the largest buffer the program writes; when the space is
        known to fit (`covered`), invocation `i` runs iteration `i` (and those
        past the end none); otherwise each invocation `i` below that count `C`
        runs iterations `i`, `i + C`, `i + 2C`, ….
        """
        geometry = grid_geometry(static) if static is not None else None
        if geometry is not None:
            return self._grid_mapping(em, static, *geometry)

        @contextmanager
        def mapping():
            flat_id = em.invocation_id()
            sized = [e for e in extents if not _is_one(e)] or extents[:1]
            total = sized[0]
            for extent in sized[1:]:
                total = em.op("mul", total, extent)
            if covered:
                with em.if_(em.op("lt", flat_id, total)):
                    yield self._counters(em, flat_id, extents)
                return
            stride = None
            for memref in writes:
                length = em.buf_len(self.buffer(em, memref, write=True))
                stride = length if stride is None else em.op("max", stride, length)
            with em.if_(em.op("lt", flat_id, stride)):
                rounds = em.op("div", total, stride)
                spare = em.op("ne", em.op("mod", total, stride), em.zero(ui32))
                rounds = em.op("add", rounds, em.cast(spare, ui32))
                with em.loop(em.zero(ui32), rounds, "round") as r:
                    flat = em.op("add", flat_id, em.op("mul", r, stride))
                    with em.if_(em.op("lt", flat, total)):
                        yield self._counters(em, flat, extents)

        return mapping()

    @staticmethod
    @contextmanager
    def _grid_mapping(
        em: ProgramEmitter,
        static: list[int],
        dims: list[int],
        workgroup: tuple[int, int, int],
        grid: tuple[int, int, int],
    ):
        """Dimension `dims[a]` is `vyre.invocation_id` on axis `a` (x, y, z) of
        the explicit `grid`; every axis is guarded by its extent (the last
        workgroup on an axis may run past it); a dimension of extent 1 is 0."""
        em.workgroup_size, em.grid = workgroup, grid
        ids = [em.invocation_id("xyz"[a]) for a in range(len(dims))]
        inside = None
        for a, d in enumerate(dims):
            below = em.op("lt", ids[a], em.const(static[d], ui32))
            inside = below if inside is None else em.op("and", inside, below)
        with em.if_(inside):
            zero = em.zero(ui32) if len(dims) < len(static) else None
            yield [ids[dims.index(d)] if d in dims else zero for d in range(len(static))]

    @staticmethod
    def _counters(em: ProgramEmitter, flat: SSAValue, extents: list[SSAValue]) -> list[SSAValue]:
        """`_decompose`, remembering `flat` so that a memref indexed by exactly
        these counters, with the same inner extents, uses `flat` itself."""
        counters = FunctionConverter._decompose(em, flat, extents)
        em.flattened[tuple(counters)] = (flat, extents)
        return counters

    @staticmethod
    def _decompose(em: ProgramEmitter, flat: SSAValue, extents: list[SSAValue]) -> list[SSAValue]:
        """The row-major counters of `flat` (a dimension of extent 1 is 0)."""
        sized = [d for d, e in enumerate(extents) if not _is_one(e)]
        counters: dict[int, SSAValue] = {}
        rest = flat
        for d in reversed(sized[1:]):
            counters[d] = em.op("mod", rest, extents[d])
            rest = em.op("div", rest, extents[d])
        if sized:
            counters[sized[0]] = rest
        zero = None if len(counters) == len(extents) else em.zero(ui32)
        return [counters.get(d, zero) for d in range(len(extents))]

    # ------------------------------------------------------------------ values

    def value(self, em: ProgramEmitter, v: SSAValue) -> SSAValue:
        """The vyre value of MLIR value `v` in the program `em` builds."""
        known = em.values.get(v)
        if known is not None:
            return known
        if v in self.arguments:
            arg = self.arguments[v]
            if arg.shape is not None:
                raise fail(self.func, f"memref argument %{arg.name} used as a value")
            with em.at_prelude():
                name = self.buffer(em, v, write=False)
                em.values[v] = em.load(name, em.zero(ui32), arg.element)
            return em.values[v]
        owner = v.owner
        if isinstance(owner, Operation) and owner.parent_op() is self.func:
            if owner not in self.lazy:
                raise fail(
                    owner,
                    f"the result of '{owner.name}' outside any parallel loop is used in "
                    "another program; compute it inside the loop that uses it, or pass it "
                    "through a memref",
                )
            with em.at_prelude():
                saved, em.location = em.location, owner.location
                self.emit_op(em, owner)
                em.location = saved
            return em.values[v]
        if isinstance(owner, Operation):
            raise fail(owner, "value used before it is defined")
        # a block argument of another region (a loop's induction variable used
        # outside its loop): located at the op that owns that block
        raise fail(
            owner.parent_op(),
            f"argument {v.index} of this '{owner.parent_op().name}' is used outside its "
            "region, where it is not defined",
        )

    def values(self, em: ProgramEmitter, vs: Sequence[SSAValue]) -> list[SSAValue]:
        return [self.value(em, v) for v in vs]

    def buffer(self, em: ProgramEmitter, memref: SSAValue, write: bool) -> str:
        """Declare the buffer of `memref` (a function argument) in the program."""
        arg = self.arguments.get(memref)
        if arg is None:
            owner = memref.owner if isinstance(memref.owner, Operation) else None
            raise fail(owner, "only memrefs that are function arguments can be accessed")
        if arg.shape is None:
            access = "uniform"
        else:
            access = "read_write" if write else "read_only"
        em.use_buffer(arg.name, BufferUse(access, arg.element, arg.count, arg.binding))
        return arg.name

    # ------------------------------------------------------------------ memrefs

    def dim_size(self, em: ProgramEmitter, memref: SSAValue, d: int) -> SSAValue:
        """The size of dimension `d` of `memref`, a `ui32` (a dynamic one from the
        buffer's length divided by the static dimensions)."""
        shape = self.arguments[memref].shape
        if shape[d] is not None:
            return em.const(shape[d], ui32)
        length = em.buf_len(self.buffer(em, memref, write=False))
        others = math.prod(s for s in shape if s is not None)
        return length if others == 1 else em.op("div", length, em.const(others, ui32))

    def linear_index(
        self, em: ProgramEmitter, memref: SSAValue, indices: list[SSAValue]
    ) -> SSAValue:
        """The row-major element index of `memref[indices]`."""
        if not indices:
            return em.zero(ui32)
        known = em.flattened.get(tuple(indices))
        shape = self.arguments[memref].shape
        if known is not None and all(
            _constant_value(extent) == size
            for extent, size in zip(known[1][1:], shape[1:], strict=True)
        ):
            return known[0]
        flat = indices[0]
        for d, index in enumerate(indices[1:], start=1):
            flat = em.op("add", em.op("mul", flat, self.dim_size(em, memref, d)), index)
        return flat

    def load(self, em: ProgramEmitter, memref: SSAValue, indices: list[SSAValue]) -> SSAValue:
        name = self.buffer(em, memref, write=False)
        element = self.arguments[memref].element
        return em.load(name, self.linear_index(em, memref, indices), element)

    def store(self, em: ProgramEmitter, memref: SSAValue, indices: list[SSAValue], value: SSAValue):
        name = self.buffer(em, memref, write=True)
        em.store(name, self.linear_index(em, memref, indices), value)

    # ------------------------------------------------------------------ ops

    def emit_block(self, em: ProgramEmitter, block: Block) -> list[SSAValue]:
        """Emit `block`'s ops; returns the vyre values its terminator passes on."""
        result: list[SSAValue] = []
        for op in block.ops:
            if op.name in TERMINATORS:
                result = self.values(em, op.operands)
                continue
            self.emit_op(em, op)
        return result

    def emit_op(self, em: ProgramEmitter, op: Operation) -> None:
        saved = em.location, em.location_op
        em.location, em.location_op = op.location, op
        try:
            self._emit(em, op)
        finally:
            em.location, em.location_op = saved

    def _emit(self, em: ProgramEmitter, op: Operation) -> None:
        rule = RULES.get(op.name)
        if rule is not None:
            em.values[op.results[0]] = rule(em, op, self.values(em, op.operands))
            return
        handlers = {
            "memref.load": self.emit_load,
            "memref.store": self.emit_store,
            "memref.dim": self.emit_dim,
            "scf.for": self.emit_for,
            "scf.if": self.emit_if,
            "scf.while": self.emit_while,
            "scf.parallel": lambda em, op: self.emit_parallel(em, op, top=False),
            "linalg.generic": lambda em, op: self.emit_generic(em, op, top=False),
        }
        if op.name in GPU_IDS:
            em.values[op.results[0]] = self.gpu_id(em, op)
            return
        handler = handlers.get(op.name)
        if handler is None:
            raise fail(op, f"'{op.name}' cannot be converted here")
        handler(em, op)

    def emit_load(self, em: ProgramEmitter, op: Operation) -> None:
        indices = self.values(em, op.indices)
        em.values[op.res] = self.load(em, op.memref, indices)

    def emit_store(self, em: ProgramEmitter, op: Operation) -> None:
        value = self.value(em, op.value)
        self.store(em, op.memref, self.values(em, op.indices), value)

    def emit_dim(self, em: ProgramEmitter, op: Operation) -> None:
        d = _constant(op.index.owner)
        rank = len(self.arguments[op.source].shape or ()) if op.source in self.arguments else 0
        if d is None or not 0 <= d < rank:
            raise fail(op, f"memref.dim needs a constant dimension index below the rank ({rank})")
        em.values[op.result] = self.dim_size(em, op.source, d)

    def let_all(self, em: ProgramEmitter, prefix: str, values: Sequence[SSAValue]) -> list[str]:
        names = []
        for value in values:
            names.append(em.fresh(prefix))
            em.let(names[-1], value)
        return names

    def read_all(self, em: ProgramEmitter, names: list[str], types: Sequence[Attribute]):
        return [em.var(name, vyre_type(ty)) for name, ty in zip(names, types, strict=True)]

    def assign_all(self, em: ProgramEmitter, names: list[str], values: Sequence[SSAValue]):
        if len(values) != len(names):
            raise fail(
                em.location_op,
                f"a region yields {len(values)} values where {len(names)} are expected",
            )
        for name, value in zip(names, values, strict=True):
            em.assign(name, value)

    def trip_count(
        self,
        em: ProgramEmitter,
        lb: SSAValue,
        ub: SSAValue,
        step: SSAValue,
        lb_src: SSAValue,
        step_src: SSAValue,
    ) -> SSAValue:
        """The number of iterations from `lb` to `ub` by `step` (`ui32`)."""
        unit = _constant(step_src.owner) == 1
        if unit and _constant(lb_src.owner) == 0:
            return ub
        span = em.select(em.op("gt", ub, lb), em.op("sub", ub, lb), em.zero(ui32))
        if unit:
            return span
        bumped = em.op("add", span, em.op("sub", step, em.const(1, ui32)))
        return em.op("div", bumped, step)

    def emit_for(self, em: ProgramEmitter, op: Operation) -> None:
        lb, ub, step = self.values(em, (op.lb, op.ub, op.step))
        carried = self.let_all(em, "carry", self.values(em, op.iter_args))
        types = [r.type for r in op.res]
        unit = _constant(op.step.owner) == 1
        lower, upper = (
            (lb, ub) if unit else (em.zero(ui32), self.trip_count(em, lb, ub, step, op.lb, op.step))
        )
        block = op.body.block
        with em.loop(lower, upper) as k:
            em.values[block.args[0]] = k if unit else em.op("add", lb, em.op("mul", k, step))
            for arg, value in zip(block.args[1:], self.read_all(em, carried, types), strict=True):
                em.values[arg] = value
            self.assign_all(em, carried, self.emit_block(em, block))
        for result, value in zip(op.res, self.read_all(em, carried, types), strict=True):
            em.values[result] = value

    def emit_if(self, em: ProgramEmitter, op: Operation) -> None:
        cond = self.value(em, op.cond)
        types = [r.type for r in op.output]
        names = self.let_all(em, "branch", [em.zero(vyre_type(t)) for t in types])
        with em.if_(cond) as vif:
            self.assign_all(em, names, self.emit_block(em, op.true_region.block))
        if op.false_region.blocks:
            with em.else_of(vif):
                self.assign_all(em, names, self.emit_block(em, op.false_region.block))
        for result, value in zip(op.output, self.read_all(em, names, types), strict=True):
            em.values[result] = value

    def emit_while(self, em: ProgramEmitter, op: Operation) -> None:
        """`scf.while` as two nested bounded loops guarded by a `done` flag (vyre
        has no loop exit); more than 256 × 256 iterations trap (`scf.while`)."""
        before, after = op.before_region.block, op.after_region.block
        carried = self.let_all(em, "carry", self.values(em, op.arguments))
        arg_types = [a.type for a in before.args]
        types = [r.type for r in op.res]
        results = self.let_all(em, "result", [em.zero(vyre_type(t)) for t in types])
        done = em.fresh("done")
        em.let(done, em.const(False, i1))
        limit = em.const(WHILE_LIMIT_STEP, ui32)
        nest = ExitStack()
        for _ in range(2):
            nest.enter_context(em.loop(em.zero(ui32), limit, "step"))
            nest.enter_context(em.if_(em.op("not", em.var(done, i1))))
        for arg, value in zip(before.args, self.read_all(em, carried, arg_types), strict=True):
            em.values[arg] = value
        cond_op = before.last_op
        self.emit_block(em, before)
        cond = self.value(em, cond_op.condition)
        forwarded = self.values(em, cond_op.args)
        with em.if_(cond) as vif:
            for arg, value in zip(after.args, forwarded, strict=True):
                em.values[arg] = value
            self.assign_all(em, carried, self.emit_block(em, after))
        with em.else_of(vif):
            self.assign_all(em, results, forwarded)
            em.assign(done, em.const(True, i1))
        nest.close()
        with em.if_(em.op("not", em.var(done, i1))):
            em.trap(em.const(WHILE_LIMIT_STEP * WHILE_LIMIT_STEP, ui32), "scf.while")
        for result, value in zip(op.res, self.read_all(em, results, types), strict=True):
            em.values[result] = value

    def emit_parallel(self, em: ProgramEmitter, op: Operation, top: bool) -> None:
        lbs = self.values(em, op.lowerBound)
        ubs = self.values(em, op.upperBound)
        steps = self.values(em, op.step)
        block = op.body.block
        unit = [_constant(s.owner) == 1 for s in op.step]
        counts = [
            self.trip_count(em, lbs[d], ubs[d], steps[d], op.lowerBound[d], op.step[d])
            for d in range(len(lbs))
        ]

        def induction(d: int, k: SSAValue) -> SSAValue:
            if _constant(op.lowerBound[d].owner) == 0 and unit[d]:
                return k
            if unit[d]:
                return em.op("add", lbs[d], k)
            return em.op("add", lbs[d], em.op("mul", k, steps[d]))

        if top:
            writes = written_memrefs(op)
            covered = self._parallel_covered(op, writes)
            static = None if self._elementwise_scf(op) else self._static_trip_counts(op)
            with self.parallel_indices(em, counts, writes, covered, static) as ks:
                for d, k in enumerate(ks):
                    em.values[block.args[d]] = induction(d, k)
                self.emit_block(em, block)
            return
        accumulators = self.let_all(em, "reduce", self.values(em, op.initVals))
        self._nest(
            em,
            counts,
            lambda ks: self._parallel_body(
                em, op, [induction(d, k) for d, k in enumerate(ks)], accumulators
            ),
        )
        types = [r.type for r in op.res]
        for result, value in zip(op.res, self.read_all(em, accumulators, types), strict=True):
            em.values[result] = value

    def _parallel_body(
        self, em: ProgramEmitter, op: Operation, ivs: list[SSAValue], accumulators: list[str]
    ) -> None:
        """One iteration of a parallel loop run in order; its `scf.reduce`
        operands are folded into `accumulators` by the reduce regions."""
        block = op.body.block
        for arg, iv in zip(block.args, ivs, strict=True):
            em.values[arg] = iv
        self.emit_block(em, block)
        reduce = block.last_op
        if reduce is None or reduce.name != "scf.reduce" or not reduce.args:
            return
        types = [r.type for r in op.res]
        current = self.read_all(em, accumulators, types)
        for name, acc, value, region in zip(
            accumulators, current, self.values(em, reduce.args), reduce.reductions, strict=True
        ):
            lhs, rhs = region.block.args
            em.values[lhs], em.values[rhs] = acc, value
            (combined,) = self.emit_block(em, region.block)
            em.assign(name, combined)

    def _nest(self, em: ProgramEmitter, counts: list[SSAValue], body) -> None:
        """Sequential loops over `counts` (outermost first); `body(counters)`."""
        counters: list[SSAValue] = []

        def level(d: int) -> None:
            if d == len(counts):
                body(counters)
                return
            with em.loop(em.zero(ui32), counts[d]) as k:
                counters.append(k)
                level(d + 1)
                counters.pop()

        level(0)

    @staticmethod
    def _static_trip_counts(op: Operation) -> list[int | None]:
        """The trip count of each dimension of `scf.parallel` `op` (None: not constant)."""
        return [
            _trip_count(_constant(lb.owner), _constant(ub.owner), _constant(st.owner))
            for lb, ub, st in zip(op.lowerBound, op.upperBound, op.step, strict=True)
        ]

    def _elementwise_scf(self, op: Operation) -> bool:
        """Whether `scf.parallel` `op` is elementwise: its lower bounds are 0,
        its steps 1, and every memref access in it indexes a memref of the
        iteration space's shape by exactly the induction variables, in order.
        Such a nest keeps the flattened 1-D mapping (each access is then the
        invocation id itself, and the program fuses with its neighbours); any
        other one with static bounds gets grid axes (`parallel_indices`)."""
        if any(_constant(lb.owner) != 0 for lb in op.lowerBound):
            return False
        if any(_constant(st.owner) != 1 for st in op.step):
            return False
        shape = tuple(_constant(ub.owner) for ub in op.upperBound)
        ivs = list(op.body.block.args)
        for inner in op.walk():
            if inner.name in ("memref.load", "memref.store"):
                arg = self.arguments.get(inner.memref)
                if arg is None or arg.shape != shape or list(inner.indices) != ivs:
                    return False
            elif inner.name == "linalg.generic":
                return False
        return True

    def _parallel_covered(self, op: Operation, writes: list[SSAValue]) -> bool:
        """Whether the derived grid has an invocation per iteration of `op`: its
        static iteration count is at most the largest static written buffer, or
        each of its dimensions runs from a constant to at most the size of the
        same dimension of a memref it writes."""
        counts = [
            _trip_count(_constant(lb.owner), _constant(ub.owner), _constant(st.owner))
            for lb, ub, st in zip(op.lowerBound, op.upperBound, op.step, strict=True)
        ]
        sizes = [self.arguments[m].count for m in writes if m in self.arguments]
        if None not in counts and sizes and None not in sizes:
            return math.prod(counts) <= max(sizes)
        steps_ok = all(
            _constant(lb.owner) is not None and (_constant(st.owner) or 0) >= 1
            for lb, st in zip(op.lowerBound, op.step, strict=True)
        )
        return steps_ok and any(
            m in self.arguments
            and len(self.arguments[m].shape) == len(counts)
            and all(
                _at_most_dim(ub, m, d, self.arguments[m].shape[d])
                for d, ub in enumerate(op.upperBound)
            )
            for m in writes
        )

    # ------------------------------------------------------------------ gpu

    def emit_launch(self, em: ProgramEmitter, launch: Operation) -> None:
        """`gpu.launch_func`: the kernel's threads (grid × block) are the
        iterations of a 6-D parallel nest, mapped onto invocations like any
        other (`parallel_indices`)."""
        kernel = kernel_of(self.func.parent_op(), launch)
        block = kernel.body.block
        for kernel_arg, host in zip(block.args, launch.kernelOperands, strict=True):
            if isinstance(kernel_arg.type, MemRefType):
                self.arguments[kernel_arg] = self.arguments[host]
            else:
                em.values[kernel_arg] = self.value(em, host)
        grid = self.values(em, (launch.gridSizeX, launch.gridSizeY, launch.gridSizeZ))
        sizes = self.values(em, (launch.blockSizeX, launch.blockSizeY, launch.blockSizeZ))
        extents = [grid[2], grid[1], grid[0], sizes[2], sizes[1], sizes[0]]
        writes = [self._host(launch, m) for m in written_memrefs(kernel)]
        counts = [_constant(v.owner) for v in (*launch.operands[:6],)]
        static = [self.arguments[m].count for m in writes]
        covered = None not in counts and bool(static) and None not in static
        covered = covered and math.prod(counts) <= max(static)
        with self.parallel_indices(em, extents, writes, covered) as ks:
            self._launch_ids = {
                "gpu.block_id": ks[2::-1],
                "gpu.thread_id": ks[5:2:-1],
                "gpu.grid_dim": grid,
                "gpu.block_dim": sizes,
            }
            self.emit_block(em, block)

    def _host(self, launch: Operation, kernel_memref: SSAValue) -> SSAValue:
        """The host memref a kernel's memref argument is bound to."""
        kernel = kernel_memref.owner.parent_op()
        position = kernel.body.block.args.index(kernel_memref)
        return launch.kernelOperands[position]

    def gpu_id(self, em: ProgramEmitter, op: Operation) -> SSAValue:
        axis = "xyz".index(str(op.dimension.data.value))
        ids = self._launch_ids
        if op.name == "gpu.global_id":
            base = em.op("mul", ids["gpu.block_id"][axis], ids["gpu.block_dim"][axis])
            return em.op("add", base, ids["gpu.thread_id"][axis])
        return ids[op.name][axis]

    # ------------------------------------------------------------------ linalg

    def emit_generic(self, em: ProgramEmitter, op: Operation, top: bool) -> None:
        """`linalg.generic` on memrefs: the parallel iterators map onto
        invocations (at the top level) or loops, the reduction iterators run as
        loops inside, innermost."""
        maps = [m.data for m in op.indexing_maps]
        kinds = [str(it.data) for it in op.iterator_types]
        try:
            sources = op.get_loop_bound_sources()
        except Exception:  # noqa: BLE001 - xDSL asserts on maps it cannot invert
            raise fail(
                op, "the loop bounds of this linalg op cannot be derived from its operand shapes"
            ) from None
        extents = [
            em.const(size, ui32) if size >= 0 else self.dim_size(em, operand, d)
            for operand, d, size in sources
        ]
        parallel = [d for d, kind in enumerate(kinds) if kind == "parallel"]
        reduction = [d for d, kind in enumerate(kinds) if kind != "parallel"]

        def body(ivs: dict[int, SSAValue]) -> None:
            ordered = [ivs[d] for d in range(len(kinds))]
            self._generic_body(em, op, maps, ordered)

        def inner(par_ks: list[SSAValue]) -> None:
            ivs = dict(zip(parallel, par_ks, strict=True))

            def reduce(red_ks: list[SSAValue]) -> None:
                body({**ivs, **dict(zip(reduction, red_ks, strict=True))})

            self._nest(em, [extents[d] for d in reduction], reduce)

        if top and parallel:
            writes = list(op.outputs)
            covered = any(
                _is_permutation_of(maps[len(op.inputs) + i], parallel)
                for i in range(len(op.outputs))
            )
            static = None
            if not self._elementwise_generic(op, maps, kinds, sources):
                static = [sources[d][2] if sources[d][2] >= 0 else None for d in parallel]
            space = [extents[d] for d in parallel]
            with self.parallel_indices(em, space, writes, covered, static) as ks:
                inner(ks)
            return
        self._nest(em, [extents[d] for d in parallel], inner)

    def _elementwise_generic(self, op: Operation, maps, kinds: list[str], sources) -> bool:
        """Whether `linalg.generic` `op` is elementwise: only parallel iterators,
        and every memref operand of the iteration space's (static) shape read
        and written through the identity map (`_elementwise_scf`)."""
        if any(kind != "parallel" for kind in kinds):
            return False
        shape = tuple(size if size >= 0 else None for _, _, size in sources)
        for operand, affine_map in zip(op.operands, maps, strict=True):
            if not isinstance(operand.type, MemRefType):
                continue
            results = affine_map.results
            identity = [AffineDimExpr(d) for d in range(len(kinds))]
            arg = self.arguments.get(operand)
            if arg is None or arg.shape != shape or list(results) != identity:
                return False
        return not any(
            inner.name in ("memref.load", "memref.store", "linalg.generic")
            for inner in op.body.walk()
        )

    def _generic_body(self, em: ProgramEmitter, op: Operation, maps, ivs: list[SSAValue]) -> None:
        block = op.body.block
        for position, (operand, arg) in enumerate(zip(op.operands, block.args, strict=True)):
            if not isinstance(operand.type, MemRefType):
                em.values[arg] = self.value(em, operand)
                continue
            indices = [affine(em, expr, ivs) for expr in maps[position].results]
            em.values[arg] = self.load(em, operand, indices)
        for inner in block.ops:
            if inner.name == "linalg.index":
                em.values[inner.result] = ivs[inner.dim.value.data]
            elif inner.name == "linalg.yield":
                for i, (output, value) in enumerate(zip(op.outputs, inner.operands, strict=True)):
                    indices = [affine(em, expr, ivs) for expr in maps[len(op.inputs) + i].results]
                    self.store(em, output, indices, self.value(em, value))
            else:
                self.emit_op(em, inner)


def affine(
    em: ProgramEmitter, expr: AffineExpr, dims: list[SSAValue], checked: bool = False
) -> SSAValue:
    """`expr` (dims, constants of 0 … 2^32 - 1, +, *, mod, floordiv, ceildiv) on
    `ui32` values. The verifier keeps a map's results within its operands'
    shapes, so only what a `mod` or a division reduces may leave 32 bits: there
    (`checked`) `+` and `*` trap (tag `index`) instead of wrapping, as
    `arith.addi` and `arith.muli` on `index` do."""
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return em.const(expr.value, ui32)
    assert isinstance(expr, AffineBinaryOpExpr)  # symbols are refused by the checks
    reduces = expr.kind in (
        AffineBinaryOpKind.Mod,
        AffineBinaryOpKind.FloorDiv,
        AffineBinaryOpKind.CeilDiv,
    )
    lhs = affine(em, expr.lhs, dims, checked or reduces)
    rhs = affine(em, expr.rhs, dims, checked or reduces)
    match expr.kind:
        case AffineBinaryOpKind.Add:
            return index_arithmetic(em, "add", lhs, rhs) if checked else em.op("add", lhs, rhs)
        case AffineBinaryOpKind.Mul:
            return index_arithmetic(em, "mul", lhs, rhs) if checked else em.op("mul", lhs, rhs)
        case AffineBinaryOpKind.Mod:
            return em.op("mod", lhs, rhs)
        case AffineBinaryOpKind.FloorDiv:
            return em.op("div", lhs, rhs)
        case AffineBinaryOpKind.CeilDiv:  # q + (r != 0): no sum that could leave 32 bits
            q, r = em.op("div", lhs, rhs), em.op("mod", lhs, rhs)
            up = em.op("ne", r, em.const(0, ui32))
            return em.select(up, em.op("add", q, em.const(1, ui32)), q)


def _constant(op: Operation | Block) -> int | None:
    """The integer value of an `arith.constant`, else None."""
    if not isinstance(op, Operation) or op.name != "arith.constant":
        return None
    value = op.properties.get("value")
    data = getattr(getattr(value, "value", None), "data", None)
    return data if isinstance(data, int) else None


def _constant_value(value: SSAValue) -> int | None:
    """The value of a vyre integer constant, else None."""
    owner = value.owner
    if isinstance(owner, vyre.ConstOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _is_one(value: SSAValue) -> bool:
    """Whether `value` is the vyre integer constant 1."""
    owner = value.owner
    return (
        isinstance(owner, vyre.ConstOp)
        and isinstance(owner.value, IntegerAttr)
        and owner.value.value.data == 1
    )


def _trip_count(lb: int | None, ub: int | None, step: int | None) -> int | None:
    if lb is None or ub is None or not step:
        return None
    return max(0, -(-(ub - lb) // step))


#: the workgroup of a grid-axes mapping (x, y, z), by the number of axes
GRID_WORKGROUPS = {2: (16, 16, 1), 3: (8, 8, 4)}

#: the most workgroups an explicit grid may launch on one axis
GRID_AXIS_LIMIT = 65535


def grid_geometry(
    static: list[int | None],
) -> tuple[list[int], tuple[int, int, int], tuple[int, int, int]] | None:
    """The grid-axes mapping of an iteration space of `static` extents: the
    dimensions on axes x, y, z (innermost on x, for coalescing), the workgroup
    (`GRID_WORKGROUPS`, clipped to the extents) and the grid (ceil(extent /
    workgroup) per axis); None when the space is not 2-D or 3-D (dimensions of
    extent 1 aside), has an unknown or zero extent, or needs more than
    `GRID_AXIS_LIMIT` workgroups on an axis (then it is flattened)."""
    if any(e is None or e < 1 for e in static):
        return None
    dims = [d for d, e in enumerate(static) if e != 1][::-1]
    if len(dims) not in GRID_WORKGROUPS:
        return None
    base = GRID_WORKGROUPS[len(dims)]
    workgroup = [1, 1, 1]
    grid = [1, 1, 1]
    for a, d in enumerate(dims):
        workgroup[a] = min(base[a], static[d])
        grid[a] = -(-static[d] // workgroup[a])
    if max(grid) > GRID_AXIS_LIMIT:
        return None
    return dims, tuple(workgroup), tuple(grid)


def _at_most_dim(value: SSAValue, memref: SSAValue, d: int, static: int | None) -> bool:
    """Whether index `value` is provably at most dimension `d` of `memref`: that
    dimension (a constant or `memref.dim`), or it minus something (index
    subtraction traps rather than wrap)."""
    owner = value.owner
    if not isinstance(owner, Operation):
        return False
    if owner.name == "arith.subi":
        return _at_most_dim(owner.lhs, memref, d, static)
    if static is not None and _constant(owner) is not None:
        return _constant(owner) <= static
    return (
        owner.name == "memref.dim" and owner.source == memref and _constant(owner.index.owner) == d
    )


def _is_permutation_of(affine_map, dims: list[int]) -> bool:
    results = affine_map.results
    positions = [e.position for e in results if isinstance(e, AffineDimExpr)]
    return len(positions) == len(results) and sorted(positions) == sorted(dims)
