"""Atomic read-modify-write of the `vyre` dialect."""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr, SymbolRefAttr
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.utils.exceptions import VerifyException

from vyre_xdsl.dialects.syntax import AtomicSyntax
from vyre_xdsl.dialects.vyre.common import BufferAddress, BufferReadWriteEffect, _buffer_of, ui32


@irdl_op_definition
class AtomicOp(BufferAddress, AtomicSyntax, IRDLOperation):
    """Atomic read-modify-write on a writable `ui32` buffer (global or workgroup);
    returns the old value.

    OP is `add or and xor min max exchange fetch_nand` (`~(old & v)`), or
    `compare_exchange`/`compare_exchange_weak` with an expected value (the weak
    one may fail spuriously on a GPU). An optional memory ordering follows OP:
    `relaxed acquire release acq_rel seq_cst` (default `seq_cst`, upstream's);
    WGSL can only honour relaxed atomicity (see docs/wgsl.md).

    ```mlir
    %old = vyre.atomic add @counter[%zero], %one : ui32
    %prev = vyre.atomic compare_exchange @lock[%i], %expected, %new : ui32
    %bits = vyre.atomic fetch_nand relaxed @flags[%i], %mask : ui32
    ```
    """

    name = "vyre.atomic"
    kind = prop_def(StringAttr)
    #: upstream's memory ordering; absent means `seq_cst` (the default)
    ordering = opt_prop_def(StringAttr)
    buffer = prop_def(SymbolRefAttr)
    index = operand_def(ui32)
    expected = opt_operand_def(ui32)
    value = operand_def(ui32)
    result = result_def(ui32)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(BufferReadWriteEffect())

    def __init__(
        self,
        kind: str,
        buffer: str,
        index: SSAValue | Operation,
        value: SSAValue | Operation,
        expected: SSAValue | Operation | None = None,
        ordering: str | None = None,
    ):
        super().__init__(
            operands=[index, [] if expected is None else [expected], value],
            properties={"kind": StringAttr(kind), "buffer": SymbolRefAttr(buffer)},
            result_types=[ui32],
        )
        if ordering is not None:
            self.properties["ordering"] = StringAttr(ordering)

    @property
    def buffer_name(self) -> str:
        return self.buffer.root_reference.data

    def verify_(self) -> None:
        self.verify_kind_and_ordering()
        buffer = _buffer_of(self, self.buffer_name)
        if buffer.element_type != ui32:
            raise VerifyException(
                f"atomics need a ui32 buffer; @{self.buffer_name} holds {buffer.element_type}"
            )
        if buffer.access_mode not in ("read_write", "write_only", "workgroup"):
            raise VerifyException(
                "atomics need a writable buffer (read_write, write_only or workgroup); "
                f"@{self.buffer_name} is {buffer.access_mode}"
            )
