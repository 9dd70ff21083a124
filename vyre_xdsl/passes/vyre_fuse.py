"""`vyre-fuse`: fuse all programs of a module into one (SPEC section 4).

```
vyre-opt -p vyre-fuse chain.mlir
vyre-opt -p 'vyre-fuse{split-grid-sync=false}' chain.mlir   # refuse instead of splitting
vyre-opt -p 'vyre-fuse{recompute=false}' chain.mlir         # never recompute a producer
```

The run signature of the *unfused* module (`vyre_xdsl.abi.signature`) decides
which buffers are intermediates, whose stores the fused program may drop.

A program with an indirect grid (`{indirect = @grid}`) is never fused with
another: it stays its own program, and the runs of programs between such
programs are fused separately (in module order).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from vyre_xdsl.abi import signature
from vyre_xdsl.dialects.vyre import programs
from vyre_xdsl.fusion import fuse_programs
from vyre_xdsl.fusion.merge import check_buffer_types
from vyre_xdsl.passes.vyre_inline import inline_calls


@dataclass(frozen=True)
class VyreFusePass(ModulePass):
    """Replace the programs of a module by one fused program `@fused_<a>_<b>...`.

    `split_grid_sync`: when a dependence crosses workgroups, insert
    `vyre.barrier grid_sync` (lowering splits the dispatch there); when false,
    refuse with a diagnostic instead.

    `recompute`: a load of a producer's output at another index takes the
    producer's expression at that index when it is a pure function of
    unwritten buffers (docs/fusion.md, "Recompute"), instead of a split.
    """

    name = "vyre-fuse"

    split_grid_sync: bool = True
    recompute: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        inline_calls(op)
        progs = programs(op)
        if len(progs) < 2:
            return
        check_buffer_types(progs)  # before the signature, which would blame only one program
        intermediates = {b.name for b in signature(op).buffers if b.is_intermediate}
        for group in _fusion_groups(progs):
            if len(group) < 2:
                continue
            outside = {b.buffer_name for p in progs if p not in group for b in p.buffers()}
            fused = fuse_programs(
                group,
                split_grid_sync=self.split_grid_sync,
                recompute=self.recompute,
                intermediates=intermediates - outside,
            )
            fused.location = group[0].location
            op.body.block.insert_op_before(fused, group[0])
            for program in group:
                program.detach()
                program.erase()


def _fusion_groups(progs: list) -> list[list]:
    """Maximal runs of consecutive programs without an indirect grid; each
    program with one is a group of its own."""
    groups: list[list] = [[]]
    for program in progs:
        if program.indirect_buffer is not None:
            groups += [[program], []]
        else:
            groups[-1].append(program)
    return [g for g in groups if g]
