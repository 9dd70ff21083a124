"""Conformance: every pure op of the semantics table on every type it takes, at the
edge values of SPEC section 3.4, plus select, fma, cast, bitcast and const.

Expected values come from plain Python integers (integer ops) and float64 numpy or
`math` rounded to float32 (f32 ops), one element at a time: an implementation
independent of `vyre_xdsl.semantics`.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np
import pytest
from conformance_support import (
    Case,
    assert_within_wgsl_accuracy,
    check,
    flush,
    flush_array,
    i32,
    ids,
    params,
    program,
    u32,
    words,
)

from vyre_xdsl.semantics import OPS, PACKED_TYPES, WIDE_INT_TYPES

M = 2**32 - 1
RNG = np.random.default_rng(20261202)

U32_EDGES = [
    0,
    1,
    2,
    3,
    7,
    31,
    32,
    33,
    64,
    255,
    65535,
    65536,
    12345,
    0x7FFFFFFF,
    0x80000000,
    0x80000001,
    0xFFFFFFFE,
    0xFFFFFFFF,
]
I32_EDGES = [
    0,
    1,
    -1,
    2,
    -2,
    3,
    7,
    -7,
    31,
    32,
    33,
    -32,
    12345,
    -12345,
    2**31 - 1,
    -(2**31),
    -(2**31) + 1,
]
F32_EDGES = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    1.5,
    2.5,
    -2.5,
    3.0,
    0.1,
    1e-30,
    1e30,
    3.4e38,
    -3.4e38,
    1e-45,
    math.inf,
    -math.inf,
    123.456,
    -7.25,
]
# NaN cases run on the reference backend only: WGSL lets implementations assume no NaN
# (lavapipe folds `x != x` to false), so only the interpreter pins NaN propagation down.
NAN_A = [math.nan, 1.0, math.nan, -math.inf, 0.0, math.nan]
NAN_B = [1.0, math.nan, math.nan, math.nan, math.nan, -0.0]
REFERENCE_ONLY = ("reference",)


def wrap_i32(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


def bits32(v: int) -> int:
    return v & M


def f32(x: float) -> float:
    """Round a Python float (double) to the nearest float32, as a Python float."""
    with np.errstate(over="ignore"):
        return float(np.float32(x))


def f32_from_bits(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", b & M))[0]


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


# ----------------------------------------------------------------- integer references


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def clz(a: int) -> int:
    return 32 - bits32(a).bit_length()


def ctz(a: int) -> int:
    a = bits32(a)
    return 32 if a == 0 else (a & -a).bit_length() - 1


def rev(a: int) -> int:
    return int(f"{bits32(a):032b}"[::-1], 2)


def rotl(a: int, s: int) -> int:
    s &= 31
    return ((a << s) | (a >> (32 - s))) & M


def sign(a):
    return (a > 0) - (a < 0)


UI32_BINARY = {
    "add": lambda a, b: (a + b) & M,
    "sub": lambda a, b: (a - b) & M,
    "mul": lambda a, b: (a * b) & M,
    "div": lambda a, b: M if b == 0 else a // b,
    "mod": lambda a, b: 0 if b == 0 else a % b,
    "min": min,
    "max": max,
    "bit_and": lambda a, b: a & b,
    "bit_or": lambda a, b: a | b,
    "bit_xor": lambda a, b: a ^ b,
    "shl": lambda a, b: (a << (b & 31)) & M,
    "shr": lambda a, b: a >> (b & 31),
    "abs_diff": lambda a, b: abs(a - b),
    "saturating_add": lambda a, b: min(a + b, M),
    "saturating_sub": lambda a, b: max(a - b, 0),
    "mul_high": lambda a, b: (a * b) >> 32,
    "rotate_left": rotl,
    "rotate_right": lambda a, b: rotl(a, 32 - (b & 31)),
}

SI32_BINARY = {
    "add": lambda a, b: wrap_i32(a + b),
    "sub": lambda a, b: wrap_i32(a - b),
    "mul": lambda a, b: wrap_i32(a * b),
    "div": lambda a, b: wrap_i32(trunc_div(a, b)),
    "mod": lambda a, b: wrap_i32(a - b * trunc_div(a, b)),
    "min": min,
    "max": max,
    "bit_and": lambda a, b: a & b,
    "bit_or": lambda a, b: a | b,
    "bit_xor": lambda a, b: a ^ b,
    "shl": lambda a, b: wrap_i32(a << (b & 31)),
    "shr": lambda a, b: a >> (b & 31),  # arithmetic shift
}

COMPARE = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}

UI32_UNARY = {
    "bit_not": lambda a: ~a & M,
    "popcount": lambda a: bin(a).count("1"),
    "clz": clz,
    "ctz": ctz,
    "reverse_bits": rev,
    "abs": lambda a: a,
    "neg": lambda a: (-a) & M,
}

SI32_UNARY = {
    "neg": lambda a: wrap_i32(-a),
    "bit_not": lambda a: ~a,
    "popcount": lambda a: bin(bits32(a)).count("1"),
    "clz": clz,
    "ctz": ctz,
    "reverse_bits": lambda a: wrap_i32(rev(a)),
    "abs": lambda a: wrap_i32(abs(a)),
    "sign": sign,
}

# ----------------------------------------------------------------- f32 references (exact)


def f_min(a, b):
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return min(a, b)


def f_max(a, b):
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return max(a, b)


def f_div(a, b):
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _ieee(op):
    """op on two doubles, with IEEE inf/nan results instead of Python exceptions."""

    def run(a, b):
        with np.errstate(all="ignore"):
            return float(op(np.float64(a), np.float64(b)))

    return run


F32_BINARY = {
    "add": _ieee(np.add),
    "sub": _ieee(np.subtract),
    "mul": _ieee(np.multiply),
    "div": f_div,
    "min": f_min,
    "max": f_max,
}


def round_half_even(x):
    if math.isinf(x) or math.isnan(x):
        return x
    return math.copysign(float(round(x)), x)


def _finite_only(fn):
    """fn (floor, ceil, trunc) on a double; inf/nan unchanged; a zero result keeps x's sign."""

    def run(x):
        if math.isinf(x) or math.isnan(x):
            return x
        r = float(fn(x))
        return math.copysign(r, x) if r == 0 else r

    return run


F32_EXACT_UNARY = {
    "neg": lambda a: -a,
    "abs": abs,
    "sign": lambda a: a if math.isnan(a) or a == 0.0 else math.copysign(1.0, a),
    "floor": _finite_only(math.floor),
    "ceil": _finite_only(math.ceil),
    "round": round_half_even,
    "trunc": _finite_only(math.trunc),
}

#: op -> (float64 numpy reference, ULP budget this test states for the interpreter, domain)
F32_APPROX_UNARY = {
    "sqrt": (np.sqrt, 1, (0.0, 1e6)),
    "inverse_sqrt": (lambda x: 1.0 / np.sqrt(x), 2, (1e-6, 1e6)),
    "reciprocal": (lambda x: 1.0 / x, 1, (-1e6, 1e6)),
    "exp": (np.exp, 4, (-87.0, 88.0)),
    "exp2": (np.exp2, 4, (-126.0, 127.0)),
    "log": (np.log, 4, (1e-6, 1e6)),
    "log2": (np.log2, 4, (1e-6, 1e6)),
    "sin": (np.sin, 4, (-100.0, 100.0)),
    "cos": (np.cos, 4, (-100.0, 100.0)),
    "tan": (np.tan, 4, (-1.5, 1.5)),
    "tanh": (np.tanh, 4, (-10.0, 10.0)),
}

F32_PREDICATES = {"is_nan": math.isnan, "is_inf": math.isinf, "is_finite": math.isfinite}


# ----------------------------------------------------------------- case builders

HOST = {"ui32": np.uint32, "si32": np.int32, "f32": np.float32, "i1": np.uint32}


def as_host(values, ty: str) -> np.ndarray:
    if ty == "ui32":
        return u32(values)
    if ty == "si32":
        return i32(values)
    if ty == "i1":
        return words(values)
    return np.array(values, dtype=np.float32)


def binary_program(op: str, ty: str, result: str, n: int) -> str:
    buffers = (
        f"  vyre.buffer @a binding 0 read_only : {ty}[{n}]\n"
        f"  vyre.buffer @b binding 1 read_only : {ty}[{n}]\n"
        f"  vyre.buffer @out binding 2 write_only : {result}[{n}]"
    )
    body = (
        "  %i = vyre.invocation_id x\n"
        f"  %x = vyre.load @a[%i] : {ty}\n"
        f"  %y = vyre.load @b[%i] : {ty}\n"
        f"  %r = vyre.{op} %x, %y : {ty}\n"
        f"  vyre.store @out[%i] = %r : {result}"
    )
    return program(body, buffers)


def unary_program(op: str, ty: str, result: str, n: int) -> str:
    buffers = (
        f"  vyre.buffer @a binding 0 read_only : {ty}[{n}]\n"
        f"  vyre.buffer @out binding 1 write_only : {result}[{n}]"
    )
    body = (
        "  %i = vyre.invocation_id x\n"
        f"  %x = vyre.load @a[%i] : {ty}\n"
        f"  %r = vyre.{op} %x : {ty}\n"
        f"  vyre.store @out[%i] = %r : {result}"
    )
    return program(body, buffers)


def int_pairs(ty: str, count: int = 300) -> tuple[list[int], list[int]]:
    edges = U32_EDGES if ty == "ui32" else I32_EDGES
    a = [x for x in edges for _ in edges]
    b = [y for _ in edges for y in edges]
    lo, hi = (0, 2**32) if ty == "ui32" else (-(2**31), 2**31)
    a += [int(v) for v in RNG.integers(lo, hi, count)]
    b += [int(v) for v in RNG.integers(lo, hi, count)]
    return a, b


def f32_values(count: int = 200) -> list[float]:
    randoms = RNG.standard_normal(count) * 10.0 ** RNG.integers(-20, 20, count)
    return [f32(x) for x in F32_EDGES] + [f32(x) for x in randoms.astype(np.float32)]


def binary_cases() -> list[Case]:
    cases = []
    for ty, table in (("ui32", UI32_BINARY), ("si32", SI32_BINARY)):
        for op, ref in table.items():
            a, b = int_pairs(ty)
            if ty == "si32" and op in (
                "div",
                "mod",
            ):  # the trapping pairs are in test_conformance_traps
                a, b = zip(
                    *[(x, y) for x, y in zip(a, b) if y != 0 and not (x == -(2**31) and y == -1)]
                )
                # whole workgroups: a lane past the end would load b = 0 and trap
                a, b = list(a) + [1] * (-len(a) % 64), list(b) + [1] * (-len(b) % 64)
            expected = as_host([ref(x, y) for x, y in zip(a, b)], ty)
            cases.append(
                Case(
                    f"{op}-{ty}",
                    binary_program(op, ty, ty, len(a)),
                    {"a": as_host(a, ty), "b": as_host(b, ty)},
                    {"out": expected},
                )
            )
        for op, ref in COMPARE.items():
            a, b = int_pairs(ty)
            cases.append(
                Case(
                    f"{op}-{ty}",
                    binary_program(op, ty, "i1", len(a)),
                    {"a": as_host(a, ty), "b": as_host(b, ty)},
                    {"out": words(ref(x, y) for x, y in zip(a, b))},
                )
            )
    values = f32_values(60)
    a = [x for x in values for _ in values]
    b = [y for _ in values for y in values]
    # a device that flushes subnormals sees these operands (SPEC 3.4)
    fa, fb = flush(a), flush(b)
    for op, ref in F32_BINARY.items():
        expected = np.array([f32(ref(x, y)) for x, y in zip(a, b)], dtype=np.float32)
        flushed = np.array([f32(ref(x, y)) for x, y in zip(fa, fb)], dtype=np.float32)
        cases.append(
            Case(
                f"{op}-f32",
                binary_program(op, "f32", "f32", len(a)),
                {"a": as_host(a, "f32"), "b": as_host(b, "f32")},
                {"out": expected},
                flushed={"out": flushed},
                # WGSL's division is 2.5 ULP for divisors in [2^-126, 2^126], unstated
                # outside; GPUs use it (the H200 does), lavapipe divides exactly
                accuracy="div" if op == "div" else None,
            )
        )
    for op, ref in COMPARE.items():
        cases.append(
            Case(
                f"{op}-f32",
                binary_program(op, "f32", "i1", len(a)),
                {"a": as_host(a, "f32"), "b": as_host(b, "f32")},
                {"out": words(ref(x, y) for x, y in zip(a, b))},
                flushed={"out": words(ref(x, y) for x, y in zip(fa, fb))},
            )
        )
    for op, ref in F32_BINARY.items():  # IEEE: NaN in, NaN out (min/max: the other operand)
        cases.append(
            Case(
                f"{op}-f32-nan",
                binary_program(op, "f32", "f32", len(NAN_A)),
                {"a": as_host(NAN_A, "f32"), "b": as_host(NAN_B, "f32")},
                {"out": np.array([f32(ref(x, y)) for x, y in zip(NAN_A, NAN_B)], np.float32)},
                backends=REFERENCE_ONLY,
            )
        )
    for op, ref in COMPARE.items():  # IEEE: every comparison with NaN is false except ne
        cases.append(
            Case(
                f"{op}-f32-nan",
                binary_program(op, "f32", "i1", len(NAN_A)),
                {"a": as_host(NAN_A, "f32"), "b": as_host(NAN_B, "f32")},
                {"out": words(ref(x, y) for x, y in zip(NAN_A, NAN_B))},
                backends=REFERENCE_ONLY,
            )
        )
    bools = [False, True, False, True]
    other = [False, False, True, True]
    logic = {
        "and": lambda x, y: x and y,
        "or": lambda x, y: x or y,
        "eq": lambda x, y: x == y,
        "ne": lambda x, y: x != y,
    }
    for op, ref in logic.items():
        cases.append(
            Case(
                f"{op}-i1",
                binary_program(op, "i1", "i1", 4),
                {"a": words(bools), "b": words(other)},
                {"out": words(ref(x, y) for x, y in zip(bools, other))},
            )
        )
    return cases


def unary_cases() -> list[Case]:
    cases = []
    for ty, table in (("ui32", UI32_UNARY), ("si32", SI32_UNARY)):
        edges = U32_EDGES if ty == "ui32" else I32_EDGES
        lo, hi = (0, 2**32) if ty == "ui32" else (-(2**31), 2**31)
        a = edges + [int(v) for v in RNG.integers(lo, hi, 300)]
        for op, ref in table.items():
            cases.append(
                Case(
                    f"{op}-{ty}",
                    unary_program(op, ty, ty, len(a)),
                    {"a": as_host(a, ty)},
                    {"out": as_host([ref(x) for x in a], ty)},
                )
            )
    a = f32_values()
    for op, ref in F32_EXACT_UNARY.items():
        cases.append(
            Case(
                f"{op}-f32",
                unary_program(op, "f32", "f32", len(a)),
                {"a": as_host(a, "f32")},
                {"out": np.array([f32(ref(x)) for x in a], dtype=np.float32)},
                flushed={"out": np.array([f32(ref(x)) for x in flush(a)], dtype=np.float32)},
            )
        )
        cases.append(
            Case(
                f"{op}-f32-nan",
                unary_program(op, "f32", "f32", 2),
                {"a": as_host([math.nan, -math.nan], "f32")},
                {"out": as_host([math.nan, math.nan], "f32")},
                backends=REFERENCE_ONLY,
            )
        )
    a = a + [math.nan, -math.nan]  # the predicates test bits, which every backend keeps
    for op, ref in F32_PREDICATES.items():
        cases.append(
            Case(
                f"{op}-f32",
                unary_program(op, "f32", "i1", len(a)),
                {"a": as_host(a, "f32")},
                {"out": words(ref(x) for x in a)},
            )
        )
    for op, (ref, budget, (lo, hi)) in F32_APPROX_UNARY.items():
        values = np.concatenate([RNG.uniform(lo, hi, 500), np.array([lo, hi, 1.0])]).astype(
            np.float32
        )
        with np.errstate(all="ignore"):
            expected = ref(values.astype(np.float64)).astype(np.float32)
        # `budget` is what the interpreter meets; other backends get WGSL's stated accuracy
        cases.append(
            Case(
                f"{op}-f32",
                unary_program(op, "f32", "f32", values.size),
                {"a": values},
                {"out": expected},
                ulp=budget,
                accuracy=op,
            )
        )
    cases.append(
        Case(
            "not-i1",
            unary_program("not", "i1", "i1", 2),
            {"a": words([False, True])},
            {"out": words([True, False])},
        )
    )
    return cases


def approx_edge_cases() -> list[Case]:
    """IEEE special values of the approximate ops, which must be exact."""
    special = {
        "sqrt": (
            [0.0, -0.0, math.inf, -1.0, math.nan, 4.0],
            [0.0, -0.0, math.inf, math.nan, math.nan, 2.0],
        ),
        "inverse_sqrt": ([0.0, math.inf, -1.0, 4.0], [math.inf, 0.0, math.nan, 0.5]),
        "reciprocal": ([0.0, -0.0, math.inf, 2.0], [math.inf, -math.inf, 0.0, 0.5]),
        "exp": (
            [0.0, -math.inf, math.inf, 100.0, -200.0, math.nan],
            [1.0, 0.0, math.inf, math.inf, 0.0, math.nan],
        ),
        "exp2": ([0.0, 10.0, -math.inf, 200.0], [1.0, 1024.0, 0.0, math.inf]),
        "log": ([1.0, 0.0, -1.0, math.inf], [0.0, -math.inf, math.nan, math.inf]),
        "log2": ([1.0, 1024.0, 0.0, -1.0], [0.0, 10.0, -math.inf, math.nan]),
        "sin": ([0.0, math.inf, math.nan], [0.0, math.nan, math.nan]),
        "cos": ([0.0, -math.inf], [1.0, math.nan]),
        "tan": ([0.0, math.inf], [0.0, math.nan]),
        "tanh": ([0.0, 100.0, -100.0, math.inf], [0.0, 1.0, -1.0, 1.0]),
    }
    return [
        Case(
            f"{op}-f32-special",
            unary_program(op, "f32", "f32", len(a)),
            {"a": as_host(a, "f32")},
            {"out": as_host(want, "f32")},
            backends=REFERENCE_ONLY,
        )
        for op, (a, want) in special.items()
    ]


def test_every_table_op_is_covered():
    from test_conformance_floats import CASES as FLOAT_CASES
    from test_conformance_upstream_ops import CASES as UPSTREAM_CASES
    from test_conformance_vectors import CASES as VECTOR_CASES

    names = {case.name for case in CASES + UPSTREAM_CASES + FLOAT_CASES + VECTOR_CASES}
    # the 8/16/64-bit integers: every op at edge values in tests/test_integer_types.py
    elsewhere = (*PACKED_TYPES, *WIDE_INT_TYPES)
    missing = [
        f"{op}-{ty}"
        for op, sem in OPS.items()
        for ty in sem.types
        if f"{op}-{ty}" not in names and ty not in elsewhere
    ]
    assert not missing, missing


# ----------------------------------------------------------------- select, fma, casts, consts


def select_case() -> Case:
    n = 8
    c = [True, False, True, False, True, True, False, False]
    a = list(range(n))
    b = [100 + v for v in range(n)]
    text = program(
        "  %i = vyre.invocation_id x\n"
        "  %c = vyre.load @c[%i] : i1\n  %x = vyre.load @a[%i] : si32\n  %y = vyre.load @b[%i] : si32\n"
        "  %r = vyre.select %c, %x, %y : si32\n  vyre.store @out[%i] = %r : si32",
        f"  vyre.buffer @c binding 0 read_only : i1[{n}]\n  vyre.buffer @a binding 1 read_only : si32[{n}]\n"
        f"  vyre.buffer @b binding 2 read_only : si32[{n}]\n  vyre.buffer @out binding 3 write_only : si32[{n}]",
    )
    return Case(
        "select-si32",
        text,
        {"c": words(c), "a": i32(a), "b": i32(b)},
        {"out": i32([x if k else y for k, x, y in zip(c, a, b)])},
    )


def exact_fma(a: float, b: float, c: float) -> float:
    if not all(math.isfinite(v) for v in (a, b, c)):
        with np.errstate(all="ignore"):
            return float(np.float64(a) * np.float64(b) + np.float64(c))
    return f32(float(Fraction(a) * Fraction(b) + Fraction(c)))


def fma_program(n: int) -> str:
    return program(
        "  %i = vyre.invocation_id x\n"
        "  %x = vyre.load @a[%i] : f32\n  %y = vyre.load @b[%i] : f32\n  %z = vyre.load @c[%i] : f32\n"
        "  %r = vyre.fma %x, %y, %z : f32\n  vyre.store @out[%i] = %r : f32",
        f"  vyre.buffer @a binding 0 read_only : f32[{n}]\n  vyre.buffer @b binding 1 read_only : f32[{n}]\n"
        f"  vyre.buffer @c binding 2 read_only : f32[{n}]\n  vyre.buffer @out binding 3 write_only : f32[{n}]",
    )


def fma_cases() -> list[Case]:
    """Random operands with mixed signs (cancellation) and cases where only a fused
    multiply-add is exact: reference only, since WGSL's fma need not be fused. Positive
    operands (no cancellation) on every backend, within the table's budget."""
    n = 400
    a, b, c = (RNG.standard_normal(n).astype(np.float32) for _ in range(3))
    a[:3] = [1.0 + 2**-23, np.inf, 3.0]
    b[:3] = [1.0 - 2**-23, 0.0, 1e30]
    c[:3] = [-1.0, 1.0, -3e30]
    positive = [np.abs(v) for v in (a[3:], b[3:], c[3:])]
    cases = []
    for name, (x, y, z), backends in (
        ("fma-f32", (a, b, c), REFERENCE_ONLY),
        ("fma-f32-positive", positive, None),
    ):
        expected = np.array(
            [f32(exact_fma(float(p), float(q), float(r))) for p, q, r in zip(x, y, z)], np.float32
        )
        cases.append(
            Case(
                name,
                fma_program(x.size),
                {"a": x, "b": y, "c": z},
                {"out": expected},
                ulp=1,
                accuracy="fma",
                backends=backends,
            )
        )
    return cases


CAST_SOURCES = {
    "ui32": [0, 1, 2, 255, 2**24 + 1, 2**31, 0xFFFFFFFF, 123456789],
    "si32": [0, 1, -1, -2, 2**24 + 1, -(2**31), 2**31 - 1, -123456789],
    "f32": [
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.9,
        -1.9,
        2.5,
        1e10,
        -1e10,
        4294967040.0,
        4294967296.0,
        2147483520.0,
        2147483648.0,
        -2147483648.0,
        -3e9,
        math.inf,
        -math.inf,
    ],
    "i1": [False, True],
}


def cast_value(x, source: str, target: str):
    """Numeric conversion, per SPEC: f32 -> int is Rust's saturating `as` (truncate,
    NaN -> 0, beyond the range -> the type's min/max); int <-> int keeps the bits;
    -> i1 is != 0."""
    if source == target:
        return x
    if target == "i1":
        return x != 0
    if source == "i1":
        return int(x) if target != "f32" else float(x)
    if source == "f32":
        if math.isnan(x):
            return 0
        lo, hi = (0, 2**32 - 1) if target == "ui32" else (-(2**31), 2**31 - 1)
        if math.isinf(x):
            return hi if x > 0 else lo
        return min(max(math.trunc(x), lo), hi)
    if target == "f32":
        return f32(float(x))
    return x & M if target == "ui32" else wrap_i32(x)


def cast_cases() -> list[Case]:
    cases = []
    for source, values in CAST_SOURCES.items():
        for target in CAST_SOURCES:
            n = len(values)
            text = program(
                "  %i = vyre.invocation_id x\n"
                f"  %x = vyre.load @a[%i] : {source}\n"
                f"  %r = vyre.cast %x : {source} to {target}\n"
                f"  vyre.store @out[%i] = %r : {target}",
                f"  vyre.buffer @a binding 0 read_only : {source}[{n}]\n"
                f"  vyre.buffer @out binding 1 write_only : {target}[{n}]",
            )
            expected = as_host([cast_value(x, source, target) for x in values], target)
            cases.append(
                Case(
                    f"cast-{source}-to-{target}",
                    text,
                    {"a": as_host(values, source)},
                    {"out": expected},
                )
            )
    for target in CAST_SOURCES:  # NaN: 0 for integers, true for i1 (reference only, see NAN_A)
        text = program(
            f"  %i = vyre.invocation_id x\n  %x = vyre.load @a[%i] : f32\n"
            f"  %r = vyre.cast %x : f32 to {target}\n  vyre.store @out[%i] = %r : {target}",
            f"  vyre.buffer @a binding 0 read_only : f32[1]\n  vyre.buffer @out binding 1 write_only : {target}[1]",
        )
        cases.append(
            Case(
                f"cast-f32-nan-to-{target}",
                text,
                {"a": as_host([math.nan], "f32")},
                {"out": as_host([cast_value(math.nan, "f32", target)], target)},
                backends=REFERENCE_ONLY,
            )
        )
    return cases


def bitcast_cases() -> list[Case]:
    bit_patterns = [
        0,
        1,
        0x3F800000,
        0xBF800000,
        0x7F800000,
        0xFF800000,
        0x7FC00000,
        0x80000000,
        0x00000001,
        0xFFFFFFFF,
        0x12345678,
    ]
    as_type = {
        "ui32": lambda b: b,
        "si32": wrap_i32,
        "f32": f32_from_bits,
    }
    cases = []
    for source in as_type:
        for target in as_type:
            n = len(bit_patterns)
            text = program(
                "  %i = vyre.invocation_id x\n"
                f"  %x = vyre.load @a[%i] : {source}\n"
                f"  %r = vyre.bitcast %x : {source} to {target}\n"
                f"  vyre.store @out[%i] = %r : {target}",
                f"  vyre.buffer @a binding 0 read_only : {source}[{n}]\n"
                f"  vyre.buffer @out binding 1 write_only : {target}[{n}]",
            )
            inputs = as_host([as_type[source](b) for b in bit_patterns], source)
            expected = as_host([as_type[target](b) for b in bit_patterns], target)
            if target == "f32":  # compare bit patterns: NaN payloads must survive
                expected = expected.view(np.uint32)
            cases.append(
                Case(f"bitcast-{source}-to-{target}", text, {"a": inputs}, {"out": expected})
            )
    return cases


def run_bitcast(case: Case, backend: str):
    import vyre_xdsl

    out = vyre_xdsl.run(case.text, case.inputs, backend=backend)["out"]
    return out.view(np.uint32) if out.dtype == np.float32 else out


def const_case() -> Case:
    literals = [
        ("7", "ui32", 7),
        ("4294967295", "ui32", M),
        ("-3", "si32", -3),
        ("-2147483648", "si32", -(2**31)),
        ("1.5", "f32", 1.5),
        ("-0.0", "f32", -0.0),
        ("0x7F800000", "f32", math.inf),
        ("0xFF800000", "f32", -math.inf),
        ("true", "i1", True),
        ("false", "i1", False),
    ]
    buffers, body, expected, inputs = [], ["  %z = vyre.const 0 : ui32"], {}, {}
    for k, (text, ty, value) in enumerate(literals):
        buffers.append(f"  vyre.buffer @o{k} binding {k} write_only : {ty}[1]")
        body.append(f"  %c{k} = vyre.const {text} : {ty}")
        body.append(f"  vyre.store @o{k}[%z] = %c{k} : {ty}")
        expected[f"o{k}"] = as_host([value], ty)
    return Case(
        "const-literals", program("\n".join(body), "\n".join(buffers), (1, 1, 1)), inputs, expected
    )


def nan_const_case() -> Case:
    text = program(
        "  %z = vyre.const 0 : ui32\n  %c = vyre.const 0x7FC00001 : f32\n"
        "  %b = vyre.bitcast %c : f32 to ui32\n  vyre.store @o[%z] = %b : ui32",
        "  vyre.buffer @o binding 0 write_only : ui32[1]",
        (1, 1, 1),
    )
    return Case("const-nan-payload", text, {}, {"o": u32([0x7FC00001])})


def f32_stays_f32_case() -> Case:
    """(a + b) - a in f32 loses b when a is large; in float64 it would not."""
    text = program(
        "  %i = vyre.invocation_id x\n  %x = vyre.load @a[%i] : f32\n  %y = vyre.load @b[%i] : f32\n"
        "  %s = vyre.add %x, %y : f32\n  %d = vyre.sub %s, %x : f32\n"
        "  %p = vyre.mul %x, %x : f32\n  %q = vyre.div %p, %x : f32\n"
        "  vyre.store @d[%i] = %d : f32\n  vyre.store @q[%i] = %q : f32",
        "  vyre.buffer @a binding 0 read_only : f32[3]\n  vyre.buffer @b binding 1 read_only : f32[3]\n"
        "  vyre.buffer @d binding 2 write_only : f32[3]\n  vyre.buffer @q binding 3 write_only : f32[3]",
    )
    a = np.array([1e8, 2.0**24, 1e30], np.float32)
    b = np.array([1.0, 1.0, 1.0], np.float32)
    # reference only: GPU compilers may reassociate (a + b) - a into b (SPEC section 3.4)
    return Case(
        "f32-never-float64",
        text,
        {"a": a, "b": b},
        {
            "d": np.array([0.0, 0.0, 0.0], np.float32),  # float64 would give 1, 1, 0
            "q": np.array([1e8, 2.0**24, np.inf], np.float32),
        },  # float64: 1e30 for the last
        backends=REFERENCE_ONLY,
    )


CASES = (
    binary_cases()
    + unary_cases()
    + approx_edge_cases()
    + [select_case()]
    + fma_cases()
    + cast_cases()
    + [const_case(), nan_const_case(), f32_stays_f32_case()]
)
PAIRS = params(CASES)


@pytest.mark.parametrize(("case", "backend"), PAIRS, ids=ids(PAIRS))
def test_op(case: Case, backend: str):
    check(case, backend)


BITCASTS = params(bitcast_cases())


@pytest.mark.parametrize(("case", "backend"), BITCASTS, ids=ids(BITCASTS))
def test_bitcast_keeps_bits(case: Case, backend: str):
    np.testing.assert_array_equal(run_bitcast(case, backend), case.expected["out"])


def test_device_division_is_held_to_wgsl_accuracy():
    """On a GPU `div-f32` is held to WGSL's 2.5 ULP (where WGSL states it), with
    subnormal operands or results possibly flushed; 3 ULP or a relative 1e-4 fail."""
    case = next(c for c in CASES if c.name == "div-f32")
    want = case.expected["out"]
    up = np.float32(np.inf)
    two_ulp = np.nextafter(np.nextafter(want, up), up)
    for allowed in (want, case.flushed["out"], two_ulp, flush_array(want)):
        assert_within_wgsl_accuracy(case, allowed, "allowed")
    for wrong in (np.nextafter(two_ulp, up), (want * np.float32(1.0001)).astype(np.float32)):
        with pytest.raises(AssertionError, match="beyond WGSL's accuracy"):
            assert_within_wgsl_accuracy(case, wrong, "wrong")
