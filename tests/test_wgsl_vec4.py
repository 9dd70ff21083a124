"""The vec4 form of the WGSL printer: chosen exactly for elementwise kernels, and
equal to the reference interpreter when it is."""

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.backends.wgsl import compile_module
from vyre_xdsl.context import parse_module

ELEMENTWISE = """
vyre.program @p workgroup_size [64, 1, 1] {{
  vyre.buffer @a binding 0 read_only : f32[{n}]
  vyre.buffer @b binding 1 read_only : si32[{n}]
  vyre.buffer @flags binding 2 read_only : i1[{n}]
  vyre.buffer @out binding 3 write_only : f32[{n}]
  vyre.buffer @neg binding 4 write_only : i1[{n}]
  vyre.buffer @acc binding 5 write_only : si32[{n}]
  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : f32
  %y = vyre.load @b[%i] : si32
  %f = vyre.load @flags[%i] : i1
  %zero = vyre.const 0.0 : f32
  %lt = vyre.lt %x, %zero : f32
  vyre.store @neg[%i] = %lt : i1
  %yf = vyre.cast %y : si32 to f32
  %s = vyre.select %f, %x, %yf : f32
  %m = vyre.fma %s, %s, %x : f32
  vyre.store @out[%i] = %m : f32
  %lo = vyre.const 0 : ui32
  %k3 = vyre.const 3 : ui32
  %one = vyre.const 1 : si32
  vyre.let @sum = %y : si32
  vyre.loop @k = %lo to %k3 {{
    %cur = vyre.var @sum : si32
    %c = vyre.cast %i : ui32 to si32
    %n1 = vyre.add %cur, %c : si32
    vyre.if %f {{
      vyre.assign @sum = %n1 : si32
    }} else {{
      %n2 = vyre.sub %n1, %one : si32
      vyre.assign @sum = %n2 : si32
    }}
  }}
  %total = vyre.var @sum : si32
  vyre.store @acc[%i] = %total : si32
}}
"""


def _inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "a": rng.standard_normal(n).astype(np.float32),
        "b": rng.integers(-1000, 1000, n).astype(np.int32),
        "flags": rng.integers(0, 2, n).astype(np.uint32),
    }


def test_elementwise_kernel_takes_the_vec4_form():
    (kernel,) = compile_module(parse_module(ELEMENTWISE.format(n=1024)))
    assert kernel.elements_per_invocation == 4
    assert "array<vec4<f32>>" in kernel.wgsl and "array<vec4<u32>>" in kernel.wgsl
    assert kernel.static_grid == (4, 1, 1)  # 1024 / 4 / 64


@pytest.mark.parametrize(
    "change",
    [
        ("f32[{n}]", "f32[?]"),  # runtime-sized buffer
        (
            "%x = vyre.load @a[%i] : f32",
            "%j = vyre.bit_xor %i, %lo : ui32\n  %x = vyre.load @a[%j] : f32",
        ),
        ("%total = vyre.var @sum : si32", "vyre.barrier\n  %total = vyre.var @sum : si32"),
        ("%i = vyre.invocation_id x", "%i = vyre.invocation_id x\n  %w = vyre.workgroup_id x"),
    ],
    ids=["runtime-sized", "index-not-the-id", "barrier", "workgroup-id"],
)
def test_non_elementwise_kernels_keep_the_scalar_form(change):
    old, new = change
    text = ELEMENTWISE.format(n=1024).replace(old.format(n=1024), new, 1)
    if "%lo" in new:  # the xor needs %lo before the load
        text = text.replace("  %lo = vyre.const 0 : ui32\n", "").replace(
            "%i = vyre.invocation_id x", "%i = vyre.invocation_id x\n  %lo = vyre.const 0 : ui32", 1
        )
    (kernel,) = compile_module(parse_module(text))
    assert kernel.elements_per_invocation == 1
    assert "vec4" not in kernel.wgsl


def test_count_not_a_multiple_of_four_keeps_the_scalar_form():
    (kernel,) = compile_module(parse_module(ELEMENTWISE.format(n=1022)))
    assert kernel.elements_per_invocation == 1


@pytest.mark.parametrize("n", [4, 256, 1024, 4100])
def test_vec4_kernel_equals_the_reference(n):
    text = ELEMENTWISE.format(n=n)
    inputs = _inputs(n, seed=n)
    gpu = vyre_xdsl.run(text, inputs, backend="wgpu")
    ref = vyre_xdsl.run(text, inputs, backend="reference")
    assert compile_module(parse_module(text))[0].elements_per_invocation == 4
    for name in ("neg", "acc"):
        assert gpu[name].tobytes() == ref[name].tobytes(), name
    # fma: the GPU may or may not fuse; compare within a few ulp of the terms
    np.testing.assert_allclose(gpu["out"], ref["out"], rtol=2e-6, atol=1e-6)


def test_fused_chain_is_vec4_and_equals_the_reference():
    import pathlib

    text = (pathlib.Path(__file__).parent.parent / "examples" / "chain3.mlir").read_text()
    x = np.random.default_rng(1).standard_normal(4096).astype(np.float32)
    fused = vyre_xdsl.api.fuse_module(parse_module(text))
    assert [k.elements_per_invocation for k in compile_module(fused)] == [4]
    gpu = vyre_xdsl.run(text, {"x": x}, backend="wgpu", fuse=True)
    ref = vyre_xdsl.run(text, {"x": x}, backend="reference")
    np.testing.assert_allclose(gpu["out"], ref["out"], rtol=1e-6)
