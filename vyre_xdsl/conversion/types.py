"""How standard MLIR types map to vyre element types.

| MLIR | vyre |
| --- | --- |
| `index` | `ui32` (a value that does not fit is a trap where it is made) |
| `i1` | `i1` |
| `i8` `i16` `i32` `i64` (signless) and `si8` … `si64` | `si8` … `si64` (an `arith` op that treats them as unsigned reinterprets the bits) |
| `ui8` … `ui64` | `ui8` … `ui64` |
| `f16` `bf16` `f32` `f64` | the same |
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute

from vyre_xdsl.dialects.vyre import ELEMENT_TYPES

FLOATS = {Float16Type: "f16", BFloat16Type: "bf16", Float32Type: "f32", Float64Type: "f64"}


def vyre_type_name(ty: Attribute) -> str | None:
    """The vyre element type name for MLIR scalar type `ty`, or None."""
    if isinstance(ty, IndexType):
        return "ui32"
    if type(ty) in FLOATS:
        return FLOATS[type(ty)]
    if not isinstance(ty, IntegerType):
        return None
    width = ty.width.data
    if width == 1:
        return "i1"
    if width not in (8, 16, 32, 64):
        return None
    prefix = "ui" if ty.signedness.data == Signedness.UNSIGNED else "si"
    return f"{prefix}{width}"


def vyre_type(ty: Attribute) -> Attribute | None:
    """The vyre element type for MLIR scalar type `ty`, or None."""
    name = vyre_type_name(ty)
    return None if name is None else ELEMENT_TYPES[name]


def unsigned_of(ty: Attribute) -> Attribute:
    """The unsigned integer type as wide as integer type `ty`."""
    name = vyre_type_name(ty) or ""
    return ELEMENT_TYPES["ui" + name[2:]] if name[:2] in ("si", "ui") else ty


def signed_of(ty: Attribute) -> Attribute:
    """The signed integer type as wide as integer type `ty`."""
    name = vyre_type_name(ty) or ""
    return ELEMENT_TYPES["si" + name[2:]] if name[:2] in ("si", "ui") else ty


def bit_width(ty: Attribute) -> int:
    """The width in bits of integer type `ty` (`ui32` for index)."""
    name = vyre_type_name(ty) or ""
    return int(name[2:]) if name[:2] in ("si", "ui") else 1
