"""The WGSL printer unrolls loops with constant bounds and at most 16 iterations
(`printer.unrolled_trips`), and keeps every other loop a `for`.

Each program runs on the reference and on wgpu, and the expected values are
computed here with plain numpy; the printed text is checked for the form it
should have (no `for` left, or a `for` kept).
"""

from __future__ import annotations

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.backends.wgsl import compile_module
from vyre_xdsl.context import parse_module

N = 256


def wgsl_of(text: str) -> str:
    (kernel,) = compile_module(parse_module(text))
    return kernel.wgsl


def run_both(text: str, inputs: dict[str, np.ndarray], name: str) -> list[np.ndarray]:
    return [vyre_xdsl.run(text, inputs, backend=b)[name] for b in ("reference", "wgpu")]


def strided_sum(trips: int, bound: str = "") -> str:
    """`out[i]` = x[i] + x[i + 16] + ... over `trips` iterations; `bound` replaces
    the constant upper bound by a loaded one when given."""
    upper = f"%count = vyre.const {trips} : ui32" if not bound else bound
    return f"""vyre.program @strided workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_only : ui32[{N * 32}]
  vyre.buffer @n binding 1 read_only : ui32[1]
  vyre.buffer @out binding 2 write_only : ui32[{N}]
  %i = vyre.invocation_id x
  %zero = vyre.const 0 : ui32
  %stride = vyre.const {N} : ui32
  {upper}
  vyre.let @acc = %zero : ui32
  vyre.loop @k = %zero to %count {{
    %k = vyre.var @k : ui32
    %off = vyre.mul %k, %stride : ui32
    %j = vyre.add %i, %off : ui32
    %v = vyre.load @x[%j] : ui32
    %a = vyre.var @acc : ui32
    %s = vyre.add %a, %v : ui32
    vyre.assign @acc = %s : ui32
  }}
  %total = vyre.var @acc : ui32
  vyre.store @out[%i] = %total : ui32
}}
"""


def strided_inputs(trips: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    x = np.random.default_rng(trips).integers(0, 2**32, N * 32, dtype=np.uint64).astype(np.uint32)
    want = x.reshape(32, N)[:trips].astype(np.uint64).sum(axis=0) % (1 << 32)
    return {"x": x, "n": np.array([trips], np.uint32)}, want.astype(np.uint32)


@pytest.mark.parametrize("trips", [0, 1, 5, 16])
def test_a_constant_loop_of_at_most_16_iterations_is_unrolled(trips):
    text = strided_sum(trips)
    wgsl = wgsl_of(text)
    assert "for (" not in wgsl
    assert f"// for 0 to {trips}, unrolled" in wgsl
    assert wgsl.count("let v_off = (v_k * v_stride);") == trips
    inputs, want = strided_inputs(trips)
    for got in run_both(text, inputs, "out"):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "trips, bound",
    [
        (17, ""),  # one iteration too many
        (5, "%count = vyre.load @n[%zero] : ui32"),  # a bound known only when it runs
    ],
)
def test_a_longer_or_runtime_bounded_loop_stays_a_loop(trips, bound):
    text = strided_sum(trips, bound)
    wgsl = wgsl_of(text)
    assert "for (" in wgsl and "unrolled" not in wgsl
    inputs, want = strided_inputs(trips)
    for got in run_both(text, inputs, "out"):
        np.testing.assert_array_equal(got, want)


TREE = f"""vyre.program @tree workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{N}]
  vyre.buffer @out binding 1 write_only : f32[{N // 64}]
  vyre.buffer @tile workgroup : f32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : f32
  vyre.store @tile[%l] = %v : f32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @level = %zero to %levels {{
    %q = vyre.var @level : ui32
    %s = vyre.shr %half, %q : ui32
    %active = vyre.lt %l, %s : ui32
    vyre.if %active {{
      %j = vyre.add %l, %s : ui32
      %a = vyre.load @tile[%l] : f32
      %b = vyre.load @tile[%j] : f32
      %t = vyre.add %a, %b : f32
      vyre.store @tile[%l] = %t : f32
    }}
    vyre.barrier
  }}
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {{
    %total = vyre.load @tile[%zero] : f32
    vyre.store @out[%w] = %total : f32
  }}
}}
"""


def test_a_tree_with_a_barrier_in_each_iteration_is_unrolled_with_its_barriers():
    wgsl = wgsl_of(TREE)
    assert "for (" not in wgsl
    # the barrier after the first store and one per unrolled level
    assert wgsl.count("workgroupBarrier();") == 1 + 6
    x = np.arange(N, dtype=np.float32)  # integer sums: exact in any order
    want = x.reshape(-1, 64).astype(np.float64).sum(axis=1).astype(np.float32)
    for got in run_both(TREE, {"x": x}, "out"):
        np.testing.assert_array_equal(got, want)


NESTED = f"""vyre.program @nested workgroup_size [64, 1, 1] {{
  vyre.buffer @out binding 0 write_only : ui32[{N}]
  %i = vyre.invocation_id x
  %zero = vyre.const 0 : ui32
  %outer = vyre.const 4 : ui32
  %inner = vyre.const INNER : ui32
  vyre.let @acc = %i : ui32
  vyre.loop @a = %zero to %outer {{
    %a = vyre.var @a : ui32
    vyre.let @row = %zero : ui32
    vyre.loop @b = %zero to %inner {{
      %b = vyre.var @b : ui32
      %r = vyre.var @row : ui32
      %ab = vyre.mul %a, %b : ui32
      %r2 = vyre.add %r, %ab : ui32
      vyre.assign @row = %r2 : ui32
    }}
    %rv = vyre.var @row : ui32
    %c = vyre.var @acc : ui32
    %c2 = vyre.bit_xor %c, %rv : ui32
    %c3 = vyre.add %c2, %a : ui32
    vyre.assign @acc = %c3 : ui32
  }}
  %final = vyre.var @acc : ui32
  vyre.store @out[%i] = %final : ui32
}}
"""


def nested_expected(inner: int) -> np.ndarray:
    out = []
    for i in range(N):
        acc = i
        for a in range(4):
            row = sum(a * b for b in range(inner))
            acc = ((acc ^ row) + a) % (1 << 32)
        out.append(acc)
    return np.array(out, np.uint32)


@pytest.mark.parametrize("inner, loops_left", [(3, 0), (40, 2)])
def test_nested_loops_unroll_only_when_the_inner_one_does(inner, loops_left):
    """A named local declared in the outer body is declared again in each of its
    scopes; an inner loop that stays a loop keeps the outer one a loop too."""
    text = NESTED.replace("INNER", str(inner))
    (kernel,) = compile_module(parse_module(text))
    # an elementwise kernel runs its body once per element it handles
    assert kernel.wgsl.count("for (") == loops_left * kernel.elements_per_invocation
    for got in run_both(text, {}, "out"):
        np.testing.assert_array_equal(got, nested_expected(inner))
