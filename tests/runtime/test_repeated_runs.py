"""What a repeated run reuses, and when it must not: the request layout of a
sized plan (`execute._Layout`, reused while a caller passes the same outputs
and uploads), the bind groups cached per set of bound buffers, and the weak
reference that gives a collected output's buffer back to the pool
(`arrays._WATCHED`). Each test runs one executable back to back and changes
one thing between runs (sizes, the device array given, whether the last
output is alive, a trap, whether clears are elided); expected values come
from numpy."""

from __future__ import annotations

import gc
import importlib

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.interpreter import VyreTrap
from vyre_xdsl.runtime import arrays as arrays_module

execute = importlib.import_module("vyre_xdsl.runtime.execute")  # the module, not the function

N = 1024

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

# writes only the even elements of out: the odd ones must read 0 every run
EVEN = STEP.replace(
    "vyre.store @out[%i]",
    "%two = vyre.const 2 : ui32\n  %j = vyre.mul %i, %two : ui32\n  vyre.store @out[%j]",
).replace(
    f"vyre.buffer @x binding 0 read_only : ui32[{N}]",
    "vyre.buffer @x binding 0 read_only : ui32[512]",
)

# runtime-sized: the sizes may change from run to run
SIZED = """
vyre.program @sized workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[?]
  vyre.buffer @out binding 1 read_write : ui32[?]
  %i = vyre.invocation_id x
  %n = vyre.buf_len @x
  %in = vyre.lt %i, %n : ui32
  vyre.if %in {
    %x = vyre.load @x[%i] : ui32
    %three = vyre.const 3 : ui32
    %one = vyre.const 1 : ui32
    %m = vyre.mul %x, %three : ui32
    %r = vyre.add %m, %one : ui32
    vyre.store @out[%i] = %r : ui32
  }
}
"""

# traps where x holds 77; else out = x
TRAP = STEP.replace(
    "  %three = vyre.const 3 : ui32",
    '  %k = vyre.const 77 : ui32\n  %hit = vyre.eq %x, %k : ui32\n  vyre.if %hit {\n    vyre.trap %x "found"\n  }\n  %three = vyre.const 3 : ui32',
)


def step(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.uint64) * 3 + 1).astype(np.uint32)


def data(seed: int, n: int = N) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 1 << 20, n, dtype=np.uint32)


@pytest.fixture
def exe():
    vyre_xdsl.synchronize()
    return vyre_xdsl.compile(STEP, backend="wgpu")


def _sized_plan(exe):
    plan = execute._plan(exe.gpu, exe.compiled.kernels)
    return plan, plan.static_sized


def test_a_repeated_run_reuses_its_layout_and_computes_each_input(exe):
    xs = [data(seed) for seed in range(4)]
    given = [vyre_xdsl.to_device(x) for x in xs]
    outs = [exe.run({"x": d}, device=True)["out"] for d in given]
    _, sized = _sized_plan(exe)
    layout = sized.layout
    assert layout is not None
    # alternate the device arrays: the bind groups follow the bound buffers
    again = [exe.run({"x": d}, device=True)["out"] for d in reversed(given)]
    assert sized.layout is layout  # the same request: reused, not rebuilt
    for x, out, back in zip(xs, outs, reversed(again)):
        assert np.array_equal(out.numpy(), step(x))
        assert np.array_equal(back.numpy(), step(x))
    # host arrays in and out through the same executable: another layout, right values
    assert np.array_equal(exe.run({"x": xs[0]})["out"], step(xs[0]))
    assert sized.layout is not layout and not sized.layout.keep
    assert np.array_equal(exe.run({"x": given[1]}, device=True)["out"].numpy(), step(xs[1]))


def test_a_different_request_through_launch_gets_its_own_layout(exe):
    x = data(5)
    dx = vyre_xdsl.to_device(x)
    exe.run({"x": dx}, device=True)
    _, sized = _sized_plan(exe)
    kernels = exe.compiled.kernels
    bound = exe.compiled.bind({"x": dx})
    # no outputs asked: every bound buffer is read back, the input too
    every = execute.launch(kernels, bound, device=exe.gpu, static_sizes=True).buffers
    assert sized.layout.outputs is None and sized.layout.wanted == ["x", "out"]
    assert np.array_equal(every["x"], x) and np.array_equal(every["out"], step(x))
    only = execute.launch(kernels, bound, outputs=["out"], device=exe.gpu).buffers
    assert np.array_equal(only["out"], step(x)) and only["x"] is dx
    assert np.array_equal(exe.run({"x": dx}, device=True)["out"].numpy(), step(x))


def test_an_output_alive_is_never_written_by_the_next_runs(exe):
    first = data(6)
    kept = exe.run({"x": first}, device=True)["out"]
    buffer = kept.buffer()
    for seed in range(7, 12):  # the kept buffer is not the pool's: never reused
        out = exe.run({"x": data(seed)}, device=True)["out"]
        assert out.buffer() is not buffer
    assert np.array_equal(kept.numpy(), step(first))
    assert np.array_equal(out.numpy(), step(data(11)))


def test_a_freed_or_collected_output_goes_back_to_the_pool_once(exe):
    vyre_xdsl.synchronize()
    pool = exe.gpu.pool
    dx = vyre_xdsl.to_device(data(12))
    watched = len(arrays_module._WATCHED)
    out = exe.run({"x": dx}, device=True)["out"]
    assert len(arrays_module._WATCHED) == watched + 1
    buffer = out.buffer()
    out.free()
    out.free()  # idempotent: one release
    assert len(arrays_module._WATCHED) == watched
    assert sum(b is buffer for _, b in pool.returned.values()) == 1
    del out
    gc.collect()  # the freed array's collection releases nothing more
    assert sum(b is buffer for _, b in pool.returned.values()) == 1
    # the next run takes that buffer for its output
    again = exe.run({"x": dx}, device=True)["out"]
    assert again.buffer() is buffer
    assert sum(b is buffer for _, b in pool.returned.values()) == 0
    del again  # collected: back once
    assert len(arrays_module._WATCHED) == watched
    assert sum(b is buffer for _, b in pool.returned.values()) == 1
    vyre_xdsl.synchronize()
    assert pool.free_bytes == sum(b.size for _, b in pool.returned.values())
    assert sum(len(free) for free in pool.free.values()) == len(pool.returned)


def test_a_chain_that_drops_each_output_reuses_the_buffers_and_stays_right(exe):
    x = data(13)
    current = vyre_xdsl.to_device(x)
    expected = x
    for _ in range(20):  # each output is the next input, the one before it collected
        current = exe.run({"x": current}, device=True)["out"]
        expected = step(expected)
    assert np.array_equal(current.numpy(), expected)


def test_changing_sizes_between_runs():
    vyre_xdsl.synchronize()
    exe = vyre_xdsl.compile(SIZED, backend="wgpu")
    outs = []
    for n in (64, 1024, 64, 256, 1024):
        x = data(n, n)
        out = exe.run({"x": vyre_xdsl.to_device(x), "out": np.zeros(n, np.uint32)}, device=True)
        outs.append((x, out["out"]))
    for x, out in outs:
        assert out.size == x.size and np.array_equal(out.numpy(), step(x))


def test_a_trap_in_a_queue_of_repeated_runs_names_its_run():
    vyre_xdsl.synchronize()
    exe = vyre_xdsl.compile(TRAP, backend="wgpu")
    good = np.arange(1000, 1000 + N, dtype=np.uint32)
    bad = np.arange(N, dtype=np.uint32)  # invocation 77 traps
    dgood, dbad = vyre_xdsl.to_device(good), vyre_xdsl.to_device(bad)
    exe.run({"x": dgood}, device=True)
    number = exe.gpu.runs + 1
    exe.run({"x": dbad}, device=True)
    later = exe.run({"x": dgood}, device=True)["out"]
    with pytest.raises(VyreTrap, match=f"device run #{number} \\(@step\\)"):
        vyre_xdsl.synchronize()
    assert np.array_equal(later.numpy(), step(good))
    # the same runs again: the cached layout and bind groups, the trap again
    number = exe.gpu.runs + 1
    exe.run({"x": dbad}, device=True)
    with pytest.raises(VyreTrap, match=f"device run #{number} "):
        exe.run({"x": dgood}, device=True)["out"].numpy()
    assert np.array_equal(exe.run({"x": dgood}, device=True)["out"].numpy(), step(good))


@pytest.mark.parametrize("elide", [True, False])
def test_a_partial_writer_reads_zeros_where_it_does_not_write(monkeypatch, elide):
    vyre_xdsl.synchronize()
    exe = vyre_xdsl.compile(EVEN, backend="wgpu")
    x = data(14, 512)
    expected = np.zeros(N, np.uint32)
    expected[0::2] = step(x)
    # a run that leaves garbage in a pooled buffer of the same size first
    dirty = vyre_xdsl.compile(STEP, backend="wgpu")
    dirty.run({"x": vyre_xdsl.to_device(np.full(N, 7, np.uint32))}, device=True)["out"].free()
    first = exe.run({"x": x}, device=True)["out"]
    monkeypatch.setattr(execute, "ELIDE_CLEARS", elide)  # the cached layout must follow
    dirty.run({"x": vyre_xdsl.to_device(np.full(N, 9, np.uint32))}, device=True)["out"].free()
    second = exe.run({"x": vyre_xdsl.to_device(x)}, device=True)["out"]
    _, sized = _sized_plan(exe)
    assert sized.layout.elide is elide
    assert np.array_equal(first.numpy(), expected)
    assert np.array_equal(second.numpy(), expected)


def test_a_device_array_given_to_a_run_that_writes_it_is_unchanged():
    vyre_xdsl.synchronize()
    exe = vyre_xdsl.compile(SIZED, backend="wgpu")
    x = data(15)
    dx = vyre_xdsl.to_device(x)
    start = vyre_xdsl.to_device(np.full(N, 5, np.uint32))
    for _ in range(3):  # `out` is read_write: the run works on a copy of `start`
        out = exe.run({"x": dx, "out": start}, device=True)["out"]
        assert out.buffer() is not start.buffer()
    assert np.array_equal(out.numpy(), step(x))
    assert np.array_equal(start.numpy(), np.full(N, 5, np.uint32))


def _chain(stages: int) -> str:
    """x -> t1 -> ... -> out, each program `step`; the t's are intermediates."""
    programs = []
    for k in range(stages):
        src = "x" if k == 0 else f"t{k}"
        dst = "out" if k == stages - 1 else f"t{k + 1}"
        programs.append(
            STEP.replace("@step", f"@s{k}").replace("@x", f"@{src}").replace("@out", f"@{dst}")
        )
    return "\n".join(programs)


def test_the_intermediates_arena_layout_is_reused_and_follows_the_clears(monkeypatch):
    vyre_xdsl.synchronize()
    exe = vyre_xdsl.compile(_chain(4), backend="wgpu")
    xs = [data(seed) for seed in (20, 21)]
    given = [vyre_xdsl.to_device(x) for x in xs]

    def expected(x):
        for _ in range(4):
            x = step(x)
        return x

    outs = [exe.run({"x": d}, device=True)["out"] for d in given * 3]
    _, sized = _sized_plan(exe)
    assert len(sized.arenas) == 1  # the three intermediates: one layout, reused
    (layout,) = sized.arenas.values()
    for x, out in zip(xs * 3, outs):
        assert np.array_equal(out.numpy(), expected(x))
    monkeypatch.setattr(execute, "ELIDE_CLEARS", False)  # every intermediate cleared now
    out = exe.run({"x": given[0]}, device=True)["out"]
    assert len(sized.arenas) == 2 and layout in sized.arenas.values()
    assert np.array_equal(out.numpy(), expected(xs[0]))
    assert np.array_equal(exe.run({"x": xs[1]})["out"], expected(xs[1]))
