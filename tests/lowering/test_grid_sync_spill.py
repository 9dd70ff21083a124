"""A user `vyre.barrier grid_sync` with SSA values and named locals live across it.

The reference interpreter runs such a program as written; the wgpu backend
splits it into one dispatch per part and spills what crosses a split to
per-invocation scratch. Both must agree with the plain numpy expectations
below, fused and unfused. A `grid_sync` inside `vyre.block`/`vyre.region` is
hoisted out of the scopes first (upstream's `hoist_grid_sync_barriers`).
"""

from __future__ import annotations

import numpy as np
import pytest

from vyre_xdsl import run
from vyre_xdsl.context import parse_module
from vyre_xdsl.diagnostics import verify_module
from vyre_xdsl.dialects import kernel as k
from vyre_xdsl.dialects.vyre import BarrierOp, ProgramOp
from vyre_xdsl.lowering.lower import lower_program
from vyre_xdsl.lowering.split import split_program

BACKENDS = ("reference", "wgpu")
MODES = [(b, f) for b in BACKENDS for f in (False, True)]


def _run(text: str, inputs: dict, backend: str, fuse: bool) -> dict:
    return run(text, inputs, backend=backend, fuse=fuse)


# A value loaded from a buffer the program writes (not recomputable), a named
# local assigned under an `if`, and an i1 computed from the spilled value.
# Every invocation writes its right neighbour's element of @y before the
# grid_sync (crossing workgroups), so the result needs the whole-dispatch
# barrier; it overwrites its own element of @x, so %v cannot be reloaded.
NEIGHBOUR = """
vyre.program @p workgroup_size [4, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[16]
  vyre.buffer @y binding 2 read_write : ui32[16]
  vyre.buffer @out binding 1 write_only output : ui32[16]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %seven = vyre.const 7 : ui32
  %big = vyre.gt %v, %seven : ui32
  vyre.let @a = %v : ui32
  vyre.if %big {
    %t = vyre.add %v, %v : ui32
    vyre.assign @a = %t : ui32
  }
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %n = vyre.const 16 : ui32
  %k = vyre.mod %j, %n : ui32
  %m = vyre.mul %i, %seven : ui32
  vyre.store @y[%k] = %m : ui32
  vyre.store @x[%i] = %m : ui32
  vyre.barrier grid_sync
  %w = vyre.var @a : ui32
  %y = vyre.load @y[%i] : ui32
  %s = vyre.add %w, %y : ui32
  %s2 = vyre.add %s, %v : ui32
  %z = vyre.const 0 : ui32
  %s3 = vyre.select %big, %s2, %z : ui32
  vyre.store @out[%i] = %s3 : ui32
}
"""


def _neighbour_expected(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.int64)
    i = np.arange(16)
    a = np.where(x > 7, 2 * x, x)
    y = np.roll(i * 7, 1)  # y[k] = 7 * (k - 1 mod 16) after the sync
    return np.where(x > 7, a + y + x, 0).astype(np.uint32)


@pytest.mark.parametrize("backend,fuse", MODES)
def test_ssa_value_and_local_assigned_under_if(backend: str, fuse: bool) -> None:
    x = np.array([1, 9, 3, 12, 5, 20, 7, 8, 0, 100, 6, 77, 2, 8, 9, 4], np.uint32)
    result = _run(NEIGHBOUR, {"x": x, "y": np.zeros(16, np.uint32)}, backend, fuse)
    np.testing.assert_array_equal(result["out"], _neighbour_expected(x))


# i1 values (a named local and an SSA read of it), f32 and si32 values, a use
# under an `if` after the split, on a two-dimensional workgroup (the scratch
# index is the linear invocation index).
TYPED = """
vyre.program @t workgroup_size [4, 2, 1] {
  vyre.buffer @f binding 0 read_write : f32[24]
  vyre.buffer @s binding 1 read_write : si32[24]
  vyre.buffer @out_f binding 2 write_only output : f32[24]
  vyre.buffer @out_s binding 3 write_only output : si32[24]
  %w = vyre.workgroup_id x
  %lx = vyre.local_id x
  %ly = vyre.local_id y
  %eight = vyre.const 8 : ui32
  %four = vyre.const 4 : ui32
  %base = vyre.mul %w, %eight : ui32
  %row = vyre.mul %ly, %four : ui32
  %off = vyre.add %base, %row : ui32
  %i = vyre.add %off, %lx : ui32
  %fv = vyre.load @f[%i] : f32
  %sv = vyre.load @s[%i] : si32
  %zero = vyre.const 0 : si32
  %neg = vyre.lt %sv, %zero : si32
  vyre.let @flag = %neg : i1
  %flag = vyre.var @flag : i1
  %fz = vyre.const 0.0 : f32
  vyre.store @f[%i] = %fz : f32
  vyre.store @s[%i] = %zero : si32
  vyre.barrier grid_sync
  %again = vyre.var @flag : i1
  vyre.if %flag {
    %d = vyre.add %fv, %fv : f32
    vyre.store @out_f[%i] = %d : f32
  } else {
    %fl = vyre.load @f[%i] : f32
    %e = vyre.add %fv, %fl : f32
    vyre.store @out_f[%i] = %e : f32
  }
  %m = vyre.neg %sv : si32
  %r = vyre.select %again, %m, %sv : si32
  vyre.store @out_s[%i] = %r : si32
}
"""


@pytest.mark.parametrize("backend,fuse", MODES)
def test_i1_f32_si32_values_and_use_under_if(backend: str, fuse: bool) -> None:
    rng = np.random.default_rng(5)
    f = rng.uniform(-100, 100, 24).astype(np.float32)
    s = rng.integers(-1000, 1000, 24).astype(np.int32)
    result = _run(TYPED, {"f": f, "s": s}, backend, fuse)
    np.testing.assert_array_equal(result["out_f"], np.where(s < 0, f + f, f).astype(np.float32))
    np.testing.assert_array_equal(result["out_s"], np.abs(s).astype(np.int32))


# A grid_sync inside a block and a region; a local declared in the block
# before it is used after it; three parts, the local assigned in the middle one.
NESTED = """
vyre.program @n workgroup_size [8, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[32]
  vyre.buffer @y binding 2 read_write : ui32[32]
  vyre.buffer @out binding 1 write_only output : ui32[32]
  %i = vyre.invocation_id x
  %c31 = vyre.const 31 : ui32
  %mirror = vyre.sub %c31, %i : ui32
  vyre.block {
    %v = vyre.load @x[%i] : ui32
    vyre.let @acc = %v : ui32
    vyre.store @y[%mirror] = %i : ui32
    vyre.store @x[%i] = %i : ui32
    vyre.barrier grid_sync
    %a = vyre.var @acc : ui32
    %y = vyre.load @y[%i] : ui32
    %b = vyre.add %a, %y : ui32
    vyre.assign @acc = %b : ui32
    vyre.region "inner" {
      vyre.store @x[%i] = %b : ui32
      vyre.barrier grid_sync
      %c = vyre.var @acc : ui32
      %z = vyre.load @x[%mirror] : ui32
      %r = vyre.mul %c, %z : ui32
      vyre.store @out[%i] = %r : ui32
    }
  }
}
"""


def _nested_expected(x: np.ndarray) -> np.ndarray:
    i = np.arange(32, dtype=np.uint64)
    after_first = 31 - i  # y[31 - i] = i, so y[i] = 31 - i
    acc = x.astype(np.uint64) + after_first
    # second part: x[i] = acc[i]; third: out[i] = acc[i] * x[31 - i]
    return ((acc * acc[::-1]) % (1 << 32)).astype(np.uint32)


@pytest.mark.parametrize("backend,fuse", MODES)
def test_grid_sync_in_block_and_region_with_local(backend: str, fuse: bool) -> None:
    x = np.arange(100, 132, dtype=np.uint32) * 3
    result = _run(NESTED, {"x": x, "y": np.zeros(32, np.uint32)}, backend, fuse)
    np.testing.assert_array_equal(result["out"], _nested_expected(x))


def test_nested_split_has_three_parts_and_scratch_bindings() -> None:
    program = _program(NESTED)
    parts = split_program(program)
    assert len(parts) == 3
    for part in parts:
        assert not any(isinstance(op, BarrierOp) and op.is_grid_sync for op in part.walk())
        verify_module(_module_of(part))
    descriptors = lower_program(program)
    scratch = [[b for b in d.bindings() if b.mem_class == "scratch"] for d in descriptors]
    assert all(len(bindings) == 1 for bindings in scratch)
    assert all(b.group_number == 0 and b.slot_number < k.WORKGROUP_SLOT_BASE for (b,) in scratch)


# ---------------------------------------------------------------- fused chain

CHAIN = """
vyre.program @first workgroup_size [4, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[12]
  vyre.buffer @y binding 3 read_write : ui32[12]
  vyre.buffer @mid binding 1 read_write : ui32[12]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.let @keep = %v : ui32
  %eleven = vyre.const 11 : ui32
  %r = vyre.sub %eleven, %i : ui32
  vyre.store @y[%r] = %i : ui32
  vyre.store @x[%i] = %r : ui32
  vyre.barrier grid_sync
  %k = vyre.var @keep : ui32
  %y = vyre.load @y[%i] : ui32
  %s = vyre.add %k, %y : ui32
  %t = vyre.add %s, %v : ui32
  vyre.store @mid[%i] = %t : ui32
}
vyre.program @second workgroup_size [4, 1, 1] {
  vyre.buffer @mid binding 1 read_write : ui32[12]
  vyre.buffer @out binding 2 write_only output : ui32[12]
  %i = vyre.invocation_id x
  %m = vyre.load @mid[%i] : ui32
  %two = vyre.const 2 : ui32
  %d = vyre.mul %m, %two : ui32
  vyre.store @out[%i] = %d : ui32
}
"""


@pytest.mark.parametrize("backend,fuse", MODES)
def test_chain_with_spills_fused_and_unfused(backend: str, fuse: bool) -> None:
    x = np.array([5, 1, 9, 30, 2, 8, 7, 4, 6, 3, 10, 11], np.uint32)
    mid = np.zeros(12, np.uint32)
    zeros = np.zeros(12, np.uint32)
    result = _run(CHAIN, {"x": x, "y": zeros, "mid": mid}, backend, fuse)
    i = np.arange(12)
    expected = 2 * (2 * x.astype(np.int64) + (11 - i))
    np.testing.assert_array_equal(result["out"], expected.astype(np.uint32))


def _program(text: str) -> ProgramOp:
    module = parse_module(text)
    verify_module(module)
    return next(op for op in module.ops if isinstance(op, ProgramOp))


def _module_of(program: ProgramOp):
    from xdsl.dialects.builtin import ModuleOp

    return ModuleOp([program])
