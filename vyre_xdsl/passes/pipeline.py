"""`vyre-to-kernel` and `vyre-to-wgsl`: the named pipeline every entry point runs.

```
vyre-opt -p vyre-to-kernel in.mlir                      # = vyre-opt --lower in.mlir
vyre-opt -p 'vyre-to-kernel{fuse=true}' in.mlir         # = vyre-opt --fuse --lower in.mlir
vyre-opt -p 'vyre-to-wgsl{fuse=true}' -t wgsl in.mlir   # = vyre-opt --fuse --lower -t wgsl in.mlir
vyre-opt -p 'vyre-to-kernel{subgroup-size=8 max-storage-buffers=16}' in.mlir
```

The steps, in order (each one a pass of its own, in its own file):

1. `convert-to-vyre`, on standard MLIR only (`func`, `arith`, `scf`, ...; a
   vyre module is left as it is);
2. `vyre-inline`: every `vyre.call` inlined, the functions removed;
   then `vyre-scalar-replace` (unless `scalar-replace=false`): a buffer
   element only its invocation touches is kept in a named local across the
   loops that load and store it (PolyBench's CUDA kernels accumulate so);
   then `vyre-tile` (only with `tile=true`): naive matrix products tiled
   through workgroup memory with register blocking;
3. `vyre-fuse` (only with `fuse=true`): runs of programs fused where the cost
   model says fusion wins; around it `vyre-coarsen-reductions` (unless
   `coarsen-reductions=false`): each workgroup tree reduction level and block
   scan takes k elements per invocation, on a grid k times smaller (float
   add/mul ones only with `reassociate-floats=true` or the program attribute
   `{reassociate}`). With `fuse=true` it runs twice: before fusion
   (`inputs-only=true`) on the levels whose leaf reads only module inputs
   (buffers no earlier program writes: no producer can fuse into them, and
   coarsened, with an explicit grid, they are not fused with an independent
   neighbour either), after fusion on the rest, so that an elementwise
   producer fused into a tree's first level is coarsened with it. These steps
   are `fusion_steps()`, which the API's front end runs for `fuse=True`
   before the backend runs the rest;
4. `vyre-elide-bounds-selects`: each bounds select `select(i < N, a, b)` whose
   value only reaches stores at `i` into buffers of at most N elements becomes
   `a` (fusion leaves one per forwarded intermediate when the grid launches
   invocations past the count);
5. `vyre-split-grid-sync`: each program with `grid_sync` barriers replaced by
   its parts, one program (one dispatch) each;
6. `vyre-privatize-atomics` (unless `privatize-atomics=false`): each
   dispatch's qualifying global atomics go through a workgroup copy, bounded by
   the profile's workgroup storage;
7. `vyre-lower`: each program lowered to a `kernel.descriptor` (with nothing
   left to split or privatize);
8. `kernel-elide-clears` (unless `elide-clears=false`): the bindings a run need
   not zero first;
9. `kernel-vectorize` (unless `vectorize=false`): the vector form of each
   elementwise kernel, recorded on its dispatch with the launch grid it gives;
10. `kernel-coarsen` (unless `coarsen=false`): the logical workgroups each
   launched workgroup of a privatized kernel runs, with its launch grid;
11. `kernel-verify` against the target profile.

Every choice a backend prints by is then recorded in the kernel IR: the WGSL
printer decides nothing itself.

A megakernel build (`vyre-compile`) plans its own fusion groups in place of
`vyre-fuse`: it runs `planning_steps()` (`vyre-inline`, then
`vyre-coarsen-reductions` on every level, since each group is lowered alone)
before its planner, and the pipeline's `steps()` (without `vyre-fuse`) on
each group after it.

`vyre-to-wgsl` is the same pipeline under the name of its usual destination;
the WGSL itself is printed by the `-t wgsl` target. The profile options are
`vyre-lower`'s; their defaults form the portable profile (the WebGPU default
limits every device meets).

`vyre-opt` runs the steps as separate passes of its pipeline. The IR is verified
after each step that changed it (not after `convert-to-vyre` on a vyre module, nor
after `vyre-inline` on a module without functions: they leave it as it was), and
`--disable-verify` turns that off. `--mlir-print-ir-after=vyre-fuse` and
`--time-passes` see each step; `--mlir-print-ir-after=vyre-to-kernel` dumps after
its last step, `--mlir-print-ir-before=vyre-to-kernel` before its first. Applied
as one pass (from Python, or by another xDSL driver), the pipeline verifies after
each step in the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from vyre_xdsl.diagnostics import verify_after_pass
from vyre_xdsl.passes.convert_to_vyre import ConvertToVyrePass
from vyre_xdsl.passes.kernel_coarsen import KernelCoarsenPass
from vyre_xdsl.passes.kernel_elide_clears import KernelElideClearsPass
from vyre_xdsl.passes.kernel_vectorize import KernelVectorizePass
from vyre_xdsl.passes.kernel_verify import KernelVerifyPass
from vyre_xdsl.passes.vyre_coarsen_reductions import VyreCoarsenReductionsPass
from vyre_xdsl.passes.vyre_elide_bounds_selects import VyreElideBoundsSelectsPass
from vyre_xdsl.passes.vyre_fuse import VyreFusePass
from vyre_xdsl.passes.vyre_inline import VyreInlinePass
from vyre_xdsl.passes.vyre_lower import VyreLowerPass
from vyre_xdsl.passes.vyre_privatize_atomics import VyrePrivatizeAtomicsPass
from vyre_xdsl.passes.vyre_scalar_replace import VyreScalarReplacePass
from vyre_xdsl.passes.vyre_split_grid_sync import VyreSplitGridSyncPass
from vyre_xdsl.passes.vyre_tile import VyreTilePass
from vyre_xdsl.target_profile import ProfilePass, TargetProfile


@dataclass(frozen=True)
class VyreToKernelPass(ProfilePass):
    """The whole pipeline from vyre programs (or standard MLIR) to verified kernel
    descriptors: convert-to-vyre, vyre-inline, vyre-scalar-replace, vyre-tile (with
    tile=true), vyre-coarsen-reductions{inputs-only=true}
    and vyre-fuse (with fuse=true: `fusion_steps`), vyre-coarsen-reductions,
    vyre-elide-bounds-selects, vyre-split-grid-sync, vyre-privatize-atomics, vyre-lower,
    kernel-elide-clears, kernel-vectorize, kernel-coarsen, kernel-verify."""

    name = "vyre-to-kernel"

    #: fuse runs of programs where the cost model says fusion wins (vyre-fuse)
    fuse: bool = False
    #: privatize qualifying global atomics per dispatch (vyre-privatize-atomics)
    privatize_atomics: bool = True
    #: mark the bindings a run need not zero first (kernel-elide-clears)
    elide_clears: bool = True
    #: coarsen workgroup tree reductions and block scans (vyre-coarsen-reductions):
    #: with fuse=true the levels fed only by module inputs before fusion, the rest after
    coarsen_reductions: bool = True
    #: let vyre-coarsen-reductions regroup float add/mul reductions
    reassociate_floats: bool = False
    #: about how many workgroups the target runs at once: vyre-coarsen-reductions
    #: leaves at least this many (its min-workgroups; the profile's resident_workgroups)
    resident_workgroups: int = 1024
    #: the target runs subgroup ops: vyre-coarsen-reductions scans on subgroup
    #: shuffles (its subgroups option; the profile's subgroups)
    subgroups: bool = False
    #: keep buffer elements that only one invocation touches in named locals
    #: across the loops that load and store them (vyre-scalar-replace)
    scalar_replace: bool = True
    #: tile the naive matrix products through workgroup memory (vyre-tile)
    tile: bool = False
    #: record the vector form of elementwise kernels (kernel-vectorize)
    vectorize: bool = True
    #: record the coarsening of privatized kernels (kernel-coarsen)
    coarsen: bool = True

    def steps(self) -> tuple[ModulePass, ...]:
        """The passes this pipeline runs, in order."""
        profile = {f.name: getattr(self, f.name) for f in fields(ProfilePass)}
        lower = VyreLowerPass(**profile, privatize_atomics=False, elide_clears=False, verify=False)
        fuse = self.fusion_steps() if self.fuse else ()
        privatize = (
            [VyrePrivatizeAtomicsPass(max_workgroup_storage=self.max_workgroup_storage)]
            if self.privatize_atomics
            else []
        )
        reductions = [self.coarsen_pass()] if self.coarsen_reductions else []
        scalars = [VyreScalarReplacePass()] if self.scalar_replace else []
        tile = [VyreTilePass(max_workgroup_storage=self.max_workgroup_storage)] if self.tile else []
        clears = [KernelElideClearsPass()] if self.elide_clears else []
        vectorize = [KernelVectorizePass()] if self.vectorize else []
        coarsen = [KernelCoarsenPass()] if self.coarsen else []
        return (
            ConvertToVyrePass(),
            VyreInlinePass(),
            *scalars,
            *tile,
            *fuse,
            *reductions,
            VyreElideBoundsSelectsPass(),
            VyreSplitGridSyncPass(),
            *privatize,
            lower,
            *clears,
            *vectorize,
            *coarsen,
            KernelVerifyPass(**profile),
        )

    def fusion_steps(self, force: bool = False) -> tuple[ModulePass, ...]:
        """The steps that fuse, in order (those `fuse=true` adds): the levels fed
        only by module inputs coarsened first (`vyre-coarsen-reductions{inputs-only=true}`,
        unless `coarsen-reductions=false`), then `vyre-fuse`. The rest of the
        coarsening follows (`steps()`). `force`: every program fused into one
        (`vyre-fuse{force=true}`), nothing coarsened before (a coarsened level
        would stay apart)."""
        if force:
            return (VyreFusePass(force=True),)
        before = [self.coarsen_pass(inputs_only=True)] if self.coarsen_reductions else []
        return (*before, VyreFusePass())

    def planning_steps(self) -> tuple[ModulePass, ...]:
        """The steps a megakernel build runs before its planner, which takes
        `vyre-fuse`'s place (`vyre-compile`): `vyre-inline`, then
        `vyre-coarsen-reductions` on every level (unless `coarsen-reductions=false`).
        The planner's fusion groups are lowered one at a time, and a group does not
        see the later levels of its tree, so every level is coarsened before
        planning, a level fed by an elementwise producer too (the producer then
        stays a program of its own)."""
        reductions = [self.coarsen_pass()] if self.coarsen_reductions else []
        return (VyreInlinePass(), *reductions)

    def coarsen_pass(self, inputs_only: bool = False) -> VyreCoarsenReductionsPass:
        """`vyre-coarsen-reductions` with this pipeline's options."""
        return VyreCoarsenReductionsPass(
            inputs_only=inputs_only,
            reassociate_floats=self.reassociate_floats,
            min_workgroups=self.resident_workgroups,
            subgroups=self.subgroups,
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_steps(ctx, op, self.steps())


@dataclass(frozen=True)
class VyreToWgslPass(VyreToKernelPass):
    """The same pipeline as vyre-to-kernel, named for its destination: print the
    result with -t wgsl."""

    name = "vyre-to-wgsl"


def vyre_to_kernel(fuse: bool = False, profile: TargetProfile | None = None) -> VyreToKernelPass:
    """The pipeline for `profile` (the portable one by default)."""
    if profile is None:
        return VyreToKernelPass(fuse=fuse)
    size = profile.max_workgroup_size
    return VyreToKernelPass(
        fuse=fuse,
        resident_workgroups=profile.resident_workgroups,
        subgroups=profile.subgroups,
        subgroup_size=profile.subgroup_size,
        max_workgroup_size_x=size[0],
        max_workgroup_size_y=size[1],
        max_workgroup_size_z=size[2],
        max_invocations=profile.max_invocations,
        max_storage_buffers=profile.max_storage_buffers,
        max_workgroup_storage=profile.max_workgroup_storage_bytes,
    )


def expand(passes: Sequence[ModulePass]) -> list[ModulePass]:
    """`passes` with each pipeline replaced by its steps (what `vyre-opt` runs)."""
    out: list[ModulePass] = []
    for pass_ in passes:
        out.extend(pass_.steps() if isinstance(pass_, VyreToKernelPass) else [pass_])
    return out


def end_steps(passes: Sequence[ModulePass], names: set[str], first: bool) -> set[str]:
    """The names of the first (or last) steps of the pipelines among `passes` that
    `names` names: where `--mlir-print-ir-before/after=vyre-to-kernel` dumps."""
    return {
        (pass_.steps()[0] if first else pass_.steps()[-1]).name
        for pass_ in passes
        if isinstance(pass_, VyreToKernelPass) and pass_.name in names
    }


def leaves_unchanged(pass_: ModulePass, module: ModuleOp) -> bool:
    """Whether applying `pass_` to `module` provably changes nothing (then the IR
    needs no verification after it, as in MLIR when a pass preserves everything)."""
    check = getattr(pass_, "leaves_unchanged", None)
    return bool(check is not None and check(module))


def run_steps(
    ctx: Context, module: ModuleOp, steps: tuple[ModulePass, ...], verify: bool = True
) -> None:
    """Apply `steps` in order, verifying after each that changed the module. A
    step's `leaves_unchanged` check (which may cost as much as the step) is asked
    only when it would save a verification."""
    for step in steps:
        if not verify:
            step.apply(ctx, module)
            continue
        if leaves_unchanged(step, module):
            continue
        step.apply(ctx, module)
        verify_after_pass(module, step.name)
