"""Arithmetic of the `vyre` dialect: constants, the semantics-table ops, select, fma and
conversions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, i1
from xdsl.interfaces import HasFolderInterface
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException

from vyre_xdsl import semantics
from vyre_xdsl.dialects.traits import TableLike
from vyre_xdsl.dialects.vyre.common import (
    ELEMENT_TYPES,
    SUPPORTED_TYPES,
    TableOpEffect,
    VyreCanonicalization,
    _print_attrs,
    _require_element_type,
    element_info,
    is_float_type,
    type_name,
    ui32,
)
from vyre_xdsl.semantics import OPS

# ============================================================================ expressions


def _bits_dtype(info: semantics.ElementType) -> np.dtype:
    """The unsigned integer dtype as wide as one value of float type `info`."""
    return np.dtype(f"uint{info.bits}")


def _format_float(value: float, tname: str = "f32") -> str:
    """A float literal of type `tname` that parses back to the same bits: the
    shortest decimal that does (`0.005`, not the f64 digits of the f32
    nearest to it), or the hex bit pattern for an infinity or a NaN."""
    info = semantics.ELEMENTS[tname]
    typed = np.array(value, dtype=info.dtype)
    bits = typed.view(_bits_dtype(info))
    if not np.isfinite(typed.astype(np.float64)):
        digits = info.bits // 4
        return f"0x{int(bits):0{digits}X}"
    exact = float(typed)
    for precision in range(1, 18):
        shortest = float(f"{exact:.{precision}g}")
        with np.errstate(over="ignore"):  # 4e+38 rounds to an f32 infinity: not it
            if np.array(shortest, dtype=info.dtype).view(_bits_dtype(info)) == bits:
                break
    text = repr(shortest)  # those digits, as Python writes a float (17 always suffice)
    mantissa, e, exponent = text.partition("e")
    if e and "." not in mantissa:  # an MLIR float literal needs the point: 1.0e+300
        text = f"{mantissa}.0e{exponent}"
    return text


@irdl_op_definition
class ConstOp(IRDLOperation, HasFolderInterface):
    """A literal. An f32 may be written as a hex bit pattern (`0x7FC00000 : f32`).

    A float of any width may be written as a hex bit pattern of its width
    (`0x7E00 : f16`).

    ```mlir
    %a = vyre.const 7 : ui32
    %b = vyre.const -3 : si32
    %c = vyre.const 1.5 : f32
    %d = vyre.const true : i1
    %e = vyre.const 255 : ui8
    %f = vyre.const 0.5 : bf16
    ```
    """

    name = "vyre.const"
    value = prop_def(IntegerAttr | FloatAttr)
    result = result_def()
    traits = traits_def(Pure(), ConstantLike())

    def __init__(
        self, value: int | float | bool | IntegerAttr | FloatAttr, ty: Attribute | str | None = None
    ):
        if isinstance(ty, str):
            ty = ELEMENT_TYPES[ty]
        if isinstance(value, IntegerAttr | FloatAttr):
            attr = value
            ty = value.type
        elif is_float_type(ty):
            info = element_info(ty)
            assert info is not None
            attr = FloatAttr(float(np.array(value, dtype=info.dtype)), ty)
        elif ty == i1:
            attr = IntegerAttr(-1 if value else 0, i1)
        else:
            assert ty is not None, "a type is needed for an integer constant"
            attr = IntegerAttr(int(value), ty)
        super().__init__(properties={"value": attr}, result_types=[ty])

    def literal(self) -> int | float | bool:
        """The value as a Python scalar (bool for i1)."""
        if isinstance(self.value, FloatAttr):
            return float(self.value.value.data)
        if self.result.type == i1:
            return self.value.value.data != 0
        return self.value.value.data

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        return (self.value,)

    @classmethod
    def parse(cls, parser: Parser) -> ConstOp:
        start = parser.pos
        boolean = parser.parse_optional_boolean()
        is_hex = parser._current_token.text.lower().startswith("0x")  # noqa: SLF001
        number = None if boolean is not None else parser.parse_number()
        end = parser.pos
        parser.parse_punctuation(":")
        type_start = parser.pos
        ty = parser.parse_type()
        info = element_info(ty)
        if info is None:
            parser.raise_error(
                f"unsupported element type {ty}; vyre supports {SUPPORTED_TYPES}",
                type_start,
                parser.pos,
            )
        if boolean is not None and ty != i1:
            parser.raise_error(f"'true'/'false' are i1 literals, not {ty}", start, end)
        if info.family == "vector":
            parser.raise_error(f"there are no {ty} literals", type_start, parser.pos)
        if boolean is not None:
            value: int | float | bool = boolean
        elif info.is_float:
            value = _parse_float(number, is_hex, info)
            if value is None:
                parser.raise_error(
                    f"hex literal out of range for a {info.name} bit pattern", start, end
                )
        else:
            if not isinstance(number, int):
                parser.raise_error(f"expected an integer literal for {ty}", start, end)
            lo, hi = info.int_range
            if not lo <= number <= hi:
                parser.raise_error(
                    f"literal {number} is out of range for {ty} [{lo}, {hi}]", start, end
                )
            value = number
        op = cls(value, ty)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        literal = self.literal()
        if isinstance(literal, bool):
            text = "true" if literal else "false"
        elif isinstance(literal, float):
            text = _format_float(literal, type_name(self.result.type) or "f32")
        else:
            text = str(literal)
        printer.print_string(f" {text} : ")
        printer.print_attribute(self.result.type)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        _require_element_type(self.result.type, "'vyre.const'")
        if self.value.type != self.result.type:
            raise VerifyException(
                f"literal type {self.value.type} differs from result type {self.result.type}"
            )


def _parse_float(number: int | float, is_hex: bool, info: semantics.ElementType) -> float | None:
    """A float literal: a decimal number, or a hex bit pattern of the type's width
    such as 0x7F800000 (f32) or 0x7C00 (f16)."""
    if not is_hex:
        return float(number)
    if not 0 <= number < 2**info.bits:
        return None
    return float(np.array(number, dtype=_bits_dtype(info)).view(info.dtype))


def _constant_array(value: SSAValue) -> np.ndarray | None:
    owner = value.owner
    if not isinstance(owner, ConstOp):
        return None
    tname = type_name(owner.result.type)
    return semantics.literal_array(owner.literal(), tname)


def _attribute_for(array: np.ndarray, ty: Attribute) -> Attribute:
    scalar = array.reshape(-1)[0]
    if is_float_type(ty):
        return FloatAttr(float(scalar), ty)
    if ty == i1:
        return IntegerAttr(-1 if bool(scalar) else 0, i1)
    return IntegerAttr(int(scalar), ty)


class _TableOp(IRDLOperation, HasFolderInterface):
    """An op whose meaning is the `semantics.OPS` entry named after it."""

    traits = traits_def(TableLike())

    @classmethod
    def semantics(cls) -> semantics.OpSemantics:
        return OPS[cls.name.removeprefix("vyre.")]

    def _check_operand_type(self, ty: Attribute) -> None:
        sem = self.semantics()
        tname = type_name(ty)
        if tname not in sem.types:
            raise VerifyException(
                f"'{self.name}' does not accept {ty}; it takes {', '.join(sem.types)}"
            )

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        sem = self.semantics()
        if sem.ulp and any(is_float_type(v.type) for v in self.operands):
            return None  # approximate on the GPU: leave it to the device
        args = [_constant_array(v) for v in self.operands]
        if any(a is None for a in args):
            return None
        if sem.traps is not None and (mask := sem.traps(*args)) is not None and mask.any():
            return None
        with np.errstate(all="ignore"):
            result = np.asarray(sem.evaluate(*args))
        return (_attribute_for(result, self.results[0].type),)


class BinaryOp(_TableOp):
    """`%r = vyre.OP %a, %b : T` with both operands and the result of type T."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    traits = traits_def(TableOpEffect(), VyreCanonicalization())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(operands=[lhs, rhs], result_types=[SSAValue.get(lhs).type])

    def verify_(self) -> None:
        self._check_operand_type(self.lhs.type)


class CompareOp(_TableOp):
    """`%r = vyre.OP %a, %b : T` comparing two T operands to an `i1`."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(i1)
    traits = traits_def(TableOpEffect(), VyreCanonicalization())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs)"

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(operands=[lhs, rhs], result_types=[i1])

    def verify_(self) -> None:
        self._check_operand_type(self.lhs.type)


class UnaryOp(_TableOp):
    """`%r = vyre.OP %a : T`."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    operand = operand_def(T)
    result = result_def(T)
    traits = traits_def(TableOpEffect(), VyreCanonicalization())
    assembly_format = "$operand attr-dict `:` type($result)"

    def __init__(self, operand: SSAValue | Operation):
        super().__init__(operands=[operand], result_types=[SSAValue.get(operand).type])

    def verify_(self) -> None:
        self._check_operand_type(self.operand.type)


class PredicateOp(_TableOp):
    """`%r = vyre.OP %a : T` giving an `i1`."""

    operand = operand_def()
    result = result_def(i1)
    traits = traits_def(TableOpEffect(), VyreCanonicalization())
    assembly_format = "$operand attr-dict `:` type($operand)"

    def __init__(self, operand: SSAValue | Operation):
        super().__init__(operands=[operand], result_types=[i1])

    def verify_(self) -> None:
        self._check_operand_type(self.operand.type)


class LogicOp(CompareOp):
    """`%r = vyre.OP %a, %b : T` combining the truth of two T operands (an `i1`, or
    a `ui32` that is true when non-zero) into an `i1`."""


class UnsignedResultBinaryOp(_TableOp):
    """`%r = vyre.OP %a, %b : T` whose result is a `ui32` whatever T is (upstream's
    result type of `abs_diff` and `mul_high`)."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(ui32)
    traits = traits_def(TableOpEffect(), VyreCanonicalization())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs)"

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(operands=[lhs, rhs], result_types=[ui32])

    def verify_(self) -> None:
        self._check_operand_type(self.lhs.type)


class UnsignedResultUnaryOp(_TableOp):
    """`%r = vyre.OP %a : T` whose result is a `ui32` whatever T is (upstream's
    `unpack*`)."""

    operand = operand_def()
    result = result_def(ui32)
    traits = traits_def(TableOpEffect(), VyreCanonicalization())
    assembly_format = "$operand attr-dict `:` type($operand)"

    def __init__(self, operand: SSAValue | Operation):
        super().__init__(operands=[operand], result_types=[ui32])

    def verify_(self) -> None:
        self._check_operand_type(self.operand.type)


# One class per entry of the semantics table. The class gives the op its name,
# its operand shape (the base class) and its documentation; the arithmetic rule is
# looked up in `semantics.OPS` by mnemonic, never written here.


@irdl_op_definition
class AddOp(BinaryOp):
    """Addition; `ui32` and `si32` wrap around.

    ```mlir
    %r = vyre.add %a, %b : ui32
    ```
    """

    name = "vyre.add"


@irdl_op_definition
class SubOp(BinaryOp):
    """Subtraction; `ui32` and `si32` wrap around.

    ```mlir
    %r = vyre.sub %a, %b : ui32
    ```
    """

    name = "vyre.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    """Multiplication; `ui32` and `si32` wrap around.

    ```mlir
    %r = vyre.mul %a, %b : ui32
    ```
    """

    name = "vyre.mul"


@irdl_op_definition
class DivOp(BinaryOp):
    """Division. `ui32` by 0 gives 4294967295; `si32` by 0, or INT_MIN by -1, traps
    (so the op is not pure on `si32`); `f32` division is IEEE, within 3 ULP on a GPU.

    ```mlir
    %r = vyre.div %a, %b : ui32
    ```
    """

    name = "vyre.div"


@irdl_op_definition
class ModOp(BinaryOp):
    """Truncated remainder (the sign of the dividend). `ui32` by 0 gives 0; `si32` by 0,
    or INT_MIN by -1, traps (so the op is not pure on `si32`).

    ```mlir
    %r = vyre.mod %a, %b : ui32
    ```
    """

    name = "vyre.mod"


@irdl_op_definition
class MinOp(BinaryOp):
    """The smaller operand; `f32`: a NaN operand gives the other one, min(-0, +0) is -0.

    ```mlir
    %r = vyre.min %a, %b : ui32
    ```
    """

    name = "vyre.min"


@irdl_op_definition
class MaxOp(BinaryOp):
    """The larger operand; `f32`: a NaN operand gives the other one, max(-0, +0) is +0.

    ```mlir
    %r = vyre.max %a, %b : ui32
    ```
    """

    name = "vyre.max"


@irdl_op_definition
class BitAndOp(BinaryOp):
    """Bitwise and.

    ```mlir
    %r = vyre.bit_and %a, %b : ui32
    ```
    """

    name = "vyre.bit_and"


@irdl_op_definition
class BitOrOp(BinaryOp):
    """Bitwise or.

    ```mlir
    %r = vyre.bit_or %a, %b : ui32
    ```
    """

    name = "vyre.bit_or"


@irdl_op_definition
class BitXorOp(BinaryOp):
    """Bitwise exclusive or.

    ```mlir
    %r = vyre.bit_xor %a, %b : ui32
    ```
    """

    name = "vyre.bit_xor"


@irdl_op_definition
class ShlOp(BinaryOp):
    """Shift left; the shift amount is masked to its low 5 bits.

    ```mlir
    %r = vyre.shl %a, %b : ui32
    ```
    """

    name = "vyre.shl"


@irdl_op_definition
class ShrOp(BinaryOp):
    """Shift right (arithmetic on `si32`, logical on `ui32`); the amount is masked to 5 bits.

    ```mlir
    %r = vyre.shr %a, %b : ui32
    ```
    """

    name = "vyre.shr"


@irdl_op_definition
class AbsDiffOp(UnsignedResultBinaryOp):
    """`|a - b|` without wrap-around, as a `ui32` (also for `si32` operands, where
    it is exact: the distance is below 2^32).

    ```mlir
    %r = vyre.abs_diff %a, %b : si32  // %r : ui32
    ```
    """

    name = "vyre.abs_diff"


@irdl_op_definition
class SaturatingAddOp(BinaryOp):
    """Addition clamped to 4294967295.

    ```mlir
    %r = vyre.saturating_add %a, %b : ui32
    ```
    """

    name = "vyre.saturating_add"


@irdl_op_definition
class SaturatingSubOp(BinaryOp):
    """Subtraction clamped to 0.

    ```mlir
    %r = vyre.saturating_sub %a, %b : ui32
    ```
    """

    name = "vyre.saturating_sub"


@irdl_op_definition
class MulHighOp(UnsignedResultBinaryOp):
    """The high 32 bits of the 64-bit product, as a `ui32`; `si32` operands
    multiply as signed numbers (the result holds the bits of the signed high word).

    ```mlir
    %r = vyre.mul_high %a, %b : si32  // %r : ui32
    ```
    """

    name = "vyre.mul_high"


@irdl_op_definition
class SaturatingMulOp(BinaryOp):
    """Multiplication clamped to 4294967295 (`ui32`, as upstream).

    ```mlir
    %r = vyre.saturating_mul %a, %b : ui32
    ```
    """

    name = "vyre.saturating_mul"


@irdl_op_definition
class RotateLeftOp(BinaryOp):
    """Rotate left by the low 5 bits of the amount.

    ```mlir
    %r = vyre.rotate_left %a, %b : ui32
    ```
    """

    name = "vyre.rotate_left"


@irdl_op_definition
class RotateRightOp(BinaryOp):
    """Rotate right by the low 5 bits of the amount.

    ```mlir
    %r = vyre.rotate_right %a, %b : ui32
    ```
    """

    name = "vyre.rotate_right"


@irdl_op_definition
class EqOp(CompareOp):
    """Equality (`f32`: IEEE, NaN is unequal to everything).

    ```mlir
    %r = vyre.eq %a, %b : ui32  // %r : i1
    ```
    """

    name = "vyre.eq"


@irdl_op_definition
class NeOp(CompareOp):
    """Inequality (`f32`: IEEE, true when an operand is NaN).

    ```mlir
    %r = vyre.ne %a, %b : ui32  // %r : i1
    ```
    """

    name = "vyre.ne"


@irdl_op_definition
class LtOp(CompareOp):
    """Less than (`f32`: false when an operand is NaN).

    ```mlir
    %r = vyre.lt %a, %b : ui32  // %r : i1
    ```
    """

    name = "vyre.lt"


@irdl_op_definition
class LeOp(CompareOp):
    """Less than or equal (`f32`: false when an operand is NaN).

    ```mlir
    %r = vyre.le %a, %b : ui32  // %r : i1
    ```
    """

    name = "vyre.le"


@irdl_op_definition
class GtOp(CompareOp):
    """Greater than (`f32`: false when an operand is NaN).

    ```mlir
    %r = vyre.gt %a, %b : ui32  // %r : i1
    ```
    """

    name = "vyre.gt"


@irdl_op_definition
class GeOp(CompareOp):
    """Greater than or equal (`f32`: false when an operand is NaN).

    ```mlir
    %r = vyre.ge %a, %b : ui32  // %r : i1
    ```
    """

    name = "vyre.ge"


@irdl_op_definition
class AndOp(LogicOp):
    """Logical and of two `i1`, or of the truth of two `ui32` (non-zero is true).

    ```mlir
    %r = vyre.and %a, %b : i1
    %t = vyre.and %x, %y : ui32  // %t : i1
    ```
    """

    name = "vyre.and"


@irdl_op_definition
class OrOp(LogicOp):
    """Logical or of two `i1`, or of the truth of two `ui32` (non-zero is true).

    ```mlir
    %r = vyre.or %a, %b : i1
    %t = vyre.or %x, %y : ui32  // %t : i1
    ```
    """

    name = "vyre.or"


@irdl_op_definition
class NotOp(PredicateOp):
    """Logical not of an `i1`, or whether a `ui32` is zero (upstream's truthiness).

    ```mlir
    %r = vyre.not %a : i1
    %z = vyre.not %x : ui32  // %z : i1
    ```
    """

    name = "vyre.not"


@irdl_op_definition
class NegOp(UnaryOp):
    """Negation; `si32` wraps (neg INT_MIN is INT_MIN).

    ```mlir
    %r = vyre.neg %a : si32
    ```
    """

    name = "vyre.neg"


@irdl_op_definition
class BitNotOp(UnaryOp):
    """Bitwise complement.

    ```mlir
    %r = vyre.bit_not %a : ui32
    ```
    """

    name = "vyre.bit_not"


@irdl_op_definition
class PopcountOp(UnaryOp):
    """The number of one bits.

    ```mlir
    %r = vyre.popcount %a : ui32
    ```
    """

    name = "vyre.popcount"


@irdl_op_definition
class ClzOp(UnaryOp):
    """The number of leading zero bits (32 for 0).

    ```mlir
    %r = vyre.clz %a : ui32
    ```
    """

    name = "vyre.clz"


@irdl_op_definition
class CtzOp(UnaryOp):
    """The number of trailing zero bits (32 for 0).

    ```mlir
    %r = vyre.ctz %a : ui32
    ```
    """

    name = "vyre.ctz"


@irdl_op_definition
class ReverseBitsOp(UnaryOp):
    """The 32 bits in reverse order.

    ```mlir
    %r = vyre.reverse_bits %a : ui32
    ```
    """

    name = "vyre.reverse_bits"


@irdl_op_definition
class AbsOp(UnaryOp):
    """Absolute value; `si32` wraps (abs INT_MIN is INT_MIN).

    ```mlir
    %r = vyre.abs %a : ui32
    ```
    """

    name = "vyre.abs"


@irdl_op_definition
class SignOp(UnaryOp):
    """-1, 0 or 1 (`f32`: NaN stays NaN).

    ```mlir
    %r = vyre.sign %a : si32
    ```
    """

    name = "vyre.sign"


@irdl_op_definition
class SqrtOp(UnaryOp):
    """Square root (within 3 ULP on a GPU).

    ```mlir
    %r = vyre.sqrt %a : f32
    ```
    """

    name = "vyre.sqrt"


@irdl_op_definition
class InverseSqrtOp(UnaryOp):
    """`1 / sqrt(a)` (within 3 ULP on a GPU).

    ```mlir
    %r = vyre.inverse_sqrt %a : f32
    ```
    """

    name = "vyre.inverse_sqrt"


@irdl_op_definition
class FloorOp(UnaryOp):
    """Round toward negative infinity.

    ```mlir
    %r = vyre.floor %a : f32
    ```
    """

    name = "vyre.floor"


@irdl_op_definition
class CeilOp(UnaryOp):
    """Round toward positive infinity.

    ```mlir
    %r = vyre.ceil %a : f32
    ```
    """

    name = "vyre.ceil"


@irdl_op_definition
class RoundOp(UnaryOp):
    """Round to nearest, ties to even.

    ```mlir
    %r = vyre.round %a : f32
    ```
    """

    name = "vyre.round"


@irdl_op_definition
class TruncOp(UnaryOp):
    """Round toward zero.

    ```mlir
    %r = vyre.trunc %a : f32
    ```
    """

    name = "vyre.trunc"


@irdl_op_definition
class ExpOp(UnaryOp):
    """`e^a` (approximate on a GPU: 64 ULP).

    ```mlir
    %r = vyre.exp %a : f32
    ```
    """

    name = "vyre.exp"


@irdl_op_definition
class Exp2Op(UnaryOp):
    """`2^a` (approximate on a GPU: 64 ULP).

    ```mlir
    %r = vyre.exp2 %a : f32
    ```
    """

    name = "vyre.exp2"


@irdl_op_definition
class LogOp(UnaryOp):
    """Natural logarithm (approximate on a GPU: 16 ULP).

    ```mlir
    %r = vyre.log %a : f32
    ```
    """

    name = "vyre.log"


@irdl_op_definition
class Log2Op(UnaryOp):
    """Base-2 logarithm (approximate on a GPU: 16 ULP).

    ```mlir
    %r = vyre.log2 %a : f32
    ```
    """

    name = "vyre.log2"


@irdl_op_definition
class SinOp(UnaryOp):
    """Sine (approximate on a GPU; see the semantics table for its budget).

    ```mlir
    %r = vyre.sin %a : f32
    ```
    """

    name = "vyre.sin"


@irdl_op_definition
class CosOp(UnaryOp):
    """Cosine (approximate on a GPU; see the semantics table for its budget).

    ```mlir
    %r = vyre.cos %a : f32
    ```
    """

    name = "vyre.cos"


@irdl_op_definition
class TanOp(UnaryOp):
    """Tangent (approximate on a GPU; see the semantics table for its budget).

    ```mlir
    %r = vyre.tan %a : f32
    ```
    """

    name = "vyre.tan"


@irdl_op_definition
class TanhOp(UnaryOp):
    """Hyperbolic tangent (approximate on a GPU; see the semantics table for its budget).

    ```mlir
    %r = vyre.tanh %a : f32
    ```
    """

    name = "vyre.tanh"


@irdl_op_definition
class ReciprocalOp(UnaryOp):
    """`1 / a` (within 3 ULP on a GPU).

    ```mlir
    %r = vyre.reciprocal %a : f32
    ```
    """

    name = "vyre.reciprocal"


@irdl_op_definition
class AcosOp(UnaryOp):
    """Arc cosine (NaN outside [-1, 1]; WGSL's accuracy is inherited from `atan2`).

    ```mlir
    %r = vyre.acos %a : f32
    ```
    """

    name = "vyre.acos"


@irdl_op_definition
class AsinOp(UnaryOp):
    """Arc sine (NaN outside [-1, 1]; WGSL's accuracy is inherited from `atan2`).

    ```mlir
    %r = vyre.asin %a : f32
    ```
    """

    name = "vyre.asin"


@irdl_op_definition
class AtanOp(UnaryOp):
    """Arc tangent (within 4096 ULP on a GPU).

    ```mlir
    %r = vyre.atan %a : f32
    ```
    """

    name = "vyre.atan"


@irdl_op_definition
class SinhOp(UnaryOp):
    """Hyperbolic sine (WGSL: as accurate as `(exp(a) - exp(-a)) * 0.5`).

    ```mlir
    %r = vyre.sinh %a : f32
    ```
    """

    name = "vyre.sinh"


@irdl_op_definition
class CoshOp(UnaryOp):
    """Hyperbolic cosine (WGSL: as accurate as `(exp(a) + exp(-a)) * 0.5`).

    ```mlir
    %r = vyre.cosh %a : f32
    ```
    """

    name = "vyre.cosh"


@irdl_op_definition
class Unpack4LowOp(UnsignedResultUnaryOp):
    """The low nibble of a 32-bit integer, `a & 0xF`, as a `ui32`.

    ```mlir
    %r = vyre.unpack4_low %a : ui32
    ```
    """

    name = "vyre.unpack4_low"


@irdl_op_definition
class Unpack4HighOp(UnsignedResultUnaryOp):
    """The second nibble of a 32-bit integer, `(a >> 4) & 0xF`, as a `ui32`
    (upstream's definition: bits 4..7, not the top nibble).

    ```mlir
    %r = vyre.unpack4_high %a : si32  // %r : ui32
    ```
    """

    name = "vyre.unpack4_high"


@irdl_op_definition
class Unpack8LowOp(UnsignedResultUnaryOp):
    """The low byte of a 32-bit integer, `a & 0xFF`, as a `ui32`.

    ```mlir
    %r = vyre.unpack8_low %a : ui32
    ```
    """

    name = "vyre.unpack8_low"


@irdl_op_definition
class Unpack8HighOp(UnsignedResultUnaryOp):
    """The high byte of a 32-bit integer, `(a >> 24) & 0xFF`, as a `ui32`.

    ```mlir
    %r = vyre.unpack8_high %a : si32  // %r : ui32
    ```
    """

    name = "vyre.unpack8_high"


@irdl_op_definition
class IsNanOp(PredicateOp):
    """Whether the operand is a NaN.

    ```mlir
    %r = vyre.is_nan %a : f32  // %r : i1
    ```
    """

    name = "vyre.is_nan"


@irdl_op_definition
class IsInfOp(PredicateOp):
    """Whether the operand is an infinity.

    ```mlir
    %r = vyre.is_inf %a : f32  // %r : i1
    ```
    """

    name = "vyre.is_inf"


@irdl_op_definition
class IsFiniteOp(PredicateOp):
    """Whether the operand is neither NaN nor an infinity.

    ```mlir
    %r = vyre.is_finite %a : f32  // %r : i1
    ```
    """

    name = "vyre.is_finite"


#: every op whose meaning is an entry of the semantics table, in table order
_TABLE_OP_CLASSES: tuple[type[_TableOp], ...] = (
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    ModOp,
    MinOp,
    MaxOp,
    BitAndOp,
    BitOrOp,
    BitXorOp,
    ShlOp,
    ShrOp,
    AbsDiffOp,
    SaturatingAddOp,
    SaturatingSubOp,
    SaturatingMulOp,
    MulHighOp,
    RotateLeftOp,
    RotateRightOp,
    EqOp,
    NeOp,
    LtOp,
    LeOp,
    GtOp,
    GeOp,
    AndOp,
    OrOp,
    NotOp,
    NegOp,
    BitNotOp,
    PopcountOp,
    ClzOp,
    CtzOp,
    ReverseBitsOp,
    AbsOp,
    SignOp,
    SqrtOp,
    InverseSqrtOp,
    FloorOp,
    CeilOp,
    RoundOp,
    TruncOp,
    ExpOp,
    Exp2Op,
    LogOp,
    Log2Op,
    SinOp,
    CosOp,
    TanOp,
    TanhOp,
    ReciprocalOp,
    AcosOp,
    AsinOp,
    AtanOp,
    SinhOp,
    CoshOp,
    Unpack4LowOp,
    Unpack4HighOp,
    Unpack8LowOp,
    Unpack8HighOp,
    IsNanOp,
    IsInfOp,
    IsFiniteOp,
)

#: mnemonic -> op class, one per entry of the semantics table
TABLE_OPS: dict[str, type[_TableOp]] = {
    cls.name.removeprefix("vyre."): cls for cls in _TABLE_OP_CLASSES
}


@irdl_op_definition
class SelectOp(IRDLOperation):
    """Picks `%a` where the condition holds, else `%b`.

    ```mlir
    %r = vyre.select %c, %a, %b : f32
    ```
    """

    name = "vyre.select"
    T: ClassVar = VarConstraint("T", AnyAttr())
    cond = operand_def(i1)
    true_value = operand_def(T)
    false_value = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure(), VyreCanonicalization())
    assembly_format = "$cond `,` $true_value `,` $false_value attr-dict `:` type($result)"

    def __init__(self, cond, true_value, false_value):
        super().__init__(
            operands=[cond, true_value, false_value],
            result_types=[SSAValue.get(true_value).type],
        )

    def verify_(self) -> None:
        _require_element_type(self.result.type, "'vyre.select'")


@irdl_op_definition
class FmaOp(IRDLOperation):
    """Fused multiply-add `a * b + c`, rounded once, on a float type (f16, bf16,
    f32, f64).

    ```mlir
    %r = vyre.fma %a, %b, %c : f32
    %h = vyre.fma %x, %y, %z : f16
    ```
    """

    name = "vyre.fma"
    T: ClassVar = VarConstraint("T", AnyAttr())
    a = operand_def(T)
    b = operand_def(T)
    c = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$a `,` $b `,` $c attr-dict `:` type($result)"

    def __init__(self, a, b, c):
        super().__init__(operands=[a, b, c], result_types=[SSAValue.get(a).type])

    def verify_(self) -> None:
        if not is_float_type(self.result.type):
            raise VerifyException(
                f"'vyre.fma' takes a float type (f16, bf16, f32, f64), not {self.result.type}"
            )


class _ConversionOp(IRDLOperation):
    """Shared parse/print of `%r = vyre.cast %x : si32 to f32`."""

    input = operand_def()
    result = result_def()
    traits = traits_def(Pure(), VyreCanonicalization())
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, value: SSAValue | Operation, target: Attribute | str):
        if isinstance(target, str):
            target = ELEMENT_TYPES[target]
        super().__init__(operands=[value], result_types=[target])

    @property
    def source_name(self) -> str:
        return type_name(self.input.type) or str(self.input.type)

    @property
    def target_name(self) -> str:
        return type_name(self.result.type) or str(self.result.type)


@irdl_op_definition
class CastOp(_ConversionOp):
    """Numeric conversion between any two scalar element types.

    A float to an integer truncates toward zero and saturates (NaN gives 0);
    integer to integer is two's complement (truncate to the target width,
    sign-extend a signed source, zero-extend an unsigned one); to i1 is `!= 0`;
    from i1 is 0 or 1; to a float rounds to nearest even.

    ```mlir
    %r = vyre.cast %x : si32 to f32
    %b = vyre.cast %w : ui32 to ui8
    ```
    """

    name = "vyre.cast"

    def verify_(self) -> None:
        pair = (type_name(self.input.type), type_name(self.result.type))
        if pair not in semantics.CAST_PAIRS:
            raise VerifyException(
                f"no cast from {self.input.type} to {self.result.type}; casts are between "
                "scalar element types (a vector is reinterpreted with 'vyre.bitcast')"
            )


@irdl_op_definition
class BitcastOp(_ConversionOp):
    """Reinterprets the bits of a value as another type of the same width
    (not i1): `f32`/`ui32`/`si32`, `f16`/`bf16`/`ui16`/`si16`, `ui8`/`si8`,
    `f64`/`ui64`/`si64`/`vector<2xui32>`, `vector<4xui32>`/`vector<4xf32>`.

    ```mlir
    %bits = vyre.bitcast %x : f32 to ui32
    ```
    """

    name = "vyre.bitcast"

    def verify_(self) -> None:
        for ty in (self.input.type, self.result.type):
            _require_element_type(ty, "'vyre.bitcast'")
        pair = (type_name(self.input.type), type_name(self.result.type))
        if pair not in semantics.BITCAST_PAIRS:
            raise VerifyException(
                f"no bitcast from {self.input.type} to {self.result.type}: a bitcast is "
                "between two non-i1 types of the same width"
            )
