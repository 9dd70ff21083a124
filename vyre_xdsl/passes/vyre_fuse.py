"""`vyre-fuse`: fuse all programs of a module into one (SPEC section 4).

```
vyre-opt -p vyre-fuse chain.mlir
vyre-opt -p 'vyre-fuse{force=true}' chain.mlir             # fuse every program, splitting if needed
vyre-opt -p 'vyre-fuse{split-grid-sync=false}' chain.mlir   # one program, or a refusal
vyre-opt -p 'vyre-fuse{recompute=false}' chain.mlir         # never recompute a producer
vyre-opt -p 'vyre-fuse{remarks=true}' chain.mlir           # say where and why a run was cut
```

By default the pass fuses only where the cost model (`vyre_xdsl.fusion.cost`,
docs/fusion.md) says fusion wins: consecutive programs are fused in runs, never
across a dependence that would need a `grid_sync` split, and a run whose idle
workgroups cost more than the launches and bytes it saves is cut; a run of one
program stays as it was. `force=true` fuses all programs into one (splitting at
`grid_sync` where needed), `split-grid-sync=false` too, but refuses a split.

The fused programs are verified with the module after the pass (by `vyre-opt`,
the `vyre-to-kernel` pipeline and `vyre_xdsl.compile`), not one by one.

The run signature of the *unfused* module (`vyre_xdsl.abi.signature`) decides
which buffers are intermediates, whose stores the fused program may drop.

A program with an indirect grid (`{indirect = @grid}`) or an explicit one
(`grid [GX, GY, GZ]`), or one that reads `vyre.num_workgroups` (a fused
dispatch would launch another grid), is never fused with another: it stays its own program,
and the runs of programs between such programs are fused separately (in
module order). With `remarks=true` the pass says so at the program.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from vyre_xdsl.abi import signature
from vyre_xdsl.diagnostics import Located
from vyre_xdsl.dialects.vyre import ProgramOp, programs
from vyre_xdsl.fusion import fuse_programs
from vyre_xdsl.fusion.cost import profitable_runs
from vyre_xdsl.fusion.merge import check_buffer_types
from vyre_xdsl.passes.vyre_inline import inline_calls


@dataclass(frozen=True)
class VyreFusePass(ModulePass):
    """Replace runs of consecutive programs of a module by fused programs
    `@fused_<a>_<b>...`, where the cost model says fusion wins (all of them with `force`).

    `split_grid_sync`: when a dependence crosses workgroups, insert
    `vyre.barrier grid_sync` (lowering splits the dispatch there); when false,
    fuse everything and refuse with a diagnostic instead of splitting.
    `force`: fuse every program into one even where the cost model says it
    loses (the dispatch may then be split at `grid_sync`).

    `recompute`: a load of a producer's output at another index takes the
    producer's expression at that index when it is a pure function of
    unwritten buffers (docs/fusion.md, "Recompute"), instead of a split.

    `remarks`: print a located `remark:` line on stderr for each place the cost
    model cut a run, saying why (a split, no gain, a target limit).
    """

    name = "vyre-fuse"

    split_grid_sync: bool = True
    force: bool = False
    recompute: bool = True
    remarks: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        inline_calls(op)
        progs = programs(op)
        if len(progs) < 2:
            return
        check_buffer_types(progs)  # before the signature, which would blame only one program
        intermediates = {b.name for b in signature(op).buffers if b.is_intermediate}
        users = _programs_using(progs, intermediates)
        if self.remarks:
            for program in progs:
                if program.explicit_grid is not None:
                    print_remark(
                        program,
                        f"@{program.sym_name.data} launches an explicit grid "
                        f"{list(program.explicit_grid)}; it is not fused with another program",
                    )
                elif program.fixed_launch:
                    print_remark(
                        program,
                        f"@{program.sym_name.data} reads vyre.num_workgroups; it is not "
                        "fused with another program",
                    )
        for group in _fusion_groups(progs):
            if len(group) < 2:
                continue

            def intermediates_of(run, group=group) -> frozenset[str]:
                members = {id(group[k]) for k in run}
                return frozenset(n for n in intermediates if users[n] <= members)

            if self.force or not self.split_grid_sync:
                everything = list(range(len(group)))
                runs = [(everything, None)]
            else:
                runs = profitable_runs(
                    group,
                    intermediates_of,
                    recompute=self.recompute,
                    remark=print_remark if self.remarks else None,
                    verify=False,
                )
            for run, outcome in runs:
                if len(run) < 2:
                    continue
                members = [group[k] for k in run]
                if outcome is None:
                    fused = fuse_programs(
                        members,
                        split_grid_sync=self.split_grid_sync,
                        recompute=self.recompute,
                        intermediates=intermediates_of(run),
                        verify=False,
                    )
                else:
                    fused = outcome.program
                _replace(members, fused)


def print_remark(program: ProgramOp, message: str) -> None:
    """`FILE:LINE:COL: remark: MESSAGE` on stderr, at `program`'s header."""
    where = Located(program, message).location()
    prefix = "" if where is None else "{}:{}:{}: ".format(*where)
    print(f"{prefix}remark: {message}", file=sys.stderr)


def _replace(members: list, fused) -> None:
    """Put `fused` where the first of `members` was, and remove them."""
    fused.location = members[0].location
    members[0].parent.insert_op_before(fused, members[0])
    for program in members:
        program.detach()
        program.erase()


def _programs_using(progs: list, names: set[str]) -> dict[str, set[int]]:
    """For each buffer in `names`, the ids of the programs that declare it."""
    users: dict[str, set[int]] = {name: set() for name in names}
    for program in progs:
        for buffer in program.buffers():
            if buffer.buffer_name in users:
                users[buffer.buffer_name].add(id(program))
    return users


def _fusion_groups(progs: list) -> list[list]:
    """Maximal runs of consecutive programs without an indirect or explicit
    grid; each program with one is a group of its own."""
    groups: list[list] = [[]]
    for program in progs:
        if program.indirect_buffer is not None or program.fixed_launch:
            groups += [[program], []]
        else:
            groups[-1].append(program)
    return [g for g in groups if g]


def fused_copy(module: ModuleOp, *, force: bool = False) -> ModuleOp:
    """A fused copy of `module` (this pass, then verified: a failure names the
    pass); `module` is unchanged. `force`: as the pass option."""
    from vyre_xdsl.context import vyre_context
    from vyre_xdsl.diagnostics import verify_after_pass

    fused = module.clone()
    VyreFusePass(force=force).apply(vyre_context(), fused)
    verify_after_pass(fused, VyreFusePass.name)
    return fused
