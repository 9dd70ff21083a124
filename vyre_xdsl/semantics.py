"""The one table of vyre op semantics.

Every pure `vyre` expression op has exactly one entry here. The entry says which
element types the op accepts, how to evaluate it on numpy arrays (the reference
interpreter and the constant folder use this), how to print it as a WGSL
expression (the WGSL printer uses this), and the ULP budget of approximate f32
ops (the conformance tests use this). Nothing else in the project re-states op
semantics: the interpreter, folder and printer all read this table.

Element types are named by their IR spelling: ``ui32``, ``si32``, ``f32``, ``i1``.

```python
from vyre_xdsl.semantics import OPS
OPS["add"].evaluate(np.array([1], np.uint32), np.array([2], np.uint32))  # -> [3]
OPS["add"].wgsl("u32", "a", "b")                                        # -> "(a + b)"
```
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

#: the name of numpy's bfloat16 dtype (from `ml_dtypes`)
BF16_NAME = "bfloat16"


@functools.cache
def bf16_dtype() -> np.dtype:
    """`ml_dtypes.bfloat16` as a numpy dtype, imported on first use: importing
    ml_dtypes takes most of a second, which every `vyre-opt` start would pay."""
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16)


def is_bf16(dtype) -> bool:
    """Whether `dtype` is bfloat16 (without importing ml_dtypes: an array can only
    have that dtype once ml_dtypes is imported)."""
    return np.dtype(dtype).name == BF16_NAME


_NUMPY_FLOATS = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64))


def is_float_dtype(dtype) -> bool:
    """Whether `dtype` is a float dtype of registers: f16, bf16, f32 or f64."""
    return np.dtype(dtype) in _NUMPY_FLOATS or is_bf16(dtype)


U32_MAX = 0xFFFFFFFF
I32_MIN = -(2**31)


@dataclass(frozen=True)
class ElementType:
    """One element type of the IR: everything the layers above need to know about it.

    ``family`` is ``uint``, ``sint``, ``float``, ``bool`` or ``vector``; ``bits`` is the
    width of one lane; a vector has ``lanes`` lanes of the element type ``lane``.
    ``dtype`` is the numpy dtype of a value in registers (of one lane, for a vector),
    ``host`` the numpy dtype of the host array of a buffer. ``wgsl`` and
    ``wgsl_storage`` are the WGSL types in registers and in a storage buffer; None
    means the WGSL backend cannot lower the type (yet), and it says so with a
    located error. ``wgsl_feature`` names the wgpu device feature the type needs.
    """

    name: str
    family: str
    bits: int
    dtype_spec: np.dtype | str  # a dtype, or BF16_NAME (resolved on first use)
    host_spec: np.dtype | str
    wgsl: str | None = None
    wgsl_storage: str | None = None
    wgsl_feature: str | None = None
    lanes: int = 1
    lane: str | None = None

    @property
    def dtype(self) -> np.dtype:
        return _resolved(self.dtype_spec)

    @property
    def host(self) -> np.dtype:
        return _resolved(self.host_spec)

    @property
    def is_int(self) -> bool:
        return self.family in ("uint", "sint")

    @property
    def is_float(self) -> bool:
        return self.family == "float"

    @property
    def is_signed(self) -> bool:
        return self.family == "sint"

    @property
    def storage_bytes(self) -> int:
        """Bytes one element takes in a storage buffer (a Bool is one u32 word)."""
        return 4 if self.family == "bool" else self.bits * self.lanes // 8

    @property
    def int_range(self) -> tuple[int, int]:
        """The smallest and largest value of an integer (or i1) type."""
        if self.family == "bool":
            return (0, 1)
        if self.family == "sint":
            return (-(2 ** (self.bits - 1)), 2 ** (self.bits - 1) - 1)
        return (0, 2**self.bits - 1)


def _resolved(spec: np.dtype | str) -> np.dtype:
    return bf16_dtype() if isinstance(spec, str) else spec


def _spec(dtype) -> np.dtype | str:
    return dtype if dtype == BF16_NAME else np.dtype(dtype)


def _scalar(name, family, bits, dtype, host=None, wgsl=None, storage=None, feature=None):
    host = dtype if host is None else host
    storage = wgsl if storage is None else storage
    return ElementType(name, family, bits, _spec(dtype), _spec(host), wgsl, storage, feature)


def _vector(lane: ElementType, lanes: int) -> ElementType:
    """A vector type: registers and host buffers hold one numpy record per vector,
    with one field per lane (`x`, `y`, `z`, `w`), so that arrays of vectors are
    one-dimensional like arrays of scalars (the run API takes `(n, lanes)` arrays of
    the lane type and returns them so)."""
    record = np.dtype([(LANE_NAMES[k], lane.dtype) for k in range(lanes)])
    wgsl = f"vec{lanes}<{lane.wgsl}>"
    return ElementType(
        f"vector<{lanes}x{lane.name}>", "vector", lane.bits, record, record,
        wgsl=wgsl, wgsl_storage=wgsl, lanes=lanes, lane=lane.name,
    )  # fmt: skip


#: the lanes of a vector, in order: fields of its numpy record, components in WGSL
LANE_NAMES = "xyzw"


def vector_lanes(values: np.ndarray) -> np.ndarray:
    """An array of vector records as a `(n, lanes)` array of the lane type."""
    values = np.ascontiguousarray(values)
    lane = values.dtype[0]
    return values.view(lane).reshape(values.shape[0], len(values.dtype.names))


def vector_records(lanes: np.ndarray, record: np.dtype) -> np.ndarray:
    """A `(n, lanes)` array of the lane type as an array of vector records."""
    lanes = np.ascontiguousarray(lanes, dtype=record[0])
    return lanes.view(record).reshape(lanes.shape[0])


def _element_types() -> dict[str, ElementType]:
    ui32 = _scalar("ui32", "uint", 32, np.uint32, wgsl="u32")
    f32 = _scalar("f32", "float", 32, np.float32, wgsl="f32")
    scalars = [
        # 8/16-bit integers: 32-bit registers, packed into u32 words in a buffer
        _scalar("ui8", "uint", 8, np.uint8, wgsl="u32", storage="u32"),
        _scalar("ui16", "uint", 16, np.uint16, wgsl="u32", storage="u32"),
        ui32,
        # 64-bit integers: emulated on vec2<u32> (low word, high word)
        _scalar("ui64", "uint", 64, np.uint64, wgsl="vec2<u32>"),
        _scalar("si8", "sint", 8, np.int8, wgsl="i32", storage="u32"),
        _scalar("si16", "sint", 16, np.int16, wgsl="i32", storage="u32"),
        _scalar("si32", "sint", 32, np.int32, wgsl="i32"),
        _scalar("si64", "sint", 64, np.int64, wgsl="vec2<u32>"),
        _scalar("f16", "float", 16, np.float16, wgsl="f16", feature="shader-f16"),
        # bf16: an f32 holding a bf16 value in registers; two halves per u32 word in a buffer
        _scalar("bf16", "float", 16, BF16_NAME, wgsl="f32", storage="u32"),
        f32,
        _scalar("f64", "float", 64, np.float64, wgsl="f64", feature="shader-f64"),
        # Bool: one u32 word per element in a buffer
        _scalar("i1", "bool", 1, np.bool_, host=np.uint32, wgsl="bool", storage="u32"),
    ]
    vectors = [_vector(ui32, 2), _vector(ui32, 4), _vector(f32, 4)]
    return {t.name: t for t in scalars + vectors}


#: IR type name -> its `ElementType`: the one table of element types; every other
#: per-type table below is derived from it
ELEMENTS: dict[str, ElementType] = _element_types()


class _DtypeTable(Mapping):
    """IR type name -> one numpy dtype of its `ElementType`, looked up when asked
    (so that bf16's dtype, and ml_dtypes with it, is only imported when used)."""

    def __init__(self, attribute: str):
        self.attribute = attribute

    def __getitem__(self, name: str) -> np.dtype:
        return getattr(ELEMENTS[name], self.attribute)

    def __iter__(self) -> Iterator[str]:
        return iter(ELEMENTS)

    def __len__(self) -> int:
        return len(ELEMENTS)


#: IR type name -> numpy dtype used for values in registers.
NUMPY_DTYPES: Mapping[str, np.dtype] = _DtypeTable("dtype")

#: IR type name -> numpy dtype of the host array of a buffer (Bool is one u32 word).
HOST_DTYPES: Mapping[str, np.dtype] = _DtypeTable("host")

#: IR type name -> WGSL type in registers (only the types the WGSL backend lowers).
WGSL_TYPES: dict[str, str] = {n: t.wgsl for n, t in ELEMENTS.items() if t.wgsl}

#: IR type name -> WGSL element type of a storage buffer (Bool is one u32 word).
WGSL_STORAGE_TYPES: dict[str, str] = {
    n: t.wgsl_storage for n, t in ELEMENTS.items() if t.wgsl_storage
}

#: every element type, in the table's order
ELEMENT_TYPE_NAMES = tuple(ELEMENTS)
#: the scalar (non-vector) types
SCALAR_TYPES = tuple(n for n, t in ELEMENTS.items() if t.family != "vector")
#: every integer type (i1 is not one)
ALL_INT_TYPES = tuple(n for n, t in ELEMENTS.items() if t.is_int)
#: every float type
ALL_FLOAT_TYPES = tuple(n for n, t in ELEMENTS.items() if t.is_float)

# The types each op family accepts today (per-op legality is the `types` of each
# entry of `OPS`, built from these).
#: the unsigned and signed integer types
UNSIGNED_TYPES = ("ui8", "ui16", "ui32", "ui64")
SIGNED_TYPES = ("si8", "si16", "si32", "si64")
INT_TYPES = ("ui8", "ui16", "ui32", "ui64", "si8", "si16", "si32", "si64")
#: the integers of at most 32 bits (`abs_diff`, whose result is a `ui32`)
INT_UP_TO_32_TYPES = ("ui8", "ui16", "ui32", "si8", "si16", "si32")
#: the 32-bit integers (`mul_high` and the `unpack` ops, upstream's 32-bit ops)
INT32_TYPES = ("ui32", "si32")
#: the integers packed into 32-bit words in a WGSL buffer
PACKED_TYPES = ("ui8", "ui16", "si8", "si16")
#: the integers emulated on `vec2<u32>` in WGSL
WIDE_INT_TYPES = ("ui64", "si64")
NUMERIC_TYPES = (*INT_TYPES, "f32")
ALL_TYPES = (*NUMERIC_TYPES, "i1")
SCALAR_32_TYPES = ("ui32", "si32", "f32")
#: the float types beyond f32: every op that takes f32 takes them, but for the
#: approximate ones on f64 (Vulkan defines no 64-bit sin, exp, log, ...)
WIDE_FLOATS = ("f16", "bf16", "f64")
#: the types of the approximate float ops (sin, exp, log, ...)
APPROX_FLOATS = ("f16", "bf16", "f32")
#: every float type
FLOATS = ("f16", "bf16", "f32", "f64")


def storage_bytes(tname: str, count: int) -> int:
    """Bytes of a storage buffer of `count` elements of `tname`, in whole u32 words."""
    return (ELEMENTS[tname].storage_bytes * count + 3) // 4 * 4


def wgsl_unsupported(tname: str) -> str | None:
    """Why the WGSL backend cannot lower element type `tname`, or None when it can."""
    if tname in WGSL_TYPES:
        return None
    return f"element type {tname} is not supported by the wgpu backend yet"


TRAP_SI32_DIV = "si32.div"
TRAP_SI32_MOD = "si32.mod"


@dataclass(frozen=True)
class OpSemantics:
    """Semantics of one pure vyre op.

    ``evaluate(*args)`` takes numpy arrays (or scalars) of the operand dtype and
    returns an array of the result dtype. ``wgsl(ty, *args)`` takes the WGSL
    type of the operands and the operand expressions (plain identifiers, so an
    argument may be repeated freely) and returns a WGSL expression.
    ``traps(*args)`` returns a boolean mask of lanes that trap (si32 division),
    and ``wgsl_trap(ty, *args)`` the same condition in WGSL.
    """

    name: str
    kind: str  # "binary", "compare", "logic", "unary", "predicate"
    types: tuple[str, ...]
    evaluate: Callable[..., np.ndarray]
    wgsl: Callable[..., str]
    ulp: float = 0.0
    traps: Callable[..., np.ndarray] | None = None
    wgsl_trap: Callable[..., str] | None = None
    trap_tag: str | None = None
    commutative: bool = False
    #: (a op b) op c == a op (b op c) on integers (wrapping); on floats up to rounding
    #: unless the op is also `idempotent` (min, max: no rounding at all)
    associative: bool = False
    #: a op a == a
    idempotent: bool = False
    #: (integer identity, float identity) with a op e == a for every a, when one
    #: value serves every type of the family (-0.0: +0.0 would turn -0.0 + +0.0 positive)
    identity: tuple[int, float] | None = None
    helpers: tuple[str, ...] = field(default=())
    #: the result type when it is fixed whatever the operand type (upstream's
    #: `abs_diff`/`mul_high`/`unpack*` give a u32, `not` a Bool); None: the operand type
    result: str | None = None

    @property
    def result_is_bool(self) -> bool:
        return self.kind in ("compare", "logic", "predicate") or self.result == "i1"

    def trap_tag_for(self, tname: str) -> str:
        """The tag a trap of this op records on operands of type `tname` (`si8.div`)."""
        return f"{tname}.{self.name}"

    def result_type(self, operand_type: str) -> str:
        if self.result is not None:
            return self.result
        return "i1" if self.result_is_bool else operand_type


# --------------------------------------------------------------------------- helpers


def _dtype(a: np.ndarray) -> np.dtype:
    return np.asarray(a).dtype


def _wrap(result: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Cast an int64 intermediate back to the operand dtype with wrap-around."""
    return np.asarray(result).astype(np.int64).astype(_dtype(like), casting="unsafe")


def _as_i64(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).astype(np.int64)


def _is_float(a: np.ndarray) -> bool:
    return is_float_dtype(_dtype(a))


def _is_signed(a: np.ndarray) -> bool:
    return _dtype(a).kind == "i"


def _width(a: np.ndarray) -> int:
    """The width in bits of an integer operand."""
    return _dtype(a).itemsize * 8


def _unsigned(a: np.ndarray) -> np.ndarray:
    """The bits of an integer operand as the unsigned dtype of its width."""
    a = np.asarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "i" else a


def _f32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


def _f64_to_f32_odd(x: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounded to odd: an inexact result gets an odd last bit
    (past the largest finite f32: the largest, whose last bit is odd), so rounding it
    once more to a type of at most 22 significand bits (bf16) rounds `x` correctly."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        near = x.astype(np.float32)
        inexact = (near.astype(np.float64) != x) & ~np.isnan(x)
        even = (near.view(np.uint32) & np.uint32(1)) == 0
        up = x > near.astype(np.float64)
        other = np.nextafter(near, np.where(up, np.float32(np.inf), np.float32(-np.inf)))
    return np.where(inexact & even, other, near).astype(np.float32)


def _int_to_f64_odd(x: np.ndarray) -> np.ndarray:
    """An integer array as float64, rounded to odd where it is inexact (64-bit
    magnitudes of 2^53 and above: the 11 bits shifted out leave a sticky last bit)."""
    x = np.asarray(x)
    if x.dtype.itemsize < 8:
        return x.astype(np.float64)  # exact
    bits = x.view(np.uint64)
    negative = x < 0 if x.dtype.kind == "i" else np.zeros(x.shape, bool)
    magnitude = np.where(negative, ~bits + np.uint64(1), bits)  # |INT64_MIN| = 2^63 too
    sticky = ((magnitude & np.uint64(0x7FF)) != 0).astype(np.uint64)
    odd = ((magnitude >> np.uint64(11)) | sticky).astype(np.float64) * 2048.0
    wide = np.where(magnitude < np.uint64(2**53), magnitude.astype(np.float64), odd)
    return np.where(negative, -wide, wide)


def to_bf16(x) -> np.ndarray:
    """Any real array (float or integer) rounded once to the nearest bfloat16, ties to
    even; NaN -> the quiet NaN of its sign; beyond the range -> inf. Computed on bits
    here, not by ml_dtypes' conversions (some versions convert float64 through float32
    and so round twice)."""
    x = np.asarray(x)
    if is_bf16(x.dtype):
        return x.copy()
    if x.dtype.kind in "iu":
        x = _int_to_f64_odd(x)
    elif x.dtype.kind == "b":
        x = x.astype(np.float32)
    single = _f64_to_f32_odd(x) if x.dtype == np.float64 else x.astype(np.float32)
    bits = single.view(np.uint32).astype(np.uint64)
    nan = (bits & 0x7FFFFFFF) > 0x7F800000
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    quiet = ((bits >> 16) & 0x8000) | 0x7FC0
    return np.where(nan, quiet, rounded).astype(np.uint16).view(bf16_dtype())


def to_float(x, dtype) -> np.ndarray:
    """`x` rounded once to the float `dtype` (to nearest, ties to even); bf16 by
    `to_bf16`, the others by numpy (whose conversions round once)."""
    if is_bf16(dtype):
        return to_bf16(x)
    return np.asarray(x).astype(dtype, copy=False)


def literal_array(value, tname: str) -> np.ndarray:
    """A one-element register of type `tname` holding the constant `value` (a float
    constant rounded once to a float type)."""
    dtype = NUMPY_DTYPES[tname]
    if is_float_dtype(dtype):
        return to_float(np.array([value], np.float64), dtype)
    return np.array([value], dtype=dtype)


def _float_like(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    """`x` in the float dtype of the operand `a` (f16, bf16, f32 or f64)."""
    x = np.asarray(x)
    return x if x.dtype == _dtype(a) else to_float(x, _dtype(a))


def _wide(a: np.ndarray) -> np.ndarray:
    """The operand as arithmetic computes it: bf16 in float32 (exact), rounded once
    by `_float_like` afterwards (f32's 24 bits make that single rounding of a bf16
    sum, difference, product or quotient the correct one); others in their type."""
    a = np.asarray(a)
    return a.astype(np.float32) if is_bf16(a.dtype) else a


def _shift_amount(b: np.ndarray) -> np.ndarray:
    """The shift amount masked to the operand width (31 for 32-bit, 7 for 8-bit)."""
    return _unsigned(b).astype(np.int64) & (_width(b) - 1)


def _add(a, b):
    return (
        _float_like(_wide(a) + _wide(b), a) if _is_float(a) else _wrap(_as_i64(a) + _as_i64(b), a)
    )


def _sub(a, b):
    return (
        _float_like(_wide(a) - _wide(b), a) if _is_float(a) else _wrap(_as_i64(a) - _as_i64(b), a)
    )


def _mul(a, b):
    if _is_float(a):
        return _float_like(_wide(a) * _wide(b), a)
    # the int64 product wraps modulo 2^64: its low bits are the wrapped product
    return _wrap(_as_i64(a) * _as_i64(b), a)


def _signed_div_traps(a, b):
    """Signed division by 0, or the minimum by -1 (the quotient does not fit)."""
    a, b = np.asarray(a), np.asarray(b)
    return (b == 0) | ((a == np.iinfo(a.dtype).min) & (b == -1))


def _truncated_quotient(a, b):
    """Signed `a / b` rounded toward zero, for divisors that do not trap."""
    q = a // b
    return q + ((a % b != 0) & ((a < 0) != (b < 0))).astype(a.dtype)


def _div(a, b):
    if _is_float(a):
        with np.errstate(all="ignore"):
            return _float_like(np.divide(_wide(a), _wide(b)), a)
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    dtype = a.dtype
    if _is_signed(a):
        traps = _signed_div_traps(a, b)
        safe = np.where(traps, 1, b).astype(dtype)
        return np.where(traps, a, _truncated_quotient(a, safe)).astype(dtype)
    # unsigned division by 0 gives all ones (the type's maximum)
    safe = np.where(b == 0, 1, b).astype(dtype)
    return np.where(b == 0, np.iinfo(dtype).max, a // safe).astype(dtype)


def _mod(a, b):
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    dtype = a.dtype
    if _is_signed(a):
        traps = _signed_div_traps(a, b)
        safe = np.where(traps, 1, b).astype(dtype)
        return np.where(traps, 0, np.fmod(a, safe)).astype(dtype)
    safe = np.where(b == 0, 1, b).astype(dtype)
    return np.where(b == 0, 0, a % safe).astype(dtype)


def _min(a, b):
    if not _is_float(a):
        return np.minimum(a, b)
    # numpy's fmin picks either zero for min(+0, -0) depending on the array length
    # (SIMD vs scalar loop); -0 is the answer, whatever the number of lanes.
    return _float_like(np.where(a == b, np.where(np.signbit(a), a, b), np.fmin(a, b)), a)


def _max(a, b):
    if not _is_float(a):
        return np.maximum(a, b)
    # max(+0, -0) is +0, whatever the number of lanes (see _min).
    return _float_like(np.where(a == b, np.where(np.signbit(a), b, a), np.fmax(a, b)), a)


def _shl(a, b):
    bits = _unsigned(a).astype(np.uint64)
    r = bits << _shift_amount(b).astype(np.uint64)
    return r.astype(_unsigned(a).dtype).view(_dtype(a))


def _shr(a, b):
    """Arithmetic on a signed operand, logical on an unsigned one."""
    wide = np.int64 if _is_signed(a) else np.uint64
    amount = _shift_amount(b).astype(wide)
    return (np.asarray(a).astype(wide) >> amount).astype(_dtype(a))


def _rotate(a, b, left: bool):
    width = _width(a)
    x = _unsigned(a).astype(np.uint64)
    s = _shift_amount(b).astype(np.uint64)
    if not left:
        s = (np.uint64(width) - s) & np.uint64(width - 1)
    back = (np.uint64(width) - s) & np.uint64(width - 1)
    mask = np.uint64((1 << width) - 1)
    r = ((x << s) | np.where(s == 0, np.uint64(0), x >> back)) & mask
    return r.astype(_unsigned(a).dtype).view(_dtype(a))


def _abs_diff(a, b):
    """|a - b| as a ui32 (exact for operands of at most 32 bits: the difference is
    below 2^32)."""
    a64, b64 = _as_i64(a), _as_i64(b)
    return np.abs(a64 - b64).astype(np.uint32)


def _type_max(a) -> np.generic:
    return np.iinfo(_dtype(a)).max


def _sat_mul(a, b):
    """Unsigned multiplication clamped to the type's maximum."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    top = _type_max(a)
    safe = np.where(b == 0, 1, b).astype(a.dtype)
    over = (b != 0) & (a > top // safe)
    return np.where(over, top, a * b).astype(a.dtype)


def _sat_add(a, b):
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    total = (a + b).astype(a.dtype)  # wraps
    return np.where(total < a, _type_max(a), total).astype(a.dtype)


def _sat_sub(a, b):
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    return np.where(b > a, 0, a - b).astype(a.dtype)


def _mul_high(a, b):
    """The high 32 bits of the 64-bit product, as a ui32 (upstream's result type);
    si32 operands multiply as signed numbers."""
    if _is_signed(a):
        product = _as_i64(a) * _as_i64(b)  # |product| <= 2^62: no overflow
        return ((product >> 32) & U32_MAX).astype(np.uint32)
    prod = np.asarray(a).astype(np.uint64) * np.asarray(b).astype(np.uint64)
    return (prod >> np.uint64(32)).astype(np.uint32)


def _truthy(a) -> np.ndarray:
    """Upstream's truthiness: a ui32 is true when non-zero."""
    return np.asarray(a) != 0


def _logical_and(a, b):
    return _truthy(a) & _truthy(b)


def _logical_or(a, b):
    return _truthy(a) | _truthy(b)


def _logical_not(a):
    return ~_truthy(a)


def _unpack(shift: int, mask: int) -> Callable[[np.ndarray], np.ndarray]:
    """`(bits >> shift) & mask` of a 32-bit integer, as a ui32 (upstream's unpack ops)."""

    def evaluate(a):
        return ((_bits(a).astype(np.int64) >> shift) & mask).astype(np.uint32)

    return evaluate


def _bits(a) -> np.ndarray:
    return _unsigned(a)


def _popcount(a):
    x = _bits(a)
    return np.bitwise_count(x).astype(x.dtype).view(_dtype(a))


def _bit_length(x: np.ndarray) -> np.ndarray:
    """The number of significant bits of each unsigned value (0 for 0), exactly."""
    y = np.asarray(x).astype(np.uint64)
    n = np.zeros(y.shape, dtype=np.int64)
    for step in (32, 16, 8, 4, 2, 1):
        big = y >= np.uint64(1 << step)
        n += np.where(big, step, 0)
        y = np.where(big, y >> np.uint64(step), y)
    return n + (y > 0)


def _clz(a):
    x = _bits(a)
    return (_width(a) - _bit_length(x)).astype(x.dtype).view(_dtype(a))


def _ctz(a):
    x = _bits(a).astype(np.uint64)
    low = x & (~x + np.uint64(1))
    n = np.where(x == 0, _width(a), _bit_length(low) - 1)
    return n.astype(_bits(a).dtype).view(_dtype(a))


def _reverse_bits(a):
    x = _bits(a)
    size = x.dtype.itemsize
    as_bytes = x.astype(f"<u{size}").reshape(-1).view(np.uint8).reshape(-1, size)
    rev = np.unpackbits(as_bytes, axis=1, bitorder="little")[:, ::-1]
    packed = np.packbits(rev, axis=1, bitorder="little").reshape(-1)
    return packed.view(f"<u{size}").astype(x.dtype).reshape(x.shape).view(_dtype(a))


def _neg(a):
    return _float_like(-np.asarray(a), a) if _is_float(a) else _wrap(-_as_i64(a), a)


def _wgsl_neg(ty, a):
    # WGSL has no unary minus on u32: wrapping `0 - a`
    return f"(0u - {a})" if ty == "u32" else f"(-{a})"


def _bit_not(a):
    return np.invert(np.asarray(a))


def _abs(a):
    if _is_float(a):
        return _float_like(np.abs(a), a)
    if not _is_signed(a):  # an unsigned value is its own absolute value
        return np.array(a, copy=True)
    return _wrap(np.abs(_as_i64(a)), a)


def _sign(a):
    return _float_like(np.sign(a), a) if _is_float(a) else np.sign(a).astype(_dtype(a))


def _float_unary(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    def evaluate(a):
        # f16 and bf16 compute in f32 and round once, as their WGSL does; f64 in f64
        wide = np.float64 if _dtype(a) == np.float64 else np.float32
        with np.errstate(all="ignore"):
            return _float_like(fn(np.asarray(a, dtype=wide)), a)

    return evaluate


def _bin(template: str) -> Callable[..., str]:
    return lambda ty, a, b: template.format(a=a, b=b, ty=ty)


def _un(template: str) -> Callable[..., str]:
    return lambda ty, a: template.format(a=a, ty=ty)


def _wgsl_div(ty, a, b):
    if ty == "u32":
        return f"select({a} / select({b}, 1u, {b} == 0u), 4294967295u, {b} == 0u)"
    return f"({a} / {b})"


def _wgsl_mod(ty, a, b):
    if ty == "u32":
        return f"select({a} % select({b}, 1u, {b} == 0u), 0u, {b} == 0u)"
    # truncated remainder spelled out: NVIDIA's Vulkan driver gave the sign of the
    # divisor for `%` on i32 (measured on an H200); division truncates everywhere
    return f"({a} - ({a} / {b}) * {b})"


def _wgsl_si32_trap(ty, a, b):
    return f"(({b} == 0i) || (({a} == i32(-2147483648)) && ({b} == -1i)))"


def _wgsl_shift(op):
    def emit(ty, a, b):
        amount = f"({b} & 31u)" if ty == "u32" else f"(bitcast<u32>({b}) & 31u)"
        return f"({a} {op} {amount})"

    return emit


def _wgsl_abs_diff(ty, a, b):
    if ty == "i32":  # wrapping u32 difference of the bit patterns is the exact |a - b|
        a_bits, b_bits = f"bitcast<u32>({a})", f"bitcast<u32>({b})"
        return f"select({b_bits} - {a_bits}, {a_bits} - {b_bits}, {a} > {b})"
    return f"select({b} - {a}, {a} - {b}, {a} > {b})"


def _wgsl_mul_high(ty, a, b):
    if ty == "i32":  # the signed high word from the unsigned one
        a_bits, b_bits = f"bitcast<u32>({a})", f"bitcast<u32>({b})"
        return (
            f"(vyre_mul_high_u32({a_bits}, {b_bits}) - select(0u, {b_bits}, {a} < 0i)"
            f" - select(0u, {a_bits}, {b} < 0i))"
        )
    return f"vyre_mul_high_u32({a}, {b})"


def _wgsl_truth(ty, a) -> str:
    return a if ty == "bool" else f"({a} != 0u)"


def _wgsl_logic(op: str):
    def emit(ty, a, b):
        return f"({_wgsl_truth(ty, a)} {op} {_wgsl_truth(ty, b)})"

    return emit


def _wgsl_not(ty, a):
    return f"(!{a})" if ty == "bool" else f"({a} == 0u)"


def _wgsl_unpack(shift: int, mask: int):
    def emit(ty, a):
        bits = a if ty == "u32" else f"bitcast<u32>({a})"
        return f"(({bits} >> {shift}u) & {mask:#x}u)"

    return emit


def _wgsl_rotate(left: bool):
    def emit(ty, a, b):
        first, second = ("<<", ">>") if left else (">>", "<<")
        return f"(({a} {first} ({b} & 31u)) | ({a} {second} ((32u - ({b} & 31u)) & 31u)))"

    return emit


def _wgsl_is_nan(a):
    return f"((bitcast<u32>({a}) & 0x7fffffffu) > 0x7f800000u)"


def _wgsl_sign(ty, a):
    # WGSL leaves sign(NaN) open (lavapipe gives 0); numpy keeps the NaN
    if ty == "f32":
        return f"select(sign({a}), {a}, {_wgsl_is_nan(a)})"
    return f"sign({a})"


def _wgsl_tanh(ty, a):
    # GPU tanh has an absolute, not relative, error near 0 (lavapipe: tanh(1e-30)
    # = 3e-8); below 2^-12, tanh(x) rounds to x in f32
    return f"select(tanh({a}), {a}, abs({a}) < 0.000244140625)"


MUL_HIGH_HELPER = """fn vyre_mul_high_u32(a: u32, b: u32) -> u32 {
  let a_lo = a & 0xffffu;
  let a_hi = a >> 16u;
  let b_lo = b & 0xffffu;
  let b_hi = b >> 16u;
  let lo_lo = a_lo * b_lo;
  let hi_lo = a_hi * b_lo;
  let lo_hi = a_lo * b_hi;
  let cross = (lo_lo >> 16u) + (hi_lo & 0xffffu) + (lo_hi & 0xffffu);
  return a_hi * b_hi + (hi_lo >> 16u) + (lo_hi >> 16u) + (cross >> 16u);
}"""


def _make_table() -> dict[str, OpSemantics]:
    ops: list[OpSemantics] = [
        # ----------------------------------------------------------- binary
        OpSemantics(
            "add",
            "binary",
            NUMERIC_TYPES + WIDE_FLOATS,
            _add,
            _bin("({a} + {b})"),
            commutative=True,
            associative=True,
            identity=(0, -0.0),
        ),
        OpSemantics("sub", "binary", NUMERIC_TYPES + WIDE_FLOATS, _sub, _bin("({a} - {b})")),
        OpSemantics(
            "mul",
            "binary",
            NUMERIC_TYPES + WIDE_FLOATS,
            _mul,
            _bin("({a} * {b})"),
            commutative=True,
            associative=True,
            identity=(1, 1.0),
        ),
        OpSemantics(
            "div",
            "binary",
            NUMERIC_TYPES + WIDE_FLOATS,
            _div,
            _wgsl_div,
            ulp=3.0,
            traps=lambda a, b: _signed_div_traps(a, b) if _is_signed(a) else None,
            wgsl_trap=lambda ty, a, b: _wgsl_si32_trap(ty, a, b) if ty == "i32" else None,
            trap_tag=TRAP_SI32_DIV,
        ),
        OpSemantics(
            "mod",
            "binary",
            INT_TYPES,
            _mod,
            _wgsl_mod,
            traps=lambda a, b: _signed_div_traps(a, b) if _is_signed(a) else None,
            wgsl_trap=lambda ty, a, b: _wgsl_si32_trap(ty, a, b) if ty == "i32" else None,
            trap_tag=TRAP_SI32_MOD,
        ),
        OpSemantics(
            "min",
            "binary",
            NUMERIC_TYPES + WIDE_FLOATS,
            _min,
            _bin("min({a}, {b})"),
            commutative=True,
            associative=True,
            idempotent=True,
        ),
        OpSemantics(
            "max",
            "binary",
            NUMERIC_TYPES + WIDE_FLOATS,
            _max,
            _bin("max({a}, {b})"),
            commutative=True,
            associative=True,
            idempotent=True,
        ),
        OpSemantics(
            "bit_and",
            "binary",
            INT_TYPES,
            np.bitwise_and,
            _bin("({a} & {b})"),
            commutative=True,
            associative=True,
            idempotent=True,
        ),
        OpSemantics(
            "bit_or",
            "binary",
            INT_TYPES,
            np.bitwise_or,
            _bin("({a} | {b})"),
            commutative=True,
            associative=True,
            idempotent=True,
        ),
        OpSemantics(
            "bit_xor",
            "binary",
            INT_TYPES,
            np.bitwise_xor,
            _bin("({a} ^ {b})"),
            commutative=True,
            associative=True,
            identity=(0, 0.0),
        ),
        OpSemantics("shl", "binary", INT_TYPES, _shl, _wgsl_shift("<<")),
        OpSemantics("shr", "binary", INT_TYPES, _shr, _wgsl_shift(">>")),
        OpSemantics(
            "abs_diff",
            "binary",
            INT_UP_TO_32_TYPES,
            _abs_diff,
            _wgsl_abs_diff,
            commutative=True,
            result="ui32",
        ),
        OpSemantics(
            "saturating_add",
            "binary",
            UNSIGNED_TYPES,
            _sat_add,
            _bin("select({a} + {b}, 4294967295u, {a} > (4294967295u - {b}))"),
            commutative=True,
        ),
        OpSemantics(
            "saturating_sub",
            "binary",
            UNSIGNED_TYPES,
            _sat_sub,
            _bin("select({a} - {b}, 0u, {b} > {a})"),
        ),
        OpSemantics(
            "saturating_mul",
            "binary",
            UNSIGNED_TYPES,
            _sat_mul,
            _bin("select({a} * {b}, 4294967295u, vyre_mul_high_u32({a}, {b}) != 0u)"),
            commutative=True,
            helpers=(MUL_HIGH_HELPER,),
        ),
        OpSemantics(
            "mul_high",
            "binary",
            INT32_TYPES,
            _mul_high,
            _wgsl_mul_high,
            commutative=True,
            helpers=(MUL_HIGH_HELPER,),
            result="ui32",
        ),
        OpSemantics(
            "rotate_left",
            "binary",
            UNSIGNED_TYPES,
            lambda a, b: _rotate(a, b, True),
            _wgsl_rotate(True),
        ),
        OpSemantics(
            "rotate_right",
            "binary",
            UNSIGNED_TYPES,
            lambda a, b: _rotate(a, b, False),
            _wgsl_rotate(False),
        ),
        # ----------------------------------------------------------- compare
        OpSemantics(
            "eq",
            "compare",
            ALL_TYPES + WIDE_FLOATS,
            np.equal,
            _bin("({a} == {b})"),
            commutative=True,
        ),
        # `!(a == b)`: naga emits an *ordered* not-equal for `!=` on f32, which is
        # false when an operand is NaN (measured on lavapipe); IEEE says true.
        OpSemantics(
            "ne",
            "compare",
            ALL_TYPES + WIDE_FLOATS,
            np.not_equal,
            _bin("(!({a} == {b}))"),
            commutative=True,
        ),
        OpSemantics("lt", "compare", NUMERIC_TYPES + WIDE_FLOATS, np.less, _bin("({a} < {b})")),
        OpSemantics(
            "le", "compare", NUMERIC_TYPES + WIDE_FLOATS, np.less_equal, _bin("({a} <= {b})")
        ),
        OpSemantics("gt", "compare", NUMERIC_TYPES + WIDE_FLOATS, np.greater, _bin("({a} > {b})")),
        OpSemantics(
            "ge", "compare", NUMERIC_TYPES + WIDE_FLOATS, np.greater_equal, _bin("({a} >= {b})")
        ),
        # ----------------------------------------------------------- logic
        # on ui32, upstream's truthiness: non-zero is true; the result is i1
        OpSemantics(
            "and", "logic", ("i1", "ui32"), _logical_and, _wgsl_logic("&"), commutative=True
        ),
        OpSemantics("or", "logic", ("i1", "ui32"), _logical_or, _wgsl_logic("|"), commutative=True),
        # ----------------------------------------------------------- unary
        OpSemantics("not", "unary", ("i1", "ui32"), _logical_not, _wgsl_not, result="i1"),
        OpSemantics("neg", "unary", NUMERIC_TYPES + WIDE_FLOATS, _neg, _wgsl_neg),
        OpSemantics("bit_not", "unary", INT_TYPES, _bit_not, _un("(~{a})")),
        OpSemantics("popcount", "unary", INT_TYPES, _popcount, _un("countOneBits({a})")),
        OpSemantics("clz", "unary", INT_TYPES, _clz, _un("countLeadingZeros({a})")),
        OpSemantics("ctz", "unary", INT_TYPES, _ctz, _un("countTrailingZeros({a})")),
        OpSemantics("reverse_bits", "unary", INT_TYPES, _reverse_bits, _un("reverseBits({a})")),
        OpSemantics("abs", "unary", NUMERIC_TYPES + WIDE_FLOATS, _abs, _un("abs({a})")),
        OpSemantics("sign", "unary", (*SIGNED_TYPES, *FLOATS), _sign, _wgsl_sign),
        OpSemantics("sqrt", "unary", FLOATS, _float_unary(np.sqrt), _un("sqrt({a})"), ulp=3.0),
        OpSemantics(
            "inverse_sqrt",
            "unary",
            FLOATS,
            _float_unary(lambda x: 1.0 / np.sqrt(x)),
            _un("inverseSqrt({a})"),
            ulp=3.0,
        ),
        OpSemantics("floor", "unary", FLOATS, _float_unary(np.floor), _un("floor({a})")),
        OpSemantics("ceil", "unary", FLOATS, _float_unary(np.ceil), _un("ceil({a})")),
        OpSemantics("round", "unary", FLOATS, _float_unary(np.rint), _un("round({a})")),
        OpSemantics("trunc", "unary", FLOATS, _float_unary(np.trunc), _un("trunc({a})")),
        OpSemantics("exp", "unary", APPROX_FLOATS, _float_unary(np.exp), _un("exp({a})"), ulp=64.0),
        OpSemantics(
            "exp2", "unary", APPROX_FLOATS, _float_unary(np.exp2), _un("exp2({a})"), ulp=64.0
        ),
        OpSemantics("log", "unary", APPROX_FLOATS, _float_unary(np.log), _un("log({a})"), ulp=16.0),
        OpSemantics(
            "log2", "unary", APPROX_FLOATS, _float_unary(np.log2), _un("log2({a})"), ulp=16.0
        ),
        OpSemantics(
            "sin", "unary", APPROX_FLOATS, _float_unary(np.sin), _un("sin({a})"), ulp=4096.0
        ),
        OpSemantics(
            "cos", "unary", APPROX_FLOATS, _float_unary(np.cos), _un("cos({a})"), ulp=4096.0
        ),
        OpSemantics(
            "tan", "unary", APPROX_FLOATS, _float_unary(np.tan), _un("tan({a})"), ulp=8192.0
        ),
        OpSemantics("tanh", "unary", APPROX_FLOATS, _float_unary(np.tanh), _wgsl_tanh, ulp=8192.0),
        OpSemantics(
            "reciprocal",
            "unary",
            FLOATS,
            _float_unary(lambda x: 1.0 / x),
            _un("(1.0 / {a})"),
            ulp=3.0,
        ),
        OpSemantics(
            "acos", "unary", APPROX_FLOATS, _float_unary(np.arccos), _un("acos({a})"), ulp=8192.0
        ),
        OpSemantics(
            "asin", "unary", APPROX_FLOATS, _float_unary(np.arcsin), _un("asin({a})"), ulp=8192.0
        ),
        OpSemantics(
            "atan", "unary", APPROX_FLOATS, _float_unary(np.arctan), _un("atan({a})"), ulp=4096.0
        ),
        OpSemantics(
            "sinh", "unary", APPROX_FLOATS, _float_unary(np.sinh), _un("sinh({a})"), ulp=8192.0
        ),
        OpSemantics(
            "cosh", "unary", APPROX_FLOATS, _float_unary(np.cosh), _un("cosh({a})"), ulp=8192.0
        ),
        # upstream's bit unpacking: a nibble or byte of a 32-bit integer, as a ui32
        OpSemantics(
            "unpack4_low",
            "unary",
            INT32_TYPES,
            _unpack(0, 0x0F),
            _wgsl_unpack(0, 0x0F),
            result="ui32",
        ),
        OpSemantics(
            "unpack4_high",
            "unary",
            INT32_TYPES,
            _unpack(4, 0x0F),
            _wgsl_unpack(4, 0x0F),
            result="ui32",
        ),
        OpSemantics(
            "unpack8_low",
            "unary",
            INT32_TYPES,
            _unpack(0, 0xFF),
            _wgsl_unpack(0, 0xFF),
            result="ui32",
        ),
        OpSemantics(
            "unpack8_high",
            "unary",
            INT32_TYPES,
            _unpack(24, 0xFF),
            _wgsl_unpack(24, 0xFF),
            result="ui32",
        ),
        # ----------------------------------------------------------- predicates
        OpSemantics(
            "is_nan",
            "predicate",
            FLOATS,
            np.isnan,
            _un("((bitcast<u32>({a}) & 0x7fffffffu) > 0x7f800000u)"),
        ),
        OpSemantics(
            "is_inf",
            "predicate",
            FLOATS,
            np.isinf,
            _un("((bitcast<u32>({a}) & 0x7fffffffu) == 0x7f800000u)"),
        ),
        OpSemantics(
            "is_finite",
            "predicate",
            FLOATS,
            np.isfinite,
            _un("((bitcast<u32>({a}) & 0x7f800000u) != 0x7f800000u)"),
        ),
    ]
    return {op.name: op for op in ops}


def _vector_types(op: OpSemantics) -> tuple[str, ...]:
    """The vector types an op takes, lane by lane: those whose lane type it takes,
    when its result has the operand type (a binary or unary op), and `eq`/`ne`."""
    if op.kind not in ("binary", "unary", "compare") or op.result is not None:
        return ()
    if op.kind == "compare" and op.name not in ("eq", "ne"):
        return ()
    return tuple(
        name for name, t in ELEMENTS.items() if t.family == "vector" and t.lane in op.types
    )


def _lane_by_lane(op: OpSemantics) -> Callable[..., np.ndarray]:
    """`op.evaluate` extended to vector records: applied to every lane; `eq` is
    true when every lane is equal, `ne` when any lane differs."""
    scalar = op.evaluate

    def evaluate(*args):
        first = np.asarray(args[0])
        if first.dtype.names is None:
            return scalar(*args)
        lanes = [vector_lanes(np.asarray(a).reshape(-1)) for a in args]
        shape = np.broadcast_shapes(*(x.shape for x in lanes))
        flat = [np.broadcast_to(x, shape).reshape(-1) for x in lanes]
        result = np.asarray(scalar(*flat)).reshape(shape)
        if op.kind == "compare":
            return result.all(axis=1) if op.name == "eq" else result.any(axis=1)
        return vector_records(result, first.dtype)

    return evaluate


def _with_vectors(ops: dict[str, OpSemantics]) -> dict[str, OpSemantics]:
    import dataclasses

    extended = {}
    for name, op in ops.items():
        vectors = _vector_types(op)
        if vectors:
            op = dataclasses.replace(op, types=op.types + vectors, evaluate=_lane_by_lane(op))
        extended[name] = op
    return extended


#: op mnemonic (without the ``vyre.`` prefix) -> semantics
OPS: dict[str, OpSemantics] = _with_vectors(_make_table())

BINARY_OPS = tuple(n for n, s in OPS.items() if s.kind == "binary")
COMPARE_OPS = tuple(n for n, s in OPS.items() if s.kind == "compare")
LOGIC_OPS = ("and", "or")
UNARY_OPS = tuple(n for n, s in OPS.items() if s.kind in ("unary", "predicate"))


# --------------------------------------------------------------------------- select, fma


def evaluate_select(c, t, f):
    return np.where(c, t, f)


def wgsl_select(ty, c, t, f) -> str:
    return f"select({f}, {t}, {c})"


FMA_ULP = 2.0


def evaluate_fma(a, b, c):
    """a * b + c rounded once. f32 products and sums are exact enough in f64 (the
    established f32 reference); f16, bf16 and f64 go through exact rational
    arithmetic, rounded once to the operand type."""
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    if _dtype(a) == np.float32:
        exact = np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)
        return _f32(exact)
    odd = _dtype(a) != np.float64  # round to odd in f64, then once more to the narrow type
    wide = [np.broadcast_to(np.asarray(x, np.float64), a.shape).ravel() for x in (a, b, c)]
    fused = [_fma64(x, y, z, odd) for x, y, z in zip(*wide)]
    with np.errstate(all="ignore"):
        return to_float(np.array(fused, np.float64).reshape(a.shape), _dtype(a))


def _fma64(a: float, b: float, c: float, odd: bool) -> float:
    """The exact a * b + c as a double: rounded to nearest even, or to odd (an
    inexact result gets an odd last bit, so one more rounding is still exact)."""
    from fractions import Fraction

    with np.errstate(all="ignore"):
        approximate = float(np.float64(a) * np.float64(b) + np.float64(c))
    if not all(np.isfinite(v) for v in (a, b, c, approximate)):
        return approximate
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return approximate  # the sign of an exact zero follows IEEE's rule
    nearest = exact.numerator / exact.denominator  # Python rounds this division correctly
    if not odd or Fraction(nearest) == exact or np.isinf(nearest):
        return nearest
    bits = np.float64(nearest).view(np.int64)
    if bits & 1:
        return nearest
    toward = np.inf if exact > Fraction(nearest) else -np.inf
    return float(np.nextafter(nearest, toward))


def wgsl_fma(ty, a, b, c) -> str:
    return f"fma({a}, {b}, {c})"


# --------------------------------------------------------------------------- casts

#: Legal cast pairs (source, target): any two scalar types (and a type to itself).
CAST_PAIRS: frozenset[tuple[str, str]] = frozenset(
    (s, t) for s in SCALAR_TYPES for t in SCALAR_TYPES
)


def _total_bits(tname: str) -> int:
    t = ELEMENTS[tname]
    return t.bits * t.lanes


#: Legal bitcast pairs (source, target): two non-Bool types of the same total width
#: (`f32` and `ui32`, `f64` and `vector<2xui32>`, `vector<4xf32>` and `vector<4xui32>`)
BITCAST_PAIRS: frozenset[tuple[str, str]] = frozenset(
    (s, t)
    for s in ELEMENT_TYPE_NAMES
    for t in ELEMENT_TYPE_NAMES
    if s != "i1" and t != "i1" and _total_bits(s) == _total_bits(t)
)

#: target -> the largest f32 inside the range, used to clamp before WGSL's own
#: conversion (whose result is only defined inside the range)
_F32_INSIDE_RANGE = {"ui32": (0.0, 4294967040.0), "si32": (-2147483648.0, 2147483520.0)}

#: target -> the smallest f32 at or above 2^bits (the first value that saturates)
_F32_OVERFLOW = {"ui32": 4294967296.0, "si32": 2147483648.0}


def _saturating_float_to_int(x: np.ndarray, target: ElementType) -> np.ndarray:
    """Rust's `as` from a float to an integer: truncate toward zero, NaN -> 0,
    beyond the range -> the type's minimum or maximum (exact for 64-bit targets:
    every f16/bf16/f32/f64 value is exact in f64, and so are both bounds' powers of 2)."""
    lo, hi = target.int_range
    with np.errstate(all="ignore"):
        wide = np.trunc(x.astype(np.float64))
        below = wide <= float(lo)
        above = wide >= float(hi + 1)
        inside = ~(below | above | np.isnan(wide))
        out = np.zeros(wide.shape, dtype=target.dtype)
        out[inside] = wide[inside].astype(target.dtype)
    out[below] = lo
    out[above] = hi
    return out


def evaluate_cast(x, source: str, target: str) -> np.ndarray:
    """Numeric conversion. A float -> integer is Rust's saturating `as`: truncate
    toward zero, NaN -> 0, beyond the range -> the type's minimum or maximum;
    integer -> integer is Rust's `as` too (two's complement: truncate to the target
    width, sign-extend a signed source, zero-extend an unsigned one); anything -> i1
    is `!= 0`; i1 -> number is 0 or 1; to a float rounds to nearest even."""
    x = np.asarray(x)
    if source == target:
        return x.copy()
    if target == "i1":
        return x != 0
    dtype = NUMPY_DTYPES[target]
    if source == "i1":
        return x.astype(dtype)
    src, dst = ELEMENTS[source], ELEMENTS[target]
    if src.is_float and dst.is_int:
        return _saturating_float_to_int(x, dst)
    if target == "bf16":  # rounded once, whatever ml_dtypes' own conversions do
        return to_bf16(x)
    return x.astype(dtype, casting="unsafe")


def _wgsl_saturating_cast(x: str, target: str) -> str:
    """f32 -> integer with Rust's `as` rule. WGSL's conversion of a value past the
    range gives the largest f32 inside it (4294967040, 2147483520), so the values
    at or above 2^32 / 2^31 select the maximum explicitly; NaN selects 0."""
    ty = WGSL_TYPES[target]
    lo, hi = _F32_INSIDE_RANGE[target]
    maximum = "4294967295u" if target == "ui32" else "2147483647i"
    zero = "0u" if target == "ui32" else "0i"
    inside = f"{ty}(clamp({x}, {lo!r}, {hi!r}))"
    saturated = f"select({inside}, {maximum}, {x} >= {_F32_OVERFLOW[target]!r})"
    # NaN by its bits: drivers may assume no NaN and fold `x == x` to true
    is_nan = f"((bitcast<u32>({x}) & 0x7fffffffu) > 0x7f800000u)"
    return f"select({saturated}, {zero}, {is_nan})"


wgsl_saturating_cast = _wgsl_saturating_cast


def wgsl_cast(x: str, source: str, target: str) -> str:
    ty = WGSL_TYPES[target]
    if source == target:
        return x
    if target == "i1":
        zero = {"ui32": "0u", "si32": "0i", "f32": "0.0"}[source]
        return f"(!({x} == {zero}))"  # NaN is true; naga's f32 `!=` is ordered
    if source == "i1":
        one, zero = {"ui32": ("1u", "0u"), "si32": ("1i", "0i"), "f32": ("1.0", "0.0")}[target]
        return f"select({zero}, {one}, {x})"
    if source == "f32":
        return _wgsl_saturating_cast(x, target)
    if target == "f32":
        return f"f32({x})"
    return f"bitcast<{ty}>({x})"


def evaluate_bitcast(x, source: str, target: str) -> np.ndarray:
    """The same bits read as another type of the same width (scalars only for now)."""
    return np.asarray(x).astype(NUMPY_DTYPES[source]).view(NUMPY_DTYPES[target])


def wgsl_bitcast(x: str, source: str, target: str) -> str:
    if source == target:
        return x
    return f"bitcast<{WGSL_TYPES[target]}>({x})"


# --------------------------------------------------------------------------- atomics

ATOMIC_OPS = (
    "add",
    "or",
    "and",
    "xor",
    "min",
    "max",
    "exchange",
    "fetch_nand",
    "compare_exchange",
    "compare_exchange_weak",
)

#: the atomics that take an expected value (`%old = vyre.atomic OP @b[%i], %expected, %new`)
COMPARE_EXCHANGE_OPS = ("compare_exchange", "compare_exchange_weak")

#: memory orderings of an atomic (upstream's `MemoryOrdering`; `seq_cst` is the default).
#: WGSL atomics are all relaxed: the WGSL backend gives every ordering relaxed
#: atomicity and nothing more (docs/wgsl.md).
ATOMIC_ORDERINGS = ("relaxed", "acquire", "release", "acq_rel", "seq_cst")
DEFAULT_ATOMIC_ORDERING = "seq_cst"

#: atomic op -> (numpy combine of old and value, WGSL builtin)
ATOMIC_COMBINE: dict[str, tuple[Callable[[np.ndarray, np.ndarray], np.ndarray], str]] = {
    "add": (lambda old, v: ((old.astype(np.uint64) + v) & U32_MAX).astype(np.uint32), "atomicAdd"),
    "or": (np.bitwise_or, "atomicOr"),
    "and": (np.bitwise_and, "atomicAnd"),
    "xor": (np.bitwise_xor, "atomicXor"),
    "min": (np.minimum, "atomicMin"),
    "max": (np.maximum, "atomicMax"),
    "exchange": (lambda old, v: v, "atomicExchange"),
    # `~(old & v)`; WGSL has no builtin: a compare-exchange loop (printer)
    "fetch_nand": (lambda old, v: np.invert(np.bitwise_and(old, v)), ""),
}

#: atomics whose combine is not associative: the interpreter applies them lane by lane
SEQUENTIAL_ATOMICS = ("fetch_nand", "compare_exchange", "compare_exchange_weak")


# --------------------------------------------------------------------------- subgroups

#: `vyre.subgroup_reduce` kind -> (operand types, numpy combine, WGSL builtin). Integer
#: add and mul wrap (numpy's fixed-width arithmetic); the bitwise kinds take integers only
#: (upstream rejects f32 for them). The order in which a GPU combines f32 lanes is not
#: specified, so f32 results carry the usual reassociation tolerance.
SUBGROUP_REDUCE: dict[str, tuple[tuple[str, ...], np.ufunc, str]] = {
    "add": (("ui32", "si32", "f32"), np.add, "subgroupAdd"),
    "mul": (("ui32", "si32", "f32"), np.multiply, "subgroupMul"),
    "min": (("ui32", "si32", "f32"), np.minimum, "subgroupMin"),
    "max": (("ui32", "si32", "f32"), np.maximum, "subgroupMax"),
    "and": (("ui32", "si32"), np.bitwise_and, "subgroupAnd"),
    "or": (("ui32", "si32"), np.bitwise_or, "subgroupOr"),
    "xor": (("ui32", "si32"), np.bitwise_xor, "subgroupXor"),
}

#: value types `vyre.subgroup_shuffle` and `vyre.subgroup_broadcast` move between lanes
SUBGROUP_VALUE_TYPES = ("ui32", "si32", "f32")

#: the subgroup size the reference interpreter simulates unless told otherwise (upstream's)
DEFAULT_SUBGROUP_SIZE = 32

# --------------------------------------------------------------------------- ULP


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in units of least precision between two float arrays of one
    dtype (float32 unless they are f16, bf16 or f64).

    Equal values (including two NaNs and +0/-0) are 0 apart.
    """
    a, b = np.asarray(a), np.asarray(b)
    if not is_float_dtype(a.dtype) or b.dtype != a.dtype:
        a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    view = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    sign_mask = np.iinfo(view).max

    def ordered(x):
        i = x.view(view).astype(np.int64)
        return np.where(i < 0, -(i & sign_mask), i)

    with np.errstate(over="ignore"):
        d = np.abs(ordered(a) - ordered(b))
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    both_nan = np.isnan(wide_a) & np.isnan(wide_b)
    same = (wide_a == wide_b) | both_nan
    far = np.isnan(wide_a) | np.isnan(wide_b)
    return np.where(same, 0, np.where(far, np.iinfo(np.int64).max, d))
