"""Readback maps through wgpu-native on the calling thread (`runtime.buffer_map`):
a run with numpy in and out submits its batch once (wgpu-py's `map_async` adds
an empty submit before every read map) and never wakes wgpu-py's poll thread;
data queued by `write_buffer` is flushed before a read, so a device array read
right after it is written holds its values. Expected values come from numpy."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import wgpu
from wgpu.backends.wgpu_native import _api as wgpu_api
from wgpu.backends.wgpu_native._poller import PollThread

import vyre_xdsl
from vyre_xdsl.runtime import device as device_module
from vyre_xdsl.runtime.buffer_map import READ, WRITE, BufferMap, MapError

from .test_repeated_runs import STEP, N  # out = x * 3 + 1


@pytest.fixture
def counted(monkeypatch):
    """Counts of queue submits (through wgpu-py, and the runtime's own
    `submit_for_index`) and of wgpu-py poll-thread tokens."""
    counts = {"submit": 0, "token": 0}
    submit, token = wgpu_api.GPUQueue.submit, PollThread.get_token
    submit_for_index = device_module.submit_for_index

    def counting_submit(self, command_buffers):
        counts["submit"] += 1
        return submit(self, command_buffers)

    def counting_submit_for_index(device, command_buffer):
        counts["submit"] += 1
        return submit_for_index(device, command_buffer)

    def counting_token(self):
        counts["token"] += 1
        return token(self)

    monkeypatch.setattr(wgpu_api.GPUQueue, "submit", counting_submit)
    monkeypatch.setattr(device_module, "submit_for_index", counting_submit_for_index)
    monkeypatch.setattr(PollThread, "get_token", counting_token)
    return counts


def test_a_run_with_numpy_in_and_out_submits_once(counted):
    exe = vyre_xdsl.compile(STEP, backend="wgpu")
    x = np.arange(N, dtype=np.uint32)
    exe.run({"x": x})  # pipelines built, buffers pooled
    vyre_xdsl.synchronize()
    counted.update(submit=0, token=0)
    for step in range(5):
        out = exe.run({"x": x + step})["out"]
        np.testing.assert_array_equal(out, (x + step) * np.uint32(3) + np.uint32(1))
    assert counted == {"submit": 5, "token": 0}


def test_a_device_array_reads_back_what_was_just_written(counted):
    x = np.random.default_rng(0).integers(0, 1 << 32, 4096, dtype=np.uint64).astype(np.uint32)
    vyre_xdsl.synchronize()
    counted.update(submit=0, token=0)
    np.testing.assert_array_equal(vyre_xdsl.to_device(x).numpy(), x)
    assert counted["token"] == 0
    assert counted["submit"] <= 1  # the write flushed, or a staging copy submitted


def test_flush_submits_only_when_writes_are_queued(counted):
    gpu = device_module.gpu_device()
    gpu.synchronize()
    buffer = gpu.device.create_buffer(size=64, usage=wgpu.BufferUsage.COPY_DST)
    counted.update(submit=0)
    gpu.flush_queued_writes()
    assert counted["submit"] == 0
    gpu.write_buffer(buffer, np.arange(16, dtype=np.uint32))
    gpu.flush_queued_writes()
    gpu.flush_queued_writes()
    assert counted["submit"] == 1


def staging(device, usage, size=64):
    return device.create_buffer(size=size, usage=usage)


def test_write_then_read_through_a_copy():
    device = device_module.gpu_device().device
    upload = staging(device, wgpu.BufferUsage.MAP_WRITE | wgpu.BufferUsage.COPY_SRC)
    readback = staging(device, wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
    data = np.arange(16, dtype=np.uint32) * np.uint32(7)
    BufferMap(device, upload, WRITE).write(data.view(np.uint8))
    encoder = device.create_command_encoder()
    encoder.copy_buffer_to_buffer(upload, 0, readback, 0, 64)
    device.queue.submit([encoder.finish()])
    got = BufferMap(device, readback, READ).read(40)
    assert got.dtype == np.uint8 and got.size == 40
    np.testing.assert_array_equal(got.view(np.uint32), data[:10])
    assert readback.map_state == "unmapped"  # wgpu-py's view is unchanged


def test_settle_leaves_the_buffer_unmapped_and_mappable_again():
    device = device_module.gpu_device().device
    readback = staging(device, wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
    first = BufferMap(device, readback, READ)
    first.settle()
    first.settle()  # twice: nothing more
    np.testing.assert_array_equal(BufferMap(device, readback, READ).read(8), np.zeros(8))


def test_a_buffer_without_map_usage_is_refused():
    device = device_module.gpu_device().device
    storage = staging(device, wgpu.BufferUsage.STORAGE)
    with pytest.raises((MapError, wgpu.GPUValidationError)):
        BufferMap(device, storage, READ).read(4)


def test_reads_from_several_threads(counted):
    exe = vyre_xdsl.compile(STEP, backend="wgpu")
    errors = []

    def worker(seed):
        x = np.random.default_rng(seed).integers(0, 1000, N).astype(np.uint32)
        try:
            for _ in range(20):
                np.testing.assert_array_equal(
                    exe.run({"x": x})["out"], x * np.uint32(3) + np.uint32(1)
                )
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert counted["token"] == 0
