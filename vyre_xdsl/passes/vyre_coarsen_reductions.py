"""`vyre-coarsen-reductions`: each invocation of a workgroup tree reduction first
combines k elements, each invocation of a workgroup block scan scans k
consecutive elements, and the grid shrinks by k.

```
vyre-opt -p vyre-coarsen-reductions in.mlir
vyre-opt -p 'vyre-coarsen-reductions{k=16}' in.mlir
vyre-opt -p 'vyre-coarsen-reductions{reassociate-floats=true remarks=true}' in.mlir
vyre-opt -p 'vyre-coarsen-reductions{inputs-only=true},vyre-fuse,vyre-coarsen-reductions' in.mlir
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

Scans. A program that `vyre_xdsl.analysis.reductions.scan_level` recognizes
(a Hillis-Steele inclusive scan of each block of W leaves in workgroup
memory, stored back at `invocation_id x`, the block's total optionally at
`workgroup_id x` by the last lane) is rewritten so that a workgroup covers k
blocks: invocation l stages the leaves of elements l, l + W, ... of its
workgroup in workgroup memory (coalesced; element q at slot
q ^ ((q >> 5) & (k - 1)) against bank conflicts, so that every slot is stored
before the first barrier and lowering need not zero the area; q + q / 32
where k does not divide 32 or W is no multiple of 32), scans its k
consecutive elements l k ... l k + k - 1 serially, the invocation totals are
scanned in segments of W / k (one per block, one barrier per step, in a
workgroup buffer of their own), each invocation combines its segment's exclusive prefix
with its k prefixes and the results go back out through the staging area;
the last invocation of a segment stores the block's total. Every element
and total gets the value it had (float add/mul: regrouped, so only with the
permission above), so the programs reading them are unchanged and no chain
analysis is needed. k: `k=N` (dividing W), or the largest power of two up to
max-k dividing W that leaves min-workgroups and keeps the workgroup memory
within the 16384 bytes every device has (k = 8 for W = 256, f32); the grid
folds into y past 65535 workgroups.

Before and after fusion. `inputs-only=true` rewrites only the levels (tree
levels and scan levels) whose leaf reads nothing but module inputs: buffers
that no earlier program writes (stores or atomics). No producer can fuse into
such a level, but an independent program next to it can (`vyre-fuse` merges
it horizontally for the launch it saves), and the merged program is no tree
level any more. Coarsened, the level has an explicit grid, which `vyre-fuse`
never fuses. A level fed by an earlier program (`y = x * x`, then the tree
over `y`) is left for a run of the plain pass after fusion, which first merges
the producer into it (its leaf becomes `x[i] * x[i]`): the pipeline with
`fuse=true` runs `vyre-coarsen-reductions{inputs-only=true}`, `vyre-fuse`,
`vyre-coarsen-reductions` (docs/cli.md). With `remarks=true` a level left for
later says so. The levels after the first of a tree read the partials an
earlier level writes, so they are left for the second run too, which finds
the first level already coarsened (it has an explicit grid: no tree level)
and judges the rest as usual.

```mlir
// vyre-coarsen-reductions{inputs-only=true}: @level0 coarsened, @level0y not
vyre.program @beside ...  { w[i] = x[i] * x[i] }   // stays apart after vyre-fuse
vyre.program @level0 ...  { leaf x[i] ... }         // grid [1024, 1, 1]: coarsened now
vyre.program @square ...  { y[i] = x[i] * x[i] }   // fuses into @level0y, which the
vyre.program @level0y ... { leaf y[i] ... }         // plain pass coarsens after vyre-fuse
```

On subgroups. With `subgroups=true` (the target runs subgroup ops: the
pipeline takes it from the device's profile) a scan's segmented scan of the
invocation totals (step 3 above, and the reduce half of reduce-then-scan
below) runs on `vyre.subgroup_shuffle`: a Hillis-Steele scan within pieces of
P = min(subgroup size, W / k) invocations, the inclusive values stored in
workgroup memory, one barrier, then each invocation combines the totals of the
pieces before its own in the segment (none when a subgroup holds a whole
segment: 32-wide subgroups and segments of 32) with the inclusive value of the
lane before it. A subgroup size that is no power of two gives P = 1: every
total then goes through workgroup memory. So the result is the same for every
subgroup size; it takes a combine with an identity and segments whose length
is a power of two (otherwise the barrier form stays).

```mlir
%size = vyre.subgroup_size                       // P = min(size, 32) (a power of two)
%sub = vyre.subgroup_local_id                    // in_piece = sub & (P - 1)
%up = vyre.subgroup_shuffle %t, %sub_minus_1     // 5 steps: t = in_piece >= off ? up + t : t
vyre.store @tile_totals[%lane] = %t : f32
vyre.barrier                                     // the only one of the scan of totals
vyre.loop @j = %c0 to %pieces_before { ... }     // 0 trips when P = 32
```

Reduce-then-scan. When a scan level's block scans (`@local`) are an
intermediate that only one later program reads, and that program is the
add-back `dst[i] = local[i] op carried[i / W - 1]` (block 0: the identity;
`vyre_xdsl.analysis.reductions.add_back`), with the same combine, W and
element count, and no program in between writes what the level's leaf reads,
the pair moves the data three times instead of four: the level, coarsened by
k, stores only its block totals (invocation p of a block's segment combines
its elements p, p + W / k, ...: coalesced, no staging area), and the add-back
becomes the coarsened block scan of the level's leaves, each element
combined with the carried prefix of its block, stored into `dst`; `@local`
disappears. Otherwise the level is coarsened alone and `remarks=true` says
why.

```mlir
// before: 1048576 workgroups of 256          // after: grid [43691, 3, 1] (k = 8)
%v = vyre.load @x[%i] : f32                    // tile[slot(l + j 256)] = x[start + l + j 256]
vyre.store @tile[%l] = %v : f32                // barrier; 8 serial prefixes of tile[slot(8 l + j)]
vyre.loop @step = %c0 to %c8 {                 // segmented scan of the 256 totals (5 steps)
  // read, barrier, write, barrier             // tile[slot(8 l + j)] = exclusive + prefix j
}                                              // barrier; local0[start + l + j 256] = tile[...]
vyre.store @local0[%i] = %r : f32              // if l % 32 == 31 { sums0[block] = total }
```
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, i32, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from vyre_xdsl.analysis.accesses import buffers_written
from vyre_xdsl.analysis.locals import declared_local_names
from vyre_xdsl.analysis.reductions import (
    AddBack,
    ScanLevel,
    TreeLevel,
    add_back,
    combine_identity,
    combine_refusal,
    partials_refusal,
    scan_level,
    sole_reader,
    tree_level,
)
from vyre_xdsl.dialects.vyre import (
    TABLE_OPS,
    AddOp,
    AndOp,
    AssignOp,
    BarrierOp,
    BitAndOp,
    BitXorOp,
    BufferOp,
    ConstOp,
    DivOp,
    EqOp,
    GeOp,
    IfOp,
    InvocationIdOp,
    LetOp,
    LoadOp,
    LocalIdOp,
    LoopOp,
    LtOp,
    MinOp,
    ModOp,
    MulOp,
    NeOp,
    ProgramOp,
    SelectOp,
    ShrOp,
    StoreOp,
    SubgroupLocalIdOp,
    SubgroupShuffleOp,
    SubgroupSizeOp,
    SubOp,
    VarOp,
    WorkgroupIdOp,
    element_info,
    programs,
    ui32,
)
from vyre_xdsl.dispatch import (
    MAX_WORKGROUPS_PER_DIM,
    dispatch_grid,
    fold_grid,
    logical_element_count,
)
from vyre_xdsl.passes.vyre_fuse import print_remark
from vyre_xdsl.target_profile import TargetProfile

#: the program attribute that allows float add/mul reductions to be regrouped
REASSOCIATE_ATTR = "reassociate"
#: the workgroup memory a coarsened scan may use: what every device has (the
#: portable profile's limit)
SCAN_STORAGE_BYTES = TargetProfile().max_workgroup_storage_bytes
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
    """Coarsen the workgroup tree reductions and block scans of a module (see the
    module docstring)."""

    name = "vyre-coarsen-reductions"

    #: elements each invocation combines first (a scan: consecutive elements each
    #: invocation scans); 0: chosen per level
    k: int = 0
    #: the largest k chosen automatically
    max_k: int = 16
    #: the fewest workgroups an automatic k leaves
    min_workgroups: int = 1024
    #: allow float add and mul reductions to be regrouped (changes rounding)
    reassociate_floats: bool = False
    #: rewrite only the levels whose leaf reads module inputs (buffers no earlier
    #: program writes): the run before vyre-fuse
    inputs_only: bool = False
    #: print a located `remark:` on stderr for each program left alone, and why
    remarks: bool = False
    #: the target runs subgroup ops: block scans combine their invocation totals
    #: on subgroup shuffles (one barrier instead of one per step)
    subgroups: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.remarks and self.leaves_unchanged(op):
            return  # the cheap check first: the pipeline runs this pass on every module
        progs = programs(op)
        levels: dict[ProgramOp, TreeLevel] = {}
        refusals: dict[ProgramOp, str] = {}
        scans: list[ScanLevel] = []
        for program in progs:
            if any(b.static_count is None for b in program.buffers()):
                refusals[program] = "a buffer is runtime-sized"
                continue
            level = tree_level(program)
            if isinstance(level, TreeLevel):
                levels[program] = level
                continue
            scan = scan_level(program)
            if isinstance(scan, ScanLevel):
                scans.append(scan)
            else:
                refusals[program] = (
                    f"neither a workgroup tree reduction nor a workgroup scan: {level}"
                    if level == scan
                    else f"not a workgroup tree reduction ({level}) nor a workgroup scan ({scan})"
                )
        fed = self.fed_levels(progs, [*levels.values(), *scans]) if self.inputs_only else {}
        refusals.update(fed)
        plans: list[tuple[TreeLevel, int, int]] = []
        for program, level in levels.items():
            if program in fed:
                continue
            why = self._refusal(level, levels, progs)
            if isinstance(why, str):
                refusals[program] = why
            else:
                plans.append((level, *why))
        scan_plans: list[tuple[ScanLevel, int, int]] = []
        for scan in scans:
            if scan.program in fed:
                continue
            why = self.scan_plan(scan)
            if isinstance(why, str):
                refusals[scan.program] = why
            else:
                scan_plans.append((scan, *why))
        # reduce-then-scan: a scan whose block scans only its add-back reads
        pairs: list[tuple[ScanLevel, AddBack, int, int]] = []
        alone: list[tuple[ScanLevel, int, int]] = []
        notes: dict[ProgramOp, str] = {}
        for scan, groups, k in scan_plans:
            back = self.add_back_of(scan, progs)
            if isinstance(back, AddBack):
                pairs.append((scan, back, groups, k))
                refusals.pop(back.program, None)
            else:
                alone.append((scan, groups, k))
                notes[scan.program] = back
        for level, groups, k in plans:
            coarsen(level, groups, k)
        for scan, groups, k in alone:
            coarsen_scan(scan, groups, k, subgroups=self.subgroups)
        for scan, back, groups, k in pairs:
            reduce_then_scan(scan, back, groups, k, self.subgroups)
        if self.remarks:
            for program in progs:
                if program in refusals:
                    print_remark(program, f"not coarsened: {refusals[program]}")
                elif program in notes:
                    print_remark(program, f"scan not split into reduce-then-scan: {notes[program]}")

    @staticmethod
    def fed_levels(
        progs: Sequence[ProgramOp], found: Sequence[TreeLevel | ScanLevel]
    ) -> dict[ProgramOp, str]:
        """The levels among `found` whose leaf reads a buffer that an earlier
        program writes, each with the remark that says so: what `inputs-only`
        leaves for the run after fusion."""
        writer: dict[str, ProgramOp] = {}  # buffer -> the last program so far writing it
        earlier: dict[ProgramOp, dict[str, ProgramOp]] = {}
        for program in progs:
            earlier[program] = dict(writer)
            writer.update(dict.fromkeys(buffers_written(program), program))
        fed: dict[ProgramOp, str] = {}
        for level in found:
            before = earlier[level.program]
            reads = sorted(
                op.buffer_name
                for op in level.leaf_ops
                if isinstance(op, LoadOp) and op.buffer_name in before
            )
            if reads:
                by = before[reads[0]].sym_name.data
                fed[level.program] = (
                    f"left for after fusion (inputs-only): its leaf reads @{reads[0]}, "
                    f"which @{by} writes before it"
                )
        return fed

    def leaves_unchanged(self, op: ModuleOp) -> bool:
        """No program has both a workgroup buffer and a barrier (every tree level
        and block scan has both): nothing to coarsen."""
        return not any(
            any(b.is_workgroup for b in program.buffers())
            and any(isinstance(o, BarrierOp) for o in program.walk())
            for program in programs(op)
        )

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

    def scan_plan(self, scan: ScanLevel) -> str | tuple[int, int]:
        """Why the scan level stays as it is, or (its workgroups, k): what this
        pass does with it."""
        program, width = scan.program, scan.width
        allowed = self.reassociate_floats or REASSOCIATE_ATTR in program.attributes
        why = combine_refusal(scan.combine, scan.element, allowed)
        if why is not None:
            return why
        groups = launched_workgroups(program)
        if groups <= 1:
            return "it runs one workgroup"
        if self.k == 1:
            return "k = 1 changes nothing"
        info = element_info(scan.element)
        assert info is not None
        k = self.k or self._auto_scan_k(groups, width, info.bits // 8)
        if k < 2:
            return (
                f"{groups} workgroups; fewer than 2 x min-workgroups "
                f"({self.min_workgroups}) are left alone"
            )
        if width % k:
            return f"k = {k} does not divide the {width} elements of a block"
        storage = scan_tile_count(width, k) * (info.bits // 8)
        if storage > SCAN_STORAGE_BYTES:
            return (
                f"k = {k} needs {storage} bytes of workgroup memory, more than the "
                f"{SCAN_STORAGE_BYTES} every device has"
            )
        gx, gy, gz = scan_grid(groups, k)
        if gy > MAX_WORKGROUPS_PER_DIM:
            return f"k = {k} leaves {math.ceil(groups / k)} workgroups, more than two axes hold"
        if gx * gy * gz * k * width >= 1 << 32:
            return "its element indices would pass 2^32"
        return groups, k

    def add_back_of(self, scan: ScanLevel, progs: list[ProgramOp]) -> AddBack | str:
        """The add-back that alone reads `scan`'s block scans, when the pair may
        become reduce-then-scan (see the module docstring), or why not."""
        program, width = scan.program, scan.width
        if scan.totals is None:
            return "it stores no block totals"
        name = scan.scanned
        consumer = sole_reader(progs, program, name, "the block scans", "the scan and its add-back")
        if isinstance(consumer, str):
            return consumer
        mine, theirs = program.buffer(name), consumer.buffer(name)
        assert mine is not None and theirs is not None
        back = add_back(consumer, name, scan.combine, scan.element, width)
        if not isinstance(back, AddBack):
            return f"@{name} is read by @{consumer.sym_name.data}, not an add-back: {back}"
        dst = consumer.buffer(back.dst)
        assert dst is not None
        n = mine.static_count
        assert n is not None
        if theirs.static_count != n or dst.static_count != n:
            return f"@{name} and @{back.dst} do not have the same {n} elements everywhere"
        if launched_workgroups(program) * width < n:
            return f"it scans fewer than the {n} elements of @{name}"
        if launched_workgroups(consumer) * consumer.workgroup[0] < n:
            return f"@{consumer.sym_name.data} writes fewer than the {n} elements of @{back.dst}"
        extra = sorted(
            b.buffer_name
            for b in consumer.buffers()
            if b.buffer_name not in (name, back.carried, back.dst)
        )
        if extra:
            # the rewritten add-back would not declare it: the module's interface
            # (decided by the declarations) could change
            return f"@{consumer.sym_name.data} also declares @{extra[0]}"
        reads = {op.buffer_name for op in scan.leaf_ops if isinstance(op, LoadOp)}
        taken = {b.buffer_name for b in consumer.buffers()}
        clash = (reads | {scan.tile}) & (taken - {name})
        if clash:
            return f"the add-back declares @{sorted(clash)[0]}, which the scan reads or uses"
        for between in progs[progs.index(program) + 1 : progs.index(consumer)]:
            for read in sorted(reads):
                decl = between.buffer(read)
                if decl is not None and decl.access_mode not in ("read_only", "uniform"):
                    return (
                        f"@{read}, which the scan reads, is {decl.access_mode} in "
                        f"@{between.sym_name.data}, before the add-back"
                    )
        return back

    def _auto_scan_k(self, groups: int, width: int, element_bytes: int) -> int:
        """The largest power of two up to max-k that divides the block, fits the
        workgroup memory every device has and leaves min-workgroups (the grid
        folds into y past one axis); 1: leave it alone."""
        k = 1
        while (
            k * 2 <= self.max_k
            and width % (k * 2) == 0
            and scan_tile_count(width, k * 2) * element_bytes <= SCAN_STORAGE_BYTES
            and math.ceil(groups / (k * 2)) >= self.min_workgroups
        ):
            k *= 2
        return k

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

    def __init__(self, anchor: Operation | None = None, block=None, share: bool = False):
        self.anchor, self.block = anchor, block
        #: constants already emitted (value, type) -> result, when they are shared
        self.constants: dict[tuple, SSAValue] | None = {} if share else None

    def add(self, op: Operation) -> SSAValue:
        if self.anchor is not None:
            Rewriter.insert_op(op, InsertPoint.before(self.anchor))
        else:
            self.block.add_op(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def const(self, value, ty=ui32) -> SSAValue:
        if self.constants is None:
            return self.add(ConstOp(value, ty))
        key = (repr(value), ty)  # repr: -0.0 and 0.0 are different constants
        if key not in self.constants:
            self.constants[key] = self.add(ConstOp(value, ty))
        return self.constants[key]


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


def clone_leaf(
    leaf_ops: Sequence[Operation],
    varying: set[Operation],
    mapping: dict[SSAValue, SSAValue],
    index: SSAValue,
    emitter: _Emitter,
) -> None:
    """Emit the ops of a leaf that depend on the invocation, for the element at
    `index` (in place of `invocation_id x`), recording each clone's results in
    `mapping` (which holds the leaf's invocation-independent values already)."""
    for op in leaf_ops:
        if op not in varying:
            continue
        if isinstance(op, InvocationIdOp):
            mapping[op.results[0]] = index
            continue
        clone = op.clone(value_mapper=mapping)
        emitter.add(clone)
        mapping.update(zip(op.results, clone.results))


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
    clone_leaf(level.leaf_ops, varying, mapping, shifted, body)
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


# ---------------------------------------------------------------- scans


def scan_grid(groups: int, k: int) -> tuple[int, int, int]:
    """The grid of a scan level coarsened by k: ceil(groups / k) workgroups,
    folded into y past one axis."""
    return fold_grid(math.ceil(groups / k))


def _padded(q: int) -> int:
    """The staging slot of element q: one spare word after every 32, so that
    invocations reading k consecutive elements hit different banks."""
    return q + q // 32


def swizzled_staging(width: int, k: int) -> bool:
    """Whether a scan coarsened by k stages its elements swizzled, element q at
    slot q ^ ((q >> 5) & (k - 1)): exactly k x width slots, every one stored by
    the coalesced loads (so lowering need not zero them first), the k consecutive
    elements an invocation reads in k banks; that takes k a power of two dividing
    32 and width a multiple of 32. Otherwise q + q / 32, one spare slot after every
    32, never stored."""
    return 32 % k == 0 and width % 32 == 0


def staging_count(width: int, k: int) -> int:
    """Elements of the staging area of a scan coarsened by k."""
    return k * width if swizzled_staging(width, k) else _padded(k * width - 1) + 1


def totals_count(width: int, k: int, subgroups: bool = False) -> int:
    """Elements the scan of the invocation totals uses: two halves of width (one
    with `subgroups`: the inclusive values of the subgroup pieces); none when a
    block is one invocation's."""
    return (1 if subgroups else 2) * width if width // k > 1 else 0


def scan_tile_count(width: int, k: int, staged: bool = True, subgroups: bool = False) -> int:
    """Elements of workgroup memory a scan coarsened by k uses: the staging area
    (when loads or stores are `staged`) and the scan of the invocation totals."""
    area = staging_count(width, k) if staged else 0
    return max(1, area + totals_count(width, k, subgroups))


def subgroup_segments(width: int, k: int, combine: str, element) -> bool:
    """Whether the segmented scan of a scan coarsened by k can run on subgroup
    shuffles (`coarsen_scan(..., subgroups=True)`): a segment of width / k > 1
    invocations that is a power of two (so that subgroups, whose size is a power
    of two, either hold whole segments or tile them), and a combine with an
    identity."""
    segment = width // k
    return (
        segment > 1
        and segment & (segment - 1) == 0
        and (combine_identity(combine, element) is not None)
    )


def coarsen_scan(
    scan: ScanLevel,
    groups: int,
    k: int,
    grid: tuple[int, int, int] | None = None,
    stage_loads: bool = True,
    stage_stores: bool = True,
    prefixes_of: str | None = None,
    store_scan: bool = True,
    subgroups: bool = False,
) -> None:
    """Rewrite `scan` so that each invocation scans k consecutive leaves in
    registers, the workgroup scans its invocations' totals in segments of
    width / k (one segment per block), and each invocation writes its k results
    combined with its segment's exclusive prefix; `groups` are the original
    workgroups (blocks). `grid`: the launch grid (`scan_grid` when None; any
    grid of at least ceil(groups / k) workgroups on x and y, z = 1).

    `stage_loads`, `stage_stores` (the pass's form: both): loads and stores
    stay coalesced, the workgroup's k x width leaves going through workgroup
    memory (invocation l loads elements l, l + width, ..., then reads its k
    consecutive ones back; the results go the other way). Without, invocation
    l loads (stores) its k consecutive elements itself, neighbouring
    invocations k elements apart: fewer workgroup memory accesses and
    barriers, less coalesced global ones.

    `prefixes_of` (reduce-then-scan's second half): every element of block b > 0
    is combined with `prefixes_of[b - 1]`, the scanned total of the blocks before it.
    `store_scan=False` (its first half): only the block totals are stored.

    `subgroups` (where `subgroup_segments` allows it): the segmented scan of the
    invocation totals runs on subgroup shuffles within pieces of
    P = min(subgroup size, segment) invocations (P = 1, all through workgroup
    memory, when the subgroup size is not a power of two), and one barrier
    passes the piece totals on within the segment, instead of a barrier per
    Hillis-Steele step (`_subgroup_segmented_scan`)."""
    if not store_scan:
        # only the totals: each invocation combines elements of its block strided by
        # the segment (coalesced without staging; the combine commutes)
        stage_loads = stage_stores = False
    staged = stage_loads or stage_stores
    program, width = scan.program, scan.width
    segment = width // k
    subgroups = subgroups and subgroup_segments(width, k, scan.combine, scan.element)
    gx, gy, gz = grid or scan_grid(groups, k)
    assert gz == 1 and gx * gy * k >= groups
    program.properties["grid"] = DenseArrayBase.from_list(i32, [gx, gy, gz])
    tile = program.buffer(scan.tile)
    assert tile is not None
    element = scan.element
    # the scan of the totals: in the tile when nothing is staged, else in a
    # workgroup buffer of its own (the staging area stays stored in full first)
    totals_tile = scan.tile
    if not staged:
        tile.properties["count"] = IntegerAttr(max(1, totals_count(width, k, subgroups)), i64)
    else:
        tile.properties["count"] = IntegerAttr(staging_count(width, k), i64)
        if segment > 1:
            taken = {b.buffer_name for b in program.buffers()} | {scan.scanned}
            taken |= {prefixes_of} if prefixes_of is not None else set()
            totals_tile = _fresh(f"{scan.tile}_totals", taken)
            count = totals_count(width, k, subgroups)
            Rewriter.insert_op(
                BufferOp(totals_tile, "workgroup", element, count), InsertPoint.after(tile)
            )
    block = program.body.block
    declared = list(program.buffers())
    old = [op for op in block.ops if op not in declared]
    out = _Emitter(block=block, share=True)
    combine = TABLE_OPS[scan.combine]

    def named(value: SSAValue, name: str) -> SSAValue:
        value.name_hint = name
        return value

    swizzled = swizzled_staging(width, k)

    def slot(q: SSAValue) -> SSAValue:
        """The staging slot of element q of the workgroup (`swizzled_staging`)."""
        run = out.add(ShrOp(q, out.const(5)))
        if swizzled:
            return out.add(BitXorOp(q, out.add(BitAndOp(run, out.const(k - 1)))))
        return out.add(AddOp(q, run))

    # the workgroup's first element: (x + y * grid x) * k * width
    lane = named(out.add(LocalIdOp("x")), "lane")
    group = out.add(WorkgroupIdOp("x"))
    if gy > 1:
        row = out.add(MulOp(out.add(WorkgroupIdOp("y")), out.const(gx)))
        group = out.add(AddOp(group, row))
    start = named(out.add(MulOp(group, out.const(k * width))), "start")
    # the leaf's slice, cloned per element (what does not depend on the
    # invocation once)
    varying: set[Operation] = set()
    for op in scan.leaf_ops:
        if isinstance(op, InvocationIdOp) or any(v.owner in varying for v in op.operands):
            varying.add(op)
    shared: dict[SSAValue, SSAValue] = {}
    for op in scan.leaf_ops:
        if op not in varying:
            clone = op.clone(value_mapper=shared)
            out.add(clone)
            shared.update(zip(op.results, clone.results))

    def leaf_at(index: SSAValue) -> SSAValue:
        mapping = dict(shared)
        clone_leaf(scan.leaf_ops, varying, mapping, index, out)
        return mapping.get(scan.leaf_store.value, scan.leaf_store.value)

    own = named(out.add(MulOp(lane, out.const(k))), "own")
    prefixes: list[SSAValue] = []
    strided: list[tuple[SSAValue, SSAValue]] = []  # (element, its staging slot)
    consecutive: list[SSAValue] = []  # the staging slots of elements l k ... l k + k - 1

    def staging_slots() -> None:
        # invocation l: elements start + l + j * width (coalesced), and the slots of
        # elements l k + j of the workgroup
        first_element = named(out.add(AddOp(start, lane)), "element")
        lane_slot = slot(lane)
        for j in range(k):
            if j == 0:
                index, at = first_element, lane_slot
            else:
                index = out.add(AddOp(first_element, out.const(j * width)))
                if width % 32 == 0 and not swizzled:
                    # slot(lane + j width) = slot(lane) + slot(j width)
                    at = out.add(AddOp(lane_slot, out.const(_padded(j * width))))
                else:
                    at = slot(out.add(AddOp(lane, out.const(j * width))))
            strided.append((index, at))
        if swizzled:
            # l k ... l k + k - 1 share one run of 32 slots: one swizzle for all
            swizzle = out.add(BitAndOp(out.add(ShrOp(own, out.const(5))), out.const(k - 1)))
            for j in range(k):
                at = own if j == 0 else out.add(AddOp(own, out.const(j)))
                consecutive.append(out.add(BitXorOp(at, swizzle)))
            return
        own_slot = slot(own)
        for j in range(k):
            if j == 0:
                at = own_slot
            elif 32 % k == 0:  # l k ... l k + k - 1 share one run of 32 slots
                at = out.add(AddOp(own_slot, out.const(j)))
            else:
                at = slot(out.add(AddOp(own, out.const(j))))
            consecutive.append(at)

    if staged:
        staging_slots()
    base = named(out.add(AddOp(start, own)), "base")
    block_of_base: SSAValue | None = None

    def block_index() -> SSAValue:
        # the block of the invocation's elements (k divides the block)
        nonlocal block_of_base
        if block_of_base is None:
            if width & (width - 1) == 0:
                block_of_base = out.add(ShrOp(base, out.const(width.bit_length() - 1)))
            else:
                block_of_base = out.add(DivOp(base, out.const(width)))
            named(block_of_base, "block")
        return block_of_base

    if prefixes_of is not None:
        # the carried prefix of the blocks before, loaded first: its latency
        # overlaps the leaves' loads and the scan
        owner = block_index()
        later = named(out.add(NeOp(owner, out.const(0))), "later")
        blocks_before = out.add(LoadOp(prefixes_of, out.add(SubOp(owner, out.const(1))), element))
        named(blocks_before, "prefix")
    elements = [base]  # elements l k + j of the workgroup, where loaded or stored directly
    position: SSAValue | None = None

    def position_in_segment() -> SSAValue:
        nonlocal position
        if position is None:
            if segment & (segment - 1) == 0:
                position = out.add(BitAndOp(lane, out.const(segment - 1)))
            else:
                position = out.add(ModOp(lane, out.const(segment)))
            named(position, "position")
        return position

    if not store_scan and segment > 1:
        # invocation p of the segment of block b: elements b W + p + m W / k
        lead = out.add(SubOp(base, out.add(MulOp(position_in_segment(), out.const(k - 1)))))
        elements = [named(lead, "lead")]
        elements += [out.add(AddOp(lead, out.const(m * segment))) for m in range(1, k)]
    elif not (stage_loads and stage_stores):
        elements += [out.add(AddOp(base, out.const(j))) for j in range(1, k)]
    if stage_loads:
        # coalesced: invocation l stages the leaves of elements start + l + j * width,
        # then scans elements l k ... l k + k - 1 of the workgroup serially
        for index, at in strided:
            out.add(StoreOp(scan.tile, at, leaf_at(index)))
        out.add(BarrierOp())
        for j, at in enumerate(consecutive):
            value = out.add(LoadOp(scan.tile, at, element))
            prefixes.append(value if j == 0 else out.add(combine(prefixes[-1], value)))
    else:
        for index in elements:
            value = leaf_at(index)
            prefixes.append(value if not prefixes else out.add(combine(prefixes[-1], value)))
    # the segmented scan of the invocation totals: Hillis-Steele, ping-pong
    # between two halves past the staging area (one barrier per step)
    wanted = prefixes if store_scan else prefixes[-1:]  # without the scan: the total
    results = wanted
    if subgroups:
        carried = _subgroup_segmented_scan(
            scan, out, totals_tile, position_in_segment(), lane, prefixes[-1], segment
        )
        results = [out.add(combine(carried, value)) for value in wanted]
    elif segment > 1:
        position = position_in_segment()
        halves_at = [lane, out.add(AddOp(lane, out.const(width)))]
        out.add(StoreOp(totals_tile, halves_at[0], prefixes[-1]))
        out.add(BarrierOp())
        half, offset = 0, 1
        while offset < segment:
            source, target = halves_at[half], halves_at[1 - half]
            has = out.add(GeOp(position, out.const(offset)))
            back = out.add(SelectOp(has, out.const(offset), out.const(0)))
            current = out.add(LoadOp(totals_tile, source, element))
            partner = out.add(LoadOp(totals_tile, out.add(SubOp(source, back)), element))
            both = out.add(combine(partner, current))
            out.add(StoreOp(totals_tile, target, out.add(SelectOp(has, both, current))))
            out.add(BarrierOp())
            half, offset = 1 - half, offset * 2
        # the exclusive prefix of the segment: the inclusive one of lane - 1
        first = named(out.add(EqOp(position, out.const(0))), "first")
        back = out.add(SelectOp(first, out.const(0), out.const(1)))
        before = out.add(LoadOp(totals_tile, out.add(SubOp(halves_at[half], back)), element))
        named(before, "exclusive")
        identity = combine_identity(scan.combine, element)
        if identity is not None:
            # the first of a segment combines the identity (e op x == x, bit for bit)
            carried = out.add(SelectOp(first, out.const(identity, element), before))
            named(carried, "carried")
            results = [out.add(combine(carried, value)) for value in wanted]
        else:  # min, max: no identity on every type; the first keeps its prefixes
            results = [
                out.add(SelectOp(first, value, out.add(combine(before, value)))) for value in wanted
            ]
    if prefixes_of is not None:
        # combine the scanned total of the blocks before (none for block 0)
        identity = combine_identity(scan.combine, element)
        if identity is not None:
            prefix = out.add(SelectOp(later, blocks_before, out.const(identity, element)))
            results = [out.add(combine(value, prefix)) for value in results]
        else:
            results = [
                out.add(SelectOp(later, out.add(combine(value, blocks_before)), value))
                for value in results
            ]
    if stage_stores:
        # the results go back through the staging area (each invocation into the
        # slots only it reads, if any), then out coalesced
        for local, value in zip(consecutive, results):
            out.add(StoreOp(scan.tile, local, value))
        out.add(BarrierOp())
        for index, local in strided:
            value = out.add(LoadOp(scan.tile, local, element))
            out.add(StoreOp(scan.scanned, index, value))
    elif store_scan:
        for index, value in zip(elements, results):
            out.add(StoreOp(scan.scanned, index, value))
    if scan.totals is not None:
        # the last invocation of a segment writes its block's total
        owner = block_index()
        conditions = [out.add(EqOp(position, out.const(segment - 1)))] if segment > 1 else []
        totals = program.buffer(scan.totals)
        assert totals is not None and totals.static_count is not None
        if gx * gy * gz * k > groups and totals.static_count > groups:
            # blocks past the original workgroups wrote nothing
            conditions.append(out.add(LtOp(owner, out.const(groups))))
        writes = out
        if conditions:
            last = conditions[0]
            if len(conditions) == 2:
                last = out.add(AndOp(*conditions))
            writer = IfOp(last, [])
            out.add(writer)
            writes = _Emitter(block=writer.then_region.block)
        writes.add(StoreOp(scan.totals, owner, results[-1]))
    for op in reversed(old):
        op.detach()
        op.erase()


def _subgroup_segmented_scan(
    scan: ScanLevel,
    out: _Emitter,
    tile: str,
    position: SSAValue,
    totals_at: SSAValue,
    total: SSAValue,
    segment: int,
) -> SSAValue:
    """The exclusive prefix, within its segment of `segment` invocations, of each
    invocation's `total`, on subgroup shuffles (workgroup buffer `tile` holds the
    pieces' inclusive values): a Hillis-Steele scan within
    pieces of P = min(subgroup size, segment) invocations (P = 1 when the
    subgroup size is not a power of two: then every step is skipped), each
    invocation's inclusive value stored at `totals_at`, one barrier, then each
    invocation combines the totals of the pieces before its own in the segment
    (none when a subgroup holds the segment) with its exclusive prefix in its
    piece (the inclusive value of the lane before it)."""
    program, element = scan.program, scan.element
    combine = TABLE_OPS[scan.combine]
    identity = combine_identity(scan.combine, element)
    assert identity is not None
    size = out.add(SubgroupSizeOp())
    sub_lane = out.add(SubgroupLocalIdOp())
    one = out.const(1)
    # P: a power-of-two subgroup size, at most the segment; else 1
    power = out.add(EqOp(out.add(BitAndOp(size, out.add(SubOp(size, one)))), out.const(0)))
    capped = out.add(MinOp(size, out.const(segment)))
    piece = out.add(SelectOp(power, capped, one))
    piece.name_hint = "piece"
    in_piece = out.add(BitAndOp(sub_lane, out.add(SubOp(piece, one))))
    in_piece.name_hint = "in_piece"
    inclusive = total
    offset = 1
    while offset < segment:  # steps past the piece are skipped (in_piece < P)
        partner = out.add(SubgroupShuffleOp(inclusive, out.add(SubOp(sub_lane, out.const(offset)))))
        has = out.add(GeOp(in_piece, out.const(offset)))
        inclusive = out.add(SelectOp(has, out.add(combine(partner, inclusive)), inclusive))
        offset *= 2
    out.add(StoreOp(tile, totals_at, inclusive))
    out.add(BarrierOp())
    # the totals of the pieces before this one in the segment: the inclusive value
    # of each piece's last invocation
    taken = declared_local_names(program)
    acc, index = _fresh(ACC, taken), _fresh(INDEX, taken)
    out.add(LetOp(acc, out.const(identity, element)))
    before = out.add(DivOp(position, piece))
    loop = LoopOp(index, out.const(0), before, [])
    out.add(loop)
    body = _Emitter(block=loop.body.block)
    j = body.add(VarOp(index, ui32))
    first_piece = body.add(SubOp(totals_at, position))
    last = body.add(AddOp(first_piece, body.add(MulOp(body.add(AddOp(j, body.const(1))), piece))))
    value = body.add(LoadOp(tile, body.add(SubOp(last, body.const(1))), element))
    body.add(AssignOp(acc, body.add(combine(body.add(VarOp(acc, element)), value))))
    pieces = out.add(VarOp(acc, element))
    # the exclusive prefix within the piece: the inclusive value of the lane before
    previous = out.add(SubgroupShuffleOp(inclusive, out.add(SubOp(sub_lane, one))))
    leads = out.add(EqOp(in_piece, out.const(0)))
    within = out.add(SelectOp(leads, out.const(identity, element), previous))
    carried = out.add(combine(pieces, within))
    carried.name_hint = "carried"
    return carried


def reduce_then_scan(
    scan: ScanLevel, back: AddBack, groups: int, k: int, subgroups: bool = False
) -> None:
    """Rewrite a scan level and its add-back (`VyreCoarsenReductionsPass.add_back_of`)
    into reduce-then-scan: the scan level, coarsened by k, stores only its block
    totals; the add-back becomes the same coarsened block scan of the level's
    leaves, each element combined with its block's carried prefix, stored into
    the add-back's destination. The block scans' buffer disappears."""
    program, consumer, width = scan.program, back.program, scan.width
    local = program.buffer(scan.scanned)
    assert local is not None and local.static_count is not None
    blocks = math.ceil(local.static_count / width)
    # the add-back: the scan level's program again, scanning into dst plus the prefix
    clone = program.clone()
    clone.properties["sym_name"] = consumer.properties["sym_name"]
    again = scan_level(clone)
    assert isinstance(again, ScanLevel), again
    coarsen_scan(
        replace(again, scanned=back.dst, totals=None),
        blocks,
        k,
        prefixes_of=back.carried,
        subgroups=subgroups,
    )
    # it declares what its leaves read (as the level does), its tile, the carried
    # prefixes and its destination
    reads = {op.buffer_name for op in scan.leaf_ops if isinstance(op, LoadOp)}
    declared = []
    for decl in list(clone.buffers()):
        if decl.is_workgroup or decl.buffer_name in reads:
            declared.append(decl)
        else:
            decl.detach()
            decl.erase()
    hosts = [decl for decl in declared if not decl.is_workgroup]
    for name in (back.carried, back.dst):
        decl = consumer.buffer(name)
        assert decl is not None
        at = InsertPoint.after(hosts[-1]) if hosts else InsertPoint.before(declared[0])
        hosts.append(decl.clone())
        Rewriter.insert_op(hosts[-1], at)
    binding = 0
    for decl in clone.buffers():
        if not decl.is_workgroup:
            decl.properties["binding"] = IntegerAttr(binding, i64)
            binding += 1
    Rewriter.insert_op(clone, InsertPoint.before(consumer))
    consumer.detach()
    consumer.erase()
    # the scan level: only the block totals
    coarsen_scan(scan, groups, k, store_scan=False, subgroups=subgroups)
    local.detach()
    local.erase()
