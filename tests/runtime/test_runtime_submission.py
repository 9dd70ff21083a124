"""The runtime's submission, threading and memory model (docs/runtime.md).

Deferred submission: a run with `device=True` records into the device's
pending batch and returns at once; reads, `synchronize()` and the batch bounds
submit it; traps are raised at the next read or synchronize, naming the run.
The buffer pool never hands a buffer that pending commands use to a host
write (which would run before them). The pool's books hold under threads, and
threads may share an `Executable`. Pipelines are an LRU, and `clear_cache()`
frees them. Expected values come from numpy.
"""

from __future__ import annotations

import importlib
import threading

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.interpreter import VyreTrap
from vyre_xdsl.runtime import device as device_module
from vyre_xdsl.runtime.device import BufferPool

N = 1024

# out = x * 3 + 0.5
SCALE = f"""
vyre.program @scale workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{N}]
  vyre.buffer @out binding 1 write_only : f32[{N}]
  %i = vyre.invocation_id x
  %c = vyre.const 3.0 : f32
  %d = vyre.const 0.5 : f32
  %v = vyre.load @x[%i] : f32
  %m = vyre.mul %v, %c : f32
  %r = vyre.add %m, %d : f32
  vyre.store @out[%i] = %r : f32
}}
"""

# traps where x holds 77; else o = x
TRAP = """
vyre.program @finder workgroup_size [64, 1, 1] {
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


def scaled(x: np.ndarray) -> np.ndarray:
    return x * np.float32(3.0) + np.float32(0.5)


@pytest.fixture
def scale():
    vyre_xdsl.synchronize()
    return vyre_xdsl.compile(SCALE, backend="wgpu")


def _data(seed: int) -> np.ndarray:
    return _exact(np.random.default_rng(seed))


def _exact(rng: np.random.Generator) -> np.ndarray:
    """Multiples of 1/8 below 2^10: x * 3 + 0.5 (twice) is exact in f32, so a
    GPU that contracts it into an fma gives numpy's value bit for bit."""
    return (rng.integers(-8192, 8192, N) / 8).astype(np.float32)


# ============================================================================ deferred


def test_a_device_run_records_without_submitting_until_a_read(scale):
    gpu = scale.gpu
    x = _data(1)
    out = scale.run({"x": vyre_xdsl.to_device(x)}, device=True)["out"]
    assert gpu.pending is not None and gpu.pending.dispatches == 1
    assert out.numpy().tolist() == scaled(x).tolist()
    assert gpu.pending is None and gpu.in_flight == []


def test_queued_runs_chain_through_one_batch(scale):
    """Ten runs, each fed the last one's output, all recorded before one read
    (halves below 16: ten times x * 3 + 0.5 stays below 2^21 halves, exact in f32)."""
    gpu = scale.gpu
    x = (np.random.default_rng(2).integers(-32, 32, N) / 2).astype(np.float32)
    y = vyre_xdsl.to_device(x)
    expected = x
    for _ in range(10):
        y = scale.run({"x": y}, device=True)["out"]
        expected = scaled(expected)
    assert gpu.pending.dispatches == 10
    assert np.array_equal(y.numpy(), expected)


def test_the_batch_is_submitted_at_its_dispatch_bound(scale, monkeypatch):
    monkeypatch.setattr(device_module, "MAX_PENDING_DISPATCHES", 4)
    gpu = scale.gpu
    x = vyre_xdsl.to_device(_data(3))
    outs = [scale.run({"x": x}, device=True)["out"] for _ in range(3)]
    assert gpu.pending.dispatches == 3
    outs.append(scale.run({"x": x}, device=True)["out"])
    assert gpu.pending is None and len(gpu.in_flight) == 1
    outs.append(scale.run({"x": x}, device=True)["out"])
    assert gpu.pending.dispatches == 1
    for out in outs:
        assert np.array_equal(out.numpy(), scaled(x.numpy()))


def test_the_batch_is_submitted_at_its_byte_bound(scale, monkeypatch):
    """Uploads count: with a bound of two inputs' bytes, the second upload submits."""
    monkeypatch.setattr(device_module, "MAX_PENDING_BYTES", 2 * 4 * N)
    gpu = scale.gpu
    first, second = _data(12), _data(13)
    a = scale.run({"x": first}, device=True)["out"]
    assert gpu.pending.nbytes == 4 * N
    b = scale.run({"x": second}, device=True)["out"]
    assert gpu.pending is None
    assert np.array_equal(a.numpy(), scaled(first))
    assert np.array_equal(b.numpy(), scaled(second))


def test_the_batch_is_submitted_at_its_work_bound(scale, monkeypatch):
    """The bytes a run's dispatches bind count: a run of `out = x * 3 + 0.5`
    binds its input and its output (4 N bytes each), so with a bound of two
    runs' bytes the second run submits the batch, and the GPU starts on it
    while the host goes on."""
    monkeypatch.setattr(device_module, "MAX_PENDING_WORK_BYTES", 2 * 2 * 4 * N)
    gpu = scale.gpu
    x = vyre_xdsl.to_device(_data(14))
    a = scale.run({"x": x}, device=True)["out"]
    assert gpu.pending.work == 2 * 4 * N
    b = scale.run({"x": x}, device=True)["out"]
    assert gpu.pending is None and len(gpu.in_flight) == 1
    c = scale.run({"x": a}, device=True)["out"]
    assert gpu.pending.work == 2 * 4 * N
    assert np.array_equal(a.numpy(), scaled(x.numpy()))
    assert np.array_equal(b.numpy(), scaled(x.numpy()))
    assert np.array_equal(c.numpy(), scaled(scaled(x.numpy())))


def test_a_batch_past_its_work_bound_is_held_while_the_gpu_has_work_queued(scale, monkeypatch):
    """Every run passes the work bound, but while two batches submitted for
    their work are unfinished the runs are held in one batch (one pass, one
    submission); once fewer are queued, the next run submits them all."""
    monkeypatch.setattr(device_module, "MAX_PENDING_WORK_BYTES", 2 * 4 * N)
    monkeypatch.setattr(device_module, "MAX_QUEUED_BATCHES", 2)
    gpu = scale.gpu
    queued = [2]
    monkeypatch.setattr(gpu, "unfinished_batches", lambda: queued[0])
    x = vyre_xdsl.to_device(_data(15))
    in_flight = len(gpu.in_flight)
    a = scale.run({"x": x}, device=True)["out"]
    b = scale.run({"x": a}, device=True)["out"]
    c = scale.run({"x": b}, device=True)["out"]
    assert gpu.pending.dispatches == 3 and len(gpu.in_flight) == in_flight
    queued[0] = 1
    d = scale.run({"x": c}, device=True)["out"]
    assert gpu.pending is None
    expected = x.numpy()
    for out in (a, b, c, d):
        expected = scaled(expected)
        assert np.array_equal(out.numpy(), expected)


def test_a_held_batch_is_submitted_at_its_hold_bound(scale, monkeypatch):
    monkeypatch.setattr(device_module, "MAX_PENDING_WORK_BYTES", 2 * 4 * N)
    monkeypatch.setattr(device_module, "MAX_HELD_WORK_BYTES", 3 * 2 * 4 * N)
    monkeypatch.setattr(scale.gpu, "unfinished_batches", lambda: 5)
    x = vyre_xdsl.to_device(_data(16))
    outs = [scale.run({"x": x}, device=True)["out"] for _ in range(2)]
    assert scale.gpu.pending.dispatches == 2
    outs.append(scale.run({"x": x}, device=True)["out"])
    assert scale.gpu.pending is None
    for out in outs:
        assert np.array_equal(out.numpy(), scaled(x.numpy()))


def test_no_batch_is_held_when_queued_batches_is_zero(scale, monkeypatch):
    monkeypatch.setattr(device_module, "MAX_PENDING_WORK_BYTES", 2 * 4 * N)
    monkeypatch.setattr(device_module, "MAX_QUEUED_BATCHES", 0)
    monkeypatch.setattr(scale.gpu, "unfinished_batches", lambda: 5)
    x = vyre_xdsl.to_device(_data(17))
    out = scale.run({"x": x}, device=True)["out"]
    assert scale.gpu.pending is None
    assert np.array_equal(out.numpy(), scaled(x.numpy()))


def test_a_batch_submitted_for_its_work_is_seen_finished_after_a_synchronize(scale, monkeypatch):
    """The device counts the batches it submitted for their work bound until
    wgpu reports them done: one after the submit, none once synchronized."""
    monkeypatch.setattr(device_module, "MAX_PENDING_WORK_BYTES", 2 * 4 * N)
    gpu = scale.gpu
    vyre_xdsl.synchronize()
    assert gpu.unfinished_batches() == 0
    x = vyre_xdsl.to_device(_data(18))
    out = scale.run({"x": x}, device=True)["out"]
    assert gpu.pending is None and len(gpu.finishing) == 1
    vyre_xdsl.synchronize()
    assert gpu.unfinished_batches() == 0
    assert np.array_equal(out.numpy(), scaled(x.numpy()))


def test_a_host_output_run_submits_and_waits(scale):
    x = _data(4)
    assert np.array_equal(scale.run({"x": x})["out"], scaled(x))
    assert scale.gpu.pending is None and scale.gpu.in_flight == []


def test_a_host_input_is_never_written_into_a_buffer_of_pending_work(scale):
    """The second run's upload (`queue.write_buffer`, which runs before every
    command not yet submitted) must not land in the buffer that the first,
    still unsubmitted run reads: the first result stays the first input's."""
    first, second = _data(5), _data(6)
    a = scale.run({"x": first}, device=True)["out"]
    b = scale.run({"x": second}, device=True)["out"]
    c = scale.run({"x": first + 1}, device=True)["out"]
    assert np.array_equal(a.numpy(), scaled(first))
    assert np.array_equal(b.numpy(), scaled(second))
    assert np.array_equal(c.numpy(), scaled(first + 1))


def test_to_device_never_reuses_a_freed_array_that_pending_work_reads(scale):
    first = _data(7)
    x = vyre_xdsl.to_device(first)
    buffer = x.buffer()
    out = scale.run({"x": x}, device=True)["out"]
    x.free()  # back to the pool while the run that reads it is pending
    y = vyre_xdsl.to_device(_data(8))
    assert y.buffer() is not buffer
    assert np.array_equal(out.numpy(), scaled(first))
    z = vyre_xdsl.to_device(_data(9))  # after the submit the buffer is reused
    assert z.buffer() is buffer


def test_a_buffer_of_pending_work_is_reused_by_later_recorded_commands(scale):
    """Reuse in recording order is safe: an output freed while pending becomes
    the next run's output (same buffer, same bind groups), and both results hold."""
    x = vyre_xdsl.to_device(_data(10))
    first = scale.run({"x": x}, device=True)["out"]
    kept = first.numpy()
    buffer = first.buffer()
    second = scale.run({"x": first}, device=True)["out"]
    first.free()
    third = scale.run({"x": second}, device=True)["out"]
    assert third.buffer() is buffer
    assert np.array_equal(third.numpy(), scaled(scaled(kept)))


def test_a_deferred_trap_is_raised_by_the_next_read_naming_the_run():
    vyre_xdsl.synchronize()
    exe = vyre_xdsl.compile(TRAP, backend="wgpu")
    x = np.arange(128, dtype=np.uint32)
    clean = exe.run({"x": vyre_xdsl.to_device(x + 1000)}, device=True)["o"]
    number = exe.gpu.runs + 1
    exe.run({"x": vyre_xdsl.to_device(x)}, device=True)  # invocation 77 traps
    later = exe.run({"x": vyre_xdsl.to_device(x + 2000)}, device=True)["o"]
    with pytest.raises(VyreTrap, match=f"device run #{number} \\(@finder\\)") as raised:
        clean.numpy()
    assert (raised.value.tag, raised.value.address, raised.value.invocation) == ("found", 77, 77)
    assert later.numpy().tolist() == (x + 2000).tolist()  # raised once, later runs still ran


@pytest.fixture
def submitting_traps(monkeypatch):
    """The trap program, every run submitted at its dispatch bound, and the
    device's waits counted: for one submission, and for everything."""
    vyre_xdsl.synchronize()
    monkeypatch.setattr(device_module, "MAX_PENDING_DISPATCHES", 1)
    monkeypatch.setattr(device_module, "MAX_UNCHECKED_BATCHES", 2)
    exe = vyre_xdsl.compile(TRAP, backend="wgpu")
    waits = {"one": 0, "all": 0}
    wait_for_submission, poll_wait = device_module.wait_for_submission, exe.gpu.device._poll_wait

    def counting_wait_for_submission(device, index):
        waits["one"] += 1
        return wait_for_submission(device, index)

    def counting_poll_wait():
        waits["all"] += 1
        return poll_wait()

    monkeypatch.setattr(device_module, "wait_for_submission", counting_wait_for_submission)
    monkeypatch.setattr(exe.gpu.device, "_poll_wait", counting_poll_wait)
    return exe, waits


def test_batches_with_trap_records_run_unchecked_up_to_the_bound(submitting_traps):
    """Two batches submitted for their bounds stay unchecked (nothing waits);
    the third submit waits for the oldest submission alone, never for all."""
    exe, waits = submitting_traps
    x = np.arange(128, dtype=np.uint32)
    outs = [exe.run({"x": vyre_xdsl.to_device(x + 1000 * k)}, device=True)["o"] for k in (1, 2)]
    assert len(exe.gpu.in_flight) == 2 and waits == {"one": 0, "all": 0}
    outs.append(exe.run({"x": vyre_xdsl.to_device(x + 3000)}, device=True)["o"])
    assert len(exe.gpu.in_flight) == 2 and waits == {"one": 1, "all": 0}
    for k, out in enumerate(outs, start=1):
        assert out.numpy().tolist() == (x + 1000 * k).tolist()


def test_the_trap_of_a_batch_past_the_unchecked_bound_is_raised_by_the_run_that_checks_it(
    submitting_traps,
):
    exe, _ = submitting_traps
    x = np.arange(128, dtype=np.uint32)
    number = exe.gpu.runs + 1
    exe.run({"x": vyre_xdsl.to_device(x)}, device=True)  # invocation 77 traps
    exe.run({"x": vyre_xdsl.to_device(x + 1000)}, device=True)
    with pytest.raises(VyreTrap, match=f"device run #{number} \\(@finder\\)"):
        exe.run({"x": vyre_xdsl.to_device(x + 2000)}, device=True)
    vyre_xdsl.synchronize()  # raised once: the later batches check clean


def test_a_host_run_raises_the_trap_of_an_earlier_deferred_run():
    vyre_xdsl.synchronize()
    exe = vyre_xdsl.compile(TRAP, backend="wgpu")
    x = np.arange(128, dtype=np.uint32)
    exe.run({"x": x}, device=True)
    with pytest.raises(VyreTrap, match="device run #"):
        exe.run({"x": x + 1000})
    assert exe.run({"x": x + 1000})["o"].tolist() == (x + 1000).tolist()


# ============================================================================ threads


class _FakeBuffer:
    def __init__(self, size: int):
        self.size, self.destroyed = size, False

    def destroy(self) -> None:
        self.destroyed = True


class _FakeDevice:
    def create_buffer(self, size: int, usage: int) -> _FakeBuffer:
        return _FakeBuffer(size)


class _SwitchingList(list):
    """A free list whose append hands control to another thread (and waits,
    at most `patience` seconds, until that thread is done)."""

    def __init__(self, arrived: threading.Event, done: threading.Event, patience: float):
        super().__init__()
        self.arrived, self.done, self.patience = arrived, done, patience

    def append(self, item) -> None:
        super().append(item)
        self.arrived.set()
        self.done.wait(self.patience)


def test_an_acquire_during_a_release_keeps_the_books():
    """A thread switch inside `release`, right after the buffer is on the free
    list: an `acquire` from another thread then must not fail (it raised a raw
    KeyError when the free list was filled before the books), and the books
    add up afterwards."""
    pool = BufferPool(_FakeDevice())
    buffer = pool.acquire(256)
    arrived, done = threading.Event(), threading.Event()
    pool.free[(256, "storage")] = _SwitchingList(arrived, done, patience=0.5)
    errors: list[BaseException] = []
    got: list = []

    def other():
        arrived.wait(5)
        try:
            got.append(pool.acquire(256))
        except BaseException as error:
            errors.append(error)
        finally:
            done.set()

    thread = threading.Thread(target=other)
    thread.start()
    pool.release(buffer)
    thread.join(10)
    assert errors == []
    assert got == [buffer]
    assert pool.returned == {} and pool.free_bytes == 0 and pool.in_use_bytes == 256
    pool.release(got[0])
    assert pool.free_bytes == 256 and pool.in_use_bytes == 0
    assert list(pool.returned) == [id(buffer)]


def test_threads_sharing_one_executable_get_numpys_results(scale):
    """Four threads, each running the same Executable with its own data: host
    in and out, device in and out, and chains read with numpy()."""
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            rng = np.random.default_rng(seed)
            for _ in range(12):
                x = _exact(rng)
                assert np.array_equal(scale.run({"x": x})["out"], scaled(x))
                y = scale.run({"x": vyre_xdsl.to_device(x)}, device=True)["out"]
                y = vyre_xdsl.run(SCALE, {"x": y}, backend="wgpu", device=True)["out"]
                assert np.array_equal(np.asarray(y), scaled(scaled(x)))
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    vyre_xdsl.synchronize()
    pool = scale.gpu.pool  # the threads are done: the books are still
    assert pool.free_bytes == sum(b.size for _, b in pool.returned.values())
    assert sum(len(free) for free in pool.free.values()) == len(pool.returned)


def test_an_array_collected_in_a_cycle_gives_the_pool_a_live_buffer():
    """A device array that dies in a reference cycle (a traceback, a list that
    holds itself) is collected together with whatever only the cycle reaches.
    Its buffer must come back to the pool still usable: before, the buffer's
    own finalizer could release its native handle first, and the pool then
    handed that buffer to the next run (a TypeError from wgpu, on the H200 in
    the thread test and on lavapipe after it)."""
    import gc

    vyre_xdsl.synchronize()
    gpu = device_module.gpu_device()
    gc.collect()
    gc.disable()
    try:
        for _ in range(8):
            array = vyre_xdsl.to_device(np.arange(N, dtype=np.float32))
            cycle = [array]
            cycle.append(cycle)
            del array, cycle
        gc.collect()
    finally:
        gc.enable()
    free = [buffer for _, buffer in gpu.pool.returned.values()]
    assert free and all(buffer._internal is not None for buffer in free)
    # and the next run, which takes them, computes numpy's values
    x = _data(9)
    assert np.array_equal(vyre_xdsl.run(SCALE, {"x": vyre_xdsl.to_device(x)})["out"], scaled(x))


# ============================================================================ memory


def _program(k: int) -> str:
    return SCALE.replace("%c = vyre.const 3.0", f"%c = vyre.const {k + 10}.0")


def test_pipelines_are_a_bounded_lru_and_clear_cache_frees_them(monkeypatch):
    monkeypatch.setattr(device_module, "PIPELINE_CACHE_SIZE", 3)
    gpu = device_module.gpu_device()
    x = _data(11)
    for k in range(6):
        out = vyre_xdsl.run(_program(k), {"x": x}, backend="wgpu")["out"]
        assert np.array_equal(out, x * np.float32(k + 10) + np.float32(0.5))
        assert len(gpu.pipelines) <= 3
    assert len(gpu.pipelines) == 3
    vyre_xdsl.clear_cache()
    assert len(gpu.pipelines) == 0 and len(gpu.run_plans) == 0
    assert vyre_xdsl.cache_info().size == 0


def test_a_buffer_returned_while_the_books_are_held_is_taken_in_later():
    """The garbage collector may free a device array while its own thread holds
    the pool's lock: `release_later` must not wait for that lock (it would
    deadlock), and the next `acquire` takes the buffer in."""
    pool = BufferPool(_FakeDevice())
    buffer = pool.acquire(256)
    with pool.lock:
        pool.release_later(buffer)  # returns at once
        assert pool.free_bytes == 0 and len(pool.later) == 1
    assert pool.acquire(256) is buffer and pool.created == 1
    assert pool.later == type(pool.later)() and pool.in_use_bytes == 256


def _doubling_chain(stages: int, n: int) -> str:
    """x -> t1 -> ... -> out, each program doubling its input."""
    names = ["x"] + [f"t{k}" for k in range(1, stages)] + ["out"]
    return "".join(
        f"""vyre.program @p{k} workgroup_size [64, 1, 1] {{
  vyre.buffer @{src} binding 0 read_only : f32[{n}]
  vyre.buffer @{dst} binding 1 write_only : f32[{n}]
  %i = vyre.invocation_id x
  %v = vyre.load @{src}[%i] : f32
  %r = vyre.add %v, %v : f32
  vyre.store @{dst}[%i] = %r : f32
}}
"""
        for k, (src, dst) in enumerate(zip(names, names[1:]))
    )


def test_intermediates_past_the_max_buffer_size_go_on_in_another_arena_buffer(monkeypatch):
    """An unfused 5-program chain keeps its four 4 KiB intermediates in arenas
    (t1 with t3, t2 with t4: no dispatch binds one arena read-only and
    writable); with a device that allows buffers of 6 KiB at most, each arena
    takes two buffers (one of 8 KiB would be refused by wgpu), and the chain
    still gives numpy's values. Before, an arena was one buffer whatever its
    size (a 4 GiB arena on the H200, whose limit is just below 4 GiB)."""
    execute = importlib.import_module("vyre_xdsl.runtime.execute")
    gpu = device_module.gpu_device()
    vyre_xdsl.synchronize()
    monkeypatch.setitem(gpu.limits, "max-buffer-size", 6 * 1024)
    sizes: list[int] = []
    storage = execute._Run.storage

    def recorded(run, nbytes, kept=False, clean=False):
        sizes.append(nbytes)
        return storage(run, nbytes, kept, clean)

    monkeypatch.setattr(execute._Run, "storage", recorded)
    x = _data(11)
    out = vyre_xdsl.run(_doubling_chain(5, N), {"x": x}, backend="wgpu", fuse=False)["out"]
    assert np.array_equal(out, x * np.float32(32))
    assert max(sizes) <= 6 * 1024 and sizes.count(N * 4) >= 4
