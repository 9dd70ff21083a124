"""examples/calls.mlir and examples/subgroups.mlir compute what plain numpy says,
on both backends, fused and unfused."""

import numpy as np
import pytest

import vyre_xdsl

from ..support import EXAMPLES

RUNS = [(b, f) for b in ("reference", "wgpu") for f in (False, True)]


@pytest.mark.parametrize("backend,fuse", RUNS)
def test_calls_example(backend, fuse):
    rng = np.random.default_rng(0)
    a, b = rng.random(256, dtype=np.float32), rng.random(256, dtype=np.float32)
    i = np.arange(256)
    sums = np.array([k * (k - 1) // 2 for k in (i & 7)], np.float32)
    want = (a + (b - a) * np.float32(0.25)) + sums
    text = (EXAMPLES / "calls.mlir").read_text()
    out = vyre_xdsl.run(text, {"a": a, "b": b}, backend=backend, fuse=fuse)
    np.testing.assert_allclose(out["y"], want, rtol=0, atol=4e-7 * 8)


@pytest.mark.parametrize("backend,fuse", RUNS)
def test_subgroups_example(backend, fuse):
    x = np.random.default_rng(1).integers(0, 2**32, 256, dtype=np.uint32)
    text = (EXAMPLES / "subgroups.mlir").read_text()
    out = vyre_xdsl.run(text, {"x": x}, backend=backend, fuse=fuse)
    np.testing.assert_array_equal(out["wg_max"], np.arange(256) // 64)
    np.testing.assert_array_equal(out["own"], x)
    np.testing.assert_array_equal(out["leader_mask"], np.ones(256))
    np.testing.assert_array_equal(out["has_lanes"], np.ones(256))
