"""The coarsening factor comes from the device: the wgpu runtime's target
profile says about how many workgroups the device runs at once
(`resident_workgroups`: 4 per CPU thread on a CPU adapter), and the pipeline
coarsens tree levels down to that many (`vyre-coarsen-reductions`'s
min-workgroups). Grids are worked out by hand from the documented rule;
results come from numpy."""

from __future__ import annotations

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.runtime import device as device_module
from vyre_xdsl.target_profile import PORTABLE_PROFILE

from ..passes.test_coarsen_reductions import tree

#: 2^16 elements: 256 workgroups of 256 in the first level, 1 in the second
N = 1 << 16


@pytest.fixture
def two_cpu_threads(monkeypatch):
    monkeypatch.setattr(device_module.os, "cpu_count", lambda: 2)


def test_a_cpu_adapter_runs_four_workgroups_per_thread(two_cpu_threads):
    gpu = device_module.gpu_device()
    assert gpu.adapter.info.get("adapter_type") == "CPU"  # lavapipe in CI
    assert gpu.resident_workgroups == 8
    assert gpu.target_profile.resident_workgroups == 8
    assert PORTABLE_PROFILE.resident_workgroups == 1024


@pytest.mark.parametrize("fuse", [False, True])
def test_tree_levels_are_coarsened_for_the_device(two_cpu_threads, fuse):
    """With 8 resident workgroups, the 256 workgroups of the first level take
    k = 16 (max-k): 16 remain (at least 8). The portable profile (1024) leaves
    a level of fewer than 2048 workgroups as written."""
    text = tree(N, "max", "ui32")
    x = np.random.default_rng(4).integers(0, 1 << 32, N, dtype=np.uint64).astype(np.uint32)
    device = vyre_xdsl.compile(text, backend="wgpu", fuse=fuse)
    portable = vyre_xdsl.compile(text, backend="wgpu", fuse=fuse, portable=True)
    assert device.compiled.kernels[0].dispatch_grid({}) == (16, 1, 1)
    assert portable.compiled.kernels[0].dispatch_grid({}) == (256, 1, 1)
    for exe in (device, portable):
        assert exe.run({"x": x})["out"].tolist() == [int(x.max())]
