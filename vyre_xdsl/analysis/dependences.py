"""Dependences between consecutive programs (fusion's arms) through shared buffers.

When programs run one after another and are fused into one, every pair of arms
`i < j` that touch one buffer, at least one of them writing, has a dependence
(read-after-write, write-after-read, or write-after-write: two writes of one
element from different invocations must keep their order). Its *strength*
says what orders it once the arms share a dispatch:

- `invocation`: every access of the buffer in both arms uses the same index
  expression, and that expression is injective in the invocation (both arms
  1-D). Element `e(t)` is only ever touched by invocation `t`, which runs arm i
  before arm j in program order: nothing is needed.
- `workgroup`: every access indexes within its workgroup's span
  `[w*wg_x, (w+1)*wg_x)` of the fused workgroup size: only workgroup `w` touches
  those elements, so a workgroup barrier between the arms orders them.
- `grid`: anything else (a reversed, shifted or data-dependent index, atomics on
  a shared counter, ...): only a dispatch-wide sync orders it.

```python
from vyre_xdsl.analysis import accesses, hazards

per_arm = [accesses(p.statements()) for p in programs]
for h in hazards([p.workgroup for p in programs], per_arm, (64, 1, 1), {"tmp", "out"}):
    print(h.earlier, h.later, h.buffer, h.kind, h.strength)
```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vyre_xdsl.analysis.accesses import Access
from vyre_xdsl.analysis.indices import (
    in_workgroup_span,
    injective_in_invocation,
    structurally_equal,
)

Workgroup = tuple[int, int, int]

#: dependence strengths, weakest first
STRENGTHS = ("invocation", "workgroup", "grid")


@dataclass(frozen=True)
class Hazard:
    """A dependence of arm `later` on arm `earlier` through `buffer`."""

    earlier: int
    later: int
    buffer: str
    kind: str  # "read-after-write", "write-after-read", "write-after-write"
    strength: str  # "invocation", "workgroup", "grid"


def dependence_kind(first: Sequence[Access], second: Sequence[Access]) -> str | None:
    """The kind of dependence of accesses `second` on earlier accesses `first`
    (of one buffer), or None when neither side writes."""
    if any(a.writes for a in first) and any(b.reads for b in second):
        return "read-after-write"
    if any(a.reads for a in first) and any(b.writes for b in second):
        return "write-after-read"
    if any(a.writes for a in first) and any(b.writes for b in second):
        return "write-after-write"
    return None


def _one_dimensional(workgroup: Workgroup) -> bool:
    return workgroup[1] == 1 and workgroup[2] == 1


def classify(
    first: Sequence[Access],
    second: Sequence[Access],
    arm_workgroups: tuple[Workgroup, Workgroup],
    workgroup: Workgroup,
) -> str:
    """The strength of a dependence between two arms' accesses of one buffer.

    `arm_workgroups` are the two arms' own workgroup sizes, `workgroup` the one
    they share once fused; `first` and `second` must not both be empty.
    """
    both = list(first) + list(second)
    pivot = both[0].index
    if (
        all(_one_dimensional(w) for w in arm_workgroups)
        and injective_in_invocation(pivot)
        and all(structurally_equal(pivot, a.index) for a in both)
    ):
        return "invocation"
    if all(in_workgroup_span(a.index, workgroup) for a in both):
        return "workgroup"
    return "grid"


def hazards(
    arm_workgroups: Sequence[Workgroup],
    per_arm: Sequence[Sequence[Access]],
    workgroup: Workgroup,
    host_buffers: set[str],
) -> list[Hazard]:
    """Every dependence between two arms through a host buffer, ordered by
    (later arm, earlier arm, buffer name).

    `per_arm[k]` holds arm k's accesses, `arm_workgroups[k]` its own workgroup
    size, `workgroup` the fused one; only buffers in `host_buffers` count.
    """
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
                kind = dependence_kind(first, second)
                if kind is None:
                    continue
                pair = (arm_workgroups[i], arm_workgroups[j])
                found.append(Hazard(i, j, buffer, kind, classify(first, second, pair, workgroup)))
    found.sort(key=lambda h: (h.later, h.earlier, h.buffer))
    return found
