"""Workgroup size and static grid of a descriptor (seed 001 `optimal_workgroup_size`
and `static_workgroups`, with SPEC section 5's full-span element count).

A program declared `[1, 1, 1]` (the legacy scalar default) is *widened* to
4 x subgroup size invocations per workgroup when that cannot change what it
computes (no workgroup memory, no barriers). The kernel then derives the
program's ids from its own linear invocation index and skips the invocations
the declared launch would not have had, so it runs exactly the invocations the
interpreter runs.

A dispatch whose every effect sits under a guard that only the first `G`
workgroups pass (`vyre.if (workgroup_id x < G)`, or `invocation_id x < E`:
`ceil(E / wx)` workgroups; what fusion writes around an arm with a smaller
dispatch) needs only those `G` workgroups: `active_groups` finds `G`, and
lowering launches `min(G, all)` workgroups instead of all of them. The
workgroups left out would only have evaluated the guard to false. This is what
keeps each part of a program split at `grid_sync` on the grid of the arms it
holds.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from vyre_xdsl.analysis import is_expression, may_trap
from vyre_xdsl.dialects.vyre import (
    SUBGROUP_OPS,
    AndOp,
    AssignOp,
    BarrierOp,
    BlockOp,
    ConstOp,
    IfOp,
    InvocationIdOp,
    LetOp,
    LoadOp,
    LoopOp,
    LtOp,
    NumWorkgroupsOp,
    ProgramOp,
    RegionOp,
    ReturnOp,
    VarOp,
    WorkgroupIdOp,
    ui32,
)
from vyre_xdsl.target_profile import TargetProfile

SCALAR_DEFAULT = (1, 1, 1)


def is_explicit_noop(program: ProgramOp) -> bool:
    """No buffers and an empty body (upstream `Program::is_explicit_noop`)."""
    return not list(program.body.block.ops)


def fixes_launch(program: ProgramOp) -> bool:
    """Whether the program's launched grid must be exactly its own: an explicit
    grid, or `vyre.num_workgroups`, which reads it (no widening, no cut-down
    grid, no vector form, no coarsening)."""
    if program.explicit_grid is not None:
        return True
    return any(isinstance(op, NumWorkgroupsOp) for op in program.walk())


def pins_geometry(program: ProgramOp) -> bool:
    """Whether the program's ids must keep their declared workgroup meaning
    (workgroup memory, barriers, subgroup ops: subgroups lie within a workgroup;
    an indirect grid, which counts the program's own workgroups; an explicit
    grid or `vyre.num_workgroups`: `fixes_launch`; a part of a program split at
    `grid_sync`, which runs on the geometry of the whole program: its barriers
    pinned it, and the parts index their spill slots by it)."""
    if any(b.is_workgroup for b in program.buffers()) or program.indirect_buffer is not None:
        return True
    if program.part_index is not None:
        return True
    if fixes_launch(program):
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


# ---------------------------------------------------------------------- active workgroups

#: ops that change nothing outside their own invocation (locals die with it)
_INERT = (LoadOp, VarOp, LetOp, AssignOp, ReturnOp, *SUBGROUP_OPS)


def _inert(op: Operation) -> bool:
    """Whether `op` (with everything nested in it) has no effect outside its invocation:
    no store, atomic or trap. A workgroup barrier is inert: every invocation of a
    workgroup skips or runs the same code."""
    for inner in op.walk():
        if isinstance(inner, BarrierOp):
            if inner.is_grid_sync:
                return False
            continue
        if isinstance(inner, (IfOp, LoopOp, BlockOp, RegionOp, *_INERT)):
            continue
        if is_expression(inner) and not may_trap(inner):
            continue
        return False
    return True


def _static_ui32(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, ConstOp) and owner.result.type == ui32:
        return int(owner.literal())
    return None


def _guard_groups(cond: SSAValue, workgroup: Sequence[int]) -> int | None:
    """How many leading workgroups may pass the guard `cond` (None: any may):
    `workgroup_id x < G` gives G, `invocation_id x < E` gives ceil(E / wx), and
    a conjunction the smaller of its sides."""
    owner = cond.owner
    if isinstance(owner, AndOp):
        sides = [_guard_groups(operand, workgroup) for operand in owner.operands]
        known = [g for g in sides if g is not None]
        return min(known) if known else None
    if not isinstance(owner, LtOp):
        return None
    bound = _static_ui32(owner.operands[1])
    id_op = owner.operands[0].owner
    if bound is None or not isinstance(id_op, WorkgroupIdOp | InvocationIdOp):
        return None
    if id_op.axis_index != 0:
        return None
    if isinstance(id_op, WorkgroupIdOp):
        return bound
    return -(-bound // workgroup[0])


def active_groups(program: ProgramOp) -> int | None:
    """The number of leading workgroups (of the program's declared workgroup) in
    which some invocation may have an effect, when that is known statically:
    every top-level statement is inert, or an `if` (without an effectful else)
    whose guard bounds the workgroups that pass it, and there is such an `if`.
    None: any workgroup may (or nothing has an effect: the grid stays as declared)."""
    groups = None
    for op in program.statements():
        if _inert(op):
            continue
        if not isinstance(op, IfOp) or (op.has_else and not _inert_region(op)):
            return None
        bound = _guard_groups(op.cond, program.workgroup)
        if bound is None:
            return None
        groups = bound if groups is None else max(groups, bound)
    return groups


def _inert_region(op: IfOp) -> bool:
    return all(_inert(inner) for inner in op.else_region.block.ops)
