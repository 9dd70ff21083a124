"""The float types beyond f32 on the wgpu runtime and around it: the device
features they need (and the clear error of an adapter without one, simulated by
removing the feature from a copy of the device), race-free bf16 stores of
neighbouring halves, runtime-sized buffers, fused chains, workgroup memory, and
host I/O (`run`, `vyre-run`, `.npy`). Expected values come from plain numpy or
hard-coded bit patterns."""

from __future__ import annotations

import copy
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.backends.wgsl.compile import compile_module
from vyre_xdsl.runtime.device import MissingFeatureError, gpu_device

BF16 = ml_dtypes.bfloat16
HOST = {"f16": np.float16, "bf16": BF16, "f64": np.float64}


def scale_module(ty: str, n: int | str = 8, workgroup: int = 4) -> str:
    """out[i] = a[i] * 3 + 0.5 in type `ty`."""
    return f"""vyre.program @scale workgroup_size [{workgroup}, 1, 1] {{
  vyre.buffer @a binding 0 read_only : {ty}[{n}]
  vyre.buffer @out binding 1 read_write : {ty}[{n}]
  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : {ty}
  %three = vyre.const 3.0 : {ty}
  %half = vyre.const 0.5 : {ty}
  %p = vyre.mul %x, %three : {ty}
  %r = vyre.add %p, %half : {ty}
  vyre.store @out[%i] = %r : {ty}
}}
"""


def expected_scale(a: np.ndarray) -> np.ndarray:
    """a * 3 + 0.5, rounded after each op (small integers and halves: exact in f64)."""
    wide = a.astype(np.float64)
    return (wide * 3).astype(a.dtype).astype(np.float64).__add__(0.5).astype(a.dtype)


@pytest.mark.parametrize("ty", ["f16", "bf16", "f64"])
@pytest.mark.parametrize("backend", ["reference", "wgpu"])
@pytest.mark.parametrize("fuse", [False, True])
def test_a_chain_runs_on_both_backends(ty, backend, fuse):
    a = np.arange(-3, 5, dtype=np.float64).astype(HOST[ty]) / HOST[ty](4)
    out = vyre_xdsl.run(
        scale_module(ty), {"a": a, "out": np.zeros(8, HOST[ty])}, backend=backend, fuse=fuse
    )["out"]
    assert out.dtype == np.dtype(HOST[ty])
    np.testing.assert_array_equal(out.astype(np.float64), expected_scale(a).astype(np.float64))


@pytest.mark.parametrize(("ty", "feature"), [("f16", "shader-f16"), ("f64", "shader-f64")])
def test_an_adapter_without_the_feature_gives_a_clear_error(ty, feature):
    kernel = compile_module(vyre_xdsl.parse(scale_module(ty)))[0]
    without = copy.copy(gpu_device())
    without.features = frozenset(without.features - {feature})
    without.pipelines = {}
    with pytest.raises(MissingFeatureError, match=f"element type {ty}.*'{feature}'"):
        without.pipeline(kernel.wgsl, kernel.entry_point, kernel.bindings)


def test_the_bits_of_an_f64_need_int64():
    text = """vyre.program @bits workgroup_size [2, 1, 1] {
  vyre.buffer @a binding 0 read_only : f64[2]
  vyre.buffer @out binding 1 read_write : vector<2xui32>[2]
  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : f64
  %b = vyre.bitcast %x : f64 to vector<2xui32>
  vyre.store @out[%i] = %b : vector<2xui32>
}
"""
    kernel = compile_module(vyre_xdsl.parse(text))[0]
    without = copy.copy(gpu_device())
    without.features = frozenset(without.features - {"shader-int64"})
    without.pipelines = {}
    with pytest.raises(MissingFeatureError, match="'shader-int64'"):
        without.pipeline(kernel.wgsl, kernel.entry_point, kernel.bindings)


def test_lavapipe_offers_f16_and_f64():
    features = gpu_device().features
    assert {"shader-f16", "shader-f64", "shader-int64"} <= features


def test_bf16_halves_of_one_word_stored_by_neighbours_are_both_kept():
    """Every invocation stores one bf16; invocations 2k and 2k+1 write the two
    halves of one u32 word at the same time, in workgroups of 64."""
    n = 1024
    text = f"""vyre.program @fill workgroup_size [64, 1, 1] {{
  vyre.buffer @out binding 0 read_write : bf16[{n}]
  %i = vyre.invocation_id x
  %f = vyre.cast %i : ui32 to bf16
  vyre.store @out[%i] = %f : bf16
}}
"""
    out = vyre_xdsl.run(text, {"out": np.full(n, 7.0, BF16)}, backend="wgpu")["out"]
    want = np.arange(n, dtype=np.float64).astype(BF16)  # ml_dtypes rounds to nearest even
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))


def length_module(ty: str) -> str:
    return f"""vyre.program @len workgroup_size [8, 1, 1] {{
  vyre.buffer @a binding 0 read_only : {ty}[?]
  vyre.buffer @out binding 1 read_write : {ty}[?]
  vyre.buffer @len binding 2 read_write : ui32[1]
  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : {ty}
  %r = vyre.neg %x : {ty}
  vyre.store @out[%i] = %r : {ty}
  %n = vyre.buf_len @out
  %zero = vyre.const 0 : ui32
  vyre.store @len[%zero] = %n : ui32
}}
"""


def _length_inputs(ty: str, n: int) -> dict:
    a = (np.arange(n) + 1).astype(HOST[ty])
    return {"a": a, "out": np.zeros(n, HOST[ty]), "len": np.zeros(1, np.uint32)}


@pytest.mark.parametrize("ty", ["f16", "bf16", "f64"])
@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_runtime_sized_buffers_and_their_length(ty, backend):
    """`?` buffers: every element in bounds is written and `buf_len` is the host
    array's length."""
    got = vyre_xdsl.run(length_module(ty), _length_inputs(ty, 6), backend=backend)
    np.testing.assert_array_equal(got["out"].astype(np.float64), -np.arange(1, 7))
    assert int(got["len"][0]) == 6


@pytest.mark.parametrize("ty", ["f16", "bf16"])
def test_a_runtime_sized_16_bit_buffer_that_ends_inside_a_word_is_refused(ty):
    """The GPU sees whole 32-bit words, so an odd length would be read as one more."""
    from vyre_xdsl.runtime.device import DeviceLimitError

    with pytest.raises(DeviceLimitError, match="ends inside a 32-bit word|end inside a 32-bit"):
        vyre_xdsl.run(length_module(ty), _length_inputs(ty, 7), backend="wgpu")
    got = vyre_xdsl.run(length_module(ty), _length_inputs(ty, 7), backend="reference")
    assert int(got["len"][0]) == 7


@pytest.mark.parametrize("ty", ["f16", "bf16", "f64"])
def test_workgroup_memory_of_the_type(ty):
    """A value goes through workgroup memory and comes back from the neighbour."""
    text = f"""vyre.program @shift workgroup_size [8, 1, 1] {{
  vyre.buffer @a binding 0 read_only : {ty}[8]
  vyre.buffer @out binding 1 read_write : {ty}[8]
  vyre.buffer @w workgroup : {ty}[8]
  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : {ty}
  vyre.store @w[%i] = %x : {ty}
  vyre.barrier
  %one = vyre.const 1 : ui32
  %seven = vyre.const 7 : ui32
  %j = vyre.add %i, %one : ui32
  %k = vyre.bit_and %j, %seven : ui32
  %y = vyre.load @w[%k] : {ty}
  vyre.store @out[%i] = %y : {ty}
}}
"""
    a = np.array([0.5, -1.5, 2.0, 3.25, -0.0, 8.0, 100.0, 0.125]).astype(HOST[ty])
    for backend in ("reference", "wgpu"):
        out = vyre_xdsl.run(text, {"a": a, "out": np.zeros(8, HOST[ty])}, backend=backend)["out"]
        np.testing.assert_array_equal(out.astype(np.float64), np.roll(a.astype(np.float64), -1))


@pytest.mark.parametrize("ty", ["f16", "bf16", "f64"])
def test_vyre_run_reads_and_writes_npy_files(ty, tmp_path):
    source = tmp_path / "scale.mlir"
    source.write_text(scale_module(ty))
    a = np.array([0.25, -1.0, 2.5, 3.0, 0.0, -0.5, 7.0, 1.5]).astype(HOST[ty])
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "out.npy", np.zeros(8, HOST[ty]))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "vyre_xdsl.tools.vyre_run",
            str(source),
            "--input",
            f"a={tmp_path / 'a.npy'}",
            "--input",
            f"out={tmp_path / 'out.npy'}",
            "--output-dir",
            str(tmp_path / "outputs"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    out = np.load(tmp_path / "outputs" / "out.npy", allow_pickle=False)
    if ty == "bf16":  # numpy writes ml_dtypes' bfloat16 as 2-byte void records
        assert out.dtype == np.dtype("V2")
        out = out.view(BF16)
    assert out.dtype == np.dtype(HOST[ty])
    np.testing.assert_array_equal(out.astype(np.float64), expected_scale(a).astype(np.float64))
