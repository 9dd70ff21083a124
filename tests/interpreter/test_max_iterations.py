"""`max_iterations=`: a bound on the reference backend's work, counted as loop
iterations summed over the invocations that run them, passed down explicitly so
that it holds in any thread (unlike the per-context `iteration_limit`)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.api import MaxIterationsError, parse
from vyre_xdsl.diagnostics import VyreError
from vyre_xdsl.dialects.vyre import programs
from vyre_xdsl.interpreter import IterationLimitError, execute_programs, iteration_limit

#: 4096 invocations, each running a loop of 10 trips: 40960 iterations of work
TEN_TRIPS = """
vyre.program @ten workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[4096]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %ten = vyre.const 10 : ui32
  vyre.let @acc = %z : ui32
  vyre.loop @k = %z to %ten {
    %k = vyre.var @k : ui32
    %a = vyre.var @acc : ui32
    %s = vyre.add %a, %k : ui32
    vyre.assign @acc = %s : ui32
  }
  %r = vyre.var @acc : ui32
  vyre.store @out[%i] = %r : ui32
}
"""

#: one invocation whose inner loop would run 1852516352 times (bound from constants)
RUNAWAY = """
vyre.program @runaway workgroup_size [1, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[1]
  %z = vyre.const 0 : ui32
  %big = vyre.const 4000000000 : ui32
  %mask = vyre.const 0x7fffffff : ui32
  %n = vyre.bit_and %big, %mask : ui32
  vyre.let @acc = %z : ui32
  vyre.loop @j = %z to %n {
    %a = vyre.var @acc : ui32
    %one = vyre.const 1 : ui32
    %s = vyre.add %a, %one : ui32
    vyre.assign @acc = %s : ui32
  }
  %r = vyre.var @acc : ui32
  vyre.store @out[%z] = %r : ui32
}
"""

#: 64 invocations; lane i runs trip[i] iterations
PER_LANE = """
vyre.program @lanes workgroup_size [64, 1, 1] {
  vyre.buffer @trip binding 0 read_only : ui32[64]
  vyre.buffer @out binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %n = vyre.load @trip[%i] : ui32
  %z = vyre.const 0 : ui32
  vyre.let @acc = %z : ui32
  vyre.loop @k = %z to %n {
    %k = vyre.var @k : ui32
    %a = vyre.var @acc : ui32
    %s = vyre.add %a, %k : ui32
    vyre.assign @acc = %s : ui32
  }
  %r = vyre.var @acc : ui32
  vyre.store @out[%i] = %r : ui32
}
"""

#: 64 invocations, 4 outer trips, 3 inner trips per outer trip
NESTED = """
vyre.program @nested workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[64]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %four = vyre.const 4 : ui32
  %three = vyre.const 3 : ui32
  vyre.let @acc = %z : ui32
  vyre.loop @a = %z to %four {
    vyre.loop @b = %z to %three {
      %v = vyre.var @acc : ui32
      %one = vyre.const 1 : ui32
      %s = vyre.add %v, %one : ui32
      vyre.assign @acc = %s : ui32
    }
  }
  %r = vyre.var @acc : ui32
  vyre.store @out[%i] = %r : ui32
}
"""


def test_the_count_is_summed_over_the_invocations():
    """4096 invocations x 10 trips = 40960 iterations: 10,000 is not enough
    (`iteration_limit` would count 10), 40960 is."""
    with pytest.raises(
        IterationLimitError, match=r"@ten would run 40960 iterations with 10000 left"
    ):
        vyre_xdsl.run(TEN_TRIPS, backend="reference", max_iterations=10_000)
    with pytest.raises(IterationLimitError, match="40960 iterations with 40959 left"):
        vyre_xdsl.run(TEN_TRIPS, backend="reference", max_iterations=40_959)
    out = vyre_xdsl.run(TEN_TRIPS, backend="reference", max_iterations=40_960)["out"]
    np.testing.assert_array_equal(out, np.full(4096, sum(range(10)), np.uint32))


def test_divergent_trips_are_summed_lane_by_lane():
    trip = np.zeros(64, np.uint32)
    trip[[1, 2, 3]] = [3, 7, 5]  # 15 iterations in all
    exe = vyre_xdsl.compile(PER_LANE, backend="reference")
    out = exe.run({"trip": trip}, max_iterations=15)["out"]
    want = trip.astype(np.int64) * (trip.astype(np.int64) - 1) // 2
    np.testing.assert_array_equal(out, want.astype(np.uint32))
    with pytest.raises(IterationLimitError, match="15 iterations with 14 left"):
        exe.run({"trip": trip}, max_iterations=14)


def test_nested_loops_charge_the_inner_loop_on_every_outer_trip():
    """64 lanes x 4 outer trips + 64 lanes x 4 x 3 inner trips = 1024."""
    exe = vyre_xdsl.compile(NESTED, backend="reference")
    np.testing.assert_array_equal(exe.run(max_iterations=1024)["out"], np.full(64, 12, np.uint32))
    with pytest.raises(IterationLimitError, match="192 iterations with 191 left"):
        exe.run(max_iterations=1023)


def test_every_program_of_a_run_draws_on_one_count_and_each_run_has_its_own():
    progs = programs(parse(TEN_TRIPS)) * 2
    with pytest.raises(IterationLimitError, match="40960 iterations with 9040 left"):
        execute_programs(progs, {"out": np.zeros(4096, np.uint32)}, max_iterations=50_000)
    exe = vyre_xdsl.compile(TEN_TRIPS, backend="reference")
    for _ in range(3):  # a fresh count per run
        exe.run(max_iterations=40_960)


def test_a_run_in_a_thread_pool_worker_is_stopped():
    """A ContextVar is not inherited by a pool's workers; `max_iterations` is an argument."""
    exe = vyre_xdsl.compile(RUNAWAY, backend="reference")
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(exe.run, None, max_iterations=4096) for _ in range(2)]
        futures.append(
            pool.submit(vyre_xdsl.run, RUNAWAY, backend="reference", max_iterations=4096)
        )
        for future in futures:
            with pytest.raises(IterationLimitError, match="1852516352 iterations with 4096 left"):
                future.result(timeout=60)
    assert time.monotonic() - start < 30


def test_iteration_limit_is_per_context_and_not_inherited_by_a_new_thread():
    """What the docs say of `iteration_limit`: a worker thread runs without it."""
    exe = vyre_xdsl.compile(TEN_TRIPS, backend="reference")
    with iteration_limit(5):
        with pytest.raises(IterationLimitError):
            exe.run()
        with ThreadPoolExecutor(max_workers=1) as pool:
            out = pool.submit(exe.run).result(timeout=60)["out"]
    assert int(out[0]) == sum(range(10))


@pytest.mark.parametrize("bad", [-1, 1.5, True, "10"])
def test_a_bad_max_iterations_is_refused(bad):
    with pytest.raises(VyreError, match="max_iterations"):
        vyre_xdsl.run(TEN_TRIPS, backend="reference", max_iterations=bad)


def test_max_iterations_on_the_wgpu_backend_is_refused():
    from vyre_xdsl.runtime import adapter_available

    if not adapter_available():
        pytest.fail("no wgpu adapter: install mesa-vulkan-drivers (lavapipe)")
    exe = vyre_xdsl.compile(TEN_TRIPS, backend="wgpu")
    with pytest.raises(MaxIterationsError, match="applies to the reference backend"):
        exe.run(max_iterations=100)


def test_vyre_run_max_iterations_sums_over_invocations(tmp_path, capsys):
    from vyre_xdsl.tools import vyre_run

    source = tmp_path / "ten.mlir"
    source.write_text(TEN_TRIPS)
    args = [str(source), "--backend", "reference", "--output-dir", str(tmp_path / "out")]
    assert vyre_run.main(args + ["--max-iterations", "10000"]) == 1
    err = capsys.readouterr().err
    assert "vyre-run: error:" in err and "40960 iterations with 10000 left" in err, err
    assert not (tmp_path / "out").exists()
    assert vyre_run.main(args + ["--max-iterations", "40960"]) == 0
    np.testing.assert_array_equal(
        np.load(tmp_path / "out" / "out.npy"), np.full(4096, 45, np.uint32)
    )


def test_a_bundle_on_the_reference_backend_takes_max_iterations():
    from vyre_xdsl.megakernel.compile import compile_module
    from vyre_xdsl.megakernel.run import run_bundle

    bundle = compile_module(parse(TEN_TRIPS)).bundle_bytes()
    with pytest.raises(IterationLimitError, match="40960 iterations with 10000 left"):
        run_bundle(bundle, backend="reference", max_iterations=10_000)
    out = run_bundle(bundle, backend="reference", max_iterations=40_960)["out"]
    np.testing.assert_array_equal(out, np.full(4096, 45, np.uint32))
