"""Indirect dispatch: `vyre.program @p {indirect = @grid} ...` launches the grid
held in words 0..2 of `@grid` when the program starts.

On wgpu the grid is written by an earlier program of the same submit and read
by `dispatch_workgroups_indirect`; the reference interpreter reads the buffer
at that point in program order. Expectations are plain numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

from vyre_xdsl import run
from vyre_xdsl.api import fuse_module
from vyre_xdsl.context import parse_module
from vyre_xdsl.diagnostics import VyreDiagnostic, verify_module
from vyre_xdsl.dialects.vyre import ProgramOp
from vyre_xdsl.dispatch import IndirectGridError

BACKENDS = ("reference", "wgpu")
MODES = [(b, f) for b in BACKENDS for f in (False, True)]

# @produce writes the grid (n workgroups on x, then y and z from @yz); @scale
# runs on the same buffers (so fusion has something to fuse with @produce);
# @consume launches the grid it finds and writes 100 * workgroup + invocation.
CHAIN = """
vyre.program @produce workgroup_size [1, 1, 1] {
  vyre.buffer @n binding 0 read_only : ui32[3]
  vyre.buffer @grid binding 1 read_write : ui32[3]
  %i = vyre.invocation_id x
  %v = vyre.load @n[%i] : ui32
  vyre.store @grid[%i] = %v : ui32
}
vyre.program @scale workgroup_size [1, 1, 1] {
  vyre.buffer @n binding 0 read_only : ui32[3]
  vyre.buffer @twice binding 3 write_only output : ui32[3]
  %i = vyre.invocation_id x
  %v = vyre.load @n[%i] : ui32
  %d = vyre.add %v, %v : ui32
  vyre.store @twice[%i] = %d : ui32
}
vyre.program @consume {indirect = @grid} workgroup_size [4, 1, 1] {
  vyre.buffer @grid binding 1 read_write : ui32[3]
  vyre.buffer @out binding 2 write_only output : ui32[64]
  %i = vyre.invocation_id x
  %w = vyre.workgroup_id x
  %c = vyre.const 100 : ui32
  %m = vyre.mul %w, %c : ui32
  %s = vyre.add %m, %i : ui32
  vyre.store @out[%i] = %s : ui32
}
"""


def _expected(grid: tuple[int, int, int]) -> np.ndarray:
    """Workgroups are numbered linearly (x fastest), 4 invocations each."""
    out = np.zeros(64, np.uint64)
    groups = grid[0] * grid[1] * grid[2]
    for w in range(groups):
        for lane in range(4):
            i = 4 * w + lane
            if i < 64:
                out[i] = 100 * w + i
    return out.astype(np.uint32)


@pytest.mark.parametrize("backend,fuse", MODES)
@pytest.mark.parametrize("grid", [(3, 1, 1), (8, 1, 1), (2, 3, 1), (1, 2, 2), (16, 1, 1)])
def test_grid_written_by_an_earlier_program(backend: str, fuse: bool, grid) -> None:
    n = np.array(grid, np.uint32)
    result = run(CHAIN, {"n": n, "grid": np.zeros(3, np.uint32)}, backend=backend, fuse=fuse)
    np.testing.assert_array_equal(result["out"], _expected(grid))
    np.testing.assert_array_equal(result["twice"], 2 * n)


@pytest.mark.parametrize("backend,fuse", MODES)
@pytest.mark.parametrize("grid", [(0, 1, 1), (5, 0, 1), (4, 4, 0)])
def test_a_zero_axis_runs_nothing(backend: str, fuse: bool, grid) -> None:
    n = np.array(grid, np.uint32)
    result = run(CHAIN, {"n": n, "grid": np.zeros(3, np.uint32)}, backend=backend, fuse=fuse)
    np.testing.assert_array_equal(result["out"], np.zeros(64, np.uint32))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("grid", [(65536, 1, 1), (1, 70000, 1), (1, 1, 4294967295)])
def test_an_axis_over_the_device_limit_is_refused(backend: str, grid) -> None:
    n = np.array(grid, np.uint32)
    with pytest.raises(IndirectGridError) as caught:
        run(CHAIN, {"n": n, "grid": np.zeros(3, np.uint32)}, backend=backend)
    message = str(caught.value)
    assert "@consume" in message and "@grid" in message and "65535" in message
    assert str(max(grid)) in message


GRID_INPUT = """
vyre.program @p {indirect = @grid} workgroup_size [2, 1, 1] {
  vyre.buffer @grid binding 0 read_only : ui32[4]
  vyre.buffer @out binding 1 read_write output : ui32[16]
  %i = vyre.invocation_id x
  %v = vyre.load @out[%i] : ui32
  %one = vyre.const 1 : ui32
  %s = vyre.add %v, %one : ui32
  vyre.store @out[%i] = %s : ui32
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_grid_given_as_an_input(backend: str) -> None:
    out = np.arange(16, dtype=np.uint32)
    grid = np.array([3, 1, 1, 99], np.uint32)  # word 3 is not part of the grid
    result = run(GRID_INPUT, {"grid": grid, "out": out}, backend=backend)
    expected = out.copy()
    expected[:6] += 1  # 3 workgroups of 2 invocations
    np.testing.assert_array_equal(result["out"], expected)


def test_fusion_keeps_an_indirect_program_on_its_own() -> None:
    fused = fuse_module(parse_module(CHAIN))
    programs = [op for op in fused.ops if isinstance(op, ProgramOp)]
    assert len(programs) == 2
    assert programs[0].indirect_buffer is None
    assert programs[1].sym_name.data == "consume"
    assert programs[1].indirect_buffer == "grid"


@pytest.mark.parametrize(
    "buffer, message",
    [
        ("", "indirect grid buffer @grid is not declared in @p"),
        ("vyre.buffer @grid binding 0 read_only : ui32[2]", "static count of at least 3"),
        ("vyre.buffer @grid binding 0 read_only : f32[3]", "must be a host ui32 buffer"),
        ("vyre.buffer @grid binding 0 read_only : ui32[?]", "static count of at least 3"),
        ("vyre.buffer @grid workgroup : ui32[3]", "must be a host ui32 buffer"),
    ],
)
def test_verifier_checks_the_grid_buffer(buffer: str, message: str) -> None:
    text = f"""
vyre.program @p {{indirect = @grid}} workgroup_size [64, 1, 1] {{
  {buffer}
  vyre.buffer @out binding 1 write_only : ui32[64]
}}
"""
    with pytest.raises(VyreDiagnostic) as caught:
        verify_module(parse_module(text))
    assert message in str(caught.value)


# ------------------------------------------------ a grid at a byte offset

# @plan writes two grids into one buffer: a decoy (1, 1, 1) at words 0..2 and
# the real one at words 3..5; @consume reads from byte 12 (upstream's
# `count_offset`), so reading at the wrong offset gives the decoy's result.
AT_OFFSET = """
vyre.program @plan workgroup_size [1, 1, 1] {
  vyre.buffer @n binding 0 read_only : ui32[3]
  vyre.buffer @grids binding 1 read_write : ui32[7]
  %i = vyre.invocation_id x
  %three = vyre.const 3 : ui32
  %axis = vyre.lt %i, %three : ui32
  vyre.if %axis {
    %v = vyre.load @n[%i] : ui32
    %one = vyre.const 1 : ui32
    %j = vyre.add %i, %three : ui32
    vyre.store @grids[%i] = %one : ui32
    vyre.store @grids[%j] = %v : ui32
  }
}
vyre.program @consume {indirect = @grids, indirect_offset = 12} workgroup_size [4, 1, 1] {
  vyre.buffer @grids binding 1 read_write : ui32[7]
  vyre.buffer @out binding 2 write_only output : ui32[64]
  %i = vyre.invocation_id x
  %w = vyre.workgroup_id x
  %c = vyre.const 100 : ui32
  %m = vyre.mul %w, %c : ui32
  %s = vyre.add %m, %i : ui32
  vyre.store @out[%i] = %s : ui32
}
"""


@pytest.mark.parametrize("backend,fuse", MODES)
@pytest.mark.parametrize("grid", [(5, 1, 1), (2, 2, 2)])
def test_grid_at_a_byte_offset(backend: str, fuse: bool, grid) -> None:
    n = np.array(grid, np.uint32)
    grids = np.full(7, 77, np.uint32)
    result = run(AT_OFFSET, {"n": n, "grids": grids}, backend=backend, fuse=fuse)
    np.testing.assert_array_equal(result["out"], _expected(grid))
    np.testing.assert_array_equal(result["grids"], [1, 1, 1, *grid, 77])


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_axis_over_the_limit_at_an_offset_is_refused(backend: str) -> None:
    n = np.array([2, 70000, 1], np.uint32)
    with pytest.raises(IndirectGridError) as caught:
        run(AT_OFFSET, {"n": n, "grids": np.zeros(7, np.uint32)}, backend=backend)
    assert "@consume" in str(caught.value) and "70000" in str(caught.value)


@pytest.mark.parametrize(
    "attributes, count, message",
    [
        ("indirect = @grid, indirect_offset = 6", 6, "not a non-negative multiple of 4 bytes"),
        ("indirect = @grid, indirect_offset = -4", 6, "not a non-negative multiple of 4 bytes"),
        ("indirect = @grid, indirect_offset = 16", 6, "static count of at least 7"),
        ("indirect_offset = 4", 6, "'indirect_offset' needs an indirect grid"),
    ],
)
def test_verifier_checks_the_offset(attributes: str, count: int, message: str) -> None:
    text = f"""
vyre.program @p {{{attributes}}} workgroup_size [64, 1, 1] {{
  vyre.buffer @grid binding 0 read_only : ui32[{count}]
  vyre.buffer @out binding 1 write_only : ui32[64]
}}
"""
    with pytest.raises(VyreDiagnostic) as caught:
        verify_module(parse_module(text))
    assert message in str(caught.value)
