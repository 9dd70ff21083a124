"""Subgroup ops of the `vyre` dialect."""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from xdsl.dialects.builtin import StringAttr, i1
from xdsl.ir import Operation, SSAValue
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
from xdsl.traits import (
    ConditionallySpeculatable,
    EffectInstance,
    MemoryEffect,
    MemoryEffectKind,
    Pure,
    Resource,
)
from xdsl.utils.exceptions import VerifyException

from vyre_xdsl import semantics
from vyre_xdsl.dialects.vyre.common import _print_attrs, enclosing_program, type_name, ui32
from vyre_xdsl.dialects.vyre.control import (
    UNIFORM_VALUES,
    ReturnOp,
    _divergent_ancestor,
    is_workgroup_uniform,
)

# ============================================================================ subgroups


@dataclass(frozen=True)
class SubgroupResource(Resource):
    """The lanes of the invocation's subgroup: a collective reads every lane's operand."""

    def name(self) -> str:
        return "subgroup"


class SubgroupCollectiveEffect(MemoryEffect, ConditionallySpeculatable):
    """Reads and writes the `SubgroupResource`: a collective depends on which lanes run
    it, so it is never moved, merged or speculated (conservative; not dead-code either)."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance]:
        return frozenset(
            (
                EffectInstance(MemoryEffectKind.READ, resource=SubgroupResource()),
                EffectInstance(MemoryEffectKind.WRITE, resource=SubgroupResource()),
            )
        )

    @classmethod
    def is_speculatable(cls, op: Operation) -> bool:
        return False


def subgroup_geometry_problem(op: Operation) -> str | None:
    """Why the program around subgroup op `op` cannot have subgroups, else None."""
    program = enclosing_program(op)
    if program is None:
        return None
    sizes = list(program.workgroup_size.get_values())
    if sizes[1:] == [1, 1]:
        return None
    return (
        f"'{op.name}' needs a one-dimensional workgroup_size [X, 1, 1]; program "
        f"@{program.sym_name.data} has {sizes}, and how a GPU forms the "
        "subgroups of a multi-dimensional workgroup is not specified"
    )


def collective_problem(op: Operation, what: str) -> str | None:
    """Why `op` (a barrier-like collective) may not run where it is, else None: under
    invocation-dependent control flow, or after a `vyre.return` only some take."""
    if (divergent := _divergent_ancestor(op)) is not None:
        return (
            f"{what} under invocation-dependent control flow ('{divergent.name}' whose "
            "condition or bounds depend on the invocation); every invocation of the "
            f"workgroup must reach it (WGSL subgroup uniformity); {UNIFORM_VALUES}"
        )
    program = enclosing_program(op)
    if program is None:
        return None
    for earlier in program.walk():
        if earlier is op:
            break
        if isinstance(earlier, ReturnOp) and _divergent_ancestor(earlier) is not None:
            return f"{what} after a 'vyre.return' that only some invocations take"
    return None


class _SubgroupIdOp(IRDLOperation):
    """Shared parse/print of `%n = vyre.subgroup_size` and `vyre.subgroup_local_id`."""

    result = result_def(ui32)
    traits = traits_def(Pure())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[ui32])

    def verify_(self) -> None:
        if (problem := subgroup_geometry_problem(self)) is not None:
            raise VerifyException(problem)


@irdl_op_definition
class SubgroupSizeOp(_SubgroupIdOp):
    """The number of invocations in a subgroup (the same for the whole dispatch).

    ```mlir
    %n = vyre.subgroup_size
    ```
    """

    name = "vyre.subgroup_size"


@irdl_op_definition
class SubgroupLocalIdOp(_SubgroupIdOp):
    """The invocation's lane within its subgroup, `0 .. subgroup_size - 1`.

    ```mlir
    %l = vyre.subgroup_local_id
    ```
    """

    name = "vyre.subgroup_local_id"


class _SubgroupCollectiveOp(IRDLOperation):
    traits = traits_def(SubgroupCollectiveEffect())

    def verify_(self) -> None:
        problem = subgroup_geometry_problem(self) or collective_problem(self, f"'{self.name}'")
        if problem is not None:
            raise VerifyException(problem)


@irdl_op_definition
class SubgroupReduceOp(_SubgroupCollectiveOp):
    """Combines `%x` over all lanes of the subgroup; every lane gets the result.
    KIND: `add`, `mul`, `min`, `max` (ui32, si32, f32), `and`, `or`, `xor` (ui32, si32).

    ```mlir
    %r = vyre.subgroup_reduce add %x : f32
    ```
    """

    name = "vyre.subgroup_reduce"
    kind = prop_def(StringAttr)
    value = operand_def()
    result = result_def()

    def __init__(self, kind: str, value: SSAValue | Operation):
        value = SSAValue.get(value)
        super().__init__(
            operands=[value], properties={"kind": StringAttr(kind)}, result_types=[value.type]
        )

    @classmethod
    def parse(cls, parser: Parser) -> SubgroupReduceOp:
        kind = parser.parse_identifier(" (add, mul, min, max, and, or, xor)")
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        op = cls(kind, parser.resolve_operand(unresolved, parser.parse_type()))
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data} ")
        printer.print_operand(self.value)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        kind = self.kind.data
        if kind not in semantics.SUBGROUP_REDUCE:
            raise VerifyException(
                f"unknown subgroup reduction '{kind}'; expected one of {', '.join(semantics.SUBGROUP_REDUCE)}"
            )
        types = semantics.SUBGROUP_REDUCE[kind][0]
        if type_name(self.value.type) not in types:
            raise VerifyException(
                f"'vyre.subgroup_reduce {kind}' does not accept {self.value.type}; it takes {', '.join(types)}"
            )
        if self.result.type != self.value.type:
            raise VerifyException("the result type of 'vyre.subgroup_reduce' is its operand's")
        super().verify_()


class _SubgroupLaneOp(_SubgroupCollectiveOp):
    """Shared parse/print/verify of `%r = vyre.subgroup_shuffle %x, %lane : T`."""

    value = operand_def()
    lane = operand_def(ui32)
    result = result_def()

    def __init__(self, value: SSAValue | Operation, lane: SSAValue | Operation):
        value = SSAValue.get(value)
        super().__init__(operands=[value, lane], result_types=[value.type])

    @classmethod
    def parse(cls, parser: Parser):
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        lane = parser.parse_operand(ui32)
        parser.parse_punctuation(":")
        op = cls(parser.resolve_operand(unresolved, parser.parse_type()), lane)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(", ")
        printer.print_operand(self.lane)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        if type_name(self.value.type) not in semantics.SUBGROUP_VALUE_TYPES:
            raise VerifyException(
                f"'{self.name}' does not accept {self.value.type}; it takes "
                f"{', '.join(semantics.SUBGROUP_VALUE_TYPES)}"
            )
        if self.result.type != self.value.type:
            raise VerifyException(f"the result type of '{self.name}' is its operand's")
        super().verify_()


@irdl_op_definition
class SubgroupShuffleOp(_SubgroupLaneOp):
    """The value of `%x` in lane `%lane` of the subgroup (each lane may name another);
    a lane number past the subgroup gives 0 (upstream's rule).

    ```mlir
    %r = vyre.subgroup_shuffle %x, %lane : ui32
    ```
    """

    name = "vyre.subgroup_shuffle"


@irdl_op_definition
class SubgroupBroadcastOp(_SubgroupLaneOp):
    """The value of `%x` in lane `%lane`, the same lane for the whole workgroup (the
    verifier requires `%lane` to be workgroup-uniform); past the subgroup: 0.

    ```mlir
    %zero = vyre.const 0 : ui32
    %r = vyre.subgroup_broadcast %x, %zero : f32
    ```
    """

    name = "vyre.subgroup_broadcast"

    def verify_(self) -> None:
        super().verify_()
        if not is_workgroup_uniform(self.lane):
            raise VerifyException(
                "the lane of 'vyre.subgroup_broadcast' must be the same for every invocation "
                "(a constant, buf_len, workgroup id...); use 'vyre.subgroup_shuffle' for a per-lane source"
            )


@irdl_op_definition
class SubgroupBallotOp(_SubgroupCollectiveOp):
    """A `ui32` bitmask with bit k set when `%c` holds in lane k of the subgroup
    (lanes 0 to 31: upstream's result type).

    ```mlir
    %b = vyre.subgroup_ballot %c
    ```
    """

    name = "vyre.subgroup_ballot"
    cond = operand_def(i1)
    result = result_def(ui32)

    def __init__(self, cond: SSAValue | Operation):
        super().__init__(operands=[cond], result_types=[ui32])

    @classmethod
    def parse(cls, parser: Parser) -> SubgroupBallotOp:
        op = cls(parser.parse_operand(i1))
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.cond)
        _print_attrs(printer, self)


#: the subgroup ops (they need the GPU's subgroup feature)
SUBGROUP_OPS = (
    SubgroupSizeOp,
    SubgroupLocalIdOp,
    SubgroupReduceOp,
    SubgroupShuffleOp,
    SubgroupBroadcastOp,
    SubgroupBallotOp,
)


# ============================================================================ functions
