"""kernel-coarsen: a privatized histogram over 2^21 elements runs 8 logical
workgroups per launched workgroup, recorded in the kernel IR with the launch
grid computed here by hand; a tampered record is refused by kernel-verify; the
coarsened kernel counts what numpy counts."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

import vyre_xdsl
from vyre_xdsl.backends.wgsl import compile_module
from vyre_xdsl.context import parse_module
from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.dialects import kernel as k
from vyre_xdsl.passes.kernel_coarsen import KernelCoarsenPass
from vyre_xdsl.passes.kernel_verify import verify_descriptors
from vyre_xdsl.passes.vyre_lower import VyreLowerPass
from vyre_xdsl.target_profile import TargetProfile

HIST = """vyre.program @hist workgroup_size [256, 1, 1] {{
  vyre.buffer @x binding 0 read_only : ui32[{n}]
  vyre.buffer @out binding 1 read_write : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %one = vyre.const 1 : ui32
  %old = vyre.atomic add @out[%v], %one : ui32
}}
"""


def coarsened(n: int):
    module = parse_module(HIST.format(n=n))
    VyreLowerPass().apply(Context(), module)
    KernelCoarsenPass().apply(Context(), module)
    verify_descriptors(module, TargetProfile())
    (descriptor,) = k.descriptors(module)
    return module, descriptor


@pytest.mark.parametrize(
    "n,per,launched",
    [
        (1 << 21, 8, (1024, 1, 1)),  # 8192 groups: 8192 // 1024 = 8 per workgroup
        (1 << 23, 32, (1024, 1, 1)),  # 32768 groups
        (1 << 18, 1, (1024, 1, 1)),  # 1024 groups: not coarsened
    ],
)
def test_groups_per_workgroup_and_launch_grid(n, per, launched):
    module, descriptor = coarsened(n)
    dispatch = descriptor.dispatch()
    assert dispatch.coarsening == per
    assert dispatch.static_grid == launched
    assert dispatch.logical_static_grid == (n // 256, 1, 1)
    regions = [op for op in descriptor.statements() if k.COARSENED in op.attributes]
    assert len(regions) == (1 if per > 1 else 0)
    text = str(module)
    assert str(parse_module(text)) == text  # the record round-trips


def test_kernel_verify_refuses_a_coarsening_without_its_region():
    module, descriptor = coarsened(1 << 21)
    for op in descriptor.statements():
        op.attributes.pop(k.COARSENED, None)
    with pytest.raises(VyreDiagnostic) as info:
        verify_descriptors(module, TargetProfile())
    assert "groups_per_workgroup 8 with 0 'coarsened' regions" in str(info.value)


def test_kernel_verify_refuses_a_wrong_launch_grid():
    module, descriptor = coarsened(1 << 21)
    descriptor.dispatch().properties["grid"] = descriptor.dispatch().logical_grid
    with pytest.raises(VyreDiagnostic) as info:
        verify_descriptors(module, TargetProfile())
    assert "is not the launch grid [1024, 1, 1]" in str(info.value)


def test_coarsened_histogram_matches_numpy():
    n = 1 << 21
    text = HIST.format(n=n)
    (kernel,) = compile_module(parse_module(text))
    assert kernel.static_grid == (1024, 1, 1)
    assert "for 8 logical workgroups" in kernel.wgsl
    x = np.random.default_rng(3).integers(0, 256, n).astype(np.uint32)
    out = vyre_xdsl.run(text, {"x": x, "out": np.zeros(256, np.uint32)}, backend="wgpu")["out"]
    np.testing.assert_array_equal(out, np.bincount(x, minlength=256).astype(np.uint32))
