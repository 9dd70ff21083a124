"""`vyre-split-grid-sync` and `vyre-privatize-atomics` as steps of the named pipeline.

The split is checked against the program it splits: the reference interpreter
runs the parts (vyre programs, values passed through scratch) and the whole
program, the GPU runs the lowered parts, and all must give the numpy
expectation computed below. Lowering the parts gives exactly the descriptors
that `vyre-lower` gives for the whole program.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

from vyre_xdsl import run
from vyre_xdsl.abi import signature
from vyre_xdsl.context import parse_module
from vyre_xdsl.diagnostics import VyreDiagnostic, format_errors, verify_module
from vyre_xdsl.dialects import kernel as k
from vyre_xdsl.dialects.vyre import BarrierOp, programs
from vyre_xdsl.interpreter import execute
from vyre_xdsl.passes.pipeline import VyreToKernelPass, run_steps
from vyre_xdsl.passes.vyre_lower import VyreLowerPass
from vyre_xdsl.passes.vyre_privatize_atomics import VyrePrivatizeAtomicsPass
from vyre_xdsl.passes.vyre_split_grid_sync import VyreSplitGridSyncPass

# Three parts: @acc (a named local assigned under an if), %v (a load of a buffer
# the program then overwrites), %small (an i1) and %r (computed in a block cut
# by the barriers) live across a grid_sync; %n and %one are recomputed. Every
# invocation writes its right neighbour's element of @y before the first
# barrier and reads its left neighbour's element of @x after the second.
THREE_PARTS = """
vyre.program @g workgroup_size [8, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  vyre.buffer @y binding 1 read_write : ui32[64]
  vyre.buffer @out binding 2 write_only output : ui32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %ten = vyre.const 10 : ui32
  %small = vyre.lt %v, %ten : ui32
  vyre.let @acc = %v : ui32
  vyre.if %small {
    %three = vyre.const 3 : ui32
    %t = vyre.mul %v, %three : ui32
    vyre.assign @acc = %t : ui32
  }
  %one = vyre.const 1 : ui32
  %n = vyre.const 64 : ui32
  %j = vyre.add %i, %one : ui32
  %k = vyre.mod %j, %n : ui32
  %hundred = vyre.const 100 : ui32
  %shifted = vyre.add %v, %hundred : ui32
  vyre.store @y[%k] = %shifted : ui32
  %zero = vyre.const 0 : ui32
  vyre.store @x[%i] = %zero : ui32
  vyre.block {
    vyre.barrier grid_sync
    %w = vyre.load @y[%i] : ui32
    %a = vyre.var @acc : ui32
    %plus = vyre.add %a, %w : ui32
    %minus = vyre.sub %w, %v : ui32
    %r = vyre.select %small, %plus, %minus : ui32
    vyre.store @x[%i] = %r : ui32
    vyre.barrier grid_sync
    %back = vyre.const 63 : ui32
    %jb = vyre.add %i, %back : ui32
    %kb = vyre.mod %jb, %n : ui32
    %prev = vyre.load @x[%kb] : ui32
    %o = vyre.add %r, %prev : ui32
    vyre.store @out[%i] = %o : ui32
  }
}
"""


def _expected(x: np.ndarray) -> np.ndarray:
    v = x.astype(np.int64)
    small = v < 10
    acc = np.where(small, 3 * v, v)
    y = np.roll(v + 100, 1)  # y[(i + 1) % 64] = v[i] + 100
    r = np.where(small, acc + y, y - v) % (1 << 32)
    return ((r + np.roll(r, 1)) % (1 << 32)).astype(np.uint32)  # x[(i + 63) % 64] = r[i - 1]


def _inputs() -> dict[str, np.ndarray]:
    x = np.random.default_rng(7).integers(0, 20, 64).astype(np.uint32)
    return {"x": x, "y": np.zeros(64, np.uint32)}


def _split(text: str):
    module = parse_module(text)
    verify_module(module)
    VyreSplitGridSyncPass().apply(Context(), module)
    verify_module(module)
    return module


def test_the_parts_compute_what_the_whole_program_computes():
    inputs = _inputs()
    expected = _expected(inputs["x"])
    assert (inputs["x"] < 10).any() and (inputs["x"] >= 10).any()  # both arms run
    whole = parse_module(THREE_PARTS)
    split = _split(THREE_PARTS)
    parts = programs(split)
    assert [p.sym_name.data for p in parts] == ["g_part0", "g_part1", "g_part2"]
    assert not any(isinstance(op, BarrierOp) and op.is_grid_sync for op in split.walk())
    assert any(b.is_scratch for p in parts for b in p.buffers())  # values did cross
    np.testing.assert_array_equal(execute(whole, signature(whole).bind(inputs))["out"], expected)
    result = execute(split, signature(split).bind(inputs))
    np.testing.assert_array_equal(result["out"], expected)
    assert sorted(result) == ["out", "x", "y"]  # scratch is no host buffer
    reference = run(str(split), inputs, backend="reference")  # printed and parsed back
    np.testing.assert_array_equal(reference["out"], expected)


def test_the_lowered_parts_run_on_the_gpu():
    inputs = _inputs()
    # the printed parts, parsed back, lowered (their descriptors) and run
    result = run(str(_split(THREE_PARTS)), inputs, backend="wgpu")
    np.testing.assert_array_equal(result["out"], _expected(inputs["x"]))


# The first part writes only @flag (16 elements), the second @big (1024): both
# launch the whole program's grid of 1024 / 64 = 16 workgroups.
UNEVEN = """
vyre.program @uneven workgroup_size [64, 1, 1] {
  vyre.buffer @flag binding 0 read_write : ui32[16]
  vyre.buffer @big binding 1 write_only output : ui32[1024]
  %i = vyre.invocation_id x
  %five = vyre.const 5 : ui32
  %f = vyre.mul %i, %five : ui32
  vyre.store @flag[%i] = %f : ui32
  vyre.barrier grid_sync
  %sixteen = vyre.const 16 : ui32
  %m = vyre.mod %i, %sixteen : ui32
  %v = vyre.load @flag[%m] : ui32
  vyre.store @big[%i] = %v : ui32
}
"""

# A [1, 1, 1] program keeps its declared workgroup: its barrier pins it, and so
# it stays pinned in each part (the spill slots are indexed by it).
SCALAR = """
vyre.program @scalar workgroup_size [1, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[8]
  vyre.buffer @out binding 1 write_only output : ui32[8]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %one = vyre.const 1 : ui32
  %w = vyre.add %v, %one : ui32
  vyre.store @x[%i] = %w : ui32
  vyre.barrier grid_sync
  %seven = vyre.const 7 : ui32
  %j = vyre.sub %seven, %i : ui32
  %u = vyre.load @x[%j] : ui32
  %s = vyre.add %u, %v : ui32
  vyre.store @out[%i] = %s : ui32
}
"""


def test_every_part_covers_the_whole_programs_elements():
    flag = np.zeros(16, np.uint32)
    big = run(str(_split(UNEVEN)), {"flag": flag}, backend="reference")["big"]
    np.testing.assert_array_equal(big, (np.arange(1024) % 16 * 5).astype(np.uint32))
    x = np.arange(10, 18, dtype=np.uint32)
    out = run(str(_split(SCALAR)), {"x": x}, backend="reference")["out"]
    np.testing.assert_array_equal(out, x[::-1] + 1 + x)


def _lowered(module, pass_=None) -> str:
    (pass_ or VyreLowerPass()).apply(Context(), module)
    return str(module)


@pytest.mark.parametrize("text", [THREE_PARTS, UNEVEN, SCALAR], ids=["three", "uneven", "scalar"])
def test_lowering_the_parts_gives_the_descriptors_of_the_whole_program(text):
    whole = _lowered(parse_module(text))
    assert _lowered(_split(text)) == whole
    assert _lowered(parse_module(str(_split(text)))) == whole  # printed and parsed


def test_the_parts_launch_the_whole_programs_grid():
    for text, grid, workgroup in ((UNEVEN, (16, 1, 1), (64, 1, 1)), (SCALAR, (8, 1, 1), (1, 1, 1))):
        module = _split(text)
        VyreLowerPass().apply(Context(), module)
        for descriptor in k.descriptors(module):
            dispatch = descriptor.dispatch()
            assert tuple(dispatch.static_grid) == grid
            assert tuple(dispatch.kernel_workgroup) == workgroup


# Fusion's shape of an arm with a smaller dispatch: the atomics sit under
# `invocation_id x < 512`, so only the first 2 of the 16 workgroups (256
# invocations each) of the 4096-element dispatch can have an effect.
GUARDED_HISTOGRAM = """
vyre.program @hist workgroup_size [256, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[4096]
  vyre.buffer @out binding 1 write_only output : ui32[256]
  %i = vyre.invocation_id x
  %limit = vyre.const 512 : ui32
  %inside = vyre.lt %i, %limit : ui32
  vyre.if %inside {
    %v = vyre.load @x[%i] : ui32
    %one = vyre.const 1 : ui32
    %old = vyre.atomic add @out[%v], %one : ui32
  }
}
"""


def test_privatization_keeps_the_grid_of_the_active_workgroups():
    module = parse_module(GUARDED_HISTOGRAM)
    VyrePrivatizeAtomicsPass().apply(Context(), module)
    (program,) = programs(module)
    assert program.buffer("__vyre_private_out") is not None  # privatized
    # recorded before the flush, which runs in every workgroup, was added
    assert program.recorded_active_workgroups == 512 // 256
    for steps in (VyreToKernelPass().steps(), (VyreLowerPass(),)):
        lowered = parse_module(GUARDED_HISTOGRAM)
        run_steps(Context(), lowered, tuple(steps))
        (descriptor,) = k.descriptors(lowered)
        assert tuple(descriptor.dispatch().static_grid) == (2, 1, 1)


def test_the_pipeline_splits_then_privatizes_before_lowering():
    names = [step.name for step in VyreToKernelPass().steps()]
    split, privatize = names.index("vyre-split-grid-sync"), names.index("vyre-privatize-atomics")
    assert names.index("vyre-fuse" if "vyre-fuse" in names else "vyre-inline") < split
    assert split < privatize < names.index("vyre-lower")
    (lower,) = [s for s in VyreToKernelPass().steps() if s.name == "vyre-lower"]
    assert lower.privatize_atomics is False  # done by the step before
    names = [step.name for step in VyreToKernelPass(privatize_atomics=False).steps()]
    assert "vyre-privatize-atomics" not in names and "vyre-split-grid-sync" in names


PART = """
vyre.program @p_part0 {ATTRS} workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  BUFFER
  %i = vyre.invocation_id x
  vyre.store @x[%i] = %i : ui32
}
"""


@pytest.mark.parametrize(
    "attrs,buffer,message",
    [
        ("part = 0 : i64", "", "a 'part' needs the 'source' program"),
        ('source = "p", part = -1 : i64', "", "'part' must be a non-negative integer"),
        ('source = ""', "", "'source' must name the program"),
        ('source = "p", count_buffers = [@y]', "", "count buffer @y is not a host buffer"),
        ("count_buffers = [1]", "", "'count_buffers' must be a list of buffer symbols"),
        ("active_workgroups = -2", "", "'active_workgroups' must be a non-negative integer"),
        (
            'source = "p"',
            "vyre.buffer @s binding 3 read_write : ui32[2] {vyre.scratch}",
            "scratch buffer @s must be 'read_write' with a static count",
        ),
        (
            'source = "p"',
            "vyre.buffer @s read_write : ui32[?] {vyre.scratch}",
            "scratch buffer @s must be 'read_write' with a static count",
        ),
        (
            'source = "p", count_buffers = [@s]',
            "vyre.buffer @s read_write : ui32[2] {vyre.scratch}",
            "count buffer @s is not a host buffer",
        ),
    ],
)
def test_the_verifier_checks_the_recorded_facts(attrs, buffer, message):
    module = parse_module(PART.replace("ATTRS", attrs).replace("BUFFER", buffer))
    with pytest.raises(VyreDiagnostic) as caught:
        verify_module(module)
    assert message in format_errors(caught.value.errors)


def test_a_scratch_buffer_under_an_indirect_grid_is_refused():
    text = """
    vyre.program @p {indirect = @grid} workgroup_size [64, 1, 1] {
      vyre.buffer @grid binding 2 read_only : ui32[3]
      vyre.buffer @s read_write : ui32[1] {vyre.scratch}
      %i = vyre.invocation_id x
      vyre.store @s[%i] = %i : ui32
    }
    """
    with pytest.raises(VyreDiagnostic) as caught:
        verify_module(parse_module(text))
    assert "scratch buffer @s in a program with an indirect grid" in format_errors(
        caught.value.errors
    )


def test_a_valid_part_verifies_and_keeps_its_facts_through_print_and_parse():
    attrs = 'source = "p", part = 1 : i64, count_buffers = [@x], active_workgroups = 3 : i64'
    text = PART.replace("ATTRS", attrs).replace(
        "BUFFER", "vyre.buffer @__vyre_spill_ui32 read_write : ui32[2] {vyre.scratch}"
    )
    module = parse_module(text)
    verify_module(module)
    again = parse_module(str(module))
    verify_module(again)
    (program,) = programs(again)
    assert (program.source_name, program.part_index) == ("p", 1)
    assert program.recorded_count_buffers == ["x"]
    assert program.recorded_active_workgroups == 3
    assert program.buffer("__vyre_spill_ui32").is_scratch


# A histogram then a reader of its bins across a grid_sync: the first part's
# atomics are privatized, the second part reads the flushed bins.
HISTOGRAM_THEN_READER = """
vyre.program @hist workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[320]
  vyre.buffer @out binding 1 read_write : ui32[16]
  vyre.buffer @scaled binding 2 write_only output : ui32[16]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %one = vyre.const 1 : ui32
  %old = vyre.atomic add @out[%v], %one : ui32
  vyre.barrier grid_sync
  %c = vyre.load @out[%i] : ui32
  %three = vyre.const 3 : ui32
  %s = vyre.mul %c, %three : ui32
  vyre.store @scaled[%i] = %s : ui32
}
"""


@pytest.mark.parametrize("privatize", [True, False])
def test_vyre_lower_alone_gives_the_pipelines_descriptors(privatize):
    alone = parse_module(HISTOGRAM_THEN_READER)
    VyreLowerPass(privatize_atomics=privatize, elide_clears=False).apply(Context(), alone)
    stepped = parse_module(HISTOGRAM_THEN_READER)
    steps = (
        VyreSplitGridSyncPass(),
        *([VyrePrivatizeAtomicsPass()] if privatize else []),
        VyreLowerPass(privatize_atomics=False, elide_clears=False),
    )
    run_steps(Context(), stepped, steps)
    assert str(stepped) == str(alone)
    part0 = k.descriptors(alone)[0]
    assert any(b.mem_class == "shared" for b in part0.bindings()) == privatize


def test_the_privatized_parts_count_the_histogram():
    x = np.random.default_rng(11).integers(0, 16, 320).astype(np.uint32)
    want = np.bincount(x, minlength=16).astype(np.uint32)
    inputs = {"x": x, "out": np.zeros(16, np.uint32)}
    module = _split(HISTOGRAM_THEN_READER)
    VyrePrivatizeAtomicsPass().apply(Context(), module)
    assert programs(module)[0].buffer("__vyre_private_out") is not None
    for backend in ("reference", "wgpu"):
        result = run(str(module), inputs, backend=backend)
        np.testing.assert_array_equal(result["out"], want)
        np.testing.assert_array_equal(result["scaled"], want * np.uint32(3))


def test_a_widened_program_is_never_privatized():
    """A `[1, 1, 1]` program is widened by lowering; with a single invocation per
    declared workgroup it has no workgroup to share a copy in."""
    text = GUARDED_HISTOGRAM.replace("[256, 1, 1]", "[1, 1, 1]")
    module = parse_module(text)
    VyrePrivatizeAtomicsPass().apply(Context(), module)
    assert "__vyre_private_" not in str(module)
    run_steps(Context(), module, VyreToKernelPass().steps())
    (descriptor,) = k.descriptors(module)
    assert tuple(descriptor.dispatch().kernel_workgroup) == (128, 1, 1)  # 4 x 32: widened
    assert not any(b.mem_class == "shared" for b in descriptor.bindings())
