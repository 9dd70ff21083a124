"""Workgroup size and static grid of a descriptor (seed 001 `optimal_workgroup_size`
and `static_workgroups`, with SPEC section 5's full-span element count).

A program declared `[1, 1, 1]` (the legacy scalar default) is *widened* to
4 x subgroup size invocations per workgroup when that cannot change what it
computes (no workgroup memory, no barriers). The kernel then derives the
program's ids from its own linear invocation index and skips the invocations
the declared launch would not have had, so it runs exactly the invocations the
interpreter runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from vyre_xdsl.dialects.vyre import SUBGROUP_OPS, BarrierOp, ProgramOp
from vyre_xdsl.dispatch import dispatch_grid
from vyre_xdsl.lowering.profile import TargetProfile

SCALAR_DEFAULT = (1, 1, 1)


def is_explicit_noop(program: ProgramOp) -> bool:
    """No buffers and an empty body (upstream `Program::is_explicit_noop`)."""
    return not list(program.body.block.ops)


def pins_geometry(program: ProgramOp) -> bool:
    """Whether the program's ids must keep their declared workgroup meaning
    (workgroup memory, barriers, subgroup ops: subgroups lie within a workgroup;
    an indirect grid, which counts the program's own workgroups)."""
    if any(b.is_workgroup for b in program.buffers()) or program.indirect_buffer is not None:
        return True
    return any(isinstance(op, (BarrierOp, *SUBGROUP_OPS)) for op in program.walk())


def kernel_workgroup_size(program: ProgramOp, profile: TargetProfile) -> tuple[int, int, int]:
    """The workgroup size of the kernel that runs `program`."""
    requested = program.workgroup
    if requested != SCALAR_DEFAULT:
        return requested
    if is_explicit_noop(program) or pins_geometry(program):
        return SCALAR_DEFAULT
    subgroup = max(profile.subgroup_size, 32)
    size = min(subgroup * 4, 256, max(profile.max_workgroup_size[0], 1), profile.max_invocations)
    return (max(size, 1), 1, 1)


def declared_invocations(n: int, program_workgroup: Sequence[int]) -> int:
    """How many invocations the program's declared launch for `n` elements has."""
    gx, gy, gz = dispatch_grid(n, tuple(program_workgroup))
    return gx * gy * gz * math.prod(program_workgroup)


def kernel_grid(
    n: int, program_workgroup: Sequence[int], kernel_workgroup: Sequence[int]
) -> tuple[int, int, int]:
    """Workgroups per axis that launch (at least) every invocation the program's
    declared dispatch of `n` logical elements launches."""
    if tuple(program_workgroup) == tuple(kernel_workgroup):
        return dispatch_grid(n, tuple(kernel_workgroup))
    return dispatch_grid(declared_invocations(n, program_workgroup), tuple(kernel_workgroup))
