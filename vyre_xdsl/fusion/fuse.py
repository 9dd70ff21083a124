"""`fuse_programs`: shared-buffer fusion of several programs into one, never a
wrong kernel (SPEC section 4; docs/fusion.md has the full story).

The fused program runs, per invocation, every arm in program order. It is
correct when each arm still does exactly what its own dispatch did:

1. *Geometry*: the fused workgroup is the axis-wise max. Each arm runs on
   exactly the invocations its own dispatch launched: an arm whose dispatch
   was smaller is guarded (`launch_guards.py`), and an arm with effects whose
   invocations the fused dispatch does not provably cover is refused.
2. *Views*: an arm that declared a buffer shorter than the merged declaration
   keeps seeing the shorter buffer (its indices past its count are pushed out
   of bounds, its `buf_len` becomes its count).
3. *Dependences* (`vyre_xdsl.analysis.dependences`): invocation-local ones need nothing,
   workgroup-local ones a `vyre.barrier`, others a `vyre.barrier grid_sync`
   (or a refusal with `split-grid-sync=false`).
4. *Forwarding*: a load that reads exactly the element the same invocation
   stored in an earlier arm (unconditionally, at top level, with an injective
   index, no write in between, no grid_sync in between) takes the stored
   value instead; an intermediate buffer whose loads are all forwarded has its
   stores dropped, so a fused chain touches memory once. A store under an
   index guard (`if invocation_id x < N`, `vyre_xdsl.analysis.guards`) counts
   as unconditional when `N` covers every invocation the arm runs on (the
   guard is unwrapped), or is forwarded through a named local when it stores
   at `invocation_id x` and `N` is at least the buffer's count (an invocation
   that skips it would have stored out of bounds), also from an arm that runs
   under fusion's own guard.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerType, UnitAttr
from xdsl.ir import Operation, SSAValue
from xdsl.transforms.dead_code_elimination import is_trivially_dead
from xdsl.utils.exceptions import VerifyException

from vyre_xdsl.analysis import (
    Access,
    Hazard,
    IndexBound,
    access_of,
    accesses,
    barrier_hazards,
    buffers_written,
    declaration_of,
    hazards,
    index_bounds,
    index_guards,
    injective_in_invocation,
    is_id_expression,
    is_invocation_x,
    may_trap,
    structurally_equal,
)
from vyre_xdsl.diagnostics import VyreDiagnostic, clean_message
from vyre_xdsl.dialects.vyre import (
    MAX_INVOCATIONS,
    TABLE_OPS,
    AssignOp,
    AtomicOp,
    BarrierOp,
    BufLenOp,
    ConstOp,
    IfOp,
    InvocationIdOp,
    LetOp,
    LoadOp,
    LocalIdOp,
    LoopOp,
    ProgramOp,
    SelectOp,
    StoreOp,
    VarOp,
    WorkgroupIdOp,
    f32,
    i1,
    is_float_type,
    ui32,
)
from vyre_xdsl.dispatch import uses_whole_buffers
from vyre_xdsl.fusion.barriers import grid_between, place_barriers
from vyre_xdsl.fusion.launch_guards import Launch, count_le, count_of, groups_value, launch_within
from vyre_xdsl.fusion.merge import (
    Arm,
    MergedBuffer,
    arm_name,
    buffer_declarations,
    check_buffer_types,
    clone_arms,
    contain_returns,
    live_flag_declaration,
    merge_buffers,
    rename_shared_locals,
    rename_shared_workgroup_buffers,
    used_names,
)
from vyre_xdsl.fusion.recompute import recomputable_slice, recompute_at

OVER_DISPATCH_FACTOR = 4
ELEMENT_BYTES = 4  # every element type is one 32-bit word in memory
OUT_OF_BOUNDS = 0xFFFFFFFF


def fuse_programs(
    programs: Sequence[ProgramOp],
    *,
    split_grid_sync: bool = True,
    intermediates: Iterable[str] = (),
    name: str | None = None,
    recompute: bool = True,
    verify: bool = True,
) -> ProgramOp:
    """Fuse `programs` (run in this order) into one new program; the inputs are not changed.

    `intermediates` names buffers that nothing after these programs reads and
    that are not outputs (SPEC section 8): their stores may be dropped once all
    their loads are forwarded. The pass passes the module's intermediates; the
    default drops nothing. The result is named `name`, else
    `fused_<first>_<second>...`. With `recompute`, a load of a producer's
    output at another index may take the producer's expression at that index
    (`fusion/recompute.py`) instead of needing a dispatch split. Refusals raise
    a located `VyreDiagnostic`; so does a fused program that does not verify,
    unless `verify=False` (the caller verifies it with its module).
    """
    return fuse_with_outcome(
        programs,
        split_grid_sync=split_grid_sync,
        intermediates=intermediates,
        name=name,
        recompute=recompute,
        verify=verify,
    ).program


def refuse_explicit_grids(progs: Sequence[ProgramOp]) -> None:
    """A program with an explicit grid (`grid [GX, GY, GZ]`) is never fused with
    another: its ids span a grid that no other arm's dispatch shares."""
    for program in progs:
        if program.fixed_launch:
            grid = program.explicit_grid
            what = (
                f"launches an explicit grid {list(grid)}"
                if grid is not None
                else "reads vyre.num_workgroups"
            )
            others = ", ".join(f"@{p.sym_name.data}" for p in progs if p is not program)
            raise VyreDiagnostic(
                [
                    (
                        program,
                        f"cannot fuse: @{program.sym_name.data} {what}, and the dispatch "
                        f"fused with {others} would launch another grid; fix: fuse it in a "
                        "separate group (vyre-fuse keeps it a program of its own)",
                    )
                ]
            )


@dataclass(frozen=True)
class FusionOutcome:
    """A fused program and what the cost model (`vyre_xdsl.fusion.cost`) needs to know of it."""

    program: ProgramOp
    #: arm indices after which fusion placed a `grid_sync` (a dispatch split)
    splits: frozenset[int] = frozenset()
    #: bytes of memory traffic that forwarding and dropped intermediate stores save
    saved_bytes: int = 0
    #: per arm: the workgroups its own dispatch launched (None: runtime-sized)
    groups: tuple[int | None, ...] = ()
    #: per arm: the bytes of workgroup memory it declares
    shared_bytes: tuple[int, ...] = ()


def fuse_with_outcome(
    programs: Sequence[ProgramOp],
    *,
    split_grid_sync: bool = True,
    intermediates: Iterable[str] = (),
    name: str | None = None,
    recompute: bool = True,
    verify: bool = True,
) -> FusionOutcome:
    """`fuse_programs`, with the facts the cost model weighs. `verify=False` leaves
    the fused program unverified, for a caller that verifies it with its module."""
    progs = list(programs)
    if not progs:
        return FusionOutcome(ProgramOp(name or "fused", (1, 1, 1)))
    if len(progs) == 1:
        return FusionOutcome(progs[0].clone())
    refuse_explicit_grids(progs)
    fusion = _Fusion(progs, split_grid_sync, frozenset(intermediates), name, recompute)
    program = fusion.run(verify)
    return FusionOutcome(
        program,
        frozenset(k for k, ordering in fusion.placed.items() if ordering == "grid_sync"),
        fusion.saved_bytes,
        tuple(_groups(launch) for launch in fusion.launches),
        tuple(_shared_bytes(p) for p in progs),
    )


def _groups(launch: Launch) -> int | None:
    extent = launch.static_extent()
    return None if extent is None else extent // launch.workgroup[0]


def _shared_bytes(program: ProgramOp) -> int:
    return sum(ELEMENT_BYTES * (b.static_count or 0) for b in program.buffers() if b.is_workgroup)


def fused_name(programs: Sequence[ProgramOp]) -> str:
    return "fused_" + "_".join(p.sym_name.data for p in programs)


# ====================================================================== checks before fusing


def _self_alias_key(program: ProgramOp) -> tuple:
    """Upstream's key: buffer names, workgroup size and the number of statements."""
    names = tuple(sorted(b.buffer_name for b in program.buffers()))
    return names, program.workgroup, len(list(program.statements()))


def _check_self_aliasing(progs: Sequence[ProgramOp]) -> None:
    flags = [p.non_composable for p in progs]
    if not any(flags):
        return
    # Programs with equal keys, in program order: only those can be the same program.
    seen: dict[tuple, list[int]] = {}
    for j, later in enumerate(progs):
        same = seen.setdefault(_self_alias_key(later), [])
        for i in same:
            earlier = progs[i]
            if flags[i] or flags[j]:
                flagged = earlier if earlier.non_composable else later
                raise VyreDiagnostic(
                    [
                        (
                            later,
                            f"cannot fuse @{earlier.sym_name.data} with @{later.sym_name.data}: they are the "
                            f"same program (same buffers, workgroup size and statement count) and "
                            f"@{flagged.sym_name.data} is non_composable, so it must not be fused with "
                            "itself; fix: run the second copy as its own program (a separate fusion group)",
                        )
                    ]
                )
        same.append(j)


def _uses_ids(program: ProgramOp) -> bool:
    return any(isinstance(op, WorkgroupIdOp | LocalIdOp) for op in program.walk())


def _check_geometry(progs: Sequence[ProgramOp], workgroup: tuple[int, int, int]) -> None:
    problem = geometry_problem(progs, workgroup)
    if problem is not None:
        raise VyreDiagnostic([problem])


def geometry_problem(
    progs: Sequence[ProgramOp], workgroup: tuple[int, int, int] | None = None
) -> tuple[ProgramOp, str] | None:
    """Why `progs` cannot be fused into one dispatch of `workgroup` (default: the
    axis-wise max, the fused workgroup), as (the program, the message), or None:
    over-dispatch, too many invocations, or an arm whose workgroup differs and
    whose meaning depends on it (workgroup memory, barriers, ids)."""
    if workgroup is None:
        workgroup = tuple(max(p.workgroup[a] for p in progs) for a in range(3))
    threads = math.prod(workgroup)
    largest = max(math.prod(p.workgroup) for p in progs)
    differing = [p for p in progs if p.workgroup != workgroup]
    arm_list = ", ".join(f"@{p.sym_name.data} {list(p.workgroup)}" for p in progs)
    if differing and threads > OVER_DISPATCH_FACTOR * largest:
        return (
            differing[0],
            f"cannot fuse: the fused workgroup {list(workgroup)} ({threads} invocations) is more "
            f"than {OVER_DISPATCH_FACTOR}x the largest arm's ({largest}) (over-dispatch); the arms "
            f"are {arm_list}; fix: give @{differing[0].sym_name.data} a workgroup size of the same "
            "shape as the others, or fuse it in a separate group",
        )
    if threads > MAX_INVOCATIONS:
        return (
            differing[0],
            f"cannot fuse: the fused workgroup {list(workgroup)} has {threads} invocations, more "
            f"than the limit {MAX_INVOCATIONS}; the arms are {arm_list}; fix: give "
            f"@{differing[0].sym_name.data} a workgroup size of the same shape as the others",
        )
    for program in differing:
        reasons = []
        if any(b.is_workgroup for b in program.buffers()):
            reasons.append("it declares workgroup memory")
        if any(isinstance(op, BarrierOp) for op in program.walk()):
            reasons.append("it contains a barrier")
        if not reasons and _uses_ids(program):
            reasons.append(
                "it reads workgroup_id or local_id, whose values change with the workgroup size"
            )
        reason = " and ".join(reasons) or None
        if reason is not None:
            return (
                program,
                f"cannot fuse @{program.sym_name.data}: its workgroup {list(program.workgroup)} "
                f"differs from the fused workgroup {list(workgroup)} and {reason}; fix: give every "
                "program of the fusion group the same workgroup size, or fuse "
                f"@{program.sym_name.data} in a separate group",
            )
    return None


# ====================================================================== helpers


class _Summary:
    """What the launch and coverage computations need from the arms' IR, from one walk.

    A snapshot: take a new one after the arms change (forwarding, dropping).
    Stores whose buffer is later dropped stay listed; every user excludes
    dropped buffers itself.
    """

    def __init__(self, arms: Sequence[Arm]):
        #: per arm: the buffers it stores to
        self.stores: list[set[str]] = []
        #: per arm: whether it has an atomic or an op that may trap
        self.atomic_or_trap: list[bool] = []
        #: buffer -> its stores, in arm order, each arm in walk order
        self.store_ops: dict[str, list[StoreOp]] = {}
        #: buffers read by a load or an atomic
        self.loaded: set[str] = set()
        #: buffers named by a load, an atomic or a buf_len
        self.referenced: set[str] = set()
        #: buffers touched by an atomic
        self.atomics: set[str] = set()
        for arm in arms:
            stores: set[str] = set()
            effects = False
            for op in arm.walk():
                if isinstance(op, StoreOp):
                    stores.add(op.buffer_name)
                    self.store_ops.setdefault(op.buffer_name, []).append(op)
                elif isinstance(op, LoadOp | AtomicOp | BufLenOp):
                    self.referenced.add(op.buffer_name)
                    if not isinstance(op, BufLenOp):
                        self.loaded.add(op.buffer_name)
                    if isinstance(op, AtomicOp):
                        self.atomics.add(op.buffer_name)
                if isinstance(op, AtomicOp) or may_trap(op):
                    effects = True
            self.stores.append(stores)
            self.atomic_or_trap.append(effects)
        self.all_stores: set[str] = set().union(*self.stores)

    @property
    def has_atomic(self) -> bool:
        return bool(self.atomics)

    def stored(self, dropped: set[str]) -> set[str]:
        """Buffers some arm stores to, beyond the `dropped` ones."""
        return self.all_stores - dropped

    def has_effects(self, arm: int, dropped: set[str]) -> bool:
        """Whether the arm can change memory or trap (beyond stores to `dropped` buffers)."""
        return self.atomic_or_trap[arm] or bool(self.stores[arm] - dropped)


def _arm_launch(arm: Arm) -> Launch:
    """The invocations the arm's own (unfused) dispatch launched."""
    source = arm.source
    host = [b.buffer_name for b in source.buffers() if not b.is_workgroup]
    writes = buffers_written(source)
    chosen = host if uses_whole_buffers(source) or not writes else sorted(writes)
    return Launch(count_of([n for n in chosen if n in arm.views], arm.views), arm.workgroup)


def _enclosing_loops(op: Operation) -> list[LoopOp]:
    loops = []
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, ProgramOp):
        if isinstance(parent, LoopOp):
            loops.append(parent)
        parent = parent.parent_op()
    return loops


def _written_before(arm: Arm, buffer: str, load: LoadOp) -> bool:
    """Whether the arm may write `buffer` before `load` reads it (earlier, or in a loop around it)."""
    loops = _enclosing_loops(load)
    passed = False
    for op in arm.walk():
        if op is load:
            passed = True
            continue
        access = access_of(op)
        if access is not None and access.writes and access.buffer == buffer:
            if not passed or any(loop.is_ancestor(op) for loop in loops):
                return True
    return False


def _has_grid_sync(arm: Arm) -> bool:
    return any(isinstance(op, BarrierOp) and op.is_grid_sync for op in arm.walk())


def _erase_orphans(values: Iterable[SSAValue]) -> None:
    """Erase the pure, non-trapping ops that fusion left without uses."""
    work = list(values)
    while work:
        value = work.pop()
        op = value.owner
        if not isinstance(op, Operation) or op.parent is None:
            continue
        if not is_trivially_dead(op) or may_trap(op) or op.regions:
            continue
        operands = list(op.operands)
        op.detach()
        op.erase()
        work.extend(operands)


# ====================================================================== the algorithm


class _Fusion:
    def __init__(
        self,
        progs: list[ProgramOp],
        split: bool,
        intermediates: frozenset[str],
        name: str | None,
        recompute: bool = True,
    ):
        self.progs = progs
        self.split = split
        self.recompute = recompute
        self.intermediates = intermediates
        self.name = name or fused_name(progs)
        self.workgroup: tuple[int, int, int] = tuple(
            max(p.workgroup[a] for p in progs) for a in range(3)
        )
        self.arms: list[Arm] = []
        self.merged: dict[str, MergedBuffer] = {}
        self.flags: list[bool] = []
        self.dropped: set[str] = set()
        self.orphans: list[SSAValue] = []
        self.forwarded_pairs: set[tuple[int, int]] = set()
        self.min_counts: dict[str, int] = {}
        self.counts: dict[str, int | None] = {}  # merged counts (None: runtime-sized)
        self.host_buffers: set[str] = set()
        self.has_workgroup_memory = False
        self.launches: list[Launch] = []  # per arm: what its own dispatch launched
        self.summary: _Summary | None = None
        self.arms_by_launch: dict[Launch, list[int]] = {}  # own launch -> the arms with it
        self.placed: dict[int, str] = {}  # arm index -> the barrier placed after it
        self.saved_bytes = 0  # memory traffic saved by forwarding and dropped stores
        self.taken: set[str] = set()  # every name in use (fresh names avoid them)
        # top-level ops of forwarding through a named local that stay before / after
        # the guard fusion puts around their arm (`_through_local`)
        self.hoisted_before: set[Operation] = set()
        self.hoisted_after: set[Operation] = set()
        self.unwrapped: set[StoreOp] = set()  # stores whose index guards were all unwrapped

    # ------------------------------------------------------------------ driver

    def run(self, verify: bool = True) -> ProgramOp:
        check_buffer_types(self.progs)
        _check_self_aliasing(self.progs)
        _check_geometry(self.progs, self.workgroup)
        self.arms = clone_arms(self.progs)
        taken = used_names(self.arms)
        self.taken = taken
        rename_shared_locals(self.arms, taken)
        rename_shared_workgroup_buffers(self.arms, taken)
        self.merged = merge_buffers(self.arms)
        self.min_counts = {name: b.min_count for name, b in self.merged.items()}
        self.counts = {name: b.count for name, b in self.merged.items()}
        self.host_buffers = self._host_buffers()
        self.has_workgroup_memory = len(self.host_buffers) < len(self.merged)
        self.launches = [_arm_launch(arm) for arm in self.arms]
        for arm, launch in zip(self.arms, self.launches):
            self.arms_by_launch.setdefault(launch, []).append(arm.index)
        for arm in self.arms:
            self._narrow_buffer_lengths(arm)
        self._unwrap_true_guards()
        self.flags = [contain_returns(arm, taken) for arm in self.arms]

        self.summary = _Summary(self.arms)
        if self.recompute:
            self._recompute_shifted()
        # Where the dependences as written need a dispatch split: forwarding must not cross one.
        first = place_barriers(self._hazards()) if self.split else {}
        grid_positions = {p for p, ordering in first.items() if ordering == "grid_sync"}
        guarded = self._guards(self._fused_launch(), [True] * len(self.arms))
        self._forward(guarded, first)
        self.summary = _Summary(self.arms)
        self._drop_intermediates()
        # Dropping stores can only shrink the fused dispatch: a guard may become
        # unnecessary (never the reverse), and every arm with effects must stay covered.
        self.summary = _Summary(self.arms)
        fused_launch = self._fused_launch()
        guarded = self._guards(fused_launch, guarded)
        self._check_coverage(fused_launch)

        final = self._hazards()
        self._refuse_grid_sync(final)
        placed = place_barriers(final, grid_positions if self.split else None)
        self.placed = placed
        self._check_no_forwarding_across(placed)
        self._check_linked_locals(placed)
        _erase_orphans(self.orphans)
        for arm in self.arms:
            self._narrow_indices(arm)
        fused = self._build(guarded, placed)
        if verify:
            self._verify(fused)
        return fused

    def _guards(self, fused: Launch, previous: list[bool]) -> list[bool]:
        """Which arms need a guard: the fused dispatch may launch an invocation theirs did not."""
        return [
            was and not launch_within(fused, self.launches[arm.index], self.min_counts)
            for was, arm in zip(previous, self.arms)
        ]

    # ------------------------------------------------------------------ views

    def _narrower(self, arm: Arm, buffer: str) -> int | None:
        """The arm's count of `buffer` when it is smaller than the merged one, else None."""
        view = arm.views.get(buffer)
        merged = self.merged[buffer].count
        if view is None or (merged is not None and view >= merged):
            return None
        return view

    def _narrow_buffer_lengths(self, arm: Arm) -> None:
        """`buf_len` of a buffer the arm sees shorter than merged becomes its count; so
        does `buf_len` of a static intermediate (no host array decides its length), so
        that a guard on it does not keep a buffer that forwarding could drop."""
        for op in list(arm.walk()):
            if isinstance(op, BufLenOp) and op.buffer_name in arm.views:
                view = self._narrower(arm, op.buffer_name)
                if view is None and op.buffer_name in self.intermediates:
                    view = arm.views[op.buffer_name]
                if view is not None:
                    const = ConstOp(view, ui32)
                    op.parent.insert_op_before(const, op)
                    op.result.replace_all_uses_with(const.result)
                    op.detach()
                    op.erase()

    def _narrow_indices(self, arm: Arm) -> None:
        for op in list(arm.walk()):
            if not isinstance(op, LoadOp | StoreOp | AtomicOp) or op.buffer_name not in arm.views:
                continue
            view = self._narrower(arm, op.buffer_name)
            if view is None:
                continue
            index = op.operands[0]
            bound = ConstOp(view, ui32)
            inside = TABLE_OPS["lt"](index, bound.result)
            outside = ConstOp(OUT_OF_BOUNDS, ui32)
            narrowed = SelectOp(inside.results[0], index, outside.result)
            for new in (bound, inside, outside, narrowed):
                op.parent.insert_op_before(new, op)
            op.operands[0] = narrowed.result

    # ------------------------------------------------------------------ launches

    def _kept_buffers(self, dropped: set[str]) -> set[str]:
        """Merged buffers the fused program declares (a dropped buffer nothing refers to goes)."""
        referenced = self.summary.referenced | self.summary.stored(dropped)
        return {n for n in self.merged if n not in dropped or n in referenced}

    def _fused_launch(self, dropped: set[str] | None = None) -> Launch:
        """The invocations the fused program's dispatch will launch."""
        dropped = self.dropped if dropped is None else dropped
        # The host buffers the fused program declares (`_kept_buffers`, with set operations:
        # this runs once per candidate intermediate). Workgroup buffers are never dropped.
        host = self.host_buffers - (dropped - self.summary.referenced)
        writes = self.summary.atomics | self.summary.stored(dropped)
        whole = self.has_workgroup_memory or self.summary.has_atomic
        chosen = host if whole or not writes else writes & host
        return Launch(count_of(list(chosen), self.counts), self.workgroup)

    def _coverage_gaps(self, fused: Launch, dropped: set[str]) -> list[Arm]:
        return [
            arm
            for arm in self.arms
            if self.summary.has_effects(arm.index, dropped)
            and not launch_within(self.launches[arm.index], fused, self.min_counts)
        ]

    def _has_coverage_gap(self, fused: Launch, dropped: set[str]) -> bool:
        """Whether `_coverage_gaps` would find an arm; one `launch_within` per distinct arm launch."""
        return any(
            not launch_within(launch, fused, self.min_counts)
            and any(self.summary.has_effects(k, dropped) for k in arms)
            for launch, arms in self.arms_by_launch.items()
        )

    def _check_coverage(self, fused: Launch) -> None:
        gaps = self._coverage_gaps(fused, self.dropped)
        if gaps:
            arm = gaps[0]
            own = self.launches[arm.index]
            raise VyreDiagnostic(
                [
                    (
                        arm.source,
                        f"cannot fuse @{arm.name}: its own dispatch (workgroup {list(own.workgroup)} over "
                        f"{own.count} elements) launches invocations that the fused dispatch (workgroup "
                        f"{list(fused.workgroup)} over {fused.count} elements) may not launch; fix: give "
                        f"the programs of the group the same workgroup size and static buffer counts, or "
                        f"fuse @{arm.name} in a separate group",
                    )
                ]
            )

    # ------------------------------------------------------------------ dependences

    def _host_buffers(self) -> set[str]:
        return {n for n, b in self.merged.items() if not b.is_workgroup}

    def _accesses(self) -> list[list[Access]]:
        return [accesses(arm.statements()) for arm in self.arms]

    def _hazards(self) -> list[Hazard]:
        """The dependences between the arms: with `split`, those that decide where
        barriers go (`barrier_hazards`, linear in the arms); without, every one
        (a refusal names the first that crosses workgroups)."""
        find = barrier_hazards if self.split else hazards
        return find(
            [arm.workgroup for arm in self.arms],
            self._accesses(),
            self.workgroup,
            self._host_buffers(),
        )

    def _refuse_grid_sync(self, found: list[Hazard]) -> None:
        if self.split:
            return
        for hazard in found:
            if hazard.strength == "grid":
                earlier, later = self.arms[hazard.earlier], self.arms[hazard.later]
                verb = {
                    "read-after-write": f"reads buffer @{hazard.buffer} that @{earlier.name} writes",
                    "write-after-read": f"writes buffer @{hazard.buffer} that @{earlier.name} reads",
                    "write-after-write": f"writes buffer @{hazard.buffer} that @{earlier.name} also writes",
                }[hazard.kind]
                raise VyreDiagnostic(
                    [
                        (
                            later.source,
                            f"cannot fuse @{earlier.name} and @{later.name} without a dispatch split: "
                            f"@{later.name} {verb}, and an invocation may touch an element that another "
                            "workgroup touched, which no workgroup barrier can order; fix: allow the split "
                            "(vyre-fuse{split-grid-sync=true}), index "
                            f"@{hazard.buffer} by the same invocation id in both programs, or keep "
                            f"@{earlier.name} and @{later.name} in separate fusion groups",
                        )
                    ]
                )

    def _check_no_forwarding_across(self, placed: dict[int, str]) -> None:
        """Forwarded values are SSA values: they cannot cross a dispatch split."""
        for producer, consumer in self.forwarded_pairs:
            if grid_between(placed, producer, consumer):
                raise VyreDiagnostic(
                    [
                        (
                            self.arms[consumer].source,
                            f"internal error in vyre-fuse: a value forwarded from @{self.arms[producer].name} "
                            f"to @{self.arms[consumer].name} would cross a grid_sync; fix: fuse them in "
                            "separate groups, and report this",
                        )
                    ]
                )

    def _check_linked_locals(self, placed: dict[int, str]) -> None:
        """A named local read by a later arm cannot live across a dispatch split."""
        # name -> the arms that declare it by a top-level `vyre.let`, in order
        declaring: dict[str, list[int]] = {}
        for arm in self.arms:
            for d in arm.statements():
                if isinstance(d, LetOp):
                    arms = declaring.setdefault(d.var_name.data, [])
                    if not arms or arms[-1] != arm.index:
                        arms.append(arm.index)
        for later in self.arms:
            for op in later.walk():
                if not isinstance(op, VarOp | AssignOp) or declaration_of(op) is not None:
                    continue
                name = op.var_name.data
                candidates = declaring.get(name, [])
                last = (
                    bisect_left(candidates, later.index) - 1
                )  # the last declaring arm before `later`
                if last < 0:
                    continue
                earlier = self.arms[candidates[last]]
                if grid_between(placed, earlier.index, later.index):
                    raise VyreDiagnostic(
                        [
                            (
                                later.source,
                                f"cannot fuse @{earlier.name} and @{later.name}: @{later.name} reads "
                                f"named local @{name} of @{earlier.name}, but a dispatch split "
                                "(grid_sync) separates them and a named local does not survive "
                                "it; fix: pass the value through a buffer",
                            )
                        ]
                    )

    # ------------------------------------------------------------------ index guards

    def _least_bound(self, bound: IndexBound, arm: Arm) -> int:
        """The smallest value an index bound of `arm` can have in any run."""
        if bound.length_of is None:
            return bound.constant or 0
        name = bound.length_of
        if name in arm.views:
            view = arm.views[name]
            return self.min_counts.get(name, 0) if view is None else view
        own = [b.static_count for b in arm.program.buffers() if b.buffer_name == name]
        return own[0] if own and own[0] is not None else 0

    def _unwrap_true_guards(self) -> None:
        """Unwrap each index guard (`if invocation_id x < N`, `analysis/guards.py`)
        around a store of a buffer that a later arm loads, when `N` is at least the
        x extent of the arm's own dispatch. The arm runs only on invocations its own
        dispatch launched (it is guarded to them, or the fused dispatch launches no
        more), so the condition holds in every one of them: the then-branch always
        runs and the else-branch never does. The store is then unconditional, and
        forwarding can take it."""
        loaded_later: set[str] = set()
        for arm in reversed(self.arms):
            extent = self.launches[arm.index].static_extent()
            if extent is not None and loaded_later:
                self._unwrap_arm_guards(arm, extent, loaded_later)
            loaded_later |= {op.buffer_name for op in arm.walk() if isinstance(op, LoadOp)}

    def _unwrap_arm_guards(self, arm: Arm, extent: int, loaded_later: set[str]) -> None:
        candidates: list[IfOp] = []
        nested: list[StoreOp] = []
        for store in [op for op in arm.walk() if isinstance(op, StoreOp)]:
            if store.buffer_name not in loaded_later or store.parent_op() is arm.program:
                continue
            nested.append(store)
            child: Operation = store
            parent = store.parent_op()
            while parent is not None and parent is not arm.program:
                if (
                    isinstance(parent, IfOp)
                    and child.parent_region() is parent.then_region
                    and parent not in candidates
                ):
                    candidates.append(parent)
                child, parent = parent, parent.parent_op()
        erased: set[Operation] = set()
        for if_op in candidates:
            if if_op in erased:
                continue
            bounds = index_bounds(if_op.cond)
            if (
                bounds is None
                or any(self._least_bound(b, arm) < extent for b in bounds)
                or self._unwrap_would_clash(arm, if_op)
            ):
                continue
            if if_op.has_else:
                erased |= {op for op in if_op.else_region.walk()}
            block = if_op.parent_block()
            assert block is not None
            for inner in list(if_op.then_region.block.ops):
                inner.detach()
                block.insert_op_before(inner, if_op)
            self.orphans.append(if_op.cond)
            if_op.detach()
            if_op.erase()
        self.unwrapped |= {
            store for store in nested if store not in erased and store.parent_op() is arm.program
        }

    @staticmethod
    def _unwrap_would_clash(arm: Arm, if_op: IfOp) -> bool:
        """Whether a named local that the then-branch declares at its top level is
        named anywhere else in the arm (unwrapped, the declaration would move into
        the enclosing scope)."""
        declared = {op.var_name.data for op in if_op.then_region.block.ops if isinstance(op, LetOp)}
        if not declared:
            return False
        inside = set(if_op.then_region.walk())
        return any(
            isinstance(op, LetOp | AssignOp | VarOp | LoopOp)
            and op.var_name.data in declared
            and op not in inside
            for op in arm.walk()
        )

    def _stored_wherever_in_bounds(self, store: StoreOp, producer: Arm) -> bool:
        """Whether the store runs in every invocation whose element is in bounds:
        it stores at `invocation_id x`, nothing but index guards encloses it, and
        each bound is at least the buffer's count, so an invocation that skips it
        would have stored out of bounds (which does nothing, and a load there
        gives 0). The guard fusion puts around an arm whose dispatch was smaller
        is such a guard too: it keeps the invocations below the arm's own x
        extent, which is at least the count of every buffer the arm stores to."""
        ty = store.value.type
        if not is_invocation_x(store.index) or not (
            isinstance(ty, IntegerType) or is_float_type(ty)
        ):
            return False
        bounds = index_guards(store, producer.program)
        if bounds is None:
            return False
        name = store.buffer_name
        view = producer.views.get(name)
        if view is None:  # runtime-sized: only its own length bounds it
            return all(b.length_of == name for b in bounds)
        return all(self._least_bound(b, producer) >= view for b in bounds)

    def _through_local(self, store: StoreOp, producer: Arm) -> tuple[SSAValue, Operation]:
        """For a store under index guards: a named local, 0 before the guards, the
        stored value once stored; its value after the guards, and the op that
        reads it (at the arm's top level). The declaration and the read are
        recorded in `hoisted`: they stay outside the guard fusion may put around
        the arm."""
        outer: Operation = store
        while outer.parent_op() is not producer.program:
            parent = outer.parent_op()
            assert parent is not None
            outer = parent
        block = producer.program.body.block
        ty = store.value.type
        name = arm_name(producer.index, f"fwd_{store.buffer_name}", self.taken)
        zero = ConstOp(_zero_literal(ty), ty)
        let = LetOp(name, zero.result)
        block.insert_op_before(zero, outer)
        block.insert_op_before(let, outer)
        inner = store.parent_block()
        assert inner is not None
        assign = AssignOp(name, store.value)
        inner.insert_op_after(assign, store)
        var = VarOp(name, ty)
        block.insert_op_after(var, assign if outer is store else outer)
        self.hoisted_before.update((zero, let))
        self.hoisted_after.add(var)
        return var.result, var

    # ------------------------------------------------------------------ forwarding

    def _forward(self, guarded: list[bool], placed: dict[int, str]) -> None:
        per_arm = self._accesses()
        writers = _writers(per_arm)
        # grid_syncs[k]: how many arms before arm k contain a grid_sync
        grid_syncs = [0]
        for arm in self.arms:
            grid_syncs.append(grid_syncs[-1] + _has_grid_sync(arm))
        # Forwarding changes no store or atomic, so the fused launch stays the same throughout.
        extent = self._fused_launch().static_extent()
        written = set(writers)
        forwarded: dict[StoreOp, SSAValue] = {}
        for consumer in self.arms:
            for access in per_arm[consumer.index]:
                found = self._forwarding_store(
                    consumer, access, writers, grid_syncs, guarded, placed
                )
                if found is None:
                    if self.recompute:
                        self._recompute(consumer, access, writers, written, extent)
                    continue
                store, producer = found
                self.forwarded_pairs.add((producer, consumer.index))
                if store not in forwarded:
                    forwarded[store] = self._forwarded_value(
                        store, self.arms[producer], extent, guarded[producer]
                    )
                load = access.op
                self.saved_bytes += ELEMENT_BYTES * (consumer.views.get(access.buffer) or 0)
                load.results[0].replace_all_uses_with(forwarded[store])
                self.orphans.append(load.index)
                load.detach()
                load.erase()

    def _forwarding_store(
        self,
        consumer: Arm,
        access: Access,
        writers: dict[str, list[tuple[int, list[Access]]]],
        grid_syncs: list[int],
        guarded: list[bool],
        placed: dict[int, str],
    ) -> tuple[StoreOp, int] | None:
        """The store whose value the load `access` may take, and the index of its arm."""
        if not isinstance(access.op, LoadOp) or access.buffer not in consumer.views:
            return None
        buffer = access.buffer
        candidates = writers.get(buffer, [])
        # the last arm before the consumer that writes the buffer
        last = bisect_left(candidates, consumer.index, key=lambda entry: entry[0]) - 1
        if last < 0:
            return None
        index, writes = candidates[last]
        producer = self.arms[index]
        store = writes[0].op
        if (
            len(writes) != 1
            or not isinstance(store, StoreOp)
            # a top-level store forwards from an arm that runs unguarded; a store under
            # index guards (or whose always-true guard was unwrapped) also from a
            # guarded one, through a named local
            or not (
                (store.parent_op() is producer.program and not guarded[producer.index])
                or (
                    (store.parent_op() is not producer.program or store in self.unwrapped)
                    and self._stored_wherever_in_bounds(store, producer)
                )
            )
            or producer.workgroup[1:] != (1, 1)
            or consumer.workgroup[1:] != (1, 1)
            or producer.views.get(buffer, -1) != consumer.views.get(buffer, -2)
            or not is_id_expression(access.index)
            or not injective_in_invocation(access.index)
            or not structurally_equal(store.index, access.index)
            or grid_between(placed, producer.index, consumer.index)
            or grid_syncs[consumer.index + 1] > grid_syncs[producer.index]
            or _written_before(consumer, buffer, access.op)
        ):
            return None
        return store, producer.index

    def _recompute_shifted(self) -> None:
        """Recompute the loads that read a producer's output at another index than
        the one the producer stores at (those forwarding cannot take), so that the
        dependence they made no longer needs a barrier."""
        per_arm = self._accesses()
        writers = _writers(per_arm)
        extent = self._fused_launch().static_extent()
        for consumer in self.arms:
            for access in per_arm[consumer.index]:
                found = self._recomputable_store(consumer, access, writers)
                if found is None or structurally_equal(found[0].index, access.index):
                    continue
                self._recompute(consumer, access, writers, set(writers), extent)

    def _recompute(
        self,
        consumer: Arm,
        access: Access,
        writers: dict[str, list[tuple[int, list[Access]]]],
        written: set[str],
        extent: int | None,
    ) -> None:
        """Replace the load `access` by the producer's expression at its index, when
        that is exactly what the load reads unfused (`fusion/recompute.py`).

        `extent`: the fused dispatch's x extent (None when not static); a load at
        `invocation_id x` below every count needs no bounds select."""
        found = self._recomputable_store(consumer, access, writers)
        if found is None:
            return
        store, producer = found
        slice_ops = recomputable_slice(store.value, written, self._unnarrowed_load)
        if slice_ops is None:
            return
        view = producer.views[access.buffer]
        bound: Operation | None = BufLenOp(access.buffer) if view is None else ConstOp(view, ui32)
        if (
            view is not None
            and extent is not None
            and extent <= view
            and is_invocation_x(access.index)
        ):
            bound = None
        load = access.op
        value = recompute_at(slice_ops, store.value, access.index, bound, load)
        load.results[0].replace_all_uses_with(value)
        load.detach()
        load.erase()

    def _recomputable_store(
        self,
        consumer: Arm,
        access: Access,
        writers: dict[str, list[tuple[int, list[Access]]]],
    ) -> tuple[StoreOp, Arm] | None:
        """The store `t[invocation_id x] = E` of the last arm before the consumer that
        writes the loaded buffer `t`, when every element of `t` the load can see
        holds `E` at its index: the store is that arm's only write of `t`, at its
        top level, its own dispatch launched every element of `t`, both arms see
        the same count, and no write of `t` comes between."""
        if not isinstance(access.op, LoadOp) or access.buffer not in consumer.views:
            return None
        buffer = access.buffer
        candidates = writers.get(buffer, [])
        last = bisect_left(candidates, consumer.index, key=lambda entry: entry[0]) - 1
        if last < 0:
            return None
        index, writes = candidates[last]
        producer = self.arms[index]
        store = writes[0].op
        if (
            len(writes) != 1
            or not isinstance(store, StoreOp)
            or store.parent_op() is not producer.program
            or not is_invocation_x(store.index)
            or producer.workgroup[1:] != (1, 1)
            or producer.views.get(buffer, -1) != consumer.views.get(buffer, -2)
            or not count_le(
                count_of([buffer], producer.views),
                self.launches[producer.index].count,
                self.min_counts,
            )
            or _written_before(consumer, buffer, access.op)
        ):
            return None
        return store, producer

    def _unnarrowed_load(self, load: LoadOp) -> bool:
        """Whether every arm sees the whole buffer `load` reads (a clone of the load
        in another arm then reads the same elements)."""
        name = load.buffer_name
        return not self.merged[name].is_workgroup and all(
            self._narrower(arm, name) is None for arm in self.arms if name in arm.views
        )

    def _forwarded_value(
        self, store: StoreOp, producer: Arm, extent: int | None, guarded: bool = False
    ) -> SSAValue:
        """`select(index < count, stored value, 0)`: the load's result (out of bounds gives 0).

        Just the stored value when the index is `invocation_id x` and the fused
        dispatch (of x extent `extent`, None when not static) launches no
        invocation past the buffer's count. A store under index guards, or in a
        `guarded` arm, passes its value through a named local (`_through_local`).
        """
        view = producer.views[store.buffer_name]
        new_ops: list[Operation] = []
        if store.parent_op() is producer.program and not guarded:
            value, anchor, index = store.value, store, store.index
        else:  # under index guards (`_stored_wherever_in_bounds`): through a named local
            value, anchor = self._through_local(store, producer)
            index_op = InvocationIdOp(0)
            new_ops.append(index_op)
            index = index_op.result
        if (
            view is not None
            and extent is not None
            and extent <= view
            and is_invocation_x(store.index)
        ):
            return value
        if view is None:
            bound: Operation = BufLenOp(store.buffer_name)
        else:
            bound = ConstOp(view, ui32)
        inside = TABLE_OPS["lt"](index, bound.results[0])
        zero = ConstOp(_zero_literal(value.type), value.type)
        select = SelectOp(inside.results[0], value, zero.result)
        for new in (*new_ops, bound, inside, zero, select):
            producer.program.body.block.insert_op_after(new, anchor)
            if anchor in self.hoisted_after:
                self.hoisted_after.add(new)
            anchor = new
        return select.result

    # ------------------------------------------------------------------ dropping

    def _drop_intermediates(self) -> None:
        # Dropping removes only stores of dropped buffers, which every query of
        # the summary leaves out: one summary serves the whole loop.
        for buffer in self.merged:
            if buffer not in self.intermediates or self.merged[buffer].is_workgroup:
                continue
            if buffer in self.summary.loaded:
                continue
            candidate = self.dropped | {buffer}
            if self._has_coverage_gap(self._fused_launch(candidate), candidate):
                continue
            self.dropped = candidate
            for op in self.summary.store_ops.get(buffer, []):
                self.saved_bytes += ELEMENT_BYTES * (self.merged[buffer].min_count or 0)
                self.orphans.extend(op.operands)
                op.detach()
                op.erase()

    # ------------------------------------------------------------------ building

    def _guard(self, arm: Arm) -> tuple[list[Operation], SSAValue]:
        """Ops computing whether this fused invocation is one the arm's dispatch launched."""
        ops: list[Operation] = []
        own = self.launches[arm.index]
        if arm.workgroup == self.workgroup:
            groups = groups_value(own, ops)
            wid = WorkgroupIdOp(0)
            ops.append(wid)
            cond = TABLE_OPS["lt"](wid.result, groups)
            ops.append(cond)
            return ops, cond.results[0]
        static = own.static_extent()
        if static is not None:
            extent: Operation = ConstOp(static, ui32)
            ops.append(extent)
        else:
            width = ConstOp(arm.workgroup[0], ui32)
            extent = TABLE_OPS["mul"](groups_value(own, ops), width.result)
            ops += [width, extent]
        gid = InvocationIdOp(0)
        cond = TABLE_OPS["lt"](gid.result, extent.results[0])
        ops += [gid, cond]
        result = cond.results[0]
        for axis in (1, 2):
            if arm.workgroup[axis] < self.workgroup[axis]:
                local = LocalIdOp(axis)
                size = ConstOp(arm.workgroup[axis], ui32)
                within = TABLE_OPS["lt"](local.result, size.result)
                both = TABLE_OPS["and"](result, within.results[0])
                ops += [local, size, within, both]
                result = both.results[0]
        return ops, result

    def _build(self, guarded: list[bool], placed: dict[int, str]) -> ProgramOp:
        kept = self._kept_buffers(self.dropped)
        body: list[Operation] = list(buffer_declarations(self.merged, kept))
        for arm, guard, flag in zip(self.arms, guarded, self.flags):
            statements = arm.statements()
            for op in statements:
                op.detach()
            prologue = live_flag_declaration(arm) if flag else []
            before = [op for op in statements if op in self.hoisted_before]
            after = [op for op in statements if op in self.hoisted_after]
            if guard and len(before) + len(after) < len(statements):
                statements = [
                    op
                    for op in statements
                    if op not in self.hoisted_before and op not in self.hoisted_after
                ]
            else:
                before, after = [], []
            if guard and statements:  # an arm left empty (all forwarded) needs no guard
                if _has_grid_sync_ops(statements):
                    raise VyreDiagnostic(
                        [
                            (
                                arm.source,
                                f"cannot fuse @{arm.name}: its dispatch launches fewer invocations than the "
                                "fused one, so it must run under a guard, but it contains a grid_sync "
                                "barrier, which must stay at top level; fix: fuse it in a separate group",
                            )
                        ]
                    )
                ops, cond = self._guard(arm)
                body += before + ops + [IfOp(cond, prologue + statements)] + after
            else:
                body += prologue + statements
            if arm.index in placed:
                body.append(BarrierOp(placed[arm.index]))
        fused = ProgramOp(self.name, self.workgroup, body)
        if any(p.non_composable for p in self.progs):
            fused.attributes["non_composable"] = UnitAttr()
        return fused

    def _verify(self, fused: ProgramOp) -> None:
        try:
            fused.verify()
        except VerifyException as error:
            names = ", ".join(f"@{p.sym_name.data}" for p in self.progs)
            raise VyreDiagnostic(
                [
                    (
                        self.progs[0],
                        f"cannot fuse {names}: the fused program does not verify ({clean_message(error)}); "
                        "fix: fuse these programs in separate groups",
                    )
                ]
            ) from None


def _writers(per_arm: list[list[Access]]) -> dict[str, list[tuple[int, list[Access]]]]:
    """Buffer -> per arm that writes it (in arm order): that arm's writes of the buffer."""
    writers: dict[str, list[tuple[int, list[Access]]]] = {}
    for k, found in enumerate(per_arm):
        mine: dict[str, list[Access]] = {}
        for a in found:
            if a.writes:
                mine.setdefault(a.buffer, []).append(a)
        for buffer, writes in mine.items():
            writers.setdefault(buffer, []).append((k, writes))
    return writers


def _has_grid_sync_ops(ops: list[Operation]) -> bool:
    return any(
        isinstance(inner, BarrierOp) and inner.is_grid_sync for op in ops for inner in op.walk()
    )


def _zero_literal(ty) -> int | float | bool:
    if ty == f32:
        return 0.0
    if ty == i1:
        return False
    return 0
