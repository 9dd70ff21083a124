"""Deep and wide loop nests: which loops the WGSL printer unrolls is decided in
one pass (`analysis.loops.unrolled_sizes`), and the unroll budget
(`UNROLL_MAX_OPS`) multiplies through a nest, so the printed kernel stays small.

The expected values are computed here with numpy (each innermost iteration adds
one, so a nest of `depth` loops of `trips` iterations adds trips ** depth); the
reference interpreter and wgpu must both give them.
"""

from __future__ import annotations

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.analysis import loops
from vyre_xdsl.backends.wgsl import compile_module
from vyre_xdsl.context import parse_module
from vyre_xdsl.dialects.vyre import LoopOp

N = 64


def nest(depth: int, trips: int) -> str:
    """`out[i] = x[i] + trips ** depth`: `depth` nested loops of `trips`
    iterations around one increment."""
    lines = [
        "vyre.program @deep workgroup_size [64, 1, 1] {",
        f"  vyre.buffer @x binding 0 read_only : ui32[{N}]",
        f"  vyre.buffer @out binding 1 write_only : ui32[{N}]",
        "  %i = vyre.invocation_id x",
        "  %zero = vyre.const 0 : ui32",
        f"  %t = vyre.const {trips} : ui32",
        "  %one = vyre.const 1 : ui32",
        "  %v = vyre.load @x[%i] : ui32",
        "  vyre.let @acc = %v : ui32",
    ]
    for level in range(depth):
        lines.append("  " * (level + 1) + f"vyre.loop @k{level} = %zero to %t {{")
    pad = "  " * (depth + 1)
    lines += [
        pad + "%a = vyre.var @acc : ui32",
        pad + "%s = vyre.add %a, %one : ui32",
        pad + "vyre.assign @acc = %s : ui32",
    ]
    for level in reversed(range(depth)):
        lines.append("  " * (level + 1) + "}")
    lines += ["  %r = vyre.var @acc : ui32", "  vyre.store @out[%i] = %r : ui32", "}"]
    return "\n".join(lines) + "\n"


def nest_loops(text: str) -> list[LoopOp]:
    """The loops of the nest, outermost first."""
    return [op for op in parse_module(text).walk() if isinstance(op, LoopOp)]


class TripRangeCounter:
    """Counts `constant_trip_range` calls and stops the analysis past `limit`."""

    def __init__(self, limit: int):
        self.calls, self.limit = 0, limit
        self.original = loops.constant_trip_range

    def __call__(self, loop):
        self.calls += 1
        if self.calls > self.limit:
            raise AssertionError(f"more than {self.limit} loops looked at")
        return self.original(loop)


def test_deciding_a_64_deep_nest_looks_at_each_loop_once(monkeypatch):
    (outer, *_) = nest_loops(nest(64, 1))
    counter = TripRangeCounter(limit=64 + 1)
    monkeypatch.setattr(loops, "constant_trip_range", counter)
    assert loops.unrolled_trips(outer) == range(0, 1)
    assert counter.calls <= 65


def test_printing_a_64_deep_nest_looks_at_a_polynomial_number_of_loops(monkeypatch):
    counter = TripRangeCounter(limit=64 * 64 * 2)
    monkeypatch.setattr(loops, "constant_trip_range", counter)
    (kernel,) = compile_module(parse_module(nest(64, 1)))
    assert "for (" not in kernel.wgsl


@pytest.mark.parametrize("depth, trips", [(14, 2), (3, 16)])
def test_the_unroll_budget_multiplies_through_a_nest(depth, trips):
    """The unrolled loops of a nest are the innermost ones whose product of trip
    counts times the body still fits `UNROLL_MAX_OPS`; the rest stay loops."""
    found = nest_loops(nest(depth, trips))
    unrolled = [loop for loop in found if loops.unrolled_trips(loop) is not None]
    assert unrolled == found[len(found) - len(unrolled) :], "only innermost loops unroll"
    body_ops = 4  # var, add, assign and the body's terminator at least
    assert trips ** len(unrolled) * body_ops <= loops.UNROLL_MAX_OPS
    assert 0 < len(unrolled) < depth


def test_fourteen_nested_two_trip_loops_print_under_a_megabyte():
    (kernel,) = compile_module(parse_module(nest(14, 2)))
    assert len(kernel.wgsl.encode()) < 1_000_000


@pytest.mark.parametrize("depth, trips", [(64, 1), (14, 2), (3, 16), (2, 16)])
def test_deep_nests_compute_the_same_on_the_reference_and_wgpu(depth, trips):
    text = nest(depth, trips)
    x = np.random.default_rng(depth * 100 + trips).integers(0, 2**20, N, dtype=np.uint32)
    want = x + np.uint32(trips**depth)
    for backend in ("reference", "wgpu"):
        got = vyre_xdsl.run(text, {"x": x}, backend=backend)["out"]
        np.testing.assert_array_equal(got, want, err_msg=backend)
