"""Every part of a program split at `grid_sync` is dispatched on its own grid.

A part whose effects all sit under guards that only the first `G` workgroups
pass (what fusion writes around an arm with a smaller dispatch) launches `G`
workgroups, not the whole program's grid. The expected grids below are
computed here from each arm's declared geometry (`ceil(count / 256)`), never
from the lowering; the results are compared with numpy on both backends.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from vyre_xdsl import run
from vyre_xdsl.api import fuse_module
from vyre_xdsl.context import parse_module
from vyre_xdsl.dialects.vyre import programs
from vyre_xdsl.lowering.lower import lower_program
from vyre_xdsl.megakernel.bundle import TargetModuleBundle
from vyre_xdsl.megakernel.compile import compile_module
from vyre_xdsl.megakernel.run import run_bundle
from vyre_xdsl.testing.fusion_workloads import WIDTH, presum_tree, tree_sum


def _grids(module) -> list[tuple[int, ...]]:
    return [tuple(d.dispatch().static_grid) for p in programs(module) for d in lower_program(p)]


def _tree_counts(n: int) -> list[int]:
    """The input count of every tree pass: n, ceil(n/256), ... down to one workgroup."""
    counts = [n]
    while counts[-1] > WIDTH:
        counts.append(math.ceil(counts[-1] / WIDTH))
    return counts


@pytest.mark.parametrize("n", [WIDTH * WIDTH * 3 + 5, 70000])
def test_fused_tree_parts_run_on_their_arms_grids(n: int) -> None:
    work = tree_sum(n)
    fused = fuse_module(parse_module(work.text), force=True)
    assert len(programs(fused)) == 1
    # pass k (a workgroup-memory program: its count is its largest buffer, the input)
    expected = [(math.ceil(c / WIDTH), 1, 1) for c in _tree_counts(n)]
    assert len(expected) >= 3
    assert _grids(fused) == expected
    # unfused, each program has the same grid
    assert _grids(parse_module(work.text)) == expected


def test_fused_presum_parts_run_on_their_arms_grids() -> None:
    n = 16 * WIDTH * WIDTH * 2
    m = n // 16
    fused = fuse_module(parse_module(presum_tree(n).text), force=True)
    # The pre-sum writes s[i] and the first tree pass reads s[i] of its own
    # workgroup: one part (a workgroup barrier between them) on the grid of
    # both arms, ceil(m / 256); then the later tree passes, each on its own.
    later = [(math.ceil(c / WIDTH), 1, 1) for c in _tree_counts(m)[1:]]
    assert len(later) == 2
    assert _grids(fused) == [(m // WIDTH, 1, 1), *later]


# After the grid_sync, only the first workgroups may store: the part runs on
# those. Workgroup [64]: 1024 elements = 16 workgroups.
GUARDED = """
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[1024]
  vyre.buffer @out binding 1 write_only output : ui32[1024]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %one = vyre.const 1 : ui32
  %w = vyre.add %v, %one : ui32
  vyre.store @x[%i] = %w : ui32
  vyre.barrier grid_sync
  %g = vyre.workgroup_id x
  %limit = vyre.const GROUPS : ui32
  %inside = vyre.lt %g, %limit : ui32
  vyre.if %inside {
    %j = vyre.invocation_id x
    %n = vyre.const 1023 : ui32
    %k = vyre.sub %n, %j : ui32
    %r = vyre.load @x[%k] : ui32
    vyre.store @out[%j] = %r : ui32
  }
  TAIL
}
"""


def _guarded_text(groups: int, tail: str = "") -> str:
    return GUARDED.replace("GROUPS", str(groups)).replace("TAIL", tail)


def _guarded_expected(x: np.ndarray, groups: int) -> np.ndarray:
    out = np.zeros(1024, np.uint32)
    limit = groups * 64
    out[:limit] = (x + 1)[::-1][:limit]
    return out


@pytest.mark.parametrize("groups", [0, 3, 16, 40])
def test_guarded_part_grid(groups: int) -> None:
    module = parse_module(_guarded_text(groups))
    assert _grids(module) == [(16, 1, 1), (max(1, min(groups, 16)), 1, 1)]


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
@pytest.mark.parametrize("groups", [0, 3, 16])
def test_guarded_part_results(backend: str, groups: int) -> None:
    x = np.random.default_rng(groups).integers(0, 1 << 20, 1024, dtype=np.uint32)
    result = run(_guarded_text(groups), {"x": x}, backend=backend)
    np.testing.assert_array_equal(result["out"], _guarded_expected(x, groups))


@pytest.mark.parametrize(
    "tail",
    [
        # a store outside the guard: every workgroup may have an effect
        "%z = vyre.const 0 : ui32\n  vyre.store @x[%z] = %z : ui32",
        # an else branch with a store runs where the guard fails
        "%t = vyre.const true : i1\n  vyre.if %t {\n  } else {\n"
        "    %z = vyre.const 5 : ui32\n    vyre.store @x[%z] = %z : ui32\n  }",
    ],
)
def test_unguarded_effect_keeps_the_whole_grid(tail: str) -> None:
    assert _grids(parse_module(_guarded_text(3, tail))) == [(16, 1, 1), (16, 1, 1)]


def test_invocation_guard_counts_workgroups() -> None:
    # `invocation_id x < 100` with 64-wide workgroups: ceil(100 / 64) = 2 workgroups
    text = (
        _guarded_text(3)
        .replace("%g = vyre.workgroup_id x", "%g = vyre.invocation_id x")
        .replace("vyre.const 3 : ui32", "vyre.const 100 : ui32")
    )
    assert _grids(parse_module(text)) == [(16, 1, 1), (2, 1, 1)]
    x = np.arange(1024, dtype=np.uint32)
    result = run(text, {"x": x}, backend="wgpu")
    expected = np.zeros(1024, np.uint32)
    expected[:100] = (x + 1)[::-1][:100]
    np.testing.assert_array_equal(result["out"], expected)


def test_megakernel_bundle_parts_run_on_their_grids() -> None:
    module = parse_module(_guarded_text(3))
    bundle = TargetModuleBundle.from_bytes(compile_module(module).bundle_bytes())
    # in logical 64-wide workgroups (a kernel in vec4 form covers four per invocation)
    groups = [
        math.prod(k.static_grid) * k.elements_per_invocation
        for image in bundle.modules
        for k in image.kernels
    ]
    assert groups == [16, 3]
    x = np.arange(1024, dtype=np.uint32) * 3
    for backend in ("wgpu", "reference"):
        outputs = run_bundle(bundle, {"x": x}, backend=backend)
        np.testing.assert_array_equal(outputs["out"], _guarded_expected(x, 3))
