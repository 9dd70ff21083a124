"""Vector construction and lane extraction of the `vyre` dialect."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IntegerAttr, i32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from vyre_xdsl import semantics
from vyre_xdsl.dialects.vyre.common import (
    ELEMENT_TYPES,
    _print_attrs,
    element_info,
)

# ============================================================================ vectors


def _vector_info(ty: Attribute, what: str) -> semantics.ElementType:
    info = element_info(ty)
    if info is None or info.family != "vector":
        names = ", ".join(n for n, t in semantics.ELEMENTS.items() if t.family == "vector")
        raise VerifyException(f"'{what}' builds or reads a vector type ({names}), not {ty}")
    return info


@irdl_op_definition
class FromElementsOp(IRDLOperation):
    """A vector from its lanes, in order (lane 0 first); each operand has the
    lane type.

    ```mlir
    %v = vyre.from_elements %lo, %hi : vector<2xui32>
    %q = vyre.from_elements %a, %b, %c, %d : vector<4xf32>
    ```
    """

    name = "vyre.from_elements"
    elements = var_operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, elements: Sequence[SSAValue | Operation], ty: Attribute | str):
        if isinstance(ty, str):
            ty = ELEMENT_TYPES[ty]
        super().__init__(operands=[list(elements)], result_types=[ty])

    @classmethod
    def parse(cls, parser: Parser) -> FromElementsOp:
        unresolved = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, parser.parse_unresolved_operand
        )
        parser.parse_punctuation(":")
        start = parser.pos
        ty = parser.parse_type()
        info = element_info(ty)
        if info is None or info.family != "vector":
            parser.raise_error(f"'vyre.from_elements' builds a vector type, not {ty}", start)
        lane = ELEMENT_TYPES[info.lane]
        op = cls([parser.resolve_operand(u, lane) for u in unresolved], ty)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.elements, printer.print_operand)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        info = _vector_info(self.result.type, self.name)
        if len(self.elements) != info.lanes:
            raise VerifyException(
                f"'vyre.from_elements' needs {info.lanes} lanes for {info.name}, got {len(self.elements)}"
            )
        lane = ELEMENT_TYPES[info.lane]
        for index, element in enumerate(self.elements):
            if element.type != lane:
                raise VerifyException(
                    f"lane {index} of 'vyre.from_elements' is a {element.type}; {info.name} has {info.lane} lanes"
                )


@irdl_op_definition
class ExtractOp(IRDLOperation):
    """Lane `LANE` (a constant, from 0) of a vector, as the lane type.

    ```mlir
    %hi = vyre.extract %v[1] : vector<2xui32>
    ```
    """

    name = "vyre.extract"
    vector = operand_def()
    lane = prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, vector: SSAValue | Operation, lane: int):
        ty = SSAValue.get(vector).type
        info = element_info(ty)
        lane_type = ELEMENT_TYPES[info.lane] if info is not None and info.lane else ty
        super().__init__(
            operands=[vector],
            properties={"lane": IntegerAttr(lane, i32)},
            result_types=[lane_type],
        )

    @property
    def lane_index(self) -> int:
        return self.lane.value.data

    @classmethod
    def parse(cls, parser: Parser) -> ExtractOp:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        start = parser.pos
        lane = parser.parse_integer()
        parser.parse_punctuation("]")
        parser.parse_punctuation(":")
        type_start = parser.pos
        ty = parser.parse_type()
        info = element_info(ty)
        if info is None or info.family != "vector":
            parser.raise_error(f"'vyre.extract' reads a vector type, not {ty}", type_start)
        if not 0 <= lane < info.lanes:
            parser.raise_error(
                f"lane {lane} is out of range for {info.name} (0 to {info.lanes - 1})", start
            )
        op = cls(parser.resolve_operand(unresolved, ty), lane)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.vector)
        printer.print_string(f"[{self.lane_index}] : ")
        printer.print_attribute(self.vector.type)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        info = _vector_info(self.vector.type, self.name)
        if not 0 <= self.lane_index < info.lanes:
            raise VerifyException(
                f"lane {self.lane_index} is out of range for {info.name} (0 to {info.lanes - 1})"
            )
        if self.result.type != ELEMENT_TYPES[info.lane]:
            raise VerifyException(f"'vyre.extract' of {info.name} gives a {info.lane}")
