"""Conformance of the vector types `vector<2xui32>`, `vector<4xui32>` and
`vector<4xf32>`: every op of the semantics table on every vector type it takes,
lane by lane over the edge values of the lane type, `eq`/`ne` (every lane / any
lane), `vyre.from_elements`, `vyre.extract`, select, loads and stores of whole
vectors, and bitcasts (`vector<4xf32>` <-> `vector<4xui32>`, `f64` <->
`vector<2xui32>`).

Expected values come from the plain-Python and float64 references of
test_conformance_ops.py (lane by lane) and from `struct`, never from
`vyre_xdsl.semantics`.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from conformance_support import Case, check, flush, ids, params, program, words
from test_conformance_ops import (
    COMPARE,
    F32_APPROX_UNARY,
    F32_BINARY,
    F32_EDGES,
    F32_EXACT_UNARY,
    U32_EDGES,
    UI32_BINARY,
    UI32_UNARY,
    M,
    f32,
)

VECTORS = {
    "vector<2xui32>": ("ui32", 2),
    "vector<4xui32>": ("ui32", 4),
    "vector<4xf32>": ("f32", 4),
}
LANE_HOST = {"ui32": np.uint32, "f32": np.float32}
REFERENCE_ONLY = ("reference",)

U32_BINARY = dict(UI32_BINARY)
U32_BINARY["saturating_mul"] = lambda a, b: min(a * b, M)
for _fixed_result in ("abs_diff", "mul_high"):  # ui32 results whatever the operands: no vector form
    del U32_BINARY[_fixed_result]

UPSTREAM_APPROX = {
    "acos": (np.arccos, 4, (-1.0, 1.0)),
    "asin": (np.arcsin, 4, (-1.0, 1.0)),
    "atan": (np.arctan, 4, (-100.0, 100.0)),
    "sinh": (np.sinh, 4, (-10.0, 10.0)),
    "cosh": (np.cosh, 4, (-10.0, 10.0)),
}
F32_APPROX = {**F32_APPROX_UNARY, **UPSTREAM_APPROX}


def vectors(values: list, lane: str, lanes: int) -> np.ndarray:
    """`values` (padded with the lane's zero to whole vectors) as an `(n, lanes)` array."""
    values = list(values) + [0] * (-len(values) % lanes)
    return np.array(values, dtype=LANE_HOST[lane]).reshape(-1, lanes)


def binary_program(op: str, ty: str, result: str, n: int) -> str:
    return program(
        f"  %i = vyre.invocation_id x\n  %x = vyre.load @a[%i] : {ty}\n"
        f"  %y = vyre.load @b[%i] : {ty}\n  %r = vyre.{op} %x, %y : {ty}\n"
        f"  vyre.store @out[%i] = %r : {result}",
        f"  vyre.buffer @a binding 0 read_only : {ty}[{n}]\n"
        f"  vyre.buffer @b binding 1 read_only : {ty}[{n}]\n"
        f"  vyre.buffer @out binding 2 write_only : {result}[{n}]",
    )


def unary_program(op: str, ty: str, n: int) -> str:
    return program(
        f"  %i = vyre.invocation_id x\n  %x = vyre.load @a[%i] : {ty}\n"
        f"  %r = vyre.{op} %x : {ty}\n  vyre.store @out[%i] = %r : {ty}",
        f"  vyre.buffer @a binding 0 read_only : {ty}[{n}]\n"
        f"  vyre.buffer @out binding 1 write_only : {ty}[{n}]",
    )


def _pairs(edges: list) -> tuple[list, list]:
    return [x for x in edges for _ in edges], [y for _ in edges for y in edges]


def _lanes(ref, a: np.ndarray, b: np.ndarray | None = None) -> list:
    if b is None:
        return [ref(x) for x in a.reshape(-1).tolist()]
    return [ref(x, y) for x, y in zip(a.reshape(-1).tolist(), b.reshape(-1).tolist())]


def uint_cases(ty: str, lanes: int) -> list[Case]:
    a_values, b_values = _pairs(U32_EDGES)
    a, b = vectors(a_values, "ui32", lanes), vectors(b_values, "ui32", lanes)
    n = a.shape[0]
    cases = []
    for op, ref in U32_BINARY.items():
        want = vectors(_lanes(ref, a, b), "ui32", lanes)
        cases.append(
            Case(f"{op}-{ty}", binary_program(op, ty, ty, n), {"a": a, "b": b}, {"out": want})
        )
    for op, ref in UI32_UNARY.items():
        want = vectors(_lanes(ref, a), "ui32", lanes)
        cases.append(Case(f"{op}-{ty}", unary_program(op, ty, n), {"a": a}, {"out": want}))
    cases += compare_cases(ty, a, b)
    return cases


def compare_cases(ty: str, a: np.ndarray, b: np.ndarray, flushed: bool = False) -> list[Case]:
    """eq: every lane equal; ne: some lane differs. Half the vectors are made equal
    to their partner so that both outcomes occur. `flushed` (f32 lanes): a device
    may compare the lanes with their subnormals flushed to zero (SPEC 3.4)."""
    b = b.copy()
    b[::2] = a[::2]
    n = a.shape[0]

    def want(op: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        every = all if op == "eq" else any
        pairs = zip(x.tolist(), y.tolist())
        return words(every(COMPARE[op](s, t) for s, t in zip(p, q)) for p, q in pairs)

    def lanes_flushed(v: np.ndarray) -> np.ndarray:
        return vectors(flush(v.reshape(-1).tolist()), "f32", 4)

    return [
        Case(
            f"{op}-{ty}",
            binary_program(op, ty, "i1", n),
            {"a": a, "b": b},
            {"out": want(op, a, b)},
            flushed={"out": want(op, lanes_flushed(a), lanes_flushed(b))} if flushed else None,
        )
        for op in ("eq", "ne")
    ]


def float_cases(ty: str) -> list[Case]:
    edges = [f32(x) for x in F32_EDGES]
    a_values, b_values = _pairs(edges)
    a, b = vectors(a_values, "f32", 4), vectors(b_values, "f32", 4)
    n = a.shape[0]
    cases = []
    # a device that flushes subnormals sees these operands (SPEC 3.4)
    fa, fb = (vectors(flush(v.reshape(-1).tolist()), "f32", 4) for v in (a, b))
    for op, ref in F32_BINARY.items():
        want = vectors([f32(v) for v in _lanes(ref, a, b)], "f32", 4)
        flushed = vectors([f32(v) for v in _lanes(ref, fa, fb)], "f32", 4)
        cases.append(
            Case(
                f"{op}-{ty}",
                binary_program(op, ty, ty, n),
                {"a": a, "b": b},
                {"out": want},
                flushed={"out": flushed},
                # WGSL's division accuracy lane by lane, as for `div-f32`
                accuracy="div" if op == "div" else None,
            )
        )
    single = vectors(edges, "f32", 4)
    flushed_single = vectors(flush(single.reshape(-1).tolist()), "f32", 4)
    for op, ref in F32_EXACT_UNARY.items():
        want = vectors([f32(v) for v in _lanes(ref, single)], "f32", 4)
        flushed = vectors([f32(v) for v in _lanes(ref, flushed_single)], "f32", 4)
        program_text = unary_program(op, ty, single.shape[0])
        cases.append(
            Case(
                f"{op}-{ty}",
                program_text,
                {"a": single},
                {"out": want},
                flushed={"out": flushed},
            )
        )
    rng = np.random.default_rng(4)
    for op, (ref, budget, (lo, hi)) in F32_APPROX.items():
        values = rng.uniform(lo, hi, 64).astype(np.float32).reshape(-1, 4)
        with np.errstate(all="ignore"):
            want = ref(values.astype(np.float64)).astype(np.float32)
        cases.append(
            Case(
                f"{op}-{ty}",
                unary_program(op, ty, values.shape[0]),
                {"a": values},
                {"out": want},
                ulp=budget,
                accuracy=op,
            )
        )
    cases += compare_cases(ty, a, b, flushed=True)
    return cases


def lanes_case(ty: str, lane: str, lanes: int) -> Case:
    """Lanes out with `vyre.extract`, reversed, back in with `vyre.from_elements`;
    plus a select between the vector and its reverse, and lane 0 alone."""
    n = 4
    names = [f"%l{k}" for k in range(lanes)]
    body = f"  %i = vyre.invocation_id x\n  %v = vyre.load @a[%i] : {ty}\n"
    body += "".join(f"  {name} = vyre.extract %v[{k}] : {ty}\n" for k, name in enumerate(names))
    body += f"  %r = vyre.from_elements {', '.join(reversed(names))} : {ty}\n"
    body += "  %two = vyre.const 2 : ui32\n  %low = vyre.lt %i, %two : ui32\n"
    body += f"  %s = vyre.select %low, %r, %v : {ty}\n"
    body += f"  vyre.store @out[%i] = %s : {ty}\n  vyre.store @first[%i] = %l0 : {lane}"
    text = program(
        body,
        f"  vyre.buffer @a binding 0 read_only : {ty}[{n}]\n"
        f"  vyre.buffer @out binding 1 write_only : {ty}[{n}]\n"
        f"  vyre.buffer @first binding 2 write_only : {lane}[{n}]",
    )
    a = np.arange(n * lanes).reshape(n, lanes).astype(LANE_HOST[lane]) * 3 + 1
    want = a.copy()
    want[:2] = a[:2, ::-1]
    return Case(
        f"from-elements-extract-{ty}", text, {"a": a}, {"out": want, "first": a[:, 0].copy()}
    )


def vector_bitcast_cases() -> list[Case]:
    """f32 lanes <-> their bits; an f64 <-> its two words (low word first)."""
    floats = np.array([[1.0, -0.0, math.inf, 1e-40], [-2.5, 3.4e38, 0.1, 7.0]], np.float32)
    bits = np.array(
        [[struct.unpack("<I", struct.pack("<f", float(x)))[0] for x in row] for row in floats],
        np.uint32,
    )

    def one(source: str, target: str, a: np.ndarray, want: np.ndarray, name: str) -> Case:
        text = program(
            f"  %i = vyre.invocation_id x\n  %x = vyre.load @a[%i] : {source}\n"
            f"  %r = vyre.bitcast %x : {source} to {target}\n  vyre.store @out[%i] = %r : {target}",
            f"  vyre.buffer @a binding 0 read_only : {source}[{a.shape[0]}]\n"
            f"  vyre.buffer @out binding 1 write_only : {target}[{a.shape[0]}]",
        )
        return Case(name, text, {"a": a}, {"out": want})

    doubles = np.array([1.0, -0.0, 5e-324, math.inf, 1 / 3, -1.7976931348623157e308])
    words64 = np.array(
        [list(struct.unpack("<II", struct.pack("<d", float(x)))) for x in doubles], np.uint32
    )
    return [
        one(
            "vector<4xf32>",
            "vector<4xui32>",
            floats,
            bits,
            "bitcast-vector<4xf32>-to-vector<4xui32>",
        ),
        one(
            "vector<4xui32>",
            "vector<4xf32>",
            bits,
            floats,
            "bitcast-vector<4xui32>-to-vector<4xf32>",
        ),
        one("f64", "vector<2xui32>", doubles, words64, "bitcast-f64-to-vector<2xui32>"),
        one("vector<2xui32>", "f64", words64, doubles, "bitcast-vector<2xui32>-to-f64"),
    ]


def workgroup_case() -> Case:
    """Vectors through workgroup memory: each invocation reads its neighbour's."""
    ty = "vector<4xf32>"
    text = program(
        f"  %i = vyre.invocation_id x\n  %x = vyre.load @a[%i] : {ty}\n"
        f"  vyre.store @w[%i] = %x : {ty}\n  vyre.barrier\n"
        "  %one = vyre.const 1 : ui32\n  %mask = vyre.const 7 : ui32\n"
        "  %j = vyre.add %i, %one : ui32\n  %k = vyre.bit_and %j, %mask : ui32\n"
        f"  %y = vyre.load @w[%k] : {ty}\n  vyre.store @out[%i] = %y : {ty}",
        f"  vyre.buffer @a binding 0 read_only : {ty}[8]\n"
        f"  vyre.buffer @out binding 1 write_only : {ty}[8]\n  vyre.buffer @w workgroup : {ty}[8]",
        workgroup=(8, 1, 1),
    )
    a = np.arange(32, dtype=np.float32).reshape(8, 4) / 4
    return Case("workgroup-vector<4xf32>", text, {"a": a}, {"out": np.roll(a, -1, axis=0)})


CASES: list[Case] = []
for _ty, (_lane, _count) in VECTORS.items():
    CASES += uint_cases(_ty, _count) if _lane == "ui32" else float_cases(_ty)
    CASES.append(lanes_case(_ty, _lane, _count))
CASES += vector_bitcast_cases() + [workgroup_case()]
PARAMS = params(CASES)


@pytest.mark.parametrize(("case", "backend"), PARAMS, ids=ids(PARAMS))
def test_case(case: Case, backend: str):
    check(case, backend)


def test_the_ops_that_take_vectors_are_the_documented_ones():
    """Every binary and unary op of the lane type whose result has the operand
    type, plus eq and ne (docs/language.md, "Vectors")."""
    from vyre_xdsl.semantics import OPS

    takes = {
        "ui32": set(U32_BINARY) | set(UI32_UNARY) | {"eq", "ne"},
        "f32": set(F32_BINARY) | set(F32_EXACT_UNARY) | set(F32_APPROX) | {"eq", "ne"},
    }
    for ty, (lane, _) in VECTORS.items():
        assert {name for name, op in OPS.items() if ty in op.types} == takes[lane], ty


def test_device_vector_division_and_flushes_are_accepted_lane_by_lane():
    """`div-vector<4xf32>` on a GPU is held to WGSL's 2.5 ULP lane by lane (2 ULP
    pass, 3 fail); `sign-vector<4xf32>` accepts 0 for a flushed subnormal lane and
    still rejects a wrong lane."""
    from conformance_support import assert_matches, assert_within_wgsl_accuracy

    case = next(c for c in CASES if c.name == "div-vector<4xf32>")
    want = case.expected["out"]
    up = np.float32(np.inf)
    two_ulp = np.nextafter(np.nextafter(want, up), up)
    for allowed in (want, case.flushed["out"], two_ulp):
        assert_within_wgsl_accuracy(case, allowed, "allowed")
    with pytest.raises(AssertionError, match="beyond WGSL's accuracy"):
        assert_within_wgsl_accuracy(case, np.nextafter(two_ulp, up), "wrong")
    sign = next(c for c in CASES if c.name == "sign-vector<4xf32>")
    want, flushed = sign.expected["out"], sign.flushed["out"]
    assert (flushed != want).any()  # the subnormal lanes
    assert_matches(flushed, want, 0, "flushed", flushed, device=True)
    wrong = flushed.copy()
    wrong[0, 2] = -wrong[0, 2] if wrong[0, 2] != 0 else 1.0
    with pytest.raises(AssertionError, match="more than 0 ULP"):
        assert_matches(wrong, want, 0, "wrong", flushed, device=True)
