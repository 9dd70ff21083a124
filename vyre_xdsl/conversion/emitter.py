"""`ProgramEmitter`: appends vyre ops to one `vyre.program` while a standard-MLIR
function is converted (see `vyre_xdsl.conversion`).

It keeps the insertion point (a stack of blocks), a prelude for values computed
once at the top of the program, the buffers the program declares, fresh names
for named locals, and the source location that every emitted op carries (so
that a verifier error on converted IR points at the MLIR line it came from).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from vyre_xdsl.dialects import vyre
from vyre_xdsl.dialects.vyre import ELEMENT_TYPES, TABLE_OPS

ui32 = ELEMENT_TYPES["ui32"]
i1 = ELEMENT_TYPES["i1"]

#: the workgroup size of a converted program on the derived 1-D grid
WORKGROUP_SIZE = (64, 1, 1)


@dataclass
class BufferUse:
    """How one program uses one buffer."""

    access: str
    element: Attribute
    count: int | None
    binding: int


class ProgramEmitter:
    """Builds one `vyre.program` op by op."""

    def __init__(self, name: str):
        self.name = name
        self.body = Block()
        self.prelude = Block()
        self._blocks: list[Block] = [self.body]
        self.values: dict[SSAValue, SSAValue] = {}
        #: counters of a flattened iteration space -> (the flat index, the extents)
        self.flattened: dict[tuple[SSAValue, ...], tuple[SSAValue, list[SSAValue]]] = {}
        self.buffers: dict[str, BufferUse] = {}
        #: the launch geometry: `workgroup_size`, and an explicit `grid` (None:
        #: derived from the written buffers), set by a grid-axes mapping
        self.workgroup_size: tuple[int, int, int] = WORKGROUP_SIZE
        self.grid: tuple[int, int, int] | None = None
        self.location: Attribute | None = None
        #: the source op being converted (for errors)
        self.location_op: Operation | None = None
        self._counter = 0

    # ------------------------------------------------------------------ plumbing

    def add(self, op: Operation) -> Operation:
        """Append `op` at the insertion point, located at the current source op."""
        if self.location is not None:
            op.location = self.location
        self._blocks[-1].add_op(op)
        return op

    def value_of(self, op: Operation) -> SSAValue:
        return self.add(op).results[0]

    @contextmanager
    def inside(self, region: Region) -> Iterator[None]:
        """Emit into `region` (given a block if it has none)."""
        if not region.blocks:
            region.add_block(Block())
        self._blocks.append(region.block)
        try:
            yield
        finally:
            self._blocks.pop()

    @contextmanager
    def at_prelude(self) -> Iterator[None]:
        """Emit at the top of the program, where every later op sees the value."""
        saved = self._blocks
        self._blocks = [self.prelude]
        try:
            yield
        finally:
            self._blocks = saved

    def fresh(self, prefix: str) -> str:
        """A named-local name no other local of this program has."""
        self._counter += 1
        return f"{prefix}{self._counter}"

    def use_buffer(self, name: str, use: BufferUse) -> None:
        """Declare `name` (once); a write upgrades a read-only use to read_write."""
        known = self.buffers.get(name)
        if known is None:
            self.buffers[name] = use
        elif use.access == "read_write":
            known.access = "read_write"

    def build(self) -> vyre.ProgramOp:
        """The program: buffer declarations, then the prelude, then the body."""
        ops: list[Operation] = [
            vyre.BufferOp(name, use.access, use.element, use.count, use.binding)
            for name, use in sorted(self.buffers.items(), key=lambda item: item[1].binding)
        ]
        for block in (self.prelude, self.body):
            for op in list(block.ops):
                op.detach()
                ops.append(op)
        return vyre.ProgramOp(self.name, self.workgroup_size, ops, grid=self.grid)

    # ------------------------------------------------------------------ ops

    def const(self, value: int | float | bool, ty: Attribute) -> SSAValue:
        return self.value_of(vyre.ConstOp(value, ty))

    def zero(self, ty: Attribute) -> SSAValue:
        """The typed zero (`false` for `i1`)."""
        if ty == i1:
            return self.const(False, ty)
        if vyre.is_float_type(ty):
            return self.const(0.0, ty)
        return self.const(0, ty)

    def op(self, mnemonic: str, *operands: SSAValue) -> SSAValue:
        """A pure op of the semantics table: `em.op("add", a, b)`."""
        return self.value_of(TABLE_OPS[mnemonic](*operands))

    def cast(self, value: SSAValue, ty: Attribute) -> SSAValue:
        if value.type == ty:
            return value
        return self.value_of(vyre.CastOp(value, ty))

    def bitcast(self, value: SSAValue, ty: Attribute) -> SSAValue:
        if value.type == ty:
            return value
        return self.value_of(vyre.BitcastOp(value, ty))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.value_of(vyre.SelectOp(cond, a, b))

    def fma(self, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
        return self.value_of(vyre.FmaOp(a, b, c))

    def load(self, buffer: str, index: SSAValue, ty: Attribute) -> SSAValue:
        return self.value_of(vyre.LoadOp(buffer, index, ty))

    def store(self, buffer: str, index: SSAValue, value: SSAValue) -> None:
        self.add(vyre.StoreOp(buffer, index, value))

    def buf_len(self, buffer: str) -> SSAValue:
        return self.value_of(vyre.BufLenOp(buffer))

    def invocation_id(self, axis: str = "x") -> SSAValue:
        return self.value_of(vyre.InvocationIdOp(axis))

    def let(self, name: str, value: SSAValue) -> None:
        self.add(vyre.LetOp(name, value))

    def assign(self, name: str, value: SSAValue) -> None:
        self.add(vyre.AssignOp(name, value))

    def var(self, name: str, ty: Attribute) -> SSAValue:
        return self.value_of(vyre.VarOp(name, ty))

    def trap(self, address: SSAValue, tag: str) -> None:
        self.add(vyre.TrapOp(address, tag))

    @contextmanager
    def if_(self, cond: SSAValue) -> Iterator[vyre.IfOp]:
        op = vyre.IfOp(cond)
        self.add(op)
        with self.inside(op.then_region):
            yield op

    @contextmanager
    def else_of(self, op: vyre.IfOp) -> Iterator[None]:
        with self.inside(op.else_region):
            yield

    @contextmanager
    def loop(self, lower: SSAValue, upper: SSAValue, prefix: str = "k") -> Iterator[SSAValue]:
        """`vyre.loop` from `lower` to `upper`; yields the loop variable's value."""
        name = self.fresh(prefix)
        op = vyre.LoopOp(name, lower, upper)
        self.add(op)
        with self.inside(op.body):
            yield self.var(name, ui32)
