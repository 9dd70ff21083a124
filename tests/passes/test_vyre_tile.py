"""vyre-tile: the tiled matrix product computes what the naive one computes.

Each case runs the naive program and its tiled form on the same random inputs
and compares them bit for bit on the reference interpreter and for integers
(tiling keeps every output's initial value, update expression and order of k),
up to one rounding per update for f32 on a GPU (whose compiler may contract
`a*b+c` differently in the two programs), and both against numpy in float64. Small sizes run on the reference interpreter,
larger ones (and sizes no tile divides) on the wgpu backend (lavapipe on a
machine without a GPU). The shapes the pass must refuse are checked through
the analysis's reason and the pass's remark.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.passes import PassPipeline

from vyre_xdsl import run
from vyre_xdsl.analysis.tiling import NotTileable, TileNest, affine_form, recognize
from vyre_xdsl.context import parse_module, vyre_context
from vyre_xdsl.diagnostics import VyreError, verify_module
from vyre_xdsl.dialects.vyre import BarrierOp, IfOp, LoadOp, ProgramOp, f32, programs
from vyre_xdsl.passes import get_all_passes

from ..support import EXAMPLES

SMALL = "vyre-tile{threads-m=4 threads-n=4 reg-m=4 reg-n=4 tile-k=4}"


def gemm_text(
    m: int,
    n: int,
    k: int,
    *,
    name: str = "gemm",
    a: str = "A",
    b: str = "B",
    c: str = "C",
    wg: int = 8,
    transposed_a: bool = False,
    update: str = "add",
    element: str = "f32",
    dynamic_k: bool = False,
    guard: bool = True,
    out_access: str = "read_write",
) -> str:
    """The naive product C = A B (row-major; A stored k x m when
    `transposed_a`), one invocation per output on a 2-D grid."""
    zero = "0.0" if element == "f32" else "0"
    ia = (
        "%ra = vyre.mul %kv, %m : ui32\n      %ia = vyre.add %ra, %row : ui32"
        if transposed_a
        else "%ra = vyre.mul %row, %k : ui32\n      %ia = vyre.add %ra, %kv : ui32"
    )
    if update == "fma":
        body = "%s = vyre.fma %av, %bv, %acc : " + element
    else:
        body = f"%p = vyre.mul %av, %bv : {element}\n      %s = vyre.add %acc, %p : {element}"
    upper = "%k"
    bounds = ""
    if dynamic_k:
        # k read from the length of @B (k x n elements): the same in every invocation
        bounds = "%blen = vyre.buf_len @" + b + "\n  %kdyn = vyre.div %blen, %n : ui32"
        upper = "%kdyn"
    b_count = "?" if dynamic_k else str(k * n)
    # without the guard, the nest sits at the top level (sizes the grid divides)
    open_guard, close_guard = ("vyre.if %inside {", "}") if guard else ("", "")
    return f"""vyre.program @{name} workgroup_size [{wg}, {wg}, 1] grid [{-(-n // wg)}, {-(-m // wg)}, 1] {{
  vyre.buffer @{a} binding 0 read_only : {element}[{m * k}]
  vyre.buffer @{b} binding 1 read_only : {element}[{b_count}]
  vyre.buffer @{c} binding 2 {out_access} : {element}[{m * n}]
  %col = vyre.invocation_id x
  %row = vyre.invocation_id y
  %m = vyre.const {m} : ui32
  %n = vyre.const {n} : ui32
  %k = vyre.const {k} : ui32
  %zero = vyre.const {zero} : {element}
  %lo = vyre.const 0 : ui32
  {bounds}
  %in_col = vyre.lt %col, %n : ui32
  %in_row = vyre.lt %row, %m : ui32
  %inside = vyre.and %in_col, %in_row : i1
  {open_guard}
    vyre.let @acc = %zero : {element}
    vyre.loop @kk = %lo to {upper} {{
      %kv = vyre.var @kk : ui32
      {ia}
      %av = vyre.load @{a}[%ia] : {element}
      %rb = vyre.mul %kv, %n : ui32
      %ib = vyre.add %rb, %col : ui32
      %bv = vyre.load @{b}[%ib] : {element}
      %acc = vyre.var @acc : {element}
      {body}
      vyre.assign @acc = %s : {element}
    }}
    %r = vyre.var @acc : {element}
    %rc = vyre.mul %row, %n : ui32
    %ic = vyre.add %rc, %col : ui32
    vyre.store @{c}[%ic] = %r : {element}
  {close_guard}
}}
"""


def tiled(source, spec: str = "vyre-tile"):
    module = parse_module(source) if isinstance(source, str) else source.clone()
    verify_module(module)
    PassPipeline.parse_spec(get_all_passes(), spec).apply(vyre_context(), module)
    verify_module(module)
    return module


def operands(m: int, n: int, k: int, seed: int, element: str = "f32"):
    rng = np.random.default_rng(seed)
    if element == "f32":
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
    else:
        a = rng.integers(0, 2**32, (m, k), dtype=np.uint64).astype(np.uint32)
        b = rng.integers(0, 2**32, (k, n), dtype=np.uint64).astype(np.uint32)
    return a, b


def check_gemm(m, n, k, backend, spec=SMALL, seed=0, transposed_a=False, **options):
    text = gemm_text(m, n, k, transposed_a=transposed_a, **options)
    element = options.get("element", "f32")
    a, b = operands(m, n, k, seed, element)
    # poison the output: every element must be written by both programs
    poison = np.full(m * n, np.nan if element == "f32" else 0xDEADBEEF, dtype=a.dtype)
    inputs = {"A": (a.T if transposed_a else a).ravel().copy(), "B": b.ravel(), "C": poison}
    module = tiled(text, spec)
    assert any(isinstance(op, BarrierOp) for op in module.walk()), "the pass did not tile"
    naive = run(text, inputs, backend=backend)["C"]
    tiled_out = run(module, inputs, backend=backend)["C"]
    if element == "f32":
        expected = (a.astype(np.float64) @ b.astype(np.float64)).ravel()
        scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
        assert np.all(np.abs(tiled_out - expected) <= 1e-5 * scale.ravel() + 1e-6)
    else:
        # every term and partial sum wraps at 32 bits: the sum mod 2^32, term by term
        expected = np.zeros((m, n), dtype=np.uint64)
        for kk in range(k):
            expected = (expected + np.outer(a[:, kk], b[kk, :]).astype(np.uint64)) % (1 << 32)
        assert np.array_equal(tiled_out, expected.astype(np.uint32).ravel())
    differ = naive.view(np.uint32) != tiled_out.view(np.uint32)
    if backend == "reference" or element != "f32":
        # no contraction: the same k order gives the same bits
        gap = np.abs(naive[differ].astype(np.float64) - tiled_out[differ].astype(np.float64))
        assert not differ.any(), (
            f"{int(differ.sum())} of {differ.size} outputs differ from the naive program's, "
            f"by up to {gap.max():.3g}"
        )
        return module
    # a GPU compiler may contract each a*b+c into an fma in one program and not in the
    # other (SPEC 3.4): each of the k updates then rounds differently, by at most one
    # rounding of its partial sum, so the two differ by at most 2 k 2^-24 |A||B|
    bound = 2 * k * 2.0**-24 * scale.ravel()
    gap = np.abs(naive.astype(np.float64) - tiled_out.astype(np.float64))
    assert np.all(gap <= bound), f"outputs differ by up to {gap.max():.3g} past rounding"
    return module


# ---------------------------------------------------------------- reference backend


@pytest.mark.parametrize(
    ("m", "n", "k", "spec"),
    [
        (16, 16, 8, SMALL),  # one tile, no remainder
        (13, 11, 7, SMALL),  # edges on both axes, a partial slice only
        (21, 19, 10, SMALL),  # two tiles each way, full slices and a partial one
        (9, 17, 6, "vyre-tile{threads-m=2 threads-n=4 reg-m=4 reg-n=2 tile-k=4}"),  # scalar
        (12, 12, 5, "vyre-tile{threads-m=4 threads-n=4 reg-m=4 reg-n=4 tile-k=2 vector-width=1}"),
    ],
)
def test_reference_small(m, n, k, spec):
    check_gemm(m, n, k, "reference", spec)


def test_reference_fma_update_transposed_a_and_dynamic_k():
    check_gemm(10, 9, 11, "reference", update="fma", transposed_a=True, dynamic_k=True)


def test_reference_unsigned_integers_wrap_alike():
    check_gemm(7, 6, 9, "reference", element="ui32")


def test_reference_without_guard():
    check_gemm(16, 8, 12, "reference", guard=False)


def test_converted_standard_mlir_example():
    """examples/matmul_scf.mlir through convert-to-vyre, then tiled."""

    from vyre_xdsl.api import parse

    source = EXAMPLES / "matmul_scf.mlir"
    module = parse(source.read_text())  # parse converts standard MLIR
    after = tiled(module, SMALL)
    rng = np.random.default_rng(3)
    inputs = {
        "A": rng.standard_normal(128).astype(np.float32),
        "B": rng.standard_normal(64).astype(np.float32),
        "C": np.zeros(32, np.float32),
    }
    naive = run(module, inputs, backend="reference")["C"]
    got = run(after, inputs, backend="reference")["C"]
    assert np.array_equal(naive.view(np.uint32), got.view(np.uint32))
    expected = inputs["A"].reshape(8, 16).astype(np.float64) @ inputs["B"].reshape(16, 4)
    np.testing.assert_allclose(got.reshape(8, 4), expected, rtol=1e-5, atol=1e-5)


def test_two_products_in_a_chain_are_both_tiled():
    """2mm: T = A B, then D = T C, two programs sharing @T."""
    first = gemm_text(12, 10, 9, name="first", a="A", b="B", c="T", out_access="write_only")
    second = gemm_text(12, 7, 10, name="second", a="T", b="C", c="D", out_access="write_only")
    second = second.replace("binding 0", "binding 3").replace("binding 1", "binding 4")
    text = first + second.replace("binding 2", "binding 5")
    module = tiled(text, SMALL)
    assert sum(isinstance(op, BarrierOp) for op in module.walk()) >= 4
    rng = np.random.default_rng(4)
    a = rng.standard_normal((12, 9)).astype(np.float32)
    b = rng.standard_normal((9, 10)).astype(np.float32)
    c = rng.standard_normal((10, 7)).astype(np.float32)
    inputs = {"A": a.ravel(), "B": b.ravel(), "C": c.ravel()}
    naive = run(text, inputs, backend="reference")
    got = run(module, inputs, backend="reference")
    assert np.array_equal(naive["D"].view(np.uint32), got["D"].view(np.uint32))
    expected = (a.astype(np.float64) @ b) @ c
    np.testing.assert_allclose(got["D"].reshape(12, 7), expected, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- wgpu backend


@pytest.mark.parametrize(
    ("m", "n", "k", "spec"),
    [
        (64, 48, 40, "vyre-tile"),  # the default 128 x 128 tile overhangs both axes
        (64, 48, 40, "vyre-tile{reg-m=4 reg-n=4 tile-k=8}"),
        (37, 29, 21, "vyre-tile{threads-m=8 threads-n=8 reg-m=4 reg-n=4 tile-k=8}"),
        (37, 29, 21, "vyre-tile{threads-m=8 threads-n=4 reg-m=2 reg-n=4 tile-k=4}"),
    ],
)
def test_wgpu(m, n, k, spec):
    check_gemm(m, n, k, "wgpu", spec, seed=m + n + k)


def test_wgpu_transposed_a_dynamic_k_fma():
    check_gemm(
        33,
        40,
        19,
        "wgpu",
        "vyre-tile{reg-m=4 reg-n=4}",
        transposed_a=True,
        dynamic_k=True,
        update="fma",
    )


# ---------------------------------------------------------------- what is refused


def only_program(text: str) -> ProgramOp:
    module = parse_module(text)
    verify_module(module)
    (program,) = programs(module)
    return program


def test_recognizes_the_naive_product_and_its_affine_indices():
    nest = recognize(only_program(gemm_text(8, 8, 8)))
    assert isinstance(nest, TileNest)
    assert nest.row_form == {"row": 8, "k": 1}
    assert nest.col_form == {"k": 8, "col": 1}
    assert nest.store_form == {"row": 8, "col": 1}
    assert (nest.rows, nest.cols) == (8, 8)
    assert affine_form(nest.store.value) is None  # an f32 value is no index


REFUSED = {
    "no explicit grid": lambda t: t.replace(" grid [1, 1, 1]", ""),
    "is written by the program": lambda t: t.replace(
        "vyre.store @C[%ic]", "vyre.store @A[%ic]"
    ).replace("@A binding 0 read_only", "@A binding 0 read_write"),
    "not affine": lambda t: t.replace(
        "%ia = vyre.add %ra, %kv : ui32", "%ia = vyre.bit_xor %ra, %kv : ui32"
    ),
    "same element": lambda t: t.replace(
        "%ic = vyre.add %rc, %col : ui32", "%ic = vyre.add %row, %col : ui32"
    ),
    "uses 'vyre.barrier'": lambda t: t.replace("  %in_col =", "  vyre.barrier\n  %in_col ="),
    "nothing to share": lambda t: t.replace(
        "%ib = vyre.add %rb, %col : ui32", "%ib = vyre.add %rb, %row : ui32"
    ),
    "does not vary with": lambda t: t.replace(
        "%ib = vyre.add %rb, %col : ui32", "%ib = vyre.add %rc0, %col : ui32"
    ).replace(
        "%rb = vyre.mul %kv, %n : ui32",
        "%rb = vyre.mul %kv, %n : ui32\n      %rc0 = vyre.mul %row, %n : ui32",
    ),
    "exactly two loads": lambda t: t.replace(
        "%bv = vyre.load @B[%ib] : f32",
        "%bv0 = vyre.load @B[%ib] : f32\n      %b2 = vyre.load @A[%ib] : f32\n"
        "      %bv = vyre.add %bv0, %b2 : f32",
    ),
    "read outside the loop": lambda t: t.replace(
        "vyre.let @acc = %zero : f32",
        "%ic0 = vyre.add %row, %col : ui32\n    %c0 = vyre.load @C[%ic0] : f32\n"
        "    vyre.let @acc = %c0 : f32",
    ),
}


@pytest.mark.parametrize("reason", list(REFUSED))
def test_refused_shapes_say_why(reason, capsys):
    text = REFUSED[reason](gemm_text(8, 8, 8))
    found = recognize(only_program(text))
    assert isinstance(found, NotTileable)
    assert reason in found.reason
    module = tiled(text, "vyre-tile{remarks=true}")
    assert str(module) == str(parse_module(text))  # left as it was
    assert f"remark: not tiled: {found.reason}" in capsys.readouterr().err


def test_too_little_workgroup_memory_is_a_remark(capsys):
    text = gemm_text(8, 8, 8)
    module = tiled(text, "vyre-tile{max-workgroup-storage=1024 remarks=true}")
    assert not any(isinstance(op, BarrierOp) for op in module.walk())
    assert "more than max-workgroup-storage=1024" in capsys.readouterr().err


@pytest.mark.parametrize("option", ["reg-m=3", "tile-k=0", "vector-width=2", "threads-m=128"])
def test_bad_options_are_errors(option):
    with pytest.raises(VyreError, match="vyre-tile"):
        tiled(gemm_text(8, 8, 8), f"vyre-tile{{{option}}}")


def test_pipeline_option():
    module = tiled(gemm_text(8, 8, 8), "vyre-to-kernel{tile=true}")
    text = str(module)
    assert "kernel.barrier" in text or "barrier" in text
    untiled = str(tiled(gemm_text(8, 8, 8), "vyre-to-kernel"))
    assert "barrier" not in untiled


def test_tiled_wgsl_orders_workgroup_memory_only():
    """The outputs are stored after the last barrier and never read: the barriers
    need not order storage memory (no `storageBarrier()`, a device-wide fence on
    NVIDIA), only workgroup memory."""
    from vyre_xdsl.backends.wgsl.compile import compile_module

    (kernel,) = compile_module(tiled(gemm_text(37, 29, 21), SMALL))
    assert "workgroupBarrier()" in kernel.wgsl
    assert "storageBarrier()" not in kernel.wgsl


# ---------------------------------------------------------------- PolyBench-style products


def syrk_text(n: int, m: int, wg: int = 8) -> str:
    """PolyBench's syrk over the whole matrix, one invocation per output:
    C[i, j] = beta * C[i, j] + alpha * sum over k of A[i, k] * A[j, k], with A
    n x m. One buffer is both operands; the output is read at its own index."""
    return f"""vyre.program @syrk workgroup_size [{wg}, {wg}, 1] grid [{-(-n // wg)}, {-(-n // wg)}, 1] {{
  vyre.buffer @A binding 0 read_only : f32[{n * m}]
  vyre.buffer @C binding 1 read_write : f32[{n * n}]
  %col = vyre.invocation_id x
  %row = vyre.invocation_id y
  %n = vyre.const {n} : ui32
  %m = vyre.const {m} : ui32
  %lo = vyre.const 0 : ui32
  %alpha = vyre.const 1.5 : f32
  %beta = vyre.const 0.25 : f32
  %in_col = vyre.lt %col, %n : ui32
  %in_row = vyre.lt %row, %n : ui32
  %inside = vyre.and %in_col, %in_row : i1
  vyre.if %inside {{
    %rc = vyre.mul %row, %n : ui32
    %ic = vyre.add %rc, %col : ui32
    %old = vyre.load @C[%ic] : f32
    %init = vyre.mul %old, %beta : f32
    vyre.let @acc = %init : f32
    vyre.loop @kk = %lo to %m {{
      %kv = vyre.var @kk : ui32
      %ra = vyre.mul %row, %m : ui32
      %ia = vyre.add %ra, %kv : ui32
      %av = vyre.load @A[%ia] : f32
      %rb = vyre.mul %col, %m : ui32
      %ib = vyre.add %rb, %kv : ui32
      %bv = vyre.load @A[%ib] : f32
      %p = vyre.mul %av, %bv : f32
      %q = vyre.mul %alpha, %p : f32
      %acc = vyre.var @acc : f32
      %s = vyre.add %acc, %q : f32
      vyre.assign @acc = %s : f32
    }}
    %r = vyre.var @acc : f32
    vyre.store @C[%ic] = %r : f32
  }}
}}
"""


def covariance_text(samples: int, m: int, wg: int = 8) -> str:
    """PolyBench's covariance product over the whole matrix, on centred data
    (samples x m): cov[j1, j2] = sum over i of data[i, j1] * data[i, j2] /
    (samples - 1). The data is read down two columns; no guard (the grid is
    exact)."""
    return f"""vyre.program @covariance workgroup_size [{wg}, {wg}, 1] grid [{m // wg}, {m // wg}, 1] {{
  vyre.buffer @data binding 0 read_only : f32[{samples * m}]
  vyre.buffer @cov binding 1 write_only : f32[{m * m}]
  %j2 = vyre.invocation_id x
  %j1 = vyre.invocation_id y
  %m = vyre.const {m} : ui32
  %samples = vyre.const {samples} : ui32
  %lo = vyre.const 0 : ui32
  %zero = vyre.const 0.0 : f32
  %fn = vyre.const {samples - 1}.0 : f32
  vyre.let @acc = %zero : f32
  vyre.loop @i = %lo to %samples {{
    %iv = vyre.var @i : ui32
    %ri = vyre.mul %iv, %m : ui32
    %ia = vyre.add %ri, %j1 : ui32
    %a = vyre.load @data[%ia] : f32
    %ib = vyre.add %ri, %j2 : ui32
    %b = vyre.load @data[%ib] : f32
    %p = vyre.mul %a, %b : f32
    %acc = vyre.var @acc : f32
    %s = vyre.add %acc, %p : f32
    vyre.assign @acc = %s : f32
  }}
  %r = vyre.var @acc : f32
  %v = vyre.div %r, %fn : f32
  %rc = vyre.mul %j1, %m : ui32
  %ic = vyre.add %rc, %j2 : ui32
  vyre.store @cov[%ic] = %v : f32
}}
"""


def gemm_alpha_beta_text(m: int, n: int, k: int, wg: int = 8) -> str:
    """PolyBench's gemm: C = alpha * A B + beta * C, the output read back at
    its own index in the stored value."""
    text = gemm_text(m, n, k, wg=wg)
    return text.replace(
        "    vyre.store @C[%ic] = %r : f32",
        "    %old = vyre.load @C[%ic] : f32\n"
        "    %alpha = vyre.const 1.5 : f32\n"
        "    %beta = vyre.const -0.5 : f32\n"
        "    %ab = vyre.mul %alpha, %r : f32\n"
        "    %bc = vyre.mul %beta, %old : f32\n"
        "    %new = vyre.add %ab, %bc : f32\n"
        "    vyre.store @C[%ic] = %new : f32",
    )


def same_bits(naive: np.ndarray, got: np.ndarray) -> None:
    differ = naive.view(np.uint32) != got.view(np.uint32)
    assert not differ.any(), f"{int(differ.sum())} of {differ.size} outputs differ"


@pytest.mark.parametrize(("n", "m", "backend"), [(13, 7, "reference"), (40, 23, "wgpu")])
def test_syrk_reads_one_buffer_twice_and_its_output_once(n, m, backend):
    text = syrk_text(n, m)
    nest = recognize(only_program(text))
    assert isinstance(nest, TileNest), nest
    assert nest.row_load.buffer_name == nest.col_load.buffer_name == "A"
    module = tiled(text, SMALL)
    assert any(isinstance(op, BarrierOp) for op in module.walk())
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, m)).astype(np.float32)
    c = rng.standard_normal((n, n)).astype(np.float32)
    inputs = {"A": a.ravel(), "C": c.ravel()}
    got = run(module, inputs, backend=backend)["C"]
    a64 = a.astype(np.float64)
    expected = 0.25 * c + 1.5 * (a64 @ a64.T)
    scale = 0.25 * np.abs(c) + 1.5 * (np.abs(a64) @ np.abs(a64).T)
    assert np.all(np.abs(got.reshape(n, n) - expected) <= 1e-5 * scale + 1e-6)
    if backend == "reference":
        same_bits(run(text, inputs, backend=backend)["C"], got)


@pytest.mark.parametrize(("samples", "m", "backend"), [(9, 16, "reference"), (50, 32, "wgpu")])
def test_covariance_reads_two_columns_of_one_buffer(samples, m, backend):
    text = covariance_text(samples, m)
    module = tiled(text, SMALL)
    assert any(isinstance(op, BarrierOp) for op in module.walk())
    rng = np.random.default_rng(samples)
    data = rng.standard_normal((samples, m)).astype(np.float32)
    data -= data.mean(axis=0, dtype=np.float32)
    inputs = {"data": data.ravel()}
    got = run(module, inputs, backend=backend)["cov"]
    expected = np.cov(data.astype(np.float64), rowvar=False)
    scale = np.abs(data.astype(np.float64)).T @ np.abs(data) / (samples - 1)
    assert np.all(np.abs(got.reshape(m, m) - expected) <= 1e-5 * scale + 1e-6)
    if backend == "reference":
        same_bits(run(text, inputs, backend=backend)["cov"], got)


def test_gemm_alpha_beta_reads_its_output_in_the_stored_value():
    m, n, k = 11, 10, 9
    text = gemm_alpha_beta_text(m, n, k)
    module = tiled(text, SMALL)
    assert any(isinstance(op, BarrierOp) for op in module.walk())
    a, b = operands(m, n, k, seed=5)
    c = np.random.default_rng(6).standard_normal(m * n).astype(np.float32)
    inputs = {"A": a.ravel(), "B": b.ravel(), "C": c}
    got = run(module, inputs, backend="reference")["C"]
    expected = 1.5 * (a.astype(np.float64) @ b) - 0.5 * c.reshape(m, n)
    np.testing.assert_allclose(got.reshape(m, n), expected, rtol=1e-4, atol=1e-5)
    same_bits(run(text, inputs, backend="reference")["C"], got)


def test_the_output_read_at_another_index_is_refused(capsys):
    """syrk reading C transposed for its initial value: another invocation
    writes that element, so the order of that read and that write matters."""
    text = syrk_text(8, 4).replace(
        "%old = vyre.load @C[%ic] : f32",
        "%rt = vyre.mul %col, %n : ui32\n    %it = vyre.add %rt, %row : ui32\n"
        "    %old = vyre.load @C[%it] : f32",
    )
    found = recognize(only_program(text))
    assert isinstance(found, NotTileable)
    assert "read outside the loop other than at the store's index" in found.reason


def test_a_part_of_the_update_that_only_the_row_reads_is_computed_once_per_row():
    """acc + (alpha * A[i, k]) * B[k, j]: `alpha * A[i, k]` is the same for every
    output of a row, so each k of a slice computes it once per row of the block
    (reg-m times), not once per output (reg-m x reg-n times)."""
    text = gemm_text(16, 16, 8).replace(
        "%p = vyre.mul %av, %bv : f32",
        "%alpha = vyre.const 1.5 : f32\n      %pa = vyre.mul %alpha, %av : f32\n"
        "      %p = vyre.mul %pa, %bv : f32",
    )
    module = tiled(text, SMALL)  # 4 x 4 outputs per invocation, slices of 4, 2 slices
    (program,) = programs(module)
    (loop,) = [op for op in program.walk() if op.name == "vyre.loop"]
    by_alpha = [
        op
        for op in loop.walk()
        if op.name == "vyre.mul"
        and any(getattr(v.owner, "name", "") == "vyre.const" and v.type == f32 for v in op.operands)
    ]
    assert len(by_alpha) == 4 * 4  # reg-m rows x tile-k values of k
    rng = np.random.default_rng(12)
    a = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal((8, 16)).astype(np.float32)
    inputs = {"A": a.ravel(), "B": b.ravel(), "C": np.zeros(256, np.float32)}
    naive = run(text, inputs, backend="reference")["C"]
    got = run(module, inputs, backend="reference")["C"]
    assert np.array_equal(naive.view(np.uint32), got.view(np.uint32))
    np.testing.assert_allclose(
        got.reshape(16, 16), 1.5 * (a.astype(np.float64) @ b), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize(
    "text",
    [
        gemm_alpha_beta_text(16, 16, 8),  # the tiles divide the grid
        gemm_alpha_beta_text(13, 11, 7),  # they overhang it on both axes
        syrk_text(16, 8),  # C read for the initial value, before the barriers
        syrk_text(13, 7),
    ],
)
def test_a_tiled_product_that_reads_its_output_orders_workgroup_memory_only(text):
    """C = alpha A B + beta C reads each output and stores it, under the
    program's guard. No two invocations touch one element of C (the workgroup
    memory analysis reads the guards where the tiles overhang), so the
    barriers order workgroup memory only. An initial value that reads C is
    read only for the outputs that are stored: past the edge, the index is
    another row's element."""
    from vyre_xdsl.backends.wgsl.compile import compile_module

    module = tiled(text, SMALL)
    loads = [op for op in module.walk() if isinstance(op, LoadOp) and op.buffer_name == "C"]
    assert loads
    for load in loads:
        assert any(isinstance(parent, IfOp) for parent in ancestors(load)), load
    (kernel,) = compile_module(module)
    assert "workgroupBarrier()" in kernel.wgsl
    assert "storageBarrier()" not in kernel.wgsl


def ancestors(op):
    parent = op.parent_op()
    while parent is not None:
        yield parent
        parent = parent.parent_op()
