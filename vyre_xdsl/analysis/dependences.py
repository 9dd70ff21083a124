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
    is_id_expression,
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


def barrier_hazards(
    arm_workgroups: Sequence[Workgroup],
    per_arm: Sequence[Sequence[Access]],
    workgroup: Workgroup,
    host_buffers: set[str],
) -> list[Hazard]:
    """The dependences of `hazards` that decide where barriers go, in time linear
    in the number of arms: for each later arm and buffer, only the latest earlier
    arm it depends on across workgroups (`grid`) and the latest one it depends on
    beyond its invocation (`workgroup` or `grid`). A barrier after the latest
    earlier arm of a strength also orders every earlier arm of that strength, so
    `fusion.barriers.place_barriers` places the same barriers from these as
    from every dependence (`hazards` lists all pairs, quadratic in a long module)."""
    summaries: dict[str, list[tuple[int, _ArmUse]]] = {}
    for k, found_in_arm in enumerate(per_arm):
        by_buffer: dict[str, list[Access]] = {}
        for a in found_in_arm:
            if a.buffer in host_buffers:
                by_buffer.setdefault(a.buffer, []).append(a)
        one_d = _one_dimensional(arm_workgroups[k])
        for buffer, mine in by_buffer.items():
            summaries.setdefault(buffer, []).append((k, _ArmUse.of(mine, one_d, workgroup)))
    found: list[Hazard] = []
    for buffer, uses in summaries.items():
        found += _latest_dependences(buffer, uses)
    found.sort(key=lambda h: (h.later, h.earlier, h.buffer))
    return found


@dataclass(frozen=True)
class _ArmUse:
    """How one arm accesses one buffer, as far as `classify` looks at it."""

    reads: bool
    writes: bool
    #: the index every access uses when it is injective in the invocation and the
    #: arm is 1-D (two arms with the same `tag` depend within an invocation), else None
    tag: tuple | None
    #: every access stays in its workgroup's span of the fused workgroup
    in_span: bool
    #: the accesses themselves (to name the dependence kind)
    accesses: tuple[Access, ...]

    @classmethod
    def of(cls, mine: list[Access], one_d: bool, workgroup: Workgroup) -> _ArmUse:
        keys = {_index_key(a.index) for a in mine}
        pivot = mine[0].index
        uniform = len(keys) == 1 and None not in keys
        tag = keys.pop() if uniform and one_d and injective_in_invocation(pivot) else None
        return cls(
            reads=any(a.reads for a in mine),
            writes=any(a.writes for a in mine),
            tag=tag,
            in_span=all(in_workgroup_span(a.index, workgroup) for a in mine),
            accesses=tuple(mine),
        )

    def strength_after(self, earlier: _ArmUse) -> str:
        if self.tag is not None and self.tag == earlier.tag:
            return "invocation"
        if self.in_span and earlier.in_span:
            return "workgroup"
        return "grid"


def _index_key(value) -> tuple | None:
    """A hashable form of an id expression, equal for two values exactly when
    `structurally_equal` holds between them; None for anything else."""
    if not is_id_expression(value):
        return None
    op = value.owner
    properties = tuple(sorted(op.properties.items()))
    return (op.name, properties, value.type, tuple(_index_key(x) for x in op.operands))


class _Latest:
    """Arms added in order; answers "the latest arm whose tag is not `tag`"."""

    def __init__(self) -> None:
        self.last: tuple[int, tuple | None] | None = None
        self.other: int | None = None  # the latest arm whose tag differs from `last`'s

    def add(self, arm: int, tag: tuple | None) -> None:
        if self.last is not None and not _same_tag(self.last[1], tag):
            self.other = self.last[0]
        self.last = (arm, tag)

    def before(self, tag: tuple | None) -> int | None:
        if self.last is None:
            return None
        return self.other if _same_tag(self.last[1], tag) else self.last[0]


def _same_tag(a: tuple | None, b: tuple | None) -> bool:
    return a is not None and a == b


def _latest_dependences(buffer: str, uses: list[tuple[int, _ArmUse]]) -> list[Hazard]:
    touched, written = _Latest(), _Latest()  # every arm so far; the writers
    touched_wide, written_wide = _Latest(), _Latest()  # those not within their workgroup span
    use_of = dict(uses)
    found = []
    for j, use in uses:
        # j depends on every earlier arm when it writes, else on the earlier writers
        every, wide = (touched, touched_wide) if use.writes else (written, written_wide)
        beyond = every.before(use.tag)  # latest earlier arm not ordered within the invocation
        grid = beyond if not use.in_span else wide.before(use.tag)
        for i in dict.fromkeys(x for x in (beyond, grid) if x is not None):
            earlier = use_of[i]
            kind = dependence_kind(earlier.accesses, use.accesses)
            if kind is not None:
                found.append(Hazard(i, j, buffer, kind, use.strength_after(earlier)))
        touched.add(j, use.tag)
        if use.writes:
            written.add(j, use.tag)
        if not use.in_span:
            touched_wide.add(j, use.tag)
            if use.writes:
                written_wide.add(j, use.tag)
    return found
