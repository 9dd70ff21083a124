"""vyre-scalar-replace: a private element kept in a named local computes what
the loads and stores of memory computed.

Each case runs the program as written (with the pass turned off in the
pipeline) and after the pass, on the same random inputs, and compares them bit
for bit (the pass keeps every operation and its order; only where the value is
kept changes), and against numpy in float64. The shapes the pass must leave
alone are in filecheck_tests/passes/vyre-scalar-replace.mlir.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from xdsl.passes import PassPipeline

from vyre_xdsl import run
from vyre_xdsl.analysis.private_elements import private_elements
from vyre_xdsl.context import parse_module, vyre_context
from vyre_xdsl.diagnostics import verify_module
from vyre_xdsl.dialects.vyre import BarrierOp, LoadOp, LoopOp, StoreOp, programs
from vyre_xdsl.passes import get_all_passes


def polybench_gemm(ni: int, nj: int, nk: int, wg: int = 8) -> str:
    """PolyBench's CUDA gemm: C *= beta, then C += alpha * A[i, k] * B[k, j]
    in memory, one invocation per output under a bounds guard."""
    return f"""vyre.program @gemm workgroup_size [{wg}, {wg}, 1] grid [{-(-nj // wg)}, {-(-ni // wg)}, 1] {{
  vyre.buffer @A binding 0 read_only : f32[{ni * nk}]
  vyre.buffer @B binding 1 read_only : f32[{nk * nj}]
  vyre.buffer @C binding 2 read_write : f32[{ni * nj}]
  %col = vyre.invocation_id x
  %row = vyre.invocation_id y
  %ni = vyre.const {ni} : ui32
  %nj = vyre.const {nj} : ui32
  %nk = vyre.const {nk} : ui32
  %lo = vyre.const 0 : ui32
  %alpha = vyre.const 1.5 : f32
  %beta = vyre.const 0.5 : f32
  %in_col = vyre.lt %col, %nj : ui32
  %in_row = vyre.lt %row, %ni : ui32
  %inside = vyre.and %in_col, %in_row : i1
  vyre.if %inside {{
    %rc = vyre.mul %row, %nj : ui32
    %ic = vyre.add %rc, %col : ui32
    %c = vyre.load @C[%ic] : f32
    %cb = vyre.mul %c, %beta : f32
    vyre.store @C[%ic] = %cb : f32
    vyre.loop @k = %lo to %nk {{
      %kv = vyre.var @k : ui32
      %ra = vyre.mul %row, %nk : ui32
      %ia = vyre.add %ra, %kv : ui32
      %a = vyre.load @A[%ia] : f32
      %rb = vyre.mul %kv, %nj : ui32
      %ib = vyre.add %rb, %col : ui32
      %b = vyre.load @B[%ib] : f32
      %p = vyre.mul %a, %b : f32
      %t = vyre.mul %alpha, %p : f32
      %cur = vyre.load @C[%ic] : f32
      %next = vyre.add %cur, %t : f32
      vyre.store @C[%ic] = %next : f32
    }}
  }}
}}
"""


def polybench_syrk(n: int, m: int, wg: int = 8) -> str:
    """PolyBench's CUDA syrk: C *= beta, then C += alpha * A[i, k] * A[j, k]
    (gemm's program with A, n x m, read along row j in place of B)."""
    text = polybench_gemm(n, n, m, wg).replace("@gemm", "@syrk")
    for old, new in (
        (f"  vyre.buffer @B binding 1 read_only : f32[{m * n}]\n", ""),
        ("%rb = vyre.mul %kv, %nj : ui32", "%rb = vyre.mul %col, %nk : ui32"),
        ("%ib = vyre.add %rb, %col : ui32", "%ib = vyre.add %rb, %kv : ui32"),
        ("vyre.load @B[%ib]", "vyre.load @A[%ib]"),
        ("%beta = vyre.const 0.5 : f32", "%beta = vyre.const 0.25 : f32"),
    ):
        assert old in text
        text = text.replace(old, new)
    return text


def clipped_sums(n: int, steps: int) -> str:
    """A store inside an `if` in the loop, on a derived grid under a guard
    i < n (the grid launches 128 invocations for 100 elements): out[i] gains
    x[i] + s at step s only while it stays below 10 (some steps store, some do
    not)."""
    return f"""vyre.program @clipped workgroup_size [32, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{n}]
  vyre.buffer @out binding 1 read_write : f32[{n}]
  %i = vyre.invocation_id x
  %lo = vyre.const 0 : ui32
  %steps = vyre.const {steps} : ui32
  %limit = vyre.const 10.0 : f32
  %n = vyre.const {n} : ui32
  %inside = vyre.lt %i, %n : ui32
  vyre.if %inside {{
    vyre.loop @s = %lo to %steps {{
      %sv = vyre.var @s : ui32
      %sf = vyre.cast %sv : ui32 to f32
      %xv = vyre.load @x[%i] : f32
      %d = vyre.add %xv, %sf : f32
      %cur = vyre.load @out[%i] : f32
      %next = vyre.add %cur, %d : f32
      %low = vyre.lt %next, %limit : f32
      vyre.if %low {{
        vyre.store @out[%i] = %next : f32
      }}
    }}
  }}
}}
"""


def with_passes(text: str, spec: str):
    module = parse_module(text)
    verify_module(module)
    PassPipeline.parse_spec(get_all_passes(), spec).apply(vyre_context(), module)
    verify_module(module)
    return module


def accesses_in_loops(module, buffer: str) -> int:
    """How many loads and stores of `buffer` some `vyre.loop` holds."""
    return sum(
        isinstance(op, LoadOp | StoreOp)
        and op.buffer_name == buffer
        and any(isinstance(p, LoopOp) for p in ancestors(op))
        for op in module.walk()
    )


def ancestors(op):
    parent = op.parent_op()
    while parent is not None:
        yield parent
        parent = parent.parent_op()


def run_both(text: str, inputs: dict, backend: str, buffer: str, spec: str = "vyre-scalar-replace"):
    """The output `buffer` of the program as written, on the reference
    interpreter (which runs a module as it is given), and after `spec` on
    `backend`."""
    after = with_passes(text, spec)
    assert accesses_in_loops(parse_module(text), buffer) > 0
    assert accesses_in_loops(after, buffer) == 0
    naive = run(text, inputs, backend="reference")[buffer]
    return naive, run(after, inputs, backend=backend)[buffer]


def same_bits(a: np.ndarray, b: np.ndarray) -> None:
    differ = a.view(np.uint32) != b.view(np.uint32)
    assert not differ.any(), f"{int(differ.sum())} of {differ.size} outputs differ"


@pytest.mark.parametrize(
    ("ni", "nj", "nk", "backend"), [(12, 10, 7, "reference"), (40, 36, 29, "wgpu")]
)
def test_polybench_gemm(ni, nj, nk, backend):
    rng = np.random.default_rng(ni)
    a = rng.standard_normal((ni, nk)).astype(np.float32)
    b = rng.standard_normal((nk, nj)).astype(np.float32)
    c = rng.standard_normal((ni, nj)).astype(np.float32)
    inputs = {"A": a.ravel(), "B": b.ravel(), "C": c.ravel()}
    naive, got = run_both(polybench_gemm(ni, nj, nk), inputs, backend, "C")
    expected = 0.5 * c + 1.5 * (a.astype(np.float64) @ b)
    np.testing.assert_allclose(got.reshape(ni, nj), expected, rtol=1e-4, atol=1e-5)
    if backend == "reference":
        same_bits(naive, got)
    else:  # the GPU compiler may contract a*b+c differently: numpy decides above
        np.testing.assert_allclose(got, naive, rtol=1e-4, atol=1e-5)


def test_polybench_syrk_then_tiled():
    """PolyBench's CUDA syrk: scalar replacement gives vyre-tile its accumulator."""
    n, m = 21, 11
    text = polybench_syrk(n, m)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((n, m)).astype(np.float32)
    c = rng.standard_normal((n, n)).astype(np.float32)
    inputs = {"A": a.ravel(), "C": c.ravel()}
    spec = "vyre-scalar-replace,vyre-tile{threads-m=4 threads-n=4 reg-m=4 reg-n=4 tile-k=4}"
    naive, got = run_both(text, inputs, "reference", "C", spec)
    assert any(isinstance(op, BarrierOp) for op in with_passes(text, spec).walk())
    a64 = a.astype(np.float64)
    expected = 0.25 * c + 1.5 * (a64 @ a64.T)
    np.testing.assert_allclose(got.reshape(n, n), expected, rtol=1e-4, atol=1e-5)
    same_bits(naive, got)


@pytest.mark.parametrize(
    ("ni", "nj", "nk", "spec"),
    [
        # the tiles overhang: the barriers order storage too
        (70, 66, 37, "vyre-scalar-replace,vyre-tile{reg-m=4 reg-n=4 tile-k=8}"),
        # 16 x 16 tiles divide the grid: workgroup memory only (owned_elements)
        (64, 48, 40, "vyre-scalar-replace,vyre-tile{threads-m=4 threads-n=4 reg-m=4 reg-n=4}"),
    ],
)
def test_polybench_gemm_tiled_on_the_gpu_backend(ni, nj, nk, spec):
    rng = np.random.default_rng(8)
    a = rng.standard_normal((ni, nk)).astype(np.float32)
    b = rng.standard_normal((nk, nj)).astype(np.float32)
    c = rng.standard_normal((ni, nj)).astype(np.float32)
    inputs = {"A": a.ravel(), "B": b.ravel(), "C": c.ravel()}
    _, got = run_both(polybench_gemm(ni, nj, nk), inputs, "wgpu", "C", spec)
    expected = 0.5 * c + 1.5 * (a.astype(np.float64) @ b)
    scale = 0.5 * np.abs(c) + 1.5 * (np.abs(a).astype(np.float64) @ np.abs(b))
    assert np.all(np.abs(got.reshape(ni, nj) - expected) <= 1e-5 * scale + 1e-6)


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_a_store_in_an_if_inside_the_loop(backend):
    n, steps = 100, 6
    rng = np.random.default_rng(9)
    x = rng.uniform(-1, 2, n).astype(np.float32)
    out = rng.uniform(-2, 8, n).astype(np.float32)
    naive, got = run_both(clipped_sums(n, steps), {"x": x, "out": out}, backend, "out")
    expected = out.copy()
    for s in range(steps):
        candidate = expected + (x + np.float32(s))
        expected = np.where(candidate < 10, candidate, expected)
    same_bits(expected, got)  # one f32 add per step: numpy computes the same bits
    same_bits(naive, got)


def test_a_loop_of_no_steps_leaves_the_element_as_it_was():
    """The trip count is read from a buffer's length (minus one): with no steps, the element
    loaded before the loop is stored back unchanged."""
    text = """vyre.program @empty workgroup_size [16, 1, 1] grid [1, 1, 1] {
  vyre.buffer @steps binding 0 read_only : ui32[?]
  vyre.buffer @out binding 1 read_write : ui32[16]
  %i = vyre.invocation_id x
  %lo = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %len = vyre.buf_len @steps
  %n = vyre.sub %len, %one : ui32
  vyre.loop @k = %lo to %n {
    %cur = vyre.load @out[%i] : ui32
    %next = vyre.add %cur, %one : ui32
    vyre.store @out[%i] = %next : ui32
  }
}
"""
    (program,) = programs(parse_module(text))
    assert [e.buffer for e in private_elements(program)] == ["out"]
    after = with_passes(text, "vyre-scalar-replace")
    out = np.arange(16, dtype=np.uint32) * 7
    for steps in (0, 3):
        got = run(after, {"steps": np.zeros(steps + 1, np.uint32), "out": out}, backend="reference")
        np.testing.assert_array_equal(got["out"], out + steps)


def test_the_pipeline_runs_it_and_can_leave_it_out():
    text = polybench_gemm(8, 8, 4)
    on = str(with_passes(text, "vyre-to-kernel"))
    off = str(with_passes(text, "vyre-to-kernel{scalar-replace=false}"))
    assert "C_elem" in on and "C_elem" not in off


def test_two_loops_with_a_store_between():
    """The value stored between the loops reaches the second loop's local."""
    text = """vyre.program @twice workgroup_size [16, 1, 1] grid [2, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[32]
  vyre.buffer @out binding 1 read_write : ui32[32]
  %i = vyre.invocation_id x
  %lo = vyre.const 0 : ui32
  %n = vyre.const 3 : ui32
  %three = vyre.const 3 : ui32
  %xv = vyre.load @x[%i] : ui32
  vyre.loop @k = %lo to %n {
    %cur = vyre.load @out[%i] : ui32
    %next = vyre.add %cur, %xv : ui32
    vyre.store @out[%i] = %next : ui32
  }
  %mid = vyre.load @out[%i] : ui32
  %tripled = vyre.mul %mid, %three : ui32
  vyre.store @out[%i] = %tripled : ui32
  vyre.loop @k2 = %lo to %n {
    %cur2 = vyre.load @out[%i] : ui32
    %kv = vyre.var @k2 : ui32
    %next2 = vyre.add %cur2, %kv : ui32
    vyre.store @out[%i] = %next2 : ui32
  }
}
"""
    rng = np.random.default_rng(10)
    x = rng.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
    out = rng.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
    naive, got = run_both(text, {"x": x, "out": out}, "reference", "out")
    expected = ((out.astype(np.uint64) + 3 * x.astype(np.uint64)) * 3 + 0 + 1 + 2) % 2**32
    np.testing.assert_array_equal(got, expected.astype(np.uint32))
    np.testing.assert_array_equal(naive, got)


POLYBENCH_GEMM_MLIR = """
// PolyBench's gemm as its CUDA kernel writes it, in standard MLIR: C[i][j] *= beta,
// then C[i][j] += alpha * A[i][k] * B[k][j] in memory, one (i, j) per invocation
func.func @gemm(%alpha: f32, %beta: f32, %A: memref<24x20xf32>, %B: memref<20x18xf32>, %C: memref<24x18xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c18 = arith.constant 18 : index
  %c20 = arith.constant 20 : index
  %c24 = arith.constant 24 : index
  "scf.parallel"(%c0, %c0, %c24, %c18, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %c = memref.load %C[%i, %j] : memref<24x18xf32>
    %cb = arith.mulf %c, %beta : f32
    memref.store %cb, %C[%i, %j] : memref<24x18xf32>
    scf.for %k = %c0 to %c20 step %c1 {
      %a = memref.load %A[%i, %k] : memref<24x20xf32>
      %b = memref.load %B[%k, %j] : memref<20x18xf32>
      %p = arith.mulf %alpha, %a : f32
      %t = arith.mulf %p, %b : f32
      %cur = memref.load %C[%i, %j] : memref<24x18xf32>
      %next = arith.addf %cur, %t : f32
      memref.store %next, %C[%i, %j] : memref<24x18xf32>
    }
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}
"""


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_standard_mlir_polybench_gemm_is_tiled(backend):
    """convert-to-vyre, then scalar replacement gives vyre-tile the accumulator."""
    from vyre_xdsl.api import parse

    module = parse(POLYBENCH_GEMM_MLIR)
    spec = "vyre-scalar-replace,vyre-tile{threads-m=4 threads-n=4 reg-m=4 reg-n=4 tile-k=8}"
    PassPipeline.parse_spec(get_all_passes(), spec).apply(vyre_context(), module)
    verify_module(module)
    assert any(isinstance(op, BarrierOp) for op in module.walk())
    rng = np.random.default_rng(11)
    a = rng.standard_normal((24, 20)).astype(np.float32)
    b = rng.standard_normal((20, 18)).astype(np.float32)
    c = rng.standard_normal((24, 18)).astype(np.float32)
    inputs = {"alpha": np.float32(1.5), "beta": np.float32(-0.5), "A": a, "B": b, "C": c}
    got = run(module, inputs, backend=backend)["C"]
    expected = -0.5 * c + 1.5 * (a.astype(np.float64) @ b)
    np.testing.assert_allclose(got.reshape(24, 18), expected, rtol=1e-4, atol=1e-5)


def test_an_element_past_the_end_stays_in_memory():
    """Invocations 10..15 store past the end of @small (nothing is kept) and load
    zero back; a local would have handed them the stored 8. Found by the
    soundness test's generated modules."""
    text = """vyre.program @past workgroup_size [16, 1, 1] grid [1, 1, 1] {
  vyre.buffer @small binding 0 read_write : ui32[10]
  vyre.buffer @out binding 1 read_write : ui32[16]
  %i = vyre.invocation_id x
  %eight = vyre.const 8 : ui32
  %one = vyre.const 1 : ui32
  %lo = vyre.const 0 : ui32
  %n = vyre.const 2 : ui32
  vyre.store @small[%i] = %eight : ui32
  vyre.loop @k = %lo to %n {
    %v = vyre.load @small[%i] : ui32
    %w = vyre.add %v, %one : ui32
    vyre.store @out[%i] = %w : ui32
  }
}
"""
    (program,) = programs(parse_module(text))
    assert [e.buffer for e in private_elements(program)] == ["out"]  # not @small
    after = with_passes(text, "vyre-scalar-replace")
    inputs = {"small": np.zeros(10, np.uint32), "out": np.zeros(16, np.uint32)}
    got = run(after, inputs, backend="reference")["out"]
    np.testing.assert_array_equal(got, [9] * 10 + [1] * 6)


# ---------------------------------------------------------------- random programs


class _Program:
    """A random program over `@v` (the element the pass may keep in a local),
    `@x` (read only) and `@out` (what the test observes), one `ui32` value per
    invocation: loads and stores of `@v` at the invocation's own element (or,
    sometimes, its neighbour's), in loops and `if`s, with values mixed by
    arithmetic; every value loaded from `@v` is folded into `@out`, which the
    pass may keep in a local too."""

    def __init__(self, draw, count: int, own: str):
        self.draw, self.lines, self.n, self.own = draw, [], 0, own

    def fresh(self) -> str:
        self.n += 1
        return f"%t{self.n}"

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("  " * indent + text)

    def value(self, pool: list[str], indent: int) -> str:
        a, b = self.draw(st.sampled_from(pool)), self.draw(st.sampled_from(pool))
        op = self.draw(st.sampled_from(["add", "mul", "bit_xor"]))
        name = self.fresh()
        self.emit(indent, f"{name} = vyre.{op} {a}, {b} : ui32")
        return name

    def observe(self, value: str, indent: int) -> None:
        """Fold `value` into the invocation's @out element (out += value * c)."""
        old, hashed, total = self.fresh(), self.fresh(), self.fresh()
        self.emit(indent, f"{old} = vyre.load @out[%i] : ui32")
        self.emit(indent, f"{hashed} = vyre.mul {value}, %c3 : ui32")
        self.emit(indent, f"{total} = vyre.add {old}, {hashed} : ui32")
        self.emit(indent, f"vyre.store @out[%i] = {total} : ui32")

    def block(self, pool: list[str], indent: int, depth: int) -> None:
        pool = list(pool)
        for _ in range(self.draw(st.integers(1, 5))):
            kind = self.draw(st.sampled_from(["load", "store", "out", "loop", "if"]))
            index = self.own if self.draw(st.integers(0, 9)) else "%next"
            if kind == "load":
                name = self.fresh()
                self.emit(indent, f"{name} = vyre.load @v[{index}] : ui32")
                pool.append(name)
                self.observe(name, indent)
            elif kind == "store":
                self.emit(indent, f"vyre.store @v[{index}] = {self.value(pool, indent)} : ui32")
            elif kind == "out":
                self.emit(indent, f"vyre.store @out[%i] = {self.value(pool, indent)} : ui32")
            elif depth < 2 and kind == "loop":
                var = self.fresh().lstrip("%")
                trips = self.draw(st.integers(0, 3))
                self.emit(indent, f"%{var}_n = vyre.const {trips} : ui32")
                self.emit(indent, f"vyre.loop @{var} = %zero to %{var}_n {{")
                self.emit(indent + 1, f"%{var}_v = vyre.var @{var} : ui32")
                self.block([*pool, f"%{var}_v"], indent + 1, depth + 1)
                self.emit(indent, "}")
            elif depth < 2 and kind == "if":
                low = self.fresh()
                self.emit(indent, f"{low} = vyre.lt {self.value(pool, indent)}, %half : ui32")
                self.emit(indent, f"vyre.if {low} {{")
                self.block(pool, indent + 1, depth + 1)
                self.emit(indent, "}")


@st.composite
def random_programs(draw):
    count = draw(st.sampled_from([16, 12]))  # 12: invocations 12..15 are past @v's end
    guard = draw(st.booleans())
    gen = _Program(draw, count, "%i")
    gen.block(["%i", "%c3", "%xv"], 2 if guard else 1, 0)
    body = "\n".join(gen.lines)
    if guard:
        body = f"  %inside = vyre.lt %i, %limit : ui32\n  vyre.if %inside {{\n{body}\n  }}"
    limit = draw(st.sampled_from([count, 16]))
    return f"""vyre.program @p workgroup_size [16, 1, 1] grid [1, 1, 1] {{
  vyre.buffer @v binding 0 read_write : ui32[{count}]
  vyre.buffer @x binding 1 read_only : ui32[16]
  vyre.buffer @out binding 2 read_write : ui32[16]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %next = vyre.add %i, %one : ui32
  %zero = vyre.const 0 : ui32
  %c3 = vyre.const 2654435761 : ui32
  %half = vyre.const 2147483648 : ui32
  %limit = vyre.const {limit} : ui32
  %xv = vyre.load @x[%i] : ui32
{body}
}}
"""


@settings(max_examples=300, deadline=None)
@given(text=random_programs(), seed=st.integers(0, 2**32 - 1))
def test_random_programs_compute_what_they_computed(text, seed):
    """Whatever the pass keeps in a local, the reference interpreter's results
    (both buffers, bit for bit) are those of the program as written."""
    note(text)
    rng = np.random.default_rng(seed)
    module = parse_module(text)
    verify_module(module)
    count = int(text.split("ui32[", 1)[1].split("]", 1)[0])
    inputs = {
        "v": rng.integers(0, 2**32, count, dtype=np.uint64).astype(np.uint32),
        "x": rng.integers(0, 2**32, 16, dtype=np.uint64).astype(np.uint32),
        "out": rng.integers(0, 2**32, 16, dtype=np.uint64).astype(np.uint32),
    }
    after = with_passes(text, "vyre-scalar-replace")
    expected = run(text, inputs, backend="reference")
    got = run(after, inputs, backend="reference")
    for name in ("v", "out"):
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)
