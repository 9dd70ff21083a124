"""`kernel-elide-clears`: mark the bindings a run need not zero before a kernel.

A runtime zeroes every buffer it does not upload (outputs, intermediates)
before a run, because a pooled GPU buffer still holds an earlier run's data.
This pass marks a binding `no_clear` when that zeroing cannot show: the
descriptor is the first of the module to bind the buffer and provably stores
every element of it without reading it (`writes_every_element` in
`vyre_xdsl.analysis.coverage`: stores at `invocation_id x` reached by every
invocation and a grid that covers the count, or stores at `g * T + local_id x
+ c_j` that cover a tile of `T` per workgroup and tiles that cover the count). Every other binding loses the mark,
so the pass is the one place that decides it. `vyre-lower` runs it before
`kernel-verify`, which rejects a `no_clear` the analysis cannot prove.

```
vyre-opt -p kernel-elide-clears lowered.mlir
vyre-opt -p 'vyre-lower{elide-clears=false}' in.mlir   # lower without it
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.passes import ModulePass

from vyre_xdsl.analysis import writes_every_element
from vyre_xdsl.dialects import kernel as k


@dataclass(frozen=True)
class KernelElideClearsPass(ModulePass):
    """Marks `no_clear` the bindings whose first kernel writes them in full."""

    name = "kernel-elide-clears"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        elide_clears(op)


def elide_clears(module: ModuleOp) -> None:
    """Set `no_clear` on exactly the bindings that earn it, in dispatch order."""
    bound: set[str] = set()
    for descriptor in k.descriptors(module):
        for binding in list(descriptor.bindings()):
            first = binding.buffer_name not in bound
            if first and writes_every_element(descriptor, binding):
                binding.properties["no_clear"] = UnitAttr()
            else:
                binding.properties.pop("no_clear", None)
        bound.update(b.buffer_name for b in descriptor.bindings() if b.is_host)
