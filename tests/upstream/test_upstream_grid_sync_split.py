"""Upstream `vyre-driver/tests/grid_sync_nested_fence_survives_split.rs`.

- A `grid_sync` at dispatch level (here inside a `vyre.region`, which upstream's
  `hoist_grid_sync_barriers` and vyre_xdsl's split both see through) is a launch
  boundary: two segments, no fence left in either, and every element ends as
  the second store wrote it (2).
- A `grid_sync` inside a loop is never a split point and must never be
  silently dropped. Upstream keeps it through the split and its emitter refuses
  it; here the verifier refuses it, located on the barrier, on every backend.

Beyond upstream, now that values may live across a `grid_sync` (spilled to
per-invocation scratch on wgpu): the region's probe keeps an SSA value and a
named local across the fence, and runs as a module with a second program,
fused and unfused.
"""

from __future__ import annotations

import numpy as np
import pytest
from upstream_support import BACKENDS, configurations, run

from vyre_xdsl.context import parse_module
from vyre_xdsl.diagnostics import VyreDiagnostic, format_errors, verify_module
from vyre_xdsl.dialects.vyre import BarrierOp, ProgramOp
from vyre_xdsl.lowering.split import split_program

UPSTREAM_REGION = """
vyre.program @probe workgroup_size [256, 1, 1] {
  vyre.buffer @state binding 0 read_write output : ui32[256]
  vyre.region "grid-sync-nested-fence-probe" {
    %g = vyre.invocation_id x
    %one = vyre.const 1 : ui32
    vyre.store @state[%g] = %one : ui32
    vyre.barrier grid_sync
    %two = vyre.const 2 : ui32
    vyre.store @state[%g] = %two : ui32
  }
}
"""

LOOP_NESTED = """
vyre.program @probe workgroup_size [256, 1, 1] {
  vyre.buffer @state binding 0 read_write output : ui32[256]
  vyre.region "grid-sync-nested-fence-probe" {
    %lo = vyre.const 0 : ui32
    %hi = vyre.const 4 : ui32
    vyre.loop @iter = %lo to %hi {
      %g = vyre.invocation_id x
      %one = vyre.const 1 : ui32
      vyre.store @state[%g] = %one : ui32
      vyre.barrier grid_sync
    }
  }
}
"""


def _program(text: str) -> ProgramOp:
    module = parse_module(text)
    verify_module(module)
    return next(op for op in module.ops if isinstance(op, ProgramOp))


def _fences(ops) -> int:
    return sum(isinstance(op, BarrierOp) and op.is_grid_sync for top in ops for op in top.walk())


def test_a_dispatch_level_grid_sync_fence_becomes_a_launch_boundary():
    program = _program(UPSTREAM_REGION)
    assert _fences([program]) == 1
    parts = split_program(program)
    assert len(parts) == 2  # upstream: two launch segments
    assert _fences(parts) == 0  # upstream: the launch boundary replaces the fence


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_launch_boundary_runs(backend):
    result = run(UPSTREAM_REGION, {"state": np.zeros(256, np.uint32)}, backend=backend)
    np.testing.assert_array_equal(result["state"], np.full(256, 2, np.uint32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_loop_nested_grid_sync_fence_is_refused_not_dropped(backend):
    with pytest.raises(VyreDiagnostic) as caught:
        run(LOOP_NESTED, {"state": np.zeros(256, np.uint32)}, backend=backend)
    message = format_errors(caught.value.errors)
    assert "'grid_sync' barrier must be at the top level" in message
    assert ":11:7: error:" in message  # on the barrier


LIVE_ACROSS = """
vyre.program @probe workgroup_size [64, 1, 1] {
  vyre.buffer @state binding 0 read_write : ui32[256]
  vyre.buffer @marks binding 2 read_write : ui32[256]
  vyre.region "grid-sync-nested-fence-probe" {
    %g = vyre.invocation_id x
    %old = vyre.load @state[%g] : ui32
    vyre.let @seen = %old : ui32
    %seven = vyre.const 7 : ui32
    vyre.store @state[%g] = %seven : ui32
    %c255 = vyre.const 255 : ui32
    %mirror = vyre.sub %c255, %g : ui32
    vyre.store @marks[%mirror] = %g : ui32
    vyre.barrier grid_sync
    %s = vyre.var @seen : ui32
    %mark = vyre.load @marks[%g] : ui32
    %now = vyre.load @state[%g] : ui32
    %a = vyre.add %s, %mark : ui32
    %b = vyre.add %a, %now : ui32
    %r = vyre.add %b, %old : ui32
    vyre.store @state[%g] = %r : ui32
  }
}
vyre.program @after workgroup_size [64, 1, 1] {
  vyre.buffer @state binding 0 read_write : ui32[256]
  vyre.buffer @doubled binding 1 write_only output : ui32[256]
  %g = vyre.invocation_id x
  %v = vyre.load @state[%g] : ui32
  %d = vyre.add %v, %v : ui32
  vyre.store @doubled[%g] = %d : ui32
}
"""


@configurations
def test_values_live_across_the_fence(backend, fuse):
    state = (np.arange(256, dtype=np.uint32) * 3) + 5
    marks = np.zeros(256, np.uint32)
    result = run(LIVE_ACROSS, {"state": state, "marks": marks}, backend=backend, fuse=fuse)
    # after the fence: marks[g] = 255 - g (written by the mirror invocation), state[g] = 7
    g = np.arange(256, dtype=np.uint64)
    expected = 2 * state.astype(np.uint64) + (255 - g) + 7
    np.testing.assert_array_equal(result["state"], expected.astype(np.uint32))
    np.testing.assert_array_equal(result["doubled"], (2 * expected).astype(np.uint32))
