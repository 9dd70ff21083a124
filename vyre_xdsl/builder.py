"""Build vyre programs from Python, without text.

The builder produces exactly the ops the parser produces, so a built program
prints as the text you would have written:

```python
from vyre_xdsl.builder import ProgramBuilder, module_of

b = ProgramBuilder("axpy", workgroup_size=(64, 1, 1))
b.buffer("x", "read_only", "f32", 1024, binding=0)
b.buffer("y", "read_write", "f32", 1024, binding=1)
i = b.invocation_id("x", name="i")
a = b.const(2.0, "f32", name="a")
s = b.add(b.mul(a, b.load("x", i)), b.load("y", i))
b.store("y", i, s)
with b.if_(b.lt(s, a)):
    b.store("y", i, a)
with b.else_():
    b.ret()
print(module_of([b.build()]))
```

Every pure op of the semantics table is a method named after it
(`b.add`, `b.popcount`, `b.is_nan`, ...); structured ops are context managers.
"""

from __future__ import annotations

import keyword
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from vyre_xdsl.dialects import vyre
from vyre_xdsl.dialects.vyre import ELEMENT_TYPES, TABLE_OPS

Value = SSAValue


def _type(ty: Attribute | str) -> Attribute:
    return ELEMENT_TYPES[ty] if isinstance(ty, str) else ty


class ProgramBuilder:
    """Builds one `vyre.program`, appending ops at the current insertion block."""

    def __init__(
        self,
        name: str,
        workgroup_size: Sequence[int] = (64, 1, 1),
        *,
        non_composable: bool = False,
        grid: Sequence[int] | None = None,
    ):
        """`grid`: the program's explicit grid (workgroups per axis), else derived."""
        self.program = vyre.ProgramOp(name, workgroup_size, grid=grid)
        if non_composable:
            from xdsl.dialects.builtin import UnitAttr

            self.program.attributes["non_composable"] = UnitAttr()
        self._blocks: list[Block] = [self.program.body.block]
        self._last_if: vyre.IfOp | None = None

    # ------------------------------------------------------------------ plumbing

    def insert(self, op: Operation, name: str | None = None) -> Operation:
        """Append `op` at the insertion point; name its single result `name`."""
        self._blocks[-1].add_op(op)
        if name is not None and op.results:
            op.results[0].name_hint = name
        if not isinstance(op, vyre.IfOp):
            self._last_if = None
        return op

    def _value(self, op: Operation, name: str | None) -> SSAValue:
        return self.insert(op, name).results[0]

    @contextmanager
    def _inside(self, region: Region) -> Iterator[None]:
        if not region.blocks:
            region.add_block(Block())
        self._blocks.append(region.block)
        try:
            yield
        finally:
            self._blocks.pop()

    def build(self) -> vyre.ProgramOp:
        """The finished program (verify it with `vyre_xdsl.diagnostics.verify_module`)."""
        return self.program

    # ------------------------------------------------------------------ structure

    def buffer(
        self,
        name: str,
        access: str,
        element: Attribute | str,
        count: int | None,
        *,
        binding: int | None = None,
        output: bool = False,
    ) -> str:
        """Declare a buffer; returns its name. Workgroup buffers take no binding."""
        self.insert(vyre.BufferOp(name, access, _type(element), count, binding, output))
        return name

    # ------------------------------------------------------------------ statements

    def let(self, var: str, value: SSAValue) -> None:
        self.insert(vyre.LetOp(var, value))

    def assign(self, var: str, value: SSAValue) -> None:
        self.insert(vyre.AssignOp(var, value))

    def var(self, var: str, ty: Attribute | str, name: str | None = None) -> SSAValue:
        return self._value(vyre.VarOp(var, _type(ty)), name)

    def store(self, buffer: str, index: SSAValue, value: SSAValue) -> None:
        self.insert(vyre.StoreOp(buffer, index, value))

    @contextmanager
    def if_(self, cond: SSAValue) -> Iterator[vyre.IfOp]:
        op = vyre.IfOp(cond)
        self.insert(op)
        with self._inside(op.then_region):
            yield op
        self._last_if = op

    @contextmanager
    def else_(self) -> Iterator[vyre.IfOp]:
        """The else branch of the `if_` built just before."""
        op = self._last_if
        if op is None:
            raise ValueError("else_() must directly follow an if_() block")
        with self._inside(op.else_region):
            yield op
        self._last_if = None

    @contextmanager
    def loop(self, var: str, lower: SSAValue, upper: SSAValue) -> Iterator[vyre.LoopOp]:
        op = vyre.LoopOp(var, lower, upper)
        self.insert(op)
        with self._inside(op.body):
            yield op

    @contextmanager
    def block(self) -> Iterator[vyre.BlockOp]:
        op = vyre.BlockOp()
        self.insert(op)
        with self._inside(op.body):
            yield op

    @contextmanager
    def region(self, generator: str) -> Iterator[vyre.RegionOp]:
        op = vyre.RegionOp(generator)
        self.insert(op)
        with self._inside(op.body):
            yield op

    def barrier(self, ordering: str = "seq_cst") -> None:
        self.insert(vyre.BarrierOp(ordering))

    def ret(self) -> None:
        self.insert(vyre.ReturnOp())

    def trap(self, address: SSAValue, tag: str) -> None:
        self.insert(vyre.TrapOp(address, tag))

    # ------------------------------------------------------------------ expressions

    def const(
        self, value: int | float | bool, ty: Attribute | str, name: str | None = None
    ) -> SSAValue:
        return self._value(vyre.ConstOp(value, _type(ty)), name)

    def load(
        self,
        buffer: str,
        index: SSAValue,
        ty: Attribute | str | None = None,
        name: str | None = None,
    ) -> SSAValue:
        """Load `buffer[index]`; the type defaults to the buffer's element type."""
        if ty is None:
            ty = self._buffer_type(buffer)
        return self._value(vyre.LoadOp(buffer, index, _type(ty)), name)

    def buf_len(self, buffer: str, name: str | None = None) -> SSAValue:
        return self._value(vyre.BufLenOp(buffer), name)

    def invocation_id(self, axis: str = "x", name: str | None = None) -> SSAValue:
        return self._value(vyre.InvocationIdOp(axis), name)

    def workgroup_id(self, axis: str = "x", name: str | None = None) -> SSAValue:
        return self._value(vyre.WorkgroupIdOp(axis), name)

    def local_id(self, axis: str = "x", name: str | None = None) -> SSAValue:
        return self._value(vyre.LocalIdOp(axis), name)

    def num_workgroups(self, axis: str = "x", name: str | None = None) -> SSAValue:
        return self._value(vyre.NumWorkgroupsOp(axis), name)

    def repetition(self, name: str | None = None) -> SSAValue:
        return self._value(vyre.RepetitionOp(), name)

    def op(self, mnemonic: str, *operands: SSAValue, name: str | None = None) -> SSAValue:
        """Any pure op of the semantics table by mnemonic: `b.op("add", x, y)`."""
        return self._value(TABLE_OPS[mnemonic](*operands), name)

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue, name: str | None = None) -> SSAValue:
        return self._value(vyre.SelectOp(cond, a, b), name)

    def fma(self, a: SSAValue, b: SSAValue, c: SSAValue, name: str | None = None) -> SSAValue:
        return self._value(vyre.FmaOp(a, b, c), name)

    def from_elements(
        self, lanes: list[SSAValue], ty: Attribute | str, name: str | None = None
    ) -> SSAValue:
        """A vector from its lanes: `b.from_elements([lo, hi], "vector<2xui32>")`."""
        return self._value(vyre.FromElementsOp(lanes, _type(ty)), name)

    def extract(self, vector: SSAValue, lane: int, name: str | None = None) -> SSAValue:
        """Lane `lane` of a vector: `b.extract(v, 1)`."""
        return self._value(vyre.ExtractOp(vector, lane), name)

    def cast(self, value: SSAValue, ty: Attribute | str, name: str | None = None) -> SSAValue:
        return self._value(vyre.CastOp(value, _type(ty)), name)

    def bitcast(self, value: SSAValue, ty: Attribute | str, name: str | None = None) -> SSAValue:
        return self._value(vyre.BitcastOp(value, _type(ty)), name)

    def atomic(
        self,
        kind: str,
        buffer: str,
        index: SSAValue,
        value: SSAValue,
        expected: SSAValue | None = None,
        name: str | None = None,
    ) -> SSAValue:
        return self._value(vyre.AtomicOp(kind, buffer, index, value, expected), name)

    def _buffer_type(self, buffer: str) -> Attribute:
        declared = self.program.buffer(buffer)
        if declared is None:
            raise ValueError(f"buffer @{buffer} is not declared in this program")
        return declared.element_type

    def __getattr__(self, mnemonic: str):
        # `and`, `or` and `not` are Python keywords: `b.and_(p, q)`, `b.or_`, `b.not_`
        if mnemonic.endswith("_") and keyword.iskeyword(mnemonic[:-1]):
            mnemonic = mnemonic[:-1]
        if mnemonic in TABLE_OPS:
            return lambda *operands, name=None: self.op(mnemonic, *operands, name=name)
        raise AttributeError(mnemonic)


def module_of(programs: Sequence[vyre.ProgramOp]) -> ModuleOp:
    """A module holding `programs` in program order."""
    return ModuleOp(list(programs))
