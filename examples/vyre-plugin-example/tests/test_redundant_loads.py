"""Differential check: `example-redundant-loads` keeps every result.

Each module runs with `vyre_xdsl.run` on the reference interpreter before and
after the pass, on the same inputs; outputs (or the trap) must be identical.
"""

from __future__ import annotations

import numpy as np
import pytest
from vyre_plugin_example.redundant_loads import RedundantLoadsPass
from xdsl.passes import PassPipeline

import vyre_xdsl
from vyre_xdsl.context import vyre_context
from vyre_xdsl.dialects.vyre import LoadOp
from vyre_xdsl.interpreter import VyreTrap
from vyre_xdsl.testing.generators import random_module

PROGRAM = """
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[128]
  vyre.buffer @y binding 1 read_write : ui32[128]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %a = vyre.load @x[%i] : ui32
  %ya = vyre.load @y[%i] : ui32
  %b = vyre.load @x[%i] : ui32
  %s = vyre.add %a, %b : ui32
  vyre.store @y[%i] = %s : ui32
  %yb = vyre.load @y[%i] : ui32
  %t = vyre.mul %ya, %yb : ui32
  vyre.store @y[%i] = %t : ui32
}
"""


def optimized(text: str):
    module = vyre_xdsl.parse(text)
    PassPipeline((RedundantLoadsPass(),)).apply(vyre_context(), module)
    return module


def results(module, inputs):
    """The outputs of a reference run, or the trap it raised."""
    try:
        return vyre_xdsl.run(module, inputs, backend="reference")
    except VyreTrap as trap:
        return (trap.tag, trap.address, trap.invocation)


def assert_same(before, after) -> None:
    if isinstance(before, tuple) or isinstance(after, tuple):
        assert before == after
        return
    assert sorted(before) == sorted(after)
    for name in before:
        assert np.asarray(before[name]).tobytes() == np.asarray(after[name]).tobytes(), name


def test_the_pass_reuses_the_load_and_keeps_the_results():
    after = optimized(PROGRAM)
    assert sum(isinstance(op, LoadOp) for op in after.walk()) == 3  # the second @x load is gone
    rng = np.random.default_rng(0)
    inputs = {
        "x": rng.integers(0, 2**32, 128, dtype=np.uint64).astype(np.uint32),
        "y": rng.integers(0, 2**32, 128, dtype=np.uint64).astype(np.uint32),
    }
    # one invocation per element of @y (the buffer it writes): y = y * (2 x) mod 2^32
    x, y = inputs["x"].astype(np.uint64), inputs["y"].astype(np.uint64)
    expected_y = (y * ((2 * x) % 2**32)) % 2**32
    out = vyre_xdsl.run(after, inputs, backend="reference")
    np.testing.assert_array_equal(out["y"], expected_y.astype(np.uint32))  # numpy, not the pass
    assert_same(results(vyre_xdsl.parse(PROGRAM), inputs), results(after, inputs))


@pytest.mark.parametrize("seed", range(25))
def test_generated_modules_keep_their_results(seed):
    case = random_module(seed)
    after = optimized(case.text)
    assert_same(results(case.module, case.inputs), results(after, case.inputs))
