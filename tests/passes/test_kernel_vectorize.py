"""kernel-vectorize: the vector form is recorded in the kernel IR (and only for
elementwise kernels), its launch grid is the one computed here by hand, a
tampered record is refused by kernel-verify, and a vectorized kernel computes
what numpy computes."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

import vyre_xdsl
from vyre_xdsl.backends.wgsl import compile_module
from vyre_xdsl.context import parse_module
from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.dialects import kernel as k
from vyre_xdsl.passes.kernel_vectorize import KernelVectorizePass
from vyre_xdsl.passes.kernel_verify import verify_descriptors
from vyre_xdsl.passes.vyre_lower import VyreLowerPass
from vyre_xdsl.target_profile import TargetProfile

SCALE = """vyre.program @scale workgroup_size [{wg}, 1, 1] {{
  vyre.buffer @x binding 0 read_only : {t}[{n}]
  vyre.buffer @y binding 1 write_only : {t}[{n}]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %a = vyre.load @x[%i] : {t}
  %b = vyre.load @x[%j] : {t}
  %s = vyre.add %a, %b : {t}
  vyre.store @y[%i] = %s : {t}
}}
"""


def lowered(text: str):
    module = parse_module(text)
    VyreLowerPass().apply(Context(), module)
    return module


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@pytest.mark.parametrize(
    "t,n,wg,width",
    [("f32", 1024, 64, 4), ("ui32", 4096, 128, 4), ("ui8", 2048, 64, 16), ("ui16", 512, 32, 8)],
)
def test_width_and_launch_grid_are_recorded(t, n, wg, width):
    module = lowered(SCALE.format(t=t, n=n, wg=wg))
    (descriptor,) = k.descriptors(module)
    dispatch = descriptor.dispatch()
    assert dispatch.vector_width == 1 and dispatch.logical_grid is None  # vyre-lower: scalar
    KernelVectorizePass().apply(Context(), module)
    verify_descriptors(module, TargetProfile())
    # 16 bytes of the element type per invocation; ceil(n / width) invocations
    assert dispatch.vector_width == width
    assert dispatch.logical_static_grid == (ceil_div(n, wg), 1, 1)
    assert dispatch.static_grid == (ceil_div(ceil_div(n, width), wg), 1, 1)
    # the record prints and parses back
    text = str(module)
    assert f"elements_per_invocation {width}" in text
    assert str(parse_module(text)) == text


@pytest.mark.parametrize(
    "change",
    [
        ("[{n}]", "[?]"),  # runtime-sized: no static grid
        ("%b = vyre.load @x[%j]", "%b = vyre.load @y[%j]"),  # shifted load of a stored buffer
        ("vyre.store @y[%i]", "vyre.store @y[%j]"),  # shifted store
    ],
)
def test_non_elementwise_kernels_stay_scalar(change):
    text = SCALE.replace(*change).format(t="f32", n=1024, wg=64)
    module = lowered(text)
    KernelVectorizePass().apply(Context(), module)
    (descriptor,) = k.descriptors(module)
    assert descriptor.dispatch().vector_width == 1
    assert "elements_per_invocation" not in str(module)


def test_count_not_a_multiple_of_the_width_stays_scalar():
    module = lowered(SCALE.format(t="f32", n=1022, wg=64))
    KernelVectorizePass().apply(Context(), module)
    assert k.descriptors(module)[0].dispatch().vector_width == 1


def test_kernel_verify_refuses_a_tampered_launch_grid():
    module = lowered(SCALE.format(t="f32", n=1024, wg=64))
    KernelVectorizePass().apply(Context(), module)
    dispatch = k.descriptors(module)[0].dispatch()
    dispatch.properties["grid"] = dispatch.logical_grid  # the logical grid, not the launch one
    with pytest.raises(VyreDiagnostic) as info:
        verify_descriptors(module, TargetProfile())
    assert "is not the launch grid [4, 1, 1]" in str(info.value)


def test_the_printer_follows_the_record_only():
    text = SCALE.format(t="f32", n=1024, wg=64)
    scalar_module = lowered(text)
    (scalar,) = compile_module(scalar_module)  # kernel input: printed as recorded
    assert scalar.elements_per_invocation == 1 and "vec4" not in scalar.wgsl
    assert scalar.static_grid == (16, 1, 1)
    (vector,) = compile_module(parse_module(text))  # vyre input: the whole pipeline
    assert vector.elements_per_invocation == 4 and "array<vec4<f32>>" in vector.wgsl
    assert vector.static_grid == (4, 1, 1)


@pytest.mark.parametrize("t,dtype", [("f32", np.float32), ("ui8", np.uint8)])
def test_vectorized_kernel_matches_numpy(t, dtype):
    n = 2048
    text = SCALE.format(t=t, n=n, wg=64)
    (kernel,) = compile_module(parse_module(text))
    assert kernel.elements_per_invocation > 1
    rng = np.random.default_rng(7)
    x = (rng.integers(0, 200, n) if t == "ui8" else rng.standard_normal(n)).astype(dtype)
    out = vyre_xdsl.run(text, {"x": x}, backend="wgpu")["y"]
    shifted = np.append(x[1:], dtype(0))  # x[i + 1], 0 past the end
    want = (x.astype(np.int64) + shifted).astype(dtype) if t == "ui8" else x + shifted
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize(
    "args,want",
    [
        # 1000 elements, 64 per workgroup: 16 workgroups
        (dict(n=1000, workgroup_size=(64, 1, 1)), (16, 1, 1)),
        # 4 per invocation: 250 invocations, 4 workgroups
        (dict(n=1000, workgroup_size=(64, 1, 1), elements_per_invocation=4), (4, 1, 1)),
        # 8192 workgroups, 8 each: 1024 launched
        (dict(n=8192 * 256, workgroup_size=(256, 1, 1), groups_per_workgroup=8), (1024, 1, 1)),
        # a [1, 1, 1] program over 1000 elements widened to 128: 1000 invocations, 8 workgroups
        (dict(n=1000, workgroup_size=(128, 1, 1), program_workgroup_size=(1, 1, 1)), (8, 1, 1)),
        # 70000 workgroups fold into y: 2 rows of 35000
        (dict(n=70000 * 64, workgroup_size=(64, 1, 1)), (35000, 2, 1)),
        # an explicit grid is launched as it is
        (dict(n=5, workgroup_size=(16, 16, 1), explicit=(4, 4, 1)), (4, 4, 1)),
    ],
)
def test_launch_grid_is_the_hand_computed_grid(args, want):
    from vyre_xdsl.dispatch import launch_grid

    assert launch_grid(**args) == want
