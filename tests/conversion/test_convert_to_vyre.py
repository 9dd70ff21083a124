"""Standard MLIR in (`convert-to-vyre`): modules of func/arith/math/scf/memref/linalg
run on the reference interpreter and on wgpu (lavapipe) with numpy's results.

Expected values come from numpy (or plain Python loops), never from the
converter. Float results are compared with a stated tolerance (SPEC §3.4: GPU
compilers may contract and the approximate ops carry ULP budgets); integer
results exactly. Before `convert-to-vyre` existed every module here was refused
("'func.func' is not a 'vyre.program'").
"""

from __future__ import annotations

import numpy as np
import pytest

from vyre_xdsl import run
from vyre_xdsl.api import fuse_module, parse
from vyre_xdsl.diagnostics import VyreDiagnostic, VyreError
from vyre_xdsl.dialects.vyre import ProgramOp

from ..support import EXAMPLES

BACKENDS = ("reference", "wgpu")
RTOL = 2e-6  # a few f32 ULP: contraction, and the budgets of exp/log/sin/…


def parallel_1d(n: int, body: str, args: str) -> str:
    """A function whose one scf.parallel runs `body` for %i in 0..n."""
    return f"""
func.func @f({args}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {n} : index
  "scf.parallel"(%c0, %n, %c1) <{{operandSegmentSizes = array<i32: 1, 1, 1, 0>}}> ({{
  ^bb0(%i: index):
{body}
    scf.reduce
  }}) : (index, index, index) -> ()
  func.return
}}
"""


ELEMENTWISE = parallel_1d(
    64,
    """
    %x = memref.load %X[%i] : memref<64xf32>
    %y = memref.load %Y[%i] : memref<64xf32>
    %s = math.sqrt %x : f32
    %e = math.exp %y : f32
    %l = math.log %x : f32
    %t = math.tanh %y : f32
    %si = math.sin %y : f32
    %co = math.cos %y : f32
    %p = math.powf %x, %y : f32
    %r = math.round %y : f32
    %cs = math.copysign %x, %y : f32
    %f = math.fma %x, %y, %s : f32
    %d = arith.divf %e, %x : f32
    %m = arith.maximumf %l, %t : f32
    %gt = arith.cmpf ogt, %x, %y : f32
    %sel = arith.select %gt, %si, %co : f32
    %a = arith.mulf %a0, %f : f32
    memref.store %s, %O[%i, %c0] : memref<64x10xf32>
    %c1x = arith.constant 1 : index
    %c2x = arith.constant 2 : index
    %c3x = arith.constant 3 : index
    %c4x = arith.constant 4 : index
    %c5x = arith.constant 5 : index
    %c6x = arith.constant 6 : index
    %c7x = arith.constant 7 : index
    %c8x = arith.constant 8 : index
    %c9x = arith.constant 9 : index
    memref.store %d, %O[%i, %c1x] : memref<64x10xf32>
    memref.store %m, %O[%i, %c2x] : memref<64x10xf32>
    memref.store %sel, %O[%i, %c3x] : memref<64x10xf32>
    memref.store %p, %O[%i, %c4x] : memref<64x10xf32>
    memref.store %r, %O[%i, %c5x] : memref<64x10xf32>
    memref.store %cs, %O[%i, %c6x] : memref<64x10xf32>
    memref.store %a, %O[%i, %c7x] : memref<64x10xf32>
    %ab = math.absf %cs : f32
    %fl = math.floor %y : f32
    memref.store %ab, %O[%i, %c8x] : memref<64x10xf32>
    memref.store %fl, %O[%i, %c9x] : memref<64x10xf32>""",
    "%a0: f32, %X: memref<64xf32>, %Y: memref<64xf32>, %O: memref<64x10xf32>",
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_elementwise_arith_and_math(backend):
    rng = np.random.default_rng(7)
    x = rng.uniform(0.25, 4.0, 64).astype(np.float32)
    y = rng.uniform(-3.0, 3.0, 64).astype(np.float32)
    y[:4] = [-2.5, -0.5, 0.5, 2.5]  # round's ties go away from zero
    a0 = np.float32(1.5)
    out = run(ELEMENTWISE, {"a0": a0, "X": x, "Y": y, "O": np.zeros((64, 10), np.float32)}, backend)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    fma = x64 * y64 + np.sqrt(x64)
    expected = np.stack(
        [
            np.sqrt(x64),
            np.exp(y64) / x64,
            np.maximum(np.log(x64), np.tanh(y64)),
            np.where(x64 > y64, np.sin(y64), np.cos(y64)),
            np.power(x64, y64),
            np.where(y64 < 0, -np.floor(-y64 + 0.5), np.floor(y64 + 0.5)),
            np.copysign(x64, y64),
            1.5 * fma,
            np.abs(np.copysign(x64, y64)),
            np.floor(y64),
        ],
        axis=1,
    )
    assert out["O"].shape == (64, 10)
    np.testing.assert_allclose(out["O"], expected, rtol=4 * RTOL, atol=1e-6)
    assert (out["O"][:4, 5] == [-3.0, -1.0, 1.0, 3.0]).all()


INTEGERS = parallel_1d(
    32,
    """
    %a = memref.load %A[%i] : memref<32xi32>
    %b = memref.load %B[%i] : memref<32xi32>
    %q = arith.divsi %a, %b : i32
    %fq = arith.floordivsi %a, %b : i32
    %cq = arith.ceildivsi %a, %b : i32
    %r = arith.remsi %a, %b : i32
    %uq = arith.divui %a, %b : i32
    %lt = arith.cmpi slt, %a, %b : i32
    %ult = arith.cmpi ult, %a, %b : i32
    %mx = arith.maxsi %a, %b : i32
    %sh = arith.shrsi %a, %c3 : i32
    %us = arith.shrui %a, %c3 : i32
    %w = arith.extsi %a : i32 to i64
    %w2 = arith.muli %w, %w : i64
    %back = arith.trunci %w2 : i64 to i32
    %u = arith.extui %ult : i1 to i32
    %big = scf.if %lt -> (i32) {
      scf.yield %mx : i32
    } else {
      %neg = arith.subi %c0i, %mx : i32
      scf.yield %neg : i32
    }
    %ii = arith.index_cast %i : index to i32
    %sum = arith.addi %big, %ii : i32
    %f = arith.sitofp %a : i32 to f32
    %h = arith.constant 0.5 : f32
    %fh = arith.mulf %f, %h : f32
    %fi = arith.fptosi %fh : f32 to i32
    %base = arith.muli %ii, %c12 : i32
    %j = arith.index_cast %base : i32 to index
    %o0 = arith.addi %j, %c0 : index
    memref.store %q, %O[%o0] : memref<384xi32>
    %o1 = arith.addi %j, %c1 : index
    memref.store %fq, %O[%o1] : memref<384xi32>
    %o2 = arith.addi %o1, %c1 : index
    memref.store %cq, %O[%o2] : memref<384xi32>
    %o3 = arith.addi %o2, %c1 : index
    memref.store %r, %O[%o3] : memref<384xi32>
    %o4 = arith.addi %o3, %c1 : index
    memref.store %uq, %O[%o4] : memref<384xi32>
    %o5 = arith.addi %o4, %c1 : index
    memref.store %u, %O[%o5] : memref<384xi32>
    %o6 = arith.addi %o5, %c1 : index
    memref.store %sh, %O[%o6] : memref<384xi32>
    %o7 = arith.addi %o6, %c1 : index
    memref.store %us, %O[%o7] : memref<384xi32>
    %o8 = arith.addi %o7, %c1 : index
    memref.store %back, %O[%o8] : memref<384xi32>
    %o9 = arith.addi %o8, %c1 : index
    memref.store %sum, %O[%o9] : memref<384xi32>
    %o10 = arith.addi %o9, %c1 : index
    memref.store %fi, %O[%o10] : memref<384xi32>""",
    "%A: memref<32xi32>, %B: memref<32xi32>, %O: memref<384xi32>",
).replace(
    "  %c1 = arith.constant 1 : index\n",
    "  %c1 = arith.constant 1 : index\n  %c3 = arith.constant 3 : i32\n"
    "  %c0i = arith.constant 0 : i32\n  %c12 = arith.constant 12 : i32\n",
)


def c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


@pytest.mark.parametrize("backend", BACKENDS)
def test_integers_compare_select_casts_and_if_results(backend):
    rng = np.random.default_rng(3)
    a = rng.integers(-1000, 1000, 32).astype(np.int32)
    b = rng.integers(1, 50, 32).astype(np.int32) * rng.choice([-1, 1], 32).astype(np.int32)
    out = run(INTEGERS, {"A": a, "B": b, "O": np.zeros(384, np.int32)}, backend)["O"]
    got = out.reshape(32, 12)[:, :11]
    rows = []
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
        q = c_div(x, y)
        ux, uy = x % 2**32, y % 2**32
        big = max(x, y) if x < y else -max(x, y)
        rows.append(
            [
                q,
                x // y,
                -((-x) // y),
                x - q * y,
                np.int32(np.uint32(ux // uy)),
                int(ux < uy),
                x >> 3,
                np.int32(np.uint32(ux >> 3)),
                np.int32(
                    np.int64(x) * np.int64(x) % 2**32 - (2**32 if (x * x) % 2**32 >= 2**31 else 0)
                ),
                big + i,
                int(np.trunc(np.float32(x) * np.float32(0.5))),
            ]
        )
    np.testing.assert_array_equal(got, np.array(rows, dtype=np.int64).astype(np.int32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_matmul_scf_example_2d_parallel_with_inner_reduction(backend):
    text = (EXAMPLES / "matmul_scf.mlir").read_text()
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 16)).astype(np.float32)
    b = rng.standard_normal((16, 4)).astype(np.float32)
    out = run(text, {"A": a, "B": b, "C": np.zeros((8, 4), np.float32)}, backend)
    assert sorted(out) == ["C"]  # A and B are only read: inputs, not outputs
    np.testing.assert_allclose(out["C"], a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_docs_show_the_converted_matmul_example():
    """docs/mlir-input.md prints what `vyre-opt -p convert-to-vyre
    examples/matmul_scf.mlir` prints: the program on grid axes."""
    doc = (EXAMPLES.parent / "docs" / "mlir-input.md").read_text()
    shown = doc.split("shows grid axes")[1].split("```mlir\n")[1].split("```")[0]
    converted = str(parse((EXAMPLES / "matmul_scf.mlir").read_text()))
    assert shown.rstrip() == converted.rstrip()
    assert "workgroup_size [4, 8, 1] grid [1, 1, 1]" in shown


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fuse", [False, True])
def test_stencil_example_with_runtime_sized_memrefs(backend, fuse):
    text = (EXAMPLES / "stencil_scf.mlir").read_text()
    x = np.random.default_rng(5).standard_normal(300).astype(np.float32)
    zeros = np.zeros(300, np.float32)
    out = run(text, {"x": x, "y": zeros, "z": zeros}, backend, fuse=fuse)
    y = np.zeros(300, np.float64)
    y[1:-1] = (x[:-2].astype(np.float64) + x[1:-1] + x[2:]) * np.float32(0.333333343)
    np.testing.assert_allclose(out["y"], y, rtol=RTOL, atol=1e-6)
    np.testing.assert_allclose(out["z"], y * y, rtol=4 * RTOL, atol=1e-6)


WHILE = parallel_1d(
    40,
    """
    %start = memref.load %N[%i] : memref<40xi32>
    %zero = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    %two = arith.constant 2 : i32
    %three = arith.constant 3 : i32
    %r:2 = scf.while (%v = %start, %k = %zero) : (i32, i32) -> (i32, i32) {
      %more = arith.cmpi sgt, %v, %one : i32
      scf.condition(%more) %v, %k : i32, i32
    } do {
    ^bb1(%v2: i32, %k2: i32):
      %rem = arith.remsi %v2, %two : i32
      %even = arith.cmpi eq, %rem, %zero : i32
      %next = scf.if %even -> (i32) {
        %h = arith.divsi %v2, %two : i32
        scf.yield %h : i32
      } else {
        %t = arith.muli %v2, %three : i32
        %t1 = arith.addi %t, %one : i32
        scf.yield %t1 : i32
      }
      %k3 = arith.addi %k2, %one : i32
      scf.yield %next, %k3 : i32, i32
    }
    memref.store %r#1, %S[%i] : memref<40xi32>""",
    "%N: memref<40xi32>, %S: memref<40xi32>",
)


def collatz_steps(v: int) -> int:
    steps = 0
    while v > 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        steps += 1
    return steps


@pytest.mark.parametrize("backend", BACKENDS)
def test_scf_while(backend):
    n = np.arange(1, 41, dtype=np.int32)
    out = run(WHILE, {"N": n, "S": np.zeros(40, np.int32)}, backend)
    np.testing.assert_array_equal(out["S"], [collatz_steps(int(v)) for v in n])


LINALG = """
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#tr = affine_map<(i, j) -> (j, i)>
func.func @gen(%A: memref<6x5xf32>, %B: memref<5x6xf32>, %s: memref<6xf32>,
               %M: memref<6x5xf32>, %C: memref<6x6xf32>, %v: f32) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%A : memref<6x5xf32>) outs(%s : memref<6xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%A, %B : memref<6x5xf32>, memref<5x6xf32>) outs(%M : memref<6x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %r = arith.mulf %a, %b : f32
    %r2 = arith.addf %r, %fi : f32
    linalg.yield %r2 : f32
  }
  linalg.fill ins(%v : f32) outs(%C : memref<6x6xf32>)
  linalg.matmul ins(%A, %B : memref<6x5xf32>, memref<5x6xf32>) outs(%C : memref<6x6xf32>)
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_linalg_generic_fill_and_matmul(backend):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((6, 5)).astype(np.float32)
    b = rng.standard_normal((5, 6)).astype(np.float32)
    s = rng.standard_normal(6).astype(np.float32)
    inputs = {
        "A": a,
        "B": b,
        "s": s,
        "M": np.zeros((6, 5), np.float32),
        "C": np.zeros((6, 6), np.float32),
        "v": np.float32(0.5),
    }
    out = run(LINALG, inputs, backend)
    assert sorted(out) == ["C", "M", "s"]
    a64 = a.astype(np.float64)
    np.testing.assert_allclose(out["s"], s + a64.sum(axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["M"], a64 * b.T + np.arange(6)[:, None], rtol=RTOL, atol=1e-6)
    np.testing.assert_allclose(out["C"], 0.5 + a64 @ b, rtol=1e-5, atol=1e-5)


TWO_LOOPS = """
func.func @chain(%x: memref<256xf32>, %t: memref<256xf32>, %y: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 256 : index
  %two = arith.constant 2.0 : f32
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<256xf32>
    %d = arith.mulf %v, %two : f32
    memref.store %d, %t[%i] : memref<256xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %t[%i] : memref<256xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%i] : memref<256xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
"""


def test_two_converted_loops_fuse_into_one_kernel():
    from vyre_xdsl.context import vyre_context
    from vyre_xdsl.passes.vyre_lower import VyreLowerPass

    module = parse(TWO_LOOPS)
    assert len([op for op in module.ops if isinstance(op, ProgramOp)]) == 2
    fused = fuse_module(module)
    assert len([op for op in fused.ops if isinstance(op, ProgramOp)]) == 1
    VyreLowerPass().apply(vyre_context(), fused)
    assert [op.name for op in fused.ops] == ["kernel.descriptor"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_converted_loops_fused_run_matches_numpy(backend):
    x = np.linspace(-2, 2, 256, dtype=np.float32)
    zeros = np.zeros(256, np.float32)
    for fuse in (False, True):
        out = run(TWO_LOOPS, {"x": x, "t": zeros, "y": zeros}, backend, fuse=fuse)
        np.testing.assert_allclose(out["y"], np.exp(2.0 * x.astype(np.float64)), rtol=4 * RTOL)


SEQUENTIAL = """
func.func @seq(%out: memref<4xi32>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %seven = arith.constant 7 : i32
  memref.store %seven, %out[%c0] : memref<4xi32>
  %total = scf.for %j = %c0 to %k step %c3 iter_args(%acc = %seven) -> (i32) {
    %jj = arith.index_cast %j : index to i32
    %s = arith.addi %acc, %jj : i32
    scf.yield %s : i32
  }
  memref.store %total, %out[%c1] : memref<4xi32>
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_effects_outside_parallel_loops_run_once_with_a_scalar_argument(backend):
    module = parse(SEQUENTIAL)
    assert len(list(module.ops)) == 1
    out = run(SEQUENTIAL, {"out": np.full(4, 9, np.int32), "k": np.uint32(10)}, backend)
    np.testing.assert_array_equal(out["out"], [7, 7 + sum(range(0, 10, 3)), 9, 9])


INDEX_CAST = parallel_1d(
    8,
    """
    %v = memref.load %A[%i] : memref<8xi32>
    %j = arith.index_cast %v : i32 to index
    %w = memref.load %A[%j] : memref<8xi32>
    memref.store %w, %B[%i] : memref<8xi32>""",
    "%A: memref<8xi32>, %B: memref<8xi32>",
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_index_that_does_not_fit_traps(backend):
    good = np.array([7, 6, 5, 4, 3, 2, 1, 0], np.int32)
    out = run(INDEX_CAST, {"A": good, "B": np.zeros(8, np.int32)}, backend)
    np.testing.assert_array_equal(out["B"], good[good])
    bad = good.copy()
    bad[3] = -1
    with pytest.raises(VyreError, match="index_cast"):
        run(INDEX_CAST, {"A": bad, "B": np.zeros(8, np.int32)}, backend)


def rowsum_through(row_map: str) -> str:
    """s[i] = the sum of row `row_map(i)` of the 6 × 5 matrix A (linalg.generic)."""
    return f"""
func.func @rowsum(%A: memref<6x5xf32>, %s: memref<6xf32>) {{
  linalg.generic {{indexing_maps = [affine_map<(i, j) -> ({row_map}, j)>,
                                   affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}}
      ins(%A : memref<6x5xf32>) outs(%s : memref<6xf32>) {{
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  }}
  func.return
}}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_indexing_map_past_32_bits_traps_instead_of_wrapping(backend):
    """(i + 4294967295) mod 6 is (i + 3) mod 6 in MLIR's 64-bit index; the sum
    does not fit vyre's 32-bit index, so it traps (tag `index`) rather than wrap
    to (i - 1) mod 6 (found by the fuzzer)."""
    a = np.arange(30, dtype=np.float32).reshape(6, 5)
    inputs = {"A": a, "s": np.zeros(6, np.float32)}
    with pytest.raises(VyreError, match="index"):
        run(rowsum_through("(i + 4294967295) mod 6"), inputs, backend)
    got = run(rowsum_through("(i + 3) mod 6"), inputs, backend)["s"]
    np.testing.assert_array_equal(got, a[(np.arange(6) + 3) % 6].sum(axis=1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_ceildiv_in_an_indexing_map_by_a_large_divisor(backend):
    """ceildiv as q + (r != 0): i ceildiv 4294967295 is 0, then 1 (it was
    i + 4294967294, which leaves 32 bits)."""
    a = np.arange(30, dtype=np.float32).reshape(6, 5)
    got = run(
        rowsum_through("i ceildiv 4294967295"), {"A": a, "s": np.zeros(6, np.float32)}, backend
    )["s"]
    rows = [0, 1, 1, 1, 1, 1]  # ceil(i / 4294967295)
    np.testing.assert_array_equal(got, a[rows].sum(axis=1))


HOSTILE = {
    "unsupported op": (
        "func.func @f(%a: memref<4xf32>) {\n"
        "  %c0 = arith.constant 0 : index\n"
        "  %v = memref.load %a[%c0] : memref<4xf32>\n"
        "  %r = math.erf %v : f32\n"
        "  memref.store %r, %a[%c0] : memref<4xf32>\n"
        "  func.return\n}\n",
        "4:3",
        "'math.erf' is not supported; convert-to-vyre supports func",
    ),
    "strided layout": (
        "func.func @f(%a: memref<4x4xf32, strided<[1, 4]>>) {\n  func.return\n}\n",
        "1:1",
        "is not the identity",
    ),
    "index constant too large": (
        "func.func @f(%a: memref<4xf32>) {\n"
        "  %c = arith.constant 8589934592 : index\n"
        "  %v = arith.constant 1.0 : f32\n"
        "  memref.store %v, %a[%c] : memref<4xf32>\n"
        "  func.return\n}\n",
        "2:3",
        "does not fit in 32 bits",
    ),
    "function result": (
        "func.func @f(%a: f32) -> f32 {\n  func.return %a : f32\n}\n",
        "1:1",
        "returns nothing",
    ),
    "tensor op": (
        "func.func @f(%a: memref<4xf32>) {\n"
        "  %t = tensor.empty() : tensor<4xf32>\n"
        "  func.return\n}\n",
        "2:3",
        "'tensor.empty' is not supported",
    ),
    "two dynamic dims": (
        "func.func @f(%a: memref<?x?xf32>) {\n  func.return\n}\n",
        "1:1",
        "more than one dynamic dimension",
    ),
    "value crossing programs": (
        "func.func @f(%a: memref<4xf32>) {\n"
        "  %c0 = arith.constant 0 : index\n"
        "  %c1 = arith.constant 1 : index\n"
        "  %c4 = arith.constant 4 : index\n"
        "  %v = memref.load %a[%c0] : memref<4xf32>\n"
        '  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({\n'
        "  ^bb0(%i: index):\n"
        "    memref.store %v, %a[%i] : memref<4xf32>\n"
        "    scf.reduce\n"
        "  }) : (index, index, index) -> ()\n"
        "  func.return\n}\n",
        "5:3",
        "outside any parallel loop is used in another program",
    ),
    "loop variable of another loop": (
        # found by the fuzzer: the first loop's variable renamed, so its uses
        # resolve to the second loop's %i, a block argument of another region
        "func.func @f(%a: memref<4xf32>) {\n"
        "  %c0 = arith.constant 0 : index\n"
        "  %c1 = arith.constant 1 : index\n"
        "  %c4 = arith.constant 4 : index\n"
        "  %v = arith.constant 1.0 : f32\n"
        '  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({\n'
        "  ^bb0(%j: index):\n"
        "    memref.store %v, %a[%i] : memref<4xf32>\n"
        "    scf.reduce\n"
        "  }) : (index, index, index) -> ()\n"
        '  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({\n'
        "  ^bb0(%i: index):\n"
        "    memref.store %v, %a[%i] : memref<4xf32>\n"
        "    scf.reduce\n"
        "  }) : (index, index, index) -> ()\n"
        "  func.return\n}\n",
        "11:3",
        "argument 0 of this 'scf.parallel' is used outside its region",
    ),
    "dynamic dim index": (
        "func.func @f(%a: memref<4xf32>, %k: index) {\n"
        "  %d = memref.dim %a, %k : memref<4xf32>\n"
        "  %v = arith.constant 1.0 : f32\n"
        "  memref.store %v, %a[%d] : memref<4xf32>\n"
        "  func.return\n}\n",
        "2:3",
        "memref.dim needs a constant dimension index",
    ),
    "op without a vyre type": (
        "func.func @f(%a: memref<4xf64>) {\n"
        "  %c0 = arith.constant 0 : index\n"
        "  %v = memref.load %a[%c0] : memref<4xf64>\n"
        "  %e = math.exp %v : f64\n"
        "  memref.store %e, %a[%c0] : memref<4xf64>\n"
        "  func.return\n}\n",
        "4:3",
        "'vyre.exp' does not accept f64",
    ),
    "external function": (
        "func.func private @ext(%a: memref<4xf32>)\n",
        "1:1",
        "an external function (no body) cannot be converted",
    ),
    "gpu id outside a kernel": (
        "func.func @f(%a: memref<4xf32>) {\n"
        '  %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index\n'
        "  %v = arith.constant 1.0 : f32\n"
        "  memref.store %v, %a[%t] : memref<4xf32>\n"
        "  func.return\n}\n",
        "2:3",
        "only meaningful inside a gpu.func kernel",
    ),
    "linalg.index past the loops": (
        # found by the fuzzer: converting it indexed past the loop variables (IndexError)
        "#id = affine_map<(i) -> (i)>\n"
        "func.func @f(%t: memref<6xf32>) {\n"
        '  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}'
        " outs(%t : memref<6xf32>) {\n"
        "  ^bb0(%o: f32):\n"
        "    %i = linalg.index 1 : index\n"
        "    %w = arith.index_cast %i : index to i32\n"
        "    %f = arith.sitofp %w : i32 to f32\n"
        "    linalg.yield %f : f32\n"
        "  }\n"
        "  func.return\n}\n",
        "5:5",
        "linalg.index 1 names no loop of its linalg.generic (it has 1, numbered from 0)",
    ),
    "negative linalg.index": (
        # found by the fuzzer: -1 took the last loop variable (a Python index),
        # -2147483648 raised IndexError
        "#id = affine_map<(i) -> (i)>\n"
        "func.func @f(%t: memref<6xf32>) {\n"
        '  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}'
        " outs(%t : memref<6xf32>) {\n"
        "  ^bb0(%o: f32):\n"
        "    %i = linalg.index -1 : index\n"
        "    %w = arith.index_cast %i : index to i32\n"
        "    %f = arith.sitofp %w : i32 to f32\n"
        "    linalg.yield %f : f32\n"
        "  }\n"
        "  func.return\n}\n",
        "5:5",
        "linalg.index -1 names no loop of its linalg.generic (it has 1, numbered from 0)",
    ),
    "linalg.fill without outs": (
        # found by the fuzzer: xDSL's generalization raised IndexError on it
        "func.func @f(%C: memref<4x2xf32>) {\n"
        "  %z = arith.constant 0.5 : f32\n"
        "  linalg.fill ins(%z : f32)\n"
        "  func.return\n}\n",
        "3:3",
        "'linalg.fill' takes 1 input (ins) and 1 output (outs), got 1 and 0",
    ),
    "linalg.add with one input": (
        # xDSL accepts it and its generalization reads the output as the second input
        "func.func @f(%C: memref<4x2xf32>, %E: memref<4x2xf32>) {\n"
        "  linalg.add ins(%C : memref<4x2xf32>) outs(%E : memref<4x2xf32>)\n"
        "  func.return\n}\n",
        "2:3",
        "'linalg.add' takes 2 inputs (ins) and 1 output (outs), got 1 and 1",
    ),
    "linalg.matmul with two outputs": (
        "func.func @f(%A: memref<4x3xf32>, %B: memref<3x2xf32>, %C: memref<4x2xf32>) {\n"
        "  linalg.matmul ins(%A, %B : memref<4x3xf32>, memref<3x2xf32>)"
        " outs(%C, %C : memref<4x2xf32>, memref<4x2xf32>)\n"
        "  func.return\n}\n",
        "2:3",
        "'linalg.matmul' takes 2 inputs (ins) and 1 output (outs), got 2 and 2",
    ),
    "named op of the wrong rank": (
        # the generic op it becomes keeps its location (it was reported at 1:1)
        "func.func @f(%C: memref<4x2xf32>, %V: memref<4xf32>) {\n"
        "  linalg.add ins(%C, %V : memref<4x2xf32>, memref<4xf32>)"
        " outs(%C : memref<4x2xf32>)\n"
        "  func.return\n}\n",
        "2:3",
        "expected operand #1 of rank 1 to match the result count of indexing_map #1, 2",
    ),
    "indexing map constant past 32 bits": (
        # found by the fuzzer: the constant became a ui32 vyre.const (VerifyException)
        rowsum_through("(i + 4294967296) mod 6").lstrip("\n"),
        "2:3",
        "has the constant 4294967296, which is not an index of 32 bits",
    ),
    "negative indexing map constant": (
        rowsum_through("i * -1 + 5").lstrip("\n"),
        "2:3",
        "has the constant -1, which is not an index of 32 bits",
    ),
    "ill-typed input": (
        "func.func @f(%a: memref<4xf32>) {\n"
        '  %c0 = "arith.constant"() <{value = 0 : index}> : () -> index\n'
        '  %v = "arith.addf"(%c0, %c0) : (index, index) -> index\n'
        "  func.return\n}\n",
        "3:3",
        "does not verify",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_input_is_a_located_error(case):
    text, where, message = HOSTILE[case]
    with pytest.raises(VyreDiagnostic) as caught:
        parse(text, "in.mlir")
    from vyre_xdsl.diagnostics import Located

    located = [Located(op, m) for op, m in caught.value.errors]
    assert any(message in e.message for e in located), caught.value.errors
    line, col = (int(p) for p in where.split(":"))
    assert any(e.location() == ("in.mlir", line, col) for e in located), [
        (e.location(), e.message) for e in located
    ]


# The loop runs over %x's length but writes only %y and %z (of %y's length),
# which may be shorter: the grid covers %y, so each invocation runs several
# iterations (the strided form); iterations past %y's length write %z.
STRIDED = """
func.func @strided(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %m = memref.dim %y, %c0 : memref<?xf32>
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<?xf32>
    %inside = arith.cmpi ult, %i, %m : index
    scf.if %inside {
      %d = arith.mulf %v, %two : f32
      memref.store %d, %y[%i] : memref<?xf32>
    } else {
      %k = arith.subi %i, %m : index
      %t = arith.mulf %v, %three : f32
      memref.store %t, %z[%k] : memref<?xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("lengths", [(500, 100), (100, 500), (64, 64)])
def test_iterations_beyond_the_derived_grid_all_run(backend, lengths):
    nx, ny = lengths
    x = np.arange(nx, dtype=np.float32)
    inputs = {"x": x, "y": np.full(ny, -1, np.float32), "z": np.full(ny, -1, np.float32)}
    out = run(STRIDED, inputs, backend)
    y, z = np.full(ny, -1, np.float32), np.full(ny, -1, np.float32)
    k = min(nx, ny)
    y[:k] = 2 * x[:k]
    rest = min(max(nx - ny, 0), ny)
    z[:rest] = 3 * x[ny : ny + rest]
    np.testing.assert_array_equal(out["y"], y)
    np.testing.assert_array_equal(out["z"], z)


# Steps other than 1, a parallel loop nested in a sequential one (run in order
# inside one invocation), and a 2-D memref with a runtime-sized first dimension.
NESTED = """
func.func @nested(%A: memref<?x3xi32>, %out: memref<?x3xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %rows = memref.dim %A, %c0 : memref<?x3xi32>
  "scf.parallel"(%c0, %rows, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %zero = arith.constant 0 : i32
    %s = scf.for %j = %c0 to %c3 step %c2 iter_args(%acc = %zero) -> (i32) {
      %v = memref.load %A[%i, %j] : memref<?x3xi32>
      %t = arith.addi %acc, %v : i32
      scf.yield %t : i32
    }
    "scf.parallel"(%c0, %c3, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb1(%j: index):
      %w = memref.load %A[%i, %j] : memref<?x3xi32>
      %p = arith.muli %w, %s : i32
      memref.store %p, %out[%i, %j] : memref<?x3xi32>
      scf.reduce
    }) : (index, index, index) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_steps_nested_parallel_and_dynamic_rows(backend):
    a = np.arange(-30, 30, dtype=np.int32).reshape(20, 3)
    out = run(NESTED, {"A": a, "out": np.zeros((20, 3), np.int32)}, backend)["out"]
    sums = a[:, 0] + a[:, 2]  # j = 0, 2 (step 2)
    np.testing.assert_array_equal(out, a * sums[:, None])


@pytest.mark.parametrize("backend", BACKENDS)
def test_outputs_come_back_in_the_memref_shape_from_flat_inputs(backend):
    a = np.arange(60, dtype=np.int32)  # flat, for memref<?x3xi32>
    out = run(NESTED, {"A": a, "out": np.zeros(60, np.int32)}, backend)["out"]
    assert out.shape == (20, 3)
    rows = a.reshape(20, 3)
    np.testing.assert_array_equal(out, rows * (rows[:, 0] + rows[:, 2])[:, None])


# gpu.launch_func of a gpu.func kernel (xDSL 0.74 has no custom syntax for the
# gpu dialect: generic form). Grid (2, 3, 1) of blocks (4, 2, 1): 8 × 6 threads.
GPU_LAUNCH = """
"gpu.module"() <{sym_name = "kernels"}> ({
  "gpu.func"() <{function_type = (memref<6x8xi32>, i32) -> ()}> ({
  ^bb0(%out: memref<6x8xi32>, %scale: i32):
    %gx = "gpu.global_id"() <{dimension = #gpu<dim x>}> : () -> index
    %ty = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %dy = "gpu.block_dim"() <{dimension = #gpu<dim y>}> : () -> index
    %nx = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
    %base = arith.muli %by, %dy : index
    %gy = arith.addi %base, %ty : index
    %c100 = arith.constant 100 : index
    %c10000 = arith.constant 10000 : index
    %row = arith.muli %gy, %c100 : index
    %grid = arith.muli %nx, %c10000 : index
    %s1 = arith.addi %gx, %row : index
    %s2 = arith.addi %s1, %grid : index
    %v = arith.index_cast %s2 : index to i32
    %w = arith.muli %v, %scale : i32
    memref.store %w, %out[%gy, %gx] : memref<6x8xi32>
    "gpu.return"() : () -> ()
  }) {sym_name = "ids", gpu.kernel} : () -> ()
}) : () -> ()
func.func @main(%out: memref<6x8xi32>, %scale: i32) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  "gpu.launch_func"(%c2, %c3, %c1, %c4, %c2, %c1, %out, %scale) <{kernel = @kernels::@ids, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}> : (index, index, index, index, index, index, memref<6x8xi32>, i32) -> ()
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_gpu_launch_func_threads_are_invocations(backend):
    out = run(GPU_LAUNCH, {"out": np.zeros((6, 8), np.int32), "scale": np.int32(3)}, backend)
    y, x = np.mgrid[0:6, 0:8]
    np.testing.assert_array_equal(out["out"], 3 * (x + 100 * y + 2 * 10000))


def test_gpu_barrier_is_a_located_error():
    text = GPU_LAUNCH.replace(
        '    "gpu.return"() : () -> ()',
        '    "gpu.barrier"() : () -> ()\n    "gpu.return"() : () -> ()',
    )
    with pytest.raises(VyreDiagnostic) as caught:
        parse(text, "in.mlir")
    (op, message), *_ = caught.value.errors
    assert op.name == "gpu.barrier" and "gpu.barrier is not supported" in message


MUTATIONS = [
    ("index", "i32"),
    ("f32", "f64"),
    ("f32", "i32"),
    ("%c0", "%c1"),
    ("%i", "%c0"),
    ("memref<", "memref<?x"),
    ("scf.reduce", ""),
    ("%c1", "%i"),
    ("addf", "mulf"),
    ("parallel", "reduction"),
    ("xi32", "xi64"),
    ("i32", "i1"),
    ("x", "y"),
]


def mutated_inputs(seed: int, count: int):
    """`count` inputs made by deleting, duplicating or editing lines of the
    modules above (a deterministic stream per seed)."""
    import random

    sources = [ELEMENTWISE, INTEGERS, WHILE, LINALG, TWO_LOOPS, SEQUENTIAL, STRIDED, NESTED]
    sources += [GPU_LAUNCH, REDUCTIONS, TIME_STEPS, (EXAMPLES / "matmul_scf.mlir").read_text()]
    rng = random.Random(seed)
    for _ in range(count):
        lines = rng.choice(sources).split("\n")
        for _ in range(rng.randint(1, 3)):
            k = rng.randrange(len(lines))
            roll = rng.random()
            if roll < 0.3:
                del lines[k]
            elif roll < 0.5:
                lines.insert(k, lines[rng.randrange(len(lines))])
            else:
                old, new = rng.choice(MUTATIONS)
                lines[k] = lines[k].replace(old, new)
        yield "\n".join(lines)


@pytest.mark.parametrize("seed", [1, 4])
def test_mutated_inputs_never_raise_an_internal_error(seed):
    """Fails on the converter before this test existed (a parallel loop that
    writes nothing, an scf.if region yielding too few values, a function of
    several blocks were internal errors); each is now a located error."""
    for text in mutated_inputs(seed, 150):
        try:
            parse(text, "in.mlir")
        except VyreError:
            pass


def random_inputs_for(module, seed: int = 11) -> dict[str, object]:
    """Small positive inputs for every input buffer (60 elements when runtime-sized)."""
    from vyre_xdsl.abi import signature

    rng = np.random.default_rng(seed)
    sig = signature(module)
    inputs: dict[str, object] = {}
    for buffer in sig.buffers:
        if buffer.name not in sig.inputs:
            continue
        count = buffer.count or 60
        if buffer.element == "f32":
            array = rng.uniform(0.5, 3.0, count).astype(np.float32)
        else:
            array = rng.integers(1, 9, count).astype(np.int32)
        inputs[buffer.name] = array[0] if count == 1 else array
    return inputs


@pytest.mark.parametrize("name", ["ELEMENTWISE", "WHILE", "LINALG", "NESTED"])
def test_stock_cleanups_keep_converted_results(name):
    """canonicalize, cse and dce (xDSL's own passes) on converted IR leave
    every output bit for bit as it was (reference backend)."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes as xdsl_passes

    from vyre_xdsl.context import vyre_context

    module = parse(globals()[name])
    cleaned = module.clone()
    PassPipeline.parse_spec(xdsl_passes(), "canonicalize,cse,dce").apply(vyre_context(), cleaned)
    assert len(list(cleaned.walk())) < len(list(module.walk()))  # they did something
    inputs = random_inputs_for(module)
    before = run(module, inputs, "reference")
    after = run(cleaned, inputs, "reference")
    assert sorted(before) == sorted(after)
    for key in before:
        np.testing.assert_array_equal(before[key], after[key])


TIME_STEPS = """
#id = affine_map<(i) -> (i)>
func.func @steps(%x: memref<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %t = %c0 to %c3 step %c1 {
    linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%x : memref<10xf32>) {
    ^bb0(%v: f32):
      %d = arith.addf %v, %v : f32
      linalg.yield %d : f32
    }
  }
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_parallel_op_inside_a_sequential_loop_runs_in_order(backend):
    assert len(list(parse(TIME_STEPS).ops)) == 1  # one one-invocation program
    x = np.arange(10, dtype=np.float32)
    np.testing.assert_array_equal(run(TIME_STEPS, {"x": x}, backend)["x"], 8 * x)


# scf.parallel with reductions runs its iterations in order, folding each
# scf.reduce operand into the result with the reduce region: at the top of the
# function in a one-invocation program, inside a parallel loop per invocation.
REDUCTIONS = """
func.func @sums(%A: memref<8x16xf32>, %rows: memref<8xf32>, %total: memref<1xf32>,
                %big: memref<1xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %z = arith.constant 0.0 : f32
  %zi = arith.constant 0 : i32
  %half = arith.constant 0.5 : f32
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s = "scf.parallel"(%c0, %c16, %c1, %z) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> ({
    ^bb1(%j: index):
      %v = memref.load %A[%i, %j] : memref<8x16xf32>
      scf.reduce(%v : f32) {
      ^bb2(%a: f32, %b: f32):
        %t = arith.addf %a, %b : f32
        scf.reduce.return %t : f32
      }
    }) : (index, index, index, f32) -> f32
    memref.store %s, %rows[%i] : memref<8xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  %all:2 = "scf.parallel"(%c0, %c0, %c8, %c16, %c1, %c1, %z, %zi) <{operandSegmentSizes = array<i32: 2, 2, 2, 2>}> ({
  ^bb3(%i: index, %j: index):
    %v = memref.load %A[%i, %j] : memref<8x16xf32>
    %over = arith.cmpf ogt, %v, %half : f32
    %n = arith.extui %over : i1 to i32
    scf.reduce(%v, %n : f32, i32) {
    ^bb4(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      scf.reduce.return %t : f32
    } {
    ^bb5(%a: i32, %b: i32):
      %t = arith.addi %a, %b : i32
      scf.reduce.return %t : i32
    }
  }) : (index, index, index, index, index, index, f32, i32) -> (f32, i32)
  memref.store %all#0, %total[%c0] : memref<1xf32>
  memref.store %all#1, %big[%c0] : memref<1xi32>
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_scf_parallel_reductions(backend):
    module = parse(REDUCTIONS)
    assert len(list(module.ops)) == 2  # the per-row program, the one-invocation total
    a = np.random.default_rng(9).uniform(0, 1, (8, 16)).astype(np.float32)
    inputs = {
        "A": a,
        "rows": np.zeros(8, np.float32),
        "total": np.zeros(1, np.float32),
        "big": np.zeros(1, np.int32),
    }
    out = run(REDUCTIONS, inputs, backend)
    a64 = a.astype(np.float64)
    np.testing.assert_allclose(out["rows"], a64.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(out["total"], [a64.sum()], rtol=1e-5)
    np.testing.assert_array_equal(out["big"], [(a > 0.5).sum()])


NAMED_CHAIN = """
func.func @f(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>, %d: memref<4x4xf32>) {
  linalg.add ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  linalg.mul ins(%c, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%d : memref<4x4xf32>)
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_named_elementwise_linalg_ops_fuse(backend):
    fused = fuse_module(parse(NAMED_CHAIN))
    assert len([op for op in fused.ops if isinstance(op, ProgramOp)]) == 1
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    b = np.full((4, 4), 2, np.float32)
    zeros = np.zeros((4, 4), np.float32)
    out = run(NAMED_CHAIN, {"a": a, "b": b, "c": zeros, "d": zeros}, backend, fuse=True)
    np.testing.assert_array_equal(out["c"], a + b)
    np.testing.assert_array_equal(out["d"], (a + b) * b)


# ---------------------------------------------------------------- grid axes
#
# A 2-D or 3-D parallel nest with static bounds that is not elementwise runs on
# an explicit grid (x = innermost dimension); an elementwise one keeps the
# flattened 1-D mapping, so that it still fuses (docs/mlir-input.md).


def geometry(text: str) -> list[tuple[tuple[int, int, int], tuple[int, int, int] | None]]:
    """(workgroup, explicit grid) of each converted program."""
    return [(op.workgroup, op.explicit_grid) for op in parse(text).ops if isinstance(op, ProgramOp)]


def scf_parallel(lbs, ubs, args: str, body: str, ivs=("%i", "%j", "%k")) -> str:
    """A function whose one scf.parallel over [lbs, ubs) (steps 1) runs `body`."""
    n = len(lbs)
    values = sorted({*lbs, *ubs, 1})
    consts = "\n".join(f"  %c{v} = arith.constant {v} : index" for v in values)
    operands = ", ".join([f"%c{v}" for v in (*lbs, *ubs)] + ["%c1"] * n)
    types = ", ".join(["index"] * 3 * n)
    block = ", ".join(f"{iv}: index" for iv in ivs[:n])
    return f"""
func.func @f({args}) {{
{consts}
  "scf.parallel"({operands}) <{{operandSegmentSizes = array<i32: {n}, {n}, {n}, 0>}}> ({{
  ^bb0({block}):
{body}
    scf.reduce
  }}) : ({types}) -> ()
  func.return
}}
"""


# a 5-point stencil over the interior of 37 x 23 (neither a multiple of 16)
STENCIL_2D = scf_parallel(
    (1, 1),
    (36, 22),
    "%x: memref<37x23xf32>, %y: memref<37x23xf32>",
    """
    %im = arith.subi %i, %c1 : index
    %ip = arith.addi %i, %c1 : index
    %jm = arith.subi %j, %c1 : index
    %jp = arith.addi %j, %c1 : index
    %n = memref.load %x[%im, %j] : memref<37x23xf32>
    %s = memref.load %x[%ip, %j] : memref<37x23xf32>
    %w = memref.load %x[%i, %jm] : memref<37x23xf32>
    %e = memref.load %x[%i, %jp] : memref<37x23xf32>
    %m = memref.load %x[%i, %j] : memref<37x23xf32>
    %q = arith.constant 0.25 : f32
    %a1 = arith.addf %n, %s : f32
    %a2 = arith.addf %w, %e : f32
    %a3 = arith.addf %a1, %a2 : f32
    %a4 = arith.mulf %a3, %q : f32
    %r = arith.subf %a4, %m : f32
    memref.store %r, %y[%i, %j] : memref<37x23xf32>""",
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_2d_stencil_runs_on_grid_axes(backend):
    # 35 x 21 iterations: j on x (21 -> 2 workgroups of 16), i on y (35 -> 3)
    assert geometry(STENCIL_2D) == [((16, 16, 1), (2, 3, 1))]
    x = np.random.default_rng(21).standard_normal((37, 23)).astype(np.float32)
    out = run(STENCIL_2D, {"x": x, "y": np.full((37, 23), -7, np.float32)}, backend)
    x64 = x.astype(np.float64)
    want = np.full((37, 23), -7, np.float64)  # the border is never written
    want[1:-1, 1:-1] = (
        0.25 * (x64[:-2, 1:-1] + x64[2:, 1:-1] + x64[1:-1, :-2] + x64[1:-1, 2:]) - x64[1:-1, 1:-1]
    )
    np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-5)


# a 3-D nest over 9 x 10 x 11 that reads a[i, j, 10 - k] (not elementwise)
PARALLEL_3D = scf_parallel(
    (0, 0, 0),
    (9, 10, 11),
    "%a: memref<9x10x11xi32>, %b: memref<9x10x11xi32>",
    """
    %kr = arith.subi %c10, %k : index
    %v = memref.load %a[%i, %j, %kr] : memref<9x10x11xi32>
    %u = memref.load %a[%i, %j, %k] : memref<9x10x11xi32>
    %two = arith.constant 2 : i32
    %t = arith.muli %v, %two : i32
    %r = arith.subi %t, %u : i32
    memref.store %r, %b[%i, %j, %k] : memref<9x10x11xi32>""",
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_3d_parallel_runs_on_grid_axes(backend):
    # k (11) on x, j (10) on y, i (9) on z; workgroup [8, 8, 4]
    assert geometry(PARALLEL_3D) == [((8, 8, 4), (2, 2, 3))]
    a = np.random.default_rng(3).integers(-1000, 1000, (9, 10, 11)).astype(np.int32)
    out = run(PARALLEL_3D, {"a": a, "b": np.zeros((9, 10, 11), np.int32)}, backend)
    np.testing.assert_array_equal(out["b"], 2 * a[:, :, ::-1] - a)


LINALG_MATMUL = """
func.func @mm(%A: memref<37x29xf32>, %B: memref<29x23xf32>, %C: memref<37x23xf32>) {
  linalg.matmul ins(%A, %B : memref<37x29xf32>, memref<29x23xf32>) outs(%C : memref<37x23xf32>)
  func.return
}
"""

SCF_MATMUL = scf_parallel(
    (0, 0),
    (37, 23),
    "%A: memref<37x29xf32>, %B: memref<29x23xf32>, %C: memref<37x23xf32>",
    """
    %c0k = arith.constant 0 : index
    %c29 = arith.constant 29 : index
    %zero = arith.constant 0.0 : f32
    %sum = scf.for %k = %c0k to %c29 step %c1 iter_args(%acc = %zero) -> (f32) {
      %a = memref.load %A[%i, %k] : memref<37x29xf32>
      %b = memref.load %B[%k, %j] : memref<29x23xf32>
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      scf.yield %s : f32
    }
    memref.store %sum, %C[%i, %j] : memref<37x23xf32>""",
)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("form", ["linalg", "scf"])
def test_matmul_runs_on_grid_axes(backend, form):
    text = LINALG_MATMUL if form == "linalg" else SCF_MATMUL
    assert geometry(text) == [((16, 16, 1), (2, 3, 1))]
    rng = np.random.default_rng(7)
    a = rng.standard_normal((37, 29)).astype(np.float32)
    b = rng.standard_normal((29, 23)).astype(np.float32)
    c = rng.standard_normal((37, 23)).astype(np.float32)
    out = run(text, {"A": a, "B": b, "C": c}, backend)
    want = a.astype(np.float64) @ b + (c if form == "linalg" else 0)  # linalg accumulates
    np.testing.assert_allclose(out["C"], want, rtol=1e-4, atol=1e-4)


TRANSPOSE = """
#id = affine_map<(i, j) -> (i, j)>
#tr = affine_map<(i, j) -> (j, i)>
func.func @t(%a: memref<37x23xi32>, %b: memref<23x37xi32>) {
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<37x23xi32>) outs(%b : memref<23x37xi32>) {
  ^bb0(%v: i32, %o: i32):
    linalg.yield %v : i32
  }
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_transpose_runs_on_grid_axes(backend):
    # b[i, j] = a[j, i] over b's 23 x 37: j (37) on x, i (23) on y
    assert geometry(TRANSPOSE) == [((16, 16, 1), (3, 2, 1))]
    a = np.arange(37 * 23, dtype=np.int32).reshape(37, 23)
    out = run(TRANSPOSE, {"a": a, "b": np.zeros((23, 37), np.int32)}, backend)
    np.testing.assert_array_equal(out["b"], a.T)


# two elementwise 2-D loops over 37 x 23: flattened, no explicit grid, they fuse
ELEMENTWISE_2D = """
func.func @chain(%x: memref<37x23xf32>, %t: memref<37x23xf32>, %y: memref<37x23xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c23 = arith.constant 23 : index
  %c37 = arith.constant 37 : index
  %two = arith.constant 2.0 : f32
  "scf.parallel"(%c0, %c0, %c37, %c23, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %x[%i, %j] : memref<37x23xf32>
    %d = arith.mulf %v, %two : f32
    memref.store %d, %t[%i, %j] : memref<37x23xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  "scf.parallel"(%c0, %c0, %c37, %c23, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %t[%i, %j] : memref<37x23xf32>
    %w = memref.load %x[%i, %j] : memref<37x23xf32>
    %s = arith.addf %v, %w : f32
    memref.store %s, %y[%i, %j] : memref<37x23xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_elementwise_2d_loops_stay_flat_and_fuse(backend):
    assert geometry(ELEMENTWISE_2D) == [((64, 1, 1), None)] * 2
    fused = fuse_module(parse(ELEMENTWISE_2D))
    assert len([op for op in fused.ops if isinstance(op, ProgramOp)]) == 1
    x = np.random.default_rng(8).standard_normal((37, 23)).astype(np.float32)
    zeros = np.zeros((37, 23), np.float32)
    out = run(ELEMENTWISE_2D, {"x": x, "t": zeros, "y": zeros}, backend, fuse=True)
    np.testing.assert_allclose(out["y"], 3.0 * x.astype(np.float64), rtol=RTOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grid_program_beside_elementwise_ones_under_fuse(backend):
    # the stencil (explicit grid) is kept apart; the run still matches numpy
    module = STENCIL_2D.replace(
        "%x: memref<37x23xf32>, %y: memref<37x23xf32>",
        "%x: memref<37x23xf32>, %y: memref<37x23xf32>, %z: memref<37x23xf32>",
    ).replace(
        "  func.return",
        """  %c0 = arith.constant 0 : index
  %c23 = arith.constant 23 : index
  %c37 = arith.constant 37 : index
  "scf.parallel"(%c0, %c0, %c37, %c23, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %y[%i, %j] : memref<37x23xf32>
    %d = arith.mulf %v, %v : f32
    memref.store %d, %z[%i, %j] : memref<37x23xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return""",
    )
    assert geometry(module) == [((16, 16, 1), (2, 3, 1)), ((64, 1, 1), None)]
    x = np.random.default_rng(4).standard_normal((37, 23)).astype(np.float32)
    zeros = np.zeros((37, 23), np.float32)
    x64 = x.astype(np.float64)
    y = np.zeros((37, 23))
    y[1:-1, 1:-1] = (
        0.25 * (x64[:-2, 1:-1] + x64[2:, 1:-1] + x64[1:-1, :-2] + x64[1:-1, 2:]) - x64[1:-1, 1:-1]
    )
    for fuse in (False, True):
        out = run(module, {"x": x, "y": zeros, "z": zeros}, backend, fuse=fuse)
        np.testing.assert_allclose(out["y"], y, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(out["z"], y * y, rtol=1e-4, atol=1e-5)


def test_grid_geometry_rule():
    from vyre_xdsl.conversion.function import grid_geometry

    assert grid_geometry([37, 23]) == ([1, 0], (16, 16, 1), (2, 3, 1))
    assert grid_geometry([3, 2]) == ([1, 0], (2, 3, 1), (1, 1, 1))
    assert grid_geometry([9, 10, 11]) == ([2, 1, 0], (8, 8, 4), (2, 2, 3))
    # a dimension of extent 1 takes no axis: 2-D on x and y
    assert grid_geometry([37, 1, 23]) == ([2, 0], (16, 16, 1), (2, 3, 1))
    assert grid_geometry([100]) is None  # 1-D stays flattened
    assert grid_geometry([2, 3, 4, 5]) is None  # four axes: flattened
    assert grid_geometry([None, 5]) is None  # dynamic
    assert grid_geometry([0, 5]) is None  # empty
    assert grid_geometry([4, 16 * 65535]) is not None
    assert grid_geometry([4, 16 * 65535 + 1]) is None  # too many workgroups on x


# a non-elementwise 2-D nest with a dynamic bound: flattened (no explicit grid)
DYNAMIC_2D = """
func.func @f(%x: memref<?x5xf32>, %y: memref<?x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %n = memref.dim %y, %c0 : memref<?x5xf32>
  "scf.parallel"(%c0, %c0, %n, %c5, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %c4 = arith.constant 4 : index
    %jr = arith.subi %c4, %j : index
    %v = memref.load %x[%i, %jr] : memref<?x5xf32>
    memref.store %v, %y[%i, %j] : memref<?x5xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_dynamic_bounds_keep_the_flattened_mapping(backend):
    assert geometry(DYNAMIC_2D) == [((64, 1, 1), None)]
    x = np.arange(35, dtype=np.float32).reshape(7, 5)
    out = run(DYNAMIC_2D, {"x": x, "y": np.zeros((7, 5), np.float32)}, backend)
    np.testing.assert_array_equal(out["y"], x[:, ::-1])


def test_gpu_launch_func_keeps_the_flattened_mapping():
    assert geometry(GPU_LAUNCH) == [((64, 1, 1), None)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("workgroup", [(64, 1, 1), (1, 32, 1), (4, 4, 4)])
def test_workgroup_override_regrids_converted_grid_axes(backend, workgroup):
    # compile(..., workgroup_size=...) keeps every iteration of a grid-axes nest
    import vyre_xdsl

    a = np.random.default_rng(3).integers(-1000, 1000, (9, 10, 11)).astype(np.int32)
    exe = vyre_xdsl.compile(PARALLEL_3D, backend, workgroup_size=workgroup)
    out = exe.run({"a": a, "b": np.zeros((9, 10, 11), np.int32)})
    np.testing.assert_array_equal(np.asarray(out["b"]).reshape(9, 10, 11), 2 * a[:, :, ::-1] - a)


# ---------------------------------------------------------------- vyre.memref_shapes written by hand


def shaped_module(shapes: str) -> str:
    """A vyre module (as `convert-to-vyre` prints one) stating `shapes`; @x
    holds 6 elements, @n is runtime-sized."""
    return (
        f"builtin.module attributes {{vyre.memref_shapes = {shapes}}} {{\n"
        "  vyre.program @p workgroup_size [64, 1, 1] {\n"
        "    vyre.buffer @x binding 0 read_write : f32[6]\n"
        "    vyre.buffer @n binding 1 read_only : f32[?]\n"
        "    %i = vyre.invocation_id x\n"
        "    %v = vyre.load @x[%i] : f32\n"
        "    %w = vyre.add %v, %v : f32\n"
        "    vyre.store @x[%i] = %w : f32\n"
        "  }\n"
        "}\n"
    )


@pytest.mark.parametrize(
    "shapes, message",
    [
        # found by the fuzzer: a number of the docs' converted matmul changed, and
        # vyre-compile wrote a bundle that its own decoder refused
        ("{x = array<i64: 4, 2>}", "the shape [4, 2] of 'x' holds 8 elements, the buffer 6"),
        ("{x = array<i64: 3, -2>}", "the shape [3, -2] of 'x' is not a shape"),
        ("{n = array<i64: -1, -1>}", "the shape [-1, -1] of 'n' is not a shape"),
        ("{y = array<i64: 6>}", "'y' is not a buffer of the module's programs"),
        ("{x = array<i32: 6>}", "the shape of 'x' is not an array<i64: ...>"),
        ("[1, 2]", "expected a dictionary of shapes"),
    ],
)
def test_hand_written_memref_shapes_that_do_not_fit_are_located_errors(shapes, message):
    text = shaped_module(shapes)
    with pytest.raises(VyreDiagnostic, match="in.mlir:1:1") as caught:
        parse(text, "in.mlir")
    assert f"vyre.memref_shapes: {message}" in str(caught.value), str(caught.value)
    inputs = {"x": np.zeros(6, np.float32), "n": np.zeros(3, np.float32)}
    with pytest.raises(VyreDiagnostic, match=":1:1") as caught:
        run(text, inputs, "reference")
    assert f"vyre.memref_shapes: {message}" in str(caught.value), str(caught.value)


def test_vyre_compile_checks_memref_shapes_set_on_a_module():
    from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, i64

    from vyre_xdsl.megakernel.compile import compile_module

    module = parse(shaped_module("{}"), "in.mlir")
    module.attributes["vyre.memref_shapes"] = DictionaryAttr(
        {"x": DenseArrayBase.from_list(i64, [4, 2])}
    )
    with pytest.raises(VyreDiagnostic, match="holds 8 elements, the buffer 6"):
        compile_module(module)


def test_hand_written_memref_shapes_that_fit_shape_the_outputs():
    text = shaped_module("{x = array<i64: 3, 2>, n = array<i64: -1, 3>}")
    x = np.arange(6, dtype=np.float32)
    got = run(text, {"x": x, "n": np.zeros(6, np.float32)}, "reference")["x"]
    np.testing.assert_array_equal(got, (2 * x).reshape(3, 2))


def test_the_vyre_compile_tool_writes_the_memref_shapes_into_the_bundle(tmp_path):
    """The bundle carries each memref's shape (docs/mlir-input.md), also when
    the vyre-compile command writes it (it wrote none)."""
    from vyre_xdsl.megakernel.bundle import TargetModuleBundle
    from vyre_xdsl.megakernel.run import run_bundle
    from vyre_xdsl.tools import vyre_compile

    source = tmp_path / "matmul.mlir"
    source.write_text((EXAMPLES / "matmul_scf.mlir").read_text())
    out = tmp_path / "matmul.vkb"
    assert vyre_compile.main([str(source), "-o", str(out)]) == 0
    data = out.read_bytes()
    assert TargetModuleBundle.from_bytes(data).shapes == {"A": (8, 16), "B": (16, 4), "C": (8, 4)}
    a = np.arange(128, dtype=np.float32).reshape(8, 16) / 8
    b = np.arange(64, dtype=np.float32).reshape(16, 4) / 4
    got = run_bundle(data, {"A": a, "B": b, "C": np.zeros((8, 4), np.float32)}, "reference")
    assert got["C"].shape == (8, 4)
    np.testing.assert_allclose(got["C"], a @ b, rtol=1e-6)
