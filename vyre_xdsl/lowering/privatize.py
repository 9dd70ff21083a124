"""Atomic privatization: the rewrite behind `vyre-privatize-atomics`, which
`vyre-lower` also applies to every dispatch part when run on its own (see that
pass for the rules).

```python
from vyre_xdsl.lowering.privatize import privatize_program
privatize_program(program, workgroup_storage=49152)   # -> ["hist"]
```
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerAttr, SymbolRefAttr, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from vyre_xdsl.dialects.vyre import (
    ACTIVE_WORKGROUPS_ATTR,
    AddOp,
    AtomicOp,
    BarrierOp,
    BufferOp,
    ConstOp,
    IfOp,
    LoadOp,
    LocalIdOp,
    LtOp,
    MinOp,
    MulOp,
    NeOp,
    NotOp,
    ProgramOp,
    RegionOp,
    ReturnOp,
    StoreOp,
)
from vyre_xdsl.lowering.geometry import active_groups
from vyre_xdsl.target_profile import DEFAULT_PROFILE

#: the identity of each privatizable atomic kind: combine(x, identity) == x
IDENTITIES: dict[str, int] = {
    "add": 0,
    "or": 0,
    "xor": 0,
    "max": 0,
    "min": 0xFFFFFFFF,
    "and": 0xFFFFFFFF,
}

PRIVATE_PREFIX = "__vyre_private_"
#: the generator of the `vyre.region` that holds the program's own statements
#: (the WGSL printer may run it for several workgroups between one zeroing and
#: one flush of the copies)
BODY_GENERATOR = "vyre.privatize.body"
#: fewer invocations per workgroup than this, and a copy per workgroup cannot pay off
MIN_INVOCATIONS = 32
DEFAULT_BINS_PER_INVOCATION = 4


@dataclass(frozen=True)
class Candidate:
    """A global buffer whose atomics may go to a workgroup copy."""

    buffer: BufferOp
    kind: str

    @property
    def name(self) -> str:
        return self.buffer.buffer_name

    @property
    def count(self) -> int:
        count = self.buffer.static_count
        assert count is not None
        return count


# ============================================================================ analysis


def _privatizable_kind(program: ProgramOp, buffer: BufferOp) -> str | None:
    """The one atomic kind through which `program` accesses `buffer`, when every
    access is such an atomic with an unused result; else None."""
    kinds: set[str] = set()
    for op in program.walk():
        if isinstance(op, LoadOp | StoreOp) and op.buffer_name == buffer.buffer_name:
            return None
        if isinstance(op, AtomicOp) and op.buffer_name == buffer.buffer_name:
            if op.result.uses or op.kind.data not in IDENTITIES:
                return None
            kinds.add(op.kind.data)
    return kinds.pop() if len(kinds) == 1 else None


def _is_return_guard(op: Operation) -> bool:
    """`vyre.if %c { vyre.return }` without an else branch."""
    if not isinstance(op, IfOp) or op.has_else:
        return False
    body = list(op.then_region.block.ops) if op.then_region.blocks else []
    return len(body) == 1 and isinstance(body[0], ReturnOp)


def _all_reach_the_end(program: ProgramOp) -> bool:
    """Whether every return is a top-level guard and there is no grid_sync."""
    guards = {op for op in program.statements() if _is_return_guard(op)}
    for op in program.walk():
        if isinstance(op, BarrierOp) and op.is_grid_sync:
            return False
        if isinstance(op, ReturnOp) and op.parent_op() not in guards:
            return False
    return True


def candidates(
    program: ProgramOp, workgroup_storage: int, bins_per_invocation: int
) -> list[Candidate]:
    """The buffers of `program` to privatize, in declaration order, while their
    copies fit in `workgroup_storage` bytes."""
    threads = math.prod(program.workgroup)
    if threads < MIN_INVOCATIONS or not _all_reach_the_end(program):
        return []
    used = sum(4 * (b.static_count or 0) for b in program.buffers() if b.is_workgroup)
    chosen = []
    for buffer in program.buffers():
        count = buffer.static_count
        if (
            buffer.is_workgroup
            or buffer.element != "ui32"
            or buffer.access_mode not in ("read_write", "write_only")
            or not count
            or count > bins_per_invocation * threads
            or used + 4 * count > workgroup_storage
        ):
            continue
        kind = _privatizable_kind(program, buffer)
        if kind is None:
            continue
        chosen.append(Candidate(buffer, kind))
        used += 4 * count
    return chosen


# ============================================================================ rewrite


def _fresh_name(program: ProgramOp, base: str) -> str:
    taken = {b.buffer_name for b in program.buffers()}
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name


class _Emitter:
    """Appends ops to a block."""

    def __init__(self, block: Block, before: Operation | None = None):
        self.block = block
        self.before = before

    def add(self, op: Operation) -> SSAValue | None:
        if self.before is None:
            self.block.add_op(op)
        else:
            self.block.insert_op_before(op, self.before)
        return op.results[0] if op.results else None

    def const(self, value: int) -> SSAValue:
        result = self.add(ConstOp(value, "ui32"))
        assert result is not None
        return result


def _linear_local_index(out: _Emitter, workgroup: tuple[int, int, int]) -> SSAValue:
    """`local_id x + local_id y * wx + local_id z * wx * wy` (only the axes > 1)."""
    index = out.add(LocalIdOp("x"))
    stride = workgroup[0]
    for axis, size in ((1, workgroup[1]), (2, workgroup[2])):
        if size > 1:
            term = out.add(MulOp(out.add(LocalIdOp(axis)), out.const(stride)))
            index = out.add(AddOp(index, term))
        stride *= size
    assert index is not None
    return index


def _for_each_bin(out: _Emitter, lane: SSAValue, threads: int, count: int, body) -> None:
    """Call `body(emitter, bin)` for the bins `lane, lane + threads, ...` below
    `count`: one straight-line chunk per multiple of `threads`; a chunk that may
    pass `count` is guarded, and its bin clamped to `count - 1` under the guard
    (so the accesses inside need no bounds check of their own)."""
    for start in range(0, count, threads):
        index = lane if start == 0 else out.add(AddOp(lane, out.const(start)))
        assert index is not None
        if start + threads <= count:
            body(out, index)
            continue
        inside = out.add(LtOp(index, out.const(count)))
        guard = IfOp(inside, [])
        out.add(guard)
        inner = _Emitter(guard.then_region.block)
        clamped = inner.add(MinOp(index, inner.const(count - 1)))
        body(inner, clamped)


def _initialize(out: _Emitter, lane: SSAValue, threads: int, candidate: Candidate, copy: str):
    identity = IDENTITIES[candidate.kind]

    def store(emitter: _Emitter, index: SSAValue) -> None:
        emitter.add(StoreOp(copy, index, emitter.const(identity)))

    _for_each_bin(out, lane, threads, candidate.count, store)


def _flush(out: _Emitter, lane: SSAValue, threads: int, candidate: Candidate, copy: str):
    identity = IDENTITIES[candidate.kind]

    def flush(emitter: _Emitter, index: SSAValue) -> None:
        value = emitter.add(LoadOp(copy, index, "ui32"))
        assert value is not None
        changed = emitter.add(NeOp(value, emitter.const(identity)))
        guard = IfOp(changed, [])
        emitter.add(guard)
        _Emitter(guard.then_region.block).add(
            AtomicOp(candidate.kind, candidate.name, index, value)
        )

    _for_each_bin(out, lane, threads, candidate.count, flush)


def _remove_return_guards(block: Block) -> None:
    """Replace each top-level `vyre.if %c { vyre.return }` by `vyre.if (not %c)`
    around the statements after it, so that every invocation reaches the end."""
    for op in list(block.ops):
        if not _is_return_guard(op):
            continue
        assert isinstance(op, IfOp)
        rest = []
        following = op.next_op
        while following is not None:
            rest.append(following)
            following = following.next_op
        negated = NotOp(op.cond)
        wrapper = IfOp(negated, [])
        block.insert_ops_before([negated, wrapper], op)
        for moved in rest:
            moved.detach()
            wrapper.then_region.block.add_op(moved)
        Rewriter.erase_op(op)
        _remove_return_guards(wrapper.then_region.block)
        return


def privatize_program(
    program: ProgramOp,
    workgroup_storage: int = DEFAULT_PROFILE.max_workgroup_storage_bytes,
    bins_per_invocation: int = DEFAULT_BINS_PER_INVOCATION,
) -> list[str]:
    """Privatize the atomics of `program` in place; return the buffers privatized.
    When only the first G workgroups could have an effect (`active_groups`),
    the program records `active_workgroups = G` first: the flush that follows
    runs in every workgroup, but in the others it only finds identities."""
    chosen = candidates(program, workgroup_storage, bins_per_invocation)
    if not chosen:
        return []
    groups = active_groups(program)
    if groups is not None and program.recorded_active_workgroups is None:
        program.attributes[ACTIVE_WORKGROUPS_ATTR] = IntegerAttr(groups, i64)
    body = program.body.block
    copies = {c.name: _fresh_name(program, PRIVATE_PREFIX + c.name) for c in chosen}
    _remove_return_guards(body)
    statements = list(program.statements())
    for statement in statements:
        statement.detach()
    body.add_op(RegionOp(BODY_GENERATOR, statements))
    for op in list(program.walk()):
        if isinstance(op, AtomicOp) and op.buffer_name in copies:
            op.properties["buffer"] = SymbolRefAttr(copies[op.buffer_name])
    last_buffer = [b for b in program.buffers()][-1]
    for candidate in chosen:
        copy = BufferOp(copies[candidate.name], "workgroup", "ui32", candidate.count)
        copy.location = candidate.buffer.location
        Rewriter.insert_op(copy, InsertPoint.after(last_buffer))
        last_buffer = copy
    threads = math.prod(program.workgroup)
    first_statement = next(program.statements(), None)
    needs_init = [c for c in chosen if IDENTITIES[c.kind] != 0]
    if needs_init:
        prologue = _Emitter(body, first_statement)
        lane = _linear_local_index(prologue, program.workgroup)
        for candidate in needs_init:
            _initialize(prologue, lane, threads, candidate, copies[candidate.name])
        prologue.add(BarrierOp())
    epilogue = _Emitter(body)
    epilogue.add(BarrierOp())
    lane = _linear_local_index(epilogue, program.workgroup)
    for candidate in chosen:
        _flush(epilogue, lane, threads, candidate, copies[candidate.name])
    return [c.name for c in chosen]
