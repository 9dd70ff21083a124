"""Every entry of the semantics table, every cast and bitcast, printed to WGSL and
run on lavapipe over edge values (0, -0, extremes, INT_MIN, shifts >= 32, NaN,
infinities, subnormals), agrees with the table's numpy evaluation: exactly,
or, for approximate f32 ops on finite arguments, within the accuracy the WGSL
specification states for the op (`vyre_xdsl.testing.wgsl_accuracy`, not the
budgets of the semantics table under test).

This is what caught naga's ordered f32 `!=` (false on NaN), `sign(NaN)` = 0
and the absolute error of `tanh` near 0.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

wgpu = pytest.importorskip("wgpu")

from vyre_xdsl import semantics  # noqa: E402
from vyre_xdsl.backends.wgsl import compile_module  # noqa: E402
from vyre_xdsl.context import parse_module  # noqa: E402
from vyre_xdsl.testing.wgsl_accuracy import outside  # noqa: E402

from .test_wgsl_execute import execute  # noqa: E402

EDGES = {
    "ui32": np.array(
        [0, 1, 2, 3, 7, 31, 32, 33, 255, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF, 16777217],
        np.uint32,
    ),
    "si32": np.array(
        [0, 1, -1, 2, -2, 7, -7, 31, 32, 33, -(2**31), 2**31 - 1, -123456, 16777217], np.int32
    ),
    "f32": np.array(
        [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1.5,
            2.5,
            -2.5,
            3.7,
            -3.7,
            -0.9,
            1e-30,
            1e30,
            -1e30,
            100.0,
            4294967040.0,
            4294967296.0,
            2147483520.0,
            2147483648.0,
            -2147483904.0,
            np.inf,
            -np.inf,
            np.nan,
            1e-40,
        ],
        np.float32,
    ),
    "i1": np.array([0, 1, 5], np.uint32),  # any non-zero word is true
}
HOST = semantics.HOST_DTYPES
POSITIVE_ONLY = {"log", "log2", "inverse_sqrt", "sqrt", "reciprocal"}


def operand_values(name: str, ty: str) -> np.ndarray:
    values = EDGES[ty]
    if ty == "f32" and semantics.OPS[name].ulp:
        # budgets hold for finite, normal, moderate arguments
        values = values[np.isfinite(values) & (np.abs(values) < 1e4) & (np.abs(values) > 1e-20)]
        if name in POSITIVE_ONLY:
            values = values[values > 0]
    return values


def run_program(device, body: str, operands: list[np.ndarray], types: list[str], result: str):
    n = len(operands[0])
    buffers = "\n".join(
        f"  vyre.buffer @in{k} binding {k} read_only : {t}[{n}]" for k, t in enumerate(types)
    )
    loads = "\n".join(f"  %a{k} = vyre.load @in{k}[%i] : {t}" for k, t in enumerate(types))
    text = (
        f"vyre.program @t workgroup_size [64, 1, 1] {{\n{buffers}\n"
        f"  vyre.buffer @out binding 7 write_only : {result}[{n}]\n"
        f"  %i = vyre.invocation_id x\n{loads}\n{body}\n"
        f"  vyre.store @out[%i] = %r : {result}\n}}\n"
    )
    arrays = {f"in{k}": a for k, a in enumerate(operands)}
    arrays["out"] = np.zeros(n, HOST[result])
    return execute(device, compile_module(parse_module(text)), arrays)["out"]


def registers(values: np.ndarray, ty: str) -> np.ndarray:
    return values != 0 if ty == "i1" else values


def check(name: str, expected: np.ndarray, actual: np.ndarray, result: str, ulp: float, mask=None):
    expected = np.asarray(expected).astype(HOST[result])
    if result == "f32":
        wrong = semantics.ulp_distance(expected, actual) > ulp
    else:
        wrong = expected != actual
    if mask is not None:
        wrong &= mask
    bad = np.flatnonzero(wrong)[:5]
    assert not bad.size, f"{name}: lanes {bad.tolist()} expected {expected[bad]} got {actual[bad]}"


# the 8/16/64-bit integers: tests/dialects/test_integer_types.py; f16, bf16 and f64 need device
# features this plain device lacks, and vectors have no edge-value table here; every op
# on them is checked against independent expectations in conformance/test_conformance_floats.py
# and conformance/test_conformance_vectors.py
TABLE_CASES = [
    (name, ty)
    for name, sem in semantics.OPS.items()
    for ty in sem.types
    if ty in EDGES and ty not in semantics.WIDE_FLOATS and semantics.ELEMENTS[ty].family != "vector"
]


@pytest.mark.parametrize("name,ty", TABLE_CASES, ids=[f"{n}-{t}" for n, t in TABLE_CASES])
def test_table_op_matches_numpy(device, name, ty):
    sem = semantics.OPS[name]
    arity = 2 if sem.kind in ("binary", "compare", "logic") else 1
    values = operand_values(name, ty)
    pairs = list(itertools.product(values, repeat=arity))
    operands = [np.array([p[k] for p in pairs], dtype=HOST[ty]) for k in range(arity)]
    result = sem.result_type(ty)
    args = ", ".join(f"%a{k}" for k in range(arity))
    # the custom format spells the operand type (the result type follows from it)
    actual = run_program(
        device, f"  %r = vyre.{name} {args} : {ty}", operands, [ty] * arity, result
    )
    inputs = [registers(o, ty) for o in operands]
    with np.errstate(all="ignore"):
        expected = sem.evaluate(*inputs)
    mask = None
    if sem.traps is not None and ty == "si32":
        mask = ~np.asarray(sem.traps(*inputs))  # trapping lanes: see test_wgsl_execute
    if result == "f32" and sem.ulp:
        wrong = np.flatnonzero(outside(name, actual, *operands))[:5]
        assert not wrong.size, (
            f"{name}: beyond WGSL's accuracy at lanes {wrong.tolist()}: operands "
            f"{[o[wrong] for o in operands]} got {actual[wrong]}"
        )
        return
    check(name, expected, actual, result, 0.0, mask)


CONVERSIONS = [
    ("cast", s, t) for s, t in sorted(semantics.CAST_PAIRS) if s in EDGES and t in EDGES
] + [("bitcast", s, t) for s in semantics.SCALAR_32_TYPES for t in semantics.SCALAR_32_TYPES]


@pytest.mark.parametrize(
    "op,source,target", CONVERSIONS, ids=[f"{o}-{s}-{t}" for o, s, t in CONVERSIONS]
)
def test_conversion_matches_numpy(device, op, source, target):
    values = EDGES[source]
    actual = run_program(
        device, f"  %r = vyre.{op} %a0 : {source} to {target}", [values], [source], target
    )
    evaluate = semantics.evaluate_cast if op == "cast" else semantics.evaluate_bitcast
    check(op, evaluate(registers(values, source), source, target), actual, target, 0.0)


def test_select_and_fma(device):
    rng = np.random.default_rng(5)
    c = rng.integers(0, 3, 256).astype(np.uint32)
    # positive operands: WGSL's fma need not be fused (lavapipe's is not), so
    # under cancellation it may differ from the exact a * b + c by far more
    # than an ULP; the WGSL bound (two roundings) holds either way
    a = rng.uniform(0.5, 2.0, 256).astype(np.float32)
    b = rng.uniform(0.5, 2.0, 256).astype(np.float32)
    actual = run_program(
        device,
        "  %s = vyre.select %a0, %a1, %a2 : f32\n  %r = vyre.fma %s, %a1, %a2 : f32",
        [c, a, b],
        ["i1", "f32", "f32"],
        "f32",
    )
    chosen = np.where(c != 0, a, b)
    assert not outside("fma", actual, chosen, a, b).any()  # WGSL: inherited from x * y + z
