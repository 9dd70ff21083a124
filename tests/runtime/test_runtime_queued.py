"""Queued device runs share the pending batch's compute pass: runs recorded
back to back with nothing but dispatches (their outputs need no clear) add
their dispatches to one open pass, which any other command (a clear, a copy,
the submit) ends first. Results are checked against numpy, including runs that
read what the run before them wrote."""

from __future__ import annotations

import numpy as np
import pytest

import vyre_xdsl

N = 1000
STEP = f"""
vyre.program @step workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_only : ui32[{N}]
  vyre.buffer @out binding 1 write_only : ui32[{N}]
  %i = vyre.invocation_id x
  %x = vyre.load @x[%i] : ui32
  %three = vyre.const 3 : ui32
  %one = vyre.const 1 : ui32
  %m = vyre.mul %x, %three : ui32
  %r = vyre.add %m, %one : ui32
  vyre.store @out[%i] = %r : ui32
}}
"""
# writes only the even elements: its output keeps its clear, which ends the pass
EVEN = STEP.replace(
    "vyre.store @out[%i]",
    "%two = vyre.const 2 : ui32\n  %j = vyre.mul %i, %two : ui32\n  vyre.store @out[%j]",
)


def step(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.uint64) * 3 + 1).astype(np.uint32)


@pytest.fixture
def passes(monkeypatch):
    """How many compute passes are begun."""
    from wgpu.backends.wgpu_native import GPUCommandEncoder

    count = [0]
    begin = GPUCommandEncoder.begin_compute_pass

    def counted(self, *args, **kwargs):
        count[0] += 1
        return begin(self, *args, **kwargs)

    monkeypatch.setattr(GPUCommandEncoder, "begin_compute_pass", counted)
    return count


def test_queued_runs_share_one_pass_and_read_each_others_outputs(passes):
    exe = vyre_xdsl.compile(STEP, backend="wgpu")
    x0 = np.arange(N, dtype=np.uint32)
    current = vyre_xdsl.to_device(x0)
    vyre_xdsl.synchronize()
    passes[0] = 0
    outputs = []
    for _ in range(20):  # each run reads the output of the one before
        current = exe.run({"x": current}, device=True)["out"]
        outputs.append(current)
    vyre_xdsl.synchronize()
    assert passes[0] == 1
    expected = x0
    for out in outputs:
        expected = step(expected)
        np.testing.assert_array_equal(out.numpy(), expected)


def test_a_cleared_output_ends_the_pass_and_stays_correct(passes):
    full, even = (vyre_xdsl.compile(t, backend="wgpu") for t in (STEP, EVEN))
    x = vyre_xdsl.to_device(np.arange(N, dtype=np.uint32) + 7)
    vyre_xdsl.synchronize()
    passes[0] = 0
    runs = [(full if i % 2 == 0 else even).run({"x": x}, device=True)["out"] for i in range(10)]
    vyre_xdsl.synchronize()
    # each even-writer's clear ends the open pass; the full writer after it joins its pass
    assert passes[0] == 1 + 5
    want_full = step(x.numpy())
    want_even = np.zeros(N, np.uint32)
    want_even[::2] = want_full[: (N + 1) // 2]
    for i, out in enumerate(runs):
        np.testing.assert_array_equal(out.numpy(), want_full if i % 2 == 0 else want_even)
