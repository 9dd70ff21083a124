"""Run-time launch overrides (SPEC section 3.5): `Executable.run(inputs, grid=...)`,
`vyre-run --grid GX,GY,GZ` and `vyre_xdsl.compile(..., workgroup_size=(X, Y, Z))`.

An override is applied to a copy of the module before it is compiled, on every
backend alike: `grid` gives each named program an explicit grid (the same as
writing `grid [GX, GY, GZ]` in its header), `workgroup_size` replaces every
program's workgroup size. An invalid value is a `ValueError` that names the
limit it breaks.

```python
grids = grid_overrides(module, (4, 2, 1))          # {"p": (4, 2, 1)} for a one-program module
overridden = with_grids(module, grids)             # a copy; `module` is unchanged
```
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i32

from vyre_xdsl.dialects.vyre import MAX_GRID_PER_AXIS, InvocationIdOp, ProgramOp, programs

#: the workgroup limits `compile(..., workgroup_size=...)` checks (WebGPU's
#: defaults, which every device meets; `target_profile.DEFAULT_PROFILE`)
MAX_WORKGROUP_SIZE = (256, 256, 64)
MAX_WORKGROUP_INVOCATIONS = 256


def _triple(value: object, what: str) -> tuple[int, int, int]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise ValueError(f"{what} must be three integers (X, Y, Z), got {value!r}")
    if len(value) != 3:
        raise ValueError(f"{what} must have exactly 3 axes (X, Y, Z), got {len(value)}: {value!r}")
    axes = []
    for axis, item in zip("xyz", value):
        if isinstance(item, bool) or not isinstance(item, int | np.integer):
            raise ValueError(f"{what} axis {axis} must be an integer, got {item!r}")
        axes.append(int(item))
    return axes[0], axes[1], axes[2]


def checked_grid(value: object, what: str = "grid") -> tuple[int, int, int]:
    """`value` as a grid (GX, GY, GZ); each axis 1 ... 65535 workgroups."""
    grid = _triple(value, what)
    for axis, g in zip("xyz", grid):
        if not 1 <= g <= MAX_GRID_PER_AXIS:
            raise ValueError(
                f"{what} axis {axis} is {g} workgroups; each axis must launch 1 ... "
                f"{MAX_GRID_PER_AXIS} workgroups (the device limit per dimension)"
            )
    return grid


def checked_workgroup_size(value: object) -> tuple[int, int, int]:
    """`value` as a workgroup size (X, Y, Z) within the portable limits."""
    size = _triple(value, "workgroup_size")
    for axis, s, limit in zip("xyz", size, MAX_WORKGROUP_SIZE):
        if not 1 <= s <= limit:
            raise ValueError(
                f"workgroup_size axis {axis} is {s}; it must be 1 ... {limit} "
                f"(the per-axis limits are {list(MAX_WORKGROUP_SIZE)})"
            )
    if math.prod(size) > MAX_WORKGROUP_INVOCATIONS:
        raise ValueError(
            f"workgroup_size {list(size)} has {math.prod(size)} invocations; the limit is "
            f"{MAX_WORKGROUP_INVOCATIONS} invocations per workgroup"
        )
    return size


def grid_overrides(module: ModuleOp, grid: object) -> dict[str, tuple[int, int, int]]:
    """The explicit grid of each program that `grid` names: a (GX, GY, GZ) for a
    module of one program, or a mapping {program name: (GX, GY, GZ)}."""
    progs = {p.sym_name.data: p for p in programs(module)}
    if isinstance(grid, Mapping):
        wanted = dict(grid)
    else:
        if len(progs) != 1:
            raise ValueError(
                f"the module has {len(progs)} programs ({', '.join('@' + n for n in progs)}); "
                "pass grid as a mapping {program name: (GX, GY, GZ)}"
            )
        wanted = {next(iter(progs)): grid}
    result = {}
    for name, value in wanted.items():
        program = progs.get(name)
        if program is None:
            raise ValueError(
                f"grid names program {name!r}, which the module does not have; its programs "
                f"are {', '.join(progs) or 'none'}"
            )
        if program.indirect_buffer is not None:
            raise ValueError(
                f"@{name} launches an indirect grid (read from @{program.indirect_buffer}); "
                "a grid override and an indirect grid are exclusive"
            )
        result[name] = checked_grid(value, f"grid of @{name}")
    return result


def with_grids(module: ModuleOp, grids: Mapping[str, Sequence[int]]) -> ModuleOp:
    """A copy of `module` in which each program named in `grids` has that explicit grid."""
    copy = module.clone()
    for program in programs(copy):
        grid = grids.get(program.sym_name.data)
        if grid is not None:
            program.grid = DenseArrayBase.from_list(i32, list(grid))
    return copy


def with_workgroup_size(module: ModuleOp, size: Sequence[int]) -> ModuleOp:
    """A copy of `module` in which every program has workgroup size `size`.

    In a module converted from standard MLIR (`convert-to-vyre`), a program's
    explicit grid was chosen to cover its loop nest with its workgroup (grid
    axes, docs/mlir-input.md); it is chosen again for `size` so that the new
    launch covers at least the same invocations on every axis (the converted
    body guards each axis by its extent)."""
    from vyre_xdsl.conversion import SHAPES_ATTRIBUTE

    copy = module.clone()
    converted = SHAPES_ATTRIBUTE in copy.attributes
    for program in programs(copy):
        grid = program.explicit_grid
        if (
            converted
            and grid is None
            and size[1] * size[2] > 1
            and any(isinstance(op, InvocationIdOp) for op in program.walk())
        ):
            # a flattened loop nest (or a one-invocation program): its iterations
            # are invocation_id x; a 2-D workgroup would leave most of them out
            raise ValueError(
                f"workgroup_size {tuple(size)} has y or z above 1, but program "
                f"@{program.sym_name.data} numbers its loop iterations along x only (a "
                "flattened loop nest, docs/mlir-input.md); give a workgroup_size (X, 1, 1), "
                f"e.g. ({math.prod(size)}, 1, 1)"
            )
        if converted and grid is not None:
            covered = [g * w for g, w in zip(grid, program.workgroup, strict=True)]
            regrid = [-(-c // w) for c, w in zip(covered, size, strict=True)]
            if max(regrid) > MAX_GRID_PER_AXIS:
                raise ValueError(
                    f"workgroup_size {tuple(size)} needs a grid of {tuple(regrid)} workgroups "
                    f"for program @{program.sym_name.data}; each axis is at most "
                    f"{MAX_GRID_PER_AXIS}"
                )
            program.grid = DenseArrayBase.from_list(i32, regrid)
        _set_workgroup(program, size)
    return copy


def _set_workgroup(program: ProgramOp, size: Sequence[int]) -> None:
    program.workgroup_size = DenseArrayBase.from_list(i32, list(size))
