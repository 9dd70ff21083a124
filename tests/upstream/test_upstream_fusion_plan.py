"""Upstream `vyre-foundation/src/execution_plan/fusion/tests/mod.rs`.

Barrier kinds: an invocation-gated writer followed by a reader needs a
`grid_sync` (upstream and here). Two choices differ, both sound (SPEC 4):
a writer every invocation of which stores the same element gets a `grid_sync`
here where upstream proves a workgroup barrier enough; a launch-indexed writer
whose reader reads the element its own workgroup wrote gets a workgroup barrier
here where upstream splits with `grid_sync`. Every module also runs fused and
unfused on both backends with the same outputs. The self-composing-parser case
needs upstream's entry op ids (README.md).
"""

from __future__ import annotations

import numpy as np
import pytest
from upstream_support import CONFIGURATIONS, run, u32

from vyre_xdsl.api import fuse_module, parse
from vyre_xdsl.dialects.vyre import BarrierOp, BufferOp, programs

GATED_WRITER = """vyre.program @writer workgroup_size [128, 1, 1] {
  vyre.buffer @state binding 0 read_write : ui32[1]
  %g = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %first = vyre.eq %g, %z : ui32
  vyre.if %first {
    %c7 = vyre.const 7 : ui32
    vyre.store @state[%z] = %c7 : ui32
  }
}
"""
UNIFORM_WRITER = """vyre.program @writer workgroup_size [128, 1, 1] {
  vyre.buffer @state binding 0 read_write : ui32[1]
  %z = vyre.const 0 : ui32
  %c7 = vyre.const 7 : ui32
  vyre.store @state[%z] = %c7 : ui32
}
"""
READER = """vyre.program @reader workgroup_size [128, 1, 1] {
  vyre.buffer @state binding 0 read_only : ui32[1]
  vyre.buffer @seen binding 1 write_only : ui32[1]
  %z = vyre.const 0 : ui32
  %s = vyre.load @state[%z] : ui32
  vyre.store @seen[%z] = %s : ui32
}
"""
INDEXED = """vyre.program @{name} workgroup_size [128, 1, 1] {{
  vyre.buffer @state binding 0 {access} : ui32[256]
{extra}  %l = vyre.local_id x
  %b = vyre.workgroup_id x
  %c = vyre.const 128 : ui32
  %m = vyre.mul %b, %c : ui32
  %g = vyre.add %m, %l : ui32
{body}}}
"""
INDEXED_WRITER = INDEXED.format(
    name="writer", access="read_write", extra="", body="  vyre.store @state[%g] = %g : ui32\n"
)
INDEXED_READER = INDEXED.format(
    name="reader",
    access="read_only",
    extra="  vyre.buffer @seen binding 1 write_only : ui32[256]\n",
    body="  %s = vyre.load @state[%g] : ui32\n  vyre.store @seen[%g] = %s : ui32\n",
)

MODULES = {
    "divergent_invocation_gated_writer_upgrades_barrier_to_grid_sync": (
        GATED_WRITER + READER,
        ["grid_sync"],
        {"state": u32([0])},
        {"state": [7], "seen": [7]},
    ),
    "uniform_cross_arm_writer": (
        UNIFORM_WRITER + READER,
        ["grid_sync"],
        {"state": u32([0])},
        {"state": [7], "seen": [7]},
    ),
    "launch_indexed_writer": (
        INDEXED_WRITER + INDEXED_READER,
        ["seq_cst"],
        {"state": np.zeros(256, np.uint32)},
        {"state": list(range(256)), "seen": list(range(256))},
    ),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_fused_barrier_kind(name):
    text, kinds, _, _ = MODULES[name]
    fused = fuse_module(parse(text), force=True)  # upstream merges every program
    assert [op.ordering.data for op in fused.walk() if isinstance(op, BarrierOp)] == kinds


@pytest.mark.parametrize("backend,fuse", CONFIGURATIONS)
@pytest.mark.parametrize("name", sorted(MODULES))
def test_fused_and_unfused_runs_agree(name, backend, fuse):
    text, _, inputs, expected = MODULES[name]
    got = run(text, inputs, backend=backend, fuse=fuse)
    assert {k: got[k].tolist() for k in expected} == expected


SINGLE = """vyre.program @only workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[4]
  %z = vyre.const 0 : ui32
  %a = vyre.load @x[%z] : ui32
  vyre.let @a = %a : ui32
}
"""


def test_single_program_passthrough():
    fused = programs(fuse_module(parse(SINGLE)))
    original = programs(parse(SINGLE))
    assert len(fused) == 1
    assert len(list(fused[0].statements())) == len(list(original[0].statements()))


def test_duplicate_buffer_dedup_upgrades_access():
    text = """vyre.program @a workgroup_size [1, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[4]
  vyre.return
}
vyre.program @b workgroup_size [1, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[4]
  vyre.return
}
"""
    fused = programs(fuse_module(parse(text)))[0]
    buffers = [op for op in fused.walk() if isinstance(op, BufferOp)]
    assert [(b.buffer_name, b.access_mode) for b in buffers] == [("x", "read_write")]


@pytest.mark.parametrize("backend,fuse", CONFIGURATIONS)
def test_multi_arm_regions_flatten_into_one_executable_body(backend, fuse):
    text = """vyre.program @a workgroup_size [1, 1, 1] {
  vyre.buffer @a_out binding 0 write_only : ui32[1]
  %z = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  vyre.store @a_out[%z] = %one : ui32
}
vyre.program @b workgroup_size [1, 1, 1] {
  vyre.buffer @b_out binding 0 write_only : ui32[1]
  %z = vyre.const 0 : ui32
  %two = vyre.const 2 : ui32
  vyre.store @b_out[%z] = %two : ui32
}
"""
    got = run(text, {}, backend=backend, fuse=fuse)
    assert (got["a_out"].tolist(), got["b_out"].tolist()) == ([1], [2])
    if fuse:
        assert len(programs(fuse_module(parse(text)))) == 1
