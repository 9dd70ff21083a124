"""The `kernel` dialect's ids, locals and structured control flow (`kernel.invocation_id`,
`kernel.local`, `kernel.if`, `kernel.for`, `kernel.barrier`, ...). Importing
`vyre_xdsl.dialects.kernel` gives every op; this module is where these are defined.
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from vyre_xdsl.dialects.kernel import (
    DescriptorOp,
    _element,
    _print_attrs,
    _print_body,
    _require_element_type,
)
from vyre_xdsl.dialects.syntax import (
    BarrierOpBase,
    BlockOpBase,
    IdOpBase,
    IfOpBase,
    RegionOpBase,
    ScopeOpBase,
    TrapOpBase,
)
from vyre_xdsl.dialects.vyre import ui32

# ============================================================================ ids


class _IdOp(IdOpBase):
    pass


@irdl_op_definition
class InvocationIdOp(_IdOp):
    """The program's global invocation id on one axis (in the program's declared geometry).

    ```mlir
    %g = kernel.invocation_id x
    ```
    """

    name = "kernel.invocation_id"


@irdl_op_definition
class WorkgroupIdOp(_IdOp):
    """The program's workgroup id on one axis (the logical workgroup on x, 0 on y and z).

    ```mlir
    %w = kernel.workgroup_id x
    ```
    """

    name = "kernel.workgroup_id"


@irdl_op_definition
class LocalIdOp(_IdOp):
    """The program's invocation id within its workgroup on one axis.

    ```mlir
    %l = kernel.local_id x
    ```
    """

    name = "kernel.local_id"


@irdl_op_definition
class NumWorkgroupsOp(_IdOp):
    """The number of workgroups the dispatch launches on one axis (the program's
    explicit, derived or indirect grid; lowering keeps that grid as launched).

    ```mlir
    %n = kernel.num_workgroups y
    ```
    """

    name = "kernel.num_workgroups"


# ============================================================================ locals


class _LocalValueOp(IRDLOperation):
    var_name = prop_def(StringAttr)
    value = operand_def()

    def __init__(self, var_name: str, value: SSAValue | Operation):
        super().__init__(operands=[value], properties={"var_name": StringAttr(var_name)})

    @property
    def local_name(self) -> str:
        return self.var_name.data

    @classmethod
    def parse(cls, parser: Parser):
        name = parser.parse_symbol_name().data
        parser.parse_punctuation("=")
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        value = parser.resolve_operand(unresolved, parser.parse_type())
        op = cls(name, value)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.local_name)
        printer.print_string(" = ")
        printer.print_operand(self.value)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        _print_attrs(printer, self)


@irdl_op_definition
class LocalOp(_LocalValueOp):
    """Declares a function-local variable (a vyre named local) in the current scope,
    initialised with a value. It is visible to the ops after it in this block and in
    their nested regions.

    ```mlir
    kernel.local @acc = %zero : f32
    ```
    """

    name = "kernel.local"
    traits = traits_def(MemoryWriteEffect())

    def verify_(self) -> None:
        _require_element_type(self.value.type, f"local @{self.local_name}")


def find_local(op: Operation, name: str) -> LocalOp | None:
    """The `kernel.local` named `name` visible at `op`."""
    current: Operation = op
    while True:
        sibling = current.prev_op
        while sibling is not None:
            if isinstance(sibling, LocalOp) and sibling.local_name == name:
                return sibling
            sibling = sibling.prev_op
        parent = current.parent_op()
        if parent is None or isinstance(parent, DescriptorOp):
            return None
        current = parent


@irdl_op_definition
class LocalStoreOp(_LocalValueOp):
    """Assigns a function-local variable.

    ```mlir
    kernel.local_store @acc = %s : f32
    ```
    """

    name = "kernel.local_store"
    traits = traits_def(MemoryWriteEffect())


@irdl_op_definition
class LocalLoadOp(IRDLOperation):
    """Reads a function-local variable.

    ```mlir
    %a = kernel.local_load @acc : f32
    ```
    """

    name = "kernel.local_load"
    var_name = prop_def(StringAttr)
    result = result_def()
    traits = traits_def(MemoryReadEffect())

    def __init__(self, var_name: str, result_type: Attribute | str):
        super().__init__(
            properties={"var_name": StringAttr(var_name)}, result_types=[_element(result_type)]
        )

    @property
    def local_name(self) -> str:
        return self.var_name.data

    @classmethod
    def parse(cls, parser: Parser) -> LocalLoadOp:
        name = parser.parse_symbol_name().data
        parser.parse_punctuation(":")
        op = cls(name, parser.parse_type())
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.local_name)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)
        _print_attrs(printer, self)


# ============================================================================ structure


class _ScopeOp(ScopeOpBase):
    traits = traits_def(RecursiveMemoryEffect())


@irdl_op_definition
class IfOp(IfOpBase):
    """Structured conditional; each branch is a scope.

    ```mlir
    kernel.if %c {
      kernel.store_global slot 1 [%i] = %a : ui32
    } else {
      kernel.store_global slot 1 [%i] = %b : ui32
    }
    ```
    """

    name = "kernel.if"
    traits = traits_def(RecursiveMemoryEffect())


@irdl_op_definition
class ForOp(_ScopeOp):
    """Half-open counted loop with step 1; the bounds are evaluated once. The body's
    block argument is the induction value (`ui32`); each iteration is a fresh scope.

    ```mlir
    kernel.for %k = %lo to %hi {
      %v = kernel.load_constant slot 0 [%k] : f32
    }
    ```
    """

    name = "kernel.for"
    lower = operand_def(ui32)
    upper = operand_def(ui32)
    body = region_def("single_block")

    def __init__(
        self,
        lower: SSAValue | Operation,
        upper: SSAValue | Operation,
        body: Region | None = None,
    ):
        if body is None:
            body = Region(Block(arg_types=[ui32]))
        super().__init__(operands=[lower, upper], regions=[body])

    @property
    def induction(self) -> SSAValue:
        return self.body.block.args[0]

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        argument = parser.parse_argument(expect_type=False).resolve(ui32)
        parser.parse_punctuation("=")
        lower = parser.parse_operand(ui32)
        parser.parse_keyword("to")
        upper = parser.parse_operand(ui32)
        body = parser.parse_region([argument])
        op = cls(lower, upper, body)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_block_argument(self.induction, print_type=False)
        printer.print_string(" = ")
        printer.print_operand(self.lower)
        printer.print_string(" to ")
        printer.print_operand(self.upper)
        _print_body(printer, self.body)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        args = self.body.block.args
        if len(args) != 1 or args[0].type != ui32:
            raise VerifyException("the body of 'kernel.for' takes one ui32 induction value")


@irdl_op_definition
class BlockOp(BlockOpBase):
    """A scope.

    ```mlir
    kernel.block {
      kernel.local @t = %x : f32
    }
    ```
    """

    name = "kernel.block"
    traits = traits_def(RecursiveMemoryEffect())


@irdl_op_definition
class RegionOp(RegionOpBase):
    """A scope carrying provenance (the generator that produced it).

    ```mlir
    kernel.region "vyre.fuse.arm0" {
      kernel.store_global slot 1 [%i] = %v : f32
    }
    ```
    """

    name = "kernel.region"
    traits = traits_def(RecursiveMemoryEffect())


@irdl_op_definition
class BarrierOp(BarrierOpBase):
    """Workgroup barrier (memory and execution). `grid_sync` never reaches the
    kernel level: lowering splits the dispatch there.

    ```mlir
    kernel.barrier
    kernel.barrier acq_rel
    ```
    """

    name = "kernel.barrier"

    def verify_(self) -> None:
        super().verify_()
        if self.ordering.data == "grid_sync":
            raise VerifyException(
                "'grid_sync' cannot appear in a kernel; vyre-lower splits the dispatch there"
            )


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """Ends this invocation.

    ```mlir
    kernel.return
    ```
    """

    name = "kernel.return"
    traits = traits_def(MemoryWriteEffect())
    assembly_format = "attr-dict"


@irdl_op_definition
class TrapOp(TrapOpBase):
    """Records (tag, address, invocation) in the trap sidecar and ends the invocation.

    ```mlir
    kernel.trap %addr "bad_index"
    ```
    """

    name = "kernel.trap"
