"""`vyre_xdsl.run` with the reference backend: the input and output rules of SPEC
section 8, each violation a specific exception naming the buffer."""

from __future__ import annotations

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.abi import (
    InputDtypeError,
    InputShapeError,
    InputTypeError,
    LossyInputError,
    MissingInputError,
    UnexpectedInputError,
    UnknownBufferError,
)
from vyre_xdsl.api import UnknownBackendError
from vyre_xdsl.diagnostics import VyreDiagnostic, VyreError

from ..support import EXAMPLES

AXPY = """
vyre.program @axpy workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[100]
  vyre.buffer @y binding 1 read_write : f32[100]
  %i = vyre.invocation_id x
  %a = vyre.const 2.0 : f32
  %xv = vyre.load @x[%i] : f32
  %yv = vyre.load @y[%i] : f32
  %p = vyre.mul %a, %xv : f32
  %s = vyre.add %p, %yv : f32
  vyre.store @y[%i] = %s : f32
}
"""

# produce: x, flags -> tmp (an intermediate) and marked (read later, but marked output)
# consume: tmp, marked -> out (written, never read later: an output)
PIPELINE = """
vyre.program @produce workgroup_size [32, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[40]
  vyre.buffer @tmp binding 1 write_only : ui32[40]
  vyre.buffer @marked binding 2 write_only output : ui32[40]
  vyre.buffer @flags binding 3 read_only : i1[40]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %f = vyre.load @flags[%i] : i1
  %one = vyre.const 1 : ui32
  %zero = vyre.const 0 : ui32
  %bump = vyre.select %f, %one, %zero : ui32
  %t = vyre.add %v, %bump : ui32
  vyre.store @tmp[%i] = %t : ui32
  vyre.store @marked[%i] = %t : ui32
}
vyre.program @consume workgroup_size [32, 1, 1] {
  vyre.buffer @tmp binding 0 read_only : ui32[40]
  vyre.buffer @marked binding 1 read_only : ui32[40]
  vyre.buffer @out binding 2 write_only : ui32[40]
  %i = vyre.invocation_id x
  %t = vyre.load @tmp[%i] : ui32
  %m = vyre.load @marked[%i] : ui32
  %s = vyre.add %t, %m : ui32
  vyre.store @out[%i] = %s : ui32
}
"""


def axpy_inputs():
    return {"x": np.arange(100, dtype=np.float32), "y": np.full(100, 0.5, np.float32)}


def test_axpy_text_and_module_give_the_same_outputs():
    want = np.float32(2) * np.arange(100, dtype=np.float32) + np.float32(0.5)
    from_text = vyre_xdsl.run(AXPY, axpy_inputs(), backend="reference")
    from_module = vyre_xdsl.run(vyre_xdsl.parse(AXPY), axpy_inputs(), backend="reference")
    assert list(from_text) == ["y"]
    np.testing.assert_array_equal(from_text["y"], want)
    np.testing.assert_array_equal(from_module["y"], want)


def test_outputs_are_marked_read_write_and_final_writes_not_intermediates():
    x = np.arange(40, dtype=np.uint32)
    flags = np.array([i % 3 == 0 for i in range(40)])
    out = vyre_xdsl.run(PIPELINE, {"x": x, "flags": flags}, backend="reference")
    assert sorted(out) == ["marked", "out"]  # tmp: written, then only read later, not marked
    t = x + flags.astype(np.uint32)
    np.testing.assert_array_equal(out["marked"], t)
    np.testing.assert_array_equal(out["out"], 2 * t)
    assert out["out"].dtype == np.uint32


def test_bool_inputs_accept_bool_and_uint32_words():
    x = np.zeros(40, np.uint32)
    words = np.array([0, 5] * 20, np.uint32)  # non-zero words are true
    out = vyre_xdsl.run(PIPELINE, {"x": x, "flags": words}, backend="reference")
    np.testing.assert_array_equal(out["marked"], (words != 0).astype(np.uint32))


def test_inputs_are_not_modified():
    inputs = axpy_inputs()
    vyre_xdsl.run(AXPY, inputs, backend="reference")
    np.testing.assert_array_equal(inputs["y"], np.full(100, 0.5, np.float32))


@pytest.mark.parametrize(
    ("inputs", "error", "message"),
    [
        (
            {"x": np.zeros(100, np.float32)},
            MissingInputError,
            "missing input for buffer 'y': expected 100 float32",
        ),
        (
            {"x": np.zeros(100, np.float64), "y": np.zeros(100, np.float32)},
            InputDtypeError,
            "buffer 'x' has dtype float64; expected 100 float32",
        ),
        (
            {"x": np.zeros(99, np.float32), "y": np.zeros(100, np.float32)},
            InputShapeError,
            "buffer 'x' has 99 elements; expected 100",
        ),
        (
            {
                "x": np.zeros(100, np.float32),
                "y": np.zeros(100, np.float32),
                "z": np.zeros(1, np.float32),
            },
            UnknownBufferError,
            "unknown buffer 'z'",
        ),
    ],
)
def test_input_violations_name_the_buffer(inputs, error, message):
    with pytest.raises(error, match=message):
        vyre_xdsl.run(AXPY, inputs, backend="reference")


def test_python_lists_are_converted_and_bad_values_name_the_buffer():
    prog = AXPY.replace("f32", "ui32").replace("2.0", "2")
    out = vyre_xdsl.run(prog, {"x": list(range(100)), "y": [1] * 100}, backend="reference")
    np.testing.assert_array_equal(out["y"], 2 * np.arange(100, dtype=np.uint32) + 1)
    with pytest.raises(
        LossyInputError, match=r"input for buffer 'x': element 0 \(-1\) is not exactly .* ui32"
    ):
        vyre_xdsl.run(prog, {"x": [-1] * 100, "y": [1] * 100}, backend="reference")
    with pytest.raises(InputTypeError, match="input for buffer 'y' holds list .* not all numbers"):
        vyre_xdsl.run(prog, {"x": [1] * 100, "y": ["a"] * 100}, backend="reference")


def test_input_for_a_buffer_written_first_is_an_error():
    x = np.zeros(40, np.uint32)
    flags = np.zeros(40, np.uint32)
    with pytest.raises(UnexpectedInputError, match="buffer 'tmp' takes no input"):
        vyre_xdsl.run(PIPELINE, {"x": x, "flags": flags, "tmp": x}, backend="reference")


RUNTIME = """
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : si32[?]
  vyre.buffer @y binding 1 write_only : si32[?]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : si32
  %n = vyre.neg %v : si32
  vyre.store @y[%i] = %n : si32
}
"""


def test_runtime_sized_output_is_an_input():
    # SPEC section 8: a runtime-sized buffer takes its length from the caller's array
    with pytest.raises(MissingInputError, match="missing input for buffer 'y'"):
        vyre_xdsl.run(RUNTIME, {"x": np.zeros(5, np.int32)}, backend="reference")
    x = np.arange(5, dtype=np.int32) - 2
    out = vyre_xdsl.run(RUNTIME, {"x": x, "y": np.zeros(5, np.int32)}, backend="reference")
    np.testing.assert_array_equal(out["y"], -x)


def test_runtime_sized_length_comes_from_the_array():
    prog = RUNTIME.replace("write_only : si32[?]", "read_write : si32[?]")
    for n in (1, 77, 1000):
        x = np.arange(n, dtype=np.int32) - 30
        out = vyre_xdsl.run(prog, {"x": x, "y": np.zeros(n, np.int32)}, backend="reference")
        np.testing.assert_array_equal(out["y"], -x)


def test_unknown_backend_and_bad_text_are_vyre_errors():
    with pytest.raises(UnknownBackendError, match="unknown backend 'cuda'"):
        vyre_xdsl.run(AXPY, axpy_inputs(), backend="cuda")
    with pytest.raises(VyreDiagnostic, match="buffer @x holds f32, but a ui32 is stored"):
        vyre_xdsl.run(
            AXPY.replace(
                "vyre.store @y[%i] = %s : f32",
                "%u = vyre.const 1 : ui32\n  vyre.store @x[%i] = %u : ui32",
            ).replace("read_only : f32[100]", "read_write : f32[100]"),
            axpy_inputs(),
            backend="reference",
        )
    with pytest.raises(VyreError):
        vyre_xdsl.run("vyre.program @p {", {}, backend="reference")


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_run_never_writes_into_the_callers_arrays(backend):
    text = (EXAMPLES / "axpy.mlir").read_text()
    x = np.arange(1024, dtype=np.float32)
    y = np.ones(1024, dtype=np.float32)
    before = (x.copy(), y.copy())
    out = vyre_xdsl.run(text, {"x": x, "y": y}, backend=backend)
    assert np.array_equal(x, before[0]) and np.array_equal(y, before[1])
    assert np.array_equal(out["y"], 2 * before[0] + before[1])


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
@pytest.mark.parametrize("fuse", [False, True])
def test_compiled_executable_runs_like_run(backend, fuse):
    text = (EXAMPLES / "chain3.mlir").read_text()
    exe = vyre_xdsl.compile(text, backend=backend, fuse=fuse)
    for seed in range(2):
        x = np.random.default_rng(seed).standard_normal(4096).astype(np.float32)
        expected = ((x * np.float32(2) + np.float32(1)) ** 2).astype(np.float32)
        out = exe.run({"x": x})
        assert sorted(out) == ["out"]
        np.testing.assert_allclose(out["out"], expected, rtol=1e-6)
        np.testing.assert_array_equal(
            out["out"], vyre_xdsl.run(text, {"x": x}, backend=backend, fuse=fuse)["out"]
        )


def test_compile_rejects_an_unknown_backend_at_once():
    with pytest.raises(UnknownBackendError, match="cuda"):
        vyre_xdsl.compile("vyre.program @p workgroup_size [1, 1, 1] {\n}\n", backend="cuda")
