"""The vec4 form of the WGSL printer: chosen exactly for elementwise kernels, and
equal to the reference interpreter when it is."""

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.backends.wgsl import compile_module
from vyre_xdsl.context import parse_module

from ..support import EXAMPLES

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

    text = (EXAMPLES / "chain3.mlir").read_text()
    x = np.random.default_rng(1).standard_normal(4096).astype(np.float32)
    fused = vyre_xdsl.api.fuse_module(parse_module(text))
    assert [k.elements_per_invocation for k in compile_module(fused)] == [4]
    gpu = vyre_xdsl.run(text, {"x": x}, backend="wgpu", fuse=True)
    ref = vyre_xdsl.run(text, {"x": x}, backend="reference")
    np.testing.assert_allclose(gpu["out"], ref["out"], rtol=1e-6)


NARROW = """
vyre.program @p workgroup_size [16, 1, 1] {{
  vyre.buffer @x binding 0 read_only : {t}[{n}]
  vyre.buffer @y binding 1 write_only : {t}[{n}]
  %i = vyre.invocation_id x
  %c1 = vyre.const 1 : ui32
  %j = vyre.add %i, %c1 : ui32
  %a = vyre.load @x[%i] : {t}
  %b = vyre.load @x[%j] : {t}
  %s = vyre.add %a, %b : {t}
  %r = vyre.mul %s, %a : {t}
  vyre.store @y[%i] = %r : {t}
}}
"""

NARROW_TYPES = {"ui8": np.uint8, "si8": np.int8, "ui16": np.uint16, "si16": np.int16}


@pytest.mark.parametrize("tname", sorted(NARROW_TYPES))
@pytest.mark.parametrize("n", [64, 68])
def test_narrow_integers_take_whole_words_in_the_vec4_form(tname, n):
    """Sixteen 8-bit or eight 16-bit values are four u32 words (four values: one
    or two words when the count is not a multiple of 16 or 8): each invocation
    of the vector form loads and stores whole words, so no compare-exchange on a
    word that neighbouring invocations share (the scalar form needs one per
    store). Expectations: numpy's wrapping arithmetic; y[i] reads x[i + 1], which
    past the end is 0 (SPEC: out-of-bounds loads give zero)."""
    dtype = NARROW_TYPES[tname]
    text = NARROW.format(t=tname, n=n)
    (kernel,) = compile_module(parse_module(text))
    # 16 bytes per buffer and invocation where the count allows, else 4 values
    width = 16 // dtype().itemsize if n % (16 // dtype().itemsize) == 0 else 4
    assert f"runs logical invocations {width}i .. {width}i+{width - 1}" in kernel.wgsl
    assert kernel.elements_per_invocation == width
    assert "atomicCompareExchangeWeak" not in kernel.wgsl
    info = np.iinfo(dtype)
    x = np.random.default_rng(n).integers(info.min, info.max + 1, n).astype(dtype)
    wide = x.astype(np.int64)
    after = np.append(wide[1:], 0)
    expected = ((wide + after) * wide).astype(dtype)
    got = vyre_xdsl.run(parse_module(text), {"x": x}, backend="wgpu")["y"]
    np.testing.assert_array_equal(got, expected)


def test_f16_takes_the_vec4_form_where_the_adapter_has_it():
    from vyre_xdsl.runtime.device import gpu_device

    if "shader-f16" not in gpu_device().features:
        pytest.fail("this adapter has no shader-f16; the test needs one that has it")
    text = NARROW.format(t="f16", n=64)
    (kernel,) = compile_module(parse_module(text))
    assert "vec4 form" in kernel.wgsl and kernel.elements_per_invocation == 8
    x = np.random.default_rng(3).standard_normal(64).astype(np.float16)
    after = np.append(x[1:], np.float16(0))
    expected = (x + after) * x  # numpy rounds each f16 op, as WGSL's f16 does
    got = vyre_xdsl.run(parse_module(text), {"x": x}, backend="wgpu")["y"]
    np.testing.assert_array_equal(got, expected)


def test_a_kernel_mixing_widths_takes_four_values_per_invocation():
    """ui8 in, f32 out: 16 values would be 64 bytes of f32, so each invocation
    runs four (one u32 word of ui8, one vec4<f32>). Expectation: numpy."""
    text = """
vyre.program @widen workgroup_size [16, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui8[64]
  vyre.buffer @y binding 1 write_only : f32[64]
  %i = vyre.invocation_id x
  %a = vyre.load @x[%i] : ui8
  %f = vyre.cast %a : ui8 to f32
  vyre.store @y[%i] = %f : f32
}
"""
    (kernel,) = compile_module(parse_module(text))
    assert kernel.elements_per_invocation == 4
    x = np.arange(64, dtype=np.uint8) * 4
    got = vyre_xdsl.run(parse_module(text), {"x": x}, backend="wgpu")["y"]
    np.testing.assert_array_equal(got, x.astype(np.float32))


def test_f16_halves_are_written_bit_exactly_in_the_vector_form():
    """Eight f16 values per invocation are read with unpack2x16float and written
    with `pack2x16float` or, for infinities and NaNs, the printer's own f16 bit
    conversion: zeros, subnormals, the largest finite value and infinities keep
    their bits through `neg` (expected: the input bits with the sign bit flipped,
    plain numpy); a NaN stays a NaN (WGSL keeps neither a NaN's payload nor its
    sign through arithmetic: the H200 does not)."""
    from vyre_xdsl.runtime.device import gpu_device

    if "shader-f16" not in gpu_device().features:
        pytest.fail("this adapter has no shader-f16; the test needs one that has it")
    text = """vyre.program @negate workgroup_size [16, 1, 1] {
  vyre.buffer @x binding 0 read_only : f16[64]
  vyre.buffer @y binding 1 write_only : f16[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f16
  %n = vyre.neg %v : f16
  vyre.store @y[%i] = %n : f16
}
"""
    (kernel,) = compile_module(parse_module(text))
    assert kernel.elements_per_invocation == 8
    edges = [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00, 0x7BFF]
    edges += [0x7C00, 0xFC00, 0x7E00, 0x0200, 0x3555, 0x1234, 0xABCD, 0xFE01]
    bits = np.array(edges * 4, dtype=np.uint16)
    got = vyre_xdsl.run(text, {"x": bits.view(np.float16)}, backend="wgpu")["y"]
    flushed = (bits & 0x7C00) == 0  # a device may flush f16 subnormals to zero
    want = bits ^ np.uint16(0x8000)
    got_bits = got.view(np.uint16)
    nan = ((bits & 0x7C00) == 0x7C00) & ((bits & 0x03FF) != 0)
    ok = (got_bits == want) | (flushed & ((got_bits & 0x7FFF) == 0))
    ok[nan] = np.isnan(got[nan])
    assert ok.all(), [hex(b) for b in bits[~ok]]


# A vec4 kernel that only takes the length of one buffer and never touches another
LENGTH_ONLY = """
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @w binding 0 read_only : f32[?]
  vyre.buffer @wide binding 1 read_write : si64[4]
  vyre.buffer @out binding 2 write_only : ui32[64]
  %i = vyre.invocation_id x
  %n = vyre.buf_len @w
  %m = vyre.buf_len @wide
  %unused = vyre.cast %m : ui32 to si64
  vyre.store @out[%i] = %n : ui32
}
"""


def test_buffers_a_vec4_kernel_does_not_touch_keep_their_scalar_declaration():
    """Found by the fuzzer: every binding of a vec4 kernel was declared as an
    array of vectors, so an si64 buffer it never touched had no such type
    (`array<None>`, which naga rejects) and `arrayLength` of a buffer whose
    length it took counted vectors (10 f32 gave 2)."""
    (kernel,) = compile_module(parse_module(LENGTH_ONLY))
    assert kernel.elements_per_invocation == 4
    assert "array<vec4<u32>>" in kernel.wgsl  # @out, the only buffer it touches
    assert "b_w: array<f32>;" in kernel.wgsl and "b_wide: array<vec2<u32>>;" in kernel.wgsl
    assert "None" not in kernel.wgsl


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_a_vec4_kernel_takes_the_length_of_a_buffer_in_elements(backend):
    inputs = {"w": np.zeros(10, np.float32), "wide": np.zeros(4, np.int64)}
    out = vyre_xdsl.run(LENGTH_ONLY, inputs, backend=backend)["out"]
    np.testing.assert_array_equal(out, np.full(64, 10, np.uint32))  # len(w)
