"""The fusion cost model (docs/fusion.md, "When the pass fuses"): `vyre-fuse`
and the megakernel planner fuse only where fusion wins, `force` fuses anyway,
and every choice computes what the unfused module computes (numpy here)."""

from __future__ import annotations

import numpy as np
import pytest

from vyre_xdsl import run
from vyre_xdsl.api import fuse_module
from vyre_xdsl.context import parse_module
from vyre_xdsl.dialects.vyre import programs
from vyre_xdsl.fusion.cost import (
    BYTES_PER_LAUNCH,
    IDLE_SHARED_WORKGROUP,
    IDLE_WORKGROUP,
    benefit,
)
from vyre_xdsl.fusion.fuse import fuse_with_outcome
from vyre_xdsl.testing.fusion_workloads import presum_tree, tree_sum

from ..support import grid_syncs


def _names(module) -> list[str]:
    return [p.sym_name.data for p in programs(module)]


# A (64-wide, n elements) stages x through workgroup memory into t; B (one
# workgroup) reverses the first 64 elements of t within its workgroup memory.
# B reads t at its own index: no split, but the fused dispatch has A's n / 64
# workgroups and B's arm is idle in all but one.
SHARED_PAIR = """
vyre.program @stage workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[N]
  vyre.buffer @t binding 1 write_only : ui32[N]
  vyre.buffer @tile workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @tile[%l] = %v : ui32
  vyre.barrier
  %w = vyre.load @tile[%l] : ui32
  %one = vyre.const 1 : ui32
  %s = vyre.add %w, %one : ui32
  vyre.store @t[%i] = %s : ui32
}
vyre.program @flip workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[64]
  vyre.buffer @out binding 1 write_only : ui32[64]
  vyre.buffer @tile workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %v = vyre.load @t[%i] : ui32
  vyre.store @tile[%l] = %v : ui32
  vyre.barrier
  %c63 = vyre.const 63 : ui32
  %r = vyre.sub %c63, %l : ui32
  %w = vyre.load @tile[%r] : ui32
  vyre.store @out[%i] = %w : ui32
}
"""


def _shared_pair(groups: int) -> str:
    return SHARED_PAIR.replace("[N]", f"[{64 * groups}]")


@pytest.mark.parametrize(("groups", "fused"), [(16, True), (1024, False)])
def test_idle_workgroups_with_workgroup_memory(groups: int, fused: bool) -> None:
    text = _shared_pair(groups)
    # each idle workgroup of @flip's arm zeroes workgroup memory and waits at a barrier
    assert (1 - (groups - 1) * IDLE_SHARED_WORKGROUP >= 0) is fused
    module = parse_module(text)
    chosen = fuse_module(module)
    assert _names(chosen) == (["fused_stage_flip"] if fused else ["stage", "flip"])
    assert _names(fuse_module(module, force=True)) == ["fused_stage_flip"]
    x = np.random.default_rng(groups).integers(0, 1 << 30, 64 * groups, dtype=np.uint32)
    for fuse in (False, True, "force"):
        out = run(text, {"x": x}, backend="reference", fuse=fuse)["out"]
        np.testing.assert_array_equal(out, (x[:64] + np.uint32(1))[::-1])


def test_idle_workgroups_without_workgroup_memory_are_cheap() -> None:
    # an elementwise producer over 4096 workgroups and a consumer of one: the
    # 4095 idle workgroups cost less than the launch fusion saves
    n = 256 * 4096
    text = f"""
vyre.program @big workgroup_size [256, 1, 1] {{
  vyre.buffer @x binding 0 read_only : ui32[{n}]
  vyre.buffer @t binding 1 write_only output : ui32[{n}]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @t[%i] = %v : ui32
}}
vyre.program @small workgroup_size [256, 1, 1] {{
  vyre.buffer @x binding 0 read_only : ui32[256]
  vyre.buffer @y binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %two = vyre.const 2 : ui32
  %d = vyre.mul %v, %two : ui32
  vyre.store @y[%i] = %d : ui32
}}
"""
    assert 1 - 4095 * IDLE_WORKGROUP >= 0
    assert _names(fuse_module(parse_module(text))) == ["fused_big_small"]


def test_a_chain_saves_launches_and_bytes() -> None:
    # t = x + 1; y = t * 3 over 1024 elements: one launch, one forwarded load of
    # t (4 KiB) and the dropped store of t (4 KiB)
    text = """
vyre.program @inc workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[1024]
  vyre.buffer @t binding 1 write_only : ui32[1024]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %one = vyre.const 1 : ui32
  %s = vyre.add %v, %one : ui32
  vyre.store @t[%i] = %s : ui32
}
vyre.program @triple workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[1024]
  vyre.buffer @y binding 1 write_only : ui32[1024]
  %i = vyre.invocation_id x
  %v = vyre.load @t[%i] : ui32
  %three = vyre.const 3 : ui32
  %p = vyre.mul %v, %three : ui32
  vyre.store @y[%i] = %p : ui32
}
"""
    outcome = fuse_with_outcome(programs(parse_module(text)), intermediates={"t"})
    assert outcome.splits == frozenset()
    assert outcome.saved_bytes == 2 * 4 * 1024
    assert outcome.groups == (16, 16)
    assert benefit(outcome) == pytest.approx(1 + 2 * 4 * 1024 / BYTES_PER_LAUNCH)


def test_the_tree_is_not_fused_across_its_splits() -> None:
    work = tree_sum(256 * 256 * 2)
    module = parse_module(work.text)
    chosen = fuse_module(module)
    assert _names(chosen) == ["sum0", "sum1", "sum2"]
    assert grid_syncs(chosen) == 0
    forced = fuse_module(module, force=True)
    assert _names(forced) == ["fused_sum0_sum1_sum2"]
    assert grid_syncs(forced) == 2


def test_an_unrolled_presum_fuses_with_the_first_tree_pass() -> None:
    # the pre-sum's s[i] is read by its own workgroup in the first tree pass (no
    # split, equal grids); its 16-iteration loop is printed unrolled, so it is
    # straight-line code in the fused kernel (0.77x the two kernels on an H200);
    # the later passes read other workgroups' results
    chosen = fuse_module(parse_module(presum_tree(16 * 256 * 256).text))
    assert _names(chosen) == ["fused_presum_sum0", "sum1"]
    assert grid_syncs(chosen) == 0


def test_a_presum_loop_left_rolled_stays_out_of_the_tree_kernels() -> None:
    # 32 iterations stay a loop: a loop without barriers is not fused with
    # programs that have workgroup barriers
    chosen = fuse_module(parse_module(presum_tree(32 * 256 * 256, presum=32).text))
    assert _names(chosen) == ["presum", "sum0", "sum1"]
    assert grid_syncs(chosen) == 0
    # forced, the three are one program again (split before the last pass)
    forced = fuse_module(parse_module(presum_tree(32 * 256 * 256, presum=32).text), force=True)
    assert len(_names(forced)) == 1


#: a CUDA-style two-pass sum: a 128-wide tree over 5000 elements (guarded), then
#: one 64-wide workgroup over the 40 partial sums
TWO_WIDTHS = """
// CUDA textbook two-pass sum over n = 5000 ui32 (not a multiple of the block):
// sdata[tid] = i < n ? x[i] : 0; tree; partial[blockIdx] ; then one block sums the partials
vyre.program @level0 workgroup_size [128, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[5000]
  vyre.buffer @partial binding 1 read_write : ui32[40]
  vyre.buffer @s workgroup : ui32[128]
  %i = vyre.invocation_id x
  %t = vyre.local_id x
  %b = vyre.workgroup_id x
  %n = vyre.buf_len @x
  %zero = vyre.const 0 : ui32
  %in = vyre.lt %i, %n : ui32
  %v0 = vyre.load @x[%i] : ui32
  %v = vyre.select %in, %v0, %zero : ui32
  vyre.store @s[%t] = %v : ui32
  vyre.barrier
  %levels = vyre.const 7 : ui32
  %half = vyre.const 64 : ui32
  vyre.loop @k = %zero to %levels {
    %k = vyre.var @k : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %t, %stride : ui32
    vyre.if %active {
      %j = vyre.add %t, %stride : ui32
      %a = vyre.load @s[%t] : ui32
      %c = vyre.load @s[%j] : ui32
      %sum = vyre.add %a, %c : ui32
      vyre.store @s[%t] = %sum : ui32
    }
    vyre.barrier
  }
  %first = vyre.eq %t, %zero : ui32
  vyre.if %first {
    %tot = vyre.load @s[%zero] : ui32
    vyre.store @partial[%b] = %tot : ui32
  }
}
vyre.program @level1 workgroup_size [64, 1, 1] {
  vyre.buffer @partial binding 0 read_only : ui32[40]
  vyre.buffer @total binding 1 write_only : ui32[1]
  vyre.buffer @s workgroup : ui32[64]
  %t = vyre.local_id x
  %zero = vyre.const 0 : ui32
  %n = vyre.const 40 : ui32
  %in = vyre.lt %t, %n : ui32
  %v0 = vyre.load @partial[%t] : ui32
  %v = vyre.select %in, %v0, %zero : ui32
  vyre.store @s[%t] = %v : ui32
  vyre.barrier
  %levels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @k = %zero to %levels {
    %k = vyre.var @k : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %t, %stride : ui32
    vyre.if %active {
      %j = vyre.add %t, %stride : ui32
      %a = vyre.load @s[%t] : ui32
      %c = vyre.load @s[%j] : ui32
      %sum = vyre.add %a, %c : ui32
      vyre.store @s[%t] = %sum : ui32
    }
    vyre.barrier
  }
  %first = vyre.eq %t, %zero : ui32
  vyre.if %first {
    %tot = vyre.load @s[%zero] : ui32
    vyre.store @total[%zero] = %tot : ui32
  }
}
"""


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_programs_whose_workgroup_sizes_cannot_be_shared_are_not_fused(backend, capsys) -> None:
    """The default mode cuts a run where the workgroup size changes when an arm
    depends on its own size (workgroup memory, barriers); `vyre_xdsl.run(...,
    fuse=True)` refused this valid module ("cannot fuse @level1: its workgroup
    [64, 1, 1] differs ...") instead of leaving the two passes apart. `force`
    still refuses, as documented."""
    from vyre_xdsl.diagnostics import VyreDiagnostic
    from vyre_xdsl.passes.vyre_fuse import VyreFusePass

    module = parse_module(TWO_WIDTHS)
    assert _names(fuse_module(module)) == ["level0", "level1"]
    VyreFusePass(remarks=True).apply(None, parse_module(TWO_WIDTHS))
    assert (
        "not fused with @level0 before it: their workgroup sizes differ" in capsys.readouterr().err
    )
    with pytest.raises(VyreDiagnostic, match="cannot fuse @level1: its workgroup"):
        fuse_module(module, force=True)
    x = np.random.default_rng(5).integers(0, 1000, 5000).astype(np.uint32)
    out = run(TWO_WIDTHS, {"x": x, "partial": np.zeros(40, np.uint32)}, backend, fuse=True)
    assert int(out["total"][0]) == int(x.astype(np.uint64).sum())
    np.testing.assert_array_equal(out["partial"], np.add.reduceat(x, np.arange(0, 5000, 128)))


#: an elementwise chain over runtime-sized buffers, 64 then 128 wide: fusion
#: cannot prove the fused dispatch covers the first arm
RUNTIME_WIDTHS = """
vyre.program @a workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[?]
  vyre.buffer @t binding 1 read_write : f32[?]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  %w = vyre.add %v, %v : f32
  vyre.store @t[%i] = %w : f32
}
vyre.program @b workgroup_size [128, 1, 1] {
  vyre.buffer @t binding 0 read_only : f32[?]
  vyre.buffer @y binding 1 read_write : f32[?]
  %i = vyre.invocation_id x
  %v = vyre.load @t[%i] : f32
  %w = vyre.mul %v, %v : f32
  vyre.store @y[%i] = %w : f32
}
"""


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_a_run_the_pass_refuses_to_fuse_is_left_unfused(backend, capsys) -> None:
    """`run(fuse=True)` on this valid module raised "cannot fuse @a: its own
    dispatch ... may not launch"; the default mode now cuts the run at the
    program the refusal names (with a remark), `force` still refuses."""
    from vyre_xdsl.diagnostics import VyreDiagnostic
    from vyre_xdsl.passes.vyre_fuse import VyreFusePass

    module = parse_module(RUNTIME_WIDTHS)
    assert _names(fuse_module(module)) == ["a", "b"]
    VyreFusePass(remarks=True).apply(None, parse_module(RUNTIME_WIDTHS))
    remark = capsys.readouterr().err
    assert "not fused with @a before it: fusing them is refused: cannot fuse @a" in remark
    with pytest.raises(VyreDiagnostic, match="cannot fuse @a: its own dispatch"):
        fuse_module(module, force=True)
    x = np.arange(1000, dtype=np.float32)
    inputs = {"x": x, "t": np.zeros(1000, np.float32), "y": np.zeros(300, np.float32)}
    out = run(RUNTIME_WIDTHS, inputs, backend, fuse=True)
    np.testing.assert_array_equal(out["y"], (2 * x[:300]) ** 2)
    np.testing.assert_array_equal(out["t"], 2 * x)
