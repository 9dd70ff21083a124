"""Megakernel builds coarsen tree reductions before planning (the pipeline's
`planning_steps`), and `vyre-compile` keeps the shapes of memref arguments.

Expected values are numpy's reductions of the inputs."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.megakernel.bundle import TargetModuleBundle
from vyre_xdsl.megakernel.compile import compile_module
from vyre_xdsl.megakernel.run import run_bundle

from ..passes.test_coarsen_reductions import check, data, numpy_reduce, tree
from ..support import EXAMPLES

BIN = pathlib.Path(sys.executable).parent
#: 140,001 elements in workgroups of 64: 2,188 workgroups in the first level,
#: enough for the automatic k (it leaves at least 1,024): k = 2, 1,094 workgroups
N, WIDTH = 140_001, 64
FIRST_LEVEL_WORKGROUPS = -(-N // WIDTH)


def first_level_grid(bundle: TargetModuleBundle) -> tuple[int, int, int] | None:
    """The launch grid of the kernel that runs the tree's first level."""
    (image,) = [m for m in bundle.modules if "@level0" in m.program]
    (record,) = image.dispatches
    return record.grid


def bundle_of(text: str, **options) -> TargetModuleBundle:
    data_ = compile_module(vyre_xdsl.parse(text), **options).bundle_bytes()
    return TargetModuleBundle.from_bytes(data_)


def producer_and_tree(op: str, element: str) -> str:
    """`y = x * x`, then the tree over `y` (its first level is fed by a program)."""
    square = f"""vyre.program @square workgroup_size [{WIDTH}, 1, 1] {{
  vyre.buffer @x binding 0 read_only : {element}[{N}]
  vyre.buffer @y binding 1 write_only : {element}[{N}]
  %i = vyre.invocation_id x
  %a = vyre.load @x[%i] : {element}
  %b = vyre.mul %a, %a : {element}
  vyre.store @y[%i] = %b : {element}
}}
"""
    return square + tree(N, op, element, WIDTH).replace("@x", "@y")


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
@pytest.mark.parametrize(("op", "element"), [("add", "ui32"), ("min", "si32")])
def test_tree_levels_are_coarsened_and_reduce_like_numpy(backend, op, element):
    text = tree(N, op, element, WIDTH)
    x = data(element, N, op, seed=5)
    coarsened = bundle_of(text)
    as_written = bundle_of(text, coarsen_reductions=False)
    assert first_level_grid(as_written) == (FIRST_LEVEL_WORKGROUPS, 1, 1)
    assert first_level_grid(coarsened) == (FIRST_LEVEL_WORKGROUPS // 2, 1, 1)
    for bundle in (coarsened, as_written):
        check(run_bundle(bundle, {"x": x}, backend=backend)["out"], numpy_reduce(op, x), x)


def test_a_level_fed_by_a_producer_is_coarsened_too():
    text = producer_and_tree("add", "ui32")
    x = data("ui32", N, "add", seed=6)
    bundle = bundle_of(text)
    assert first_level_grid(bundle) == (FIRST_LEVEL_WORKGROUPS // 2, 1, 1)
    out = run_bundle(bundle, {"x": x}, backend="wgpu")["out"]
    check(out, numpy_reduce("add", x * x), x)


def test_float_sums_are_coarsened_only_when_reassociation_is_allowed():
    text = tree(N, "add", "f32", WIDTH)
    x = data("f32", N, "add", seed=7)
    assert first_level_grid(bundle_of(text)) == (FIRST_LEVEL_WORKGROUPS, 1, 1)
    allowed = bundle_of(text, reassociate_floats=True)
    assert first_level_grid(allowed) == (FIRST_LEVEL_WORKGROUPS // 2, 1, 1)
    check(run_bundle(allowed, {"x": x}, backend="wgpu")["out"], numpy_reduce("add", x), x)


def cli(*args: str, cwd: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / args[0]), *args[1:]], cwd=cwd, capture_output=True, text=True)


@pytest.mark.parametrize(
    ("flags", "workgroups"),
    [
        ((), FIRST_LEVEL_WORKGROUPS // 2),
        (("--no-coarsen-reductions",), FIRST_LEVEL_WORKGROUPS),
        (("--resident-workgroups", "8"), -(-FIRST_LEVEL_WORKGROUPS // 16)),  # k = max-k
    ],
)
def test_vyre_compile_options(tmp_path, flags, workgroups):
    (tmp_path / "tree.mlir").write_text(tree(N, "max", "ui32", WIDTH))
    compiled = cli("vyre-compile", "tree.mlir", "-o", "tree.vkb", *flags, cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    bundle = TargetModuleBundle.from_bytes((tmp_path / "tree.vkb").read_bytes())
    assert first_level_grid(bundle) == (workgroups, 1, 1)
    x = data("ui32", N, "max", seed=8)
    np.save(tmp_path / "x.npy", x)
    ran = cli(
        "vyre-run", "tree.vkb", "--input", "x=x.npy", "--backend", "reference",
        "--output-dir", "out", cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert np.load(tmp_path / "out" / "out.npy").tolist() == [int(x.max())]


def test_vyre_compile_keeps_the_shapes_of_memref_arguments(tmp_path):
    """The example's memrefs are A: 8x16, B: 16x4, C: 8x4 (C read and written)."""
    compiled = cli("vyre-compile", str(EXAMPLES / "matmul_scf.mlir"), "-o", "mm.vkb", cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    bundle = TargetModuleBundle.from_bytes((tmp_path / "mm.vkb").read_bytes())
    assert bundle.shapes == {"A": (8, 16), "B": (16, 4), "C": (8, 4)}
    rng = np.random.default_rng(9)
    a = rng.standard_normal((8, 16)).astype(np.float32)
    b = rng.standard_normal((16, 4)).astype(np.float32)
    flat = {"A": a.reshape(-1), "B": b.reshape(-1), "C": np.zeros(32, np.float32)}
    c = run_bundle(bundle, flat, backend="reference")["C"]
    assert c.shape == (8, 4)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)
