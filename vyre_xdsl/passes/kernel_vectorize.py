"""`kernel-vectorize`: record the vector form of each elementwise kernel.

A kernel whose every load and store is at the top level and indexed by
`invocation_id x` (plus a constant for loads of buffers it never stores to), and
that observes nothing of the workgroup nor ends an invocation early, may run W
consecutive logical invocations per invocation with one wide access per buffer
(`vector_width` in `vyre_xdsl.analysis.vector_form`: 16 bytes of its narrowest
element type, else 4 lanes, when every count is a multiple of W). The pass
records W on the dispatch as `elements_per_invocation`, keeps the logical grid
as `logical_grid` and sets `grid` to the launch grid: ceil(n / W) invocations
(`launch_grid`). Every other kernel is left as it is (scalar).

```
vyre-opt -p kernel-vectorize lowered.mlir
vyre-opt --lower -p kernel-vectorize -t wgsl in.mlir   # the vec4 WGSL
```

```mlir
// before
kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@y]
// after
kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [4, 1, 1] count [@y] elements_per_invocation 4 logical_grid [16, 1, 1]
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from vyre_xdsl.analysis.vector_form import vector_element_count, vector_width
from vyre_xdsl.dialects import kernel as k
from vyre_xdsl.dispatch import launch_grid


@dataclass(frozen=True)
class KernelVectorizePass(ModulePass):
    """Records `elements_per_invocation` (and the launch grid it gives) on each
    kernel that may run in a vector form."""

    name = "kernel-vectorize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for descriptor in k.descriptors(op):
            vectorize(descriptor)

    def leaves_unchanged(self, module: ModuleOp) -> bool:
        """No descriptor without a record has a vector form (nothing to record)."""
        return not any(_open(d) and vector_width(d) > 1 for d in k.descriptors(module))


def _open(descriptor: k.DescriptorOp) -> bool:
    dispatch = descriptor.dispatch()
    return dispatch is not None and dispatch.logical_grid is None


def vectorize(descriptor: k.DescriptorOp) -> int:
    """Record the vector form of `descriptor` when it has one; its width (1: left scalar)."""
    dispatch = descriptor.dispatch()
    if dispatch is None or not _open(descriptor):
        return 1 if dispatch is None else dispatch.vector_width  # already recorded
    width = vector_width(descriptor)
    if width == 1:
        return 1
    grid = launch_grid(
        vector_element_count(descriptor), dispatch.kernel_workgroup, elements_per_invocation=width
    )
    dispatch.record_launch(grid, elements_per_invocation=width)
    return width
