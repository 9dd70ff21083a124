"""Recompute fusion: a load of a producer's output at another index takes the
producer's expression at that index (docs/fusion.md, "Recompute").

Every fused result is compared with numpy (the expectation, written out
independently) and with the unfused run; the structure checks say whether the
dependence was recomputed (no barrier, no load of the intermediate) or kept
its dispatch split."""

from __future__ import annotations

import numpy as np
import pytest

from vyre_xdsl import run
from vyre_xdsl.api import fuse_module
from vyre_xdsl.backends.wgsl import compile_module
from vyre_xdsl.context import parse_module
from vyre_xdsl.dialects.vyre import BarrierOp, LoadOp, programs
from vyre_xdsl.interpreter import VyreTrap


def _neighbour(n: int) -> str:
    return f"""
vyre.program @double workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{n}]
  vyre.buffer @t binding 1 write_only : f32[{n}]
  %i = vyre.invocation_id x
  %two = vyre.const 2.0 : f32
  %v = vyre.load @x[%i] : f32
  %r = vyre.mul %two, %v : f32
  vyre.store @t[%i] = %r : f32
}}
vyre.program @pair workgroup_size [64, 1, 1] {{
  vyre.buffer @t binding 0 read_only : f32[{n}]
  vyre.buffer @y binding 1 write_only : f32[{n}]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %a = vyre.load @t[%i] : f32
  %b = vyre.load @t[%j] : f32
  %s = vyre.add %a, %b : f32
  vyre.store @y[%i] = %s : f32
}}
"""


def _stencil(n: int) -> str:
    """t[i] = x[i] * w[i] + 1 (two loads), y[i] = t[i-1] + t[i] + t[i+1]."""
    return f"""
vyre.program @weigh workgroup_size [32, 1, 1] {{
  vyre.buffer @x binding 0 read_only : ui32[{n}]
  vyre.buffer @w binding 1 read_only : ui32[{n}]
  vyre.buffer @t binding 2 write_only : ui32[{n}]
  %i = vyre.invocation_id x
  %a = vyre.load @x[%i] : ui32
  %b = vyre.load @w[%i] : ui32
  %one = vyre.const 1 : ui32
  %p = vyre.mul %a, %b : ui32
  %r = vyre.add %p, %one : ui32
  vyre.store @t[%i] = %r : ui32
}}
vyre.program @stencil workgroup_size [32, 1, 1] {{
  vyre.buffer @t binding 0 read_only : ui32[{n}]
  vyre.buffer @y binding 1 write_only : ui32[{n}]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %l = vyre.sub %i, %one : ui32
  %h = vyre.add %i, %one : ui32
  %tl = vyre.load @t[%l] : ui32
  %tc = vyre.load @t[%i] : ui32
  %th = vyre.load @t[%h] : ui32
  %s1 = vyre.add %tl, %tc : ui32
  %s = vyre.add %s1, %th : ui32
  vyre.store @y[%i] = %s : ui32
}}
"""


def _shifted(t: np.ndarray, by: int) -> np.ndarray:
    """`t[i + by]`, 0 where `i + by` is out of bounds (a load out of bounds gives 0)."""
    out = np.zeros_like(t)
    if by >= 0:
        out[: len(t) - by] = t[by:]
    else:
        out[-by:] = t[: len(t) + by]
    return out


def _structure(text: str) -> tuple[list[str], list[str]]:
    """(the barriers' orderings, the buffers loaded) of the fused program."""
    fused = programs(fuse_module(parse_module(text), force=True))
    assert len(fused) == 1
    barriers = [op.ordering.data for op in fused[0].walk() if isinstance(op, BarrierOp)]
    loads = sorted({op.buffer_name for op in fused[0].walk() if isinstance(op, LoadOp)})
    return barriers, loads


def _runs(text: str, inputs: dict, backends=("reference", "wgpu")):
    """{(backend, fuse): outputs}"""
    return {
        (backend, fuse): run(text, inputs, backend=backend, fuse=fuse)
        for backend in backends
        for fuse in (False, True)
    }


# ---------------------------------------------------------------- recomputed


@pytest.mark.parametrize("n", [256, 100])
def test_neighbour_chain_is_recomputed_and_matches_numpy(n):
    text = _neighbour(n)
    assert _structure(text) == ([], ["x"])
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    t = np.float32(2) * x
    want = t + _shifted(t, 1)
    for key, out in _runs(text, {"x": x}).items():
        np.testing.assert_allclose(out["y"], want, rtol=1e-6, atol=1e-6, err_msg=str(key))


@pytest.mark.parametrize("n", [128, 96 + 2])
def test_three_point_stencil_is_recomputed_with_zero_edges(n):
    text = _stencil(n)
    assert _structure(text) == ([], ["w", "x"])
    rng = np.random.default_rng(n)
    x = rng.integers(0, 2**32, n, dtype=np.uint32)
    w = rng.integers(0, 2**32, n, dtype=np.uint32)
    t = x * w + np.uint32(1)  # wraps, as ui32 does
    want = _shifted(t, -1) + t + _shifted(t, 1)
    for key, out in _runs(text, {"x": x, "w": w}).items():
        np.testing.assert_array_equal(out["y"], want, err_msg=str(key))


def test_an_output_producer_keeps_its_store_and_a_reversed_read_is_recomputed():
    text = """
vyre.program @square workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[256]
  vyre.buffer @t binding 1 write_only output : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %r = vyre.mul %v, %v : ui32
  vyre.store @t[%i] = %r : ui32
}
vyre.program @reverse workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[256]
  vyre.buffer @y binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %c255 = vyre.const 255 : ui32
  %j = vyre.sub %c255, %i : ui32
  %v = vyre.load @t[%j] : ui32
  vyre.store @y[%i] = %v : ui32
}
"""
    assert _structure(text) == ([], ["x"])
    x = np.random.default_rng(1).integers(0, 2**32, 256, dtype=np.uint32)
    for key, out in _runs(text, {"x": x}).items():
        np.testing.assert_array_equal(out["t"], x * x, err_msg=str(key))
        np.testing.assert_array_equal(out["y"], (x * x)[::-1], err_msg=str(key))


def test_a_smaller_guarded_producer_gives_zero_past_its_count():
    """t has 64 elements, written by a dispatch over 64; the consumer reads t[2i]
    for i < 256: 0 from 2i = 64 on, as unfused."""
    text = """
vyre.program @small workgroup_size [32, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @t binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %n = vyre.buf_len @x
  %r = vyre.add %v, %n : ui32
  vyre.store @t[%i] = %r : ui32
}
vyre.program @large workgroup_size [32, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[64]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %two = vyre.const 2 : ui32
  %j = vyre.mul %i, %two : ui32
  %v = vyre.load @t[%j] : ui32
  vyre.store @out[%i] = %v : ui32
}
"""
    assert _structure(text) == ([], ["x"])
    x = np.random.default_rng(2).integers(0, 1000, 64, dtype=np.uint32)
    t = x + np.uint32(64)
    want = np.zeros(256, np.uint32)
    want[:32] = t[0::2]
    for key, out in _runs(text, {"x": x}).items():
        np.testing.assert_array_equal(out["out"], want, err_msg=str(key))


def test_a_chain_of_two_producers_is_recomputed_through_a_forwarded_value():
    """s = x + 1 (forwarded into t), t = 3 s, y[i] = t[i + 2]."""
    text = """
vyre.program @inc workgroup_size [32, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[96]
  vyre.buffer @s binding 1 write_only : ui32[96]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %v = vyre.load @x[%i] : ui32
  %r = vyre.add %v, %one : ui32
  vyre.store @s[%i] = %r : ui32
}
vyre.program @triple workgroup_size [32, 1, 1] {
  vyre.buffer @s binding 0 read_only : ui32[96]
  vyre.buffer @t binding 1 write_only : ui32[96]
  %i = vyre.invocation_id x
  %three = vyre.const 3 : ui32
  %v = vyre.load @s[%i] : ui32
  %r = vyre.mul %v, %three : ui32
  vyre.store @t[%i] = %r : ui32
}
vyre.program @ahead workgroup_size [32, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[96]
  vyre.buffer @y binding 1 write_only : ui32[96]
  %i = vyre.invocation_id x
  %two = vyre.const 2 : ui32
  %j = vyre.add %i, %two : ui32
  %v = vyre.load @t[%j] : ui32
  vyre.store @y[%i] = %v : ui32
}
"""
    assert _structure(text) == ([], ["x"])
    x = np.random.default_rng(3).integers(0, 1000, 96, dtype=np.uint32)
    want = _shifted((x + np.uint32(1)) * np.uint32(3), 2)
    for key, out in _runs(text, {"x": x}, backends=("reference",)).items():
        np.testing.assert_array_equal(out["y"], want, err_msg=str(key))


def test_a_trap_elsewhere_in_the_producer_still_traps():
    """The stored value is recomputable; the producer's own trap check stays in
    the fused kernel, so the run still raises as unfused."""
    text = """
vyre.program @check workgroup_size [32, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @t binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %zero = vyre.const 0 : ui32
  %bad = vyre.eq %v, %zero : ui32
  vyre.if %bad {
    vyre.trap %i "zero"
  }
  vyre.store @t[%i] = %v : ui32
}
vyre.program @shift workgroup_size [32, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[64]
  vyre.buffer @y binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %v = vyre.load @t[%j] : ui32
  vyre.store @y[%i] = %v : ui32
}
"""
    assert _structure(text) == ([], ["x"])
    x = np.arange(1, 65, dtype=np.uint32)
    for key, out in _runs(text, {"x": x}, backends=("reference",)).items():
        np.testing.assert_array_equal(out["y"], _shifted(x, 1), err_msg=str(key))
    x[40] = 0
    for fuse in (False, True):
        with pytest.raises(VyreTrap) as trapped:
            run(text, {"x": x}, backend="reference", fuse=fuse)
        assert trapped.value.tag == "zero"


# ---------------------------------------------------------------- not recomputed

SHIFT_CONSUMER = """
vyre.program @shift workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : TYPE[256]
  vyre.buffer @y binding 1 write_only : TYPE[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %v = vyre.load @t[%j] : TYPE
  vyre.store @y[%i] = %v : TYPE
}
"""


def test_an_atomic_producer_is_not_recomputed():
    text = """
vyre.program @count workgroup_size [64, 1, 1] {
  vyre.buffer @c binding 0 read_write : ui32[1]
  vyre.buffer @t binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %old = vyre.atomic add @c[%z], %one : ui32
  %v = vyre.mul %old, %z : ui32
  %r = vyre.add %v, %i : ui32
  vyre.store @t[%i] = %r : ui32
}
""" + SHIFT_CONSUMER.replace("TYPE", "ui32")
    assert _structure(text) == (["grid_sync"], ["t"])
    c = np.zeros(1, np.uint32)
    for key, out in _runs(text, {"c": c}, backends=("reference",)).items():
        np.testing.assert_array_equal(out["y"], _shifted(np.arange(256, dtype=np.uint32), 1))
        assert out["c"][0] == 256, key


def test_a_producer_reading_a_buffer_the_group_writes_is_not_recomputed():
    """The consumer updates s in place: recomputing 2 s[i+1] would race with
    invocation i+1's store."""
    text = """
vyre.program @double workgroup_size [64, 1, 1] {
  vyre.buffer @s binding 0 read_write : ui32[256]
  vyre.buffer @t binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @s[%i] : ui32
  %r = vyre.add %v, %v : ui32
  vyre.store @t[%i] = %r : ui32
}
vyre.program @update workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[256]
  vyre.buffer @s binding 1 read_write : ui32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %a = vyre.load @t[%i] : ui32
  %b = vyre.load @t[%j] : ui32
  %r = vyre.add %a, %b : ui32
  vyre.store @s[%i] = %r : ui32
}
"""
    assert _structure(text) == (["grid_sync"], ["s", "t"])
    s = np.random.default_rng(4).integers(0, 1000, 256, dtype=np.uint32)
    t = s + s
    for key, out in _runs(text, {"s": s}).items():
        np.testing.assert_array_equal(out["s"], t + _shifted(t, 1), err_msg=str(key))


def test_a_producer_through_workgroup_memory_is_not_recomputed():
    text = """
vyre.program @mirror workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[256]
  vyre.buffer @t binding 1 write_only : ui32[256]
  vyre.buffer @tile workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @tile[%l] = %v : ui32
  vyre.barrier
  %c63 = vyre.const 63 : ui32
  %m = vyre.sub %c63, %l : ui32
  %w = vyre.load @tile[%m] : ui32
  vyre.store @t[%i] = %w : ui32
}
""" + SHIFT_CONSUMER.replace("TYPE", "ui32")
    assert _structure(text) == (["seq_cst", "grid_sync"], ["t", "tile", "x"])
    x = np.random.default_rng(5).integers(0, 1000, 256, dtype=np.uint32)
    t = x.reshape(4, 64)[:, ::-1].reshape(-1)
    for key, out in _runs(text, {"x": x}).items():
        np.testing.assert_array_equal(out["y"], _shifted(t, 1), err_msg=str(key))


def test_a_producer_that_may_trap_is_not_recomputed():
    """si32 division by 0 traps: at another index it could trap where the
    program did not (or not where it did)."""
    text = """
vyre.program @divide workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : si32[256]
  vyre.buffer @t binding 1 write_only : si32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : si32
  %k = vyre.const 100 : si32
  %q = vyre.div %k, %v : si32
  vyre.store @t[%i] = %q : si32
}
""" + SHIFT_CONSUMER.replace("TYPE", "si32")
    assert _structure(text) == (["grid_sync"], ["t", "x"])
    x = np.arange(1, 257, dtype=np.int32)
    for key, out in _runs(text, {"x": x}, backends=("reference",)).items():
        np.testing.assert_array_equal(out["y"], _shifted(100 // x, 1), err_msg=str(key))


def test_recompute_false_keeps_the_split():
    module = parse_module(_neighbour(256))
    from vyre_xdsl.fusion import fuse_programs

    fused = fuse_programs(programs(module), intermediates={"t"}, recompute=False)
    assert [op.ordering.data for op in fused.walk() if isinstance(op, BarrierOp)] == ["grid_sync"]


# ---------------------------------------------------------------- vec4 form


def _wgsl(text: str) -> str:
    module = fuse_module(parse_module(text))
    [kernel] = compile_module(module)
    return kernel.wgsl


def test_the_recomputed_neighbour_chain_stays_in_vec4_form():
    wgsl = _wgsl(_neighbour(1024))
    assert "vec4 form" in wgsl
    # x[i] and x[i+1] need the vectors g and g+1 of x: two 16-byte loads
    assert wgsl.count("b_x[") == 2
    assert "let vyre_vector = (vyre_invocation + 1u) & 0x3fffffffu;" in wgsl


def test_the_recomputed_stencil_stays_in_vec4_form_with_three_vector_loads_per_input():
    wgsl = _wgsl(_stencil(128))
    assert "vec4 form" in wgsl
    assert wgsl.count("b_x[") == 3 and wgsl.count("b_w[") == 3
    # i - 1 is i + 4294967295: the vector before, counted mod 2^30
    assert "(vyre_invocation + 1073741823u) & 0x3fffffffu" in wgsl


def test_a_shifted_load_of_a_buffer_the_kernel_stores_is_not_vectorized():
    text = """
vyre.program @shift_in_place workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : f32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %v = vyre.load @x[%j] : f32
  vyre.store @x[%i] = %v : f32
}
"""
    [kernel] = compile_module(parse_module(text))
    assert "vec4 form" not in kernel.wgsl


@pytest.mark.parametrize("offset", [1, 2, 3, 4, 5, -1, -3, -4, -6])
def test_vec4_loads_at_constant_offsets_match_numpy(offset):
    n = 64
    op = "add" if offset >= 0 else "sub"
    text = f"""
vyre.program @at workgroup_size [16, 1, 1] {{
  vyre.buffer @x binding 0 read_only : ui32[{n}]
  vyre.buffer @y binding 1 write_only : ui32[{n}]
  %i = vyre.invocation_id x
  %c = vyre.const {abs(offset)} : ui32
  %j = vyre.{op} %i, %c : ui32
  %a = vyre.load @x[%i] : ui32
  %b = vyre.load @x[%j] : ui32
  %s = vyre.bit_xor %a, %b : ui32
  vyre.store @y[%i] = %s : ui32
}}
"""
    [kernel] = compile_module(parse_module(text))
    assert "vec4 form" in kernel.wgsl
    x = np.random.default_rng(offset + 10).integers(1, 2**32, n, dtype=np.uint32)
    out = run(text, {"x": x}, backend="wgpu")["y"]
    np.testing.assert_array_equal(out, x ^ _shifted(x, offset))
