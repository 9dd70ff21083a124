"""The fusion cost model: which consecutive programs to fuse so that fusion never loses
(docs/fusion.md, "When the pass fuses").

Costs are counted in *launches* (one dispatch in a submit):

- a fused run of `k` programs saves `k - 1` launches, and every byte of
  memory traffic that forwarding and dropped intermediate stores save is worth
  `1 / BYTES_PER_LAUNCH` of a launch;
- the fused dispatch launches the largest arm's `G` workgroups: an arm whose own
  dispatch had `G_i` leaves `G - G_i` workgroups idle behind its guard, each
  costing `IDLE_WORKGROUP`, or `IDLE_SHARED_WORKGROUP` when the arm declares
  workgroup memory (every workgroup of the fused kernel may zero it and wait
  at a barrier first);
- a dependence that needs a `grid_sync` is never fused across: the split
  gives back the launch, forwarding never crosses it, and the parts only add
  guards and spill traffic;
- a program with a loop the backend leaves rolled (`analysis.loops.rolled_loops`)
  and no workgroup barrier is never fused with one that has workgroup barriers:
  its loop then runs inside a kernel with workgroup memory and barriers, which
  ran it slower than its own kernel did (a 32-element pre-sum loop fused with the
  first level of a workgroup tree: 1.09-1.16x the two kernels' GPU time on
  lavapipe; unrolled, 16 elements fused ran 0.77x on an H200).
- a run whose fused kernel would break a limit of the target profile
  (`over_limit`: storage buffers per shader stage, workgroup memory bytes,
  invocations per workgroup) is cut in the middle and each half judged again,
  so fusion never makes a kernel that a target refuses while its programs ran.

Each cut can be reported (the `remark` callback of `profitable_runs`, which
`vyre-fuse{remarks=true}` prints as located `remark:` lines).

```python
from vyre_xdsl.fusion.cost import profitable_runs

runs = profitable_runs(programs, intermediates_of)  # [([0, 1], outcome), ([2], None), ...]
```
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from vyre_xdsl.analysis.loops import rolled_loops
from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.dialects.vyre import BarrierOp, LoopOp, ProgramOp, type_name
from vyre_xdsl.fusion.fuse import FusionOutcome, fuse_with_outcome, geometry_problem
from vyre_xdsl.lowering.lower import needs_sidecar
from vyre_xdsl.semantics import storage_bytes
from vyre_xdsl.target_profile import DEFAULT_PROFILE, TargetProfile

#: remark(program, message): why a run was cut before `program`
Remark = Callable[[ProgramOp, str], None]

#: bytes of memory traffic worth one launch. A launch in a submit costs about
#: 4 us on the H200 (4 TB/s: 16 MiB) and 80 us on lavapipe (a few GB/s: a few
#: hundred KiB); the larger figure undervalues saved bytes, so a fusion that
#: pays for itself only through bytes pays on both.
BYTES_PER_LAUNCH = 16 << 20
#: an idle workgroup, in launches: it evaluates a guard and exits (H200: about
#: 0.6 ns against a 4 us launch)
IDLE_WORKGROUP = 1 / 4096
#: an idle workgroup of a kernel with workgroup memory: it zeroes that memory
#: and waits at a barrier first (lavapipe: 2.3 us against an 80 us launch)
IDLE_SHARED_WORKGROUP = 1 / 32


def benefit(outcome: FusionOutcome) -> float:
    """Launches the fused program saves against running its programs one by one
    (negative: fusing loses). Meaningful for a fusion without `grid_sync` splits."""
    arms = len(outcome.groups)
    if arms < 2:
        return 0.0
    known = [g for g in outcome.groups if g is not None]
    largest = max(known, default=0)
    idle = 0.0
    for groups, shared in zip(outcome.groups, outcome.shared_bytes):
        if groups is None:  # runtime-sized: no idle workgroups are counted
            continue
        per_workgroup = IDLE_SHARED_WORKGROUP if shared else IDLE_WORKGROUP
        idle += (largest - groups) * per_workgroup
    return (arms - 1) + outcome.saved_bytes / BYTES_PER_LAUNCH - idle


def explain(outcome: FusionOutcome) -> str:
    """The terms of `benefit`, for a diagnostic."""
    known = [g for g in outcome.groups if g is not None]
    largest = max(known, default=0)
    idle = sum(largest - g for g in known)
    return (
        f"it saves {len(outcome.groups) - 1} launch(es) and {outcome.saved_bytes} bytes but leaves "
        f"{idle} workgroups idle behind guards (the fused grid is {largest} workgroups; the "
        f"programs' own grids are {list(outcome.groups)}), worth {benefit(outcome):.2f} launches"
    )


def over_limit(program: ProgramOp, profile: TargetProfile = DEFAULT_PROFILE) -> str | None:
    """Why the kernel of `program` would break a limit of `profile`, else None:
    its storage buffers per shader stage (every host buffer, and the trap
    sidecar when lowering adds one), its workgroup memory in bytes, or its
    invocations per workgroup (the counts `kernel-verify` checks)."""
    buffers = list(program.buffers())
    storage = sum(1 for b in buffers if not b.is_workgroup) + needs_sidecar(program)
    if storage > profile.max_storage_buffers:
        return (
            f"its kernel would need {storage} storage buffers; the target allows "
            f"{profile.max_storage_buffers} per shader stage"
        )
    shared = sum(
        storage_bytes(type_name(b.element_type), b.static_count or 0)
        for b in buffers
        if b.is_workgroup
    )
    if shared > profile.max_workgroup_storage_bytes:
        return (
            f"its kernel would need {shared} bytes of workgroup memory; the target allows "
            f"{profile.max_workgroup_storage_bytes}"
        )
    workgroup = program.workgroup
    too_wide = any(size > most for size, most in zip(workgroup, profile.max_workgroup_size))
    if too_wide or math.prod(workgroup) > profile.max_invocations:
        return (
            f"its workgroup would be {list(workgroup)}; the target allows "
            f"{list(profile.max_workgroup_size)} and {profile.max_invocations} invocations"
        )
    return None


def profitable_runs(
    programs: Sequence[ProgramOp],
    intermediates_of: Callable[[Sequence[int]], frozenset[str]],
    *,
    recompute: bool = True,
    profile: TargetProfile = DEFAULT_PROFILE,
    remark: Remark | None = None,
    verify: bool = True,
) -> list[tuple[list[int], FusionOutcome | None]]:
    """Consecutive runs of `programs` (indices, in order, covering all) to fuse,
    each with its fusion (None for a run of one program).

    `intermediates_of(run)` names the buffers the run may drop. A run that
    fusion would split at a `grid_sync` is cut there; a run whose fusion does
    not pay (`benefit` < 0) is cut between the two consecutive programs whose
    grids differ most; a run whose fused kernel breaks a limit of `profile`
    (`over_limit`) is cut in the middle; a run whose arms cannot share one
    workgroup size (`geometry_problem`) is cut where the size changes; each piece
    is judged again, and
    `remark` (when given) hears why each cut was made. A run that `vyre-fuse`
    refuses to fuse (a `VyreDiagnostic` naming one of its programs) is cut at that
    program instead of failing. `verify=False`: the fusions are not verified
    (the caller verifies the module they end up in)."""
    judge = _Judge(programs, intermediates_of, recompute, profile, remark or _silent, verify)
    return judge.runs(list(range(len(programs))))


def _silent(program: ProgramOp, message: str) -> None:
    return None


class _Judge:
    """`profitable_runs`: judges a run, cuts it where needed, judges the pieces."""

    def __init__(
        self,
        programs: Sequence[ProgramOp],
        intermediates_of: Callable[[Sequence[int]], frozenset[str]],
        recompute: bool,
        profile: TargetProfile,
        remark: Remark,
        verify: bool = True,
    ):
        self.verify = verify
        self.programs = programs
        self.intermediates_of = intermediates_of
        self.recompute = recompute
        self.profile = profile
        self.remark = remark

    def runs(self, run: list[int]) -> list[tuple[list[int], FusionOutcome | None]]:
        if len(run) < 2:
            return [(run, None)]
        mixed = _loop_meets_barriers(run, self.programs)
        if mixed is not None:
            return self.cut(
                run,
                [mixed],
                "a loop that stays a loop would run in a kernel with workgroup barriers",
            )
        members = [self.programs[k] for k in run]
        if geometry_problem(members) is not None:
            # arms whose meaning depends on their own workgroup size (workgroup
            # memory, barriers, ids) or an over-dispatch: not fused across the
            # places where the workgroup size changes; each piece is judged again
            changes = [
                k for k in range(len(run) - 1) if members[k].workgroup != members[k + 1].workgroup
            ]
            if changes:
                return self.cut(
                    run,
                    changes,
                    "their workgroup sizes differ, and one dispatch would change what "
                    "workgroup memory, barriers or workgroup and local ids mean (or launch "
                    "far more invocations than a program asked for)",
                )
        try:
            outcome = fuse_with_outcome(
                members,
                split_grid_sync=True,
                intermediates=self.intermediates_of(run),
                recompute=self.recompute,
                verify=self.verify,
            )
        except VyreDiagnostic as refusal:
            # a fusion the pass refuses (launch coverage it cannot prove, ...) is
            # not worth a failed compile here: cut the run at the program named
            at = _refused_at(refusal, members)
            if at is None:
                raise
            message = refusal.errors[0][1]
            return self.cut(run, [max(at - 1, 0)], f"fusing them is refused: {message}")
        if outcome.splits:
            return self.cut(
                run, sorted(outcome.splits), "a dependence crosses workgroups (a grid_sync split)"
            )
        if benefit(outcome) < 0:
            return self.cut(run, [_widest_gap(outcome.groups)], f"fusing loses: {explain(outcome)}")
        limit = over_limit(outcome.program, self.profile)
        if limit is not None:
            return self.cut(
                run, [(len(run) - 1) // 2], f"the fused program breaks a limit: {limit}"
            )
        return [(run, outcome)]

    def cut(
        self, run: list[int], cuts: list[int], why: str
    ) -> list[tuple[list[int], FusionOutcome | None]]:
        """The runs of the pieces of `run` cut after each arm in `cuts`."""
        pieces, start = [], 0
        for cut in cuts:
            pieces.append(run[start : cut + 1])
            start = cut + 1
            if cut + 1 < len(run):
                before, after = self.programs[run[cut]], self.programs[run[cut + 1]]
                self.remark(after, f"not fused with @{before.sym_name.data} before it: {why}")
        pieces.append(run[start:])
        return [r for piece in pieces if piece for r in self.runs(piece)]


def _has_workgroup_barrier(program: ProgramOp) -> bool:
    return any(isinstance(op, BarrierOp) and not op.is_grid_sync for op in program.walk())


def _has_loop(program: ProgramOp) -> bool:
    """A loop that stays a loop in the kernel (one the backend unrolls does not count)."""
    return bool(rolled_loops(program, LoopOp))


def _loop_meets_barriers(run: Sequence[int], programs: Sequence[ProgramOp]) -> int | None:
    """Where to cut `run` when it holds both a program with workgroup barriers and
    a program with a loop and no workgroup barrier: the first position `k` whose
    program differs from program `k + 1` in having workgroup barriers. None when
    the run holds no such pair."""
    barriers = [_has_workgroup_barrier(programs[k]) for k in run]
    plain_loop = any(not b and _has_loop(programs[k]) for k, b in zip(run, barriers, strict=True))
    if not (any(barriers) and plain_loop):
        return None
    return next(k for k in range(len(run) - 1) if barriers[k] != barriers[k + 1])


def _refused_at(refusal: VyreDiagnostic, members: Sequence[ProgramOp]) -> int | None:
    """The position in `members` of the program `refusal` is about (its first
    error's op, or the program around it), or None."""
    op = refusal.errors[0][0] if refusal.errors else None
    while op is not None and not isinstance(op, ProgramOp):
        op = op.parent_op()
    for position, member in enumerate(members):
        if member is op:
            return position
    return None


def _widest_gap(groups: Sequence[int | None]) -> int:
    """The arm after which the grid changes most (by ratio); ties: the first."""

    def ratio(k: int) -> float:
        a, b = groups[k], groups[k + 1]
        if a is None or b is None:
            return 1.0
        return max(a, b) / max(min(a, b), 1)

    return max(range(len(groups) - 1), key=lambda k: (ratio(k), -k))
