"""Upstream `vyre-foundation/tests/fusion_atomic_aliasing.rs`, the barrier cases:
fusing a reader of a buffer with a later writer of it (an atomic, or a store)
puts exactly one barrier between the arms; independent arms and two readers get
none. Upstream's barrier is a SeqCst workgroup barrier; vyre-fuse inserts a
`grid_sync` where the dependence may cross workgroups (SPEC 4), which is still
one barrier. Each module also runs fused and unfused on both backends with the
same outputs. The self-aliasing cases are listed in README.md.
"""

from __future__ import annotations

import pytest
from upstream_support import CONFIGURATIONS, run, u32

from vyre_xdsl.api import fuse_module, parse
from vyre_xdsl.dialects.vyre import BarrierOp

READER = """vyre.program @reader workgroup_size [1, 1, 1] {{
  vyre.buffer @{buf} binding 0 read_only : ui32[1]
  vyre.buffer @seen binding 1 write_only : ui32[1]
  %z = vyre.const 0 : ui32
  %s = vyre.load @{buf}[%z] : ui32
  vyre.let @snap = %s : ui32
  %v = vyre.var @snap : ui32
  vyre.store @seen[%z] = %v : ui32
}}
"""
ATOMIC_WRITER = """vyre.program @writer workgroup_size [1, 1, 1] {
  vyre.buffer @state binding 0 read_write : ui32[1]
  %z = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %old = vyre.atomic add @state[%z], %one : ui32
  vyre.let @old = %old : ui32
}
"""
STORE_WRITER = """vyre.program @writer workgroup_size [1, 1, 1] {{
  vyre.buffer @{buf} binding 0 read_write : ui32[1]
  %z = vyre.const 0 : ui32
  %c = vyre.const 42 : ui32
  vyre.store @{buf}[%z] = %c : ui32
}}
"""
READER2 = READER.replace("@reader", "@reader2").replace("@seen", "@seen2")

MODULES = {
    "barrier_inserted_when_read_arm_precedes_atomic_arm": (
        READER.format(buf="state") + ATOMIC_WRITER,
        1,
        {"state": u32([7])},
        {"seen": [7], "state": [8]},
    ),
    "barrier_inserted_when_read_arm_precedes_readwrite_store_arm": (
        READER.format(buf="buf_a") + STORE_WRITER.format(buf="buf_a"),
        1,
        {"buf_a": u32([7])},
        {"seen": [7], "buf_a": [42]},
    ),
    "no_barrier_when_arms_are_independent": (
        READER.format(buf="a") + STORE_WRITER.format(buf="b"),
        0,
        {"a": u32([7]), "b": u32([0])},
        {"seen": [7], "b": [42]},
    ),
    "no_barrier_when_both_arms_are_readonly_on_same_buffer": (
        READER.format(buf="shared") + READER2.format(buf="shared"),
        0,
        {"shared": u32([7])},
        {"seen": [7], "seen2": [7]},
    ),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_fusion_barrier_count_matches_upstream(name):
    text, barriers, _, _ = MODULES[name]
    fused = fuse_module(parse(text), force=True)  # upstream merges every program
    found = [op for op in fused.walk() if isinstance(op, BarrierOp)]
    assert len(found) == barriers, str(fused)


@pytest.mark.parametrize("backend,fuse", CONFIGURATIONS)
@pytest.mark.parametrize("name", sorted(MODULES))
def test_fused_and_unfused_runs_agree(name, backend, fuse):
    text, _, inputs, expected = MODULES[name]
    got = run(text, inputs, backend=backend, fuse=fuse)
    assert {k: got[k].tolist() for k in expected} == expected
