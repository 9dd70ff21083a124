"""Dependences between fused arms, and the barriers that order them.

For every pair of arms `i < j` and every buffer both touch with at least one
write (read-after-write, write-after-read, and write-after-write too: two
writes of one element from different invocations must keep their order), the
dependence is

- `invocation`: every access of the buffer in both arms uses the same index
  expression, and that expression is injective in the invocation (both arms
  1-D). Element `e(t)` is only ever touched by invocation `t`, which runs arm i
  before arm j in program order: no barrier.
- `workgroup`: every access indexes within its workgroup's span
  `[w*wg_x, (w+1)*wg_x)` of the fused workgroup size: only workgroup `w` touches
  those elements, so a workgroup barrier between the arms orders them.
- `grid`: anything else (a reversed, shifted or data-dependent index, atomics on
  a shared counter, ...): only a dispatch-wide sync orders it.

Barriers are then placed greedily (latest position first), so one barrier
serves every dependence it separates; a `grid_sync` also serves workgroup
dependences.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from vyre_xdsl.dialects.vyre import AtomicOp, LoadOp, StoreOp
from vyre_xdsl.fusion.indices import in_workgroup_span, injective_in_invocation, structurally_equal
from vyre_xdsl.fusion.merge import Arm

@dataclass(frozen=True)
class Access:
    op: Operation
    buffer: str
    index: SSAValue
    reads: bool
    writes: bool


def access_of(op: Operation) -> Access | None:
    if isinstance(op, LoadOp):
        return Access(op, op.buffer_name, op.index, True, False)
    if isinstance(op, StoreOp):
        return Access(op, op.buffer_name, op.index, False, True)
    if isinstance(op, AtomicOp):
        return Access(op, op.buffer_name, op.index, True, True)
    return None


def accesses(ops: Iterable[Operation]) -> list[Access]:
    found = []
    for top in ops:
        for op in top.walk():
            access = access_of(op)
            if access is not None:
                found.append(access)
    return found


@dataclass(frozen=True)
class Hazard:
    """A dependence of arm `later` on arm `earlier` through `buffer`."""

    earlier: int
    later: int
    buffer: str
    kind: str  # "read-after-write", "write-after-read", "write-after-write"
    strength: str  # "invocation", "workgroup", "grid"


def _kind(first: list[Access], second: list[Access]) -> str | None:
    if any(a.writes for a in first) and any(b.reads for b in second):
        return "read-after-write"
    if any(a.reads for a in first) and any(b.writes for b in second):
        return "write-after-read"
    if any(a.writes for a in first) and any(b.writes for b in second):
        return "write-after-write"
    return None


def _one_dimensional(arm: Arm) -> bool:
    return arm.workgroup[1] == 1 and arm.workgroup[2] == 1


def classify(
    first: list[Access], second: list[Access], arms: tuple[Arm, Arm], workgroup: tuple[int, int, int]
) -> str:
    """The strength of a dependence between two arms' accesses of one buffer."""
    both = first + second
    pivot = both[0].index
    if (
        all(_one_dimensional(arm) for arm in arms)
        and injective_in_invocation(pivot)
        and all(structurally_equal(pivot, a.index) for a in both)
    ):
        return "invocation"
    if all(in_workgroup_span(a.index, workgroup) for a in both):
        return "workgroup"
    return "grid"


def hazards(
    arms: Sequence[Arm],
    per_arm: Sequence[list[Access]],
    workgroup: tuple[int, int, int],
    host_buffers: set[str],
) -> list[Hazard]:
    """Every dependence between two arms through a host buffer, ordered by
    (later arm, earlier arm, buffer name)."""
    # buffer -> arm index -> that arm's accesses of the buffer (arms in order)
    by_buffer: dict[str, dict[int, list[Access]]] = {}
    for k, found_in_arm in enumerate(per_arm):
        for a in found_in_arm:
            if a.buffer in host_buffers:
                by_buffer.setdefault(a.buffer, {}).setdefault(k, []).append(a)
    found = []
    for buffer, touching in by_buffer.items():
        writers = [k for k, mine in touching.items() if any(a.writes for a in mine)]
        if not writers:
            continue  # only reads: no dependence
        for j, second in touching.items():
            # a dependence needs a write on one side: any earlier arm if j writes, else an earlier writer
            writes_j = any(a.writes for a in second)
            for i in (k for k in touching if k < j) if writes_j else (k for k in writers if k < j):
                first = touching[i]
                kind = _kind(first, second)
                if kind is None:
                    continue
                strength = classify(first, second, (arms[i], arms[j]), workgroup)
                found.append(Hazard(i, j, buffer, kind, strength))
    found.sort(key=lambda h: (h.later, h.earlier, h.buffer))
    return found


def place_barriers(
    found: Sequence[Hazard], allowed_grid: set[int] | None = None
) -> dict[int, str]:
    """Barrier positions (`p`: after arm p) -> "grid_sync" or "seq_cst".

    Each dependence between arms i < j needs a barrier of its strength at some
    position in [i, j-1]. Greedy by latest end gives the fewest barriers.
    `allowed_grid` restricts where a grid_sync may go (None: anywhere).
    """
    placed: dict[int, str] = {}
    for ordering, strengths in (("grid_sync", {"grid"}), ("seq_cst", {"workgroup", "grid"})):
        needed = sorted(
            ((h.later, h.earlier) for h in found if h.strength in strengths), key=lambda e: e
        )
        for later, earlier in needed:
            span = range(earlier, later)
            if any(placed.get(p) == "grid_sync" or (ordering == "seq_cst" and p in placed) for p in span):
                continue
            candidates = [
                p for p in span if ordering == "seq_cst" or allowed_grid is None or p in allowed_grid
            ]
            placed[max(candidates or span)] = ordering
    return placed


def grid_between(placed: dict[int, str], earlier: int, later: int) -> bool:
    """Whether a grid_sync separates arm `earlier` from arm `later`."""
    return any(placed.get(p) == "grid_sync" for p in range(earlier, later))
