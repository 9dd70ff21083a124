"""Splitting a program at its `vyre.barrier grid_sync` ops into consecutive parts.

A `grid_sync` barrier (always at the top level of its program) means the whole
dispatch synchronises. A wgpu dispatch cannot do that, so the program becomes
one dispatch per part, recorded in order in one submit. Every part launches the
invocations of the whole program (same buffers, same element count).

What a later part needs from an earlier one must be recomputable per
invocation: pure ops (constants, ids, arithmetic, `buf_len`) and loads of
buffers the program never writes are cloned into the later part. Anything
else is refused with a diagnostic on the op that needs it:
- an SSA value that is not recomputable (a load of a written buffer, an
  atomic, a read of a named local);
- a named local declared before the split and used after it;
- a `vyre.return` before a split (a returned invocation would run later parts).
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from vyre_xdsl.analysis import buffers_written, declaration_of, is_expression
from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.dialects.vyre import (
    AssignOp,
    BarrierOp,
    LetOp,
    LoadOp,
    ProgramOp,
    ReturnOp,
    VarOp,
)

_FIX = (
    "Fix: recompute the value after the grid_sync, pass it through a buffer, "
    "or fuse without splitting (vyre-fuse{split-grid-sync=false})"
)


def has_grid_sync(program: ProgramOp) -> bool:
    return any(isinstance(op, BarrierOp) and op.is_grid_sync for op in program.statements())


def _segments(program: ProgramOp) -> list[list[Operation]]:
    segments: list[list[Operation]] = [[]]
    for op in program.statements():
        if isinstance(op, BarrierOp) and op.is_grid_sync:
            segments.append([])
        else:
            segments[-1].append(op)
    return segments


def split_program(program: ProgramOp) -> list[ProgramOp]:
    """The parts of `program` between its grid_sync barriers (just `[program]` when
    it has none). Parts are new, detached programs."""
    if not has_grid_sync(program):
        return [program]
    segments = _segments(program)
    segment_of = {op: k for k, ops in enumerate(segments) for op in ops}
    written = buffers_written(program)
    errors: list[tuple[Operation | None, str]] = []
    for ops in segments[:-1]:
        for top in ops:
            for op in top.walk():
                if isinstance(op, ReturnOp):
                    errors.append(
                        (
                            op,
                            "'vyre.return' before a grid_sync: the split dispatch would run "
                            "the rest of the program for invocations that returned. "
                            "Fix: guard the later statements with a condition instead",
                        )
                    )
    parts: list[ProgramOp] = []
    for k, ops in enumerate(segments):
        needed = _needed_definitions(ops, k, segment_of, written, errors)
        parts.append(_build_part(program, k, needed, ops))
    if errors:
        raise VyreDiagnostic(errors)
    return parts


def _needed_definitions(
    ops: list[Operation],
    k: int,
    segment_of: dict[Operation, int],
    written: set[str],
    errors: list[tuple[Operation | None, str]],
) -> set[Operation]:
    """Top-level ops of earlier parts that part `k` must recompute."""
    needed: set[Operation] = set()

    def require(value: SSAValue, user: Operation) -> None:
        owner = value.owner
        if not isinstance(owner, Operation) or segment_of.get(owner, k) >= k:
            return
        if owner in needed:
            return
        if not _recomputable(owner, written):
            errors.append(
                (
                    user,
                    f"this op uses a value computed by '{owner.name}' before a grid_sync "
                    f"that cannot be recomputed after it. {_FIX}",
                )
            )
            return
        needed.add(owner)
        for operand in owner.operands:
            require(operand, user)

    for top in ops:
        for op in top.walk():
            for operand in op.operands:
                require(operand, op)
            if isinstance(op, VarOp | AssignOp):
                declaration = declaration_of(op)
                if isinstance(declaration, LetOp) and segment_of.get(declaration, k) < k:
                    errors.append(
                        (
                            op,
                            f"named local @{op.var_name.data} is declared before a grid_sync "
                            f"and used after it; the split dispatches do not share locals. {_FIX}",
                        )
                    )
    return needed


def _recomputable(op: Operation, written: set[str]) -> bool:
    if is_expression(op):
        return True
    return isinstance(op, LoadOp) and op.buffer_name not in written


def _build_part(
    program: ProgramOp, k: int, needed: set[Operation], ops: list[Operation]
) -> ProgramOp:
    mapping: dict[SSAValue, SSAValue] = {}
    body: list[Operation] = [b.clone() for b in program.buffers()]
    for op in program.statements():
        if op in needed:
            body.append(op.clone(value_mapper=mapping))
    for op in ops:
        body.append(op.clone(value_mapper=mapping))
    part = ProgramOp(program.sym_name.data, program.workgroup, body)
    part.attributes.update(program.attributes)
    part.location = program.location
    return part
