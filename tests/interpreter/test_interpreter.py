"""Unit tests of the reference interpreter's parts: vectorized atomics against a
sequential loop, last-writer-wins stores, frames, the execute() entry points and
their errors. The semantic corpus is in tests/conformance/."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.irdl import IRDLOperation, irdl_op_definition

from vyre_xdsl.abi import signature
from vyre_xdsl.api import parse
from vyre_xdsl.dialects.vyre import programs
from vyre_xdsl.interpreter import (
    InterpreterError,
    IterationLimitError,
    VyreTrap,
    execute,
    execute_program,
    execute_programs,
    iteration_limit,
)
from vyre_xdsl.interpreter.atomics import atomic
from vyre_xdsl.interpreter.lanes import Frame, Launch
from vyre_xdsl.interpreter.memory import last_writer_wins

M = 2**32 - 1
KINDS = ("add", "or", "and", "xor", "min", "max", "exchange", "compare_exchange")


def sequential(kind, memory, addr, in_bounds, value, expected):
    memory = [int(v) for v in memory]
    old = []
    for k in range(len(addr)):
        if not in_bounds[k]:
            old.append(0)
            continue
        a, v = int(addr[k]), int(value[k])
        before = memory[a]
        old.append(before)
        memory[a] = {
            "add": (before + v) & M,
            "or": before | v,
            "and": before & v,
            "xor": before ^ v,
            "min": min(before, v),
            "max": max(before, v),
            "exchange": v,
            "compare_exchange": v if before == int(expected[k]) else before,
        }[kind]
    return np.array(old, np.uint32), np.array(memory, np.uint32)


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    slots=st.integers(1, 6),
    data=st.data(),
)
def test_vectorized_atomics_match_a_sequential_loop(kind, slots, data):
    n = data.draw(st.integers(0, 40))
    addr = np.array(
        data.draw(st.lists(st.integers(0, slots + 1), min_size=n, max_size=n)), np.int64
    )
    small = st.integers(0, 4) if kind in ("min", "max", "compare_exchange") else st.integers(0, M)
    value = np.array(data.draw(st.lists(small, min_size=n, max_size=n)), np.uint32)
    expected = np.array(data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), np.uint32)
    memory = np.array(data.draw(st.lists(small, min_size=slots, max_size=slots)), np.uint32)
    in_bounds = addr < slots
    want_old, want_memory = sequential(kind, memory, addr, in_bounds, value, expected)
    got_memory = memory.copy()
    got_old = atomic(
        kind, got_memory, addr, in_bounds, value, expected if kind == "compare_exchange" else None
    )
    np.testing.assert_array_equal(got_old, want_old)
    np.testing.assert_array_equal(got_memory, want_memory)


@pytest.mark.parametrize("kind", KINDS)
def test_atomics_at_scale_one_hot_address(kind):
    """Heavy contention (every lane on 3 addresses) with 20000 lanes."""
    rng = np.random.default_rng(3)
    n = 20000 if kind != "compare_exchange" else 2000
    addr = rng.integers(0, 3, n).astype(np.int64)
    value = rng.integers(0, 2**32 if kind in ("add", "xor", "exchange") else 16, n).astype(
        np.uint32
    )
    expected = rng.integers(0, 16, n).astype(np.uint32)
    memory = rng.integers(0, 16, 3).astype(np.uint32)
    in_bounds = np.ones(n, bool)
    want_old, want_memory = sequential(kind, memory, addr, in_bounds, value, expected)
    got_memory = memory.copy()
    got_old = atomic(kind, got_memory, addr, in_bounds, value, expected)
    np.testing.assert_array_equal(got_old, want_old)
    np.testing.assert_array_equal(got_memory, want_memory)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=30))
def test_last_writer_wins(addresses):
    addr = np.array(addresses, np.int64)
    value = np.arange(addr.size, dtype=np.uint32)
    want = {}
    for a, v in zip(addresses, value.tolist()):
        want[a] = v
    kept_addr, kept_value = last_writer_wins(addr, value)
    assert dict(zip(kept_addr.tolist(), kept_value.tolist())) == want
    assert len(set(kept_addr.tolist())) == kept_addr.size


def test_frames_gather_values_and_map_positions():
    root = Frame.root(10)
    x = object()
    root.values[x] = np.arange(100, 110)
    odd = root.subset(np.arange(10) % 2 == 1, 0)
    assert odd.lanes.tolist() == [1, 3, 5, 7, 9]
    inner = odd.subset(np.array([True, False, True, False, True]), 0)
    assert inner.lanes.tolist() == [1, 5, 9]
    assert inner.lookup(x).tolist() == [101, 105, 109]
    assert inner.positions_in(root).tolist() == [1, 5, 9]
    assert inner.positions_in(odd).tolist() == [0, 2, 4]
    same = inner.subset(np.array([True]), 0)  # a uniform true keeps every lane
    assert same.sel is None and same.lookup(x).tolist() == [101, 105, 109]


def test_launch_geometry():
    launch = Launch(100, (8, 2, 2))  # 32 threads: 4 workgroups
    assert (launch.workgroups, launch.lanes) == (4, 128)
    lx, ly, lz = launch.local_ids(np.array([0, 1, 8, 16, 31, 33]))
    assert (lx.tolist(), ly.tolist(), lz.tolist()) == (
        [0, 1, 0, 0, 7, 1],
        [0, 0, 1, 0, 1, 0],
        [0, 0, 0, 1, 1, 0],
    )
    folded = Launch(65537 * 2, (2, 1, 1))  # 65537 workgroups fold to 32769 x 2
    assert folded.grid == (32769, 2, 1) and folded.workgroups == 65538


SCALE = """
vyre.program @scale workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[?]
  vyre.buffer @tmp binding 1 write_only : f32[?]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  %two = vyre.const 2.0 : f32
  %d = vyre.mul %v, %two : f32
  vyre.store @tmp[%i] = %d : f32
}
vyre.program @shift workgroup_size [64, 1, 1] {
  vyre.buffer @tmp binding 0 read_only : f32[?]
  vyre.buffer @y binding 1 read_write : f32[?]
  %i = vyre.invocation_id x
  %v = vyre.load @tmp[%i] : f32
  %w = vyre.load @y[%i] : f32
  %s = vyre.add %v, %w : f32
  vyre.store @y[%i] = %s : f32
}
"""

SCALE_FUSED_BY_HAND = """
vyre.program @fused workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[?]
  vyre.buffer @tmp binding 1 write_only : f32[?]
  vyre.buffer @y binding 2 read_write : f32[?]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  %two = vyre.const 2.0 : f32
  %d = vyre.mul %v, %two : f32
  vyre.store @tmp[%i] = %d : f32
  %t = vyre.load @tmp[%i] : f32
  %w = vyre.load @y[%i] : f32
  %s = vyre.add %t, %w : f32
  vyre.store @y[%i] = %s : f32
}
"""


def test_execute_returns_every_host_buffer_and_leaves_inputs_alone():
    module = parse(SCALE)
    sig = signature(module)
    x = np.linspace(-1, 1, 300, dtype=np.float32)
    y = np.ones(300, np.float32)
    buffers = {"x": x.copy(), "y": y.copy(), "tmp": np.zeros(300, np.float32)}
    final = execute(module, buffers, sig)
    assert sorted(final) == ["tmp", "x", "y"]
    np.testing.assert_array_equal(final["tmp"], x * np.float32(2))
    np.testing.assert_array_equal(final["y"], x * np.float32(2) + y)
    np.testing.assert_array_equal(buffers["y"], y)  # copies, not the caller's arrays


def test_execute_runs_fused_and_unfused_modules_alike():
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    y = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    buffers = {"x": x, "y": y, "tmp": np.zeros(1000, np.float32)}
    unfused = execute(parse(SCALE), buffers)
    fused = execute(parse(SCALE_FUSED_BY_HAND), buffers)
    np.testing.assert_array_equal(unfused["y"], fused["y"])
    np.testing.assert_array_equal(unfused["y"], x * np.float32(2) + y)
    # and program by program
    host = {k: v.copy() for k, v in buffers.items()}
    for program in programs(parse(SCALE)):
        execute_program(program, host)
    np.testing.assert_array_equal(host["y"], unfused["y"])
    np.testing.assert_array_equal(
        execute_programs(programs(parse(SCALE)), buffers)["y"], unfused["y"]
    )


def test_missing_or_bad_host_arrays_name_the_buffer():
    module = parse(SCALE)
    with pytest.raises(InterpreterError, match="no host array for buffer 'tmp'"):
        execute(module, {"x": np.zeros(4, np.float32), "y": np.zeros(4, np.float32)})
    with pytest.raises(
        InterpreterError, match="buffer 'x' is int32.*expected a one-dimensional float32"
    ):
        execute(
            module,
            {
                "x": np.zeros(4, np.int32),
                "y": np.zeros(4, np.float32),
                "tmp": np.zeros(4, np.float32),
            },
        )
    axpy = parse("""
vyre.program @p workgroup_size [4, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[8]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
}""")
    with pytest.raises(InterpreterError, match="buffer 'x' has 4 elements; program @p declares 8"):
        execute(axpy, {"x": np.zeros(4, np.float32)})


@irdl_op_definition
class MysteryOp(IRDLOperation):
    name = "test.mystery"


def test_unsupported_op_is_a_clear_error():
    module = parse(
        "vyre.program @p workgroup_size [1, 1, 1] {\n  vyre.buffer @o binding 0 write_only : ui32[1]\n}"
    )
    program = programs(module)[0]
    program.body.block.add_op(MysteryOp())
    with pytest.raises(InterpreterError, match="does not support 'test.mystery'"):
        execute(module, {"o": np.zeros(1, np.uint32)})


def test_vyre_trap_carries_its_fields_and_pickles():
    trap = VyreTrap("bad", 7, 123, "prog")
    assert (trap.tag, trap.address, trap.invocation, trap.program) == ("bad", 7, 123, "prog")
    assert str(trap) == "trap 'bad' at address 7 in invocation 123 in program @prog"
    again = pickle.loads(pickle.dumps(trap))
    assert (again.tag, again.address, again.invocation, again.program) == ("bad", 7, 123, "prog")


LONG_LANE = """
vyre.program @p workgroup_size [256, 1, 1] {
  vyre.buffer @trip binding 0 read_only : ui32[65536]
  vyre.buffer @out binding 1 write_only : ui32[65536]
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


def test_divergent_loop_runs_only_the_lanes_still_iterating():
    """One lane of 65536 loops 5000 times: cheap, because later iterations run 1 lane."""
    trip = np.zeros(65536, np.uint32)
    trip[12345] = 5000
    trip[:100] = np.arange(100)
    module = parse(LONG_LANE)
    out = execute(module, {"trip": trip, "out": np.zeros(65536, np.uint32)})["out"]
    want = (trip.astype(np.int64) * (trip.astype(np.int64) - 1) // 2).astype(np.uint32)
    np.testing.assert_array_equal(out, want)


SMALL_LOOPS = LONG_LANE.replace("65536", "64")


def test_iteration_limit_counts_the_longest_lane_of_each_loop():
    """One iteration counts once however many lanes take it: the lanes' trips
    3, 7 and 5 cost 7 iterations, so a limit of 7 runs the module and 6 refuses it."""
    trip = np.zeros(64, np.uint32)
    trip[[1, 2, 3]] = [3, 7, 5]
    buffers = {"trip": trip, "out": np.zeros(64, np.uint32)}
    module = parse(SMALL_LOOPS)
    with iteration_limit(7):
        out = execute(module, buffers)["out"]
    want = (trip.astype(np.int64) * (trip.astype(np.int64) - 1) // 2).astype(np.uint32)
    np.testing.assert_array_equal(out, want)
    with pytest.raises(IterationLimitError, match=r"@p would run 7 iterations with 6 left"):
        with iteration_limit(6):
            execute(module, buffers)


def test_iteration_limit_covers_every_loop_of_every_program_in_the_block():
    trip = np.zeros(64, np.uint32)
    trip[0] = 4
    buffers = {"trip": trip, "out": np.zeros(64, np.uint32)}
    module = parse(SMALL_LOOPS)
    with pytest.raises(IterationLimitError, match="4 iterations with 1 left"):
        with iteration_limit(9):
            execute(module, buffers)  # 4 of 9
            execute(module, buffers)  # 4 of 5
            execute(module, buffers)  # 4 of 1: refused before the loop starts
    # outside the block there is no limit
    assert execute(module, buffers)["out"][0] == 6


NESTED_FROM_CONSTANTS = """
vyre.program @nest workgroup_size [1, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[1]
  %z = vyre.const 0 : ui32
  %big = vyre.const 4000000000 : ui32
  %mask = vyre.const 0x7fffffff : ui32
  %n = vyre.bit_and %big, %mask : ui32
  %ten = vyre.const 10 : ui32
  vyre.let @acc = %z : ui32
  vyre.loop @i = %z to %ten {
    vyre.loop @j = %z to %n {
      %a = vyre.var @acc : ui32
      %one = vyre.const 1 : ui32
      %s = vyre.add %a, %one : ui32
      vyre.assign @acc = %s : ui32
    }
  }
  %r = vyre.var @acc : ui32
  vyre.store @out[%z] = %r : ui32
}
"""


def test_iteration_limit_refuses_a_loop_bound_computed_from_constants_at_once():
    """The bound (4000000000 & 0x7fffffff = 1852516352) is only known by
    running; the inner loop is refused when it is entered, after 1 outer trip."""
    import time

    start = time.process_time()
    with pytest.raises(IterationLimitError, match="1852516352 iterations with 4086 left"):
        with iteration_limit(4096):
            execute(parse(NESTED_FROM_CONSTANTS), {"out": np.zeros(1, np.uint32)})
    assert time.process_time() - start < 2.0


def test_vyre_run_max_iterations_refuses_a_run_that_would_not_end(tmp_path, capsys):
    from vyre_xdsl.tools import vyre_run

    source = tmp_path / "nest.mlir"
    source.write_text(NESTED_FROM_CONSTANTS)
    out = tmp_path / "out"
    args = [str(source), "--backend", "reference", "--output-dir", str(out)]
    with_limit = args + ["--max-iterations", "4096"]
    assert vyre_run.main(with_limit) == 1
    err = capsys.readouterr().err
    assert "vyre-run: error:" in err and "1852516352 iterations with 4086 left" in err, err
    assert "Traceback" not in err and not out.exists()
    # a loop that ends within the limit runs: 10 x 3 trips of `acc += 1`
    source.write_text(NESTED_FROM_CONSTANTS.replace("4000000000", "3"))
    assert vyre_run.main(with_limit) == 0
    assert np.load(out / "out.npy").tolist() == [30]
    # other backends decide their own limits
    assert vyre_run.main([str(source), "--backend", "wgpu", "--max-iterations", "9"]) == 1
    assert "--max-iterations applies to the reference backend" in capsys.readouterr().err
