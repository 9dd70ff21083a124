"""Device arrays: data that stays on the GPU between runs.

Round trips, runs with `device=True`, chaining outputs into later runs (of the
same and of another executable), ownership and aliasing (a run never changes an
array it was given), and the errors for freed arrays, arrays of another device
and arrays of the wrong dtype or size. Expected values come from numpy.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.abi import InputDtypeError, InputShapeError, UnexpectedInputError, UnknownBufferError
from vyre_xdsl.interpreter import VyreTrap
from vyre_xdsl.runtime import (
    DeviceArray,
    DeviceArrayError,
    DeviceDtypeError,
    FreedArrayError,
    WrongDeviceError,
    gpu_device,
)
from vyre_xdsl.runtime.device import GpuDevice

N = 1000

AXPY = f"""
vyre.program @axpy workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{N}]
  vyre.buffer @y binding 1 read_write : f32[{N}]
  %i = vyre.invocation_id x
  %a = vyre.const 2.0 : f32
  %xv = vyre.load @x[%i] : f32
  %yv = vyre.load @y[%i] : f32
  %p = vyre.mul %a, %xv : f32
  %s = vyre.add %p, %yv : f32
  vyre.store @y[%i] = %s : f32
}}
"""

# out = y * y - 1 (another executable, fed by axpy's output)
SQUARE = f"""
vyre.program @square workgroup_size [64, 1, 1] {{
  vyre.buffer @y binding 0 read_only : f32[{N}]
  vyre.buffer @out binding 1 write_only : f32[{N}]
  %i = vyre.invocation_id x
  %one = vyre.const 1.0 : f32
  %v = vyre.load @y[%i] : f32
  %q = vyre.mul %v, %v : f32
  %r = vyre.sub %q, %one : f32
  vyre.store @out[%i] = %r : f32
}}
"""


def _double_plus_one(name: str, src: str, dst: str) -> str:
    """dst[i] = src[i] * 2 + 1 over 256 f32."""
    return f"""
vyre.program @{name} workgroup_size [64, 1, 1] {{
  vyre.buffer @{src} binding 0 read_only : f32[256]
  vyre.buffer @{dst} binding 1 write_only : f32[256]
  %i = vyre.invocation_id x
  %two = vyre.const 2.0 : f32
  %one = vyre.const 1.0 : f32
  %v = vyre.load @{src}[%i] : f32
  %m = vyre.mul %v, %two : f32
  %r = vyre.add %m, %one : f32
  vyre.store @{dst}[%i] = %r : f32
}}"""


# out = ((x * 2 + 1) * 2 + 1) * 2 + 1, one program per stage
CHAIN3 = (
    _double_plus_one("stage0", "x", "t1")
    + _double_plus_one("stage1", "t1", "t2")
    + _double_plus_one("stage2", "t2", "out")
)

TRAP = """
vyre.program @t workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[128]
  vyre.buffer @o binding 1 write_only : ui32[128]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %k = vyre.const 77 : ui32
  %hit = vyre.eq %v, %k : ui32
  vyre.if %hit {
    vyre.trap %v "found"
  }
  vyre.store @o[%i] = %v : ui32
}
"""


def _data(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    # quarter-grid values: every sum and product below is exact in f32
    x = (rng.integers(-64, 64, N) / 4).astype(np.float32)
    y = (rng.integers(-64, 64, N) / 4).astype(np.float32)
    return x, y


@pytest.fixture(scope="module")
def axpy():
    return vyre_xdsl.compile(AXPY, backend="wgpu")


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
def test_round_trip_keeps_values_dtype_and_shape(dtype):
    host = (np.arange(24) * 7 - 50).astype(dtype).reshape(2, 3, 4)
    array = vyre_xdsl.to_device(host)
    assert isinstance(array, DeviceArray)
    assert (array.dtype, array.shape, array.size, array.nbytes, array.ndim) == (
        np.dtype(dtype),
        (2, 3, 4),
        24,
        96,
        3,
    )
    back = array.numpy()
    assert back.dtype == np.dtype(dtype) and back.shape == (2, 3, 4)
    assert back.tobytes() == host.tobytes()
    assert np.asarray(array).tobytes() == host.tobytes()
    host[0, 0, 0] = 99  # the device copy is independent of the host array
    assert array.numpy()[0, 0, 0] == (np.arange(24) * 7 - 50).astype(dtype)[0]


def test_an_empty_array_round_trips():
    array = vyre_xdsl.to_device(np.zeros(0, np.float32))
    assert array.shape == (0,) and array.nbytes == 0
    assert array.numpy().shape == (0,)


def test_unsupported_dtypes_are_refused_with_the_supported_ones_named():
    with pytest.raises(DeviceDtypeError, match="holds .*float32.* elements, not complex128"):
        vyre_xdsl.to_device(np.zeros(4, np.complex128))
    with pytest.raises(TypeError, match=r"uint32 words \(x.astype\(np.uint32\)\)"):
        vyre_xdsl.to_device(np.zeros(4, np.bool_))


def test_device_outputs_stay_on_the_gpu_and_hold_the_result(axpy):
    x, y = _data(1)
    out = axpy.run({"x": x, "y": y}, device=True)
    assert list(out) == ["y"]
    result = out["y"]
    assert isinstance(result, DeviceArray)
    assert (result.dtype, result.shape) == (np.dtype(np.float32), (N,))
    assert result.numpy().tolist() == (2 * x + y).tolist()


def test_device_inputs_and_numpy_outputs(axpy):
    x, y = _data(2)
    out = axpy.run({"x": vyre_xdsl.to_device(x), "y": vyre_xdsl.to_device(y)})
    assert isinstance(out["y"], np.ndarray)
    assert out["y"].tolist() == (2 * x + y).tolist()
    # mixed: one host array, one device array
    out = axpy.run({"x": x, "y": vyre_xdsl.to_device(y)})
    assert out["y"].tolist() == (2 * x + y).tolist()


def test_outputs_chain_into_the_same_and_another_executable(axpy):
    x, y = _data(3)
    square = vyre_xdsl.compile(SQUARE, backend="wgpu")
    dx = vyre_xdsl.to_device(x)
    current, expected = vyre_xdsl.to_device(y), y.copy()
    for _ in range(5):
        current = axpy.run({"x": dx, "y": current}, device=True)["y"]
        expected = 2 * x + expected
    assert current.numpy().tolist() == expected.tolist()
    out = square.run({"y": current}, device=True)["out"]
    assert out.numpy().tolist() == (expected * expected - 1).tolist()


def test_a_run_never_changes_a_device_array_it_was_given(axpy):
    """`y` is read_write: the run works on a GPU copy, so the input keeps its
    values and the output is a new array (not an alias)."""
    x, y = _data(4)
    dx, dy = vyre_xdsl.to_device(x), vyre_xdsl.to_device(y)
    out = axpy.run({"x": dx, "y": dy}, device=True)["y"]
    assert out is not dy and out.buffer() is not dy.buffer()
    assert dy.numpy().tolist() == y.tolist()
    assert dx.numpy().tolist() == x.tolist()
    # the same array as input twice in a row gives the same result twice
    again = axpy.run({"x": dx, "y": dy}, device=True)["y"]
    assert again.numpy().tolist() == out.numpy().tolist() == (2 * x + y).tolist()


class _Counting:
    """Counts uploads (queue.write_buffer) and GPU copies of a device's runs."""

    def __init__(self, gpu, monkeypatch):
        self.uploads = self.copies = 0
        real_encoder, queue = gpu.device.create_command_encoder, gpu.device.queue
        real_write = queue.write_buffer
        counter = self

        class Encoder:
            def __init__(self, real):
                self.real = real

            def copy_buffer_to_buffer(self, *args):
                counter.copies += 1
                return self.real.copy_buffer_to_buffer(*args)

            def __getattr__(self, name):
                return getattr(self.real, name)

        def write_buffer(*args, **kwargs):
            counter.uploads += 1
            return real_write(*args, **kwargs)

        monkeypatch.setattr(
            gpu.device, "create_command_encoder", lambda **kw: Encoder(real_encoder(**kw))
        )
        monkeypatch.setattr(queue, "write_buffer", write_buffer)


def test_read_only_device_inputs_are_neither_uploaded_nor_copied(axpy, monkeypatch):
    x, y = _data(5)
    dx, dy = vyre_xdsl.to_device(x), vyre_xdsl.to_device(y)
    counting = _Counting(axpy.gpu, monkeypatch)
    out = axpy.run({"x": dx, "y": dy}, device=True)["y"]
    assert counting.uploads == 0
    assert counting.copies == 1  # only y, which the kernel writes
    monkeypatch.undo()
    assert out.numpy().tolist() == (2 * x + y).tolist()


def test_a_collected_array_gives_its_buffer_back_to_the_pool():
    gpu = gpu_device()
    array = vyre_xdsl.to_device(np.ones(12345, np.float32))
    buffer, before = array.buffer(), gpu.pool.free_bytes
    del array
    gc.collect()
    assert gpu.pool.free_bytes == before + buffer.size
    assert any(buffer in free for free in gpu.pool.free.values())


def test_a_freed_array_is_a_clear_error(axpy):
    x, y = _data(6)
    dx = vyre_xdsl.to_device(x)
    dx.free()
    dx.free()  # idempotent
    assert dx.freed
    with pytest.raises(FreedArrayError, match=r"float32\[1000\] device array was freed"):
        dx.numpy()
    with pytest.raises(FreedArrayError):
        axpy.run({"x": dx, "y": y})


def test_an_array_of_another_device_is_a_clear_error(axpy):
    gpu = axpy.gpu
    other = GpuDevice(gpu.adapter, gpu.index)  # a second device on the same adapter
    x, y = _data(7)
    foreign = vyre_xdsl.runtime.to_device(x, device=other)
    assert foreign.numpy().tolist() == x.tolist()
    with pytest.raises(WrongDeviceError, match="lives on device"):
        axpy.run({"x": foreign, "y": y})


@pytest.mark.parametrize(
    ("inputs", "error", "message"),
    [
        (
            {"x": np.zeros(N, np.int32)},
            InputDtypeError,
            "buffer 'x' has dtype int32; expected 1000 float32",
        ),
        (
            {"x": np.zeros(N + 1, np.float32)},
            InputShapeError,
            "buffer 'x' has 1001 elements; expected 1000",
        ),
        ({"z": np.zeros(N, np.float32)}, UnknownBufferError, "unknown buffer 'z'"),
    ],
)
def test_wrong_dtype_size_or_name_is_a_clear_error(axpy, inputs, error, message):
    given = {"x": vyre_xdsl.to_device(np.zeros(N, np.float32)), "y": np.zeros(N, np.float32)}
    given.update({name: vyre_xdsl.to_device(a) for name, a in inputs.items()})
    with pytest.raises(error, match=message):
        axpy.run(given)


def test_a_device_array_for_a_buffer_that_takes_no_input_is_an_error():
    square = vyre_xdsl.compile(SQUARE, backend="wgpu")
    y = vyre_xdsl.to_device(np.zeros(N, np.float32))
    with pytest.raises(UnexpectedInputError, match="buffer 'out' takes no input"):
        square.run({"y": y, "out": vyre_xdsl.to_device(np.zeros(N, np.float32))})


def test_the_reference_backend_takes_device_arrays_but_returns_host_arrays():
    x, y = _data(8)
    reference = vyre_xdsl.compile(AXPY, backend="reference")
    out = reference.run({"x": vyre_xdsl.to_device(x), "y": y})
    assert out["y"].tolist() == (2 * x + y).tolist()
    with pytest.raises(DeviceArrayError, match="device=True needs the wgpu backend"):
        reference.run({"x": x, "y": y}, device=True)


def test_a_trap_in_a_device_run_raises_at_the_next_synchronize():
    """A device run is deferred: it returns its arrays at once, and its trap is
    raised by the next synchronize (or read), naming the run and the program."""
    exe = vyre_xdsl.compile(TRAP, backend="wgpu")
    x = np.arange(128, dtype=np.uint32)
    vyre_xdsl.synchronize()
    first = exe.gpu.runs + 1
    out = exe.run({"x": vyre_xdsl.to_device(x)}, device=True)
    assert isinstance(out["o"], DeviceArray)
    with pytest.raises(VyreTrap, match=f"device run #{first} \\(@") as raised:
        vyre_xdsl.synchronize()
    assert (raised.value.tag, raised.value.address, raised.value.invocation) == ("found", 77, 77)
    vyre_xdsl.synchronize()  # raised once
    clean = exe.run({"x": vyre_xdsl.to_device(x + 1000)}, device=True)["o"]
    assert clean.numpy().tolist() == (x + 1000).tolist()


def test_run_accepts_device_arrays_and_returns_them():
    x, y = _data(9)
    out = vyre_xdsl.run(
        AXPY,
        {"x": vyre_xdsl.to_device(x), "y": vyre_xdsl.to_device(y)},
        backend="wgpu",
        device=True,
    )
    assert isinstance(out["y"], DeviceArray)
    assert out["y"].numpy().tolist() == (2 * x + y).tolist()
    vyre_xdsl.synchronize()


def test_one_array_may_feed_a_read_only_and_a_written_input(axpy):
    """x (read-only) and y (read_write) get the same array: y's copy is written,
    x's binding is the original, so the result is 2d + d and d is unchanged."""
    d_host, _ = _data(10)
    d = vyre_xdsl.to_device(d_host)
    out = axpy.run({"x": d, "y": d}, device=True)["y"]
    assert out.numpy().tolist() == (2 * d_host + d_host).tolist()
    assert d.numpy().tolist() == d_host.tolist()


def test_device_outputs_follow_the_shape_rule(axpy):
    """An output whose buffer was given as an input has that input's shape (as
    host outputs do); other outputs are 1-D."""
    x, y = _data(11)
    out = axpy.run(
        {"x": vyre_xdsl.to_device(x), "y": vyre_xdsl.to_device(y.reshape(10, 100))}, device=True
    )["y"]
    assert out.shape == (10, 100)
    assert out.numpy().tolist() == (2 * x + y).reshape(10, 100).tolist()
    host_in = axpy.run({"x": x, "y": y.reshape(25, 40)}, device=True)["y"]
    assert host_in.shape == (25, 40)
    square = vyre_xdsl.compile(SQUARE, backend="wgpu")
    assert square.run({"y": vyre_xdsl.to_device(y.reshape(10, 100))}, device=True)["out"].shape == (
        N,
    )


class _FakeBuffer:
    def __init__(self, size: int):
        self.size, self.destroyed = size, False

    def destroy(self) -> None:
        self.destroyed = True


class _FakeDevice:
    def create_buffer(self, size: int, usage: int) -> _FakeBuffer:
        return _FakeBuffer(size)


def test_the_pool_destroys_the_oldest_free_buffers_first():
    from vyre_xdsl.runtime.device import STAGING_USAGE, BufferPool

    pool = BufferPool(_FakeDevice(), limit_bytes=0)  # keeps twice the peak: 2 x 264
    a = pool.acquire(256)
    pool.release(a)
    b = pool.acquire(260, STAGING_USAGE)
    pool.release(b, STAGING_USAGE)
    assert pool.free_bytes == 516 and not (a.destroyed or b.destroyed)
    c = pool.acquire(264)
    pool.release(c)  # 780 bytes free, never more than 264 live: a goes, the oldest
    assert (a.destroyed, b.destroyed, c.destroyed) == (True, False, False)
    assert pool.free_bytes == 524 and pool.kept_bytes() == 528
    assert pool.acquire(264) is c and pool.created == 3


def test_the_pool_keeps_every_buffer_of_a_working_set_larger_than_its_limit():
    from vyre_xdsl.runtime.device import BufferPool

    pool = BufferPool(_FakeDevice(), limit_bytes=1024)
    sizes = [1024, 512, 512, 256]
    first = [pool.acquire(size) for size in sizes]  # 2304 bytes live at once
    assert pool.peak_bytes == 2304
    for buffer in reversed(first):
        pool.release(buffer)
    assert pool.free_bytes == 2304 and not any(buffer.destroyed for buffer in first)
    second = [pool.acquire(size) for size in sizes]
    assert pool.created == 4 and sorted(map(id, second)) == sorted(map(id, first))
    for buffer in second:
        pool.release(buffer)
    pool.clear()  # gives the buffers back and forgets the peak
    assert all(buffer.destroyed for buffer in first) and pool.free_bytes == 0
    assert pool.peak_bytes == 0 and pool.kept_bytes() == 1024


def test_the_pool_keeps_a_run_and_the_readback_of_its_output():
    """Run, read the output back through a staging buffer, free it; twice, for
    two modules. The staging buffers and both modules' small timestamp
    readbacks are never live with the run's buffers, so the free buffers
    outgrow the peak of live bytes; none may be destroyed and made again."""
    from vyre_xdsl.runtime.device import STAGING_USAGE, BufferPool

    pool = BufferPool(_FakeDevice(), limit_bytes=0)
    x = pool.acquire(1024)  # the caller's input, live throughout

    def run(temporaries: list[int], timestamps: int) -> None:
        held = [pool.acquire(size) for size in temporaries]
        out = pool.acquire(1024)
        readback = pool.acquire(timestamps, STAGING_USAGE)
        pool.release(readback, STAGING_USAGE)
        for buffer in reversed(held):
            pool.release(buffer)
        staging = pool.acquire(1024, STAGING_USAGE)
        pool.release(staging, STAGING_USAGE)
        pool.release(out)

    for _ in range(2):
        run([1024], 64)  # unfused: an intermediate
        run([], 16)  # fused
    created = pool.created
    for _ in range(3):
        run([1024], 64)
        run([], 16)
    assert pool.created == created == 6
    pool.release(x)


def test_a_repeated_run_gets_back_an_output_buffer_as_large_as_the_pool_limit(monkeypatch):
    """A profiled run's timestamp readback buffer goes back to the pool before
    the caller frees the output: with an output of exactly the pool's limit (a
    benchmark at 1 GiB per buffer), the output used to be destroyed and made
    again on every run."""
    gpu = gpu_device()
    gpu.pool.clear()
    exe = vyre_xdsl.compile(AXPY, backend="wgpu")
    x, y = _data(7)
    dx = vyre_xdsl.to_device(x)
    first = exe.run({"x": dx, "y": y}, device=True, profile=True)["y"]
    monkeypatch.setattr(gpu.pool, "limit_bytes", first.buffer().size)
    buffer = first.buffer()
    first.free()
    created = gpu.pool.created
    second = exe.run({"x": dx, "y": y + 1}, device=True, profile=True)["y"]
    assert second.buffer() is buffer
    assert second.numpy().tolist() == (2 * x + y + 1).tolist()
    second.free()
    dx.free()
    assert gpu.pool.created == created  # the readback buffer came back too


def test_a_repeated_unfused_chain_allocates_nothing_with_a_working_set_over_the_limit(
    monkeypatch,
):
    """Four buffers live at once in each run of a three-program chain: with the
    pool's floor below one buffer, the second run still makes no buffer."""
    gpu = gpu_device()
    gpu.pool.clear()
    monkeypatch.setattr(gpu.pool, "limit_bytes", 0)
    exe = vyre_xdsl.compile(CHAIN3, backend="wgpu", fuse=False)
    x = np.arange(256, dtype=np.float32)
    expected = ((x * 2 + 1) * 2 + 1) * 2 + 1
    assert exe.run({"x": x})["out"].tolist() == expected.tolist()
    created = gpu.pool.created
    assert exe.run({"x": x + 0})["out"].tolist() == expected.tolist()
    assert gpu.pool.created == created
