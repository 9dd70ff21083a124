"""`vyre-coarsen-reductions`: each invocation of a workgroup tree reduction first
combines k elements, and the grid shrinks by k.

```
vyre-opt -p vyre-coarsen-reductions in.mlir
vyre-opt -p 'vyre-coarsen-reductions{k=16}' in.mlir
vyre-opt -p 'vyre-coarsen-reductions{reassociate-floats=true remarks=true}' in.mlir
vyre-opt -p 'vyre-to-wgsl{coarsen-reductions=true}' -t wgsl in.mlir
```

The textbook reduction loads one element per invocation into workgroup
memory and halves it with a barrier per step, one partial per workgroup, a
program per level. Most of its time goes to the barrier steps of its many
workgroups. The pass rewrites a level (a program that
`vyre_xdsl.analysis.reductions.tree_level` recognizes) whose G workgroups of W
invocations store their partials (G: the workgroups it launched, at most the
partials buffer's length, since a partial stored past the end is dropped and
its leaves must not be mixed into the others) to launch G' = ceil(G / k)
(an explicit `grid`):
invocation i first combines the leaves of the original invocations
i, i + G'W, i + 2G'W, ... (those below GW: the same leaves, each once; the
loads stay coalesced), then the tree runs as before. Workgroup w writes its
partial to slot w, and its invocations 1 ... k-1 write slots w + G', w + 2G',
... (below G): the combine's identity (0, -0.0 for float add, 1 for mul), or
for an idempotent combine (min, max, bit_and, bit_or) the workgroup's own
partial again. So the partials buffer keeps its length, every slot the
original wrote is written, and the next level, unchanged, combines the same
values in another grouping.

```mlir
// before: 16384 workgroups                    // after: grid [1024, 1, 1]
%v = vyre.load @x[%i] : f32                    %v = vyre.load @x[%i] : f32
vyre.store @tile[%l] = %v : f32                vyre.let @__vyre_coarsen_acc = %v : f32
                                               vyre.loop @__vyre_coarsen_k = %c1 to %c16 {
                                                 // j = i + k * 262144
                                                 %vj = vyre.load @x[%j] : f32
                                                 // acc = acc + vj
                                               }
                                               vyre.store @tile[%l] = %acc : f32
... the tree, unchanged ...
vyre.if %first {                               vyre.if %l < 16 {
  vyre.store @r0[%w] = %t : f32                  // r0[w + l * 1024] = l == 0 ? t : -0.0
}                                              }
```

When it applies (anything else is left as it is, and `remarks=true` says why
at the program):

- the program is a tree level (see the analysis for the exact shape) with an
  associative and commutative combine: integer `add mul min max bit_and
  bit_or bit_xor`, float `min max`; float `add` and `mul` only with
  `reassociate-floats=true` or when the program carries the attribute
  `{reassociate}` (`vyre.program @p {reassociate} workgroup_size ...`), since
  regrouping changes their rounding;
- its partials are unobservable (docs/cli.md, outputs and intermediates): an
  intermediate declared only by this level and the next one, which reduces it
  with the same combine, reading every element once as its leaf, and whose
  own partials are unobservable in turn, down to a level of one workgroup,
  whose single result is the whole reduction. A partials buffer that is an
  output, read by any other program, or reduced differently is refused;
- the sizes are static, and the new grid fits one axis (at most 65535
  workgroups) with k at most the workgroup's invocations.

k: `k=N` fixes it; `k=0` (the default) picks the largest power of two up to
`max-k` (16: the WGSL printer unrolls the loop) that still leaves
`min-workgroups` (1024: enough to fill a large GPU) workgroups, raised one at
a time where the grid would not fit one axis (2^28 elements in 256-wide
workgroups: k = 17, 61,681 workgroups, a leaf loop of 16 trips); a level with fewer than 2 x `min-workgroups`
workgroups is left alone. Levels are analysed before any is rewritten, so a
whole chain is judged on the original module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from vyre_xdsl.analysis.locals import declared_local_names
from vyre_xdsl.analysis.reductions import (
    TreeLevel,
    combine_identity,
    combine_refusal,
    partials_refusal,
    tree_level,
)
from vyre_xdsl.dialects.vyre import (
    TABLE_OPS,
    AddOp,
    AssignOp,
    ConstOp,
    EqOp,
    IfOp,
    InvocationIdOp,
    LetOp,
    LoadOp,
    LocalIdOp,
    LoopOp,
    LtOp,
    MulOp,
    ProgramOp,
    SelectOp,
    StoreOp,
    VarOp,
    WorkgroupIdOp,
    programs,
    ui32,
)
from vyre_xdsl.dispatch import (
    MAX_WORKGROUPS_PER_DIM,
    dispatch_grid,
    logical_element_count,
)
from vyre_xdsl.passes.vyre_fuse import print_remark

#: the program attribute that allows float add/mul reductions to be regrouped
REASSOCIATE_ATTR = "reassociate"
ACC = "__vyre_coarsen_acc"
INDEX = "__vyre_coarsen_k"


def launched_workgroups(program: ProgramOp) -> int:
    """The logical workgroups a program with a derived grid launches (the
    dispatch rule of docs/kernel-dialect.md, folded over y past 65535: every
    launched one counts)."""
    counts = {
        b.buffer_name: b.static_count
        for b in program.buffers()
        if not b.is_workgroup and b.static_count is not None
    }
    gx, gy, gz = dispatch_grid(logical_element_count(program, counts), program.workgroup)
    return gx * gy * gz


@dataclass(frozen=True)
class VyreCoarsenReductionsPass(ModulePass):
    """Coarsen the workgroup tree reductions of a module (see the module docstring)."""

    name = "vyre-coarsen-reductions"

    #: elements each invocation combines first; 0: chosen per level
    k: int = 0
    #: the largest k chosen automatically
    max_k: int = 16
    #: the fewest workgroups an automatic k leaves
    min_workgroups: int = 1024
    #: allow float add and mul reductions to be regrouped (changes rounding)
    reassociate_floats: bool = False
    #: print a located `remark:` on stderr for each program left alone, and why
    remarks: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        progs = programs(op)
        levels: dict[ProgramOp, TreeLevel] = {}
        refusals: dict[ProgramOp, str] = {}
        for program in progs:
            if any(b.static_count is None for b in program.buffers()):
                refusals[program] = "a buffer is runtime-sized"
                continue
            level = tree_level(program)
            if isinstance(level, TreeLevel):
                levels[program] = level
            else:
                refusals[program] = f"not a workgroup tree reduction: {level}"
        plans: list[tuple[TreeLevel, int, int]] = []
        for program, level in levels.items():
            why = self._refusal(level, levels, progs)
            if isinstance(why, str):
                refusals[program] = why
            else:
                plans.append((level, *why))
        for level, groups, k in plans:
            coarsen(level, groups, k)
        if self.remarks:
            for program in progs:
                if program in refusals:
                    print_remark(program, f"not coarsened: {refusals[program]}")

    def _refusal(
        self, level: TreeLevel, levels: dict[ProgramOp, TreeLevel], progs: list[ProgramOp]
    ) -> str | tuple[int, int]:
        """Why `level` stays as it is, or (its workgroups, k)."""
        program = level.program
        allowed = self.reassociate_floats or REASSOCIATE_ATTR in program.attributes
        why = combine_refusal(level.combine, level.element, allowed)
        if why is not None:
            return why
        # workgroups whose partial lands in the buffer (a partial stored past its
        # end is dropped, so its leaves must not be mixed into the others)
        counts = [b.static_count for p in progs if (b := p.buffer(level.partials)) is not None]
        if None in counts:
            return f"its partials @{level.partials} are runtime-sized"
        groups = min(launched_workgroups(program), max(counts))
        if groups <= 1:
            return "it runs one workgroup (or keeps one partial)"
        why = partials_refusal(level, levels, progs, launched_workgroups)
        if why is not None:
            return f"its partials are observable: {why}"
        k = self.k or self._auto_k(groups)
        if self.k == 1:
            return "k = 1 changes nothing"
        if k < 2:
            return (
                f"{groups} workgroups; fewer than 2 x min-workgroups "
                f"({self.min_workgroups}) are left alone"
            )
        if k > level.width:
            return f"k = {k} is more than the {level.width} invocations of a workgroup"
        if math.ceil(groups / k) > MAX_WORKGROUPS_PER_DIM:
            return f"k = {k} leaves {math.ceil(groups / k)} workgroups, more than one axis holds"
        if groups * level.width + k * level.width >= 1 << 32:
            return "its invocation ids would pass 2^32"
        return groups, k

    def _auto_k(self, groups: int) -> int:
        """The largest power of two up to max-k that leaves min-workgroups, raised
        one at a time until the grid fits one axis (the smallest such k keeps the
        leaf loop short enough to print unrolled); 1: leave the level alone."""
        k = 1
        while k * 2 <= self.max_k and math.ceil(groups / (k * 2)) >= self.min_workgroups:
            k *= 2
        while math.ceil(groups / k) > MAX_WORKGROUPS_PER_DIM:
            k += 1
        return k


class _Emitter:
    """Appends ops before `anchor` (or at the end of `block`), returning results."""

    def __init__(self, anchor: Operation | None = None, block=None):
        self.anchor, self.block = anchor, block

    def add(self, op: Operation) -> SSAValue:
        if self.anchor is not None:
            Rewriter.insert_op(op, InsertPoint.before(self.anchor))
        else:
            self.block.add_op(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def const(self, value, ty=ui32) -> SSAValue:
        return self.add(ConstOp(value, ty))


def coarsen(level: TreeLevel, groups: int, k: int) -> None:
    """Rewrite `level` to combine k leaves per invocation on ceil(groups / k)
    workgroups, `groups` being the original workgroups whose partials were kept."""
    program, width = level.program, level.width
    new_groups = math.ceil(groups / k)
    program.properties["grid"] = DenseArrayBase.from_list(i32, [new_groups, 1, 1])
    taken = declared_local_names(program)
    acc, index = _fresh(ACC, taken), _fresh(INDEX, taken)
    _gather(level, acc, index, new_groups * width, groups * width, k)
    _write_partials(level, groups, new_groups, k)


def _fresh(base: str, taken: set[str]) -> str:
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name


def _gather(level: TreeLevel, acc: str, index: str, stride: int, limit: int, k: int) -> None:
    """acc = leaf(i); acc = acc op leaf(i + j * stride) for j in 1 .. k-1 where
    below `limit`; then the tile gets acc."""
    store = level.leaf_store
    out = _Emitter(store)
    element = level.element
    out.add(LetOp(acc, store.value))
    loop = LoopOp(index, out.const(1), out.const(k), [])
    out.add(loop)
    body = _Emitter(block=loop.body.block)
    j = body.add(VarOp(index, ui32))
    base = body.add(InvocationIdOp("x"))
    shifted = body.add(AddOp(base, body.add(MulOp(j, body.const(stride)))))
    mapping: dict[SSAValue, SSAValue] = {}
    varying: set[Operation] = set()
    for op in level.leaf_ops:
        if isinstance(op, InvocationIdOp) or any(v.owner in varying for v in op.operands):
            varying.add(op)
    for op in level.leaf_ops:
        if op not in varying:
            continue
        if isinstance(op, InvocationIdOp):
            mapping[op.results[0]] = shifted
            continue
        clone = op.clone(value_mapper=mapping)
        body.add(clone)
        for old, new in zip(op.results, clone.results):
            mapping[old] = new
    leaf = mapping.get(store.value, store.value)
    current = body.add(VarOp(acc, element))
    combined = body.add(TABLE_OPS[level.combine](current, leaf))
    if k * stride > limit:  # the last workgroups would read past the original invocations
        inside = body.add(LtOp(shifted, body.const(limit)))
        combined = body.add(SelectOp(inside, combined, current))
    body.add(AssignOp(acc, combined))
    total = out.add(VarOp(acc, element))
    store.operands[1] = total


def _write_partials(level: TreeLevel, groups: int, new_groups: int, k: int) -> None:
    """Workgroup w: slot w gets the partial, slots w + j * new_groups (j = 1 ...
    k-1, below `groups`) the identity or, for an idempotent combine, the partial."""
    final = level.final
    out = _Emitter(final)
    lane = out.add(LocalIdOp("x"))
    writers = IfOp(out.add(LtOp(lane, out.const(k))), [])
    out.add(writers)
    body = _Emitter(block=writers.then_region.block)
    value = body.add(LoadOp(level.tile, body.const(0), level.element))
    identity = combine_identity(level.combine, level.element)
    if identity is not None:
        first = body.add(EqOp(lane, body.const(0)))
        value = body.add(SelectOp(first, value, body.const(identity, level.element)))
    slot = body.add(
        AddOp(body.add(WorkgroupIdOp("x")), body.add(MulOp(lane, body.const(new_groups))))
    )
    if new_groups * k > groups:
        guard = IfOp(body.add(LtOp(slot, body.const(groups))), [])
        body.add(guard)
        body = _Emitter(block=guard.then_region.block)
    body.add(StoreOp(level.partials, slot, value))
    condition = final.cond.owner
    final.detach()
    final.erase()
    if isinstance(condition, Operation) and not condition.results[0].uses:
        condition.detach()
        condition.erase()
