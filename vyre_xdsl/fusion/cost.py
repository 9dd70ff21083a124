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

```python
from vyre_xdsl.fusion.cost import profitable_runs

runs = profitable_runs(programs, intermediates_of)  # [([0, 1], outcome), ([2], None), ...]
```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from vyre_xdsl.analysis.loops import rolled_loops
from vyre_xdsl.dialects.vyre import BarrierOp, LoopOp, ProgramOp
from vyre_xdsl.fusion.fuse import FusionOutcome, fuse_with_outcome

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


def profitable_runs(
    programs: Sequence[ProgramOp],
    intermediates_of: Callable[[Sequence[int]], frozenset[str]],
    *,
    recompute: bool = True,
) -> list[tuple[list[int], FusionOutcome | None]]:
    """Consecutive runs of `programs` (indices, in order, covering all) to fuse,
    each with its fusion (None for a run of one program).

    `intermediates_of(run)` names the buffers the run may drop. A run that
    fusion would split at a `grid_sync` is cut there; a run whose fusion does
    not pay (`benefit` < 0) is cut between the two consecutive programs whose
    grids differ most; each piece is judged again. Refusals of `vyre-fuse`
    propagate (a `VyreDiagnostic`)."""
    return _runs(list(range(len(programs))), programs, intermediates_of, recompute)


def _runs(
    run: list[int],
    programs: Sequence[ProgramOp],
    intermediates_of: Callable[[Sequence[int]], frozenset[str]],
    recompute: bool,
) -> list[tuple[list[int], FusionOutcome | None]]:
    if len(run) < 2:
        return [(run, None)]
    mixed = _loop_meets_barriers(run, programs)
    if mixed is not None:
        return [
            r
            for piece in (run[: mixed + 1], run[mixed + 1 :])
            for r in _runs(piece, programs, intermediates_of, recompute)
        ]
    outcome = fuse_with_outcome(
        [programs[k] for k in run],
        split_grid_sync=True,
        intermediates=intermediates_of(run),
        recompute=recompute,
    )
    cuts = sorted(outcome.splits)
    if not cuts and benefit(outcome) >= 0:
        return [(run, outcome)]
    if not cuts:
        cuts = [_widest_gap(outcome.groups)]
    pieces, start = [], 0
    for cut in cuts:
        pieces.append(run[start : cut + 1])
        start = cut + 1
    pieces.append(run[start:])
    return [
        r for piece in pieces if piece for r in _runs(piece, programs, intermediates_of, recompute)
    ]


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


def _widest_gap(groups: Sequence[int | None]) -> int:
    """The arm after which the grid changes most (by ratio); ties: the first."""

    def ratio(k: int) -> float:
        a, b = groups[k], groups[k + 1]
        if a is None or b is None:
            return 1.0
        return max(a, b) / max(min(a, b), 1)

    return max(range(len(groups) - 1), key=lambda k: (ratio(k), -k))
