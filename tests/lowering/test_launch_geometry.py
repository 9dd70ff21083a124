"""Launch geometry: explicit grids (`grid [GX, GY, GZ]`), `vyre.num_workgroups`,
the refusal of 2-D workgroups whose derived grid is too small, and run-time
overrides (`grid=`, `workgroup_size=`, `vyre-run --grid`). Expected values come
from numpy index arithmetic, never from the code under test."""

import os

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.diagnostics import VyreError
from vyre_xdsl.dispatch import fold_grid, launched_grid
from vyre_xdsl.megakernel.compile import compile_module
from vyre_xdsl.megakernel.run import run_bundle
from vyre_xdsl.tools import vyre_run

from ..support import EXAMPLES

BACKENDS = ["reference", "wgpu"]


def image(wx: int, wy: int, gx: int, gy: int, grid: bool = True) -> str:
    """out[y * W + x] = 1000 * workgroup_id y + 100 * local_id y + num_workgroups y
    over a W x H image, W = gx * wx, H = gy * wy."""
    width, count = gx * wx, gx * wx * gy * wy
    header = f"grid [{gx}, {gy}, 1] " if grid else ""
    return f"""
vyre.program @image workgroup_size [{wx}, {wy}, 1] {header}{{
  vyre.buffer @out binding 0 write_only : ui32[{count}]
  %x = vyre.invocation_id x
  %y = vyre.invocation_id y
  %wy = vyre.workgroup_id y
  %ly = vyre.local_id y
  %ny = vyre.num_workgroups y
  %w = vyre.const {width} : ui32
  %row = vyre.mul %y, %w : ui32
  %i = vyre.add %row, %x : ui32
  %k1000 = vyre.const 1000 : ui32
  %k100 = vyre.const 100 : ui32
  %a = vyre.mul %wy, %k1000 : ui32
  %b = vyre.mul %ly, %k100 : ui32
  %ab = vyre.add %a, %b : ui32
  %v = vyre.add %ab, %ny : ui32
  vyre.store @out[%i] = %v : ui32
}}
"""


def image_expected(wx: int, wy: int, gx: int, gy: int) -> np.ndarray:
    rows = np.arange(gy * wy)
    per_row = 1000 * (rows // wy) + 100 * (rows % wy) + gy
    return np.repeat(per_row, gx * wx).astype(np.uint32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_2d_grid_spans_both_axes(backend):
    out = vyre_xdsl.run(image(8, 4, 3, 5), {}, backend=backend)["out"]
    np.testing.assert_array_equal(out, image_expected(8, 4, 3, 5))


VOLUME = """
vyre.program @volume workgroup_size [2, 2, 2] grid [3, 2, 4] {
  vyre.buffer @out binding 0 write_only : ui32[192]
  %x = vyre.invocation_id x
  %y = vyre.invocation_id y
  %z = vyre.invocation_id z
  %wz = vyre.workgroup_id z
  %nx = vyre.num_workgroups x
  %nz = vyre.num_workgroups z
  %c6 = vyre.const 6 : ui32
  %c24 = vyre.const 24 : ui32
  %zp = vyre.mul %z, %c24 : ui32
  %yp = vyre.mul %y, %c6 : ui32
  %p = vyre.add %zp, %yp : ui32
  %i = vyre.add %p, %x : ui32
  %c100 = vyre.const 100 : ui32
  %c10 = vyre.const 10 : ui32
  %a = vyre.mul %wz, %c100 : ui32
  %b = vyre.mul %nx, %c10 : ui32
  %ab = vyre.add %a, %b : ui32
  %v = vyre.add %ab, %nz : ui32
  vyre.store @out[%i] = %v : ui32
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_3d_grid_spans_every_axis(backend):
    z = np.arange(8)[:, None, None] * np.ones((8, 4, 6), int)
    expected = (100 * (z // 2) + 10 * 3 + 4).astype(np.uint32).reshape(-1)
    out = vyre_xdsl.run(VOLUME, {}, backend=backend)["out"]
    np.testing.assert_array_equal(out, expected)


DERIVED = """
vyre.program @d workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[1000]
  %i = vyre.invocation_id x
  %nx = vyre.num_workgroups x
  %ny = vyre.num_workgroups y
  %k = vyre.const 100 : ui32
  %a = vyre.mul %nx, %k : ui32
  %v = vyre.add %a, %ny : ui32
  vyre.store @out[%i] = %v : ui32
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_num_workgroups_of_a_derived_grid(backend):
    # ceil(1000 / 64) = 16 workgroups on x, 1 on y
    out = vyre_xdsl.run(DERIVED, {}, backend=backend)["out"]
    np.testing.assert_array_equal(out, np.full(1000, 16 * 100 + 1, np.uint32))


def test_num_workgroups_of_a_folded_grid_is_per_axis():
    # 70000 workgroups fold over y: ceil(70000 / 2) = 35000 on x, 2 on y
    program = vyre_xdsl.parse(DERIVED.replace("ui32[1000]", "ui32[4480000]")).body.block.first_op
    assert launched_grid(program, 70000 * 64) == (35000, 2, 1)
    assert fold_grid(70000) == (35000, 2, 1)


INDIRECT = """
vyre.program @ind {indirect = @g} workgroup_size [4, 1, 1] {
  vyre.buffer @g binding 0 read_only : ui32[3]
  vyre.buffer @out binding 1 read_write : ui32[64]
  %i = vyre.invocation_id x
  %nx = vyre.num_workgroups x
  %ny = vyre.num_workgroups y
  %nz = vyre.num_workgroups z
  %k100 = vyre.const 100 : ui32
  %k10 = vyre.const 10 : ui32
  %a = vyre.mul %nx, %k100 : ui32
  %b = vyre.mul %ny, %k10 : ui32
  %ab = vyre.add %a, %b : ui32
  %v = vyre.add %ab, %nz : ui32
  vyre.store @out[%i] = %v : ui32
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_num_workgroups_of_an_indirect_grid(backend):
    g = np.array([2, 3, 1], np.uint32)
    out = vyre_xdsl.run(INDIRECT, {"g": g, "out": np.zeros(64, np.uint32)}, backend=backend)
    expected = np.zeros(64, np.uint32)
    expected[: 2 * 3 * 4] = 231  # six workgroups of 4 invocations, linear ids
    np.testing.assert_array_equal(out["out"], expected)


ROWS = """
vyre.program @rows workgroup_size [32, 8, 1] {
  vyre.buffer @out binding 0 write_only : ui32[256]
  %x = vyre.invocation_id x
  %y = vyre.invocation_id y
  %w = vyre.const 32 : ui32
  %r = vyre.mul %y, %w : ui32
  %i = vyre.add %r, %x : ui32
  vyre.store @out[%i] = %i : ui32
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_2d_workgroup_on_too_few_derived_workgroups_is_refused(backend):
    with pytest.raises(VyreError) as error:
        vyre_xdsl.run(ROWS, {}, backend=backend)
    message = str(error.value)
    assert "<input>:2:1" in message and "@rows" in message
    assert "grid [" in message and "32 of its 256 elements" in message


def test_a_covered_2d_workgroup_and_a_linear_index_still_run():
    covered = ROWS.replace("ui32[256]", "ui32[32]")  # one workgroup covers 32 along x
    out = vyre_xdsl.run(covered, {}, backend="reference")["out"]
    np.testing.assert_array_equal(out, np.arange(32, dtype=np.uint32))


def test_a_runtime_sized_count_is_checked_when_it_runs():
    text = ROWS.replace("ui32[256]", "ui32[?]")
    for backend in BACKENDS:
        exe = vyre_xdsl.compile(text, backend=backend)
        np.testing.assert_array_equal(
            exe.run({"out": np.zeros(32, np.uint32)})["out"], np.arange(32, dtype=np.uint32)
        )
        with pytest.raises(VyreError, match="covers 32 of its 256 elements"):
            exe.run({"out": np.zeros(256, np.uint32)})


def test_grid_and_indirect_are_exclusive():
    text = INDIRECT.replace("workgroup_size [4, 1, 1]", "workgroup_size [4, 1, 1] grid [2, 1, 1]")
    with pytest.raises(VyreError, match="either an explicit grid or an indirect one"):
        vyre_xdsl.parse(text)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grid_override_at_run_time(backend):
    # without `grid` the program is refused (too few derived workgroups); the
    # override gives it its grid
    text = image(8, 4, 3, 5, grid=False)
    out = vyre_xdsl.run(text, {}, backend=backend, grid=(3, 5, 1))["out"]
    np.testing.assert_array_equal(out, image_expected(8, 4, 3, 5))
    exe = vyre_xdsl.compile(image(8, 4, 3, 5), backend=backend)
    out = exe.run({}, grid={"image": (3, 2, 1)})["out"]
    expected = np.zeros(480, np.uint32)
    expected[: 24 * 8] = image_expected(8, 4, 3, 2)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(
    "grid, limit",
    [
        ((1, 2), "exactly 3 axes"),
        ((0, 1, 1), "1 ... 65535"),
        ((1, 65536, 1), "1 ... 65535"),
        ({"nope": (1, 1, 1)}, "does not have"),
    ],
)
def test_bad_grid_overrides_are_value_errors(grid, limit):
    exe = vyre_xdsl.compile(image(8, 4, 3, 5), backend="reference")
    with pytest.raises(ValueError, match=limit):
        exe.run({}, grid=grid)


def test_several_programs_need_a_grid_by_name():
    exe = vyre_xdsl.compile(
        image(8, 4, 3, 5) + ROWS.replace("@out", "@o2").replace("[256]", "[32]")
    )
    with pytest.raises(ValueError, match="mapping"):
        exe.run({}, grid=(1, 1, 1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_workgroup_size_override(backend):
    exe = vyre_xdsl.compile(image(8, 4, 3, 5), backend=backend, workgroup_size=(4, 8, 1))
    # the image keeps its width 24 in the program text: 3 x 5 workgroups of 4 x 8
    # cover columns 0..11 and rows 0..39 (rows past 19 are out of bounds)
    out = exe.run({})["out"]
    rows = np.arange(20)
    per_row = 1000 * (rows // 8) + 100 * (rows % 8) + 5
    expected = np.zeros((20, 24), np.uint32)
    expected[:, :12] = per_row[:, None]
    np.testing.assert_array_equal(out, expected.reshape(-1))
    for bad, limit in [((32, 16, 1), "256 invocations"), ((1, 1, 65), "64"), ((8, 8), "3 axes")]:
        with pytest.raises(ValueError, match=limit):
            vyre_xdsl.compile(image(8, 4, 3, 5), backend=backend, workgroup_size=bad)


TWO_GRIDS = (
    image(8, 4, 3, 5).replace("write_only :", "write_only output :")
    + """
vyre.program @twice workgroup_size [4, 4, 1] grid [6, 2, 1] {
  vyre.buffer @out binding 0 read_only : ui32[480]
  vyre.buffer @res binding 1 write_only : ui32[480]
  %x = vyre.invocation_id x
  %y = vyre.invocation_id y
  %w = vyre.const 24 : ui32
  %row = vyre.mul %y, %w : ui32
  %i = vyre.add %row, %x : ui32
  %v = vyre.load @out[%i] : ui32
  %ny = vyre.num_workgroups y
  %d = vyre.add %v, %ny : ui32
  vyre.store @res[%i] = %d : ui32
}
"""
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_programs_on_different_grids_fuse_correctly(backend):
    first = image_expected(8, 4, 3, 5)
    expected = np.zeros(480, np.uint32)
    expected[: 24 * 8] = first[: 24 * 8] + 2  # rows 0..7 of the second grid
    for fuse in (True, "force"):
        out = vyre_xdsl.run(TWO_GRIDS, {}, backend=backend, fuse=fuse)
        np.testing.assert_array_equal(out["out"], first)
        np.testing.assert_array_equal(out["res"], expected)


def test_fuse_keeps_programs_with_explicit_grids_apart(capsys):
    from vyre_xdsl.passes.vyre_fuse import VyreFusePass

    module = vyre_xdsl.parse(TWO_GRIDS)
    VyreFusePass(force=True, remarks=True).apply(None, module)
    names = [op.sym_name.data for op in module.body.block.ops]
    assert names == ["image", "twice"]
    assert "remark: @image launches an explicit grid [3, 5, 1]" in capsys.readouterr().err


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bundle_carries_the_explicit_grid(backend):
    data = compile_module(vyre_xdsl.parse(TWO_GRIDS)).bundle_bytes()
    out = run_bundle(data, {}, backend=backend)
    reference = vyre_xdsl.run(TWO_GRIDS, {}, backend="reference")
    np.testing.assert_array_equal(out["out"], reference["out"])
    np.testing.assert_array_equal(out["res"], reference["res"])
    np.testing.assert_array_equal(out["out"], image_expected(8, 4, 3, 5))


def _jacobi_2d_step(src: np.ndarray, dst: np.ndarray) -> None:
    """dst's interior = 0.2 * the five-point sum of src (in f32, as the kernel adds)."""
    s = src[1:-1, 1:-1] + src[1:-1, :-2] + src[1:-1, 2:] + src[2:, 1:-1] + src[:-2, 1:-1]
    dst[1:-1, 1:-1] = np.float32(0.2) * s


@pytest.mark.parametrize("steps", [1, 6])
def test_jacobi_2d_example_matches_numpy(steps):
    """The example written once, run for `steps` time steps with repeat=."""
    path = os.path.join(EXAMPLES, "jacobi_2d.mlir")
    text = open(path).read()
    rng = np.random.default_rng(3)
    a = rng.standard_normal(4096).astype(np.float32)
    b = rng.standard_normal(4096).astype(np.float32)
    A, B = a.reshape(64, 64).copy(), b.reshape(64, 64).copy()
    for _ in range(steps):
        _jacobi_2d_step(A, B)
        _jacobi_2d_step(B, A)
    for backend in BACKENDS:
        out = vyre_xdsl.run(text, {"a": a, "b": b}, backend=backend, repeat=steps)
        np.testing.assert_allclose(out["b"], B.reshape(-1), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out["a"], A.reshape(-1), rtol=1e-5, atol=1e-6)


def test_vyre_run_grid_option(tmp_path, capsys):
    path = tmp_path / "rows.mlir"
    path.write_text(ROWS.replace("ui32[256]", "ui32[8]").replace("[32, 8, 1]", "[2, 2, 1]"))
    argv = [str(path), "--backend", "reference"]
    assert vyre_run.main(argv + ["--grid", "2,2,1"]) == 0
    # i = y * 32 + x over x < 4, y < 4: i = 0..3, 32..35, ...; within 8: 0..3
    assert "out: uint32[8] = [0, 1, 2, 3, 0, 0, 0, 0]" in capsys.readouterr().out
    assert vyre_run.main(argv + ["--grid", "2,0,1"]) == 1
    assert "1 ... 65535" in capsys.readouterr().err


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_reader_of_num_workgroups_is_not_fused_into_another_grid(backend):
    # @d alone launches 16 workgroups; fused behind a 64-workgroup program it
    # would read 64
    text = (
        """
vyre.program @big workgroup_size [64, 1, 1] {
  vyre.buffer @wide binding 0 write_only : ui32[4096]
  %i = vyre.invocation_id x
  vyre.store @wide[%i] = %i : ui32
}
"""
        + DERIVED
    )
    out = vyre_xdsl.run(text, {}, backend=backend, fuse="force")
    np.testing.assert_array_equal(out["out"], np.full(1000, 16 * 100 + 1, np.uint32))
    np.testing.assert_array_equal(out["wide"], np.arange(4096, dtype=np.uint32))
