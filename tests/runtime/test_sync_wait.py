"""`GpuDevice.wait_idle`: on a GPU `synchronize` polls without blocking (for up
to `spin_wait_s`) until the queue reports its work done, then blocks; on a CPU
adapter it blocks at once. Every result is checked against numpy, with the spin
on and off, for work shorter and longer than the spin."""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.interpreter import VyreTrap
from vyre_xdsl.runtime import device as device_module

from .test_repeated_runs import STEP, N  # out = x * 3 + 1

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "bench"))
from gpu_chains import chain_text, numpy_chain  # noqa: E402

TRAP = """
vyre.program @check workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[256]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %seven = vyre.const 7 : ui32
  %hit = vyre.eq %v, %seven : ui32
  vyre.if %hit {
    vyre.trap %i "seven"
  }
  vyre.store @out[%i] = %v : ui32
}
"""


@pytest.fixture
def gpu():
    return device_module.gpu_device()


@pytest.fixture
def spin(gpu):
    """Set the spin for a test; the device's own setting is restored after."""
    before = gpu.spin_wait_s

    def set_spin(seconds: float):
        gpu.spin_wait_s = seconds

    yield set_spin
    gpu.spin_wait_s = before


def test_a_cpu_adapter_blocks_at_once(gpu):
    assert gpu.adapter.info.get("adapter_type") == "CPU"  # lavapipe in CI
    assert gpu.spin_wait_s == 0.0
    assert device_module.SPIN_WAIT_S > 0  # what a GPU gets


@pytest.mark.parametrize("seconds", [0.0, 1e-9, 5.0])
def test_short_runs_synchronize_with_and_without_the_spin(gpu, spin, seconds):
    spin(seconds)
    exe = vyre_xdsl.compile(STEP, backend="wgpu")
    x = np.arange(N, dtype=np.uint32)
    dx = vyre_xdsl.to_device(x)
    for step in range(3):
        out = exe.run({"x": dx}, device=True)["out"]
        vyre_xdsl.synchronize()
        np.testing.assert_array_equal(out.numpy(), x * np.uint32(3) + np.uint32(1))
    vyre_xdsl.synchronize()  # nothing submitted: returns
    assert gpu.work_done_callbacks == []  # every work-done callback was called


def test_work_longer_than_the_spin_falls_back_to_the_blocking_wait(gpu, spin):
    n = 1 << 20
    exe = vyre_xdsl.compile(chain_text(8, n), backend="wgpu")
    x = np.linspace(-1, 1, n, dtype=np.float32)
    dx = vyre_xdsl.to_device(x)
    spin(1e-6)  # far shorter than 8 stages over 2^20 elements on a CPU adapter
    outs = [exe.run({"x": dx}, device=True)["out"] for _ in range(3)]
    started = time.perf_counter()
    vyre_xdsl.synchronize()
    assert time.perf_counter() - started < 60
    for out in outs:
        np.testing.assert_allclose(out.numpy(), numpy_chain(x, 8), rtol=1e-5)
    assert gpu.work_done_callbacks == []


def work_is_done(gpu) -> bool:
    """Whether the queue reports every submitted command finished at the first
    poll that does not block (a work-done callback registered now)."""
    from wgpu.backends.wgpu_native._api import ffi, lib

    done, keep_alive = device_module.work_done(gpu.device)
    lib.wgpuDevicePoll(gpu.device._internal, False, ffi.NULL)
    answer = bool(done)
    gpu.device._poll_wait()  # the callback is called before `keep_alive` goes
    assert done
    return answer


@pytest.mark.parametrize("seconds", [0.0, 1e-6, 5.0])
def test_the_wait_returns_only_when_the_work_is_done(gpu, spin, seconds):
    n = 1 << 20
    exe = vyre_xdsl.compile(chain_text(8, n), backend="wgpu")
    dx = vyre_xdsl.to_device(np.linspace(-1, 1, n, dtype=np.float32))
    vyre_xdsl.synchronize()
    spin(seconds)
    for _ in range(3):
        exe.run({"x": dx}, device=True)
    gpu.submit()
    assert not work_is_done(gpu)  # the probe sees work in progress (milliseconds of it here)
    for _ in range(3):
        exe.run({"x": dx}, device=True)
    gpu.synchronize()
    assert work_is_done(gpu)


def test_a_trap_is_raised_at_the_synchronize_with_the_spin(spin):
    spin(5.0)
    exe = vyre_xdsl.compile(TRAP, backend="wgpu")
    x = np.arange(256, dtype=np.uint32)
    exe.run({"x": vyre_xdsl.to_device(x)}, device=True)
    with pytest.raises(VyreTrap, match="seven"):
        vyre_xdsl.synchronize()
