"""Run inputs from Python: a mapping is required, conversions never change a
value, errors are `ValueError`/`TypeError` as well as `VyreError` with short
messages, shapes survive (an output given as an input keeps that input's
shape, every other output is 1-D), `i1` outputs come back as `bool`, and an
empty runtime-sized input is refused the same way on both backends."""

from __future__ import annotations

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.abi import (
    HostMemoryError,
    InputDtypeError,
    InputShapeError,
    InputTypeError,
    LossyInputError,
    RunInputError,
)
from vyre_xdsl.api import ModuleTypeError
from vyre_xdsl.diagnostics import VyreError
from vyre_xdsl.megakernel.bundle import TargetModuleBundle
from vyre_xdsl.megakernel.compile import compile_module
from vyre_xdsl.megakernel.run import run_bundle


def copy_program(element: str, count: str = "4") -> str:
    return f"""
vyre.program @copy workgroup_size [4, 1, 1] {{
  vyre.buffer @x binding 0 read_only : {element}[{count}]
  vyre.buffer @y binding 1 write_only : {element}[{count}]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : {element}
  vyre.store @y[%i] = %v : {element}
}}
"""


SCALE = """
vyre.program @scale workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[1024]
  vyre.buffer @y binding 1 read_write : f32[1024]
  vyre.buffer @big binding 2 write_only : i1[1024]
  %i = vyre.invocation_id x
  %xv = vyre.load @x[%i] : f32
  %yv = vyre.load @y[%i] : f32
  %s = vyre.add %xv, %yv : f32
  vyre.store @y[%i] = %s : f32
  %c = vyre.const 10.0 : f32
  %b = vyre.gt %s, %c : f32
  vyre.store @big[%i] = %b : i1
}
"""

RUNTIME_SIZED = """
vyre.program @count workgroup_size [1, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[?]
  vyre.buffer @n binding 1 write_only : ui32[1]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %len = vyre.buf_len @x
  %s = vyre.add %len, %v : ui32
  vyre.store @n[%i] = %s : ui32
}
"""

BACKENDS = ["reference", "wgpu"]


def run(text, inputs, backend="reference"):
    return vyre_xdsl.run(text, inputs, backend=backend)


# ---------------------------------------------------------------------- mapping


@pytest.mark.parametrize(
    "inputs", [[("x", [1, 2, 3, 4])], ("x",), "x", 3], ids=["pairs", "tuple", "str", "int"]
)
def test_inputs_that_are_not_a_mapping_are_a_type_error(inputs):
    with pytest.raises(InputTypeError, match="inputs must be a mapping from buffer name to array"):
        run(copy_program("ui32"), inputs)


def test_a_module_that_is_neither_text_nor_a_module_is_a_type_error():
    with pytest.raises(ModuleTypeError, match="not list"):
        vyre_xdsl.run([copy_program("ui32")], {})
    with pytest.raises(TypeError):
        vyre_xdsl.compile(42)


# ---------------------------------------------------------------------- lossless conversion


@pytest.mark.parametrize(
    "element, values, index",
    [
        ("f32", [None, 1.0, 2.0, 3.0], 0),  # None would become NaN
        ("f32", [1.0, 1e300, 2.0, 3.0], 1),  # would overflow to inf
        ("ui32", [1.5, 2.7, 3.0, 4.0], 0),  # would truncate to [1, 2]
        ("ui32", [0, 1, 2, 2**32], 3),  # would wrap
        ("si32", [0, -(2**31) - 1, 2, 3], 1),
        ("ui32", [0, 1, float("nan"), 3], 2),
        ("i1", [0.5, 1, 0, 1], 0),  # would become false
    ],
    ids=[
        "none-f32",
        "1e300-f32",
        "fraction-ui32",
        "2^32-ui32",
        "below-si32",
        "nan-ui32",
        "half-i1",
    ],
)
def test_a_conversion_that_changes_a_value_is_refused(element, values, index):
    with pytest.raises((LossyInputError, InputTypeError)) as caught:
        run(copy_program(element), {"x": values})
    message = str(caught.value)
    assert "buffer 'x'" in message
    if caught.type is LossyInputError:
        assert f"element {index} " in message


def test_conversions_that_keep_every_value_are_accepted():
    assert run(copy_program("ui32"), {"x": [1, 2.0, True, 2**32 - 1]})["y"].tolist() == [
        1,
        2,
        1,
        2**32 - 1,
    ]
    assert run(copy_program("si32"), {"x": [-(2**31), -1, 0, 2**31 - 1]})["y"].tolist() == [
        -(2**31),
        -1,
        0,
        2**31 - 1,
    ]
    assert run(copy_program("i1"), {"x": [True, False, 1, 0]})["y"].tolist() == [
        True,
        False,
        True,
        False,
    ]
    # a Python float rounds to the nearest f32, as np.float32(0.1) does; infinities and NaN stay what they are
    got = run(copy_program("f32"), {"x": [0.1, float("inf"), float("nan"), 16777217]})["y"]
    assert got.dtype == np.float32
    assert (
        got[0] == np.float32(0.1) and got[1] == np.inf and np.isnan(got[2]) and got[3] == 16777216.0
    )


def test_an_integer_that_f32_cannot_hold_exactly_is_refused():
    with pytest.raises(LossyInputError, match="element 0 "):
        run(copy_program("f32"), {"x": [16777217, 0, 0, 0]})


# ---------------------------------------------------------------------- error types and messages


@pytest.mark.parametrize(
    "inputs, error, base",
    [
        ({"x": np.zeros(4, np.float64)}, InputDtypeError, TypeError),
        ({"x": np.zeros(5, np.float32)}, InputShapeError, ValueError),
        ({"x": [1e300] * 4}, LossyInputError, ValueError),
        ({"x": b"\0" * 4096}, InputTypeError, TypeError),
        ({}, RunInputError, ValueError),
        ({"x": np.zeros(4, np.float32), "zz": 1}, RunInputError, ValueError),
    ],
    ids=["dtype", "shape", "lossy", "bytes", "missing", "unknown"],
)
def test_input_errors_are_value_or_type_errors_and_vyre_errors(inputs, error, base):
    with pytest.raises(error) as caught:
        run(copy_program("f32"), inputs)
    assert isinstance(caught.value, base) and isinstance(caught.value, VyreError)
    assert len(str(caught.value)) < 300


def test_a_bytes_input_does_not_dump_its_repr():
    with pytest.raises(InputTypeError, match="input for buffer 'x' is bytes") as caught:
        run(copy_program("f32", "1024"), {"x": b"\0" * 4096})
    assert len(str(caught.value)) < 200


# ---------------------------------------------------------------------- shapes and i1 outputs


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_output_given_as_an_input_keeps_its_shape(backend):
    x = np.arange(1024, dtype=np.float32).reshape(32, 32)
    y = np.ones((32, 32), np.float32)
    out = run(SCALE, {"x": x, "y": y}, backend)
    assert out["y"].shape == (32, 32)
    np.testing.assert_array_equal(out["y"], x + y)  # elementwise in C order, as numpy's
    assert out["big"].shape == (1024,)  # not an input: 1-D


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_i1_output_is_bool(backend):
    x = np.arange(1024, dtype=np.float32)
    out = run(SCALE, {"x": x, "y": np.zeros(1024, np.float32)}, backend)
    assert out["big"].dtype == np.bool_
    np.testing.assert_array_equal(out["big"], x > 10.0)


def test_a_bundle_run_follows_the_same_shape_and_bool_rules():
    bundle = TargetModuleBundle.from_bytes(compile_module(vyre_xdsl.parse(SCALE)).bundle_bytes())
    x = np.arange(1024, dtype=np.float32).reshape(4, 256)
    out = run_bundle(bundle, {"x": x, "y": np.zeros((4, 256), np.float32)}, backend="reference")
    assert (
        out["y"].shape == (4, 256) and out["big"].dtype == np.bool_ and out["big"].shape == (1024,)
    )


def test_executable_runs_follow_the_shape_rule():
    exe = vyre_xdsl.compile(SCALE, backend="reference")
    out = exe.run({"x": np.zeros((2, 512), np.float32), "y": np.ones((2, 512), np.float32)})
    assert out["y"].shape == (2, 512) and out["big"].dtype == np.bool_


# ---------------------------------------------------------------------- runtime-sized inputs


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_empty_runtime_sized_input_is_refused_alike_on_both_backends(backend):
    with pytest.raises(InputShapeError, match="runtime-sized buffer 'x' is empty"):
        run(RUNTIME_SIZED, {"x": np.zeros(0, np.uint32)}, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_runtime_sized_input_takes_its_length(backend):
    assert run(RUNTIME_SIZED, {"x": np.zeros(5, np.uint32)}, backend)["n"].tolist() == [5]


def test_a_buffer_past_the_host_memory_cap_is_refused_before_allocating():
    with pytest.raises(HostMemoryError, match="at most 2147483648 bytes per host buffer"):
        run(
            copy_program("ui32", "4").replace(
                "write_only : ui32[4]", f"write_only : ui32[{2**31}]"
            ),
            {"x": [1] * 4},
        )


# ---------------------------------------------------------------------- interpreter resource limits

HUGE_WORKGROUP = """
vyre.program @huge workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @y binding 1 write_only : ui32[64]
  vyre.buffer @t workgroup : ui32[2147483648]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @t[%i] = %v : ui32
  %w = vyre.load @t[%i] : ui32
  vyre.store @y[%i] = %w : ui32
}
"""


def test_a_workgroup_buffer_of_2_to_the_31_elements_is_a_located_error_not_a_memory_error():
    from vyre_xdsl.diagnostics import VyreDiagnostic, format_errors

    with pytest.raises(VyreDiagnostic) as caught:
        run(HUGE_WORKGROUP, {"x": np.zeros(64, np.uint32)})
    text = format_errors(caught.value.errors, HUGE_WORKGROUP)
    assert "<input>:5:3: error: workgroup memory of @huge reaches 8589934592 bytes at @t" in text
    assert "allows 1048576 bytes per workgroup" in text


def test_workgroup_memory_of_a_whole_dispatch_is_capped():
    from vyre_xdsl.diagnostics import VyreDiagnostic

    # 256 KiB per workgroup is allowed, but not over 2^16 workgroups (16 GiB)
    text = HUGE_WORKGROUP.replace("2147483648", "65536").replace("[64]", "[4194304]")
    with pytest.raises(VyreDiagnostic, match="at most 2147483648 bytes of it per dispatch"):
        run(text, {"x": np.zeros(4194304, np.uint32)})
