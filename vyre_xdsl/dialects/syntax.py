"""Syntax and op bases shared by the `vyre` and `kernel` dialects.

Both dialects spell ids, barriers, traps, attribute dictionaries and nested
bodies the same way; the ops subclass these bases and add only their name,
docstring and verifier.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import IntegerAttr, IntegerType, Signedness, StringAttr, i1, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation, operand_def, prop_def, region_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryWriteEffect, NoTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from vyre_xdsl import semantics
from vyre_xdsl.dialects.traits import IdLike

ui32 = IntegerType(32, Signedness.UNSIGNED)
AXES = ("x", "y", "z")
BARRIER_ORDERINGS = ("seq_cst", "acquire", "release", "acq_rel", "grid_sync")


def print_attrs(printer: Printer, op: Operation) -> None:
    """The op's attribute dictionary, if any, after a space."""
    if op.attributes:
        printer.print_string(" ")
        printer.print_attr_dict(op.attributes)


def parse_body(parser: Parser, arguments: Sequence[Parser.Argument] | None = None) -> Region:
    """A `{ ... }` body; an empty one still gets its (single) block."""
    region = parser.parse_region(arguments)
    if not region.blocks:
        region.add_block(Block())
    return region


def print_body(printer: Printer, region: Region) -> None:
    printer.print_string(" ")
    printer.print_region(region, print_entry_block_args=False, print_empty_block=False)


def as_region(body: Region | Sequence[Operation] | None) -> Region:
    """`body` as a single-block region (a list of ops becomes its block)."""
    if isinstance(body, Region):
        return body
    return Region(Block(list(body or [])))


#: the largest value a 32-bit signed (`i32`) and 64-bit signed (`i64`) property holds
I32_MAX = 2**31 - 1
I64_MAX = 2**63 - 1
#: element counts index with `ui32`: at most 2^32 - 1 elements
MAX_ELEMENT_COUNT = 2**32 - 1


def parse_int_in(parser: Parser, what: str, low: int, high: int, limit: str | None = None) -> int:
    """An integer literal in [low, high] (the range its property can hold); one
    outside is a located error naming `what` and `limit` (default: the range)."""
    pos = parser.pos
    value = parser.parse_integer(allow_negative=low < 0)
    if not low <= value <= high:
        parser.raise_error(
            f"{what} {value} is out of range; {limit or f'it must be between {low} and {high}'}",
            pos,
            parser.pos,
        )
    return value


def parse_int_list_in(
    parser: Parser, what: str, low: int, high: int, limit: str | None = None
) -> list[int]:
    """`[a, b, ...]` of integers in [low, high] (see `parse_int_in`)."""
    return parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: parse_int_in(parser, what, low, high, limit)
    )


def parse_int_triple_in(
    parser: Parser, what: str, low: int, high: int, limit: str | None = None
) -> list[int]:
    """`[x, y, z]`: exactly three integers in [low, high]; another count is a
    located error at the list."""
    start = parser.pos
    values = parse_int_list_in(parser, what, low, high, limit)
    if len(values) != 3:
        parser.raise_error(
            f"{what} needs exactly 3 values [X, Y, Z], got {len(values)}", start, parser.pos
        )
    return values


def count_problem(count: int | None, what: str) -> str | None:
    """Why a static element count is invalid, or None."""
    if count is None:
        return None
    if count < 0:
        return f"element count of {what} must be >= 0"
    if count > MAX_ELEMENT_COUNT:
        return (
            f"element count {count} of {what} is too large; indices are ui32, so at most "
            f"{MAX_ELEMENT_COUNT} (2^32 - 1) elements"
        )
    return None


def parse_attrs_into(parser: Parser, op: Operation) -> Operation:
    op.attributes.update(parser.parse_optional_attr_dict())
    return op


class IdOpBase(IRDLOperation):
    """`%g = <dialect>.invocation_id x`: an id on one axis, as `ui32`."""

    axis = prop_def(IntegerAttr)
    result = result_def(ui32)
    traits = traits_def(Pure(), IdLike())

    def __init__(self, axis: int | str):
        if isinstance(axis, str):
            axis = AXES.index(axis)
        super().__init__(properties={"axis": IntegerAttr(axis, i64)}, result_types=[ui32])

    @property
    def axis_index(self) -> int:
        return self.axis.value.data

    @classmethod
    def parse(cls, parser: Parser):
        pos = parser.pos
        axis = parser.parse_identifier()
        if axis not in AXES:
            parser.raise_error("expected axis x, y or z", pos, parser.pos)
        return parse_attrs_into(parser, cls(axis))

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {AXES[self.axis_index]}")
        print_attrs(printer, self)

    def verify_(self) -> None:
        if self.axis_index not in (0, 1, 2):
            raise VerifyException(f"axis must be 0, 1 or 2 (x, y, z), got {self.axis_index}")


class MemoryOpSyntax:
    """The custom format of the memory ops, shared by `vyre` and `kernel`; only the
    address differs (`@buf[%i]` in `vyre`, `slot N [%i]` in `kernel`):

        load    ADDRESS : T
        store   ADDRESS = %v : T
        atomic  KIND [ORDERING] ADDRESS, [%expected,] %v : ui32

    each followed by the op's attribute dictionary, if any. An op lists one of
    `LoadSyntax`, `StoreSyntax`, `AtomicSyntax` before its IRDL base, and an
    address mixin before that, which gives:

    - `ADDRESS_SYNTAX`, the address as written in an error message;
    - `parse_address(parser) -> (address, index)`, `address` being what the op's
      constructor takes (a buffer name, a slot number);
    - `print_address(printer)`, with its leading space.

    The constructors take `(address, index, result_type)` (load),
    `(address, index, value)` (store) and
    `(kind, address, index, value, expected, ordering)` (atomic).
    """

    ADDRESS_SYNTAX: ClassVar[str] = "ADDRESS"


class LoadSyntax(MemoryOpSyntax):
    """`ADDRESS : T` (see `MemoryOpSyntax`)."""

    @classmethod
    def parse(cls, parser: Parser) -> Any:
        address, index = cls.parse_address(parser)
        parser.parse_punctuation(":")
        return parse_attrs_into(parser, cls(address, index, parser.parse_type()))

    def print(self, printer: Printer) -> None:
        op: Any = self
        op.print_address(printer)
        printer.print_string(" : ")
        printer.print_attribute(op.result.type)
        print_attrs(printer, op)


class StoreSyntax(MemoryOpSyntax):
    """`ADDRESS = %v : T` (see `MemoryOpSyntax`)."""

    @classmethod
    def parse(cls, parser: Parser) -> Any:
        address, index = cls.parse_address(parser)
        parser.parse_punctuation("=")
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        value = parser.resolve_operand(unresolved, parser.parse_type())
        return parse_attrs_into(parser, cls(address, index, value))

    def print(self, printer: Printer) -> None:
        op: Any = self
        op.print_address(printer)
        printer.print_string(" = ")
        printer.print_operand(op.value)
        printer.print_string(" : ")
        printer.print_attribute(op.value.type)
        print_attrs(printer, op)


class AtomicSyntax(MemoryOpSyntax):
    """`KIND [ORDERING] ADDRESS, [%expected,] %v : ui32` (see `MemoryOpSyntax`);
    `%expected` is there for `compare_exchange` and `compare_exchange_weak` only."""

    @classmethod
    def parse(cls, parser: Parser) -> Any:
        pos = parser.pos
        kind = parser.parse_identifier()
        if kind not in semantics.ATOMIC_OPS:
            parser.raise_error(
                f"expected atomic op, one of {', '.join(semantics.ATOMIC_OPS)}", pos, parser.pos
            )
        ordering = None
        for candidate in semantics.ATOMIC_ORDERINGS:
            if parser.parse_optional_keyword(candidate) is not None:
                ordering = candidate
                break
        address, index = cls.parse_address(parser)
        parser.parse_punctuation(",")
        first = parser.parse_operand(ui32)
        expected = None
        if kind in semantics.COMPARE_EXCHANGE_OPS:
            if parser.parse_optional_punctuation(",") is None:
                name: str = cls.name
                parser.raise_error(
                    f"'{kind}' takes an expected value and a new value: "
                    f"{name} {kind} {cls.ADDRESS_SYNTAX}, %expected, %new : ui32"
                )
            expected, value = first, parser.parse_operand(ui32)
        else:
            value = first
        parser.parse_punctuation(":")
        ty = parser.parse_type()
        if ty != ui32:
            parser.raise_error(f"atomics operate on ui32, not {ty}")
        op = cls(kind, address, index, value, expected, ordering)
        return parse_attrs_into(parser, op)

    def print(self, printer: Printer) -> None:
        op: Any = self
        printer.print_string(f" {op.kind.data}")
        if op.ordering is not None:
            printer.print_string(f" {op.ordering.data}")
        op.print_address(printer)
        printer.print_string(", ")
        if op.expected is not None:
            printer.print_operand(op.expected)
            printer.print_string(", ")
        printer.print_operand(op.value)
        printer.print_string(" : ui32")
        print_attrs(printer, op)

    def verify_kind_and_ordering(self) -> None:
        """The checks of KIND and ORDERING that both dialects make."""
        op: Any = self
        if op.kind.data not in semantics.ATOMIC_OPS:
            raise VerifyException(f"unknown atomic op '{op.kind.data}'")
        if (op.kind.data in semantics.COMPARE_EXCHANGE_OPS) != (op.expected is not None):
            raise VerifyException(
                "'compare_exchange' and 'compare_exchange_weak' take an expected value, and only they"
            )
        if op.ordering is not None and op.ordering.data not in semantics.ATOMIC_ORDERINGS:
            raise VerifyException(
                f"unknown memory ordering '{op.ordering.data}'; expected one of "
                f"{', '.join(semantics.ATOMIC_ORDERINGS)}"
            )


class BarrierOpBase(IRDLOperation):
    """`<dialect>.barrier [ORDERING]` (`seq_cst` is the default and is not printed)."""

    ordering = prop_def(StringAttr)
    traits = traits_def(MemoryWriteEffect())

    def __init__(self, ordering: str = "seq_cst"):
        super().__init__(properties={"ordering": StringAttr(ordering)})

    @classmethod
    def parse(cls, parser: Parser):
        ordering = "seq_cst"
        for candidate in BARRIER_ORDERINGS:
            if parser.parse_optional_keyword(candidate) is not None:
                ordering = candidate
                break
        return parse_attrs_into(parser, cls(ordering))

    def print(self, printer: Printer) -> None:
        if self.ordering.data != "seq_cst":
            printer.print_string(f" {self.ordering.data}")
        print_attrs(printer, self)

    def verify_(self) -> None:
        if self.ordering.data not in BARRIER_ORDERINGS:
            raise VerifyException(f"unknown barrier ordering '{self.ordering.data}'")


class TrapOpBase(IRDLOperation):
    """`<dialect>.trap %addr "tag"`."""

    address = operand_def(ui32)
    tag = prop_def(StringAttr)
    traits = traits_def(MemoryWriteEffect())

    def __init__(self, address: SSAValue | Operation, tag: str):
        super().__init__(operands=[address], properties={"tag": StringAttr(tag)})

    @classmethod
    def parse(cls, parser: Parser):
        address = parser.parse_operand(ui32)
        return parse_attrs_into(parser, cls(address, parser.parse_str_literal()))

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.address)
        printer.print_string(" ")
        printer.print_string_literal(self.tag.data)
        print_attrs(printer, self)

    def verify_(self) -> None:
        if not self.tag.data:
            raise VerifyException("trap tag must not be empty")


class ScopeOpBase(IRDLOperation):
    """A structured op whose regions are scopes (no terminator).

    Each dialect states the effect trait of its scopes (the effects of the body,
    or less): xDSL unions the traits of a class with its bases', so a base
    cannot carry one that a subclass narrows.
    """

    traits = traits_def(NoTerminator())


class IfOpBase(ScopeOpBase):
    """`<dialect>.if %c { ... } [else { ... }]`; each branch is a scope."""

    cond = operand_def(i1)
    then_region = region_def("single_block")
    else_region = region_def()

    def __init__(
        self,
        cond: SSAValue | Operation,
        then_body: Region | Sequence[Operation] | None = None,
        else_body: Region | Sequence[Operation] | None = None,
    ):
        else_region = Region() if else_body is None else as_region(else_body)
        super().__init__(operands=[cond], regions=[as_region(then_body), else_region])

    @property
    def has_else(self) -> bool:
        return bool(self.else_region.blocks)

    @classmethod
    def parse(cls, parser: Parser):
        cond = parser.parse_operand(i1)
        then_region = parse_body(parser)
        else_region = None
        if parser.parse_optional_keyword("else") is not None:
            else_region = parse_body(parser)
        return parse_attrs_into(parser, cls(cond, then_region, else_region))

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.cond)
        print_body(printer, self.then_region)
        if self.has_else:
            printer.print_string(" else")
            print_body(printer, self.else_region)
        print_attrs(printer, self)

    def verify_(self) -> None:
        if len(self.else_region.blocks) > 1:
            raise VerifyException("'else' region must have at most one block")


class BlockOpBase(ScopeOpBase):
    """`<dialect>.block { ... }`: a scope."""

    body = region_def("single_block")

    def __init__(self, body: Region | Sequence[Operation] | None = None):
        super().__init__(regions=[as_region(body)])

    @classmethod
    def parse(cls, parser: Parser):
        return parse_attrs_into(parser, cls(parse_body(parser)))

    def print(self, printer: Printer) -> None:
        print_body(printer, self.body)
        print_attrs(printer, self)


class RegionOpBase(ScopeOpBase):
    """`<dialect>.region "generator" { ... }`: a scope that carries provenance."""

    generator = prop_def(StringAttr)
    body = region_def("single_block")

    def __init__(self, generator: str, body: Region | Sequence[Operation] | None = None):
        super().__init__(properties={"generator": StringAttr(generator)}, regions=[as_region(body)])

    @classmethod
    def parse(cls, parser: Parser):
        generator = parser.parse_str_literal()
        return parse_attrs_into(parser, cls(generator, parse_body(parser)))

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.generator.data)
        print_body(printer, self.body)
        print_attrs(printer, self)


def parse_shaped_type(parser: Parser) -> tuple[Attribute, int | None]:
    """`: T[COUNT]` of a buffer or binding; COUNT `?` (runtime-sized) gives None."""
    parser.parse_punctuation(":")
    element_type = parser.parse_type()
    parser.parse_punctuation("[")
    count = None
    if parser.parse_optional_punctuation("?") is None:
        count = parse_int_in(parser, "element count", 0, I64_MAX)
    parser.parse_punctuation("]")
    return element_type, count


def print_shaped_type(printer: Printer, element_type: Attribute, count: int | None) -> None:
    printer.print_string(" : ")
    printer.print_attribute(element_type)
    printer.print_string(f"[{'?' if count is None else count}]")
