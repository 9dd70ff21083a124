"""Upstream's wgpu parity tests, with their inputs and hard-coded expected values:

- `vyre-driver-wgpu/tests/float_to_int_cast_parity.rs` (Rust's saturating `as`);
- `vyre-driver-wgpu/tests/unary_int_parity.rs` (negate/bitnot/popcount/clz/ctz/reverse_bits on u32);
- `vyre-driver-wgpu/tests/div_zero_shift_mask_parity.rs` (u32 `/ 0`, `% 0`, shifts >= 32);
- `vyre-driver-wgpu/tests/signed_modulo_parity.rs` (i32 `%` and `/` truncate like Rust);
- `vyre-reference/tests/saturating_binops_contract.rs` (u32 saturating add/sub/mul).

Each runs upstream's kernel shape (one `[1, 1, 1]` invocation, constant indices)
on the reference and on wgpu.
"""

from __future__ import annotations

import numpy as np
import pytest
from upstream_support import backends, f32, i32, run, u32, unrolled

U32_MAX = 2**32 - 1
I32_MAX, I32_MIN = 2**31 - 1, -(2**31)


def outputs(text: str, backend: str, out_dtype, **inputs) -> list[int]:
    n = len(next(iter(inputs.values())))
    host = dict(inputs, out=np.zeros(n, out_dtype))
    return run(text, host, backend=backend)["out"].tolist()


# ------------------------------------------------- float_to_int_cast_parity.rs

CAST_INPUTS = [42.9, -5.0, 3.0e20, -3.0e20, np.inf, -np.inf, np.nan]


@backends
def test_f32_to_u32_cast_saturates_like_reference_including_nan(backend):
    got = outputs(
        unrolled("", "f32", "ui32", 7, 1, cast=True), backend, np.uint32, a=f32(CAST_INPUTS)
    )
    assert got == [42, 0, U32_MAX, 0, U32_MAX, 0, 0]


@backends
def test_f32_to_i32_cast_saturates_like_reference_including_nan(backend):
    got = outputs(
        unrolled("", "f32", "si32", 7, 1, cast=True), backend, np.int32, a=f32(CAST_INPUTS)
    )
    assert got == [42, -5, I32_MAX, I32_MIN, I32_MAX, I32_MIN, 0]


FMA_CAST = """vyre.program @p workgroup_size [1, 1, 1] {{
  vyre.buffer @out binding 0 read_write : {ty}[1]
  vyre.buffer @a binding 1 read_only : f32[1]
  vyre.buffer @b binding 2 read_only : f32[1]
  %z = vyre.const 0 : ui32
  %x = vyre.load @a[%z] : f32
  %y = vyre.load @b[%z] : f32
  %c = vyre.const 0.0 : f32
  %p = vyre.fma %x, %y, %c : f32
  %r = vyre.cast %p : f32 to {ty}
  vyre.store @out[%z] = %r : {ty}
}}
"""


@backends
@pytest.mark.parametrize(
    "ty,dtype,expected", [("ui32", np.uint32, U32_MAX), ("si32", np.int32, I32_MAX)]
)
def test_computed_f32_overflow_casts_saturate_like_reference(backend, ty, dtype, expected):
    """fma(1e20, 1e20, 0) overflows to +inf in f32; the cast saturates to the maximum."""
    got = run(
        FMA_CAST.format(ty=ty),
        {"out": np.zeros(1, dtype), "a": f32([1e20]), "b": f32([1e20])},
        backend=backend,
    )["out"].tolist()
    assert got == [expected]


@backends
def test_f32_to_int_cast_threshold_boundaries_match_reference(backend):
    i_inputs = [2_147_483_520.0, 2_147_483_648.0, -2_147_483_648.0, -2_147_483_904.0]
    got = outputs(unrolled("", "f32", "si32", 4, 1, cast=True), backend, np.int32, a=f32(i_inputs))
    assert got == [2_147_483_520, I32_MAX, I32_MIN, I32_MIN]
    u_inputs = [4_294_967_040.0, 4_294_967_296.0, 0.0]
    got = outputs(unrolled("", "f32", "ui32", 3, 1, cast=True), backend, np.uint32, a=f32(u_inputs))
    assert got == [4_294_967_040, U32_MAX, 0]


# ------------------------------------------------- unary_int_parity.rs

NEG_INPUTS = [0, 1, 0xFFFF_FFFF, 0x8000_0000, 2, 0x7FFF_FFFF, 100, 0xDEAD_BEEF]
BIT_INPUTS = [0, 1, 0xFFFF_FFFF, 0x8000_0000, 0xAAAA_AAAA, 0x5555_5555, 0x0000_00FF, 0xDEAD_BEEF]
UNARY = {
    "neg": (
        NEG_INPUTS,
        [0, 0xFFFF_FFFF, 1, 0x8000_0000, 0xFFFF_FFFE, 0x8000_0001, 0xFFFF_FF9C, 0x2152_4111],
    ),
    "bit_not": (BIT_INPUTS, [~v & U32_MAX for v in BIT_INPUTS]),  # upstream: `!v`
    "popcount": (BIT_INPUTS, [0, 1, 32, 1, 16, 16, 8, 24]),
    "clz": (BIT_INPUTS, [32, 31, 0, 0, 0, 1, 24, 0]),
    "ctz": (BIT_INPUTS, [32, 0, 0, 31, 1, 0, 0, 0]),
    # upstream asserts reverse_bits(1) == 0x80000000 and compares the rest with Rust's
    "reverse_bits": (
        BIT_INPUTS,
        [
            0,
            0x8000_0000,
            0xFFFF_FFFF,
            1,
            0x5555_5555,
            0xAAAA_AAAA,
            0xFF00_0000,
            int(f"{0xDEAD_BEEF:032b}"[::-1], 2),
        ],
    ),
}


@backends
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_u32_matches_upstream(backend, op):
    inputs, expected = UNARY[op]
    got = outputs(unrolled(op, "ui32", "ui32", len(inputs), 1), backend, np.uint32, a=u32(inputs))
    assert got == expected


# ------------------------------------------------- div_zero_shift_mask_parity.rs

DIV_CASES = [(10, 0), (0, 0), (U32_MAX, 0), (123, 0), (100, 7), (0, 5), (U32_MAX, 1), (4096, 4096)]
SHIFT_CASES = [
    (1, 0),
    (1, 31),
    (1, 32),
    (1, 33),
    (0xFF, 36),
    (0xFFFF_FFFF, 32),
    (0x1, 63),
    (0xDEAD_BEEF, 4),
]
DIV_SHIFT = {
    "div": (DIV_CASES, [U32_MAX, U32_MAX, U32_MAX, U32_MAX, 14, 0, U32_MAX, 1]),
    "mod": (DIV_CASES, [0, 0, 0, 0, 2, 0, 0, 0]),
    "shl": (SHIFT_CASES, [1, 0x8000_0000, 1, 2, 0xFF0, 0xFFFF_FFFF, 0x8000_0000, 0xEADB_EEF0]),
    "shr": (SHIFT_CASES, [1, 0, 1, 0, 0xF, 0xFFFF_FFFF, 0, 0x0DEA_DBEE]),
}


@backends
@pytest.mark.parametrize("op", sorted(DIV_SHIFT))
def test_u32_div_zero_and_shift_mask_match_upstream(backend, op):
    pairs, expected = DIV_SHIFT[op]
    a, b = zip(*pairs)
    got = outputs(
        unrolled(op, "ui32", "ui32", len(pairs), 2), backend, np.uint32, a=u32(a), b=u32(b)
    )
    assert got == expected


# ------------------------------------------------- signed_modulo_parity.rs

SIGNED_PAIRS = [(-7, 3), (7, 3), (-8, 3), (100, 7), (-100, 7), (-1, 2), (5, -3), (-2147483648, 3)]
SIGNED = {
    "mod": [-1, 1, -2, 2, -2, -1, 2, -2],
    "div": [-2, 2, -2, 14, -14, 0, -1, -715827882],
}


@backends
@pytest.mark.parametrize("op", sorted(SIGNED))
def test_signed_division_and_modulo_match_rust(backend, op):
    a, b = zip(*SIGNED_PAIRS)
    got = outputs(
        unrolled(op, "si32", "si32", len(SIGNED_PAIRS), 2), backend, np.int32, a=i32(a), b=i32(b)
    )
    assert got == SIGNED[op]


# ------------------------------------------------- saturating_binops_contract.rs

SATURATING = [
    ("saturating_add", U32_MAX, 1, U32_MAX),
    ("saturating_add", 40, 2, 42),
    ("saturating_sub", 0, 1, 0),
    ("saturating_sub", 40, 2, 38),
    ("saturating_mul", U32_MAX, 2, U32_MAX),
    ("saturating_mul", 7, 6, 42),
]


@backends
@pytest.mark.parametrize("op,left,right,expected", SATURATING)
def test_saturating_binops_saturate_not_wrap(backend, op, left, right, expected):
    got = outputs(
        unrolled(op, "ui32", "ui32", 1, 2), backend, np.uint32, a=u32([left]), b=u32([right])
    )
    assert got == [expected]
