"""Conformance: the ops vyre_xdsl took from upstream later — `acos asin atan sinh
cosh`, `unpack4_low/high`, `unpack8_low/high`, `saturating_mul`, `abs_diff` and
`mul_high` on si32 (a ui32 result, upstream's type), and `not`/`and`/`or` on
ui32 (upstream's truthiness: non-zero is true).

Expected values are plain Python integers, or float64 numpy rounded to float32,
written from upstream's definitions (vyre-reference `typed_ops`), never from
`vyre_xdsl.semantics`.
"""

from __future__ import annotations

import numpy as np
import pytest
from conformance_support import Case, check, ids, params, words
from test_conformance_ops import RNG, as_host, binary_program, int_pairs, unary_program

M = 2**32 - 1


def bits(a: int) -> int:
    return a & M


SIGNED_TO_U32 = {
    "abs_diff": lambda a, b: abs(a - b),  # Rust i32::abs_diff -> u32
    "mul_high": lambda a, b: ((a * b) >> 32) & M,  # high word of the signed product, as bits
}

UNSIGNED = {
    "saturating_mul": lambda a, b: min(a * b, M),  # Rust u32::saturating_mul
}

TRUTH = {
    "and": lambda a, b: a != 0 and b != 0,
    "or": lambda a, b: a != 0 or b != 0,
}

UNPACK = {  # (shift, mask): upstream's `unpack_shift_mask`
    "unpack4_low": (0, 0x0F),
    "unpack4_high": (4, 0x0F),
    "unpack8_low": (0, 0xFF),
    "unpack8_high": (24, 0xFF),
}

#: op -> (float64 reference, ULP the interpreter meets here, domain)
F32_UNARY = {
    "acos": (np.arccos, 4, (-1.0, 1.0)),
    "asin": (np.arcsin, 4, (-1.0, 1.0)),
    "atan": (np.arctan, 4, (-100.0, 100.0)),
    "sinh": (np.sinh, 4, (-10.0, 10.0)),
    "cosh": (np.cosh, 4, (-10.0, 10.0)),
}


def cases() -> list[Case]:
    out = []
    for op, ref in SIGNED_TO_U32.items():
        a, b = int_pairs("si32")
        out.append(Case(f"{op}-si32", binary_program(op, "si32", "ui32", len(a)),
                        {"a": as_host(a, "si32"), "b": as_host(b, "si32")},
                        {"out": as_host([ref(x, y) for x, y in zip(a, b)], "ui32")}))
    for op, ref in UNSIGNED.items():
        a, b = int_pairs("ui32")
        a += [0xFFFFFFFF, 65536, 65535, 2]
        b += [2, 65536, 65537, 0x7FFFFFFF]
        out.append(Case(f"{op}-ui32", binary_program(op, "ui32", "ui32", len(a)),
                        {"a": as_host(a, "ui32"), "b": as_host(b, "ui32")},
                        {"out": as_host([ref(x, y) for x, y in zip(a, b)], "ui32")}))
    for op, ref in TRUTH.items():
        a, b = int_pairs("ui32")
        out.append(Case(f"{op}-ui32", binary_program(op, "ui32", "i1", len(a)),
                        {"a": as_host(a, "ui32"), "b": as_host(b, "ui32")},
                        {"out": words(ref(x, y) for x, y in zip(a, b))}))
    a, _ = int_pairs("ui32", 50)
    out.append(Case("not-ui32", unary_program("not", "ui32", "i1", len(a)), {"a": as_host(a, "ui32")},
                    {"out": words(x == 0 for x in a)}))
    for op, (shift, mask) in UNPACK.items():
        for ty in ("ui32", "si32"):
            a, _ = int_pairs(ty, 100)
            out.append(Case(f"{op}-{ty}", unary_program(op, ty, "ui32", len(a)), {"a": as_host(a, ty)},
                            {"out": as_host([(bits(x) >> shift) & mask for x in a], "ui32")}))
    for op, (ref, budget, (lo, hi)) in F32_UNARY.items():
        values = np.concatenate([RNG.uniform(lo, hi, 500), np.array([lo, hi, 0.0, 0.5])]).astype(np.float32)
        expected = ref(values.astype(np.float64)).astype(np.float32)
        out.append(Case(f"{op}-f32", unary_program(op, "f32", "f32", values.size), {"a": values},
                        {"out": expected}, ulp=budget, accuracy=op))
    return out


def special_cases() -> list[Case]:
    """IEEE special values (reference only, as for the other approximate ops)."""
    special = {
        "acos": ([1.0, 2.0, np.nan], [0.0, np.nan, np.nan]),
        "asin": ([0.0, -0.0, -2.0], [0.0, -0.0, np.nan]),
        "atan": ([np.inf, -np.inf, 0.0], [np.pi / 2, -np.pi / 2, 0.0]),
        "sinh": ([0.0, np.inf, -np.inf, 100.0], [0.0, np.inf, -np.inf, np.inf]),
        "cosh": ([0.0, -np.inf, 100.0], [1.0, np.inf, np.inf]),
    }
    return [
        Case(f"{op}-f32-special", unary_program(op, "f32", "f32", len(a)), {"a": np.array(a, np.float32)},
             {"out": np.array(want, np.float32)}, backends=("reference",))
        for op, (a, want) in special.items()
    ]


CASES = cases() + special_cases()
PAIRS = params(CASES)


@pytest.mark.parametrize(("case", "backend"), PAIRS, ids=ids(PAIRS))
def test_upstream_op(case: Case, backend: str):
    check(case, backend)
