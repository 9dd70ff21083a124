"""Fusing a long module takes time linear in its programs: the dependences that
place barriers (`analysis.barrier_hazards`) are found per arm, not per pair of
arms, and place the same barriers as every dependence (`analysis.hazards`).
The fused long module computes what numpy computes."""

from __future__ import annotations

import numpy as np
import pytest

from vyre_xdsl import run
from vyre_xdsl.analysis import accesses, barrier_hazards, hazards
from vyre_xdsl.analysis import dependences as dependences_module
from vyre_xdsl.context import parse_module
from vyre_xdsl.dialects.vyre import programs
from vyre_xdsl.fusion import fuse_programs
from vyre_xdsl.fusion.barriers import place_barriers
from vyre_xdsl.testing.generators import random_module

N = 256


def stencil_steps(steps: int) -> str:
    """`steps` x (a[i] += b[i - 1] for i > 0; b[i] += a[i]): every program reads
    and writes buffers that all the others touch, one of them shifted."""
    out = []
    for t in range(steps):
        out.append(
            f"""vyre.program @a{t} workgroup_size [64, 1, 1] {{
  vyre.buffer @a binding 0 read_write : f32[{N}]
  vyre.buffer @b binding 1 read_only : f32[{N}]
  %i = vyre.invocation_id x
  %zero = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %inside = vyre.gt %i, %zero : ui32
  vyre.if %inside {{
    %left = vyre.sub %i, %one : ui32
    %x = vyre.load @a[%i] : f32
    %y = vyre.load @b[%left] : f32
    %s = vyre.add %x, %y : f32
    vyre.store @a[%i] = %s : f32
  }}
}}
vyre.program @b{t} workgroup_size [64, 1, 1] {{
  vyre.buffer @a binding 0 read_only : f32[{N}]
  vyre.buffer @b binding 1 read_write : f32[{N}]
  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : f32
  %y = vyre.load @b[%i] : f32
  %s = vyre.add %x, %y : f32
  vyre.store @b[%i] = %s : f32
}}"""
        )
    return "\n".join(out) + "\n"


def stencil_expected(steps: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = a.copy(), b.copy()
    for _ in range(steps):
        a[1:] = a[1:] + b[:-1]
        b = b + a
    return a, b


def arm_facts(progs):
    workgroup = tuple(max(p.workgroup[axis] for p in progs) for axis in range(3))
    per_arm = [accesses(p.statements()) for p in progs]
    host = {b.buffer_name for p in progs for b in p.buffers() if not b.is_workgroup}
    return [p.workgroup for p in progs], per_arm, workgroup, host


def test_the_dependences_of_a_long_module_are_found_per_arm(monkeypatch):
    """`in_workgroup_span` is asked once per access, not once per pair of arms."""
    progs = programs(parse_module(stencil_steps(40)))
    facts = arm_facts(progs)
    total_accesses = sum(len(found) for found in facts[1])
    calls = []
    original = dependences_module.in_workgroup_span
    monkeypatch.setattr(
        dependences_module,
        "in_workgroup_span",
        lambda value, workgroup: calls.append(1) or original(value, workgroup),
    )
    fuse_programs(progs)
    # two hazard searches per fusion, each looking at every access once
    assert len(calls) <= 2 * total_accesses


def test_the_few_dependences_place_the_same_barriers_on_a_long_module():
    progs = programs(parse_module(stencil_steps(40)))
    every, few = hazards(*arm_facts(progs)), barrier_hazards(*arm_facts(progs))
    assert set(few) <= set(every)
    assert len(few) <= 4 * len(progs) < len(every)
    assert place_barriers(few) == place_barriers(every)


#: generated modules of several programs (a module of one has no dependences)
SEEDS = [seed for seed in range(60) if len(programs(random_module(seed).module)) > 1]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_few_dependences_place_the_same_barriers_on_generated_modules(seed):
    progs = programs(random_module(seed).module)
    facts = arm_facts(progs)
    every, few = hazards(*facts), barrier_hazards(*facts)
    assert set(few) <= set(every)
    grid = {p for p, ordering in place_barriers(every).items() if ordering == "grid_sync"}
    for allowed in (None, grid):
        assert place_barriers(few, allowed) == place_barriers(every, allowed)


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_a_fused_long_stencil_computes_what_numpy_does(backend):
    steps = 30
    rng = np.random.default_rng(steps)
    a, b = (rng.integers(0, 4, N).astype(np.float32) for _ in range(2))
    want_a, want_b = stencil_expected(steps, a, b)
    got = run(stencil_steps(steps), {"a": a, "b": b}, backend=backend, fuse=True)
    np.testing.assert_array_equal(got["a"], want_a)
    np.testing.assert_array_equal(got["b"], want_b)
