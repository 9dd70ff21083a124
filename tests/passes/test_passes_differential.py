"""vyre-licm, vyre-unroll and vyre-strength-reduce keep every module's results.

Each pass runs on hand-written modules (each built so the pass must act) and on
random modules from `vyre_xdsl.testing.generators`; the reference interpreter
runs the module before and after on the same random inputs, and the outputs
(or the trap: tag, address, invocation) and the run interface must be equal.
The strength reducer is also checked against numpy on every power of two.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from xdsl.passes import PassPipeline

from vyre_xdsl.abi import signature
from vyre_xdsl.context import parse_module, vyre_context
from vyre_xdsl.diagnostics import verify_module
from vyre_xdsl.dialects.vyre import LoopOp, programs
from vyre_xdsl.passes import get_all_passes
from vyre_xdsl.semantics import HOST_DTYPES
from vyre_xdsl.testing.compare import differences, outcome
from vyre_xdsl.testing.generators import random_module

PASSES = ["vyre-licm", "vyre-unroll", "vyre-unroll{max-trip-count=3}", "vyre-strength-reduce"]
SEEDS = range(40)


def apply(spec: str, source):
    """A copy of `source` (text or module) after the pass pipeline `spec`, verified."""
    module = parse_module(source) if isinstance(source, str) else source.clone()
    verify_module(module)
    PassPipeline.parse_spec(get_all_passes(), spec).apply(vyre_context(), module)
    verify_module(module)
    return module


def random_inputs(module, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    sig = signature(module)
    inputs = {}
    for name in sig.inputs:
        buffer = sig[name]
        count = buffer.count if buffer.count is not None else max(buffer.min_count, 64)
        if buffer.element == "f32":
            inputs[name] = rng.uniform(-100, 100, count).astype(np.float32)
        elif buffer.element == "i1":
            inputs[name] = rng.integers(0, 2, count).astype(np.uint32)
        else:
            info = np.iinfo(HOST_DTYPES[buffer.element])
            edges = np.array([info.min, info.max, 0, 1], dtype=np.int64)
            values = np.concatenate([edges, rng.integers(info.min, info.max, count, endpoint=True)])
            inputs[name] = values[:count].astype(HOST_DTYPES[buffer.element])
    return inputs


def assert_same_behaviour(before, after, inputs, tolerances=None) -> None:
    assert signature(after) == signature(before)
    expected = outcome(before, inputs, "reference")
    actual = outcome(after, inputs, "reference")
    assert not differences(expected, actual, tolerances or {}), str(after)


# ---------------------------------------------------------------- hand-written modules

LOOPS = """
vyre.program @loops workgroup_size [32, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @f binding 1 read_only : f32[64]
  vyre.buffer @acc binding 2 read_write : ui32[64]
  vyre.buffer @count binding 3 read_write : ui32[4]
  vyre.buffer @out binding 4 write_only : f32[64]
  %i = vyre.invocation_id x
  %zero = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %four = vyre.const 4 : ui32
  %eight = vyre.const 8 : ui32
  %sixteen = vyre.const 16 : ui32
  %fz = vyre.const 0.5 : f32
  vyre.let @sum = %fz : f32
  vyre.let @scale = %eight : ui32
  vyre.loop @k = %zero to %four {
    %s = vyre.var @scale : ui32
    %j = vyre.mul %i, %s : ui32
    %jm = vyre.mod %j, %sixteen : ui32
    %xv = vyre.load @x[%jm] : ui32
    %fv = vyre.load @f[%i] : f32
    %k = vyre.var @k : ui32
    %a = vyre.load @acc[%i] : ui32
    %kk = vyre.mul %k, %eight : ui32
    %t = vyre.add %a, %xv : ui32
    %t2 = vyre.add %t, %kk : ui32
    vyre.store @acc[%i] = %t2 : ui32
    %old = vyre.atomic add @count[%k], %one : ui32
    %c = vyre.load @count[%k] : ui32
    %cf = vyre.cast %c : ui32 to f32
    %sum = vyre.var @sum : f32
    %p = vyre.mul %fv, %cf : f32
    %n = vyre.add %sum, %p : f32
    vyre.assign @sum = %n : f32
    vyre.loop @m = %k to %four {
      %m = vyre.var @m : ui32
      %q = vyre.div %xv, %four : ui32
      %r = vyre.add %q, %m : ui32
      vyre.let @local = %r : ui32
      %l = vyre.var @local : ui32
      %acc2 = vyre.load @acc[%i] : ui32
      %w = vyre.bit_xor %acc2, %l : ui32
      vyre.store @acc[%i] = %w : ui32
    }
  }
  %final = vyre.var @sum : f32
  vyre.store @out[%i] = %final : f32
}
"""

# a trap inside a loop that never runs must stay unreached; one that runs must
# still fire at the same invocation
TRAPS = """
vyre.program @traps workgroup_size [32, 1, 1] {
  vyre.buffer @y binding 0 read_only : si32[64]
  vyre.buffer @out binding 1 write_only : si32[64]
  %i = vyre.invocation_id x
  %zero = vyre.const 0 : ui32
  %two = vyre.const 2 : ui32
  %szero = vyre.const 0 : si32
  %yv = vyre.load @y[%i] : si32
  vyre.loop @never = %two to %zero {
    %bad = vyre.div %yv, %szero : si32
    vyre.store @out[%i] = %bad : si32
  }
  %lim = vyre.cast %yv : si32 to ui32
  %small = vyre.const 3 : ui32
  %hi = vyre.min %lim, %small : ui32
  vyre.loop @k = %zero to %hi {
    %q = vyre.div %yv, %yv : si32
    vyre.store @out[%i] = %q : si32
  }
}
"""

STRENGTH = """
vyre.program @strength workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %x = vyre.load @x[%i] : ui32
  %c1 = vyre.const 1 : ui32
  %c2 = vyre.const 2 : ui32
  %c3 = vyre.const 3 : ui32
  %c64 = vyre.const 64 : ui32
  %c128 = vyre.const 128 : ui32
  %c192 = vyre.const 192 : ui32
  %k = vyre.const CONST : ui32
  %m = vyre.mul %k, %x : ui32
  %d = vyre.div %x, %k : ui32
  %r = vyre.mod %x, %k : ui32
  %j1 = vyre.add %i, %c64 : ui32
  %j2 = vyre.add %i, %c128 : ui32
  %j3 = vyre.add %i, %c192 : ui32
  vyre.store @out[%i] = %x : ui32
  vyre.store @out[%j1] = %m : ui32
  vyre.store @out[%j2] = %d : ui32
  vyre.store @out[%j3] = %r : ui32
}
"""


def test_licm_hoists_and_keeps_the_results():
    module = apply("vyre-licm", LOOPS)
    outer = next(op for op in programs(module)[0].walk() if isinstance(op, LoopOp))
    before_loop = [op.name for op in programs(module)[0].statements()]
    assert before_loop.index("vyre.load") < before_loop.index("vyre.loop")  # @x and @f loads moved
    assert "vyre.div" not in [op.name for op in outer.body.block.ops]  # from the inner loop out
    for seed in range(5):
        inputs = random_inputs(parse_module(LOOPS), seed)
        assert_same_behaviour(parse_module(LOOPS), module, inputs)


@pytest.mark.parametrize("spec", ["vyre-licm", "vyre-unroll", "vyre-strength-reduce"])
def test_traps_are_neither_added_nor_dropped(spec):
    module = apply(spec, TRAPS)
    for seed in range(4):
        inputs = random_inputs(parse_module(TRAPS), seed)
        inputs["y"][5] = 0  # invocation 5 divides 0 by 0 in @k's body, when it runs
        assert_same_behaviour(parse_module(TRAPS), module, inputs)
    inputs["y"][:] = 0  # every loop bound is 0: nothing may trap
    assert outcome(module, inputs, "reference").trap is None


def test_unroll_removes_constant_loops_and_keeps_the_results():
    module = apply("vyre-unroll", LOOPS)
    loops = [op for op in programs(module)[0].walk() if isinstance(op, LoopOp)]
    # the outer loop first; then each copy's inner loop, whose lower bound became a constant
    assert loops == []
    for seed in range(5):
        inputs = random_inputs(parse_module(LOOPS), seed)
        assert_same_behaviour(parse_module(LOOPS), module, inputs)


@pytest.mark.parametrize("k", range(32))
def test_strength_reduce_matches_numpy_on_every_power_of_two(k):
    text = STRENGTH.replace("CONST", str(1 << k))
    module = apply("vyre-strength-reduce", text)
    names = {op.name for op in programs(module)[0].walk()}
    assert not names & {"vyre.mul", "vyre.div", "vyre.mod"}, names
    inputs = random_inputs(parse_module(text), k)
    x = inputs["x"].astype(np.uint64)
    expected = np.zeros(256, dtype=np.uint64)
    expected[0:64] = x
    expected[64:128] = (x * (1 << k)) % 2**32
    expected[128:192] = x // (1 << k)
    expected[192:256] = x % (1 << k)
    out = outcome(module, inputs, "reference").outputs["out"]
    np.testing.assert_array_equal(out, expected.astype(np.uint32))
    assert_same_behaviour(parse_module(text), module, inputs)


# ---------------------------------------------------------------- generated modules


@functools.cache
def generated(seed: int):
    return random_module(seed)


@functools.cache
def generated_outcome(seed: int):
    case = generated(seed)
    return outcome(case.module, case.inputs, "reference")


@pytest.mark.parametrize("spec", PASSES)
def test_generated_modules_keep_their_results(spec):
    changed = 0
    for seed in SEEDS:
        case = generated(seed)
        after = apply(spec, case.module)
        if str(after) == case.text:
            continue  # the same module: nothing to run
        changed += 1
        assert signature(after) == signature(case.module)
        actual = outcome(after, case.inputs, "reference")
        assert not differences(generated_outcome(seed), actual, case.tolerances), str(after)
    assert changed >= 3, f"{spec} changed only {changed} of {len(SEEDS)} modules"
