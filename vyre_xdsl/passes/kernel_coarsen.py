"""`kernel-coarsen`: record how many logical workgroups each launched workgroup runs.

A kernel from atomic privatization (`vyre-privatize-atomics`) zeroes its
workgroup copies, runs the program's own statements (the
`kernel.region "vyre.privatize.body"`) and flushes the copies with global
atomics. When that region has no barrier, return, loop or subgroup op and the
only workgroup memory is the private copies, its logical workgroups are
independent: one workgroup may run C of them in turn between a single zeroing
and a single flush, which divides the flush's global atomics by C. The pass
picks C = min(256, groups / 1024) (at least 1024 workgroups stay launched, to
fill a large GPU), records it on the dispatch as `groups_per_workgroup`, keeps
the logical grid as `logical_grid`, sets `grid` to the launch grid
ceil(groups / C) (`launch_grid`) and marks the region `coarsened`. Every other
kernel (C = 1) is left as it is. A vectorized kernel is never coarsened.

```
vyre-opt -p kernel-coarsen lowered.mlir
```

```mlir
kernel.dispatch workgroup_size [256, 1, 1] program_workgroup_size [256, 1, 1] grid [1024, 1, 1] count [@x, @hist] groups_per_workgroup 16 logical_grid [16384, 1, 1]
kernel.region "vyre.privatize.body" {
  ...
} {coarsened}
```
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from vyre_xdsl.analysis.vector_form import fixed_launch
from vyre_xdsl.dialects import kernel as k
from vyre_xdsl.dialects import vyre as v
from vyre_xdsl.dispatch import launch_grid
from vyre_xdsl.lowering.privatize import BODY_GENERATOR, PRIVATE_PREFIX

#: each launched workgroup runs up to this many logical workgroups ...
MAX_GROUPS_PER_WORKGROUP = 256
#: ... while at least this many workgroups are launched (enough to fill a large GPU)
MIN_COARSENED_WORKGROUPS = 1024


@dataclass(frozen=True)
class KernelCoarsenPass(ModulePass):
    """Records `groups_per_workgroup` (and the launch grid it gives) on each
    privatized kernel whose logical workgroups are independent."""

    name = "kernel-coarsen"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for descriptor in k.descriptors(op):
            coarsen(descriptor)

    def leaves_unchanged(self, module: ModuleOp) -> bool:
        """No descriptor may be coarsened (nothing to record)."""
        return all(groups_per_workgroup(d) == 1 for d in k.descriptors(module))


def _is_private_body(op: Operation) -> bool:
    return isinstance(op, k.RegionOp) and op.generator.data == BODY_GENERATOR


def groups_per_workgroup(descriptor: k.DescriptorOp) -> int:
    """How many logical workgroups each launched workgroup of `descriptor` may run
    (1: not coarsened). The grid must be static, the kernel neither widened,
    indirect, explicit, reading `num_workgroups`, nor already vectorized or
    coarsened."""
    d = descriptor.dispatch()
    if d is None or d.static_grid is None or d.is_widened or d.indirect_buffer is not None:
        return 1
    if d.logical_grid is not None or fixed_launch(descriptor):
        return 1
    bodies = [op for op in descriptor.statements() if _is_private_body(op)]
    if len(bodies) != 1:
        return 1
    stoppers = (k.BarrierOp, k.ReturnOp, k.ForOp, *v.SUBGROUP_OPS)
    if any(isinstance(op, stoppers) for op in bodies[0].walk()):
        return 1
    shared = [b for b in descriptor.bindings() if not b.is_host and not b.is_scratch]
    if any(not b.buffer_name.startswith(PRIVATE_PREFIX) for b in shared):
        return 1
    groups = math.prod(d.static_grid)
    return max(1, min(MAX_GROUPS_PER_WORKGROUP, groups // MIN_COARSENED_WORKGROUPS))


def coarsen(descriptor: k.DescriptorOp) -> int:
    """Record the coarsening of `descriptor` when it has one; C (1: left as it is)."""
    groups = groups_per_workgroup(descriptor)
    if groups == 1:
        return 1
    dispatch = descriptor.dispatch()
    assert dispatch is not None and dispatch.static_grid is not None
    workgroup = dispatch.kernel_workgroup
    # n = every invocation of the logical grid: launch_grid sees exactly its workgroups
    logical = math.prod(dispatch.static_grid) * math.prod(workgroup)
    grid = launch_grid(logical, workgroup, groups_per_workgroup=groups)
    dispatch.record_launch(grid, groups_per_workgroup=groups)
    body = next(op for op in descriptor.statements() if _is_private_body(op))
    body.attributes[k.COARSENED] = UnitAttr()
    return groups
