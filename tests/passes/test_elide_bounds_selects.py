"""vyre-elide-bounds-selects drops only the selects no in-bounds store can see.

A fused elementwise chain whose grid runs past its count (1000 elements on
256-wide workgroups) forwards each intermediate through `select(i < 1000, v, 0)`:
the pass removes every one of them, and the chain still matches numpy (computed
here, stage by stage) on the reference backend and on wgpu. Hand-built programs
vary the store's buffer count against the bound, the store's index and the way
the value travels; on each, the reference interpreter's outputs before and after
the pass must be equal, and where the pass may not act (the buffer is longer
than the bound, so element N is written with the unselected value) the select
stays and the outputs still agree.
"""

from __future__ import annotations

import numpy as np
import pytest

from vyre_xdsl import compile as vyre_compile
from vyre_xdsl import run
from vyre_xdsl.api import fuse_module
from vyre_xdsl.context import parse_module
from vyre_xdsl.dialects.vyre import SelectOp

from .test_passes_differential import apply, assert_same_behaviour, random_inputs

N = 1000
COEFFS = [(1.5, 0.25), (0.75, -1.0), (2.0, 0.5), (0.5, 3.0)]


def chain_text(n: int = N) -> str:
    """Four elementwise stages `t_{k+1}[i] = t_k[i] * c + d`, one program each."""
    names = ["x", "t1", "t2", "t3", "out"]
    programs = []
    for k, (c, d) in enumerate(COEFFS):
        programs.append(f"""
vyre.program @stage{k} workgroup_size [256, 1, 1] {{
  vyre.buffer @{names[k]} binding 0 read_only : f32[{n}]
  vyre.buffer @{names[k + 1]} binding 1 write_only : f32[{n}]
  %i = vyre.invocation_id x
  %c = vyre.const {c} : f32
  %d = vyre.const {d} : f32
  %v = vyre.load @{names[k]}[%i] : f32
  %m = vyre.mul %v, %c : f32
  %r = vyre.add %m, %d : f32
  vyre.store @{names[k + 1]}[%i] = %r : f32
}}""")
    return "\n".join(programs)


def chain_expected(x: np.ndarray) -> np.ndarray:
    value = x.astype(np.float32)
    for c, d in COEFFS:
        value = value * np.float32(c) + np.float32(d)
    return value


def selects(module) -> int:
    return sum(isinstance(op, SelectOp) for op in module.walk())


def test_fusion_leaves_bounds_selects_that_the_pass_removes():
    fused = fuse_module(parse_module(chain_text()))
    assert selects(fused) == len(COEFFS) - 1  # one per forwarded intermediate
    elided = apply("vyre-elide-bounds-selects", fused)
    assert selects(elided) == 0
    for seed in range(3):
        assert_same_behaviour(fused, elided, random_inputs(fused, seed))


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_fused_chain_matches_numpy(backend):
    x = np.random.default_rng(7).uniform(-10, 10, N).astype(np.float32)
    out = run(chain_text(), {"x": x}, backend=backend, fuse=True)["out"]
    np.testing.assert_allclose(out, chain_expected(x), rtol=1e-6)


def test_the_fused_kernel_has_no_select():
    kernels = vyre_compile(chain_text(), fuse=True).compiled.kernels
    assert len(kernels) == 1
    wgsl = kernels[0].wgsl
    # the load of @x keeps its own bounds select; the three stage selects are gone
    assert wgsl.count("select(") <= 1, wgsl


def program(store_count: int, store_index: str = "%i", through: str = "mul") -> str:
    """A select below N whose value is stored (after `through`) at `store_index`
    into a buffer of `store_count` elements, on a grid of 1280 invocations."""
    if through == "mul":
        use = "%y = vyre.mul %s, %s : f32"
    elif through == "select":
        use = "%y = vyre.select %inside, %zero, %s : f32"
    else:
        use = "%y = vyre.max %s, %zero : f32"
    return f"""
vyre.program @p workgroup_size [256, 1, 1] grid [5, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[1280]
  vyre.buffer @out binding 1 write_only : f32[{store_count}]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %v = vyre.load @x[%i] : f32
  %n = vyre.const {N} : ui32
  %inside = vyre.lt %i, %n : ui32
  %zero = vyre.const -7.0 : f32
  %s = vyre.select %inside, %v, %zero : f32
  {use}
  vyre.store @out[{store_index}] = %y : f32
}}"""


@pytest.mark.parametrize(
    ("store_count", "store_index", "through", "removed"),
    [
        (N, "%i", "mul", 1),
        (N - 24, "%i", "max", 1),
        (N, "%i", "select", 2),  # the second select is a bounds select as well
        (N + 1, "%i", "mul", 0),
        (1280, "%i", "max", 0),
        (N, "%j", "mul", 0),
    ],
)
def test_outputs_are_unchanged(store_count, store_index, through, removed):
    before = parse_module(program(store_count, store_index, through))
    after = apply("vyre-elide-bounds-selects", before)
    assert selects(before) - selects(after) == removed, str(after)
    for seed in range(4):
        assert_same_behaviour(before, after, random_inputs(before, seed))
