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
        out.append(
            Case(
                f"{op}-si32",
                binary_program(op, "si32", "ui32", len(a)),
                {"a": as_host(a, "si32"), "b": as_host(b, "si32")},
                {"out": as_host([ref(x, y) for x, y in zip(a, b)], "ui32")},
            )
        )
    for op, ref in UNSIGNED.items():
        a, b = int_pairs("ui32")
        a += [0xFFFFFFFF, 65536, 65535, 2]
        b += [2, 65536, 65537, 0x7FFFFFFF]
        out.append(
            Case(
                f"{op}-ui32",
                binary_program(op, "ui32", "ui32", len(a)),
                {"a": as_host(a, "ui32"), "b": as_host(b, "ui32")},
                {"out": as_host([ref(x, y) for x, y in zip(a, b)], "ui32")},
            )
        )
    for op, ref in TRUTH.items():
        a, b = int_pairs("ui32")
        out.append(
            Case(
                f"{op}-ui32",
                binary_program(op, "ui32", "i1", len(a)),
                {"a": as_host(a, "ui32"), "b": as_host(b, "ui32")},
                {"out": words(ref(x, y) for x, y in zip(a, b))},
            )
        )
    a, _ = int_pairs("ui32", 50)
    out.append(
        Case(
            "not-ui32",
            unary_program("not", "ui32", "i1", len(a)),
            {"a": as_host(a, "ui32")},
            {"out": words(x == 0 for x in a)},
        )
    )
    for op, (shift, mask) in UNPACK.items():
        for ty in ("ui32", "si32"):
            a, _ = int_pairs(ty, 100)
            out.append(
                Case(
                    f"{op}-{ty}",
                    unary_program(op, ty, "ui32", len(a)),
                    {"a": as_host(a, ty)},
                    {"out": as_host([(bits(x) >> shift) & mask for x in a], "ui32")},
                )
            )
    for op, (ref, budget, (lo, hi)) in F32_UNARY.items():
        values = np.concatenate([RNG.uniform(lo, hi, 500), np.array([lo, hi, 0.0, 0.5])]).astype(
            np.float32
        )
        expected = ref(values.astype(np.float64)).astype(np.float32)
        out.append(
            Case(
                f"{op}-f32",
                unary_program(op, "f32", "f32", values.size),
                {"a": values},
                {"out": expected},
                ulp=budget,
                accuracy=op,
            )
        )
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
        Case(
            f"{op}-f32-special",
            unary_program(op, "f32", "f32", len(a)),
            {"a": np.array(a, np.float32)},
            {"out": np.array(want, np.float32)},
            backends=("reference",),
        )
        for op, (a, want) in special.items()
    ]


def atomic_program(body: str, n: int) -> str:
    from conformance_support import program

    return program(
        "  %i = vyre.invocation_id x\n  %v = vyre.load @v[%i] : ui32\n" + body,
        f"  vyre.buffer @v binding 0 read_only : ui32[{n}]\n"
        f"  vyre.buffer @data binding 1 read_write : ui32[{n}]\n"
        f"  vyre.buffer @old binding 2 write_only : ui32[{n}]",
    )


def atomic_cases() -> list[Case]:
    """fetch_nand (`~(old & v)`, upstream's emitter), compare_exchange_weak and
    memory orderings. Uncontended (one address per lane), or contended with the
    same operand everywhere, so that the outcome does not depend on the order."""
    n = 256
    v = [int(x) for x in RNG.integers(0, 2**32, n)]
    data = [int(x) for x in RNG.integers(0, 2**32, n)]
    out = [
        Case(
            "atomic-fetch-nand-per-lane",
            atomic_program(
                "  %o = vyre.atomic fetch_nand @data[%i], %v : ui32\n  vyre.store @old[%i] = %o : ui32",
                n,
            ),
            {"v": as_host(v, "ui32"), "data": as_host(data, "ui32")},
            {
                "data": as_host([~(d & x) & M for d, x in zip(data, v)], "ui32"),
                "old": as_host(data, "ui32"),
            },
        )
    ]
    # every lane nands address 0 with the same value: f(x) = ~(x & c) applied n times
    c, start = 0x0FF00FF0, 0x12345678
    final = start
    for _ in range(n):
        final = ~(final & c) & M
    out.append(
        Case(
            "atomic-fetch-nand-contended",
            atomic_program(
                "  %z = vyre.const 0 : ui32\n  %c = vyre.const 267390960 : ui32\n"
                "  %o = vyre.atomic fetch_nand acq_rel @data[%z], %c : ui32",
                n,
            ),
            {"v": as_host(v, "ui32"), "data": as_host([start] + [0] * (n - 1), "ui32")},
            {"data": as_host([final] + [0] * (n - 1), "ui32"), "old": as_host([0] * n, "ui32")},
        )
    )
    # compare_exchange_weak: exchanges where data == expected (the reference never
    # fails spuriously; a GPU's weak exchange may, so other backends check shapes)
    expected = [d if k % 3 else d ^ 1 for k, d in enumerate(data)]
    out.append(
        Case(
            "atomic-compare-exchange-weak",
            atomic_program(
                "  %e = vyre.load @old[%i] : ui32\n"
                "  %o = vyre.atomic compare_exchange_weak relaxed @data[%i], %e, %v : ui32\n"
                "  vyre.store @old[%i] = %o : ui32",
                n,
            ).replace("write_only : ui32[256]", "read_write : ui32[256]"),
            {
                "v": as_host(v, "ui32"),
                "data": as_host(data, "ui32"),
                "old": as_host(expected, "ui32"),
            },
            {
                "data": as_host([x if d == e else d for d, e, x in zip(data, expected, v)], "ui32"),
                "old": as_host(data, "ui32"),
            },
            backends=("reference",),
        )
    )
    # every ordering gives the same (sequential) result on the reference and the
    # same relaxed atomicity on WGSL: a counter
    for ordering in ("relaxed", "acquire", "release", "acq_rel", "seq_cst"):
        out.append(
            Case(
                f"atomic-add-{ordering}",
                atomic_program(
                    f"  %z = vyre.const 0 : ui32\n  %one = vyre.const 1 : ui32\n"
                    f"  %o = vyre.atomic add {ordering} @data[%z], %one : ui32",
                    n,
                ),
                {"v": as_host(v, "ui32"), "data": as_host([0] * n, "ui32")},
                {"data": as_host([n] + [0] * (n - 1), "ui32"), "old": as_host([0] * n, "ui32")},
            )
        )
    return out


CASES = cases() + special_cases() + atomic_cases()
PAIRS = params(CASES)


@pytest.mark.parametrize(("case", "backend"), PAIRS, ids=ids(PAIRS))
def test_upstream_op(case: Case, backend: str):
    check(case, backend)
