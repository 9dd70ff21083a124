"""A numpy-in/numpy-out run on a CPU adapter (lavapipe) waits for the device
once: the readback buffers (and the batch's trap records) are mapped before
that wait, which resolves the maps, instead of each being mapped and waited
for after it. A GPU maps after the wait (`GpuDevice.maps_before_wait`: on the
H200 a map started early made runs several times slower), one wait per
buffer read."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import vyre_xdsl

execute = importlib.import_module("vyre_xdsl.runtime.execute")

TWO_OUTPUTS = """
vyre.program @two workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : si32[1000]
  vyre.buffer @a binding 1 write_only : si32[1000]
  vyre.buffer @b binding 2 write_only : si32[1000]
  %i = vyre.invocation_id x
  %x = vyre.load @x[%i] : si32
  %three = vyre.const 3 : si32
  %q = vyre.div %x, %three : si32
  vyre.store @a[%i] = %q : si32
  %d = vyre.mul %x, %three : si32
  vyre.store @b[%i] = %d : si32
}
"""
X = np.arange(-500, 500, dtype=np.int32)


@pytest.fixture
def waits(monkeypatch):
    """Every device wait the calling thread makes: a blocking poll, or a map_sync."""
    from wgpu.backends.wgpu_native import GPUBuffer, GPUDevice

    seen: list[str] = []
    poll, map_sync = GPUDevice._poll_wait, GPUBuffer.map_sync

    def counted_poll(self):
        seen.append("poll")
        return poll(self)

    def counted_map(self, *args, **kwargs):
        seen.append("map_sync")
        return map_sync(self, *args, **kwargs)

    monkeypatch.setattr(GPUDevice, "_poll_wait", counted_poll)
    monkeypatch.setattr(GPUBuffer, "map_sync", counted_map)
    return seen


def expected_waits(exe, buffers: int) -> list[str]:
    """One poll, then (on a GPU) one map_sync per buffer read."""
    return ["poll"] + ([] if exe.gpu.maps_before_wait else ["map_sync"] * buffers)


def test_a_numpy_run_waits_once(waits):
    # two outputs and a trap sidecar (si32 division): three buffers read back
    exe = vyre_xdsl.compile(TWO_OUTPUTS, backend="wgpu")
    exe.run({"x": X})  # warm: pipelines, plans
    waits.clear()
    out = exe.run({"x": X})
    assert waits == expected_waits(exe, 3)
    np.testing.assert_array_equal(out["a"], np.trunc(X / 3).astype(np.int32))
    np.testing.assert_array_equal(out["b"], X * 3)


def test_a_device_array_read_waits_once(waits):
    exe = vyre_xdsl.compile(TWO_OUTPUTS, backend="wgpu")
    kept = exe.run({"x": X}, device=True)
    waits.clear()
    np.testing.assert_array_equal(kept["b"].numpy(), X * 3)
    assert waits == expected_waits(exe, 2)  # the output and the batch's trap records


def test_a_trap_leaves_the_readback_buffers_unmapped():
    trapping = TWO_OUTPUTS.replace("%three = vyre.const 3", "%three = vyre.const 0")
    exe = vyre_xdsl.compile(trapping, backend="wgpu")
    from vyre_xdsl.interpreter import VyreTrap

    for _ in range(2):  # the second run reuses the pooled buffers: they must be unmapped
        with pytest.raises(VyreTrap):
            exe.run({"x": X})
    good = vyre_xdsl.compile(TWO_OUTPUTS, backend="wgpu").run({"x": X})
    np.testing.assert_array_equal(good["b"], X * 3)
