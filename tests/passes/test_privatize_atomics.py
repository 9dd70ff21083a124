"""Atomic privatization keeps every result: reference interpreter before and
after `vyre-privatize-atomics`, the GPU (lavapipe, where `vyre-lower`
privatizes by default) and numpy's `ufunc.at` all agree, on random data, with
all lanes on one bin, a partial last workgroup, several workgroups, bins past
the workgroup's width, a multi-dimensional workgroup, out-of-range bins and
initial buffer contents. The expectations come from numpy alone."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.passes import PassPipeline

import vyre_xdsl
from vyre_xdsl.backends.wgsl.compile import compile_module
from vyre_xdsl.context import parse_module, vyre_context
from vyre_xdsl.diagnostics import verify_module
from vyre_xdsl.passes import get_all_passes

UFUNCS = {
    "add": np.add,
    "min": np.minimum,
    "max": np.maximum,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
}


def histogram(kind: str, n: int, bins: int, workgroup=(64, 1, 1), guard="if") -> str:
    """`out[x[i]] = kind(out[x[i]], v[i])` for i < n (i: the invocation's linear
    index, z = 1), with the bounds guard as an `if` around the atomic or as an
    early `return`."""
    wx, wy, wz = workgroup
    head = f"""vyre.program @hist workgroup_size [{wx}, {wy}, {wz}] {{
  vyre.buffer @x binding 0 read_only : ui32[{n}]
  vyre.buffer @v binding 1 read_only : ui32[{n}]
  vyre.buffer @out binding 2 read_write : ui32[{bins}]
  %w = vyre.workgroup_id x
  %lx = vyre.local_id x
  %ly = vyre.local_id y
  %threads = vyre.const {wx * wy} : ui32
  %width = vyre.const {wx} : ui32
  %base = vyre.mul %w, %threads : ui32
  %row = vyre.mul %ly, %width : ui32
  %local = vyre.add %row, %lx : ui32
  %i = vyre.add %base, %local : ui32
  %n = vyre.buf_len @x
"""
    update = """  %b = vyre.load @x[%i] : ui32
  %val = vyre.load @v[%i] : ui32
  %old = vyre.atomic KIND @out[%b], %val : ui32
""".replace("KIND", kind)
    if guard == "return":
        body = (
            "  %outside = vyre.ge %i, %n : ui32\n  vyre.if %outside {\n    vyre.return\n  }\n"
            + update
        )
    else:
        body = "  %inside = vyre.lt %i, %n : ui32\n  vyre.if %inside {\n" + update + "  }\n"
    return head + body + "}\n"


def privatized(text: str, spec: str = "vyre-privatize-atomics"):
    module = parse_module(text)
    verify_module(module)
    PassPipeline.parse_spec(get_all_passes(), spec).apply(vyre_context(), module)
    verify_module(module)
    return module


def expected(kind: str, x, v, initial) -> np.ndarray:
    out = initial.copy()
    inside = x < len(out)
    UFUNCS[kind].at(out, x[inside], v[inside])
    return out


def check(text: str, kind: str, x, v, initial) -> None:
    want = expected(kind, x, v, initial)
    inputs = {"x": x, "v": v, "out": initial}
    after = privatized(text)
    assert "__vyre_private_out" in str(after), "the pass did not act"
    wgsl = "\n".join(kernel.wgsl for kernel in compile_module(parse_module(text)))
    assert "var<workgroup> w___vyre_private_out: array<atomic<u32>" in wgsl
    results = {
        "reference before": vyre_xdsl.run(text, inputs, backend="reference")["out"],
        "reference after": vyre_xdsl.run(after, inputs, backend="reference")["out"],
        "lavapipe": vyre_xdsl.run(text, inputs, backend="wgpu")["out"],
    }
    for name, got in results.items():
        np.testing.assert_array_equal(got, want, err_msg=name)


def values(rng, kind: str, n: int) -> np.ndarray:
    return rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)


@pytest.mark.parametrize("kind", list(UFUNCS))
def test_random_bins_partial_last_workgroup(kind):
    rng = np.random.default_rng(len(kind))
    n, bins = 64 * 5 + 13, 40  # six workgroups, the last one partial
    x = rng.integers(0, bins + 8, n).astype(np.uint32)  # some bins out of range
    initial = rng.integers(0, 2**32, bins, dtype=np.uint64).astype(np.uint32)
    check(histogram(kind, n, bins), kind, x, values(rng, kind, n), initial)


@pytest.mark.parametrize("kind", ["add", "min", "xor"])
def test_all_lanes_on_one_bin(kind):
    rng = np.random.default_rng(7)
    n, bins = 64 * 3, 64
    x = np.full(n, 5, np.uint32)
    initial = np.full(bins, 0xFFFFFFFF if kind == "min" else 0, np.uint32)
    check(histogram(kind, n, bins, guard="return"), kind, x, values(rng, kind, n), initial)


@pytest.mark.parametrize("kind", ["add", "and", "max"])
def test_more_bins_than_lanes_in_a_2d_workgroup(kind):
    rng = np.random.default_rng(11)
    n, bins = 500, 3 * 32 + 5  # four chunks of 32 bins, the last one partial
    x = rng.integers(0, bins, n).astype(np.uint32)
    initial = rng.integers(0, 2**32, bins, dtype=np.uint64).astype(np.uint32)
    text = histogram(kind, n, bins, workgroup=(8, 4, 1), guard="return")
    check(text, kind, x, values(rng, kind, n), initial)


def test_fused_with_a_reader_of_the_bins():
    """Fusion puts the reader after a grid_sync; lowering privatizes the first part."""
    n, bins = 300, 16
    text = (
        histogram("add", n, bins)
        + """vyre.program @scale workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 read_only : ui32[16]
  vyre.buffer @scaled binding 1 write_only : ui32[16]
  %i = vyre.invocation_id x
  %c = vyre.load @out[%i] : ui32
  %three = vyre.const 3 : ui32
  %s = vyre.mul %c, %three : ui32
  vyre.store @scaled[%i] = %s : ui32
}
"""
    )
    rng = np.random.default_rng(3)
    x = rng.integers(0, bins, n).astype(np.uint32)
    v = rng.integers(0, 100, n).astype(np.uint32)
    initial = np.zeros(bins, np.uint32)
    want = expected("add", x, v, initial)
    inputs = {"x": x, "v": v, "out": initial}
    fused = vyre_xdsl.compile(text, backend="wgpu", fuse=True)
    got = fused.run(inputs)
    np.testing.assert_array_equal(got["out"], want)
    np.testing.assert_array_equal(got["scaled"], want * np.uint32(3))


def test_lowering_without_privatization_is_unchanged():
    text = histogram("add", 100, 16)
    module = parse_module(text)
    PassPipeline.parse_spec(get_all_passes(), "vyre-lower{privatize-atomics=false}").apply(
        vyre_context(), module
    )
    assert "shared" not in str(module)
    lowered = parse_module(text)
    PassPipeline.parse_spec(get_all_passes(), "vyre-lower").apply(vyre_context(), lowered)
    assert "shared" in str(lowered)


@pytest.mark.parametrize("kind", ["add", "min"])
def test_each_workgroup_runs_several_logical_workgroups(kind):
    """2049 logical workgroups of 32: the kernel runs two per launched workgroup
    (the last launched one only one) between one zeroing and one flush."""
    rng = np.random.default_rng(5)
    n, bins = 32 * 2048 + 5, 64
    text = histogram(kind, n, bins, workgroup=(32, 1, 1), guard="return")
    (kernel,) = compile_module(parse_module(text))
    assert "for 2 logical workgroups" in kernel.wgsl
    assert kernel.static_grid == (1025, 1, 1)
    x = rng.integers(0, bins + 4, n).astype(np.uint32)
    initial = rng.integers(0, 2**32, bins, dtype=np.uint64).astype(np.uint32)
    check(text, kind, x, values(rng, kind, n), initial)
