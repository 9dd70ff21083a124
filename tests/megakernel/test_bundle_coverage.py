"""Every module that `vyre_xdsl.run` accepts compiles to a megakernel bundle
and runs, on the reference interpreter and on wgpu (lavapipe), to the outputs
of running the module itself.

The corpus: generated modules with several programs (fused into groups by the
planner, some ending in a user `grid_sync`), and hand-written modules for what
the generator does not make: values spilled across a `grid_sync` in every
element type (i1, 8/16/64-bit integers, f16/bf16/f64, vectors), spills next to
fusable programs, several spilling programs, runtime-sized buffers, a trap after
the split, calls; indirect grids read from an input at a byte offset, from a
uniform buffer, of zero workgroups, with atomics. Expected values are the
reference interpreter's run of the source module (and numpy's for the spills).

What the WGSL target cannot express is refused with a stable code: an indirect
grid with values live across a `grid_sync` (`MKT001_INDIRECT_GRID_SCRATCH`).
"""

from __future__ import annotations

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.abi import signature
from vyre_xdsl.context import parse_module
from vyre_xdsl.interpreter import VyreTrap
from vyre_xdsl.megakernel.bundle import TargetModuleBundle
from vyre_xdsl.megakernel.compile import (
    MKT001_INDIRECT_GRID_SCRATCH,
    TargetUnsupportedError,
    compile_module,
)
from vyre_xdsl.megakernel.run import run_bundle
from vyre_xdsl.testing.compare import Outcome, generated_differences
from vyre_xdsl.testing.generators import GeneratorOptions, random_module
from vyre_xdsl.tools.vyre_run import random_inputs

BACKENDS = ("reference", "wgpu")


def _outcome(run) -> Outcome:
    try:
        outputs = run()
    except VyreTrap as trap:
        return Outcome(trap=(trap.tag, trap.address, trap.invocation))
    return Outcome(outputs={k: np.array(v, copy=True) for k, v in outputs.items()})


def _bundle(text: str) -> TargetModuleBundle:
    """Compile `text` and load the bytes back (every `from_bytes` check)."""
    return TargetModuleBundle.from_bytes(compile_module(parse_module(text)).bundle_bytes())


def _assert_equal(expected: Outcome, got: Outcome, where: str) -> None:
    assert (expected.trap is None) == (got.trap is None), (where, expected, got)
    if expected.trap is not None:
        assert expected.trap == got.trap, where
        return
    assert sorted(expected.outputs) == sorted(got.outputs), where
    for name, want in expected.outputs.items():
        have = got.outputs[name]
        assert have.dtype == want.dtype and have.shape == want.shape, (where, name)
        assert have.tobytes() == want.tobytes(), (where, name, want, have)


# ------------------------------------------------------------ generated modules

#: several programs per module, and more of them ending in a user grid_sync
SEVERAL = GeneratorOptions(max_programs=6, grid_sync=40)
SEEDS = range(8)


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_modules_compile_and_run_like_the_reference(seed):
    case = random_module(seed, SEVERAL)
    expected = _outcome(lambda: vyre_xdsl.run(case.module, case.inputs, backend="reference"))
    bundle = TargetModuleBundle.from_bytes(compile_module(case.module).bundle_bytes())
    for backend in BACKENDS:
        got = _outcome(lambda: run_bundle(bundle, case.inputs, backend=backend))
        problems = generated_differences(case, expected, got, gpu=backend == "wgpu")
        assert not problems, (seed, backend, problems)


# ------------------------------------------------------------ spills per element type

SPILL_TYPES = (
    "ui32",
    "si32",
    "f32",
    "ui8",
    "si8",
    "ui16",
    "si16",
    "ui64",
    "si64",
    "f16",
    "bf16",
    "f64",
    "vector<2xui32>",
    "vector<4xf32>",
)


def spill_module(element: str) -> str:
    """@s keeps x[i] across a grid_sync after overwriting x (so it cannot be
    reloaded: it spills to scratch), then stores it to @o; @t copies @o to
    @copy in a later stage."""
    return f"""
vyre.program @s workgroup_size [4, 1, 1] {{
  vyre.buffer @x binding 0 read_write : {element}[12]
  vyre.buffer @o binding 2 write_only output : {element}[12]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : {element}
  %z = vyre.const 0 : ui32
  %w = vyre.load @x[%z] : {element}
  vyre.store @x[%i] = %w : {element}
  vyre.barrier grid_sync
  vyre.store @o[%i] = %v : {element}
}}
vyre.program @t workgroup_size [4, 1, 1] {{
  vyre.buffer @o binding 2 read_only : {element}[12]
  vyre.buffer @copy binding 3 write_only output : {element}[12]
  %i = vyre.invocation_id x
  %v = vyre.load @o[%i] : {element}
  vyre.store @copy[%i] = %v : {element}
}}
"""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("element", SPILL_TYPES)
def test_a_value_of_every_element_type_spills_through_a_bundle(element, backend):
    text = spill_module(element)
    inputs = random_inputs(signature(parse_module(text)), 3, {})
    x = inputs["x"]
    bundle = _bundle(text)
    assert any(b.is_scratch for k in bundle.kernels() for b in k.bindings), (
        "the module no longer spills"
    )
    got = run_bundle(bundle, inputs, backend=backend)
    # numpy: @o and @copy are the original x; x holds x[0] everywhere (x[0]
    # itself is written by invocation 0 with the value it read)
    assert got["o"].tobytes() == x.tobytes()
    assert got["copy"].tobytes() == x.tobytes()
    assert got["x"].tobytes() == np.repeat(x[:1], 12, axis=0).tobytes()
    # and the module itself runs the same on that backend
    plain = vyre_xdsl.run(text, inputs, backend=backend)
    assert all(plain[name].tobytes() == got[name].tobytes() for name in ("o", "copy", "x"))


# ------------------------------------------------------------ hand-written modules

# an i1 (a comparison) and a named local live across the split
BOOL_AND_LOCAL = """
vyre.program @b workgroup_size [4, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[12]
  vyre.buffer @o binding 2 write_only output : ui32[12]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %limit = vyre.const 500 : ui32
  %c = vyre.lt %v, %limit : ui32
  vyre.let @keep = %v : ui32
  %z = vyre.const 0 : ui32
  vyre.store @x[%i] = %z : ui32
  vyre.barrier grid_sync
  %k = vyre.var @keep : ui32
  %r = vyre.select %c, %k, %z : ui32
  vyre.store @o[%i] = %r : ui32
}
"""

# runtime-sized buffers: the scratch is sized by the grid of the inputs' lengths
RUNTIME_SIZED = """
vyre.program @r workgroup_size [4, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[?]
  vyre.buffer @o binding 2 read_write : ui32[?]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %z = vyre.const 0 : ui32
  vyre.store @x[%i] = %z : ui32
  vyre.barrier grid_sync
  %one = vyre.const 1 : ui32
  %w = vyre.add %v, %one : ui32
  vyre.store @o[%i] = %w : ui32
}
"""


def _copy(name: str, src: str, dst: str) -> str:
    return f"""
vyre.program @{name} workgroup_size [8, 1, 1] {{
  vyre.buffer @{src} binding 0 read_only : ui32[64]
  vyre.buffer @{dst} binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %v = vyre.load @{src}[%i] : ui32
  %r = vyre.add %v, %one : ui32
  vyre.store @{dst}[%i] = %r : ui32
}}
"""


# fusable chains before and after a program that spills (the planner fuses
# @p1 with @p2 and @p4 with @p5, never with @sp)
CHAIN_AROUND_A_SPILL = (
    _copy("p1", "x", "a")
    + _copy("p2", "a", "b")
    + """
vyre.program @sp workgroup_size [8, 1, 1] {
  vyre.buffer @b binding 0 read_write : ui32[64]
  vyre.buffer @c binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @b[%i] : ui32
  vyre.store @b[%i] = %i : ui32
  vyre.barrier grid_sync
  %last = vyre.const 63 : ui32
  %j = vyre.sub %last, %i : ui32
  %w = vyre.load @b[%j] : ui32
  %s = vyre.add %v, %w : ui32
  vyre.store @c[%i] = %s : ui32
}
"""
    + _copy("p4", "c", "d")
    + _copy("p5", "d", "out")
)

# two programs spill (different workgroups, counts and element types)
TWO_SPILLERS = """
vyre.program @a workgroup_size [4, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[12]
  vyre.buffer @m binding 1 read_write : ui32[12]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %z = vyre.const 0 : ui32
  vyre.store @x[%i] = %z : ui32
  vyre.barrier grid_sync
  vyre.store @m[%i] = %v : ui32
}
vyre.program @b workgroup_size [8, 1, 1] {
  vyre.buffer @m binding 1 read_write : ui32[12]
  vyre.buffer @f binding 3 read_write : f32[40]
  vyre.buffer @o binding 2 write_only output : ui32[12]
  %i = vyre.invocation_id x
  %v = vyre.load @m[%i] : ui32
  %h = vyre.load @f[%i] : f32
  %z = vyre.const 0 : ui32
  vyre.store @m[%i] = %z : ui32
  %fz = vyre.const 0.0 : f32
  vyre.store @f[%i] = %fz : f32
  vyre.barrier grid_sync
  %one = vyre.const 1 : ui32
  %w = vyre.add %v, %one : ui32
  vyre.store @o[%i] = %w : ui32
  %hh = vyre.add %h, %h : f32
  vyre.store @f[%i] = %hh : f32
}
"""

TRAP_AFTER_SPLIT = """
vyre.program @t workgroup_size [4, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[12]
  vyre.buffer @o binding 2 write_only output : ui32[12]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %z = vyre.const 0 : ui32
  vyre.store @x[%i] = %z : ui32
  vyre.barrier grid_sync
  %seven = vyre.const 7 : ui32
  %hit = vyre.eq %i, %seven : ui32
  vyre.if %hit {
    vyre.trap %v "spill.trap"
  }
  vyre.store @o[%i] = %v : ui32
}
"""

CALLS_ACROSS_A_SPLIT = """
vyre.func @twice(%a: ui32) -> ui32 {
  %r = vyre.add %a, %a : ui32
  vyre.yield %r : ui32
}
vyre.program @c workgroup_size [4, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[12]
  vyre.buffer @o binding 2 write_only output : ui32[12]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %t = vyre.call @twice(%v) : ui32
  %z = vyre.const 0 : ui32
  vyre.store @x[%i] = %z : ui32
  vyre.barrier grid_sync
  %u = vyre.call @twice(%t) : ui32
  vyre.store @o[%i] = %u : ui32
}
"""


def _indirect(attrs: str, grid: str) -> str:
    return f"""
vyre.program @g {{{attrs}}} workgroup_size [4, 1, 1] {{
  vyre.buffer @grid binding 3 {grid}
  vyre.buffer @o binding 2 write_only output : ui32[64]
  %i = vyre.invocation_id x
  %w = vyre.workgroup_id y
  %hundred = vyre.const 100 : ui32
  %m = vyre.mul %w, %hundred : ui32
  %s = vyre.add %m, %i : ui32
  vyre.store @o[%i] = %s : ui32
}}
"""


# the grid, 2 x 3 x 1 at byte 8, comes from the caller
INDIRECT_INPUT_AT_OFFSET = _indirect("indirect = @grid, indirect_offset = 8", "read_only : ui32[5]")
# zero workgroups on y: nothing runs
INDIRECT_ZERO_GRID = _indirect("indirect = @grid, indirect_offset = 4", "read_only : ui32[4]")
INDIRECT_UNIFORM = _indirect("indirect = @grid", "uniform : ui32[4]")

# atomics and a large unrelated buffer: the grid is still the buffer's, not a count's
INDIRECT_ATOMICS = """
vyre.program @g {indirect = @grid} workgroup_size [4, 1, 1] {
  vyre.buffer @grid binding 3 read_only : ui32[3]
  vyre.buffer @cnt binding 2 read_write : ui32[1]
  vyre.buffer @big binding 4 read_only : ui32[1000]
  %z = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %old = vyre.atomic add @cnt[%z], %one : ui32
}
"""

HAND_WRITTEN = {
    "bool_and_local": (BOOL_AND_LOCAL, {}),
    "runtime_sized": (
        RUNTIME_SIZED,
        {"x": np.arange(10, dtype=np.uint32) * 3, "o": np.zeros(10, np.uint32)},
    ),
    "chain_around_a_spill": (CHAIN_AROUND_A_SPILL, {}),
    "two_spillers": (TWO_SPILLERS, {}),
    "trap_after_split": (TRAP_AFTER_SPLIT, {}),
    "calls_across_a_split": (CALLS_ACROSS_A_SPLIT, {}),
    "indirect_input_at_offset": (
        INDIRECT_INPUT_AT_OFFSET,
        {"grid": np.array([9, 9, 2, 3, 1], np.uint32)},
    ),
    "indirect_zero_grid": (INDIRECT_ZERO_GRID, {"grid": np.array([5, 2, 0, 1], np.uint32)}),
    "indirect_uniform": (INDIRECT_UNIFORM, {"grid": np.array([2, 2, 1, 7], np.uint32)}),
    "indirect_atomics": (
        INDIRECT_ATOMICS,
        {"grid": np.array([3, 2, 1], np.uint32), "cnt": np.zeros(1, np.uint32)},
    ),
}


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_hand_written_modules_compile_and_run_like_the_reference(name):
    text, given = HAND_WRITTEN[name]
    inputs = random_inputs(signature(parse_module(text)), 5, given)
    expected = _outcome(lambda: vyre_xdsl.run(text, inputs, backend="reference"))
    bundle = _bundle(text)
    for backend in BACKENDS:
        got = _outcome(lambda: run_bundle(bundle, inputs, backend=backend))
        _assert_equal(expected, got, f"{name} on {backend}")


# ------------------------------------------------------------ refused with a code

INDIRECT_WITH_SPILL = """
vyre.program @g {indirect = @grid, indirect_offset = 8} workgroup_size [4, 1, 1] {
  vyre.buffer @grid binding 3 read_only : ui32[5]
  vyre.buffer @x binding 0 read_write : ui32[64]
  vyre.buffer @o binding 2 write_only output : ui32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %z = vyre.const 0 : ui32
  vyre.store @x[%i] = %z : ui32
  vyre.barrier grid_sync
  vyre.store @o[%i] = %v : ui32
}
"""


def test_an_indirect_grid_with_spills_is_refused_with_its_code():
    with pytest.raises(TargetUnsupportedError) as refused:
        compile_module(parse_module(INDIRECT_WITH_SPILL))
    assert refused.value.code == MKT001_INDIRECT_GRID_SCRATCH
    message = str(refused.value)
    assert message.startswith(MKT001_INDIRECT_GRID_SCRATCH) and "@g" in message
    assert "__vyre_spill_ui32" in message


# ------------------------------------------------------------ dispatch geometry


def test_the_bundle_carries_each_dispatch_as_its_descriptor_has_it():
    from vyre_xdsl.megakernel.bundle import DispatchRecord

    from .test_megakernel_scratch_indirect import INDIRECT, SPILLS

    # @first of SPILLS: 12 elements in workgroups of 4, split in two dispatches
    spills = _bundle(SPILLS)
    first = next(m for m in spills.modules if m.nodes == (0,))
    assert {d.workgroup_size for d in first.dispatches} == {(4, 1, 1)}
    assert [d.grid for d in first.dispatches] == [(3, 1, 1), (3, 1, 1)]
    assert all(d.indirect is None and d.indirect_offset == 0 for d in first.dispatches)
    assert not any(d.explicit for d in first.dispatches)  # a derived grid
    # INDIRECT: @consume reads its grid from byte 12 of @grids, @tail from byte 0
    indirect = _bundle(INDIRECT)
    by_node = {m.nodes: m.dispatches for m in indirect.modules}
    consume, tail = by_node[(2,)], by_node[(3,)]
    assert [(d.grid, d.indirect, d.indirect_offset) for d in consume] == [(None, "grids", 12)]
    assert [(d.grid, d.indirect, d.indirect_offset) for d in tail] == [(None, "grids", 0)]
    assert consume[0].workgroup_size == (4, 1, 1) and tail[0].workgroup_size == (2, 1, 1)
    # records and kernels launch alike
    for module in spills.modules + indirect.modules:
        for record, kernel in zip(module.dispatches, module.kernels, strict=True):
            assert isinstance(record, DispatchRecord)
            assert (record.indirect, record.indirect_offset) == (
                kernel.indirect,
                kernel.indirect_offset,
            )
