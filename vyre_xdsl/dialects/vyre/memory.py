"""Memory ops of the `vyre` dialect: named locals, buffer loads, stores and lengths."""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import AlwaysSpeculatable, Pure
from xdsl.utils.exceptions import VerifyException

from vyre_xdsl.dialects.syntax import LoadSyntax, StoreSyntax
from vyre_xdsl.dialects.traits import LoadLike, StoreLike
from vyre_xdsl.dialects.vyre.common import (
    ELEMENT_TYPES,
    BufferAddress,
    BufferReadEffect,
    BufferWriteEffect,
    DeclaresLocal,
    LocalReadEffect,
    LocalWriteEffect,
    _buffer_of,
    _parse_name,
    _print_attrs,
    _print_name,
    _require_element_type,
    _require_ui32_index,
    enclosing_body,
    find_local_declaration,
    ui32,
)

# ============================================================================ statements


class _NamedValueOp(IRDLOperation):
    """Shared parse/print of `vyre.let @v = %x : T` and `vyre.assign @v = %x : T`."""

    var_name = prop_def(StringAttr)
    value = operand_def()

    def __init__(self, var_name: str, value: SSAValue | Operation):
        super().__init__(operands=[value], properties={"var_name": StringAttr(var_name)})

    @classmethod
    def parse(cls, parser: Parser):
        name = _parse_name(parser)
        parser.parse_punctuation("=")
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        value = parser.resolve_operand(unresolved, parser.parse_type())
        op = cls(name.data, value)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_name(printer, self.var_name)
        printer.print_string(" = ")
        printer.print_operand(self.value)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        _print_attrs(printer, self)


@irdl_op_definition
class LetOp(_NamedValueOp):
    """Declares named local `v` in the current scope.

    Shadowing a visible name is an error.

    ```mlir
    %zero = vyre.const 0 : ui32
    vyre.let @acc = %zero : ui32
    ```
    """

    name = "vyre.let"
    traits = traits_def(DeclaresLocal())

    def verify_(self) -> None:
        _require_element_type(self.value.type, f"named local @{self.var_name.data}")
        if enclosing_body(self) is None:
            raise VerifyException("'vyre.let' must be inside a 'vyre.program' or a 'vyre.func'")
        previous = find_local_declaration(self, self.var_name.data)
        if previous is not None:
            raise VerifyException(
                f"named local @{self.var_name.data} is already declared in a visible scope; "
                "shadowing is not allowed"
            )


@irdl_op_definition
class AssignOp(_NamedValueOp):
    """Mutates the nearest visible named local.

    ```mlir
    vyre.assign @acc = %next : ui32
    ```
    """

    name = "vyre.assign"
    traits = traits_def(LocalWriteEffect())

    def verify_(self) -> None:
        from vyre_xdsl.dialects.vyre.control import LoopOp

        declaration = find_local_declaration(self, self.var_name.data)
        if declaration is None:
            raise VerifyException(f"assignment to undeclared named local @{self.var_name.data}")
        if isinstance(declaration, LoopOp):
            raise VerifyException(
                f"@{self.var_name.data} is a loop variable and cannot be assigned"
            )
        if declaration.value.type != self.value.type:
            raise VerifyException(
                f"@{self.var_name.data} has type {declaration.value.type}, "
                f"but a {self.value.type} is assigned"
            )


@irdl_op_definition
class VarOp(IRDLOperation):
    """Reads named local `v` (a `vyre.let` or a loop variable).

    ```mlir
    %a = vyre.var @acc : ui32
    ```
    """

    name = "vyre.var"
    var_name = prop_def(StringAttr)
    result = result_def()
    traits = traits_def(LocalReadEffect())

    def __init__(self, var_name: str, result_type: Attribute | str):
        if isinstance(result_type, str):
            result_type = ELEMENT_TYPES[result_type]
        super().__init__(properties={"var_name": StringAttr(var_name)}, result_types=[result_type])

    @classmethod
    def parse(cls, parser: Parser) -> VarOp:
        name = _parse_name(parser)
        parser.parse_punctuation(":")
        op = cls(name.data, parser.parse_type())
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_name(printer, self.var_name)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        from vyre_xdsl.dialects.vyre.control import LoopOp

        declaration = find_local_declaration(self, self.var_name.data)
        if declaration is None:
            raise VerifyException(f"read of undeclared named local @{self.var_name.data}")
        declared = ui32 if isinstance(declaration, LoopOp) else declaration.value.type
        if declared != self.result.type:
            raise VerifyException(
                f"@{self.var_name.data} has type {declared}, but is read as {self.result.type}"
            )


@irdl_op_definition
class StoreOp(BufferAddress, StoreSyntax, IRDLOperation):
    """Stores to a buffer element; an out-of-bounds store does nothing.

    ```mlir
    vyre.store @out[%i] = %v : f32
    ```
    """

    name = "vyre.store"
    buffer = prop_def(SymbolRefAttr)
    index = operand_def()
    value = operand_def()
    traits = traits_def(BufferWriteEffect(), StoreLike())

    def __init__(self, buffer: str, index: SSAValue | Operation, value: SSAValue | Operation):
        super().__init__(operands=[index, value], properties={"buffer": SymbolRefAttr(buffer)})

    @property
    def buffer_name(self) -> str:
        return self.buffer.root_reference.data

    def verify_(self) -> None:
        _require_ui32_index(self.index)
        buffer = _buffer_of(self, self.buffer_name)
        if buffer.access_mode in ("read_only", "uniform"):
            raise VerifyException(f"store to {buffer.access_mode} buffer @{self.buffer_name}")
        if buffer.element_type != self.value.type:
            raise VerifyException(
                f"buffer @{self.buffer_name} holds {buffer.element_type}, "
                f"but a {self.value.type} is stored"
            )


@irdl_op_definition
class LoadOp(BufferAddress, LoadSyntax, IRDLOperation):
    """Loads a buffer element; out of bounds gives the typed zero.

    ```mlir
    %v = vyre.load @x[%i] : f32
    ```
    """

    name = "vyre.load"
    buffer = prop_def(SymbolRefAttr)
    index = operand_def()
    result = result_def()
    traits = traits_def(BufferReadEffect(), AlwaysSpeculatable(), LoadLike())

    def __init__(self, buffer: str, index: SSAValue | Operation, result_type: Attribute | str):
        if isinstance(result_type, str):
            result_type = ELEMENT_TYPES[result_type]
        super().__init__(
            operands=[index],
            properties={"buffer": SymbolRefAttr(buffer)},
            result_types=[result_type],
        )

    @property
    def buffer_name(self) -> str:
        return self.buffer.root_reference.data

    def verify_(self) -> None:
        _require_ui32_index(self.index)
        buffer = _buffer_of(self, self.buffer_name)
        if buffer.element_type != self.result.type:
            raise VerifyException(
                f"buffer @{self.buffer_name} holds {buffer.element_type}, "
                f"but is loaded as {self.result.type}"
            )


@irdl_op_definition
class BufLenOp(IRDLOperation):
    """The element count of a buffer, as `ui32`.

    ```mlir
    %n = vyre.buf_len @x
    ```
    """

    name = "vyre.buf_len"
    buffer = prop_def(SymbolRefAttr)
    result = result_def(ui32)
    traits = traits_def(Pure())

    def __init__(self, buffer: str):
        super().__init__(properties={"buffer": SymbolRefAttr(buffer)}, result_types=[ui32])

    @property
    def buffer_name(self) -> str:
        return self.buffer.root_reference.data

    @classmethod
    def parse(cls, parser: Parser) -> BufLenOp:
        op = cls(parser.parse_symbol_name().data)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.buffer_name)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        _buffer_of(self, self.buffer_name)
