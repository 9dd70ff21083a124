"""vyre programs a CUDA programmer writes (docs/language.md, "Launch geometry" and
"Porting CUDA kernels"): a 32 x 8 block over a 2-D image with a guard, a
transpose through workgroup memory with barriers, a tiled matmul with barriers
inside a loop, a 3-D stencil on a 3-D grid,
and time steps with `repeat=` that read `vyre.num_workgroups` and
`vyre.repetition`. Each runs on the reference interpreter and on wgpu
(lavapipe), unfused and fused, against numpy; the WGSL keeps each grid.
"""

from __future__ import annotations

import numpy as np
import pytest

from vyre_xdsl import compile, run
from vyre_xdsl.builder import ProgramBuilder, module_of

BACKENDS = ("reference", "wgpu")
TOL = {"rtol": 1e-5, "atol": 1e-5}


def rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


IMAGE_32X8 = """
// CUDA: brighten<<<dim3(4, 5), dim3(32, 8)>>>(img, out, W=100, H=37)
vyre.program @brighten workgroup_size [32, 8, 1] grid [4, 5, 1] {
  vyre.buffer @img binding 0 read_only : f32[3700]
  vyre.buffer @out binding 1 write_only : f32[3700]
  vyre.buffer @dims binding 2 uniform : ui32[2]
  %x = vyre.invocation_id x
  %y = vyre.invocation_id y
  %c0 = vyre.const 0 : ui32
  %c1 = vyre.const 1 : ui32
  %w = vyre.load @dims[%c0] : ui32
  %h = vyre.load @dims[%c1] : ui32
  %inx = vyre.lt %x, %w : ui32
  %iny = vyre.lt %y, %h : ui32
  %in = vyre.and %inx, %iny : i1
  vyre.if %in {
    %row = vyre.mul %y, %w : ui32
    %i = vyre.add %row, %x : ui32
    %v = vyre.load @img[%i] : f32
    %yf = vyre.cast %y : ui32 to f32
    %xf = vyre.cast %x : ui32 to f32
    %k = vyre.const 0.01 : f32
    %g = vyre.mul %xf, %k : f32
    %s = vyre.fma %v, %yf, %g : f32
    vyre.store @out[%i] = %s : f32
  }
}
"""


TILED_TRANSPOSE = """
// CUDA transpose through shared memory: 16x16 tiles, padded to 17 columns
// in: 40 rows x 24 cols ; out: 24 rows x 40 cols. grid = (ceil(24/16), ceil(40/16)) = (2, 3)
vyre.program @transpose workgroup_size [16, 16, 1] grid [2, 3, 1] {
  vyre.buffer @inp binding 0 read_only : f32[960]
  vyre.buffer @outp binding 1 write_only : f32[960]
  vyre.buffer @tile workgroup : f32[272]
  %tx = vyre.local_id x
  %ty = vyre.local_id y
  %bx = vyre.workgroup_id x
  %by = vyre.workgroup_id y
  %c16 = vyre.const 16 : ui32
  %c17 = vyre.const 17 : ui32
  %rows = vyre.const 40 : ui32
  %cols = vyre.const 24 : ui32
  %x = vyre.invocation_id x
  %y = vyre.invocation_id y
  %inx = vyre.lt %x, %cols : ui32
  %iny = vyre.lt %y, %rows : ui32
  %in = vyre.and %inx, %iny : i1
  vyre.if %in {
    %r = vyre.mul %y, %cols : ui32
    %src = vyre.add %r, %x : ui32
    %v = vyre.load @inp[%src] : f32
    %tr = vyre.mul %ty, %c17 : ui32
    %ti = vyre.add %tr, %tx : ui32
    vyre.store @tile[%ti] = %v : f32
  }
  vyre.barrier
  // out[(bx*16 + ty)][(by*16 + tx)] = tile[tx][ty]
  %ox0 = vyre.mul %by, %c16 : ui32
  %ox = vyre.add %ox0, %tx : ui32
  %oy0 = vyre.mul %bx, %c16 : ui32
  %oy = vyre.add %oy0, %ty : ui32
  %okx = vyre.lt %ox, %rows : ui32
  %oky = vyre.lt %oy, %cols : ui32
  %ok = vyre.and %okx, %oky : i1
  vyre.if %ok {
    %tr2 = vyre.mul %tx, %c17 : ui32
    %ti2 = vyre.add %tr2, %ty : ui32
    %w = vyre.load @tile[%ti2] : f32
    %orow = vyre.mul %oy, %rows : ui32
    %dst = vyre.add %orow, %ox : ui32
    vyre.store @outp[%dst] = %w : f32
  }
}
"""


STENCIL_3D = """
// 3-D 7-point stencil on a 10 x 9 x 7 (x fastest) grid, workgroup 8x4x2, grid from num_workgroups
vyre.program @st3 workgroup_size [8, 4, 2] grid [2, 3, 4] {
  vyre.buffer @a binding 0 read_only : f32[630]
  vyre.buffer @b binding 1 read_write : f32[630]
  %x = vyre.invocation_id x
  %y = vyre.invocation_id y
  %z = vyre.invocation_id z
  %nx = vyre.const 10 : ui32
  %ny = vyre.const 9 : ui32
  %nz = vyre.const 7 : ui32
  %one = vyre.const 1 : ui32
  %lx = vyre.sub %nx, %one : ui32
  %ly = vyre.sub %ny, %one : ui32
  %lz = vyre.sub %nz, %one : ui32
  %gx0 = vyre.ge %x, %one : ui32
  %gx1 = vyre.lt %x, %lx : ui32
  %gy0 = vyre.ge %y, %one : ui32
  %gy1 = vyre.lt %y, %ly : ui32
  %gz0 = vyre.ge %z, %one : ui32
  %gz1 = vyre.lt %z, %lz : ui32
  %g1 = vyre.and %gx0, %gx1 : i1
  %g2 = vyre.and %gy0, %gy1 : i1
  %g3 = vyre.and %gz0, %gz1 : i1
  %g4 = vyre.and %g1, %g2 : i1
  %g = vyre.and %g4, %g3 : i1
  vyre.if %g {
    %plane = vyre.mul %nx, %ny : ui32
    %zo = vyre.mul %z, %plane : ui32
    %yo = vyre.mul %y, %nx : ui32
    %c0 = vyre.add %zo, %yo : ui32
    %c = vyre.add %c0, %x : ui32
    %xm = vyre.sub %c, %one : ui32
    %xp = vyre.add %c, %one : ui32
    %ym = vyre.sub %c, %nx : ui32
    %yp = vyre.add %c, %nx : ui32
    %zm = vyre.sub %c, %plane : ui32
    %zp = vyre.add %c, %plane : ui32
    %v0 = vyre.load @a[%c] : f32
    %v1 = vyre.load @a[%xm] : f32
    %v2 = vyre.load @a[%xp] : f32
    %v3 = vyre.load @a[%ym] : f32
    %v4 = vyre.load @a[%yp] : f32
    %v5 = vyre.load @a[%zm] : f32
    %v6 = vyre.load @a[%zp] : f32
    %s1 = vyre.add %v1, %v2 : f32
    %s2 = vyre.add %s1, %v3 : f32
    %s3 = vyre.add %s2, %v4 : f32
    %s4 = vyre.add %s3, %v5 : f32
    %s5 = vyre.add %s4, %v6 : f32
    %six = vyre.const 6.0 : f32
    %m = vyre.mul %six, %v0 : f32
    %l = vyre.sub %s5, %m : f32
    %k = vyre.const 0.1 : f32
    %r = vyre.fma %k, %l, %v0 : f32
    vyre.store @b[%c] = %r : f32
  }
}
"""


HEAT_STEPS = """
// heat-2d time steps (32 x 24), 8x8 blocks, via two programs, T steps with repeat=T,
// plus a log of the repetition: log[rep] = sum of row 5 after the step (one invocation)
vyre.program @step workgroup_size [8, 8, 1] grid [4, 3, 1] {
  vyre.buffer @a binding 0 read_write : f32[768]
  vyre.buffer @b binding 1 read_write : f32[768]
  %x = vyre.invocation_id x
  %y = vyre.invocation_id y
  %gx = vyre.num_workgroups x
  %gy = vyre.num_workgroups y
  %eight = vyre.const 8 : ui32
  %w = vyre.mul %gx, %eight : ui32
  %h = vyre.mul %gy, %eight : ui32
  %one = vyre.const 1 : ui32
  %wl = vyre.sub %w, %one : ui32
  %hl = vyre.sub %h, %one : ui32
  %a0 = vyre.ge %x, %one : ui32
  %a1 = vyre.lt %x, %wl : ui32
  %a2 = vyre.ge %y, %one : ui32
  %a3 = vyre.lt %y, %hl : ui32
  %b0 = vyre.and %a0, %a1 : i1
  %b1 = vyre.and %a2, %a3 : i1
  %in = vyre.and %b0, %b1 : i1
  vyre.if %in {
    %r = vyre.mul %y, %w : ui32
    %c = vyre.add %r, %x : ui32
    %cw = vyre.sub %c, %one : ui32
    %ce = vyre.add %c, %one : ui32
    %cn = vyre.sub %c, %w : ui32
    %cs = vyre.add %c, %w : ui32
    %v = vyre.load @a[%c] : f32
    %vw = vyre.load @a[%cw] : f32
    %ve = vyre.load @a[%ce] : f32
    %vn = vyre.load @a[%cn] : f32
    %vs = vyre.load @a[%cs] : f32
    %s0 = vyre.add %vw, %ve : f32
    %s1 = vyre.add %s0, %vn : f32
    %s2 = vyre.add %s1, %vs : f32
    %q = vyre.const 0.25 : f32
    %m = vyre.mul %s2, %q : f32
    %d = vyre.sub %m, %v : f32
    %k = vyre.const 0.5 : f32
    %n = vyre.fma %k, %d, %v : f32
    vyre.store @b[%c] = %n : f32
  }
}
vyre.program @copy_back workgroup_size [8, 8, 1] grid [4, 3, 1] {
  vyre.buffer @b binding 0 read_only : f32[768]
  vyre.buffer @a binding 1 read_write : f32[768]
  %x = vyre.invocation_id x
  %y = vyre.invocation_id y
  %w = vyre.const 32 : ui32
  %r = vyre.mul %y, %w : ui32
  %c = vyre.add %r, %x : ui32
  %v = vyre.load @b[%c] : f32
  vyre.store @a[%c] = %v : f32
}
vyre.program @log workgroup_size [1, 1, 1] grid [1, 1, 1] {
  vyre.buffer @a binding 0 read_only : f32[768]
  vyre.buffer @log binding 1 read_write : f32[16]
  %t = vyre.repetition
  %zero = vyre.const 0.0 : f32
  %c0 = vyre.const 0 : ui32
  %c32 = vyre.const 32 : ui32
  %base = vyre.const 160 : ui32
  vyre.let @acc = %zero : f32
  vyre.loop @j = %c0 to %c32 {
    %j = vyre.var @j : ui32
    %i = vyre.add %base, %j : ui32
    %v = vyre.load @a[%i] : f32
    %acc = vyre.var @acc : f32
    %s = vyre.add %acc, %v : f32
    vyre.assign @acc = %s : f32
  }
  %res = vyre.var @acc : f32
  %tf = vyre.cast %t : ui32 to f32
  %res2 = vyre.add %res, %tf : f32
  vyre.store @log[%t] = %res2 : f32
}
"""


TILED_MATMUL = """
// CUDA tiled matmul: C[M x N] = A[M x K] * B[K x N], 16x16 tiles in shared memory
// M = 40, N = 24, K = 36 ; grid = (ceil(24/16), ceil(40/16)) = (2, 3)
vyre.program @mm workgroup_size [16, 16, 1] grid [2, 3, 1] {
  vyre.buffer @A binding 0 read_only : f32[1440]
  vyre.buffer @B binding 1 read_only : f32[864]
  vyre.buffer @C binding 2 write_only : f32[960]
  vyre.buffer @As workgroup : f32[256]
  vyre.buffer @Bs workgroup : f32[256]
  %tx = vyre.local_id x
  %ty = vyre.local_id y
  %col = vyre.invocation_id x
  %row = vyre.invocation_id y
  %M = vyre.const 40 : ui32
  %N = vyre.const 24 : ui32
  %K = vyre.const 36 : ui32
  %T = vyre.const 16 : ui32
  %zero = vyre.const 0 : ui32
  %ntiles = vyre.const 3 : ui32
  %fz = vyre.const 0.0 : f32
  vyre.let @acc = %fz : f32
  %lidx0 = vyre.mul %ty, %T : ui32
  %lidx = vyre.add %lidx0, %tx : ui32
  vyre.loop @t = %zero to %ntiles {
    %t = vyre.var @t : ui32
    %t16 = vyre.mul %t, %T : ui32
    // A tile: A[row][t*16 + tx]
    %ak = vyre.add %t16, %tx : ui32
    %arow_ok = vyre.lt %row, %M : ui32
    %ak_ok = vyre.lt %ak, %K : ui32
    %aok = vyre.and %arow_ok, %ak_ok : i1
    %ai0 = vyre.mul %row, %K : ui32
    %ai = vyre.add %ai0, %ak : ui32
    %av0 = vyre.load @A[%ai] : f32
    %av = vyre.select %aok, %av0, %fz : f32
    vyre.store @As[%lidx] = %av : f32
    // B tile: B[t*16 + ty][col]
    %bk = vyre.add %t16, %ty : ui32
    %bk_ok = vyre.lt %bk, %K : ui32
    %bcol_ok = vyre.lt %col, %N : ui32
    %bok = vyre.and %bk_ok, %bcol_ok : i1
    %bi0 = vyre.mul %bk, %N : ui32
    %bi = vyre.add %bi0, %col : ui32
    %bv0 = vyre.load @B[%bi] : f32
    %bv = vyre.select %bok, %bv0, %fz : f32
    vyre.store @Bs[%lidx] = %bv : f32
    vyre.barrier
    vyre.loop @k = %zero to %T {
      %k = vyre.var @k : ui32
      %x0 = vyre.mul %ty, %T : ui32
      %xi = vyre.add %x0, %k : ui32
      %y0 = vyre.mul %k, %T : ui32
      %yi = vyre.add %y0, %tx : ui32
      %xa = vyre.load @As[%xi] : f32
      %yb = vyre.load @Bs[%yi] : f32
      %acc = vyre.var @acc : f32
      %n = vyre.fma %xa, %yb, %acc : f32
      vyre.assign @acc = %n : f32
    }
    vyre.barrier
  }
  %rok = vyre.lt %row, %M : ui32
  %cok = vyre.lt %col, %N : ui32
  %ok = vyre.and %rok, %cok : i1
  vyre.if %ok {
    %ci0 = vyre.mul %row, %N : ui32
    %ci = vyre.add %ci0, %col : ui32
    %res = vyre.var @acc : f32
    vyre.store @C[%ci] = %res : f32
  }
}
"""


def image_expected(img: np.ndarray, width: int, height: int, covered=None) -> np.ndarray:
    """out[y][x] = img[y][x] * y + 0.01 * x inside the image (and inside the
    `covered` columns and rows, when the launch is smaller)."""
    expected = (
        img.astype(np.float64) * np.arange(height)[:, None] + 0.01 * np.arange(width)[None, :]
    )
    if covered is not None:
        mask = np.zeros((height, width), bool)
        mask[: covered[1], : covered[0]] = True
        expected = np.where(mask, expected, 0.0)
    return expected.reshape(-1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_32x8_block_over_an_image_with_a_guard(backend):
    img = rand(np.random.default_rng(1), 37, 100)
    inputs = {"img": img, "dims": np.array([100, 37], np.uint32)}
    for fuse in (False, True):
        out = run(IMAGE_32X8, inputs, backend, fuse=fuse)
        np.testing.assert_allclose(out["out"], image_expected(img, 100, 37), **TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_image_launch_can_be_resized_without_editing_the_text(backend):
    """`grid=` at run time launches fewer blocks (a 64 x 16 corner); a compile with
    another block shape and a grid that covers the image gives the full result."""
    img = rand(np.random.default_rng(2), 37, 100)
    inputs = {"img": img, "dims": np.array([100, 37], np.uint32)}
    out = run(IMAGE_32X8, inputs, backend, grid=(2, 2, 1))
    np.testing.assert_allclose(out["out"], image_expected(img, 100, 37, covered=(64, 16)), **TOL)
    exe = compile(IMAGE_32X8, backend=backend, workgroup_size=(16, 16, 1))
    out = exe.run(inputs, grid=(7, 3, 1))
    np.testing.assert_allclose(out["out"], image_expected(img, 100, 37), **TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_image_kernel_built_with_the_program_builder(backend):
    b = ProgramBuilder("brighten", workgroup_size=(32, 8, 1), grid=(4, 5, 1))
    b.buffer("img", "read_only", "f32", 3700, binding=0)
    b.buffer("out", "write_only", "f32", 3700, binding=1)
    b.buffer("dims", "uniform", "ui32", 2, binding=2)
    x, y = b.invocation_id("x"), b.invocation_id("y")
    w = b.load("dims", b.const(0, "ui32"))
    h = b.load("dims", b.const(1, "ui32"))
    with b.if_(b.and_(b.lt(x, w), b.lt(y, h))):  # `and` is a Python keyword: `and_`
        i = b.add(b.mul(y, w), x)
        g = b.mul(b.cast(x, "f32"), b.const(0.01, "f32"))
        b.store("out", i, b.fma(b.load("img", i), b.cast(y, "f32"), g))
    img = rand(np.random.default_rng(3), 37, 100)
    module = module_of([b.build()])
    out = run(module, {"img": img, "dims": np.array([100, 37], np.uint32)}, backend)
    np.testing.assert_allclose(out["out"], image_expected(img, 100, 37), **TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_transpose_through_workgroup_memory_with_a_barrier(backend):
    inp = rand(np.random.default_rng(4), 40, 24)
    for fuse in (False, True):
        out = run(TILED_TRANSPOSE, {"inp": inp}, backend, fuse=fuse)
        np.testing.assert_array_equal(out["outp"], inp.T.reshape(-1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_3d_stencil_on_a_3d_grid(backend):
    rng = np.random.default_rng(5)
    a, b = rand(rng, 7, 9, 10), rand(rng, 7, 9, 10)  # z, y, x: x fastest
    d = a.astype(np.float64)
    c = d[1:-1, 1:-1, 1:-1]
    lap = d[1:-1, 1:-1, :-2] + d[1:-1, 1:-1, 2:] + d[1:-1, :-2, 1:-1] + d[1:-1, 2:, 1:-1]
    lap = lap + d[:-2, 1:-1, 1:-1] + d[2:, 1:-1, 1:-1] - 6 * c
    expected = b.astype(np.float64)
    expected[1:-1, 1:-1, 1:-1] = c + 0.1 * lap
    out = run(STENCIL_3D, {"a": a, "b": b}, backend)
    np.testing.assert_allclose(out["b"], expected, **TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_time_steps_with_repeat_num_workgroups_and_repetition(backend):
    steps = 5
    a = rand(np.random.default_rng(6), 24, 32)
    grid = a.astype(np.float64)
    log = np.zeros(16)
    for t in range(steps):
        c = grid[1:-1, 1:-1]
        mean = 0.25 * (grid[1:-1, :-2] + grid[1:-1, 2:] + grid[:-2, 1:-1] + grid[2:, 1:-1])
        grid = grid.copy()
        grid[1:-1, 1:-1] = c + 0.5 * (mean - c)
        log[t] = grid[5].sum() + t
    inputs = {"a": a, "b": a.copy(), "log": np.zeros(16, np.float32)}
    for fuse in (False, True):
        out = run(HEAT_STEPS, inputs, backend, fuse=fuse, repeat=steps)
        np.testing.assert_allclose(out["a"].reshape(24, 32), grid, **TOL)
        np.testing.assert_allclose(out["log"], log, rtol=1e-5, atol=1e-4)


def test_the_wgsl_kernels_keep_the_declared_grids():
    from vyre_xdsl.api import parse
    from vyre_xdsl.backends.wgsl.compile import compile_module

    expected = {
        IMAGE_32X8: [((32, 8, 1), (4, 5, 1))],
        TILED_TRANSPOSE: [((16, 16, 1), (2, 3, 1))],
        STENCIL_3D: [((8, 4, 2), (2, 3, 4))],
        HEAT_STEPS: [((8, 8, 1), (4, 3, 1)), ((8, 8, 1), (4, 3, 1)), ((1, 1, 1), (1, 1, 1))],
        TILED_MATMUL: [((16, 16, 1), (2, 3, 1))],
    }
    for text, geometry in expected.items():
        kernels = compile_module(parse(text))
        assert [
            (k.program_workgroup_size or k.workgroup_size, k.static_grid) for k in kernels
        ] == geometry


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tiled_matmul_with_barriers_inside_a_loop(backend):
    """The CUDA textbook kernel: 16 x 16 tiles of A and B staged in workgroup
    memory, a barrier after loading and after using each tile, sizes that are
    not multiples of the tile (40 x 36 times 36 x 24)."""
    rng = np.random.default_rng(7)
    a, b = rand(rng, 40, 36), rand(rng, 36, 24)
    out = run(TILED_MATMUL, {"A": a, "B": b}, backend)
    np.testing.assert_allclose(out["C"].reshape(40, 24), a.astype(np.float64) @ b, **TOL)


#: a 32 x 8 block without a grid in its header: its derived grid cannot cover
#: the image (refused), a grid given when it runs can
UNGRIDDED = IMAGE_32X8.replace(" grid [4, 5, 1]", "")


@pytest.mark.parametrize("backend", BACKENDS)
def test_vyre_run_grid_replaces_a_derived_grid_that_would_be_refused(backend, tmp_path, capsys):
    """docs/cli.md: `--grid` launches the program as `grid [...]` in its header
    would. On wgpu it compiled the module's own (refused) derived grid first and
    failed; `vyre_xdsl.run(..., grid=)` applies the grid before compiling."""
    from vyre_xdsl.tools import vyre_run

    img = rand(np.random.default_rng(8), 37, 100)
    source = tmp_path / "image.mlir"
    source.write_text(UNGRIDDED)
    np.save(tmp_path / "img.npy", img)
    np.save(tmp_path / "dims.npy", np.array([100, 37], np.uint32))
    inputs = ["--input", f"img={tmp_path / 'img.npy'}", "--input", f"dims={tmp_path / 'dims.npy'}"]
    argv = [str(source), *inputs, "--backend", backend]
    assert vyre_run.main(argv) == 1
    assert "without 'grid' the derived grid" in capsys.readouterr().err
    out = tmp_path / "out"
    assert vyre_run.main([*argv, "--grid", "4,5,1", "--output-dir", str(out)]) == 0
    np.testing.assert_allclose(np.load(out / "out.npy"), image_expected(img, 100, 37), **TOL)
    api = run(
        UNGRIDDED, {"img": img, "dims": np.array([100, 37], np.uint32)}, backend, grid=(4, 5, 1)
    )
    np.testing.assert_allclose(api["out"], image_expected(img, 100, 37), **TOL)
    assert vyre_run.main([*argv, "--grid", "4,0,1"]) == 1
    assert "--grid: " in capsys.readouterr().err


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_uncovered_derived_grid_is_refused_when_it_compiles_on_every_backend(backend):
    """Static buffers: the refusal comes from `compile`, located at the program,
    on both backends (the reference backend compiled it and refused only the
    run); the same program with its grid compiles and runs."""
    from vyre_xdsl.diagnostics import VyreDiagnostic

    with pytest.raises(
        VyreDiagnostic, match=r"^<input>:3:1: @brighten: workgroup_size \[32, 8, 1\]"
    ):
        compile(UNGRIDDED, backend=backend)
    img = rand(np.random.default_rng(9), 37, 100)
    out = compile(IMAGE_32X8, backend=backend).run(
        {"img": img, "dims": np.array([100, 37], np.uint32)}
    )
    np.testing.assert_allclose(out["out"], image_expected(img, 100, 37), **TOL)


#: each workgroup sums rows of @x through workgroup memory, one row of 16 per
#: loop trip, with barriers inside the loop; the trip count is BOUND
ROW_SUMS = """
vyre.program @rows workgroup_size [16, 1, 1] grid [1, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[?]
  vyre.buffer @n binding 1 uniform : ui32[1]
  vyre.buffer @sums binding 2 read_write : f32[16]
  vyre.buffer @t workgroup : f32[16]
  %l = vyre.local_id x
  %zero = vyre.const 0 : ui32
  %sixteen = vyre.const 16 : ui32
  BOUND
  vyre.loop @r = %zero to %rows {
    %r = vyre.var @r : ui32
    %base = vyre.mul %r, %sixteen : ui32
    %i = vyre.add %base, %l : ui32
    %v = vyre.load @x[%i] : f32
    vyre.store @t[%l] = %v : f32
    vyre.barrier
    %first = vyre.eq %l, %zero : ui32
    vyre.if %first {
      %f0 = vyre.const 0.0 : f32
      vyre.let @acc = %f0 : f32
      vyre.loop @k = %zero to %sixteen {
        %k = vyre.var @k : ui32
        %e = vyre.load @t[%k] : f32
        %a = vyre.var @acc : f32
        %s = vyre.add %a, %e : f32
        vyre.assign @acc = %s : f32
      }
      %total = vyre.var @acc : f32
      vyre.store @sums[%r] = %total : f32
    }
    vyre.barrier
  }
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_barrier_in_a_loop_needs_uniform_bounds_and_the_error_says_which(backend):
    from vyre_xdsl.diagnostics import VyreDiagnostic

    x = np.arange(5 * 16, dtype=np.float32)
    by_length = ROW_SUMS.replace(
        "BOUND", "%len = vyre.buf_len @x\n  %rows = vyre.div %len, %sixteen : ui32"
    )
    out = run(
        by_length,
        {"x": x, "n": np.array([5], np.uint32), "sums": np.zeros(16, np.float32)},
        backend,
    )
    np.testing.assert_array_equal(out["sums"][:5], x.reshape(5, 16).sum(axis=1))
    by_load = ROW_SUMS.replace("BOUND", "%rows = vyre.load @n[%zero] : ui32")
    with pytest.raises(
        VyreDiagnostic, match=r"^<input>:17:5: barrier under .*not a loaded value .*buf_len"
    ):
        run(
            by_load,
            {"x": x, "n": np.array([5], np.uint32), "sums": np.zeros(16, np.float32)},
            backend,
        )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "  vyre.loop @k = 0 to 8 {\n  }\n",
            r"(?s)<input>:4:18.*expected an SSA value \(%name\), not the literal '0'.*"
            r"'%c = vyre.const 0 : ui32'",
        ),
        (
            "  %i = vyre.invocation_id x\n  vyre.if %i {\n  }\n",
            r"(?s)<input>:5:11.*operand is used with type i1, .* type ui32; an i1 value \(a condition\) comes "
            r"from a comparison, e.g. '%c = vyre.ne %v, %zero : ui32'",
        ),
        (
            "  %i = vyre.invocation_id x\n  vyre.store @out[%i] = %i\n",
            r"(?s)<input>:5:26.*expected ':' and a type after this \(e.g. ': f32'\), got '}'",
        ),
    ],
)
def test_cuda_habits_get_errors_that_name_the_vyre_form(body, message):
    """A CUDA programmer writes `for (k = 0; k < 8; ...)` as `vyre.loop @k = 0 to
    8`, `if (i)` as `vyre.if %i`, and leaves the type off a store: the errors
    ("Expected an operand.", "operand is used with type i1 ...", "Expected ':'"
    at the next line's '}') now say what to write, where it goes."""
    from vyre_xdsl.diagnostics import VyreDiagnostic

    text = (
        "\nvyre.program @p workgroup_size [64, 1, 1] {\n"
        "  vyre.buffer @out binding 0 write_only : ui32[64]\n" + body + "}\n"
    )
    with pytest.raises(VyreDiagnostic, match=message):
        run(text, {}, "reference")
