"""Vectors and the float types beyond f32 around the runtime: `(n, lanes)` host
arrays in `run` and `.npy` files, a clear error for an array that is not whole
vectors, and a megakernel bundle (two programs fused into one stage) carrying
f16, bf16, f64 and vector buffers, run on the GPU and on the reference.
Expected values are plain numpy."""

from __future__ import annotations

import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.abi import InputShapeError
from vyre_xdsl.megakernel.bundle import TargetModuleBundle
from vyre_xdsl.megakernel.compile import compile_module
from vyre_xdsl.megakernel.run import run_bundle

SWAP = """vyre.program @swap workgroup_size [4, 1, 1] {
  vyre.buffer @v binding 0 read_only : vector<2xui32>[4]
  vyre.buffer @out binding 1 read_write : vector<2xui32>[4]
  %i = vyre.invocation_id x
  %x = vyre.load @v[%i] : vector<2xui32>
  %lo = vyre.extract %x[0] : vector<2xui32>
  %hi = vyre.extract %x[1] : vector<2xui32>
  %r = vyre.from_elements %hi, %lo : vector<2xui32>
  vyre.store @out[%i] = %r : vector<2xui32>
}
"""


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_vectors_are_n_by_lanes_arrays(backend):
    v = np.arange(8, dtype=np.uint32).reshape(4, 2)
    out = vyre_xdsl.run(SWAP, {"v": v, "out": np.zeros((4, 2), np.uint32)}, backend=backend)
    np.testing.assert_array_equal(out["out"], v[:, ::-1])


def test_an_array_that_is_not_whole_vectors_is_refused():
    with pytest.raises(InputShapeError, match="not a whole number of vector<2xui32> vectors"):
        vyre_xdsl.run(
            SWAP, {"v": np.arange(7, dtype=np.uint32), "out": np.zeros((4, 2), np.uint32)}
        )


def test_vyre_run_reads_and_writes_vector_npy_files(tmp_path):
    source = tmp_path / "swap.mlir"
    source.write_text(SWAP)
    v = np.arange(8, dtype=np.uint32).reshape(4, 2) * 7
    np.save(tmp_path / "v.npy", v)
    np.save(tmp_path / "out.npy", np.zeros((4, 2), np.uint32))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "vyre_xdsl.tools.vyre_run",
            str(source),
            "--input",
            f"v={tmp_path / 'v.npy'}",
            "--input",
            f"out={tmp_path / 'out.npy'}",
            "--output-dir",
            str(tmp_path / "outputs"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "outputs" / "out.npy"), v[:, ::-1])


PIPELINE = """vyre.program @widen workgroup_size [8, 1, 1] {
  vyre.buffer @h binding 0 read_only : f16[8]
  vyre.buffer @b binding 1 write_only output : bf16[8]
  vyre.buffer @d binding 2 write_only output : f64[8]
  %i = vyre.invocation_id x
  %x = vyre.load @h[%i] : f16
  %y = vyre.cast %x : f16 to bf16
  %two = vyre.const 2.0 : bf16
  %z = vyre.mul %y, %two : bf16
  vyre.store @b[%i] = %z : bf16
  %w = vyre.cast %x : f16 to f64
  vyre.store @d[%i] = %w : f64
}
vyre.program @pack workgroup_size [8, 1, 1] {
  vyre.buffer @b binding 1 read_write : bf16[8]
  vyre.buffer @d binding 2 read_write : f64[8]
  vyre.buffer @q binding 3 write_only : vector<4xf32>[8]
  %i = vyre.invocation_id x
  %y = vyre.load @b[%i] : bf16
  %w = vyre.load @d[%i] : f64
  %f = vyre.cast %y : bf16 to f32
  %g = vyre.cast %w : f64 to f32
  %s = vyre.add %f, %g : f32
  %q = vyre.from_elements %f, %g, %s, %f : vector<4xf32>
  %qq = vyre.add %q, %q : vector<4xf32>
  vyre.store @q[%i] = %qq : vector<4xf32>
}
"""


def test_a_bundle_carries_the_new_types():
    h = np.array([0.5, -1.25, 3.0, 100.0, -0.0, 0.125, 7.5, 2.0], np.float16)
    inputs = {"h": h}
    data = compile_module(vyre_xdsl.parse(PIPELINE)).bundle_bytes()
    bundle = TargetModuleBundle.from_bytes(data)
    assert len(bundle.modules) == 1  # the two programs are fused
    wide = h.astype(np.float64)
    want_b = (wide * 2).astype(ml_dtypes.bfloat16)
    lanes = np.stack([wide * 2, wide, wide * 3, wide * 2], axis=1) * 2  # exact in every type
    for backend in ("wgpu", "reference"):
        got = run_bundle(data, dict(inputs), backend=backend)
        np.testing.assert_array_equal(got["b"].view(np.uint16), want_b.view(np.uint16))
        np.testing.assert_array_equal(got["d"], wide)
        np.testing.assert_array_equal(got["q"], lanes.astype(np.float32))


def test_vyre_run_fills_random_inputs_of_the_new_types(tmp_path):
    """`--random-inputs` fills f16 and vector buffers; both backends agree."""
    source = tmp_path / "pipeline.mlir"
    source.write_text(PIPELINE + SWAP)
    outputs = {}
    for backend in ("reference", "wgpu"):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "vyre_xdsl.tools.vyre_run",
                str(source),
                "--random-inputs",
                "3",
                "--backend",
                backend,
                "--output-dir",
                str(tmp_path / backend),
            ],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        outputs[backend] = {p.name: np.load(p) for p in (tmp_path / backend).glob("*.npy")}
    assert sorted(outputs["wgpu"]) == sorted(outputs["reference"]) != []
    for name, want in outputs["reference"].items():
        assert want.tobytes() == outputs["wgpu"][name].tobytes(), name
