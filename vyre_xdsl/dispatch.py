"""Dispatch geometry shared by the interpreter, lowering and the runtime (SPEC section 5).

The logical grid is one-dimensional in workgroups: `groups = ceil(n / threads)`
where `n` is the logical element count. When `groups` exceeds 65535 the grid is
folded into y; every launched workgroup (including the few extra ones that
folding adds) runs, and logical ids are

    logical_workgroup = wid.x + wid.y * grid.x
    workgroup_id      = (logical_workgroup, 0, 0)
    invocation_id[a]  = workgroup_id[a] * workgroup_size[a] + local_id[a]

so the interpreter and the GPU launch exactly the same invocations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from vyre_xdsl.analysis import buffers_written
from vyre_xdsl.diagnostics import VyreDiagnostic, VyreError
from vyre_xdsl.dialects.vyre import SUBGROUP_OPS, AtomicOp, InvocationIdOp, ProgramOp

MAX_WORKGROUPS_PER_DIM = 65535


class IndirectGridError(VyreError):
    """An indirect grid (`{indirect = @grid}`) has an axis over the device's
    workgroups-per-dimension limit: the program is refused, nothing of it runs."""


def checked_indirect_grid(
    program: str, buffer: str, words, limit: int = MAX_WORKGROUPS_PER_DIM, offset: int = 0
) -> tuple[int, int, int]:
    """The grid in the three words of an indirect grid buffer from byte `offset`;
    an axis over `limit` raises `IndirectGridError` (an axis of 0 launches nothing)."""
    first = offset // 4
    grid = tuple(int(w) for w in words[first : first + 3])
    if len(grid) != 3:
        raise IndirectGridError(
            f"indirect grid buffer @{buffer} of @{program} holds {len(grid)} words; it needs 3"
        )
    for axis, value in zip("xyz", grid):
        if value > limit:
            raise IndirectGridError(
                f"@{program}: indirect grid {list(grid)} read from @{buffer} has {value} "
                f"workgroups on axis {axis}; the device allows {limit} per dimension, so the "
                "program was refused (nothing of it ran). Fix: write a smaller grid"
            )
    return grid  # type: ignore[return-value]


def uses_whole_buffers(program: ProgramOp) -> bool:
    """Atomics, workgroup memory or subgroup ops: the dispatch covers the largest of
    all buffers (upstream's rule)."""
    if any(b.is_workgroup for b in program.buffers()):
        return True
    return any(isinstance(op, (AtomicOp, *SUBGROUP_OPS)) for op in program.walk())


def logical_element_count(program: ProgramOp, counts: Mapping[str, int]) -> int:
    """The element count a dispatch of `program` covers (at least 1).

    `counts` gives each host buffer's element count (runtime-sized ones resolved).
    It is the largest count among the buffers the program writes; among all its
    host buffers when it uses atomics or workgroup memory, or writes nothing.
    """
    chosen = count_buffer_names(program)
    return max([counts[name] for name in chosen if name in counts] + [1])


def count_buffer_names(program: ProgramOp) -> list[str]:
    """The host buffers whose element counts decide `logical_element_count`: those
    a part of a split program records (`count_buffers`, its whole program's),
    else the program's own."""
    recorded = program.recorded_count_buffers
    if recorded is not None:
        return recorded
    host = [b.buffer_name for b in program.buffers() if not (b.is_workgroup or b.is_scratch)]
    writes = buffers_written(program) & set(host)
    return host if uses_whole_buffers(program) or not writes else sorted(writes)


def static_element_count(program: ProgramOp, counts: Sequence[str]) -> int | None:
    """The logical element count of the dispatch of `program` sized by the
    buffers `counts` (`count_buffer_names`), when their counts are static."""
    sizes = []
    for name in counts:
        buffer = program.buffer(name)
        if buffer is None or buffer.static_count is None:
            return None
        sizes.append(buffer.static_count)
    return max(sizes + [1])


def workgroup_count(n: int, workgroup_size: tuple[int, int, int]) -> int:
    threads = workgroup_size[0] * workgroup_size[1] * workgroup_size[2]
    return max(1, math.ceil(n / threads))


def fold_grid(groups: int) -> tuple[int, int, int]:
    """Workgroups per axis for `groups` logical workgroups, folded into y past 65535."""
    if groups <= MAX_WORKGROUPS_PER_DIM:
        return groups, 1, 1
    gy = math.ceil(groups / MAX_WORKGROUPS_PER_DIM)
    return math.ceil(groups / gy), gy, 1


def launch_grid(
    n: int,
    workgroup_size: Sequence[int],
    program_workgroup_size: Sequence[int] | None = None,
    elements_per_invocation: int = 1,
    groups_per_workgroup: int = 1,
    explicit: Sequence[int] | None = None,
) -> tuple[int, int, int]:
    """The one launch-grid rule: workgroups per axis that a kernel launches for
    `n` logical elements.

    - `explicit`: the program's own grid, launched exactly;
    - a kernel whose workgroup differs from the program's declared one (a
      widened `[1, 1, 1]` program) launches at least every invocation of the
      program's declared dispatch of `n` elements (`declared_invocations`);
    - `elements_per_invocation` W: each invocation runs W consecutive logical
      invocations, so ceil(n / W) invocations launch;
    - `groups_per_workgroup` C: each workgroup runs C consecutive logical
      workgroups, so ceil(groups / C) workgroups launch;

    folded into y past 65535 workgroups (`fold_grid`)."""
    if explicit is not None:
        return tuple(explicit)  # type: ignore[return-value]
    workgroup = tuple(workgroup_size)
    program = workgroup if program_workgroup_size is None else tuple(program_workgroup_size)
    if program != workgroup:
        n = declared_invocations(n, program)
    n = -(-n // elements_per_invocation)
    groups = -(-workgroup_count(n, workgroup) // groups_per_workgroup)  # type: ignore[arg-type]
    return fold_grid(groups)


def dispatch_grid(n: int, workgroup_size: Sequence[int]) -> tuple[int, int, int]:
    """`launch_grid` of a kernel that runs its program's own workgroup."""
    return launch_grid(n, workgroup_size)


def declared_invocations(n: int, program_workgroup: Sequence[int]) -> int:
    """How many invocations the program's declared launch for `n` elements has."""
    program = tuple(program_workgroup)
    return math.prod(fold_grid(workgroup_count(n, program))) * math.prod(program)  # type: ignore[arg-type]


# ---------------------------------------------------------------- explicit grids


def launched_grid(program: ProgramOp, n: int) -> tuple[int, int, int]:
    """Workgroups per axis that a dispatch of `program` over `n` logical elements
    launches when its grid is not indirect: the explicit grid, else the derived
    one (folded over y past 65535 workgroups). `vyre.num_workgroups` reads it."""
    return launch_grid(n, program.workgroup, explicit=program.explicit_grid)


def derived_grid_shortage(workgroup: tuple[int, int, int], n: int) -> str | None:
    """Why a derived grid cannot cover `n` elements with this workgroup, or None.

    The derived grid spans axis x only: `ceil(n / (X*Y*Z))` workgroups, so
    `invocation_id x` takes `groups * X` values. With a one-dimensional
    workgroup that covers `n`; with Y or Z above 1 it may not, and such a
    program would silently run on too few workgroups."""
    wx, wy, wz = workgroup
    if wy * wz == 1:
        return None
    groups = workgroup_count(n, workgroup)
    if groups * wx >= n:
        return None
    return (
        f"workgroup_size {list(workgroup)} has y or z above 1, but without 'grid' the derived "
        f"grid launches {groups} workgroup(s) along x only, so invocation_id x covers "
        f"{groups * wx} of its {n} elements (invocation_id y only 0 ... {wy - 1}). Fix: add an "
        f"explicit grid after the workgroup size, e.g. 'grid [{math.ceil(n / wx)}, 1, 1]' "
        "for one element per invocation along x, or the grid of your 2-D/3-D layout"
    )


def needs_covering_grid(program: ProgramOp) -> bool:
    """Whether the derived grid of `program` must cover its element count along
    x: a 2-D or 3-D workgroup, no explicit or indirect grid, and the program
    reads `vyre.invocation_id` (a program that indexes by its linear id,
    `workgroup_id x * threads + linear local id`, is covered: the derived grid
    launches at least one invocation per element)."""
    if program.explicit_grid is not None or program.indirect_buffer is not None:
        return False
    if program.workgroup[1] * program.workgroup[2] == 1:
        return False
    return any(isinstance(op, InvocationIdOp) for op in program.walk())


def check_derived_grid(program: ProgramOp, n: int) -> None:
    """Refuse, at the program, a derived grid that cannot cover `n` elements
    (`needs_covering_grid`, `derived_grid_shortage`); explicit and indirect
    grids are the user's."""
    if not needs_covering_grid(program):
        return
    problem = derived_grid_shortage(program.workgroup, n)
    if problem is not None:
        raise VyreDiagnostic([(program, f"@{program.sym_name.data}: {problem}")])


def check_covering_grids(progs, lengths: Mapping[str, int]) -> None:
    """`check_derived_grid` for each of `progs` whose counts include
    runtime-sized buffers, with their lengths from `lengths` (by name)."""
    for program in progs:
        if not needs_covering_grid(program):
            continue
        counts = {}
        for buffer in program.buffers():
            name = buffer.buffer_name
            counts[name] = (
                buffer.static_count if buffer.static_count is not None else lengths.get(name, 0)
            )
        check_derived_grid(program, logical_element_count(program, counts))
