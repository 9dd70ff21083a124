"""The fusion benchmark workloads, fused and unfused, on both backends: every
result equals numpy's (within f32 rounding for the sums), and fusing changes
no bit of a backend's result."""

from __future__ import annotations

import numpy as np
import pytest

from vyre_xdsl import run
from vyre_xdsl.testing.fusion_workloads import WIDTH, WORKLOADS

# small sizes that still give every shape: three tree passes, a ragged last workgroup
SIZES = {
    "tree_sum": WIDTH * WIDTH + 3 * WIDTH + 7,
    "presum_tree": 16 * WIDTH * 3,
    "neighbour": 1000,
    "histogram": 1500,
}


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_fused_equals_unfused_equals_numpy(name: str, backend: str) -> None:
    work = WORKLOADS[name](SIZES[name])
    inputs = work.inputs(seed=7)
    unfused = run(work.text, inputs, backend=backend)
    fused = run(work.text, inputs, backend=backend, fuse=True)
    work.check(unfused, inputs)
    work.check(fused, inputs)
    np.testing.assert_array_equal(fused[work.output], unfused[work.output])


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_fused_wgpu_agrees_with_the_reference(name: str) -> None:
    work = WORKLOADS[name](SIZES[name])
    inputs = work.inputs(seed=3)
    reference = run(work.text, inputs, backend="reference", fuse=True)[work.output]
    gpu = run(work.text, inputs, backend="wgpu", fuse=True)[work.output]
    if work.rtol:
        np.testing.assert_allclose(gpu, reference, rtol=work.rtol)
    else:
        np.testing.assert_array_equal(gpu, reference)
